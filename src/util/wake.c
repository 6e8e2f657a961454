/* wake.c: the wake-up sockets of wake.h: AF_UNIX datagram sockets, one a
 * listener, named after their kind so that a sender finds them with one
 * readdir. A datagram's content does not matter; a listener reads all
 * that wait before it looks for work, so a burst of jobs costs one pass. */
#include "util/wake.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

const char *const wake_kind_names[WAKE__MAX] = { "jobs", "uploads" };

struct wake {
	int			 fd;
	struct sockaddr_un	 addr;
};

/* dir/name into a's path: 0, or -1 when it does not fit. */
static int
wake_path(struct sockaddr_un *a, const char *dir, const char *name)
{
	int n;

	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	n = snprintf(a->sun_path, sizeof(a->sun_path), "%s/%s", dir, name);
	return n < 0 || (size_t)n >= sizeof(a->sun_path) ? -1 : 0;
}

struct wake *
wake_listen(const char *dir, enum wake_kind kind, struct buf *err)
{
	static unsigned seq;	/* sockets of this process */
	struct wake *w;
	char name[64];

	if ((w = calloc(1, sizeof(*w))) == NULL) {
		buf_puts(err, "out of memory");
		return NULL;
	}
	snprintf(name, sizeof(name), "%s-%ld-%u.sock", wake_kind_names[kind],
	    (long)getpid(), __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	if (wake_path(&w->addr, dir, name) == -1) {
		buf_printf(err, "%s: the folder's name is too long for a "
		    "socket", dir);
		free(w);
		return NULL;
	}
	unlink(w->addr.sun_path);
	if ((w->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, 0)) == -1 || bind(w->fd,
	    (struct sockaddr *)&w->addr, sizeof(w->addr)) == -1 ||
	    chmod(w->addr.sun_path, 0660) == -1) {
		buf_printf(err, "%s: %s", w->addr.sun_path, strerror(errno));
		if (w->fd != -1)
			close(w->fd);
		free(w);
		return NULL;
	}
	return w;
}

void
wake_close(struct wake *w)
{
	if (w == NULL)
		return;
	unlink(w->addr.sun_path);
	close(w->fd);
	free(w);
}

int
wake_wait(struct wake *w, int timeout_ms)
{
	struct pollfd p = { w->fd, POLLIN, 0 };
	char b[16];
	int woken = 0;

	if (poll(&p, 1, timeout_ms) <= 0)
		return 0;
	while (recv(w->fd, b, sizeof(b), 0) >= 0)
		woken = 1;
	return woken;
}

int
wake_fd(const struct wake *w)
{
	return w->fd;
}

int
wake_send(const char *dir, enum wake_kind kind)
{
	const char *prefix = wake_kind_names[kind];
	struct sockaddr_un a;
	struct dirent *e;
	size_t n = strlen(prefix), len;
	DIR *d;
	int fd, woken = 0;

	if ((d = opendir(dir)) == NULL)
		return 0;
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1) {
		closedir(d);
		return 0;
	}
	while ((e = readdir(d)) != NULL) {
		len = strlen(e->d_name);
		if (strncmp(e->d_name, prefix, n) != 0 || e->d_name[n] != '-' ||
		    len < 5 || strcmp(e->d_name + len - 5, ".sock") != 0 ||
		    wake_path(&a, dir, e->d_name) == -1)
			continue;
		if (sendto(fd, "w", 1, MSG_DONTWAIT, (struct sockaddr *)&a,
		    sizeof(a)) == 1)
			woken++;
		else if (errno == ECONNREFUSED)
			unlink(a.sun_path);	/* nobody listens: gone */
	}
	close(fd);
	closedir(d);
	return woken;
}
