/* smtp.c: the SMTP probing client's face (smtp.h): options from the
 * configuration, the construction of a session (its hosts, addresses and
 * recipients), the driver a poll loop calls (smtp_session_poll and
 * smtp_session_step, which hands I/O and deadlines to the state machine)
 * and what it reads at the end, the transactions of a session that goes on
 * (smtp_session_next, _quit, _detach), the blocking smtp_probe(), and the
 * random local part of the catch-all probe. The state machine is smtp_session.c,
 * sockets and GnuTLS are smtp_io.c; smtp_session.h is what they share. */
#include "engine/smtp_session.h"
#include "engine/egress_resolve.h"
#include "engine/addr.h"
#include "util/log.h"
#include "util/timeutil.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>

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
	[SMTP_STATE_PROXY] = "proxy",
	[SMTP_STATE_BANNER] = "banner",
	[SMTP_STATE_EHLO] = "ehlo",
	[SMTP_STATE_HELO] = "helo",
	[SMTP_STATE_STARTTLS] = "starttls",
	[SMTP_STATE_TLS_HANDSHAKE] = "tls_handshake",
	[SMTP_STATE_EHLO_TLS] = "ehlo_tls",
	[SMTP_STATE_READY] = "ready",
	[SMTP_STATE_RSET] = "rset",
	[SMTP_STATE_MAIL] = "mail",
	[SMTP_STATE_RCPT] = "rcpt",
	[SMTP_STATE_QUIT] = "quit",
	[SMTP_STATE_DONE] = "done",
};

char smtp_empty[1];
static unsigned smtp_session_ids;

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
	o->tls_resume = conf_int(cf, CONF_SMTP_TLS_RESUME) != 0;
	o->max_addrs = 5;	/* as Postfix's smtp_mx_address_limit */
}

/* ---- small helpers ---- */

void
smtp_str_free(char *p)
{
	if (p != NULL && p != smtp_empty)
		free(p);
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

/* The recipients and their results. */
static void
smtp_session_rcpts_free(struct smtp_session *s)
{
	size_t i;

	for (i = 0; s->rcpt != NULL && i < s->nrcpt; i++) {
		free((char *)s->rcpt[i].rcpt);
		smtp_str_free(s->rcpt[i].text);
	}
	free(s->rcpt);
	s->rcpt = NULL;
	s->nrcpt = s->answered = s->next_rcpt = 0;
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

/* A transaction's recipients, checked, then copied in place of the
 * previous transaction's (and their results). */
int
smtp_session_set_rcpts(struct smtp_session *s, const char *const *rcpts,
    size_t n)
{
	struct smtp_rcpt_result *r;
	enum smtp_cmd *ex = NULL;
	size_t *exr = NULL, i, cap = n + 8;
	int utf8 = smtp_has_8bit(s->opts->mail_from);

	if (n == 0 || n > SMTP_RCPT_MAX || rcpts == NULL)
		return -1;
	for (i = 0; i < n; i++)
		if (!smtp_arg_valid(rcpts[i], SMTP_ADDRESS_MAX, 0))
			return -1;
	if ((r = calloc(n, sizeof(*r))) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		r[i].text = smtp_empty;
		r[i].verdict = SMTP_VERDICT_UNKNOWN;
		if ((r[i].rcpt = strdup(rcpts[i])) == NULL)
			goto fail;
		if (smtp_has_8bit(rcpts[i]))
			utf8 = 1;
	}
	/* Replies due: RSET, MAIL, the RCPTs, QUIT (and room to spare). */
	if (cap > s->expect_cap) {
		if ((ex = calloc(cap, sizeof(*ex))) == NULL ||
		    (exr = calloc(cap, sizeof(*exr))) == NULL)
			goto fail;
		free(s->expect);
		free(s->expect_rcpt);
		s->expect = ex;
		s->expect_rcpt = exr;
		s->expect_cap = cap;
	}
	smtp_session_rcpts_free(s);
	s->rcpt = r;
	s->nrcpt = n;
	s->next_rcpt = s->answered = 0;
	s->needs_utf8 = utf8;
	return 0;
fail:
	for (i = 0; i < n; i++)
		free((char *)r[i].rcpt);
	free(r);
	free(ex);
	free(exr);
	return -1;
}

/* A session without recipients; the caller sets them. */
static struct smtp_session *
smtp_session_alloc(const struct smtp_opts *o, size_t route)
{
	struct smtp_session *s;

	if (o == NULL || o->port == 0 || o->port > 65535 ||
	    !smtp_arg_valid(o->helo_name, DNS_NAME_MAX, 0) ||
	    !smtp_arg_valid(o->mail_from, SMTP_ADDRESS_MAX, 1))
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
	s->info.route = "direct";
	s->info.proxy_why = "";
	s->route_why = "";
	/* proxies named by host name: their addresses, when due */
	if (o->dns != NULL && o->egress != NULL)
		egress_resolve(o->egress, o->dns, timeutil_mono_ms());
	/* the caller's route, or the round robin's (advanced only then) */
	s->route = route != SMTP_ROUTE_PICK ? route % (o->egress != NULL &&
	    o->egress->n > 0 ? o->egress->n : 1) : egress_pick_in(o->egress,
	    o->routes);
	if (!egress_in(o->routes, s->route))
		s->route = egress_pick_in(o->egress, o->routes);
	s->info.outcome = SMTP_OUTCOME_ERROR;
	smtp_reply_parser_init(&s->parser);
	buf_init(&s->out, SMTP_OUT_MAX);
	s->expect_cap = 8;
	s->expect = calloc(s->expect_cap, sizeof(*s->expect));
	s->expect_rcpt = calloc(s->expect_cap, sizeof(*s->expect_rcpt));
	if (s->expect == NULL || s->expect_rcpt == NULL) {
		smtp_session_free(s);
		return NULL;
	}
	if (o->deadline_ms > 0)
		s->deadline = timeutil_mono_ms() + o->deadline_ms;
	return s;
}

/* A session for one transaction, QUIT after it. */
static struct smtp_session *
smtp_session_alloc_one(const struct smtp_opts *o, const char *const *rcpts,
    size_t n, size_t route)
{
	struct smtp_session *s;

	if ((s = smtp_session_alloc(o, route)) == NULL)
		return NULL;
	if (smtp_session_set_rcpts(s, rcpts, n) == -1) {
		smtp_session_free(s);
		return NULL;
	}
	s->pending = 1;
	s->last = 1;
	s->info.transactions = 1;
	return s;
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

	if (a == NULL || (s = smtp_session_alloc_one(o, rcpts, n,
	    SMTP_ROUTE_PICK)) == NULL)
		return NULL;
	if (smtp_session_add_host(s, mx_host, a) == -1) {
		smtp_session_free(s);
		return NULL;
	}
	return smtp_session_start(s);
}

/* Every host of an MX answer, then the first connection. */
static struct smtp_session *
smtp_session_add_mx(struct smtp_session *s, const struct dns_mx_result *mx)
{
	size_t i;

	for (i = 0; mx->status == DNS_OK && i < mx->nhosts; i++)
		if (smtp_session_add_host(s, mx->hosts[i].name,
		    &mx->hosts[i].addrs) == -1) {
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

	if (mx == NULL || (s = smtp_session_alloc_one(o, rcpts, n,
	    SMTP_ROUTE_PICK)) == NULL)
		return NULL;
	return smtp_session_add_mx(s, mx);
}

struct smtp_session *
smtp_session_new_mx_route(const struct smtp_opts *o,
    const struct dns_mx_result *mx, const char *const *rcpts, size_t n,
    size_t route)
{
	struct smtp_session *s;

	if (mx == NULL || (s = smtp_session_alloc_one(o, rcpts, n, route)) ==
	    NULL)
		return NULL;
	return smtp_session_add_mx(s, mx);
}

struct smtp_session *
smtp_session_open_mx(const struct smtp_opts *o, const struct dns_mx_result *mx)
{
	struct smtp_session *s;

	if (mx == NULL || (s = smtp_session_alloc(o, SMTP_ROUTE_PICK)) == NULL)
		return NULL;
	return smtp_session_add_mx(s, mx);
}

struct smtp_session *
smtp_session_open_mx_route(const struct smtp_opts *o,
    const struct dns_mx_result *mx, size_t route)
{
	struct smtp_session *s;

	if (mx == NULL || (s = smtp_session_alloc(o, route)) == NULL)
		return NULL;
	return smtp_session_add_mx(s, mx);
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
	smtp_session_rcpts_free(s);
	for (i = 0; i < s->nhosts; i++)
		free(s->hosts[i]);
	free(s->hosts);
	free(s->targets);
	free(s->expect);
	free(s->expect_rcpt);
	smtp_str_free(s->info.text);
	smtp_io_tls_free(s->own_tls);
	free(s->socks);
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
	case SMTP_STATE_PROXY:
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
				    "session=%u host=%s addr=%s route=%s "
				    "errno=%d", s->id, s->info.host,
				    s->info.addr, s->info.route, err);
				if (s->socks != NULL &&
				    s->socks->state == SOCKS5_S_METHOD)
					smtp_session_route_failed(s,
					    "cannot connect to the proxy",
					    now);
				else
					smtp_session_target_failed(s,
					    SMTP_OUTCOME_UNREACHABLE, NULL,
					    "connection refused", now);
				goto check;
			}
			smtp_session_connected(s, now);
		}
		goto check;
	}
	if (s->state == SMTP_STATE_PROXY) {
		if (revents != 0)
			smtp_session_proxy(s, now);
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

void
smtp_session_set_provider(struct smtp_session *s, const char *provider)
{
	snprintf(s->provider, sizeof(s->provider), "%s",
	    provider != NULL ? provider : "");
}

const char *
smtp_session_provider(const struct smtp_session *s)
{
	return s->provider[0] != '\0' ? s->provider : NULL;
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

/* ---- transactions of a session that goes on ---- */

int
smtp_session_ready(const struct smtp_session *s)
{
	return s->state == SMTP_STATE_READY;
}

int
smtp_session_next(struct smtp_session *s, const char *const *rcpts, size_t n,
    int last, int64_t now)
{
	if (s->state != SMTP_STATE_READY ||
	    smtp_session_set_rcpts(s, rcpts, n) == -1)
		return -1;
	s->last = last;
	s->mail_sent = 0;
	s->expect_head = s->expect_tail = 0;
	s->info.transactions++;
	s->info.outcome = SMTP_OUTCOME_ERROR;
	s->info.code = 0;
	s->info.enhanced[0] = '\0';
	smtp_str_free(s->info.text);
	s->info.text = smtp_empty;
	s->info.error = "";
	if (s->opts->deadline_ms > 0)
		s->deadline = now + s->opts->deadline_ms;
	log_debug("event=smtp_transaction session=%u n=%zu rcpts=%zu last=%d",
	    s->id, s->info.transactions, n, last);
	smtp_session_enter(s, s->info.transactions > 1 ? SMTP_STATE_RSET :
	    SMTP_STATE_MAIL, now);
	(void)smtp_session_output(s, now);
	return 0;
}

void
smtp_session_quit(struct smtp_session *s, int64_t now)
{
	if (s->state != SMTP_STATE_READY)
		return;
	s->last = 1;
	smtp_session_enter(s, SMTP_STATE_QUIT, now);
	(void)smtp_session_output(s, now);
}

struct smtp_session *
smtp_session_detach(struct smtp_session *s)
{
	struct smtp_session *t;

	if (s->state != SMTP_STATE_READY || s->rcpt == NULL ||
	    (t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	t->id = s->id;
	t->opts = s->opts;
	memcpy(t->provider, s->provider, sizeof(t->provider));
	t->fd = -1;
	t->state = SMTP_STATE_DONE;
	smtp_reply_parser_init(&t->parser);
	buf_init(&t->out, SMTP_OUT_MAX);
	if ((t->hosts = calloc(1, sizeof(*t->hosts))) == NULL ||
	    (t->hosts[0] = strdup(s->info.host)) == NULL) {
		smtp_session_free(t);
		return NULL;
	}
	t->nhosts = 1;
	t->info = s->info;
	t->info.host = t->hosts[0];
	s->info.text = smtp_empty;	/* moved */
	t->rcpt = s->rcpt;
	t->nrcpt = s->nrcpt;
	t->answered = s->answered;
	s->rcpt = NULL;
	s->nrcpt = s->answered = s->next_rcpt = 0;
	return t;
}

void
smtp_session_run(struct smtp_session *s)
{
	struct pollfd pfd;
	int64_t deadline, now;
	int r, wait;

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
		smtp_session_step(s, r > 0 ? pfd.revents : 0,
		    timeutil_mono_ms());
	}
}

enum smtp_outcome
smtp_probe(const struct smtp_opts *o, const char *mx_host,
    const struct dns_addrs *a, const char *const *rcpts, size_t n,
    struct smtp_session **out)
{
	struct smtp_session *s;

	*out = NULL;
	if ((s = smtp_session_new(o, mx_host, a, rcpts, n)) == NULL)
		return SMTP_OUTCOME_ERROR;
	smtp_session_run(s);
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
