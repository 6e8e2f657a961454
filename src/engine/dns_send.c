/* dns_send.c: DNS messages on the wire, many at once (see dns_send.h).
 * Each query is a small state machine: a try over UDP on a connected socket
 * of its own (only its server's datagrams and ICMP errors reach it), then
 * over TCP with the same server when that answer is truncated. A try ends
 * when its time is up (the timeout, or the deadline when that is sooner)
 * and the next one starts on the next server. A datagram that is not a
 * response with the query's id is ignored: a stray packet does not end the
 * wait. */
#include "engine/dns_send.h"
#include "util/timeutil.h"
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define DNS_SEND_UDP_MAX	65535	/* largest datagram read */
#define DNS_SEND_HEADER		12	/* a DNS message is never shorter */

const char *const dns_send_status_names[DNS_SEND__MAX] = {
	[DNS_SEND_OK] = "ok",
	[DNS_SEND_FAILED] = "failed",
	[DNS_SEND_DEADLINE] = "deadline",
};

enum dns_send_phase {
	DNS_SEND_P_UDP,		/* waiting for the datagram */
	DNS_SEND_P_CONNECT,	/* TCP connection under way */
	DNS_SEND_P_WRITE,	/* sending the length and the query */
	DNS_SEND_P_READ,	/* reading the length, then the answer */
	DNS_SEND_P_DONE,
	DNS_SEND_P__MAX
};

/* One query's progress. */
struct dns_send_try {
	enum dns_send_phase phase;
	int		 fd;
	unsigned	 n;		/* tries started */
	size_t		 srv;		/* the server of this try */
	int64_t		 end;		/* when this try gives up */
	size_t		 done;		/* TCP bytes written or read */
	uint8_t		 lenbuf[2];	/* TCP length prefix */
	uint8_t		*in;		/* TCP answer being read */
	size_t		 inlen;
};

static void
dns_send_close(struct dns_send_try *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	free(t->in);
	t->in = NULL;
	t->inlen = 0;
	t->done = 0;
}

static void
dns_send_finish(struct dns_send_query *q, struct dns_send_try *t,
    enum dns_send_status st)
{
	dns_send_close(t);
	t->phase = DNS_SEND_P_DONE;
	q->status = st;
}

/* A try's end: the timeout, or the deadline if sooner. */
static int64_t
dns_send_end(const struct dns_send_conf *c, int64_t now)
{
	int64_t end = now + c->timeout_ms;

	return c->deadline != 0 && c->deadline < end ? c->deadline : end;
}

/* The next try, over UDP; the query ends when none is left or the
 * deadline has passed. */
static void
dns_send_next(const struct dns_send_conf *c, struct dns_send_query *q,
    struct dns_send_try *t, int64_t now)
{
	const struct dns_send_server *s;

	dns_send_close(t);
	for (;;) {
		if (c->deadline != 0 && now >= c->deadline) {
			dns_send_finish(q, t, DNS_SEND_DEADLINE);
			return;
		}
		if (t->n >= c->tries * c->nsrv) {
			dns_send_finish(q, t, DNS_SEND_FAILED);
			return;
		}
		t->srv = t->n++ % c->nsrv;
		s = &c->srv[t->srv];
		t->end = dns_send_end(c, now);
		t->fd = socket(s->addr.ss_family, SOCK_DGRAM | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, 0);
		if (t->fd >= 0 && connect(t->fd, (const struct sockaddr *)
		    &s->addr, s->len) == 0 && send(t->fd, q->msg, q->len, 0) ==
		    (ssize_t)q->len) {
			t->phase = DNS_SEND_P_UDP;
			return;
		}
		dns_send_close(t);	/* failed at once: the next try */
	}
}

/* The answer was truncated: the same server over TCP, with a fresh
 * timeout (within the deadline). */
static void
dns_send_tcp(const struct dns_send_conf *c, struct dns_send_query *q,
    struct dns_send_try *t, int64_t now)
{
	const struct dns_send_server *s = &c->srv[t->srv];

	dns_send_close(t);
	t->end = dns_send_end(c, now);
	t->fd = socket(s->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0);
	if (t->fd < 0) {
		dns_send_next(c, q, t, now);
		return;
	}
	if (connect(t->fd, (const struct sockaddr *)&s->addr, s->len) == 0)
		t->phase = DNS_SEND_P_WRITE;
	else if (errno == EINPROGRESS)
		t->phase = DNS_SEND_P_CONNECT;
	else
		dns_send_next(c, q, t, now);
}

/* Whether a message is a response to the query (same id, QR set). */
static int
dns_send_is_reply(const struct dns_send_query *q, const uint8_t *m,
    size_t len)
{
	return len >= DNS_SEND_HEADER && m[0] == q->msg[0] &&
	    m[1] == q->msg[1] && (m[2] & 0x80) != 0;
}

static void
dns_send_udp_read(const struct dns_send_conf *c, struct dns_send_query *q,
    struct dns_send_try *t, uint8_t *buf, int64_t now)
{
	ssize_t n;

	for (;;) {
		n = recv(t->fd, buf, DNS_SEND_UDP_MAX, 0);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK ||
			    errno == EINTR)
				return;
			dns_send_next(c, q, t, now);	/* ICMP unreachable */
			return;
		}
		if (!dns_send_is_reply(q, buf, (size_t)n))
			continue;
		if (buf[2] & 0x02) {			/* TC */
			dns_send_tcp(c, q, t, now);
			return;
		}
		if ((q->reply = malloc((size_t)n)) == NULL) {
			dns_send_finish(q, t, DNS_SEND_FAILED);
			return;
		}
		memcpy(q->reply, buf, (size_t)n);
		q->rlen = (size_t)n;
		dns_send_finish(q, t, DNS_SEND_OK);
		return;
	}
}

/* Writes what is left of the length prefix and the query. */
static void
dns_send_tcp_write(const struct dns_send_conf *c, struct dns_send_query *q,
    struct dns_send_try *t, int64_t now)
{
	struct iovec iov[2];
	ssize_t n;
	int cnt = 0;

	t->lenbuf[0] = (uint8_t)(q->len >> 8);
	t->lenbuf[1] = (uint8_t)q->len;
	if (t->done < 2) {
		iov[cnt].iov_base = t->lenbuf + t->done;
		iov[cnt++].iov_len = 2 - t->done;
		iov[cnt].iov_base = (void *)q->msg;
		iov[cnt++].iov_len = q->len;
	} else {
		iov[cnt].iov_base = (void *)(q->msg + (t->done - 2));
		iov[cnt++].iov_len = q->len - (t->done - 2);
	}
	n = writev(t->fd, iov, cnt);
	if (n < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			dns_send_next(c, q, t, now);
		return;
	}
	t->done += (size_t)n;
	if (t->done == q->len + 2) {
		t->done = 0;
		t->phase = DNS_SEND_P_READ;
	}
}

/* Reads the length prefix, then the answer it announces. */
static void
dns_send_tcp_read(const struct dns_send_conf *c, struct dns_send_query *q,
    struct dns_send_try *t, int64_t now)
{
	ssize_t n;

	if (t->done < 2)
		n = recv(t->fd, t->lenbuf + t->done, 2 - t->done, 0);
	else
		n = recv(t->fd, t->in + (t->done - 2), t->inlen -
		    (t->done - 2), 0);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK ||
	    errno == EINTR))
		return;
	if (n <= 0) {
		dns_send_next(c, q, t, now);	/* closed or failed */
		return;
	}
	t->done += (size_t)n;
	if (t->done == 2) {
		t->inlen = (size_t)t->lenbuf[0] << 8 | t->lenbuf[1];
		if (t->inlen < DNS_SEND_HEADER ||
		    (t->in = malloc(t->inlen)) == NULL) {
			dns_send_next(c, q, t, now);
			return;
		}
	}
	if (t->done < 2 || t->done - 2 < t->inlen)
		return;
	if (!dns_send_is_reply(q, t->in, t->inlen)) {
		dns_send_next(c, q, t, now);
		return;
	}
	q->reply = t->in;
	q->rlen = t->inlen;
	t->in = NULL;
	dns_send_finish(q, t, DNS_SEND_OK);
}

static void
dns_send_io(const struct dns_send_conf *c, struct dns_send_query *q,
    struct dns_send_try *t, uint8_t *buf, int64_t now)
{
	int err = 0;
	socklen_t len = sizeof(err);

	switch (t->phase) {
	case DNS_SEND_P_UDP:
		dns_send_udp_read(c, q, t, buf, now);
		break;
	case DNS_SEND_P_CONNECT:
		if (getsockopt(t->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 ||
		    err != 0) {
			dns_send_next(c, q, t, now);
			break;
		}
		t->phase = DNS_SEND_P_WRITE;
		/* FALLTHROUGH */
	case DNS_SEND_P_WRITE:
		dns_send_tcp_write(c, q, t, now);
		break;
	case DNS_SEND_P_READ:
		dns_send_tcp_read(c, q, t, now);
		break;
	default:
		break;
	}
}

void
dns_send(const struct dns_send_conf *c, struct dns_send_query *q, size_t n)
{
	struct dns_send_try *t = NULL;
	struct pollfd *pfd = NULL;
	size_t *who = NULL, i, np;
	uint8_t *buf = NULL;
	int64_t now, wait;

	for (i = 0; i < n; i++) {
		q[i].status = DNS_SEND_FAILED;
		q[i].reply = NULL;
		q[i].rlen = 0;
	}
	if (n == 0 || c->nsrv == 0 || c->tries == 0)
		return;
	if ((t = calloc(n, sizeof(*t))) == NULL)
		return;
	for (i = 0; i < n; i++)
		t[i].fd = -1;
	if ((pfd = calloc(n, sizeof(*pfd))) == NULL ||
	    (who = calloc(n, sizeof(*who))) == NULL ||
	    (buf = malloc(DNS_SEND_UDP_MAX)) == NULL)
		goto out;
	now = timeutil_mono_ms();
	for (i = 0; i < n; i++)
		dns_send_next(c, &q[i], &t[i], now);
	for (;;) {
		now = timeutil_mono_ms();
		wait = -1;
		np = 0;
		for (i = 0; i < n; i++) {
			if (t[i].phase != DNS_SEND_P_DONE && now >= t[i].end)
				dns_send_next(c, &q[i], &t[i], now);
			if (t[i].phase == DNS_SEND_P_DONE)
				continue;
			pfd[np].fd = t[i].fd;
			pfd[np].events = t[i].phase == DNS_SEND_P_UDP ||
			    t[i].phase == DNS_SEND_P_READ ? POLLIN : POLLOUT;
			pfd[np].revents = 0;
			who[np++] = i;
			if (wait < 0 || t[i].end - now < wait)
				wait = t[i].end - now;
		}
		if (np == 0)
			break;
		if (poll(pfd, np, (int)wait) < 0 && errno != EINTR) {
			for (i = 0; i < n; i++)
				if (t[i].phase != DNS_SEND_P_DONE)
					dns_send_finish(&q[i], &t[i],
					    DNS_SEND_FAILED);
			break;
		}
		now = timeutil_mono_ms();
		for (i = 0; i < np; i++)
			if (pfd[i].revents != 0)
				dns_send_io(c, &q[who[i]], &t[who[i]], buf,
				    now);
	}
out:
	for (i = 0; i < n; i++)
		dns_send_close(&t[i]);
	free(t);
	free(pfd);
	free(who);
	free(buf);
}
