/* notify.h: a thread telling a poll loop that something waits for it,
 * through a pipe: one byte is written when the waiting list goes from
 * empty to not empty (notify_raise), and the pipe is drained when the
 * loop takes the last item (notify_clear; only then: the loop asks on
 * every turn, and a read of an empty pipe would be a system call for
 * nothing). The caller's own mutex guards both calls; the loop polls
 * notify_fd for POLLIN. */
#ifndef SVC_NOTIFY_H
#define SVC_NOTIFY_H
#include "util/buf.h"

struct notify {
	int	 fd[2];		/* -1 when not open */
	int	 raised;	/* a byte written, not drained yet */
};

/* Opens the pipe (both ends non-blocking); -1 with a message in err. */
int	 notify_open(struct notify *, struct buf *err);
/* Makes notify_fd readable (nothing to do when it is already). */
void	 notify_raise(struct notify *);
/* Makes notify_fd unreadable again (a failed drain is tried again at the
 * next call). */
void	 notify_clear(struct notify *);
int	 notify_fd(const struct notify *);
/* Closes both ends; a notify never opened or closed already is fine. */
void	 notify_close(struct notify *);
#endif
