/* keeper.h: the prefork master's keeper process. It gives back to MariaDB
 * the unused rate-limit permits of the host's leases once they end (so
 * that other hosts get them when this one goes quiet), finishes the round
 * trips of responders that died in one, and gives back every lease when
 * the master stops (permits.h). */
#ifndef SVC_KEEPER_H
#define SVC_KEEPER_H
#include "api/api.h"

/* Runs until SIGTERM; returns the exit code. */
int	 keeper_loop(const struct conf *, const struct api_shared *);
#endif
