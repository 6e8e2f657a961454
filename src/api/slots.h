/* slots.h: counted places for slow requests, shared by every svc-api
 * responder of a host, that a process gives back by dying.
 *
 * A request that may wait on a stranger's server (a single verification's
 * probe, a domain check) or on the key cache (a revocation) holds places
 * while it runs: one of the host's "slow" places, which are fewer than the
 * responders so that ordinary requests always find one free, and one of
 * its account's. A place is one byte of a file, held by an open file
 * description lock (F_OFD_SETLK): taking one never waits, and the kernel
 * lets go of it when the process ends, however it ends, so a responder
 * killed mid-probe never leaks its place. The file is empty (locks need no
 * data); the prefork master makes it (a memfd, or run_dir/svc-api.slots)
 * and each responder opens it again for locks of its own. */
#ifndef SVC_SLOTS_H
#define SVC_SLOTS_H
#include "util/buf.h"

#define SLOTS_SLOW_MAX 1024		/* host-wide places at most */
#define SLOTS_ACCOUNT_MAX 64		/* places of one account at most */

enum slots_kind {
	SLOTS_SLOW,		/* the host's slow requests, all accounts */
	SLOTS_PROBE,		/* one account's probing requests */
	SLOTS_REVOKE,		/* one account's revocation waits */
	SLOTS_KIND__MAX
};
extern const char *const slots_kind_names[SLOTS_KIND__MAX];

struct slots;

/* The slot file: run_dir/svc-api.slots when run_dir is set (shared by
 * every process that opens it: mod_fcgid's responders), else an anonymous
 * memfd that the processes forked after this call share. Returns an fd
 * (close-on-exec) or -1 with a message in err. */
int	 slots_create(const char *run_dir, struct buf *err);
/* A process's own handle on the file (opened again, so that its locks
 * are its own); NULL with a message in err. */
struct slots *slots_attach(int fd, struct buf *err);
void	 slots_free(struct slots *);
/* Takes one of capacity places of kind (account NULL for SLOTS_SLOW):
 * 1 taken, 0 all taken by other processes, -1 error (logged). */
int	 slots_take(struct slots *, enum slots_kind, const char *account,
	    int capacity);
/* Gives back every place this process holds. */
void	 slots_release_all(struct slots *);
#endif
