/* notify.c: a pipe that wakes a poll loop (see notify.h). */
#include "util/notify.h"
#include "util/log.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

int
notify_open(struct notify *n, struct buf *err)
{
	n->raised = 0;
	/* (never inherited by a program this one executes: svc-worker's
	 * reload) */
	if (pipe2(n->fd, O_NONBLOCK | O_CLOEXEC) == -1) {
		n->fd[0] = n->fd[1] = -1;
		buf_printf(err, "pipe: %s", strerror(errno));
		return -1;
	}
	return 0;
}

void
notify_raise(struct notify *n)
{
	char one = 1;

	if (n->raised)
		return;
	n->raised = 1;
	/* A full pipe has a byte in it already: the loop wakes either way. */
	if (write(n->fd[1], &one, 1) == -1 && errno != EAGAIN)
		log_debug("event=notify_skipped error=\"%s\"", strerror(errno));
}

void
notify_clear(struct notify *n)
{
	char drain[64];
	ssize_t got;

	if (!n->raised)
		return;
	while ((got = read(n->fd[0], drain, sizeof(drain))) > 0)
		;
	if (got == 0 || errno == EAGAIN || errno == EWOULDBLOCK)
		n->raised = 0;
}

int
notify_fd(const struct notify *n)
{
	return n->fd[0];
}

void
notify_close(struct notify *n)
{
	if (n->fd[0] != -1)
		close(n->fd[0]);
	if (n->fd[1] != -1)
		close(n->fd[1]);
	n->fd[0] = n->fd[1] = -1;
	n->raised = 0;
}
