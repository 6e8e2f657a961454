/* smtp_io.c: the SMTP client's sockets and GnuTLS, never blocking: the
 * connection to one address, bytes in and out in plain text or in TLS
 * records (GNUTLS_E_AGAIN and the direction GnuTLS waits for go into
 * s->io_events), the start of TLS after STARTTLS and its handshake, the
 * certificate check, closing. Also the TLS credentials (smtp_io_tls_new,
 * declared in smtp.h) and the resumption of TLS sessions with the data
 * they keep (smtp_tls_cache.h), so that every GnuTLS call is here. What a
 * byte means is for smtp_session.c. */
#include "engine/smtp_session.h"
#include "engine/egress_resolve.h"
#include "engine/smtp_tls_cache.h"
#include "util/timeutil.h"
#include "util/log.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

const char *const smtp_io_names[SMTP_IO__MAX] = {
	[SMTP_IO_OK] = "ok",
	[SMTP_IO_AGAIN] = "again",
	[SMTP_IO_EOF] = "eof",
	[SMTP_IO_ERR] = "error",
	[SMTP_IO_TLS_ERR] = "tls_error",
	[SMTP_IO_ROUTE] = "route_failed",
};

/* The CA list is read at the first STARTTLS, not when the credentials are
 * made: parsing the system store's certificates is most of the start-up
 * time of a program that may never open a TLS session (svc-worker --once
 * with nothing to do, a responder answering GET /v1/credits). The lock is
 * for engines shared by threads; "loaded" is read under it. */
struct smtp_tls {
	gnutls_certificate_credentials_t cred;
	char		*ca_file;	/* NULL: no check; "": system store */
	pthread_mutex_t	 lock;
	int		 loaded, have_ca;
	struct smtp_tls_cache *cache;	/* session data for resumption */
};

/* ---- TLS credentials ---- */

struct smtp_tls *
smtp_io_tls_new(const char *ca_file, struct buf *err)
{
	struct smtp_tls *t;
	int r;

	if ((t = calloc(1, sizeof(*t))) == NULL) {
		buf_puts(err, "out of memory");
		return NULL;
	}
	if ((r = gnutls_certificate_allocate_credentials(&t->cred)) < 0) {
		buf_printf(err, "gnutls credentials: %s", gnutls_strerror(r));
		free(t);
		return NULL;
	}
	pthread_mutex_init(&t->lock, NULL);
	if ((t->cache = smtp_tls_cache_new(0)) == NULL) {
		buf_puts(err, "out of memory");
		smtp_io_tls_free(t);
		return NULL;
	}
	if (ca_file == NULL)
		return t;
	/* a file that cannot be read is a configuration error at start */
	if (*ca_file != '\0' && access(ca_file, R_OK) == -1) {
		buf_printf(err, "ca_file %s: %s", ca_file, strerror(errno));
		smtp_io_tls_free(t);
		return NULL;
	}
	if ((t->ca_file = strdup(ca_file)) == NULL) {
		buf_puts(err, "out of memory");
		smtp_io_tls_free(t);
		return NULL;
	}
	return t;
}

/* Reads the CA list once, at the first session that needs it. A list that
 * does not load leaves certificates unchecked (tls_verified stays 0): the
 * check is for information only. */
static void
smtp_io_tls_load_ca(struct smtp_tls *t)
{
	int r;

	pthread_mutex_lock(&t->lock);
	if (!t->loaded && t->ca_file != NULL) {
		t->loaded = 1;
		if (*t->ca_file == '\0')
			r = gnutls_certificate_set_x509_system_trust(t->cred);
		else
			r = gnutls_certificate_set_x509_trust_file(t->cred,
			    t->ca_file, GNUTLS_X509_FMT_PEM);
		if (r < 0)
			log_warn("event=smtp_tls_ca_failed ca_file=\"%s\" "
			    "error=\"%s\"", *t->ca_file ? t->ca_file :
			    "(system)", gnutls_strerror(r));
		t->have_ca = r > 0;
	}
	pthread_mutex_unlock(&t->lock);
}

void
smtp_io_tls_free(struct smtp_tls *t)
{
	if (t == NULL)
		return;
	gnutls_certificate_free_credentials(t->cred);
	smtp_tls_cache_free(t->cache);
	pthread_mutex_destroy(&t->lock);
	free(t->ca_file);
	free(t);
}

size_t
smtp_io_tls_cached(struct smtp_tls *t)
{
	return t != NULL ? smtp_tls_cache_count(t->cache) : 0;
}

/* ---- byte I/O: plain or TLS, non-blocking ---- */

const struct egress_route *
smtp_io_route(const struct smtp_session *s)
{
	const struct egress *e = s->opts->egress;

	if (e == NULL || e->n == 0)
		return NULL;
	return &e->r[s->route % e->n];
}

/* The route's part before connect: a bound source address, or the
 * SOCKS5 exchange made ready and *to switched to the proxy. -1 (with
 * s->route_why) when the route cannot be used for this address. */
static int
smtp_io_route_prepare(struct smtp_session *s, int fd,
    const struct egress_route *rt, const struct sockaddr_storage *ss,
    const struct sockaddr_storage *proxy, socklen_t proxylen,
    const struct sockaddr **to, socklen_t *tolen)
{
	const uint8_t *a;
	int one = 1;

	if (rt->kind == EGRESS_BIND) {
#ifdef IP_BIND_ADDRESS_NO_PORT
		/* the port is chosen at connect, per destination: many
		 * sessions from one source address */
		(void)setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one,
		    sizeof(one));
#endif
		if (bind(fd, (const struct sockaddr *)&rt->sa, rt->salen) ==
		    -1) {
			log_warn("event=egress_bind_failed session=%u route=%s "
			    "errno=%d error=\"%s\"", s->id, rt->name, errno,
			    strerror(errno));
			s->route_why = "cannot bind the source address";
			return -1;
		}
		return 0;
	}
	if (s->socks == NULL && (s->socks = calloc(1, sizeof(*s->socks))) ==
	    NULL) {
		s->route_why = "out of memory";
		return -1;
	}
	a = ss->ss_family == AF_INET6 ?
	    (const uint8_t *)&((const struct sockaddr_in6 *)ss)->sin6_addr :
	    (const uint8_t *)&((const struct sockaddr_in *)ss)->sin_addr;
	if (socks5_start(s->socks, rt->user, rt->pass,
	    ss->ss_family == AF_INET6 ? 6 : 4, a, s->opts->port) !=
	    SOCKS5_OK) {
		s->route_why = "bad proxy credentials";
		return -1;
	}
	(void)one;
	*to = (const struct sockaddr *)proxy;
	*tolen = proxylen;
	return 0;
}

/* Opens a non-blocking socket (s->fd) to addr at the session's port, by
 * the session's egress route (bound to its source address, or to its
 * SOCKS5 proxy, s->socks then ready to start), and connects: SMTP_IO_OK
 * when connected at once, SMTP_IO_AGAIN while it is in progress (POLLOUT
 * tells), SMTP_IO_EOF when connect() failed at once (no one there),
 * SMTP_IO_ROUTE when the route failed (s->route_why), SMTP_IO_ERR when
 * there is no socket. */
enum smtp_io
smtp_io_connect(struct smtp_session *s, const struct dns_addr *addr)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	const struct egress_route *rt = smtp_io_route(s);
	const struct sockaddr *to = (const struct sockaddr *)&ss;
	struct sockaddr_storage proxy;
	socklen_t sl, proxylen = 0;
	int fd, family;

	memset(&ss, 0, sizeof(ss));
	if (addr->ip.family == 6) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)s->opts->port);
		memcpy(&sin6->sin6_addr, addr->ip.addr, 16);
		sl = sizeof(*sin6);
	} else {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)s->opts->port);
		if (inet_pton(AF_INET, addr->text, &sin->sin_addr) != 1)
			memcpy(&sin->sin_addr, addr->ip.addr, 4);
		sl = sizeof(*sin);
	}
	if (s->socks != NULL)
		s->socks->state = SOCKS5_S_FAILED;
	if (rt != NULL && rt->kind == EGRESS_DIRECT)
		rt = NULL;
	s->info.route = rt != NULL ? rt->name : "direct";
	s->info.route_index = s->opts->egress != NULL && s->opts->egress->n ?
	    s->route % s->opts->egress->n : 0;
	/* a proxy's address (a host name's as last looked up: none when it
	 * does not resolve, and the route fails) */
	if (rt != NULL && rt->kind == EGRESS_SOCKS5 &&
	    egress_resolve_addr(s->opts->egress, s->route %
	    s->opts->egress->n, &proxy, &proxylen) == -1) {
		s->route_why = "the proxy's host name does not resolve";
		return SMTP_IO_ROUTE;
	}
	family = rt != NULL && rt->kind == EGRESS_SOCKS5 ? proxy.ss_family :
	    ss.ss_family;
	if (rt != NULL && rt->kind == EGRESS_BIND && rt->family !=
	    ss.ss_family) {
		s->route_why = "source address of the other family";
		s->route_quiet = 1;
		return SMTP_IO_ROUTE;
	}
	fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1) {
		log_warn("event=smtp_socket_failed errno=%d", errno);
		return SMTP_IO_ERR;
	}
	/* SMTP is a conversation of short writes: without NODELAY the end of
	 * the TLS handshake and the EHLO that follows wait for a delayed ACK
	 * (about 40 ms each, measured in bench-verify). */
	{
		int one = 1;
		(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
		    sizeof(one));
	}
	s->fd = fd;
	if (rt != NULL && smtp_io_route_prepare(s, fd, rt, &ss, &proxy,
	    proxylen, &to, &sl) == -1)
		return SMTP_IO_ROUTE;
	if (connect(fd, to, sl) == 0)
		return SMTP_IO_OK;
	if (errno == EINPROGRESS)
		return SMTP_IO_AGAIN;
	log_debug("event=smtp_connect_failed session=%u host=%s addr=%s "
	    "route=%s errno=%d", s->id, s->info.host, s->info.addr,
	    s->info.route, errno);
	if (rt != NULL && rt->kind == EGRESS_SOCKS5) {
		s->route_why = "cannot connect to the proxy";
		return SMTP_IO_ROUTE;
	}
	return SMTP_IO_EOF;
}

/* The SOCKS5 exchange on the connected socket, never blocking: what is
 * due goes out, and no more than the proxy's reply is read (the SMTP
 * greeting follows it on the same socket). */
enum smtp_io
smtp_io_proxy(struct smtp_session *s)
{
	const uint8_t *o;
	uint8_t b[300];
	size_t n, want, used;
	ssize_t r;

	for (;;) {
		if (s->socks->state == SOCKS5_S_DONE)
			return SMTP_IO_OK;
		if (s->socks->state == SOCKS5_S_FAILED)
			return SMTP_IO_ROUTE;
		o = socks5_out(s->socks, &n);
		if (n > 0) {
			r = send(s->fd, o, n, MSG_NOSIGNAL);
			if (r == -1 && errno == EINTR)
				continue;
			if (r == -1 && (errno == EAGAIN ||
			    errno == EWOULDBLOCK)) {
				s->io_events = POLLOUT;
				return SMTP_IO_AGAIN;
			}
			if (r == -1)
				return errno == EPIPE || errno == ECONNRESET ?
				    SMTP_IO_EOF : SMTP_IO_ERR;
			socks5_sent(s->socks, (size_t)r);
			continue;
		}
		want = socks5_want(s->socks);
		r = recv(s->fd, b, want < sizeof(b) ? want : sizeof(b), 0);
		if (r == 0)
			return SMTP_IO_EOF;
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			s->io_events = POLLIN;
			return SMTP_IO_AGAIN;
		}
		if (r == -1)
			return errno == ECONNRESET ? SMTP_IO_EOF : SMTP_IO_ERR;
		(void)socks5_feed(s->socks, b, (size_t)r, &used);
		log_debug("event=socks5_step session=%u route=%s state=%s",
		    s->id, s->info.route, socks5_state_names[s->socks->state]);
	}
}

/* Sends what is left of s->out. */
enum smtp_io
smtp_io_write(struct smtp_session *s)
{
	ssize_t r;

	while (s->out_off < s->out.len) {
		if (s->tls != NULL) {
			if (s->tls_wpending)
				r = gnutls_record_send(s->tls, NULL, 0);
			else
				r = gnutls_record_send(s->tls,
				    s->out.data + s->out_off,
				    s->out.len - s->out_off);
			if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED) {
				s->tls_wpending = 1;
				s->io_events = gnutls_record_get_direction(
				    s->tls) ? POLLOUT : POLLIN;
				return SMTP_IO_AGAIN;
			}
			s->tls_wpending = 0;
			if (r < 0) {
				log_debug("event=smtp_tls_send_failed "
				    "session=%u error=\"%s\"", s->id,
				    gnutls_strerror((int)r));
				return SMTP_IO_TLS_ERR;
			}
		} else {
			r = send(s->fd, s->out.data + s->out_off,
			    s->out.len - s->out_off, MSG_NOSIGNAL);
			if (r == -1 && errno == EINTR)
				continue;
			if (r == -1 && (errno == EAGAIN ||
			    errno == EWOULDBLOCK)) {
				s->io_events = POLLOUT;
				return SMTP_IO_AGAIN;
			}
			if (r == -1) {
				log_debug("event=smtp_send_failed session=%u "
				    "errno=%d", s->id, errno);
				return errno == EPIPE || errno == ECONNRESET ?
				    SMTP_IO_EOF : SMTP_IO_ERR;
			}
		}
		s->out_off += (size_t)r;
	}
	buf_reset(&s->out);
	s->out_off = 0;
	return SMTP_IO_OK;
}

/* Reads what is there into b; *got > 0 with SMTP_IO_OK. */
enum smtp_io
smtp_io_read(struct smtp_session *s, char *b, size_t size, size_t *got)
{
	ssize_t r;
	int soft = 0;

	*got = 0;
	for (;;) {
		if (s->tls != NULL) {
			r = gnutls_record_recv(s->tls, b, size);
			if (r > 0)
				break;
			if (r == 0 || r == GNUTLS_E_PREMATURE_TERMINATION)
				return SMTP_IO_EOF;
			if (r == GNUTLS_E_INTERRUPTED ||
			    r == GNUTLS_E_WARNING_ALERT_RECEIVED ||
			    r == GNUTLS_E_REHANDSHAKE)
				continue;
			if (r == GNUTLS_E_AGAIN) {
				s->io_events = gnutls_record_get_direction(
				    s->tls) ? POLLOUT : POLLIN;
				return SMTP_IO_AGAIN;
			}
			if (r == GNUTLS_E_PULL_ERROR)
				return SMTP_IO_EOF;	/* reset by peer */
			log_debug("event=smtp_tls_recv_failed session=%u "
			    "error=\"%s\"", s->id, gnutls_strerror((int)r));
			/* Non-fatal: read on, but not forever. */
			if (gnutls_error_is_fatal((int)r) || ++soft > 16)
				return SMTP_IO_TLS_ERR;
			continue;
		}
		r = recv(s->fd, b, size, 0);
		if (r > 0)
			break;
		if (r == 0)
			return SMTP_IO_EOF;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			s->io_events = POLLIN;
			return SMTP_IO_AGAIN;
		}
		log_debug("event=smtp_recv_failed session=%u errno=%d", s->id,
		    errno);
		return errno == ECONNRESET ? SMTP_IO_EOF : SMTP_IO_ERR;
	}
	*got = (size_t)r;
	/* the first reply in TLS came after the server's tickets, if any */
	if (s->tls != NULL && !s->tls_stored)
		smtp_io_tls_store(s);
	return SMTP_IO_OK;
}

/* The TLS session data kept for this host, port and route, offered to the
 * server (only with the engine's shared credentials: a session's own are
 * gone with it). A server that does not resume makes a full handshake;
 * data GnuTLS does not take are dropped, never a failure. */
static void
smtp_io_tls_offer(struct smtp_session *s, const char *host)
{
	struct smtp_tls *t = s->opts->tls;
	void *data;
	size_t len;
	int verified, r;

	s->tls_offered = s->tls_offered_verified = s->tls_stored = 0;
	s->tls_host = host;
	if (t == NULL || !s->opts->tls_resume || smtp_tls_cache_get(t->cache,
	    host, s->opts->port, s->info.route, timeutil_mono_ms(), &data,
	    &len, &verified) != 1)
		return;
	r = gnutls_session_set_data(s->tls, data, len);
	free(data);
	if (r < 0) {
		log_debug("event=smtp_tls_resume_unusable session=%u host=%s "
		    "error=\"%s\"", s->id, host, gnutls_strerror(r));
		smtp_tls_cache_drop(t->cache, host, s->opts->port,
		    s->info.route);
		return;
	}
	s->tls_offered = 1;
	s->tls_offered_verified = verified;
}

/* Starts GnuTLS on the connected socket. -1 on a set-up failure. */
int
smtp_io_tls_start(struct smtp_session *s, const char *host)
{
	struct smtp_tls *t = s->opts->tls;
	struct in6_addr a6;
	int r;

	if (t == NULL) {
		if (s->own_tls == NULL) {
			struct buf err;

			buf_init(&err, 256);
			s->own_tls = smtp_io_tls_new(NULL, &err);
			if (s->own_tls == NULL)
				log_warn("event=smtp_tls_setup_failed "
				    "error=\"%s\"", buf_str(&err));
			buf_free(&err);
			if (s->own_tls == NULL)
				return -1;
		}
		t = s->own_tls;
	}
	smtp_io_tls_load_ca(t);
	r = gnutls_init(&s->tls, GNUTLS_CLIENT | GNUTLS_NONBLOCK |
	    GNUTLS_NO_SIGNAL);
	if (r < 0) {
		s->tls = NULL;
		return -1;
	}
	/* %COMPAT: MX hosts run old TLS stacks; nothing secret is sent. */
	if (gnutls_priority_set_direct(s->tls, "NORMAL:%COMPAT", NULL) < 0 ||
	    gnutls_credentials_set(s->tls, GNUTLS_CRD_CERTIFICATE,
	    t->cred) < 0)
		return -1;
	/* SNI only for names, not for address literals. */
	if (inet_pton(AF_INET6, host, &a6) != 1 &&
	    strspn(host, "0123456789.") != strlen(host))
		(void)gnutls_server_name_set(s->tls, GNUTLS_NAME_DNS, host,
		    strlen(host));
	/* Our own stage timeout applies, not GnuTLS's. */
	gnutls_handshake_set_timeout(s->tls, 0);
	gnutls_transport_set_int(s->tls, s->fd);
	s->tls_wpending = 0;
	smtp_io_tls_offer(s, host);
	return 0;
}

/* One step of the handshake. */
enum smtp_io
smtp_io_handshake(struct smtp_session *s)
{
	int r;

	for (;;) {
		r = gnutls_handshake(s->tls);
		if (r == GNUTLS_E_SUCCESS)
			return SMTP_IO_OK;
		if (r == GNUTLS_E_AGAIN) {
			s->io_events = gnutls_record_get_direction(s->tls) ?
			    POLLOUT : POLLIN;
			return SMTP_IO_AGAIN;
		}
		if (r == GNUTLS_E_INTERRUPTED || !gnutls_error_is_fatal(r))
			continue;
		log_debug("event=smtp_tls_handshake_failed session=%u "
		    "error=\"%s\" offered=%d", s->id, gnutls_strerror(r),
		    s->tls_offered);
		/* data a server chokes on are not offered again */
		if (s->tls_offered)
			smtp_tls_cache_drop(s->opts->tls->cache, s->tls_host,
			    s->opts->port, s->info.route);
		return SMTP_IO_TLS_ERR;
	}
}

/* Records whether the handshake resumed a session and whether the
 * certificate verifies (for information only): a resumed session's is the
 * one its session had when it was made with the same host name (its
 * certificate may not come again). */
void
smtp_io_tls_check(struct smtp_session *s, const char *host)
{
	struct smtp_tls *t = s->opts->tls != NULL ? s->opts->tls : s->own_tls;
	unsigned status = 0;

	s->info.tls_verified = 0;
	s->info.tls_resumed = s->tls_offered &&
	    gnutls_session_is_resumed(s->tls) != 0;
	if (s->tls_offered && !s->info.tls_resumed)
		/* refused: what this session brings replaces it */
		smtp_tls_cache_drop(s->opts->tls->cache, host, s->opts->port,
		    s->info.route);
	if (t == NULL || !t->have_ca)
		return;
	if (s->info.tls_resumed) {
		s->info.tls_verified = s->tls_offered_verified;
		return;
	}
	if (gnutls_certificate_verify_peers3(s->tls, host, &status) == 0 &&
	    status == 0)
		s->info.tls_verified = 1;
}

/* Keeps the session's data for the next connection to the same host,
 * port and route. Under TLS 1.3 they resume only once the server's ticket
 * came (it follows the handshake: the first record read brings it), and
 * gnutls_session_get_data2 would wait for one, blocking: until the flag
 * says it came, nothing is asked (a server that sends none is asked on
 * every read, cheaply). */
void
smtp_io_tls_store(struct smtp_session *s)
{
	struct smtp_tls *t = s->opts->tls;
	gnutls_datum_t d = { NULL, 0 };
	int64_t now, expires;
	time_t at;
	int r;

	if (t == NULL || !s->opts->tls_resume || s->tls_stored)
		return;
	if (gnutls_protocol_get_version(s->tls) == GNUTLS_TLS1_3 &&
	    !(gnutls_session_get_flags(s->tls) & GNUTLS_SFLAGS_SESSION_TICKET))
		return;
	s->tls_stored = 1;
	if ((r = gnutls_session_get_data2(s->tls, &d)) < 0) {
		log_debug("event=smtp_tls_session_data_failed session=%u "
		    "error=\"%s\"", s->id, gnutls_strerror(r));
		return;
	}
	now = timeutil_mono_ms();
	expires = now + SMTP_TLS_CACHE_TTL_MS;
	at = gnutls_db_check_entry_expire_time(&d);
	if (at > 0) {
		time_t left = at - time(NULL);

		if (left <= 0) {
			gnutls_free(d.data);
			return;
		}
		if ((int64_t)left * 1000 < SMTP_TLS_CACHE_TTL_MS)
			expires = now + (int64_t)left * 1000;
	}
	if (smtp_tls_cache_put(t->cache, s->tls_host, s->opts->port,
	    s->info.route, d.data, d.size, s->info.tls_verified, expires,
	    now) == 0)
		log_debug("event=smtp_tls_session_kept session=%u host=%s "
		    "route=%s bytes=%u", s->id, s->tls_host,
		    s->info.route, d.size);
	gnutls_free(d.data);
}

/* The TLS version in use, for logs. */
const char *
smtp_io_tls_version(const struct smtp_session *s)
{
	const char *v = gnutls_protocol_get_name(
	    gnutls_protocol_get_version(s->tls));

	return v != NULL ? v : "?";
}

void
smtp_io_close(struct smtp_session *s)
{
	if (s->tls != NULL) {
		gnutls_deinit(s->tls);
		s->tls = NULL;
	}
	if (s->fd != -1) {
		close(s->fd);
		s->fd = -1;
	}
	s->tls_wpending = 0;
	buf_reset(&s->out);
	s->out_off = 0;
	smtp_reply_parser_reset(&s->parser);
	s->expect_head = s->expect_tail = 0;
}
