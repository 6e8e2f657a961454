/* serve.h: one responder process's FastCGI accept loop. */
#ifndef SVC_SERVE_H
#define SVC_SERVE_H
#include "util/conf.h"

/* Serves requests on the listening socket fd until SIGTERM (finishing the
 * request in hand) or until max_requests (0: no limit). gens: the key
 * cache's generation table shared with the sibling responders, or NULL
 * (router_ctx_init). Returns an exit code. */
struct authcache_gens;
int	 serve_loop(const struct conf *, int listen_fd,
	    unsigned long max_requests, struct authcache_gens *gens);
#endif
