/* prefork.h: the master process that keeps N responders running. */
#ifndef SVC_PREFORK_H
#define SVC_PREFORK_H
#include "util/conf.h"

/* Forks `workers` responders on listen_fd, restarts any that dies,
 * re-reads conf_path and replaces the responders on SIGHUP, stops them all
 * on SIGTERM/SIGINT. slots_fd: the responders' slot file (slots.h).
 * Returns the exit code. */
int	 prefork_run(struct conf *, const char *conf_path, int listen_fd,
	    int workers, int slots_fd);
#endif
