/* test_smtp.c: tests of src/engine/smtp, the SMTP probing client. The offline
 * part checks arguments, the private-MX refusal (through a SOCKS5 route
 * too, before the proxy hears of the address), closed and silent ports.
 * The server part runs against tests/smtp/fake_smtp.py on loopback (port in
 * $SVC_TEST_SMTP_PORT, its control port in $SVC_TEST_SMTP_CONTROL); without
 * it the program re-runs itself through tests/integration/test_smtp.sh,
 * which makes the certificates and starts and stops that server. Each
 * server test scripts the fake server, probes, and asserts the outcome, the
 * per-recipient replies and what the server saw (commands, flights, TLS),
 * including that DATA was never sent; the reuse cases drive a session
 * through several transactions (READY, RSET, the next domain's RCPTs). */
#include "engine/smtp.h"
#include "engine/egress.h"
#include "engine/addr.h"
#include "engine/smtp_rules.h"
#include "util/buf.h"
#include "util/conf.h"
#include "util/ipnet.h"
#include "util/log.h"
#include "util/timeutil.h"
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "unit_server.h"
#include "unit_skip.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static unsigned smtp_port;	/* $SVC_TEST_SMTP_PORT */
static unsigned control_port;	/* $SVC_TEST_SMTP_CONTROL */
static const char *ca_file;	/* $SVC_TEST_SMTP_CA */

/* ---- helpers ---- */

static void
opts_for_test(struct smtp_opts *o)
{
	static struct smtp_rules *rules;

	/* The shipped reading rules, as the engine loads them. */
	if (rules == NULL)
		assert_int_equal(smtp_rules_load(LISTS_CURATED_DIR, &rules,
		    NULL), SMTP_RULES_OK);
	memset(o, 0, sizeof(*o));
	o->rules = rules;
	o->port = smtp_port ? smtp_port : 25;
	o->helo_name = "probe.svc.test";
	o->mail_from = "verify@svc.test";
	o->connect_timeout_ms = 1000;
	o->reply_timeout_ms = 10000;	/* generous: valgrind runs TLS slowly */
	o->deadline_ms = 30000;
	o->allow_private_mx = 1;	/* the tests live on loopback */
	o->starttls = 1;
	o->tls_fallback = 1;
}

/* A dns_addrs of the given address texts (NULL-terminated). */
static void
addrs_of(struct dns_addrs *a, ...)
{
	va_list ap;
	const char *s;

	memset(a, 0, sizeof(*a));
	a->status = DNS_OK;
	va_start(ap, a);
	while ((s = va_arg(ap, const char *)) != NULL) {
		assert_true(a->n < DNS_MAX_ADDRS);
		assert_int_equal(ipnet_parse_addr(s, &a->addr[a->n].ip), 0);
		snprintf(a->addr[a->n].text, sizeof(a->addr[a->n].text), "%s",
		    s);
		a->n++;
	}
	va_end(ap);
}

/* One command to the fake server's control port; its one-line answer. */
static void
control(const char *cmd, char *ans, size_t size)
{
	struct sockaddr_in sin;
	char line[512];
	size_t len = 0;
	ssize_t r;
	int fd;

	assert_true(control_port != 0);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)control_port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	snprintf(line, sizeof(line), "%s\n", cmd);
	assert_int_equal(write(fd, line, strlen(line)), (ssize_t)strlen(line));
	while (len + 1 < size && (r = read(fd, ans + len, 1)) == 1 &&
	    ans[len] != '\n')
		len++;
	ans[len] = '\0';
	close(fd);
}

static void
fake(const char *settings)
{
	char cmd[512], ans[256];

	control("reset", ans, sizeof(ans));
	assert_string_equal(ans, "ok");
	if (settings == NULL || *settings == '\0')
		return;
	snprintf(cmd, sizeof(cmd), "set %s", settings);
	control(cmd, ans, sizeof(ans));
	assert_string_equal(ans, "ok");
}

struct fake_log {
	int	 sessions, flights, tls, pipelined_unoffered, resumed;
	char	 helo[128];
	char	 commands[1024];
};

/* What the fake server saw in its last session; DATA is never allowed. */
static void
fake_log(struct fake_log *l)
{
	char ans[2048];

	memset(l, 0, sizeof(*l));
	control("log", ans, sizeof(ans));
	if (strcmp(ans, "sessions=0") == 0)
		return;
	if (sscanf(ans, "sessions=%d flights=%d tls=%d pipelined_unoffered=%d "
	    "helo=%127s commands=%1023s resumed=%d", &l->sessions, &l->flights,
	    &l->tls, &l->pipelined_unoffered, l->helo, l->commands,
	    &l->resumed) != 7)
		fail_msg("bad log line: %s", ans);
	if (strstr(l->commands, "DATA") != NULL)
		fail_msg("the client sent DATA: %s", l->commands);
}

static struct smtp_session *
probe(const struct smtp_opts *o, const char *host, const struct dns_addrs *a,
    const char *const *rcpts, size_t n)
{
	struct smtp_session *s = NULL;

	(void)smtp_probe(o, host, a, rcpts, n, &s);
	assert_non_null(s);
	assert_true(smtp_session_done(s));
	return s;
}

/* A probe of host at the fake server (127.0.0.1). */
static struct smtp_session *
probe_host(const struct smtp_opts *o, const char *host,
    const char *const *rcpts, size_t n)
{
	struct dns_addrs a;

	addrs_of(&a, "127.0.0.1", NULL);
	return probe(o, host, &a, rcpts, n);
}

static struct smtp_session *
probe_local(const struct smtp_opts *o, const char *const *rcpts, size_t n)
{
	return probe_host(o, "mx.fake.test", rcpts, n);
}

static void
assert_rcpt(const struct smtp_session *s, size_t i, int code,
    const char *enhanced, enum smtp_verdict v)
{
	const struct smtp_rcpt_result *r = smtp_session_rcpt(s, i);

	assert_non_null(r);
	if (r->code != code || strcmp(r->enhanced, enhanced) != 0 ||
	    r->verdict != v)
		fail_msg("rcpt %zu <%s>: got %d %s %s (\"%s\"), want %d %s %s",
		    i, r->rcpt, r->code, r->enhanced, smtp_verdict_names[r->verdict],
		    r->text, code, enhanced, smtp_verdict_names[v]);
}

static void
assert_outcome(const struct smtp_session *s, enum smtp_outcome o)
{
	const struct smtp_session_info *in = smtp_session_info(s);

	if (in->outcome != o)
		fail_msg("outcome %s (stage %s, code %d, error \"%s\", "
		    "text \"%s\"), want %s", smtp_outcome_names[in->outcome],
		    smtp_state_names[in->stage], in->code, in->error, in->text,
		    smtp_outcome_names[o]);
}

/* ---- offline ---- */

static void
test_name_tables_complete(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < SMTP_OUTCOME__MAX; i++)
		assert_non_null(smtp_outcome_names[i]);
	for (i = 0; i < SMTP_STATE__MAX; i++)
		assert_non_null(smtp_state_names[i]);
}

static void
test_random_local_parts_are_fresh_and_plain(void **state)
{
	char a[17], b[17], small[8];
	size_t i;

	(void)state;
	assert_int_equal(smtp_random_local(a, sizeof(a)), 0);
	assert_int_equal(smtp_random_local(b, sizeof(b)), 0);
	assert_int_equal(strlen(a), 16);
	assert_true(a[0] >= 'a' && a[0] <= 'z');
	for (i = 0; i < 16; i++)
		assert_non_null(strchr("abcdefghijklmnopqrstuvwxyz0123456789",
		    a[i]));
	assert_string_not_equal(a, b);
	assert_int_equal(smtp_random_local(small, sizeof(small)), -1);
}

static void
test_new_refuses_unsafe_arguments(void **state)
{
	struct smtp_opts o;
	struct dns_addrs a;
	const char *crlf[] = { "user@x.test\r\nDATA" };
	const char *angle[] = { "user@x.test> NOTIFY=NEVER" };
	const char *space[] = { "us er@x.test" };
	const char *ok[] = { "user@x.test" };
	const char *many[SMTP_RCPT_MAX + 1];
	size_t i;

	(void)state;
	opts_for_test(&o);
	o.allow_private_mx = 0;	/* no connection is made */
	addrs_of(&a, "127.0.0.1", NULL);
	assert_null(smtp_session_new(&o, "mx.x.test", &a, crlf, 1));
	assert_null(smtp_session_new(&o, "mx.x.test", &a, angle, 1));
	assert_null(smtp_session_new(&o, "mx.x.test", &a, space, 1));
	assert_null(smtp_session_new(&o, "mx.x.test", &a, ok, 0));
	for (i = 0; i < SMTP_RCPT_MAX + 1; i++)
		many[i] = "user@x.test";
	assert_null(smtp_session_new(&o, "mx.x.test", &a, many,
	    SMTP_RCPT_MAX + 1));
	o.helo_name = "bad helo";
	assert_null(smtp_session_new(&o, "mx.x.test", &a, ok, 1));
	opts_for_test(&o);
	o.mail_from = "a@b\r\nRSET";
	assert_null(smtp_session_new(&o, "mx.x.test", &a, ok, 1));
}

static void
test_private_mx_refused_unless_allowed(void **state)
{
	struct smtp_opts o;
	struct dns_addrs a;
	struct smtp_session *s;
	const char *rcpt[] = { "user@x.test" };
	const struct smtp_session_info *in;

	(void)state;
	opts_for_test(&o);
	o.allow_private_mx = 0;
	addrs_of(&a, "127.0.0.1", "10.1.2.3", "192.168.1.1", "169.254.1.1",
	    "::1", "fe80::1", "fd00::1", NULL);
	s = smtp_session_new(&o, "mx.x.test", &a, rcpt, 1);
	assert_non_null(s);
	/* Refused before any connection: done at once. */
	assert_true(smtp_session_done(s));
	in = smtp_session_info(s);
	assert_outcome(s, SMTP_OUTCOME_PRIVATE_ADDRESS);
	assert_int_equal(in->attempts, 0);
	assert_int_equal(in->refused_private, 7);
	assert_int_equal(smtp_session_rcpt(s, 0)->code, 0);
	smtp_session_free(s);
}

/* Through a SOCKS5 route the same: the MX addresses are checked before
 * the proxy is asked to connect to them, so a proxy (a listening socket
 * here, which would hold the connection in its backlog) never hears of a
 * private one. */
static void
test_private_mx_refused_before_the_proxy(void **state)
{
	struct smtp_opts o;
	struct dns_addrs a;
	struct smtp_session *s;
	struct egress e;
	struct buf err;
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	const char *rcpt[] = { "user@x.test" };
	char route[64];
	int lfd;

	(void)state;
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	assert_true(lfd >= 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(listen(lfd, 8), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&sin, &len), 0);
	snprintf(route, sizeof(route), "socks5://u:p@127.0.0.1:%u",
	    (unsigned)ntohs(sin.sin_port));
	buf_init(&err, 256);
	assert_int_equal(egress_parse(route, &e, &err), 0);
	opts_for_test(&o);
	o.egress = &e;
	o.allow_private_mx = 0;
	addrs_of(&a, "127.0.0.1", "10.1.2.3", "192.168.1.1", "::1", NULL);
	s = smtp_session_new(&o, "mx.x.test", &a, rcpt, 1);
	assert_non_null(s);
	assert_true(smtp_session_done(s));
	assert_outcome(s, SMTP_OUTCOME_PRIVATE_ADDRESS);
	assert_int_equal(smtp_session_info(s)->attempts, 0);
	assert_int_equal(smtp_session_info(s)->refused_private, 4);
	assert_int_equal(smtp_session_rcpt(s, 0)->code, 0);
	smtp_session_free(s);
	/* nothing ever connected to the proxy */
	assert_int_equal(accept(lfd, NULL, NULL), -1);
	close(lfd);
	buf_free(&err);
}

static void
test_no_address_is_unreachable(void **state)
{
	struct smtp_opts o;
	struct dns_addrs a;
	struct smtp_session *s;
	const char *rcpt[] = { "user@x.test" };

	(void)state;
	opts_for_test(&o);
	addrs_of(&a, NULL);
	s = probe(&o, "mx.x.test", &a, rcpt, 1);
	assert_outcome(s, SMTP_OUTCOME_UNREACHABLE);
	smtp_session_free(s);
}

static void
test_closed_port_is_unreachable(void **state)
{
	struct smtp_opts o;
	struct dns_addrs a;
	struct smtp_session *s;
	const char *rcpt[] = { "user@x.test" };
	unsigned port;

	(void)state;
	opts_for_test(&o);
	(void)unit_server_loopback(SOCK_STREAM, 0, &port);
	o.port = port;
	addrs_of(&a, "127.0.0.1", NULL);
	s = probe(&o, "mx.x.test", &a, rcpt, 1);
	assert_outcome(s, SMTP_OUTCOME_UNREACHABLE);
	assert_int_equal(smtp_session_info(s)->attempts, 1);
	assert_string_equal(smtp_session_info(s)->addr, "127.0.0.1");
	smtp_session_free(s);
}

static void
test_closed_ipv6_port_is_unreachable(void **state)
{
	struct smtp_opts o;
	struct dns_addrs a;
	struct smtp_session *s;
	const char *rcpt[] = { "user@x.test" };
	struct sockaddr_in6 sin6;
	socklen_t len = sizeof(sin6);
	int fd = socket(AF_INET6, SOCK_STREAM, 0);

	(void)state;
	if (fd == -1)
		UNIT_SKIP("no IPv6 sockets here");
	memset(&sin6, 0, sizeof(sin6));
	sin6.sin6_family = AF_INET6;
	sin6.sin6_addr = in6addr_loopback;
	if (bind(fd, (struct sockaddr *)&sin6, sizeof(sin6)) == -1) {
		close(fd);
		UNIT_SKIP("no IPv6 loopback (::1) here");
	}
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin6, &len), 0);
	close(fd);
	opts_for_test(&o);
	o.port = ntohs(sin6.sin6_port);
	addrs_of(&a, "::1", NULL);
	s = probe(&o, "mx.x.test", &a, rcpt, 1);
	assert_outcome(s, SMTP_OUTCOME_UNREACHABLE);
	assert_string_equal(smtp_session_info(s)->addr, "::1");
	assert_int_equal(smtp_session_info(s)->attempts, 1);
	smtp_session_free(s);
}

static void
test_listener_that_never_greets_times_out(void **state)
{
	struct smtp_opts o;
	struct dns_addrs a;
	struct smtp_session *s;
	const char *rcpt[] = { "user@x.test" };
	unsigned port;
	int fd;
	int64_t t0;

	(void)state;
	opts_for_test(&o);
	fd = unit_server_loopback(SOCK_STREAM, 1, &port);
	o.port = port;
	o.reply_timeout_ms = 300;
	addrs_of(&a, "127.0.0.1", NULL);
	t0 = timeutil_mono_ms();
	s = probe(&o, "mx.x.test", &a, rcpt, 1);
	assert_outcome(s, SMTP_OUTCOME_TIMEOUT);
	assert_int_equal(smtp_session_info(s)->stage, SMTP_STATE_BANNER);
	assert_true(timeutil_mono_ms() - t0 >= 290);
	assert_true(timeutil_mono_ms() - t0 < 2000);
	smtp_session_free(s);
	close(fd);
}

static void
test_opts_from_conf(void **state)
{
	struct conf cf;
	struct buf err;
	struct smtp_opts o;

	(void)state;
	buf_init(&err, 256);
	conf_defaults(&cf);
	assert_int_equal(conf_set(&cf, "smtp_port", "2525", &err), 0);
	assert_int_equal(conf_set(&cf, "smtp_helo_name", "mx.verifier.test",
	    &err), 0);
	smtp_opts_from_conf(&o, &cf);
	assert_int_equal(o.port, 2525);
	assert_string_equal(o.helo_name, "mx.verifier.test");
	assert_int_equal(o.allow_private_mx, 0);
	assert_int_equal(o.starttls, 1);
	assert_int_equal(o.tls_resume, 1);	/* smtp_tls_resume = yes */
	assert_true(o.reply_timeout_ms > 0 && o.connect_timeout_ms > 0);
	assert_string_equal(o.mail_from, "verify@svc.example");
	/* An IDN smtp_mail_from is made A-labels once, here; <> stays. */
	assert_int_equal(conf_set(&cf, "smtp_mail_from",
	    "Prüfer@Bücher.svc.test", &err), 0);
	smtp_opts_from_conf(&o, &cf);
	assert_string_equal(o.mail_from, "Prüfer@xn--bcher-kva.svc.test");
	assert_int_equal(conf_set(&cf, "smtp_mail_from", "", &err), 0);
	smtp_opts_from_conf(&o, &cf);
	assert_string_equal(o.mail_from, "");
	conf_free(&cf);
	buf_free(&err);
}

/* ---- against tests/smtp/fake_smtp.py ---- */

/* The MAIL and RCPT lines of the fake server's last session. */
static void
fake_paths(char *ans, size_t size)
{
	control("paths", ans, size);
}

/* Recipients go out as struct addr's smtp_path: the A-label domain, with
 * SMTPUTF8 (offered by the fake server) only for a UTF-8 local part. */
static void
test_idn_paths_go_out_in_a_labels(void **state)
{
	struct smtp_opts o;
	struct smtp_session *s;
	struct addr a, b;
	const char *rcpt[2];
	char paths[1024];

	(void)state;
	fake(NULL);
	opts_for_test(&o);
	assert_int_equal(addr_parse("user1@Bücher.svc.test", &a), ADDR_OK);
	assert_int_equal(addr_parse("üser@bücher.svc.test", &b), ADDR_OK);
	rcpt[0] = a.smtp_path;
	s = probe_local(&o, rcpt, 1);
	assert_outcome(s, SMTP_OUTCOME_OK);
	assert_rcpt(s, 0, 250, "2.1.5", SMTP_VERDICT_ACCEPTED);
	smtp_session_free(s);
	fake_paths(paths, sizeof(paths));
	assert_string_equal(paths, "MAIL FROM:<verify@svc.test>|"
	    "RCPT TO:<user1@xn--bcher-kva.svc.test>");
	rcpt[1] = b.smtp_path;
	s = probe_local(&o, rcpt, 2);
	assert_outcome(s, SMTP_OUTCOME_OK);
	smtp_session_free(s);
	fake_paths(paths, sizeof(paths));
	assert_string_equal(paths, "MAIL FROM:<verify@svc.test> SMTPUTF8|"
	    "RCPT TO:<user1@xn--bcher-kva.svc.test>|"
	    "RCPT TO:<üser@xn--bcher-kva.svc.test>");
}

static void
test_per_recipient_replies_and_verdicts(void **state)
{
	struct smtp_opts o;
	struct smtp_session *s;
	struct fake_log l;
	const char *rcpt[] = { "user1@x.test", "unknown1@x.test",
	    "disabled1@x.test", "full1@x.test", "blocked1@x.test" };
	const struct smtp_session_info *in;

	(void)state;
	fake(NULL);
	opts_for_test(&o);
	s = probe_local(&o, rcpt, 5);
	assert_outcome(s, SMTP_OUTCOME_OK);
	assert_rcpt(s, 0, 250, "2.1.5", SMTP_VERDICT_ACCEPTED);
	assert_rcpt(s, 1, 550, "5.1.1", SMTP_VERDICT_MAILBOX_NOT_FOUND);
	assert_rcpt(s, 2, 550, "5.2.1", SMTP_VERDICT_DISABLED);
	assert_rcpt(s, 3, 452, "4.2.2", SMTP_VERDICT_MAILBOX_FULL);
	assert_rcpt(s, 4, 554, "5.7.1", SMTP_VERDICT_BLOCKED_CLIENT);
	assert_non_null(strstr(smtp_session_rcpt(s, 4)->text, "spamhaus"));
	in = smtp_session_info(s);
	assert_int_equal(in->tls, 0);
	assert_string_equal(in->host, "mx.fake.test");
	assert_string_equal(in->addr, "127.0.0.1");
	fake_log(&l);
	assert_string_equal(l.helo, "probe.svc.test");
	assert_string_equal(l.commands, "EHLO,MAIL,RCPT,RCPT,RCPT,RCPT,RCPT,QUIT");
	smtp_session_free(s);
}

static void
test_pipelining_sends_every_rcpt_in_one_flight(void **state)
{
	struct smtp_opts o;
	struct smtp_session *s;
	struct fake_log l;
	const char *rcpt[] = { "user1@x.test", "user2@x.test", "unknown@x.test",
	    "user3@x.test", "user4@x.test", "user5@x.test" };

	(void)state;
	fake("pipelining=1");
	opts_for_test(&o);
	s = probe_local(&o, rcpt, 6);
	assert_outcome(s, SMTP_OUTCOME_OK);
	assert_true(smtp_session_info(s)->pipelining);
	assert_rcpt(s, 2, 550, "5.1.1", SMTP_VERDICT_MAILBOX_NOT_FOUND);
	assert_rcpt(s, 5, 250, "2.1.5", SMTP_VERDICT_ACCEPTED);
	fake_log(&l);
	/* EHLO; then MAIL, six RCPTs and QUIT together. */
	assert_int_equal(l.flights, 2);
	assert_string_equal(l.commands,
	    "EHLO,MAIL,RCPT,RCPT,RCPT,RCPT,RCPT,RCPT,QUIT");
	smtp_session_free(s);
}

static void
test_without_pipelining_one_command_at_a_time(void **state)
{
	struct smtp_opts o;
	struct smtp_session *s;
	struct fake_log l;
	const char *rcpt[] = { "user1@x.test", "unknown@x.test", "user3@x.test" };

	(void)state;
	fake("pipelining=0");
	opts_for_test(&o);
	s = probe_local(&o, rcpt, 3);
	assert_outcome(s, SMTP_OUTCOME_OK);
	assert_false(smtp_session_info(s)->pipelining);
	assert_rcpt(s, 0, 250, "2.1.5", SMTP_VERDICT_ACCEPTED);
	assert_rcpt(s, 1, 550, "5.1.1", SMTP_VERDICT_MAILBOX_NOT_FOUND);
	assert_rcpt(s, 2, 250, "2.1.5", SMTP_VERDICT_ACCEPTED);
	fake_log(&l);
	assert_int_equal(l.flights, 6);	/* EHLO MAIL RCPT RCPT RCPT QUIT */
	assert_int_equal(l.pipelined_unoffered, 0);
	smtp_session_free(s);
}

static void
test_catch_all_domain_accepts_random_address(void **state)
{
	struct smtp_opts o;
	struct smtp_session *s;
	char local[17], addr[64];
	const char *rcpt[] = { "user1@x.test", addr };

	(void)state;
	assert_int_equal(smtp_random_local(local, sizeof(local)), 0);
	snprintf(addr, sizeof(addr), "%s@x.test", local);
	opts_for_test(&o);
	fake("catchall=1");
	s = probe_local(&o, rcpt, 2);
	assert_outcome(s, SMTP_OUTCOME_OK);
	assert_rcpt(s, 1, 250, "2.1.5", SMTP_VERDICT_ACCEPTED);
	smtp_session_free(s);
	fake("catchall=0");
	s = probe_local(&o, rcpt, 2);
	assert_outcome(s, SMTP_OUTCOME_OK);
	assert_rcpt(s, 0, 250, "2.1.5", SMTP_VERDICT_ACCEPTED);
	assert_rcpt(s, 1, 550, "5.1.1", SMTP_VERDICT_MAILBOX_NOT_FOUND);
	smtp_session_free(s);
}

static void
test_starttls_used_whenever_offered(void **state)
{
	struct smtp_opts o;
	struct smtp_session *s;
	struct fake_log l;
	const char *rcpt[] = { "user1@x.test", "unknown@x.test" };
	const struct smtp_session_info *in;

	(void)state;
	fake("starttls=offered");
	opts_for_test(&o);
	s = probe_local(&o, rcpt, 2);
	assert_outcome(s, SMTP_OUTCOME_OK);
	in = smtp_session_info(s);
	assert_int_equal(in->tls, 1);
	assert_int_equal(in->starttls_offered, 1);
	assert_int_equal(in->tls_verified, 0);	/* no CA given: not checked */
	assert_true(in->pipelining);
	assert_rcpt(s, 1, 550, "5.1.1", SMTP_VERDICT_MAILBOX_NOT_FOUND);
	fake_log(&l);
	assert_int_equal(l.tls, 1);
	assert_string_equal(l.commands, "EHLO,STARTTLS,EHLO,MAIL,RCPT,RCPT,QUIT");
	smtp_session_free(s);
}

/* Every change of state is one debug line with the session id, from and
 * to, and the lines chain: a STARTTLS session's whole way, init to done,
 * each state entered once (CONNECT only when connect() did not finish at
 * once). */
static void
test_every_transition_is_traced(void **state)
{
	struct smtp_opts o;
	struct smtp_session *s;
	const char *rcpt[] = { "user1@x.test", "unknown@x.test" };
	const char *want = "banner,ehlo,starttls,tls_handshake,ehlo_tls,mail,"
	    "rcpt,quit,done";
	char path[] = "/tmp/test_smtp_trace.XXXXXX", line[4096], way[512] = "";
	char from[32], to[32], prev[32] = "init";
	unsigned id, first = 0;
	const char *p;
	FILE *f;
	int fd, saved;

	(void)state;
	fake("starttls=offered");
	opts_for_test(&o);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	saved = dup(2);
	assert_true(saved >= 0);
	assert_int_equal(dup2(fd, 2), 2);
	log_init("test_smtp", LOG_LEVEL_DEBUG, NULL);
	s = probe_local(&o, rcpt, 2);
	log_init("test_smtp", getenv("SVC_TEST_DEBUG") != NULL ?
	    LOG_LEVEL_DEBUG : LOG_LEVEL_INFO, NULL);
	assert_int_equal(dup2(saved, 2), 2);
	close(saved);
	assert_outcome(s, SMTP_OUTCOME_OK);
	smtp_session_free(s);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	f = fdopen(fd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		if ((p = strstr(line, "event=smtp_state ")) == NULL)
			continue;
		if (sscanf(p, "event=smtp_state session=%u host=%*s addr=%*s "
		    "from=%31s to=%31s", &id, from, to) != 3)
			fail_msg("bad transition line: %s", line);
		if (first == 0)
			first = id;
		if (id != first || strcmp(from, prev) != 0)
			fail_msg("transition does not follow (session %u, "
			    "state %s): %s", first, prev, line);
		snprintf(way + strlen(way), sizeof(way) - strlen(way), "%s%s",
		    *way ? "," : "", to);
		snprintf(prev, sizeof(prev), "%s", to);
	}
	fclose(f);
	assert_true(first != 0);
	if (strcmp(way, want) != 0 && (strncmp(way, "connect,", 8) != 0 ||
	    strcmp(way + 8, want) != 0))
		fail_msg("transitions %s, want [connect,]%s", way, want);
}

static void
test_certificate_verification_recorded_with_ca(void **state)
{
	struct smtp_opts o;
	struct smtp_session *s;
	struct buf err;
	const char *rcpt[] = { "user1@x.test" };

	(void)state;
	if (ca_file == NULL)
		UNIT_SKIP("no test CA (SVC_TEST_SMTP_CA: "
		    "tests/integration/test_smtp.sh makes one)");
	fake("starttls=offered");
	opts_for_test(&o);
	buf_init(&err, 256);
	o.tls = smtp_io_tls_new(ca_file, &err);
	if (o.tls == NULL)
		fail_msg("smtp_io_tls_new: %s", buf_str(&err));
	s = probe_local(&o, rcpt, 1);
	assert_outcome(s, SMTP_OUTCOME_OK);
	assert_int_equal(smtp_session_info(s)->tls, 1);
	assert_int_equal(smtp_session_info(s)->tls_verified, 1);
	smtp_session_free(s);
	/* A name the certificate is not for: used anyway, not verified. */
	s = probe_host(&o, "other.fake.test", rcpt, 1);
	assert_outcome(s, SMTP_OUTCOME_OK);
	assert_int_equal(smtp_session_info(s)->tls, 1);
	assert_int_equal(smtp_session_info(s)->tls_verified, 0);
	smtp_session_free(s);
	smtp_io_tls_free(o.tls);
	buf_free(&err);
}

static void
test_starttls_required_is_the_reason_without_tls(void **state)
{
	struct smtp_opts o;
	struct smtp_session *s;
	const char *rcpt[] = { "user1@x.test" };
	const struct smtp_session_info *in;

	(void)state;
	fake("starttls=required");
	opts_for_test(&o);
	o.starttls = 0;
	s = probe_local(&o, rcpt, 1);
	assert_outcome(s, SMTP_OUTCOME_TLS_REQUIRED);
	in = smtp_session_info(s);
	assert_int_equal(in->code, 530);
	assert_string_equal(in->enhanced, "5.7.0");
	assert_int_equal(in->stage, SMTP_STATE_MAIL);
	assert_int_equal(smtp_session_rcpt(s, 0)->code, 0);
	smtp_session_free(s);
	/* With STARTTLS, as by default, the same server accepts. */
	o.starttls = 1;
	s = probe_local(&o, rcpt, 1);
	assert_outcome(s, SMTP_OUTCOME_OK);
	assert_int_equal(smtp_session_info(s)->tls, 1);
	assert_rcpt(s, 0, 250, "2.1.5", SMTP_VERDICT_ACCEPTED);
	smtp_session_free(s);
}

static void
test_failed_handshake_retries_in_plain_text(void **state)
{
	struct smtp_opts o;
	struct smtp_session *s;
	struct fake_log l;
	const char *rcpt[] = { "user1@x.test" };

	(void)state;
	fake("starttls=broken");
	opts_for_test(&o);
	s = probe_local(&o, rcpt, 1);
	assert_outcome(s, SMTP_OUTCOME_OK);
	assert_int_equal(smtp_session_info(s)->tls, 0);
	assert_int_equal(smtp_session_info(s)->attempts, 2);
	assert_rcpt(s, 0, 250, "2.1.5", SMTP_VERDICT_ACCEPTED);
	fake_log(&l);
	assert_int_equal(l.sessions, 2);
	assert_string_equal(l.commands, "EHLO,MAIL,RCPT,QUIT");
	smtp_session_free(s);

	/* No fallback: the handshake failure ends the session. */
	o.tls_fallback = 0;
	s = probe_local(&o, rcpt, 1);
	assert_outcome(s, SMTP_OUTCOME_TLS_FAILED);
	assert_int_equal(smtp_session_info(s)->stage,
	    SMTP_STATE_TLS_HANDSHAKE);
	smtp_session_free(s);

	/* Fallback, but the server insists on TLS: TLS failed, not required. */
	o.tls_fallback = 1;
	fake("starttls=broken_required");
	s = probe_local(&o, rcpt, 1);
	assert_outcome(s, SMTP_OUTCOME_TLS_FAILED);
	assert_int_equal(smtp_session_info(s)->code, 530);
	smtp_session_free(s);
}

static void
test_ehlo_refused_falls_back_to_helo(void **state)
{
	struct smtp_opts o;
	struct smtp_session *s;
	struct fake_log l;
	const char *rcpt[] = { "user1@x.test", "unknown@x.test" };

	(void)state;
	fake("ehlo=refuse");
	opts_for_test(&o);
	s = probe_local(&o, rcpt, 2);
	assert_outcome(s, SMTP_OUTCOME_OK);
	assert_int_equal(smtp_session_info(s)->helo, 1);
	assert_false(smtp_session_info(s)->pipelining);
	assert_rcpt(s, 1, 550, "5.1.1", SMTP_VERDICT_MAILBOX_NOT_FOUND);
	fake_log(&l);
	assert_string_equal(l.commands, "EHLO,HELO,MAIL,RCPT,RCPT,QUIT");
	assert_int_equal(l.pipelined_unoffered, 0);
	smtp_session_free(s);
}

static void
test_silence_after_connect_times_out(void **state)
{
	struct smtp_opts o;
	struct smtp_session *s;
	const char *rcpt[] = { "user1@x.test" };
	int64_t t0;

	(void)state;
	fake("banner=silent");
	opts_for_test(&o);
	o.reply_timeout_ms = 300;
	t0 = timeutil_mono_ms();
	s = probe_local(&o, rcpt, 1);
	assert_outcome(s, SMTP_OUTCOME_TIMEOUT);
	assert_int_equal(smtp_session_info(s)->stage, SMTP_STATE_BANNER);
	assert_true(timeutil_mono_ms() - t0 < 3000);	/* not the 10 s default */
	smtp_session_free(s);
}

static void
test_slow_replies_within_the_timeout_succeed(void **state)
{
	struct smtp_opts o;
	struct smtp_session *s;
	const char *rcpt[] = { "user1@x.test", "unknown@x.test" };

	(void)state;
	fake("delay_ms=100");
	opts_for_test(&o);
	o.reply_timeout_ms = 1000;
	s = probe_local(&o, rcpt, 2);
	assert_outcome(s, SMTP_OUTCOME_OK);
	assert_rcpt(s, 1, 550, "5.1.1", SMTP_VERDICT_MAILBOX_NOT_FOUND);
	smtp_session_free(s);
}

static void
test_slow_reply_beyond_the_timeout_times_out(void **state)
{
	struct smtp_opts o;
	struct smtp_session *s;
	const char *rcpt[] = { "user1@x.test" };
	int64_t t0;

	(void)state;
	/* Fast greeting, then every flight waits 600 ms. */
	fake("flight_delay_ms=600");
	opts_for_test(&o);
	o.reply_timeout_ms = 250;
	t0 = timeutil_mono_ms();
	s = probe_local(&o, rcpt, 1);
	assert_outcome(s, SMTP_OUTCOME_TIMEOUT);
	assert_int_equal(smtp_session_info(s)->stage, SMTP_STATE_EHLO);
	assert_true(timeutil_mono_ms() - t0 < 3000);
	smtp_session_free(s);
}

static void
test_overall_deadline_ends_a_slow_session(void **state)
{
	struct smtp_opts o;
	struct smtp_session *s;
	const char *rcpt[] = { "user1@x.test" };
	int64_t t0, took;

	(void)state;
	/* Each reply comes within its timeout, but all together do not. */
	fake("delay_ms=200 pipelining=0");
	opts_for_test(&o);
	o.reply_timeout_ms = 1000;
	o.deadline_ms = 500;
	t0 = timeutil_mono_ms();
	s = probe_local(&o, rcpt, 1);
	took = timeutil_mono_ms() - t0;
	assert_outcome(s, SMTP_OUTCOME_TIMEOUT);
	/* Stopped by the deadline, well before the four 200 ms replies and
	 * the 1 s reply timeout would have ended it. */
	assert_true(took >= 490 && took < 790);
	smtp_session_free(s);
}

static void
test_reply_split_into_single_bytes(void **state)
{
	struct smtp_opts o;
	struct smtp_session *s;
	const char *rcpt[] = { "multi1@x.test", "unknown@x.test", "user1@x.test" };

	(void)state;
	fake("split=1 banner_lines=3");
	opts_for_test(&o);
	s = probe_local(&o, rcpt, 3);
	assert_outcome(s, SMTP_OUTCOME_OK);
	assert_rcpt(s, 0, 250, "2.1.5", SMTP_VERDICT_ACCEPTED);
	assert_rcpt(s, 1, 550, "5.1.1", SMTP_VERDICT_MAILBOX_NOT_FOUND);
	assert_rcpt(s, 2, 250, "2.1.5", SMTP_VERDICT_ACCEPTED);
	assert_true(smtp_session_info(s)->pipelining);
	smtp_session_free(s);
}

static void
test_tls_replies_in_one_byte_records(void **state)
{
	struct smtp_opts o;
	struct smtp_session *s;
	const char *rcpt[] = { "multi1@x.test", "unknown@x.test", "full@x.test" };

	(void)state;
	/* Each byte of each reply is a TLS record of its own. */
	fake("starttls=offered split=1");
	opts_for_test(&o);
	s = probe_local(&o, rcpt, 3);
	assert_outcome(s, SMTP_OUTCOME_OK);
	assert_int_equal(smtp_session_info(s)->tls, 1);
	assert_rcpt(s, 0, 250, "2.1.5", SMTP_VERDICT_ACCEPTED);
	assert_rcpt(s, 1, 550, "5.1.1", SMTP_VERDICT_MAILBOX_NOT_FOUND);
	assert_rcpt(s, 2, 452, "4.2.2", SMTP_VERDICT_MAILBOX_FULL);
	smtp_session_free(s);
}

static void
test_multiline_replies_are_joined(void **state)
{
	struct smtp_opts o;
	struct smtp_session *s;
	const char *rcpt[] = { "multi1@x.test" };
	const struct smtp_rcpt_result *r;

	(void)state;
	fake("banner_lines=12 long_line=1500");
	opts_for_test(&o);
	s = probe_local(&o, rcpt, 1);
	assert_outcome(s, SMTP_OUTCOME_OK);
	r = smtp_session_rcpt(s, 0);
	assert_rcpt(s, 0, 250, "2.1.5", SMTP_VERDICT_ACCEPTED);
	assert_string_equal(r->text,
	    "<multi1@x.test> accepted second line third line");
	/* The EHLO reply was multi-line too: its keywords were read. */
	assert_true(smtp_session_info(s)->ext &
	    SMTP_EXT_BIT(SMTP_EXT_PIPELINING));
	smtp_session_free(s);
}

static void
test_line_too_long_is_a_protocol_error(void **state)
{
	struct smtp_opts o;
	struct smtp_session *s;
	const char *rcpt[] = { "user1@x.test" };

	(void)state;
	fake("long_line=5000");
	opts_for_test(&o);
	s = probe_local(&o, rcpt, 1);
	assert_outcome(s, SMTP_OUTCOME_PROTOCOL_ERROR);
	assert_int_equal(smtp_session_info(s)->stage, SMTP_STATE_BANNER);
	smtp_session_free(s);
}

static void
test_greylisted_first_then_accepted(void **state)
{
	struct smtp_opts o;
	struct smtp_session *s;
	const char *rcpt[] = { "grey1@x.test", "user1@x.test" };

	(void)state;
	fake(NULL);
	opts_for_test(&o);
	s = probe_local(&o, rcpt, 2);
	assert_outcome(s, SMTP_OUTCOME_OK);
	assert_rcpt(s, 0, 450, "4.7.1", SMTP_VERDICT_GREYLISTED);
	assert_rcpt(s, 1, 250, "2.1.5", SMTP_VERDICT_ACCEPTED);
	smtp_session_free(s);
	/* The caller retries later: now accepted. */
	s = probe_local(&o, rcpt, 2);
	assert_outcome(s, SMTP_OUTCOME_OK);
	assert_rcpt(s, 0, 250, "2.1.5", SMTP_VERDICT_ACCEPTED);
	smtp_session_free(s);
}

static void
test_421_at_banner_tries_next_address_then_refused(void **state)
{
	struct smtp_opts o;
	struct smtp_session *s;
	struct fake_log l;
	struct dns_addrs a;
	const char *rcpt[] = { "user1@x.test" };
	const struct smtp_session_info *in;

	(void)state;
	fake("banner=421");
	opts_for_test(&o);
	addrs_of(&a, "127.0.0.1", "127.0.0.3", NULL);
	s = probe(&o, "mx.fake.test", &a, rcpt, 1);
	assert_outcome(s, SMTP_OUTCOME_REFUSED_AT_BANNER);
	in = smtp_session_info(s);
	assert_int_equal(in->attempts, 2);
	assert_int_equal(in->code, 421);
	assert_string_equal(in->enhanced, "4.3.2");
	fake_log(&l);
	assert_int_equal(l.sessions, 2);
	smtp_session_free(s);
}

static void
test_554_banner_with_block_is_blocked(void **state)
{
	struct smtp_opts o;
	struct smtp_session *s;
	const char *rcpt[] = { "user1@x.test" };

	(void)state;
	fake("banner=554");
	opts_for_test(&o);
	s = probe_local(&o, rcpt, 1);
	assert_outcome(s, SMTP_OUTCOME_BLOCKED);
	assert_int_equal(smtp_session_info(s)->code, 554);
	assert_int_equal(smtp_session_info(s)->stage, SMTP_STATE_BANNER);
	smtp_session_free(s);
}

static void
test_421_mid_session_keeps_earlier_replies(void **state)
{
	struct smtp_opts o;
	struct smtp_session *s;
	const char *rcpt[] = { "user1@x.test", "close421@x.test", "user2@x.test" };
	const struct smtp_session_info *in;

	(void)state;
	fake(NULL);
	opts_for_test(&o);
	s = probe_local(&o, rcpt, 3);
	assert_outcome(s, SMTP_OUTCOME_TEMPFAIL);
	in = smtp_session_info(s);
	assert_int_equal(in->code, 421);
	assert_int_equal(in->stage, SMTP_STATE_RCPT);
	assert_rcpt(s, 0, 250, "2.1.5", SMTP_VERDICT_ACCEPTED);
	assert_int_equal(smtp_session_rcpt(s, 1)->code, 0);
	assert_int_equal(smtp_session_rcpt(s, 2)->code, 0);
	smtp_session_free(s);
}

static void
test_disconnect_after_mail(void **state)
{
	struct smtp_opts o;
	struct smtp_session *s;
	const char *rcpt[] = { "user1@x.test" };
	int pipe;

	(void)state;
	opts_for_test(&o);
	for (pipe = 0; pipe <= 1; pipe++) {
		fake(pipe ? "mail=disconnect pipelining=1" :
		    "mail=disconnect pipelining=0");
		s = probe_local(&o, rcpt, 1);
		assert_outcome(s, SMTP_OUTCOME_DISCONNECTED);
		assert_int_equal(smtp_session_info(s)->stage, SMTP_STATE_MAIL);
		assert_int_equal(smtp_session_rcpt(s, 0)->code, 0);
		smtp_session_free(s);
	}
}

static void
test_mail_refused_is_blocked_or_tempfail(void **state)
{
	struct smtp_opts o;
	struct smtp_session *s;
	const char *rcpt[] = { "user1@x.test" };

	(void)state;
	opts_for_test(&o);
	fake("mail=550");
	s = probe_local(&o, rcpt, 1);
	assert_outcome(s, SMTP_OUTCOME_BLOCKED);
	assert_int_equal(smtp_session_info(s)->code, 550);
	assert_int_equal(smtp_session_info(s)->stage, SMTP_STATE_MAIL);
	smtp_session_free(s);
	fake("mail=451");
	s = probe_local(&o, rcpt, 1);
	assert_outcome(s, SMTP_OUTCOME_TEMPFAIL);
	smtp_session_free(s);
}

static void
test_next_mx_tried_after_a_dead_address(void **state)
{
	struct smtp_opts o;
	struct smtp_session *s;
	struct dns_addrs a;
	const char *rcpt[] = { "user1@x.test", "unknown@x.test" };
	const struct smtp_session_info *in;

	(void)state;
	fake(NULL);
	opts_for_test(&o);
	/* Nothing listens on 127.0.0.2. */
	addrs_of(&a, "127.0.0.2", "127.0.0.3", NULL);
	s = probe(&o, "mx.fake.test", &a, rcpt, 2);
	assert_outcome(s, SMTP_OUTCOME_OK);
	in = smtp_session_info(s);
	assert_int_equal(in->attempts, 2);
	assert_string_equal(in->addr, "127.0.0.3");
	assert_rcpt(s, 1, 550, "5.1.1", SMTP_VERDICT_MAILBOX_NOT_FOUND);
	smtp_session_free(s);
}

static void
test_max_addrs_caps_the_attempts(void **state)
{
	struct smtp_opts o;
	struct smtp_session *s;
	struct dns_addrs a;
	const char *rcpt[] = { "user1@x.test" };

	(void)state;
	fake(NULL);
	opts_for_test(&o);
	o.max_addrs = 1;
	addrs_of(&a, "127.0.0.2", "127.0.0.3", NULL);
	s = probe(&o, "mx.fake.test", &a, rcpt, 1);
	assert_outcome(s, SMTP_OUTCOME_UNREACHABLE);
	assert_int_equal(smtp_session_info(s)->attempts, 1);
	smtp_session_free(s);
}

static void
test_next_mx_host_in_preference_order(void **state)
{
	struct smtp_opts o;
	struct smtp_session *s;
	struct dns_mx_result mx;
	struct dns_mx_host hosts[2];
	const char *rcpt[] = { "user1@x.test" };
	struct pollfd pfd;
	int64_t deadline, now;

	(void)state;
	fake(NULL);
	opts_for_test(&o);
	memset(&mx, 0, sizeof(mx));
	memset(hosts, 0, sizeof(hosts));
	mx.status = DNS_OK;
	mx.nhosts = 2;
	mx.hosts = hosts;
	snprintf(hosts[0].name, sizeof(hosts[0].name), "mx1.fake.test");
	hosts[0].preference = 10;
	addrs_of(&hosts[0].addrs, "127.0.0.2", NULL);
	snprintf(hosts[1].name, sizeof(hosts[1].name), "mx2.fake.test");
	hosts[1].preference = 20;
	addrs_of(&hosts[1].addrs, "127.0.0.3", NULL);
	s = smtp_session_new_mx(&o, &mx, rcpt, 1);
	assert_non_null(s);
	while (smtp_session_poll(s, &pfd.fd, &pfd.events, &deadline)) {
		now = timeutil_mono_ms();
		pfd.revents = 0;
		if (poll(&pfd, 1, deadline > now ? (int)(deadline - now) : 0) < 0)
			fail_msg("poll");
		smtp_session_step(s, pfd.revents, timeutil_mono_ms());
	}
	assert_outcome(s, SMTP_OUTCOME_OK);
	assert_string_equal(smtp_session_info(s)->host, "mx2.fake.test");
	assert_int_equal(smtp_session_info(s)->attempts, 2);
	smtp_session_free(s);
}

static void
test_loopback_mx_refused_with_allow_private_mx_no(void **state)
{
	struct smtp_opts o;
	struct smtp_session *s;
	struct fake_log l;
	const char *rcpt[] = { "user1@x.test" };

	(void)state;
	fake(NULL);
	opts_for_test(&o);
	o.allow_private_mx = 0;
	s = probe_local(&o, rcpt, 1);
	assert_outcome(s, SMTP_OUTCOME_PRIVATE_ADDRESS);
	assert_int_equal(smtp_session_info(s)->attempts, 0);
	fake_log(&l);
	assert_int_equal(l.sessions, 0);	/* the server saw nothing */
	smtp_session_free(s);
}

/* Many sessions from one poll loop: 20 sessions whose every flight waits
 * 150 ms finish together, far sooner than one after another would. */
static void
test_many_sessions_driven_from_one_poll_loop(void **state)
{
	enum { N = 20 };
	struct smtp_opts o;
	struct smtp_session *s[N];
	struct pollfd pfd[N];
	struct dns_addrs a;
	const char *rcpt[] = { "user1@x.test", "unknown@x.test", "full@x.test" };
	int64_t t0, took, deadline, d, now;
	int i, map[N], k, live;

	(void)state;
	fake("flight_delay_ms=150");
	opts_for_test(&o);
	addrs_of(&a, "127.0.0.1", "127.0.0.3", NULL);
	t0 = timeutil_mono_ms();
	for (i = 0; i < N; i++) {
		s[i] = smtp_session_new(&o, "mx.fake.test", &a, rcpt, 3);
		assert_non_null(s[i]);
	}
	for (;;) {
		deadline = INT64_MAX;
		for (i = 0, k = 0; i < N; i++) {
			if (!smtp_session_poll(s[i], &pfd[k].fd, &pfd[k].events,
			    &d))
				continue;
			pfd[k].revents = 0;
			map[k++] = i;
			if (d < deadline)
				deadline = d;
		}
		if (k == 0)
			break;
		now = timeutil_mono_ms();
		live = poll(pfd, (nfds_t)k, deadline > now ?
		    (int)(deadline - now) : 0);
		assert_true(live >= 0);
		now = timeutil_mono_ms();
		for (i = 0; i < k; i++)
			smtp_session_step(s[map[i]], pfd[i].revents, now);
	}
	took = timeutil_mono_ms() - t0;
	for (i = 0; i < N; i++) {
		assert_outcome(s[i], SMTP_OUTCOME_OK);
		assert_rcpt(s[i], 0, 250, "2.1.5", SMTP_VERDICT_ACCEPTED);
		assert_rcpt(s[i], 1, 550, "5.1.1",
		    SMTP_VERDICT_MAILBOX_NOT_FOUND);
		assert_rcpt(s[i], 2, 452, "4.2.2", SMTP_VERDICT_MAILBOX_FULL);
		smtp_session_free(s[i]);
	}
	/* Two delayed flights each (EHLO; MAIL+RCPTs+QUIT): ~300 ms in
	 * parallel, 6 s one after another. */
	if (took > 3000)
		fail_msg("20 sessions took %lld ms", (long long)took);
}

/* ---- several transactions on one connection ---- */

/* An MX answer of one host, mx.fake.test at 127.0.0.1 (storage in h). */
static void
mx_local(struct dns_mx_result *mx, struct dns_mx_host *h)
{
	memset(mx, 0, sizeof(*mx));
	memset(h, 0, sizeof(*h));
	mx->status = DNS_OK;
	mx->nhosts = 1;
	mx->hosts = h;
	snprintf(h->name, sizeof(h->name), "mx.fake.test");
	h->preference = 10;
	addrs_of(&h->addrs, "127.0.0.1", NULL);
}

/* Steps the session until it is READY or done. */
static void
run_until_ready(struct smtp_session *s)
{
	struct pollfd pfd;
	int64_t deadline, now;

	while (!smtp_session_ready(s) &&
	    smtp_session_poll(s, &pfd.fd, &pfd.events, &deadline)) {
		now = timeutil_mono_ms();
		pfd.revents = 0;
		if (poll(&pfd, 1, deadline > now ? (int)(deadline - now) : 0) < 0)
			fail_msg("poll");
		smtp_session_step(s, pfd.revents, timeutil_mono_ms());
	}
}

struct fake_stats {
	int	 sessions, max_mail, max_rcpt, rset, quit, tls, resumed;
};

/* What the fake server saw over its sessions since the last reset. */
static void
fake_stats(struct fake_stats *st)
{
	char ans[256];

	control("stats", ans, sizeof(ans));
	if (sscanf(ans, "sessions=%d max_mail=%d max_rcpt=%d rset=%d quit=%d "
	    "tls=%d resumed=%d", &st->sessions, &st->max_mail, &st->max_rcpt,
	    &st->rset, &st->quit, &st->tls, &st->resumed) != 7)
		fail_msg("bad stats line: %s", ans);
}

/* Two domains' transactions on one connection: the second begins with
 * RSET, and RSET, MAIL, its RCPTs (the probe first) and QUIT go in one
 * flight; each transaction's answers are its own (the catch-all domain's
 * probe accepted, the other's refused), and the first's, detached, stay
 * readable after the second. */
static void
test_session_goes_on_with_the_next_domain(void **state)
{
	struct smtp_opts o;
	struct smtp_session *s, *first;
	struct dns_mx_result mx;
	struct dns_mx_host h;
	struct fake_log l;
	struct fake_stats st;
	const char *a[] = { "zq7probe1abc@ca.test", "user1@ca.test",
	    "unknown1@ca.test" };
	const char *b[] = { "zq7probe2abc@x.test", "user2@x.test",
	    "unknown2@x.test", "full1@x.test" };

	(void)state;
	fake("starttls=offered catchall_domains=ca\\.test");
	opts_for_test(&o);
	mx_local(&mx, &h);
	s = smtp_session_open_mx(&o, &mx);
	assert_non_null(s);
	run_until_ready(s);
	assert_true(smtp_session_ready(s));
	assert_int_equal(smtp_session_info(s)->transactions, 0);
	assert_null(smtp_session_detach(s));	/* no transaction yet */
	assert_int_equal(smtp_session_next(s, a, 3, 0, timeutil_mono_ms()), 0);
	run_until_ready(s);
	assert_true(smtp_session_ready(s));
	assert_outcome(s, SMTP_OUTCOME_OK);
	assert_rcpt(s, 0, 250, "2.1.5", SMTP_VERDICT_ACCEPTED);
	assert_rcpt(s, 2, 550, "5.1.1", SMTP_VERDICT_MAILBOX_NOT_FOUND);
	first = smtp_session_detach(s);
	assert_non_null(first);
	assert_int_equal(smtp_session_nrcpt(s), 0);
	assert_int_equal(smtp_session_next(s, b, 4, 1, timeutil_mono_ms()), 0);
	run_until_ready(s);
	assert_true(smtp_session_done(s));
	assert_outcome(s, SMTP_OUTCOME_OK);
	assert_int_equal(smtp_session_info(s)->transactions, 2);
	assert_int_equal(smtp_session_info(s)->tls, 1);
	assert_rcpt(s, 0, 550, "5.1.1", SMTP_VERDICT_MAILBOX_NOT_FOUND);
	assert_rcpt(s, 1, 250, "2.1.5", SMTP_VERDICT_ACCEPTED);
	assert_rcpt(s, 2, 550, "5.1.1", SMTP_VERDICT_MAILBOX_NOT_FOUND);
	assert_rcpt(s, 3, 452, "4.2.2", SMTP_VERDICT_MAILBOX_FULL);
	/* the first transaction's answers, apart */
	assert_true(smtp_session_done(first));
	assert_int_equal(smtp_session_nrcpt(first), 3);
	assert_string_equal(smtp_session_rcpt(first, 1)->rcpt, "user1@ca.test");
	assert_rcpt(first, 0, 250, "2.1.5", SMTP_VERDICT_ACCEPTED);
	assert_rcpt(first, 1, 250, "2.1.5", SMTP_VERDICT_ACCEPTED);
	assert_rcpt(first, 2, 550, "5.1.1", SMTP_VERDICT_MAILBOX_NOT_FOUND);
	assert_outcome(first, SMTP_OUTCOME_OK);
	assert_string_equal(smtp_session_info(first)->host, "mx.fake.test");
	assert_int_equal(smtp_session_info(first)->tls, 1);
	smtp_session_free(first);
	smtp_session_free(s);
	fake_log(&l);
	assert_int_equal(l.sessions, 1);
	assert_string_equal(l.commands, "EHLO,STARTTLS,EHLO,MAIL,RCPT,RCPT,RCPT,"
	    "RSET,MAIL,RCPT,RCPT,RCPT,RCPT,QUIT");
	/* EHLO | STARTTLS | EHLO | MAIL+3 RCPT | RSET+MAIL+4 RCPT+QUIT */
	assert_int_equal(l.flights, 5);
	fake_stats(&st);
	assert_int_equal(st.max_mail, 2);
	assert_int_equal(st.rset, 1);
}

/* Without PIPELINING, RSET and MAIL wait for their replies, and the
 * RCPTs go one at a time; a READY session ended by the driver says QUIT. */
static void
test_next_transaction_without_pipelining(void **state)
{
	struct smtp_opts o;
	struct smtp_session *s;
	struct dns_mx_result mx;
	struct dns_mx_host h;
	struct fake_log l;
	const char *a[] = { "user1@a.test" };
	const char *b[] = { "unknown1@b.test", "user2@b.test" };

	(void)state;
	fake("pipelining=0");
	opts_for_test(&o);
	mx_local(&mx, &h);
	s = smtp_session_open_mx(&o, &mx);
	assert_non_null(s);
	run_until_ready(s);
	assert_int_equal(smtp_session_next(s, a, 1, 0, timeutil_mono_ms()), 0);
	run_until_ready(s);
	assert_true(smtp_session_ready(s));
	assert_rcpt(s, 0, 250, "2.1.5", SMTP_VERDICT_ACCEPTED);
	assert_int_equal(smtp_session_next(s, b, 2, 0, timeutil_mono_ms()), 0);
	run_until_ready(s);
	assert_true(smtp_session_ready(s));
	assert_false(smtp_session_info(s)->pipelining);
	assert_rcpt(s, 0, 550, "5.1.1", SMTP_VERDICT_MAILBOX_NOT_FOUND);
	assert_rcpt(s, 1, 250, "2.1.5", SMTP_VERDICT_ACCEPTED);
	smtp_session_quit(s, timeutil_mono_ms());
	run_until_ready(s);
	assert_true(smtp_session_done(s));
	assert_outcome(s, SMTP_OUTCOME_OK);
	smtp_session_free(s);
	fake_log(&l);
	assert_string_equal(l.commands,
	    "EHLO,MAIL,RCPT,RSET,MAIL,RCPT,RCPT,QUIT");
	assert_int_equal(l.flights, 8);	/* one command each */
	assert_int_equal(l.pipelined_unoffered, 0);
}

/* A later transaction refused ends the session: its recipients have no
 * reply (the driver tries them again elsewhere), the outcome says why:
 * RSET refused, or a second MAIL at a server that takes one message per
 * connection. */
static void
test_refused_later_transaction_ends_the_session(void **state)
{
	static const struct {
		const char *set;
		enum smtp_outcome o;
		int code;
	} c[] = {
		{ "rset=550", SMTP_OUTCOME_PROTOCOL_ERROR, 550 },
		{ "rset=421", SMTP_OUTCOME_TEMPFAIL, 421 },
		{ "rset=disconnect", SMTP_OUTCOME_DISCONNECTED, 0 },
		{ "mail_limit=1", SMTP_OUTCOME_TEMPFAIL, 421 },
	};
	struct smtp_opts o;
	struct smtp_session *s;
	struct dns_mx_result mx;
	struct dns_mx_host h;
	const char *a[] = { "user1@a.test" };
	const char *b[] = { "user2@b.test", "user3@b.test" };
	size_t i;

	(void)state;
	opts_for_test(&o);
	mx_local(&mx, &h);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		fake(c[i].set);
		s = smtp_session_open_mx(&o, &mx);
		assert_non_null(s);
		run_until_ready(s);
		assert_int_equal(smtp_session_next(s, a, 1, 0,
		    timeutil_mono_ms()), 0);
		run_until_ready(s);
		assert_rcpt(s, 0, 250, "2.1.5", SMTP_VERDICT_ACCEPTED);
		assert_int_equal(smtp_session_next(s, b, 2, 1,
		    timeutil_mono_ms()), 0);
		run_until_ready(s);
		assert_true(smtp_session_done(s));
		assert_outcome(s, c[i].o);
		assert_int_equal(smtp_session_info(s)->code, c[i].code);
		assert_int_equal(smtp_session_rcpt(s, 0)->code, 0);
		assert_int_equal(smtp_session_rcpt(s, 1)->code, 0);
		smtp_session_free(s);
	}
}

/* smtp_session_next only on a READY session, with good recipients; a
 * bad call leaves the session as it was. */
static void
test_next_refused_unless_ready(void **state)
{
	struct smtp_opts o;
	struct smtp_session *s;
	struct dns_mx_result mx;
	struct dns_mx_host h;
	const char *a[] = { "user1@a.test" };
	const char *bad[] = { "user1@a.test", "x<y@a.test" };

	(void)state;
	fake(NULL);
	opts_for_test(&o);
	mx_local(&mx, &h);
	s = smtp_session_open_mx(&o, &mx);
	assert_non_null(s);
	assert_false(smtp_session_ready(s));
	assert_int_equal(smtp_session_next(s, a, 1, 1, timeutil_mono_ms()), -1);
	run_until_ready(s);
	assert_int_equal(smtp_session_next(s, bad, 2, 1, timeutil_mono_ms()),
	    -1);
	assert_int_equal(smtp_session_next(s, a, 0, 1, timeutil_mono_ms()), -1);
	assert_true(smtp_session_ready(s));
	assert_int_equal(smtp_session_info(s)->transactions, 0);
	assert_int_equal(smtp_session_next(s, a, 1, 1, timeutil_mono_ms()), 0);
	assert_int_equal(smtp_session_next(s, a, 1, 1, timeutil_mono_ms()), -1);
	run_until_ready(s);
	assert_true(smtp_session_done(s));
	assert_rcpt(s, 0, 250, "2.1.5", SMTP_VERDICT_ACCEPTED);
	smtp_session_free(s);
}

/* A READY session left waiting ends at the reply timeout with its
 * answers kept and the outcome OK. */
static void
test_ready_session_left_waiting_ends_ok(void **state)
{
	struct smtp_opts o;
	struct smtp_session *s;
	struct dns_mx_result mx;
	struct dns_mx_host h;
	const char *a[] = { "user1@a.test", "unknown1@a.test" };

	(void)state;
	fake(NULL);
	opts_for_test(&o);
	o.reply_timeout_ms = 300;
	mx_local(&mx, &h);
	s = smtp_session_open_mx(&o, &mx);
	assert_non_null(s);
	run_until_ready(s);
	assert_int_equal(smtp_session_next(s, a, 2, 0, timeutil_mono_ms()), 0);
	run_until_ready(s);
	assert_true(smtp_session_ready(s));
	smtp_session_run(s);	/* until the reply timeout ends it */
	assert_outcome(s, SMTP_OUTCOME_OK);
	assert_rcpt(s, 0, 250, "2.1.5", SMTP_VERDICT_ACCEPTED);
	assert_rcpt(s, 1, 550, "5.1.1", SMTP_VERDICT_MAILBOX_NOT_FOUND);
	smtp_session_free(s);
}

/* One STARTTLS session of o to host at 127.0.0.1, which the fake server
 * says was over TLS; whether the server resumed a session (it says) and
 * the client's info agree, the answer is the RCPT's. Returns resumed. */
static int
tls_probe(const struct smtp_opts *o, const char *host, int *verified)
{
	const char *rcpt[] = { "user1@x.test" };
	struct smtp_session *s;
	const struct smtp_session_info *in;
	struct fake_log l;
	int resumed;

	s = probe_host(o, host, rcpt, 1);
	assert_outcome(s, SMTP_OUTCOME_OK);
	assert_rcpt(s, 0, 250, "2.1.5", SMTP_VERDICT_ACCEPTED);
	in = smtp_session_info(s);
	assert_int_equal(in->tls, 1);
	fake_log(&l);
	assert_int_equal(l.tls, 1);
	assert_string_equal(l.commands, "EHLO,STARTTLS,EHLO,MAIL,RCPT,QUIT");
	assert_int_equal(in->tls_resumed, l.resumed);
	resumed = l.resumed;
	if (verified != NULL)
		*verified = in->tls_verified;
	smtp_session_free(s);
	return resumed;
}

/* TLS session resumption (smtp_tls_cache.h): the second session to the
 * same host name, port and route resumes the first's (the server says
 * so), and reports the first's verification (verified for the name the
 * certificate is for, not for another); through another egress route, to
 * another name, with smtp_tls_resume off, it does not; a server that
 * sends no tickets makes full handshakes, and the sessions go on; data
 * offered to a handshake that fails are dropped. */
static void
test_tls_session_resumed_per_host_and_route(void **state)
{
	struct smtp_opts o, other_route, off;
	struct egress e1, e2;
	struct fake_stats st;
	struct buf err;
	int v;

	(void)state;
	fake("starttls=offered catchall=1");
	opts_for_test(&o);
	buf_init(&err, 256);
	o.tls = smtp_io_tls_new(ca_file, &err);	/* no CA file: unchecked */
	if (o.tls == NULL)
		fail_msg("smtp_io_tls_new: %s", buf_str(&err));
	o.tls_resume = 1;
	assert_int_equal(egress_parse("bind:127.0.0.1", &e1, &err), 0);
	assert_int_equal(egress_parse("bind:127.0.0.5", &e2, &err), 0);
	o.egress = &e1;
	other_route = o;
	other_route.egress = &e2;
	off = o;
	off.tls_resume = 0;

	assert_int_equal(tls_probe(&o, "mx.fake.test", &v), 0);
	assert_int_equal(v, ca_file != NULL);
	assert_int_equal(smtp_io_tls_cached(o.tls), 1);
	/* the same host, port and route: resumed, verified as it was */
	assert_int_equal(tls_probe(&o, "mx.fake.test", &v), 1);
	assert_int_equal(v, ca_file != NULL);
	assert_int_equal(tls_probe(&o, "MX.Fake.Test", &v), 1);
	/* another route (source address): a full handshake */
	assert_int_equal(tls_probe(&other_route, "mx.fake.test", &v), 0);
	assert_int_equal(smtp_io_tls_cached(o.tls), 2);
	assert_int_equal(tls_probe(&other_route, "mx.fake.test", NULL), 1);
	/* another name at the same address: its own session, whose
	 * certificate is not for it, and a resumption never says otherwise */
	assert_int_equal(tls_probe(&o, "other.fake.test", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(tls_probe(&o, "other.fake.test", &v), 1);
	assert_int_equal(v, 0);
	/* smtp_tls_resume = no: nothing offered */
	assert_int_equal(tls_probe(&off, "mx.fake.test", NULL), 0);
	fake_stats(&st);
	assert_int_equal(st.tls, 8);
	assert_int_equal(st.resumed, 4);

	/* a server that does not resume (no tickets, other keys): full
	 * handshakes that work, and the refused entry goes */
	fake("starttls=offered catchall=1 tickets=0");
	assert_int_equal(tls_probe(&o, "mx.fake.test", &v), 0);
	assert_int_equal(v, ca_file != NULL);
	assert_int_equal(tls_probe(&o, "mx.fake.test", NULL), 0);
	assert_int_equal(smtp_io_tls_cached(o.tls), 2);
	/* tickets again: the next session keeps one, the one after resumes */
	fake("starttls=offered catchall=1");
	assert_int_equal(tls_probe(&o, "mx.fake.test", NULL), 0);
	assert_int_equal(tls_probe(&o, "mx.fake.test", NULL), 1);
	/* a handshake that fails with data offered: they go (and the
	 * session goes on in plain text) */
	assert_int_equal(smtp_io_tls_cached(o.tls), 3);
	fake("starttls=broken");
	{
		const char *rcpt[] = { "user1@x.test" };
		struct smtp_session *s;

		s = probe_local(&o, rcpt, 1);
		assert_outcome(s, SMTP_OUTCOME_OK);
		assert_int_equal(smtp_session_info(s)->tls, 0);
		assert_int_equal(smtp_session_info(s)->tls_resumed, 0);
		smtp_session_free(s);
	}
	assert_int_equal(smtp_io_tls_cached(o.tls), 2);
	smtp_io_tls_free(o.tls);
	buf_free(&err);
}

static int
server_setup(void **state)
{
	(void)state;
	return 0;
}

static unsigned
env_port(const char *name)
{
	const char *v = getenv(name);
	char *end;
	unsigned long p;

	if (v == NULL || *v == '\0')
		return 0;
	p = strtoul(v, &end, 10);
	return *end == '\0' && p > 0 && p < 65536 ? (unsigned)p : 0;
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest offline[] = {
		cmocka_unit_test(test_name_tables_complete),
		cmocka_unit_test(test_random_local_parts_are_fresh_and_plain),
		cmocka_unit_test(test_new_refuses_unsafe_arguments),
		cmocka_unit_test(test_private_mx_refused_unless_allowed),
		cmocka_unit_test(test_private_mx_refused_before_the_proxy),
		cmocka_unit_test(test_no_address_is_unreachable),
		cmocka_unit_test(test_closed_port_is_unreachable),
		cmocka_unit_test(test_closed_ipv6_port_is_unreachable),
		cmocka_unit_test(test_listener_that_never_greets_times_out),
		cmocka_unit_test(test_opts_from_conf),
	};
	const struct CMUnitTest online[] = {
		cmocka_unit_test(test_per_recipient_replies_and_verdicts),
		cmocka_unit_test(test_idn_paths_go_out_in_a_labels),
		cmocka_unit_test(test_pipelining_sends_every_rcpt_in_one_flight),
		cmocka_unit_test(test_without_pipelining_one_command_at_a_time),
		cmocka_unit_test(test_catch_all_domain_accepts_random_address),
		cmocka_unit_test(test_starttls_used_whenever_offered),
		cmocka_unit_test(test_every_transition_is_traced),
		cmocka_unit_test(test_certificate_verification_recorded_with_ca),
		cmocka_unit_test(test_tls_session_resumed_per_host_and_route),
		cmocka_unit_test(test_starttls_required_is_the_reason_without_tls),
		cmocka_unit_test(test_failed_handshake_retries_in_plain_text),
		cmocka_unit_test(test_ehlo_refused_falls_back_to_helo),
		cmocka_unit_test(test_silence_after_connect_times_out),
		cmocka_unit_test(test_slow_replies_within_the_timeout_succeed),
		cmocka_unit_test(test_slow_reply_beyond_the_timeout_times_out),
		cmocka_unit_test(test_overall_deadline_ends_a_slow_session),
		cmocka_unit_test(test_reply_split_into_single_bytes),
		cmocka_unit_test(test_tls_replies_in_one_byte_records),
		cmocka_unit_test(test_multiline_replies_are_joined),
		cmocka_unit_test(test_line_too_long_is_a_protocol_error),
		cmocka_unit_test(test_greylisted_first_then_accepted),
		cmocka_unit_test(test_421_at_banner_tries_next_address_then_refused),
		cmocka_unit_test(test_554_banner_with_block_is_blocked),
		cmocka_unit_test(test_421_mid_session_keeps_earlier_replies),
		cmocka_unit_test(test_disconnect_after_mail),
		cmocka_unit_test(test_mail_refused_is_blocked_or_tempfail),
		cmocka_unit_test(test_next_mx_tried_after_a_dead_address),
		cmocka_unit_test(test_max_addrs_caps_the_attempts),
		cmocka_unit_test(test_next_mx_host_in_preference_order),
		cmocka_unit_test(test_loopback_mx_refused_with_allow_private_mx_no),
		cmocka_unit_test(test_many_sessions_driven_from_one_poll_loop),
		cmocka_unit_test(test_session_goes_on_with_the_next_domain),
		cmocka_unit_test(test_next_transaction_without_pipelining),
		cmocka_unit_test(test_refused_later_transaction_ends_the_session),
		cmocka_unit_test(test_next_refused_unless_ready),
		cmocka_unit_test(test_ready_session_left_waiting_ends_ok),
	};
	int rc;

	(void)argc;
	/* SVC_TEST_DEBUG=1: every transition on stderr. */
	if (getenv("SVC_TEST_DEBUG") != NULL)
		log_init("test_smtp", LOG_LEVEL_DEBUG, NULL);
	smtp_port = env_port("SVC_TEST_SMTP_PORT");
	if (smtp_port == 0)
		unit_server_reexec("smtp", argv);
	control_port = env_port("SVC_TEST_SMTP_CONTROL");
	ca_file = getenv("SVC_TEST_SMTP_CA");
	rc = cmocka_run_group_tests_name("smtp_offline", offline, NULL, NULL);
	if (smtp_port == 0 || control_port == 0)
		return unit_skip_rest(rc, "server tests need SVC_TEST_SMTP_PORT "
		    "(see tests/integration/test_smtp.sh)");
	rc += cmocka_run_group_tests_name("smtp_server", online, server_setup,
	    NULL);
	return unit_skip_status(rc);
}
