/* smtp_session.c: the SMTP client's state machine, read as OpenSMTPD's
 * mta_session.c reads. Entering a state does what the state demands
 * (smtp_session_enter: EHLO, HELO, STARTTLS, the start of TLS, MAIL with
 * every RCPT and QUIT in one flight under PIPELINING, else the first RCPT,
 * RSET before a later transaction on the same connection, QUIT) and logs
 * the transition at debug level (session id, from and to);
 * a reply, matched to the command it answers, decides the next state
 * (smtp_session_reply). Also: the choice of the next address to connect to,
 * the end of a session (smtp_session_finish, with the best failure among
 * the addresses tried), and the I/O steps the driver in smtp.c calls
 * (input, output, timeout). Bytes come and go through smtp_io.c; replies
 * are parsed by smtp_reply.c and RCPT verdicts come from smtp_classify.c.
 * The client never sends DATA: after RCPT it sends QUIT. */
#include "engine/smtp_session.h"
#include "util/log.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const smtp_session_cmd_names[SMTP_CMD__MAX] = {
	[SMTP_CMD_GREETING] = "greeting",
	[SMTP_CMD_EHLO] = "EHLO",
	[SMTP_CMD_HELO] = "HELO",
	[SMTP_CMD_STARTTLS] = "STARTTLS",
	[SMTP_CMD_RSET] = "RSET",
	[SMTP_CMD_MAIL] = "MAIL",
	[SMTP_CMD_RCPT] = "RCPT",
	[SMTP_CMD_QUIT] = "QUIT",
};

/* One-line, length-capped copy of a reply's text; smtp_empty on failure. */
static char *
smtp_session_reply_text(const struct smtp_reply *r)
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

/* Whether text contains word (ASCII, case-insensitive). */
static int
smtp_session_text_has(const char *text, const char *word)
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
smtp_session_set_reply(struct smtp_session *s, const struct smtp_reply *r)
{
	if (r == NULL)
		return;
	smtp_str_free(s->info.text);
	s->info.code = r->code;
	memcpy(s->info.enhanced, r->enhanced, sizeof(s->info.enhanced));
	s->info.text = smtp_session_reply_text(r);
}

/* ---- commands ---- */

static const char *
smtp_session_host(const struct smtp_session *s)
{
	if (s->ntargets == 0 || s->next_target == 0)
		return s->nhosts > 0 ? s->hosts[0] : "";
	return s->hosts[s->targets[s->next_target - 1].host];
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
	    s->id, smtp_session_cmd_names[c], rcpt, s->out.len - s->out_off);
	return 0;
}

static int
smtp_session_send_quit(struct smtp_session *s)
{
	s->quit_sent = 1;
	return smtp_session_send(s, SMTP_CMD_QUIT, 0, "QUIT", NULL, NULL);
}

static int
smtp_session_send_rcpt(struct smtp_session *s, size_t i)
{
	return smtp_session_send(s, SMTP_CMD_RCPT, i, "RCPT TO:<",
	    s->rcpt[i].rcpt, ">");
}

/* MAIL FROM and, with PIPELINING, every RCPT (and QUIT after the last
 * transaction) in one flight. */
static int
smtp_session_send_mail(struct smtp_session *s)
{
	const char *param = ">";
	size_t i;

	s->pending = 0;
	s->mail_sent = 1;
	if (s->needs_utf8 && (s->info.ext & SMTP_EXT_BIT(SMTP_EXT_SMTPUTF8)))
		param = "> SMTPUTF8";
	if (smtp_session_send(s, SMTP_CMD_MAIL, 0, "MAIL FROM:<",
	    s->opts->mail_from, param) == -1)
		return -1;
	if (s->info.ext & SMTP_EXT_BIT(SMTP_EXT_PIPELINING)) {
		s->info.pipelining = 1;
		for (i = 0; i < s->nrcpt; i++)
			if (smtp_session_send_rcpt(s, i) == -1)
				return -1;
		s->next_rcpt = s->nrcpt;
		if (s->last && smtp_session_send_quit(s) == -1)
			return -1;
	} else
		s->info.pipelining = 0;
	return 0;
}

/* STARTTLS was accepted: TLS starts on the socket. NULL, or why not. */
static const char *
smtp_session_tls_begin(struct smtp_session *s)
{
	const char *host = smtp_session_host(s);

	/* Bytes after the 220 came before TLS: never trust them. */
	if (smtp_reply_parser_pending(&s->parser))
		log_debug("event=smtp_starttls_discard session=%u", s->id);
	smtp_reply_parser_reset(&s->parser);
	if (smtp_io_tls_start(s, host) == -1)
		return "TLS set-up failed";
	return NULL;
}

/* ---- states ---- */

/* What entering st demands, done before the session is in st (so that a
 * failure ends it where it was): its command, or the start of TLS. NULL,
 * or why it could not be done. INIT, CONNECT and BANNER demand nothing
 * here (smtp_session_next_target connects), DONE neither
 * (smtp_session_finish closes). */
static const char *
smtp_session_enter_do(struct smtp_session *s, enum smtp_state st)
{
	switch (st) {
	case SMTP_STATE_EHLO:
	case SMTP_STATE_EHLO_TLS:
		if (smtp_session_send(s, SMTP_CMD_EHLO, 0, "EHLO ",
		    s->opts->helo_name, NULL) == -1)
			return "out of memory";
		return NULL;
	case SMTP_STATE_HELO:
		if (smtp_session_send(s, SMTP_CMD_HELO, 0, "HELO ",
		    s->opts->helo_name, NULL) == -1)
			return "out of memory";
		return NULL;
	case SMTP_STATE_STARTTLS:
		if (smtp_session_send(s, SMTP_CMD_STARTTLS, 0, "STARTTLS",
		    NULL, NULL) == -1)
			return "out of memory";
		return NULL;
	case SMTP_STATE_TLS_HANDSHAKE:
		return smtp_session_tls_begin(s);
	case SMTP_STATE_RSET:
		/* With PIPELINING, the transaction goes with it. */
		if (smtp_session_send(s, SMTP_CMD_RSET, 0, "RSET", NULL,
		    NULL) == -1 || ((s->info.ext &
		    SMTP_EXT_BIT(SMTP_EXT_PIPELINING)) &&
		    smtp_session_send_mail(s) == -1))
			return "out of memory";
		return NULL;
	case SMTP_STATE_MAIL:
		if (!s->mail_sent && smtp_session_send_mail(s) == -1)
			return "out of memory";
		return NULL;
	case SMTP_STATE_RCPT:
		/* Without PIPELINING, one RCPT at a time. */
		if (!s->info.pipelining && s->nrcpt > 0) {
			s->next_rcpt = 0;
			if (smtp_session_send_rcpt(s, s->next_rcpt++) == -1)
				return "out of memory";
		}
		return NULL;
	case SMTP_STATE_QUIT:
		/* With PIPELINING, QUIT went with the RCPTs. */
		if (!s->quit_sent && smtp_session_send_quit(s) == -1)
			return "out of memory";
		return NULL;
	case SMTP_STATE_READY:
	case SMTP_STATE_INIT:
	case SMTP_STATE_CONNECT:
	case SMTP_STATE_PROXY:
	case SMTP_STATE_BANNER:
	case SMTP_STATE_DONE:
	case SMTP_STATE__MAX:
		break;
	}
	return NULL;
}

/* The one place the state changes: one debug line per transition. */
void
smtp_session_enter(struct smtp_session *s, enum smtp_state st, int64_t now)
{
	const char *why;

	if ((why = smtp_session_enter_do(s, st)) != NULL) {
		smtp_session_finish(s, SMTP_OUTCOME_ERROR, NULL, why, now);
		return;
	}
	log_debug("event=smtp_state session=%u host=%s addr=%s from=%s to=%s",
	    s->id, smtp_session_host(s), s->info.addr,
	    smtp_state_names[s->state], smtp_state_names[st]);
	s->state = st;
	if (st == SMTP_STATE_CONNECT)
		s->stage_deadline = now + s->opts->connect_timeout_ms;
	else if (st == SMTP_STATE_PROXY)	/* the proxy connects too */
		s->stage_deadline = now + s->opts->connect_timeout_ms +
		    s->opts->reply_timeout_ms;
	else if (st != SMTP_STATE_DONE && st != SMTP_STATE_INIT)
		s->stage_deadline = now + s->opts->reply_timeout_ms;
}

void
smtp_session_begin(struct smtp_session *s, int64_t now)
{
	smtp_session_enter(s, s->pending ? SMTP_STATE_MAIL : SMTP_STATE_READY,
	    now);
}

void
smtp_session_finish(struct smtp_session *s, enum smtp_outcome o,
    const struct smtp_reply *r, const char *why, int64_t now)
{
	enum smtp_state at = s->state;

	/* Results complete (QUIT phase, or READY between transactions): the
	 * session's verdict stands. */
	if (at == SMTP_STATE_QUIT || at == SMTP_STATE_READY)
		o = SMTP_OUTCOME_OK;
	else if (at != SMTP_STATE_INIT)
		s->info.stage = at;
	s->info.outcome = o;
	if (r != NULL)
		smtp_session_set_reply(s, r);
	if (why != NULL && o != SMTP_OUTCOME_OK)
		s->info.error = why;
	if (s->fd != -1 && s->state != SMTP_STATE_QUIT &&
	    s->state != SMTP_STATE_CONNECT && s->state != SMTP_STATE_PROXY &&
	    s->state != SMTP_STATE_TLS_HANDSHAKE && o != SMTP_OUTCOME_OK) {
		/* Best effort, never waited for. */
		buf_reset(&s->out);
		s->out_off = 0;
		if (buf_puts(&s->out, "QUIT\r\n") == 0)
			(void)smtp_io_write(s);
	}
	smtp_io_close(s);
	smtp_session_enter(s, SMTP_STATE_DONE, now);
	log_debug("event=smtp_done session=%u host=%s addr=%s route=%s "
	    "outcome=%s "
	    "stage=%s tls=%d pipelining=%d attempts=%zu answered=%zu/%zu "
	    "code=%d enhanced=%s error=\"%s\"", s->id, smtp_session_host(s),
	    s->info.addr, s->info.route, smtp_outcome_names[o],
	    smtp_state_names[s->info.stage], s->info.tls, s->info.pipelining,
	    s->info.attempts, s->answered, s->nrcpt, s->info.code,
	    s->info.enhanced[0] ? s->info.enhanced : "-", s->info.error);
}

/* Which failure of a target says most about the domain. */
static int
smtp_session_outcome_rank(enum smtp_outcome o)
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
void
smtp_session_target_failed(struct smtp_session *s, enum smtp_outcome o,
    const struct smtp_reply *r, const char *why, int64_t now)
{
	log_debug("event=smtp_target_failed session=%u host=%s addr=%s "
	    "stage=%s outcome=%s why=\"%s\"", s->id, smtp_session_host(s),
	    s->info.addr, smtp_state_names[s->state], smtp_outcome_names[o],
	    why);
	if (smtp_session_outcome_rank(o) > s->fail_rank) {
		s->fail_rank = smtp_session_outcome_rank(o);
		s->fail = o;
		s->info.stage = s->state;
		s->info.error = why;
		if (r != NULL)
			smtp_session_set_reply(s, r);
	}
	smtp_io_close(s);
	smtp_session_enter(s, SMTP_STATE_INIT, now);
	smtp_session_next_target(s, now);
}

void
smtp_session_route_failed(struct smtp_session *s, const char *why,
    int64_t now)
{
	const struct egress *e = s->opts->egress;
	uint32_t set = s->opts->routes;
	size_t i, n = e != NULL && e->n > 0 ? e->n : 1, usable = 0;

	for (i = 0; i < n; i++)
		usable += egress_in(set, i);
	if (usable == 0) {
		set = 0;
		usable = n;
	}
	if (s->route_quiet)
		log_debug("event=egress_route_skipped session=%u route=%s "
		    "host=%s addr=%s why=\"%s\"", s->id, s->info.route,
		    smtp_session_host(s), s->info.addr, why);
	else {
		log_warn("event=egress_route_failed session=%u route=%s "
		    "host=%s addr=%s why=\"%s\"", s->id, s->info.route,
		    smtp_session_host(s), s->info.addr, why);
		s->info.route_failures++;
		if (e != NULL && s->route % n < 32 &&
		    e->r[s->route % n].kind == EGRESS_SOCKS5) {
			s->info.proxy_failed |= UINT32_C(1) << (s->route % n);
			s->info.proxy_why = why;
		}
	}
	s->route_quiet = 0;
	smtp_io_close(s);
	/* the next route of the set (a pinned provider's: opts->routes) */
	do
		s->route = (s->route + 1) % n;
	while (!egress_in(set, s->route));
	/* routes marked down are passed over while another one is up */
	while (s->route_tries + 1 < usable &&
	    egress_avoid_in(e, s->route, now, set)) {
		do
			s->route = (s->route + 1) % n;
		while (!egress_in(set, s->route));
		s->route_tries++;
	}
	if (++s->route_tries < usable && (s->deadline == 0 ||
	    now < s->deadline)) {
		/* the same address by the next route */
		s->next_target--;
		s->route_retry = 1;
		smtp_session_enter(s, SMTP_STATE_INIT, now);
		smtp_session_next_target(s, now);
		return;
	}
	smtp_session_target_failed(s, SMTP_OUTCOME_UNREACHABLE, NULL,
	    usable > 1 ? "every egress route failed" : why, now);
}

void
smtp_session_connected(struct smtp_session *s, int64_t now)
{
	const struct egress_route *rt = smtp_io_route(s);

	if (rt != NULL && rt->kind == EGRESS_SOCKS5) {
		smtp_session_enter(s, SMTP_STATE_PROXY, now);
		smtp_session_proxy(s, now);
		return;
	}
	smtp_session_enter(s, SMTP_STATE_BANNER, now);
}

/* Why a SOCKS5 exchange failed, for the log and the result. */
static const char *
smtp_session_socks_why(const struct socks5 *k)
{
	switch (k->err) {
	case SOCKS5_E_AUTH:
		return "proxy refused the username/password";
	case SOCKS5_E_NO_METHOD:
		return "proxy accepts none of our authentication methods";
	case SOCKS5_E_PROTOCOL:
		return "not a SOCKS5 reply from the proxy";
	case SOCKS5_E_REPLY:
		if (k->rep >= 0 && k->rep < SOCKS5_REP__MAX)
			return socks5_rep_names[k->rep];
		return "proxy refused CONNECT";
	default:
		return "proxy exchange failed";
	}
}

/* The SOCKS5 exchange advanced: the greeting next, still going, or a
 * failure of the route (the proxy's fault) or of the address (the proxy
 * could not reach it). */
void
smtp_session_proxy(struct smtp_session *s, int64_t now)
{
	switch (smtp_io_proxy(s)) {
	case SMTP_IO_AGAIN:
		return;
	case SMTP_IO_OK:
		log_debug("event=socks5_open session=%u route=%s addr=%s",
		    s->id, s->info.route, s->info.addr);
		smtp_session_enter(s, SMTP_STATE_BANNER, now);
		return;
	case SMTP_IO_ROUTE:
		if (socks5_proxy_fault(s->socks))
			smtp_session_route_failed(s,
			    smtp_session_socks_why(s->socks), now);
		else
			smtp_session_target_failed(s, SMTP_OUTCOME_UNREACHABLE,
			    NULL, smtp_session_socks_why(s->socks), now);
		return;
	default:
		smtp_session_route_failed(s, "proxy closed the connection",
		    now);
		return;
	}
}

/* The handshake advanced: done, still going, or failed. */
void
smtp_session_handshake(struct smtp_session *s, int64_t now)
{
	enum smtp_io io = smtp_io_handshake(s);

	if (io == SMTP_IO_AGAIN)
		return;
	if (io == SMTP_IO_OK) {
		s->info.tls = 1;
		smtp_io_tls_check(s, smtp_session_host(s));
		log_debug("event=smtp_tls session=%u host=%s version=%s "
		    "verified=%d resumed=%d", s->id, smtp_session_host(s),
		    smtp_io_tls_version(s), s->info.tls_verified,
		    s->info.tls_resumed);
		smtp_session_enter(s, SMTP_STATE_EHLO_TLS, now);
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
	    smtp_session_text_has(r->text, "starttls") ||
	    smtp_session_text_has(r->text, "tls required") ||
	    smtp_session_text_has(r->text, "requires tls") ||
	    smtp_session_text_has(r->text, "encryption required")))
		return s->tls_failed ? SMTP_OUTCOME_TLS_FAILED :
		    SMTP_OUTCOME_TLS_REQUIRED;
	/* A 4.7.x without greylisting words is a (temporary) block. */
	if (r->code / 100 == 4)
		return smtp_classify_is_block(smtp_classify_reply(
		    s->opts->rules, smtp_session_provider(s), r)) ?
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
	res->text = smtp_session_reply_text(r);
	res->verdict = smtp_classify_reply(s->opts->rules,
		    smtp_session_provider(s), r);
	s->answered++;
	log_debug("event=smtp_rcpt session=%u n=%zu code=%d enhanced=%s "
	    "verdict=%s", s->id, i, r->code, r->enhanced[0] ? r->enhanced :
	    "-", smtp_verdict_names[res->verdict]);
	if (s->answered == s->nrcpt) {
		/* Every RCPT answered: the outcome is known. */
		s->info.outcome = SMTP_OUTCOME_OK;
		s->info.stage = SMTP_STATE_RCPT;
		smtp_session_enter(s, s->last ? SMTP_STATE_QUIT :
		    SMTP_STATE_READY, now);
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
	    smtp_session_cmd_names[c], r->code,
	    r->enhanced[0] ? r->enhanced : "-", r->lines);
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
			smtp_session_enter(s, SMTP_STATE_EHLO, now);
			return;
		}
		smtp_session_target_failed(s, cls == 5 &&
		    smtp_classify_is_block(smtp_classify_reply(s->opts->rules,
		    smtp_session_provider(s), r)) ?
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
				smtp_session_enter(s, SMTP_STATE_STARTTLS, now);
				return;
			}
			smtp_session_begin(s, now);
			return;
		}
		if (s->state == SMTP_STATE_EHLO_TLS) {
			smtp_session_finish(s, cls == 4 ?
			    SMTP_OUTCOME_TEMPFAIL : SMTP_OUTCOME_BLOCKED, r,
			    "EHLO after STARTTLS refused", now);
			return;
		}
		/* EHLO refused: HELO (RFC 5321 4.1.4). */
		smtp_session_enter(s, SMTP_STATE_HELO, now);
		return;
	case SMTP_CMD_HELO:
		if (cls == 2) {
			s->info.helo = 1;
			s->info.ext = 0;
			smtp_session_begin(s, now);
			return;
		}
		smtp_session_finish(s, cls == 4 ? SMTP_OUTCOME_TEMPFAIL :
		    SMTP_OUTCOME_BLOCKED, r, "HELO refused", now);
		return;
	case SMTP_CMD_STARTTLS:
		if (r->code == 220) {
			smtp_session_enter(s, SMTP_STATE_TLS_HANDSHAKE, now);
			return;
		}
		/* Offered but refused (454): go on in plain text. */
		log_debug("event=smtp_starttls_refused session=%u code=%d",
		    s->id, r->code);
		smtp_session_begin(s, now);
		return;
	case SMTP_CMD_RSET:
		if (cls == 2) {
			smtp_session_enter(s, SMTP_STATE_MAIL, now);
			return;
		}
		smtp_session_finish(s, cls == 4 ? SMTP_OUTCOME_TEMPFAIL :
		    SMTP_OUTCOME_PROTOCOL_ERROR, r, "RSET refused", now);
		return;
	case SMTP_CMD_MAIL:
		if (cls == 2) {
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
	case SMTP_STATE_READY:
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
void
smtp_session_next_target(struct smtp_session *s, int64_t now)
{
	const struct smtp_target *t;

	while (s->next_target < s->ntargets) {
		if (s->deadline != 0 && now >= s->deadline)
			break;
		t = &s->targets[s->next_target++];
		/* plain_only lasts for one retry of the same address. */
		s->plain_only = s->plain_retry;
		s->plain_retry = 0;
		/* a new address starts over the routes' count */
		if (!s->route_retry)
			s->route_tries = 0;
		s->route_retry = 0;
		snprintf(s->info.addr, sizeof(s->info.addr), "%s", t->addr.text);
		s->info.host = s->hosts[t->host];
		s->info.attempts++;
		s->info.tls = 0;
		s->info.tls_verified = 0;
		s->info.tls_resumed = 0;
		s->info.pipelining = 0;
		s->info.helo = 0;
		s->info.ext = 0;
		s->conn++;
		s->expect_head = s->expect_tail = 0;
		(void)smtp_session_expect(s, SMTP_CMD_GREETING, 0);
		switch (smtp_io_connect(s, &t->addr)) {
		case SMTP_IO_OK:
			smtp_session_connected(s, now);
			return;
		case SMTP_IO_ROUTE:
			smtp_session_route_failed(s, s->route_why, now);
			return;
		case SMTP_IO_AGAIN:
			smtp_session_enter(s, SMTP_STATE_CONNECT, now);
			return;
		case SMTP_IO_ERR:
			smtp_session_finish(s, SMTP_OUTCOME_ERROR, NULL,
			    "socket() failed", now);
			return;
		default:
			smtp_session_target_failed(s, SMTP_OUTCOME_UNREACHABLE,
			    NULL, "connect failed", now);
			return;
		}
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

/* Reads and handles every reply that is there. */
void
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
				if (s->state == SMTP_STATE_QUIT ||
				    s->state == SMTP_STATE_READY)
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
int
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

void
smtp_session_timeout(struct smtp_session *s, int64_t now)
{
	if (s->deadline != 0 && now >= s->deadline) {
		smtp_session_finish(s, SMTP_OUTCOME_TIMEOUT, NULL,
		    "deadline passed", now);
		return;
	}
	switch (s->state) {
	case SMTP_STATE_CONNECT:
		if (s->socks != NULL && s->socks->state == SOCKS5_S_METHOD)
			smtp_session_route_failed(s,
			    "proxy connect timeout", now);
		else
			smtp_session_target_failed(s, SMTP_OUTCOME_UNREACHABLE,
			    NULL, "connect timeout", now);
		return;
	case SMTP_STATE_PROXY:
		/* waiting for CONNECT: the proxy is trying the address */
		if (s->socks->state == SOCKS5_S_CONNECT)
			smtp_session_target_failed(s, SMTP_OUTCOME_UNREACHABLE,
			    NULL, "connect timeout (through the proxy)", now);
		else
			smtp_session_route_failed(s, "proxy did not answer",
			    now);
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

