/* serve.h: one responder process's FastCGI accept loop. */
#ifndef SVC_SERVE_H
#define SVC_SERVE_H
#include "util/conf.h"

/* Serves requests on the listening socket fd until SIGTERM (finishing the
 * request in hand) or until max_requests (0: no limit), with what it
 * shares with the host's other responders (api.h). Returns an exit code. */
struct api_shared;
int	 serve_loop(const struct conf *, int listen_fd,
	    unsigned long max_requests, const struct api_shared *);
#endif
