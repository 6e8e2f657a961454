/* wake.h: waking the svc-workers of a host at once when work is queued,
 * through datagram sockets in one folder (worker_wake_dir). Each listener
 * (a worker's job loop, its upload thread) binds a socket of its own there,
 * "<kind>-<pid>-<n>.sock"; a sender (svc-api, once a job is committed)
 * sends one byte to every socket of the kind it finds. A wake-up may be
 * lost (no folder, a full socket buffer, a listener on another host): the
 * listeners still poll the queue every worker_poll_interval, so work is
 * then late, never lost. */
#ifndef SVC_WAKE_H
#define SVC_WAKE_H
#include "util/buf.h"

enum wake_kind {
	WAKE_JOBS,		/* chunks to verify */
	WAKE_UPLOADS,		/* uploads to read, previews to refresh */
	WAKE__MAX
};
extern const char *const wake_kind_names[WAKE__MAX];

struct wake;

/* Binds a socket of kind in dir (made 0660: the senders must be allowed
 * to write to it); NULL with a message in err when it cannot. */
struct wake *wake_listen(const char *dir, enum wake_kind, struct buf *err);
/* Removes the socket and closes it. */
void	 wake_close(struct wake *);
/* Waits up to timeout_ms for a wake-up and takes every one waiting:
 * 1 woken, 0 not (the time passed, or a signal came). */
int	 wake_wait(struct wake *, int timeout_ms);
/* The socket, for a caller that polls it among its own descriptors (it is
 * readable while a wake-up waits; wake_wait(w, 0) takes them). */
int	 wake_fd(const struct wake *);
/* Wakes every listener of kind in dir; sockets whose process is gone are
 * removed. Returns how many were woken (0 also when dir does not exist). */
int	 wake_send(const char *dir, enum wake_kind);
#endif
