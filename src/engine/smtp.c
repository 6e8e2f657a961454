/* smtp.c: the SMTP probing client. Three layers, kept apart:
 *   - byte I/O (smtp_io_*): non-blocking plain sockets or GnuTLS records,
 *     GNUTLS_E_AGAIN and the direction GnuTLS waits for;
 *   - the state machine (smtp_session_enter, smtp_session_reply and the
 *     target/finish helpers): what to send next and what a reply means;
 *   - the driver (smtp_session_poll/step, smtp_probe).
 * Replies come from the pure parser in smtp_reply.c; RCPT verdicts from
 * smtp_classify.c. The client never sends DATA: after RCPT it sends QUIT.
 * Every transition is logged at debug level. */
#include "engine/smtp.h"
#include "engine/addr.h"
#include "util/log.h"
#include "util/timeutil.h"
#include <gnutls/gnutls.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

const char *const smtp_outcome_names[SMTP_OUTCOME__MAX] = {
	[SMTP_OUTCOME_OK] = "ok",
	[SMTP_OUTCOME_UNREACHABLE] = "unreachable",
	[SMTP_OUTCOME_PRIVATE_ADDRESS] = "private_address",
	[SMTP_OUTCOME_TIMEOUT] = "timeout",
	[SMTP_OUTCOME_REFUSED_AT_BANNER] = "refused_at_banner",
	[SMTP_OUTCOME_BLOCKED] = "blocked",
	[SMTP_OUTCOME_TEMPFAIL] = "tempfail",
	[SMTP_OUTCOME_TLS_REQUIRED] = "tls_required",
	[SMTP_OUTCOME_TLS_FAILED] = "tls_failed",
	[SMTP_OUTCOME_DISCONNECTED] = "disconnected",
	[SMTP_OUTCOME_PROTOCOL_ERROR] = "protocol_error",
	[SMTP_OUTCOME_ERROR] = "error",
};

const char *const smtp_state_names[SMTP_STATE__MAX] = {
	[SMTP_STATE_INIT] = "init",
	[SMTP_STATE_CONNECT] = "connect",
	[SMTP_STATE_BANNER] = "banner",
	[SMTP_STATE_EHLO] = "ehlo",
	[SMTP_STATE_HELO] = "helo",
	[SMTP_STATE_STARTTLS] = "starttls",
	[SMTP_STATE_TLS_HANDSHAKE] = "tls_handshake",
	[SMTP_STATE_EHLO_TLS] = "ehlo_tls",
	[SMTP_STATE_MAIL] = "mail",
	[SMTP_STATE_RCPT] = "rcpt",
	[SMTP_STATE_QUIT] = "quit",
	[SMTP_STATE_DONE] = "done",
};

/* What a reply answers, in the order the commands were sent. */
enum smtp_cmd {
	SMTP_CMD_GREETING,
	SMTP_CMD_EHLO,
	SMTP_CMD_HELO,
	SMTP_CMD_STARTTLS,
	SMTP_CMD_MAIL,
	SMTP_CMD_RCPT,
	SMTP_CMD_QUIT,
	SMTP_CMD__MAX
};

static const char *const smtp_cmd_names[SMTP_CMD__MAX] = {
	[SMTP_CMD_GREETING] = "greeting",
	[SMTP_CMD_EHLO] = "EHLO",
	[SMTP_CMD_HELO] = "HELO",
	[SMTP_CMD_STARTTLS] = "STARTTLS",
	[SMTP_CMD_MAIL] = "MAIL",
	[SMTP_CMD_RCPT] = "RCPT",
	[SMTP_CMD_QUIT] = "QUIT",
};

/* Result of a byte-level I/O call. */
enum smtp_io {
	SMTP_IO_OK,		/* done (write) or bytes read */
	SMTP_IO_AGAIN,		/* would block: poll s->io_events */
	SMTP_IO_EOF,		/* the peer closed the connection */
	SMTP_IO_ERR,		/* socket error */
	SMTP_IO_TLS_ERR,	/* fatal GnuTLS error */
	SMTP_IO__MAX
};

static const char *const smtp_io_names[SMTP_IO__MAX] = {
	[SMTP_IO_OK] = "ok",
	[SMTP_IO_AGAIN] = "again",
	[SMTP_IO_EOF] = "eof",
	[SMTP_IO_ERR] = "error",
	[SMTP_IO_TLS_ERR] = "tls_error",
};

#define SMTP_OUT_MAX	(64 * 1024)	/* one flight: 100 RCPTs fit easily */
#define SMTP_TEXT_MAX	1024		/* octets of reply text kept */
#define SMTP_READ_CHUNK	4096

struct smtp_tls {
	gnutls_certificate_credentials_t cred;
	int		 have_ca;
};

struct smtp_target {
	size_t		 host;		/* index into hosts */
	struct dns_addr	 addr;
};

struct smtp_session {
	unsigned	 id;		/* for logs */
	const struct smtp_opts *opts;
	enum smtp_state	 state;

	struct smtp_rcpt_result *rcpt;
	size_t		 nrcpt;
	size_t		 next_rcpt;	/* next RCPT to send (one by one) */
	size_t		 answered;

	char		**hosts;
	size_t		 nhosts;
	struct smtp_target *targets;
	size_t		 ntargets;
	size_t		 next_target;
	enum smtp_outcome fail;		/* best failure among targets */
	int		 fail_rank;

	int		 fd;
	unsigned	 conn;		/* connection counter */
	int		 plain_only;	/* this connection: no STARTTLS */
	int		 plain_retry;	/* next connection: same address, plain */
	int		 tls_failed;	/* a handshake failed in this session */
	int		 needs_utf8;
	struct smtp_tls	*own_tls;
	gnutls_session_t tls;
	int		 tls_wpending;	/* a gnutls_record_send returned AGAIN */
	short		 io_events;	/* what the last AGAIN waits for */

	struct smtp_reply_parser parser;
	struct buf	 out;
	size_t		 out_off;
	enum smtp_cmd	*expect;	/* replies still due, a FIFO */
	size_t		*expect_rcpt;
	size_t		 expect_head, expect_tail, expect_cap;

	int64_t		 deadline;	/* overall, 0: none */
	int64_t		 stage_deadline;
	struct smtp_session_info info;
};

static char smtp_empty[1];
static unsigned smtp_session_ids;

static void	smtp_session_next_target(struct smtp_session *, int64_t);

void
smtp_opts_from_conf(struct smtp_opts *o, const struct conf *cf)
{
	struct addr a;

	memset(o, 0, sizeof(*o));
	o->port = (unsigned)conf_int(cf, CONF_SMTP_PORT);
	o->helo_name = conf_str(cf, CONF_SMTP_HELO_NAME);
	o->mail_from = conf_str(cf, CONF_SMTP_MAIL_FROM);
	if (addr_parse(o->mail_from, &a) == ADDR_OK &&
	    (a.flags & ADDR_F_IDN)) {
		memcpy(o->mail_from_ascii, a.smtp_path,
		    strlen(a.smtp_path) + 1);
		o->mail_from = o->mail_from_ascii;
	}
	o->connect_timeout_ms = (int)conf_int(cf, CONF_SMTP_CONNECT_TIMEOUT_MS);
	o->reply_timeout_ms = (int)conf_int(cf, CONF_SMTP_REPLY_TIMEOUT_MS);
	o->deadline_ms = (int)conf_int(cf, CONF_VERIFY_TIME_BUDGET_MS);
	o->allow_private_mx = conf_int(cf, CONF_ALLOW_PRIVATE_MX) != 0;
	o->starttls = 1;
	o->tls_fallback = 1;
	o->max_addrs = 5;	/* as Postfix's smtp_mx_address_limit */
}

/* ---- TLS credentials ---- */

struct smtp_tls *
smtp_tls_new(const char *ca_file, struct buf *err)
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
	if (ca_file == NULL)
		return t;
	if (*ca_file == '\0')
		r = gnutls_certificate_set_x509_system_trust(t->cred);
	else
		r = gnutls_certificate_set_x509_trust_file(t->cred, ca_file,
		    GNUTLS_X509_FMT_PEM);
	if (r < 0) {
		buf_printf(err, "ca_file %s: %s", *ca_file ? ca_file :
		    "(system)", gnutls_strerror(r));
		smtp_tls_free(t);
		return NULL;
	}
	t->have_ca = r > 0;
	return t;
}

void
smtp_tls_free(struct smtp_tls *t)
{
	if (t == NULL)
		return;
	gnutls_certificate_free_credentials(t->cred);
	free(t);
}

/* ---- small helpers ---- */

static void
smtp_str_free(char *p)
{
	if (p != NULL && p != smtp_empty)
		free(p);
}

/* One-line, length-capped copy of a reply's text; smtp_empty on failure. */
static char *
smtp_reply_copy_text(const struct smtp_reply *r)
{
	struct buf b;
	char *p;

	buf_init(&b, SMTP_TEXT_MAX);
	if (smtp_reply_oneline(r, &b) == -1 && b.len == 0) {
		buf_free(&b);
		return smtp_empty;
	}
	p = buf_steal(&b);
	return p != NULL ? p : smtp_empty;
}

/* An address, HELO name or sender we put on a command line: printable
 * ASCII or UTF-8, no spaces, no angle brackets, no control characters. */
static int
smtp_arg_valid(const char *s, size_t max, int empty_ok)
{
	size_t len;
	const unsigned char *p;

	if (s == NULL)
		return 0;
	len = strlen(s);
	if (len > max || (len == 0 && !empty_ok))
		return 0;
	for (p = (const unsigned char *)s; *p; p++)
		if (*p <= 0x20 || *p == 0x7f || *p == '<' || *p == '>')
			return 0;
	return 1;
}

static int
smtp_has_8bit(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s >= 0x80)
			return 1;
	return 0;
}

/* Whether text contains word (ASCII, case-insensitive). */
static int
smtp_text_has(const char *text, const char *word)
{
	size_t wl = strlen(word), i;

	for (; *text; text++) {
		for (i = 0; i < wl; i++) {
			char c = text[i];

			if (c >= 'A' && c <= 'Z')
				c = (char)(c - 'A' + 'a');
			if (c != word[i])
				break;
		}
		if (i == wl)
			return 1;
	}
	return 0;
}

static void
smtp_info_set_reply(struct smtp_session *s, const struct smtp_reply *r)
{
	if (r == NULL)
		return;
	smtp_str_free(s->info.text);
	s->info.code = r->code;
	memcpy(s->info.enhanced, r->enhanced, sizeof(s->info.enhanced));
	s->info.text = smtp_reply_copy_text(r);
}

/* ---- byte I/O: plain or TLS, non-blocking ---- */

/* Sends what is left of s->out. */
static enum smtp_io
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
static enum smtp_io
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
	return SMTP_IO_OK;
}

/* Starts GnuTLS on the connected socket. -1 on a set-up failure. */
static int
smtp_io_tls_start(struct smtp_session *s, const char *host)
{
	struct smtp_tls *t = s->opts->tls;
	struct in6_addr a6;
	int r;

	if (t == NULL) {
		if (s->own_tls == NULL) {
			struct buf err;

			buf_init(&err, 256);
			s->own_tls = smtp_tls_new(NULL, &err);
			if (s->own_tls == NULL)
				log_warn("event=smtp_tls_setup_failed "
				    "error=\"%s\"", buf_str(&err));
			buf_free(&err);
			if (s->own_tls == NULL)
				return -1;
		}
		t = s->own_tls;
	}
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
	return 0;
}

/* One step of the handshake. */
static enum smtp_io
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
		    "error=\"%s\"", s->id, gnutls_strerror(r));
		return SMTP_IO_TLS_ERR;
	}
}

/* Records whether the certificate verifies (for information only). */
static void
smtp_io_tls_check(struct smtp_session *s, const char *host)
{
	struct smtp_tls *t = s->opts->tls != NULL ? s->opts->tls : s->own_tls;
	unsigned status = 0;

	s->info.tls_verified = 0;
	if (t == NULL || !t->have_ca)
		return;
	if (gnutls_certificate_verify_peers3(s->tls, host, &status) == 0 &&
	    status == 0)
		s->info.tls_verified = 1;
}

static void
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

/* ---- state machine ---- */

static const char *
smtp_session_host(const struct smtp_session *s)
{
	if (s->ntargets == 0 || s->next_target == 0)
		return s->nhosts > 0 ? s->hosts[0] : "";
	return s->hosts[s->targets[s->next_target - 1].host];
}

static void
smtp_session_enter(struct smtp_session *s, enum smtp_state st, int64_t now)
{
	log_debug("event=smtp_state session=%u host=%s addr=%s from=%s to=%s",
	    s->id, smtp_session_host(s), s->info.addr,
	    smtp_state_names[s->state], smtp_state_names[st]);
	s->state = st;
	if (st == SMTP_STATE_CONNECT)
		s->stage_deadline = now + s->opts->connect_timeout_ms;
	else if (st != SMTP_STATE_DONE && st != SMTP_STATE_INIT)
		s->stage_deadline = now + s->opts->reply_timeout_ms;
}

static void
smtp_session_finish(struct smtp_session *s, enum smtp_outcome o,
    const struct smtp_reply *r, const char *why, int64_t now)
{
	enum smtp_state at = s->state;

	/* Results complete (QUIT phase): the session's verdict stands. */
	if (at == SMTP_STATE_QUIT)
		o = SMTP_OUTCOME_OK;
	else if (at != SMTP_STATE_INIT)
		s->info.stage = at;
	s->info.outcome = o;
	if (r != NULL)
		smtp_info_set_reply(s, r);
	if (why != NULL && at != SMTP_STATE_QUIT)
		s->info.error = why;
	if (s->fd != -1 && s->state != SMTP_STATE_QUIT &&
	    s->state != SMTP_STATE_CONNECT &&
	    s->state != SMTP_STATE_TLS_HANDSHAKE && o != SMTP_OUTCOME_OK) {
		/* Best effort, never waited for. */
		buf_reset(&s->out);
		s->out_off = 0;
		if (buf_puts(&s->out, "QUIT\r\n") == 0)
			(void)smtp_io_write(s);
	}
	smtp_io_close(s);
	smtp_session_enter(s, SMTP_STATE_DONE, now);
	log_debug("event=smtp_done session=%u host=%s addr=%s outcome=%s "
	    "stage=%s tls=%d pipelining=%d attempts=%zu answered=%zu/%zu "
	    "code=%d enhanced=%s error=\"%s\"", s->id, smtp_session_host(s),
	    s->info.addr, smtp_outcome_names[o],
	    smtp_state_names[s->info.stage], s->info.tls, s->info.pipelining,
	    s->info.attempts, s->answered, s->nrcpt, s->info.code,
	    s->info.enhanced[0] ? s->info.enhanced : "-", s->info.error);
}

/* Which failure of a target says most about the domain. */
static int
smtp_outcome_rank(enum smtp_outcome o)
{
	switch (o) {
	case SMTP_OUTCOME_UNREACHABLE:
		return 1;
	case SMTP_OUTCOME_DISCONNECTED:
		return 2;
	case SMTP_OUTCOME_TIMEOUT:
		return 3;
	case SMTP_OUTCOME_REFUSED_AT_BANNER:
	case SMTP_OUTCOME_BLOCKED:
		return 4;
	default:
		return 5;
	}
}

/* This address failed before the session got anywhere: try the next. */
static void
smtp_session_target_failed(struct smtp_session *s, enum smtp_outcome o,
    const struct smtp_reply *r, const char *why, int64_t now)
{
	log_debug("event=smtp_target_failed session=%u host=%s addr=%s "
	    "stage=%s outcome=%s why=\"%s\"", s->id, smtp_session_host(s),
	    s->info.addr, smtp_state_names[s->state], smtp_outcome_names[o],
	    why);
	if (smtp_outcome_rank(o) > s->fail_rank) {
		s->fail_rank = smtp_outcome_rank(o);
		s->fail = o;
		s->info.stage = s->state;
		s->info.error = why;
		if (r != NULL)
			smtp_info_set_reply(s, r);
	}
	smtp_io_close(s);
	smtp_session_enter(s, SMTP_STATE_INIT, now);
	smtp_session_next_target(s, now);
}

static int
smtp_session_expect(struct smtp_session *s, enum smtp_cmd c, size_t rcpt)
{
	if (s->expect_tail == s->expect_cap)
		return -1;
	s->expect[s->expect_tail] = c;
	s->expect_rcpt[s->expect_tail] = rcpt;
	s->expect_tail++;
	return 0;
}

/* Queues one command line (up to three pieces, NULL for none) and the
 * reply it is due. */
static int
smtp_session_send(struct smtp_session *s, enum smtp_cmd c, size_t rcpt,
    const char *a, const char *b, const char *d)
{
	if (buf_puts(&s->out, a) == -1 ||
	    (b != NULL && buf_puts(&s->out, b) == -1) ||
	    (d != NULL && buf_puts(&s->out, d) == -1) ||
	    buf_puts(&s->out, "\r\n") == -1 ||
	    smtp_session_expect(s, c, rcpt) == -1)
		return -1;
	log_debug("event=smtp_send session=%u cmd=%s rcpt=%zu queued=%zu",
	    s->id, smtp_cmd_names[c], rcpt, s->out.len - s->out_off);
	return 0;
}

static int
smtp_session_send_rcpt(struct smtp_session *s, size_t i)
{
	return smtp_session_send(s, SMTP_CMD_RCPT, i, "RCPT TO:<",
	    s->rcpt[i].rcpt, ">");
}

/* MAIL FROM and, with PIPELINING, every RCPT and QUIT in one flight. */
static void
smtp_session_mail(struct smtp_session *s, int64_t now)
{
	const char *param = ">";
	size_t i;

	if (s->needs_utf8 && (s->info.ext & SMTP_EXT_BIT(SMTP_EXT_SMTPUTF8)))
		param = "> SMTPUTF8";
	if (smtp_session_send(s, SMTP_CMD_MAIL, 0, "MAIL FROM:<",
	    s->opts->mail_from, param) == -1)
		goto fail;
	if (s->info.ext & SMTP_EXT_BIT(SMTP_EXT_PIPELINING)) {
		s->info.pipelining = 1;
		for (i = 0; i < s->nrcpt; i++)
			if (smtp_session_send_rcpt(s, i) == -1)
				goto fail;
		s->next_rcpt = s->nrcpt;
		if (smtp_session_send(s, SMTP_CMD_QUIT, 0, "QUIT", NULL,
		    NULL) == -1)
			goto fail;
	} else
		s->info.pipelining = 0;
	smtp_session_enter(s, SMTP_STATE_MAIL, now);
	return;
fail:
	smtp_session_finish(s, SMTP_OUTCOME_ERROR, NULL, "out of memory", now);
}

static void
smtp_session_ehlo(struct smtp_session *s, int64_t now, enum smtp_state st)
{
	if (smtp_session_send(s, SMTP_CMD_EHLO, 0, "EHLO ",
	    s->opts->helo_name, NULL) == -1)
		smtp_session_finish(s, SMTP_OUTCOME_ERROR, NULL,
		    "out of memory", now);
	else
		smtp_session_enter(s, st, now);
}

static void
smtp_session_tls_begin(struct smtp_session *s, int64_t now)
{
	const char *host = smtp_session_host(s);

	/* Bytes after the 220 came before TLS: never trust them. */
	if (smtp_reply_parser_pending(&s->parser))
		log_debug("event=smtp_starttls_discard session=%u", s->id);
	smtp_reply_parser_reset(&s->parser);
	if (smtp_io_tls_start(s, host) == -1) {
		smtp_session_finish(s, SMTP_OUTCOME_ERROR, NULL,
		    "TLS set-up failed", now);
		return;
	}
	smtp_session_enter(s, SMTP_STATE_TLS_HANDSHAKE, now);
}

/* The handshake advanced: done, still going, or failed. */
static void
smtp_session_handshake(struct smtp_session *s, int64_t now)
{
	enum smtp_io io = smtp_io_handshake(s);

	if (io == SMTP_IO_AGAIN)
		return;
	if (io == SMTP_IO_OK) {
		const char *v = gnutls_protocol_get_name(
		    gnutls_protocol_get_version(s->tls));

		s->info.tls = 1;
		smtp_io_tls_check(s, smtp_session_host(s));
		log_debug("event=smtp_tls session=%u host=%s version=%s "
		    "verified=%d", s->id, smtp_session_host(s),
		    v != NULL ? v : "?", s->info.tls_verified);
		smtp_session_ehlo(s, now, SMTP_STATE_EHLO_TLS);
		return;
	}
	s->tls_failed = 1;
	if (s->opts->tls_fallback && !s->plain_only) {
		/* Same address again, in plain text. */
		log_debug("event=smtp_tls_fallback session=%u host=%s addr=%s",
		    s->id, smtp_session_host(s), s->info.addr);
		s->info.error = "TLS handshake failed";
		smtp_io_close(s);
		s->next_target--;
		s->plain_retry = 1;
		smtp_session_enter(s, SMTP_STATE_INIT, now);
		smtp_session_next_target(s, now);
		return;
	}
	smtp_session_finish(s, SMTP_OUTCOME_TLS_FAILED, NULL,
	    "TLS handshake failed", now);
}

/* MAIL was refused: why. */
static enum smtp_outcome
smtp_session_mail_refused(const struct smtp_session *s,
    const struct smtp_reply *r)
{
	if (r->code / 100 == 5 && !s->info.tls && (r->code == 530 ||
	    smtp_text_has(r->text, "starttls") ||
	    smtp_text_has(r->text, "tls required") ||
	    smtp_text_has(r->text, "requires tls") ||
	    smtp_text_has(r->text, "encryption required")))
		return s->tls_failed ? SMTP_OUTCOME_TLS_FAILED :
		    SMTP_OUTCOME_TLS_REQUIRED;
	/* A 4.7.x without greylisting words is a (temporary) block. */
	if (r->code / 100 == 4)
		return smtp_classify_reply(r) == SMTP_VERDICT_BLOCKED ?
		    SMTP_OUTCOME_BLOCKED : SMTP_OUTCOME_TEMPFAIL;
	return SMTP_OUTCOME_BLOCKED;
}

static void
smtp_session_rcpt_reply(struct smtp_session *s, size_t i,
    const struct smtp_reply *r, int64_t now)
{
	struct smtp_rcpt_result *res = &s->rcpt[i];

	res->code = r->code;
	memcpy(res->enhanced, r->enhanced, sizeof(res->enhanced));
	smtp_str_free(res->text);
	res->text = smtp_reply_copy_text(r);
	res->verdict = smtp_classify_reply(r);
	s->answered++;
	log_debug("event=smtp_rcpt session=%u n=%zu code=%d enhanced=%s "
	    "verdict=%s", s->id, i, r->code, r->enhanced[0] ? r->enhanced :
	    "-", smtp_verdict_names[res->verdict]);
	if (s->answered == s->nrcpt) {
		/* Every RCPT answered: the outcome is known. */
		s->info.outcome = SMTP_OUTCOME_OK;
		s->info.stage = SMTP_STATE_RCPT;
		if (!s->info.pipelining && smtp_session_send(s, SMTP_CMD_QUIT,
		    0, "QUIT", NULL, NULL) == -1) {
			smtp_session_finish(s, SMTP_OUTCOME_ERROR, NULL,
			    "out of memory", now);
			return;
		}
		smtp_session_enter(s, SMTP_STATE_QUIT, now);
		return;
	}
	if (!s->info.pipelining && s->next_rcpt < s->nrcpt) {
		if (smtp_session_send_rcpt(s, s->next_rcpt++) == -1)
			smtp_session_finish(s, SMTP_OUTCOME_ERROR, NULL,
			    "out of memory", now);
	}
}

/* One complete reply: what it answers decides what comes next. */
static void
smtp_session_reply(struct smtp_session *s, const struct smtp_reply *r,
    int64_t now)
{
	enum smtp_cmd c;
	size_t ri;
	int cls = r->code / 100;

	if (s->expect_head == s->expect_tail) {
		smtp_session_finish(s, SMTP_OUTCOME_PROTOCOL_ERROR, r,
		    "reply to no command", now);
		return;
	}
	c = s->expect[s->expect_head];
	ri = s->expect_rcpt[s->expect_head];
	s->expect_head++;
	log_debug("event=smtp_reply session=%u state=%s to=%s code=%d "
	    "enhanced=%s lines=%zu", s->id, smtp_state_names[s->state],
	    smtp_cmd_names[c], r->code, r->enhanced[0] ? r->enhanced : "-",
	    r->lines);
	/* A fresh per-reply timer for the replies still due. */
	s->stage_deadline = now + s->opts->reply_timeout_ms;

	/* 421 at any point but the greeting: the server is closing. */
	if (r->code == 421 && c != SMTP_CMD_GREETING) {
		smtp_session_finish(s, SMTP_OUTCOME_TEMPFAIL, r,
		    "421 service closing", now);
		return;
	}
	switch (c) {
	case SMTP_CMD_GREETING:
		if (cls == 2) {
			smtp_session_ehlo(s, now, SMTP_STATE_EHLO);
			return;
		}
		smtp_session_target_failed(s, cls == 5 &&
		    smtp_classify_reply(r) == SMTP_VERDICT_BLOCKED ?
		    SMTP_OUTCOME_BLOCKED : SMTP_OUTCOME_REFUSED_AT_BANNER, r,
		    "greeting refused", now);
		return;
	case SMTP_CMD_EHLO:
		if (cls == 2) {
			struct smtp_ehlo e;

			memset(&e, 0, sizeof(e));
			(void)smtp_reply_ehlo(r, &e);
			s->info.ext = e.ext;
			s->info.helo = 0;
			if (s->state == SMTP_STATE_EHLO)
				s->info.starttls_offered = (e.ext &
				    SMTP_EXT_BIT(SMTP_EXT_STARTTLS)) != 0;
			if (s->state == SMTP_STATE_EHLO &&
			    s->info.starttls_offered && s->opts->starttls &&
			    !s->plain_only) {
				if (smtp_session_send(s, SMTP_CMD_STARTTLS, 0,
				    "STARTTLS", NULL, NULL) == -1)
					smtp_session_finish(s,
					    SMTP_OUTCOME_ERROR, NULL,
					    "out of memory", now);
				else
					smtp_session_enter(s,
					    SMTP_STATE_STARTTLS, now);
				return;
			}
			smtp_session_mail(s, now);
			return;
		}
		if (s->state == SMTP_STATE_EHLO_TLS) {
			smtp_session_finish(s, cls == 4 ?
			    SMTP_OUTCOME_TEMPFAIL : SMTP_OUTCOME_BLOCKED, r,
			    "EHLO after STARTTLS refused", now);
			return;
		}
		/* EHLO refused: HELO (RFC 5321 4.1.4). */
		if (smtp_session_send(s, SMTP_CMD_HELO, 0, "HELO ",
		    s->opts->helo_name, NULL) == -1)
			smtp_session_finish(s, SMTP_OUTCOME_ERROR, NULL,
			    "out of memory", now);
		else
			smtp_session_enter(s, SMTP_STATE_HELO, now);
		return;
	case SMTP_CMD_HELO:
		if (cls == 2) {
			s->info.helo = 1;
			s->info.ext = 0;
			smtp_session_mail(s, now);
			return;
		}
		smtp_session_finish(s, cls == 4 ? SMTP_OUTCOME_TEMPFAIL :
		    SMTP_OUTCOME_BLOCKED, r, "HELO refused", now);
		return;
	case SMTP_CMD_STARTTLS:
		if (r->code == 220) {
			smtp_session_tls_begin(s, now);
			return;
		}
		/* Offered but refused (454): go on in plain text. */
		log_debug("event=smtp_starttls_refused session=%u code=%d",
		    s->id, r->code);
		smtp_session_mail(s, now);
		return;
	case SMTP_CMD_MAIL:
		if (cls == 2) {
			if (!s->info.pipelining && s->nrcpt > 0) {
				s->next_rcpt = 0;
				if (smtp_session_send_rcpt(s,
				    s->next_rcpt++) == -1) {
					smtp_session_finish(s,
					    SMTP_OUTCOME_ERROR, NULL,
					    "out of memory", now);
					return;
				}
			}
			smtp_session_enter(s, SMTP_STATE_RCPT, now);
			return;
		}
		smtp_session_finish(s, smtp_session_mail_refused(s, r), r,
		    "MAIL refused", now);
		return;
	case SMTP_CMD_RCPT:
		smtp_session_rcpt_reply(s, ri, r, now);
		return;
	case SMTP_CMD_QUIT:
		smtp_session_finish(s, SMTP_OUTCOME_OK, r, NULL, now);
		return;
	case SMTP_CMD__MAX:
		break;
	}
	smtp_session_finish(s, SMTP_OUTCOME_ERROR, r, "internal", now);
}

/* The connection ended (EOF, reset or a fatal TLS error). */
static void
smtp_session_lost(struct smtp_session *s, enum smtp_io io, int64_t now)
{
	const char *why = io == SMTP_IO_TLS_ERR ? "TLS error" :
	    "connection closed";

	switch (s->state) {
	case SMTP_STATE_BANNER:
		smtp_session_target_failed(s, SMTP_OUTCOME_DISCONNECTED, NULL,
		    "closed before the greeting", now);
		return;
	case SMTP_STATE_QUIT:
		smtp_session_finish(s, SMTP_OUTCOME_OK, NULL, NULL, now);
		return;
	default:
		smtp_session_finish(s, io == SMTP_IO_TLS_ERR ?
		    SMTP_OUTCOME_TLS_FAILED : SMTP_OUTCOME_DISCONNECTED, NULL,
		    why, now);
	}
}

/* Connects to the next usable address, or finishes with the best failure
 * when none is left. */
static void
smtp_session_next_target(struct smtp_session *s, int64_t now)
{
	const struct smtp_target *t;
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	socklen_t sl;
	int fd;

	while (s->next_target < s->ntargets) {
		if (s->deadline != 0 && now >= s->deadline)
			break;
		t = &s->targets[s->next_target++];
		/* plain_only lasts for one retry of the same address. */
		s->plain_only = s->plain_retry;
		s->plain_retry = 0;
		snprintf(s->info.addr, sizeof(s->info.addr), "%s", t->addr.text);
		s->info.host = s->hosts[t->host];
		s->info.attempts++;
		s->info.tls = 0;
		s->info.tls_verified = 0;
		s->info.pipelining = 0;
		s->info.helo = 0;
		s->info.ext = 0;
		s->conn++;
		memset(&ss, 0, sizeof(ss));
		if (t->addr.ip.family == 6) {
			sin6->sin6_family = AF_INET6;
			sin6->sin6_port = htons((uint16_t)s->opts->port);
			memcpy(&sin6->sin6_addr, t->addr.ip.addr, 16);
			sl = sizeof(*sin6);
		} else {
			sin->sin_family = AF_INET;
			sin->sin_port = htons((uint16_t)s->opts->port);
			if (inet_pton(AF_INET, t->addr.text,
			    &sin->sin_addr) != 1)
				memcpy(&sin->sin_addr, t->addr.ip.addr, 4);
			sl = sizeof(*sin);
		}
		fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, 0);
		if (fd == -1) {
			log_warn("event=smtp_socket_failed errno=%d", errno);
			smtp_session_finish(s, SMTP_OUTCOME_ERROR, NULL,
			    "socket() failed", now);
			return;
		}
		/* SMTP is a conversation of short writes: without NODELAY the
		 * end of the TLS handshake and the EHLO that follows wait for
		 * a delayed ACK (about 40 ms each, measured in bench-verify). */
		{
			int one = 1;
			(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
			    sizeof(one));
		}
		s->fd = fd;
		s->expect_head = s->expect_tail = 0;
		(void)smtp_session_expect(s, SMTP_CMD_GREETING, 0);
		if (connect(fd, (struct sockaddr *)&ss, sl) == 0) {
			smtp_session_enter(s, SMTP_STATE_BANNER, now);
			return;
		}
		if (errno == EINPROGRESS) {
			smtp_session_enter(s, SMTP_STATE_CONNECT, now);
			return;
		}
		log_debug("event=smtp_connect_failed session=%u host=%s "
		    "addr=%s errno=%d", s->id, s->info.host, s->info.addr,
		    errno);
		smtp_session_target_failed(s, SMTP_OUTCOME_UNREACHABLE, NULL,
		    "connect failed", now);
		return;
	}
	if (s->deadline != 0 && now >= s->deadline && s->info.attempts > 0)
		smtp_session_finish(s, SMTP_OUTCOME_TIMEOUT, NULL,
		    "deadline passed", now);
	else if (s->fail_rank > 0)
		smtp_session_finish(s, s->fail, NULL, NULL, now);
	else if (s->info.refused_private > 0)
		smtp_session_finish(s, SMTP_OUTCOME_PRIVATE_ADDRESS, NULL,
		    "every MX address is private", now);
	else
		smtp_session_finish(s, SMTP_OUTCOME_UNREACHABLE, NULL,
		    "no MX address", now);
}

/* ---- construction ---- */

static int
smtp_session_add_host(struct smtp_session *s, const char *host,
    const struct dns_addrs *a)
{
	struct smtp_target *t;
	char **h;
	size_t i, cap;

	if (host == NULL || strlen(host) > DNS_NAME_MAX)
		return -1;
	h = realloc(s->hosts, (s->nhosts + 1) * sizeof(*h));
	if (h == NULL)
		return -1;
	s->hosts = h;
	if ((h[s->nhosts] = strdup(host)) == NULL)
		return -1;
	s->nhosts++;
	if (a == NULL || a->status != DNS_OK || a->n == 0)
		return 0;
	/* Sized to what is given: a worker keeps thousands of sessions. */
	t = realloc(s->targets, (s->ntargets + (a->n < DNS_MAX_ADDRS ? a->n :
	    DNS_MAX_ADDRS)) * sizeof(*t));
	if (t == NULL)
		return -1;
	s->targets = t;
	for (i = 0; i < a->n && i < DNS_MAX_ADDRS; i++) {
		cap = s->opts->max_addrs;
		if (!s->opts->allow_private_mx &&
		    ipnet_is_private(&a->addr[i].ip)) {
			log_debug("event=smtp_private_mx_refused session=%u "
			    "host=%s addr=%s", s->id, host, a->addr[i].text);
			s->info.refused_private++;
			continue;
		}
		if ((cap != 0 && s->ntargets >= cap) ||
		    s->ntargets >= SMTP_TARGETS_MAX)
			break;
		s->targets[s->ntargets].host = s->nhosts - 1;
		s->targets[s->ntargets].addr = a->addr[i];
		s->ntargets++;
	}
	return 0;
}

static struct smtp_session *
smtp_session_alloc(const struct smtp_opts *o, const char *const *rcpts,
    size_t n)
{
	struct smtp_session *s;
	size_t i;

	if (o == NULL || n == 0 || n > SMTP_RCPT_MAX || rcpts == NULL ||
	    o->port == 0 || o->port > 65535 ||
	    !smtp_arg_valid(o->helo_name, DNS_NAME_MAX, 0) ||
	    !smtp_arg_valid(o->mail_from, SMTP_ADDRESS_MAX, 1))
		return NULL;
	for (i = 0; i < n; i++)
		if (!smtp_arg_valid(rcpts[i], SMTP_ADDRESS_MAX, 0))
			return NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	s->id = __atomic_add_fetch(&smtp_session_ids, 1, __ATOMIC_RELAXED);
	s->opts = o;
	s->fd = -1;
	s->state = SMTP_STATE_INIT;
	s->info.text = smtp_empty;
	s->info.error = "";
	s->info.host = "";
	s->info.outcome = SMTP_OUTCOME_ERROR;
	smtp_reply_parser_init(&s->parser);
	buf_init(&s->out, SMTP_OUT_MAX);
	s->expect_cap = n + 8;
	s->expect = calloc(s->expect_cap, sizeof(*s->expect));
	s->expect_rcpt = calloc(s->expect_cap, sizeof(*s->expect_rcpt));
	s->rcpt = calloc(n, sizeof(*s->rcpt));
	if (s->expect == NULL || s->expect_rcpt == NULL || s->rcpt == NULL)
		goto fail;
	s->nrcpt = n;
	for (i = 0; i < n; i++) {
		s->rcpt[i].text = smtp_empty;
		s->rcpt[i].verdict = SMTP_VERDICT_UNKNOWN;
		if ((s->rcpt[i].rcpt = strdup(rcpts[i])) == NULL)
			goto fail;
		if (smtp_has_8bit(rcpts[i]))
			s->needs_utf8 = 1;
	}
	if (smtp_has_8bit(o->mail_from))
		s->needs_utf8 = 1;
	if (o->deadline_ms > 0)
		s->deadline = timeutil_mono_ms() + o->deadline_ms;
	return s;
fail:
	smtp_session_free(s);
	return NULL;
}

/* The first connection is started at once. */
static struct smtp_session *
smtp_session_start(struct smtp_session *s)
{
	int64_t now = timeutil_mono_ms();

	log_debug("event=smtp_session session=%u host=%s targets=%zu "
	    "refused_private=%zu rcpts=%zu", s->id,
	    s->nhosts > 0 ? s->hosts[0] : "", s->ntargets,
	    s->info.refused_private, s->nrcpt);
	smtp_session_next_target(s, now);
	return s;
}

struct smtp_session *
smtp_session_new(const struct smtp_opts *o, const char *mx_host,
    const struct dns_addrs *a, const char *const *rcpts, size_t n)
{
	struct smtp_session *s;

	if (a == NULL || (s = smtp_session_alloc(o, rcpts, n)) == NULL)
		return NULL;
	if (smtp_session_add_host(s, mx_host, a) == -1) {
		smtp_session_free(s);
		return NULL;
	}
	return smtp_session_start(s);
}

struct smtp_session *
smtp_session_new_mx(const struct smtp_opts *o, const struct dns_mx_result *mx,
    const char *const *rcpts, size_t n)
{
	struct smtp_session *s;
	size_t i;

	if (mx == NULL || (s = smtp_session_alloc(o, rcpts, n)) == NULL)
		return NULL;
	for (i = 0; mx->status == DNS_OK && i < mx->nhosts; i++)
		if (smtp_session_add_host(s, mx->hosts[i].name,
		    &mx->hosts[i].addrs) == -1) {
			smtp_session_free(s);
			return NULL;
		}
	return smtp_session_start(s);
}

void
smtp_session_free(struct smtp_session *s)
{
	size_t i;

	if (s == NULL)
		return;
	smtp_io_close(s);
	smtp_reply_parser_free(&s->parser);
	buf_free(&s->out);
	for (i = 0; s->rcpt != NULL && i < s->nrcpt; i++) {
		free((char *)s->rcpt[i].rcpt);
		smtp_str_free(s->rcpt[i].text);
	}
	for (i = 0; i < s->nhosts; i++)
		free(s->hosts[i]);
	free(s->hosts);
	free(s->rcpt);
	free(s->targets);
	free(s->expect);
	free(s->expect_rcpt);
	smtp_str_free(s->info.text);
	smtp_tls_free(s->own_tls);
	free(s);
}

/* ---- driver ---- */

int
smtp_session_poll(const struct smtp_session *s, int *fd, short *events,
    int64_t *deadline_ms)
{
	int64_t d;

	if (s->state == SMTP_STATE_DONE)
		return 0;
	d = s->stage_deadline;
	if (s->deadline != 0 && s->deadline < d)
		d = s->deadline;
	*deadline_ms = d;
	*fd = s->fd;
	switch (s->state) {
	case SMTP_STATE_CONNECT:
		*events = POLLOUT;
		break;
	case SMTP_STATE_TLS_HANDSHAKE:
		*events = s->io_events != 0 ? s->io_events : POLLIN;
		break;
	default:
		*events = POLLIN;
		if (s->out_off < s->out.len)
			*events |= s->tls != NULL && s->tls_wpending ?
			    s->io_events : POLLOUT;
		break;
	}
	return 1;
}

/* Reads and handles every reply that is there. */
static void
smtp_session_input(struct smtp_session *s, int64_t now)
{
	char rb[SMTP_READ_CHUNK];
	struct smtp_reply r;
	enum smtp_reply_status st;
	enum smtp_io io;
	unsigned conn = s->conn;
	size_t got, off, used;

	for (;;) {
		io = smtp_io_read(s, rb, sizeof(rb), &got);
		if (io == SMTP_IO_AGAIN)
			return;
		if (io != SMTP_IO_OK) {
			/* A last line without CRLF still counts. */
			memset(&r, 0, sizeof(r));
			if (io == SMTP_IO_EOF &&
			    smtp_reply_parser_finish(&s->parser, &r) ==
			    SMTP_REPLY_OK) {
				smtp_session_reply(s, &r, now);
				smtp_reply_free(&r);
				if (s->conn != conn ||
				    s->state == SMTP_STATE_DONE)
					return;
			}
			smtp_session_lost(s, io, now);
			return;
		}
		for (off = 0; off < got; off += used) {
			memset(&r, 0, sizeof(r));
			st = smtp_reply_parser_feed(&s->parser, rb + off,
			    got - off, &used, &r);
			if (st == SMTP_REPLY_MORE)
				break;
			if (st != SMTP_REPLY_OK) {
				log_debug("event=smtp_bad_reply session=%u "
				    "error=%s", s->id,
				    smtp_reply_status_names[st]);
				if (s->state == SMTP_STATE_QUIT)
					smtp_session_finish(s,
					    SMTP_OUTCOME_OK, NULL, NULL, now);
				else
					smtp_session_finish(s,
					    SMTP_OUTCOME_PROTOCOL_ERROR, NULL,
					    smtp_reply_status_names[st], now);
				return;
			}
			smtp_session_reply(s, &r, now);
			smtp_reply_free(&r);
			if (s->conn != conn || s->state == SMTP_STATE_DONE ||
			    s->state == SMTP_STATE_INIT)
				return;
			if (s->state == SMTP_STATE_TLS_HANDSHAKE) {
				if (off + used < got)
					log_debug("event=smtp_starttls_discard "
					    "session=%u bytes=%zu", s->id,
					    got - off - used);
				smtp_session_handshake(s, now);
				return;
			}
		}
	}
}

/* Sends what is queued; 0 if the session may go on. */
static int
smtp_session_output(struct smtp_session *s, int64_t now)
{
	enum smtp_io io;

	if (s->out_off >= s->out.len)
		return 0;
	io = smtp_io_write(s);
	if (io == SMTP_IO_OK || io == SMTP_IO_AGAIN)
		return 0;
	log_debug("event=smtp_write_failed session=%u io=%s", s->id,
	    smtp_io_names[io]);
	smtp_session_lost(s, io, now);
	return -1;
}

static void
smtp_session_timeout(struct smtp_session *s, int64_t now)
{
	if (s->deadline != 0 && now >= s->deadline) {
		smtp_session_finish(s, SMTP_OUTCOME_TIMEOUT, NULL,
		    "deadline passed", now);
		return;
	}
	switch (s->state) {
	case SMTP_STATE_CONNECT:
		smtp_session_target_failed(s, SMTP_OUTCOME_UNREACHABLE, NULL,
		    "connect timeout", now);
		return;
	case SMTP_STATE_BANNER:
		smtp_session_target_failed(s, SMTP_OUTCOME_TIMEOUT, NULL,
		    "greeting timeout", now);
		return;
	default:
		smtp_session_finish(s, SMTP_OUTCOME_TIMEOUT, NULL,
		    "reply timeout", now);
	}
}

int
smtp_session_step(struct smtp_session *s, short revents, int64_t now)
{
	unsigned conn = s->conn;
	int err = 0;
	socklen_t len = sizeof(err);

	if (s->state == SMTP_STATE_DONE)
		return 0;
	if (s->state == SMTP_STATE_CONNECT) {
		if (revents & (POLLOUT | POLLERR | POLLHUP)) {
			if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err,
			    &len) == -1)
				err = errno;
			if (err != 0) {
				log_debug("event=smtp_connect_failed "
				    "session=%u host=%s addr=%s errno=%d",
				    s->id, s->info.host, s->info.addr, err);
				smtp_session_target_failed(s,
				    SMTP_OUTCOME_UNREACHABLE, NULL,
				    "connection refused", now);
				goto check;
			}
			smtp_session_enter(s, SMTP_STATE_BANNER, now);
		}
		goto check;
	}
	if (s->state == SMTP_STATE_TLS_HANDSHAKE) {
		smtp_session_handshake(s, now);
		goto check;
	}
	if (smtp_session_output(s, now) == -1)
		return s->state != SMTP_STATE_DONE;
	if (s->conn != conn || s->state == SMTP_STATE_DONE)
		goto check;
	smtp_session_input(s, now);
	if (s->state != SMTP_STATE_DONE && s->state != SMTP_STATE_CONNECT &&
	    s->state != SMTP_STATE_TLS_HANDSHAKE)
		(void)smtp_session_output(s, now);
check:
	if (s->state != SMTP_STATE_DONE && (now >= s->stage_deadline ||
	    (s->deadline != 0 && now >= s->deadline)))
		smtp_session_timeout(s, now);
	/* target_failed may have moved on to a connection that is ready. */
	return s->state != SMTP_STATE_DONE;
}

int
smtp_session_done(const struct smtp_session *s)
{
	return s->state == SMTP_STATE_DONE;
}

const struct smtp_session_info *
smtp_session_info(const struct smtp_session *s)
{
	return &s->info;
}

size_t
smtp_session_nrcpt(const struct smtp_session *s)
{
	return s->nrcpt;
}

const struct smtp_rcpt_result *
smtp_session_rcpt(const struct smtp_session *s, size_t i)
{
	return i < s->nrcpt ? &s->rcpt[i] : NULL;
}

enum smtp_outcome
smtp_probe(const struct smtp_opts *o, const char *mx_host,
    const struct dns_addrs *a, const char *const *rcpts, size_t n,
    struct smtp_session **out)
{
	struct smtp_session *s;
	struct pollfd pfd;
	int64_t deadline, now;
	int r, wait;

	*out = NULL;
	if ((s = smtp_session_new(o, mx_host, a, rcpts, n)) == NULL)
		return SMTP_OUTCOME_ERROR;
	while (smtp_session_poll(s, &pfd.fd, &pfd.events, &deadline)) {
		now = timeutil_mono_ms();
		wait = deadline <= now ? 0 : deadline - now > 60000 ? 60000 :
		    (int)(deadline - now);
		pfd.revents = 0;
		r = poll(&pfd, 1, wait);
		if (r == -1 && errno != EINTR) {
			smtp_session_finish(s, SMTP_OUTCOME_ERROR, NULL,
			    "poll failed", timeutil_mono_ms());
			break;
		}
		smtp_session_step(s, r > 0 ? pfd.revents : 0, timeutil_mono_ms());
	}
	*out = s;
	return s->info.outcome;
}

int
smtp_random_local(char *b, size_t size)
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char rnd[16];
	size_t i;

	if (size < sizeof(rnd) + 1 ||
	    getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return -1;
	for (i = 0; i < sizeof(rnd); i++)
		b[i] = set[rnd[i] % (i == 0 ? 26 : 36)];
	b[i] = '\0';
	return 0;
}
