/* test_postfix_log.c: Postfix log lines read as delivery attempts
 * (util/postfix_log.h): sent, bounced and deferred lines of the delivery
 * agents in both timestamp forms (RFC 3339 with its offset; the classic
 * one in TZ, with the year that is not in the future), the reply code and
 * dsn, a second instance's tag; and what is not a delivery attempt
 * (qmgr, address verification probes, other programs) or not readable. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/postfix_log.h"

/* 2026-11-28T12:00:00Z */
#define NOW 1795867200

static enum postfix_log_err
parse(const char *line, time_t now, struct postfix_log_delivery *d)
{
	return postfix_log_parse(line, strlen(line), now, d);
}

static void
test_sent_classic(void **state)
{
	struct postfix_log_delivery d;

	(void)state;
	assert_int_equal(parse("Nov 28 11:59:01 mail postfix/smtp[1234]: "
	    "3F2A41C0123: to=<alice@example.com>, relay=mx.example.com"
	    "[192.0.2.1]:25, delay=0.5, delays=0.1/0/0.2/0.2, dsn=2.0.0, "
	    "status=sent (250 2.0.0 OK 1764331201 a1si123)\n", NOW, &d),
	    POSTFIX_LOG_OK);
	assert_int_equal(d.at, NOW - 59);
	assert_string_equal(d.queue_id, "3F2A41C0123");
	assert_string_equal(d.to, "alice@example.com");
	assert_string_equal(d.dsn, "2.0.0");
	assert_int_equal(d.status, POSTFIX_LOG_SENT);
	assert_int_equal(d.smtp_code, 250);
}

static void
test_bounced_rfc3339(void **state)
{
	struct postfix_log_delivery d;

	(void)state;
	assert_int_equal(parse("2026-11-28T13:00:02.123456+01:00 mail "
	    "postfix/smtp[1234]: 4Mx0Xr1v0Vz9sZb: to=<bob@example.org>, "
	    "relay=mx.example.org[198.51.100.7]:25, delay=1.2, "
	    "delays=0.1/0/0.5/0.6, dsn=5.1.1, status=bounced (host "
	    "mx.example.org[198.51.100.7] said: 550 5.1.1 <bob@example.org>: "
	    "Recipient address rejected: User unknown (in reply to RCPT TO "
	    "command))", NOW, &d), POSTFIX_LOG_OK);
	assert_int_equal(d.at, NOW + 2);
	assert_string_equal(d.to, "bob@example.org");
	assert_string_equal(d.dsn, "5.1.1");
	assert_int_equal(d.status, POSTFIX_LOG_BOUNCED);
	assert_int_equal(d.smtp_code, 550);
	assert_int_equal(parse("2026-11-28T12:00:00Z mail postfix/error[9]: "
	    "ABCDE12345: to=<x@example.org>, relay=none, delay=0, dsn=5.0.0, "
	    "status=bounced (mail for example.org loops back to myself)",
	    NOW, &d), POSTFIX_LOG_OK);
	assert_int_equal(d.at, NOW);
	assert_int_equal(d.smtp_code, 0);
}

static void
test_deferred_second_instance(void **state)
{
	struct postfix_log_delivery d;

	(void)state;
	assert_int_equal(parse("Nov  8 09:15:00 mail postfix-out/smtp[99]: "
	    "ABCDE12345: to=<carol@example.net>, orig_to=<c@example.net>, "
	    "relay=none, delay=30, delays=0/0/30/0, dsn=4.4.1, status=deferred "
	    "(connect to mx.example.net[203.0.113.5]:25: Connection timed out)",
	    NOW, &d), POSTFIX_LOG_OK);
	assert_int_equal(d.status, POSTFIX_LOG_DEFERRED);
	assert_string_equal(d.to, "carol@example.net");
	assert_string_equal(d.dsn, "4.4.1");
	assert_int_equal(d.smtp_code, 0);
	/* 2026-11-08T09:15:00Z */
	assert_int_equal(d.at, 1794129300);
}

static void
test_year(void **state)
{
	struct postfix_log_delivery d;
	const char *line = "Dec 31 23:59:59 mail postfix/local[5]: 12345ABCDE: "
	    "to=<u@mail.example>, relay=local, delay=0, dsn=2.0.0, "
	    "status=sent (delivered to mailbox)";

	(void)state;
	/* read on 2027-01-01T00:30:00Z: last year's */
	assert_int_equal(parse(line, 1798763400, &d), POSTFIX_LOG_OK);
	assert_int_equal(d.at, 1798761599);
	/* read on 2027-12-31T12:00:00Z: this year's, 12 hours ahead */
	assert_int_equal(parse(line, 1830254400, &d), POSTFIX_LOG_OK);
	assert_int_equal(d.at, 1830297599);
}

static void
test_not_deliveries(void **state)
{
	struct postfix_log_delivery d;

	(void)state;
	assert_int_equal(parse("Nov 28 12:00:03 mail postfix/qmgr[77]: "
	    "3F2A41C0123: from=<sender@example.com>, size=1234, nrcpt=1 (queue "
	    "active)", NOW, &d), POSTFIX_LOG_OTHER);
	assert_int_equal(parse("Nov 28 12:00:04 mail postfix/smtp[1235]: "
	    "5A5A5A5A5A: to=<dave@example.com>, relay=mx.example.com[192.0.2.1]"
	    ":25, delay=0.4, dsn=2.1.5, status=deliverable (250 2.1.5 Ok)",
	    NOW, &d), POSTFIX_LOG_OTHER);
	assert_int_equal(parse("Nov 28 12:00:05 mail dovecot[3]: 3F2A41C0123: "
	    "to=<a@example.com>, dsn=2.0.0, status=sent (ok)", NOW, &d),
	    POSTFIX_LOG_OTHER);
	assert_int_equal(parse("Nov 28 12:00:06 mail postfix/smtpd[8]: "
	    "connect from unknown[192.0.2.9]", NOW, &d), POSTFIX_LOG_OTHER);
	assert_int_equal(parse("", NOW, &d), POSTFIX_LOG_OTHER);
}

static void
test_unreadable(void **state)
{
	struct postfix_log_delivery d;

	(void)state;
	/* a delivery line whose time is not one of the two forms */
	assert_int_equal(parse("<22>1 2026-11-28T12:00:00Z mail "
	    "postfix/smtp[1]: 3F2A41C0123: to=<a@example.com>, dsn=2.0.0, "
	    "status=sent (250 ok)", NOW, &d), POSTFIX_LOG_BAD_TIME);
	assert_int_equal(parse("Nov 28 25:00:00 mail postfix/smtp[1]: "
	    "3F2A41C0123: to=<a@example.com>, dsn=2.0.0, status=sent (250 ok)",
	    NOW, &d), POSTFIX_LOG_BAD_TIME);
	/* an empty address */
	assert_int_equal(parse("Nov 28 12:00:00 mail postfix/smtp[1]: "
	    "3F2A41C0123: to=<>, dsn=2.0.0, status=sent (250 ok)", NOW, &d),
	    POSTFIX_LOG_BAD);
	/* a dsn that is not X.Y.Z is left out, the line still read */
	assert_int_equal(parse("Nov 28 12:00:00 mail postfix/smtp[1]: "
	    "3F2A41C0123: to=<a@example.com>, dsn=9.9, status=sent (250 ok)",
	    NOW, &d), POSTFIX_LOG_OK);
	assert_string_equal(d.dsn, "");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sent_classic),
		cmocka_unit_test(test_bounced_rfc3339),
		cmocka_unit_test(test_deferred_second_instance),
		cmocka_unit_test(test_year),
		cmocka_unit_test(test_not_deliveries),
		cmocka_unit_test(test_unreadable),
	};

	setenv("TZ", "UTC", 1);
	tzset();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
