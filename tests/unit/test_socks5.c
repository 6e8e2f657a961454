/* test_socks5.c: the SOCKS5 client exchange (RFC 1928, RFC 1929) against
 * scripted proxy replies: the exact octets it sends at each step, every
 * way of splitting the replies, never taking past the last reply, each
 * failure (method, authentication, CONNECT reply codes, bad versions and
 * address types) and whose fault it is (the proxy's or the address's). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "engine/socks5.h"

static const uint8_t v4[4] = { 192, 0, 2, 25 };
static const uint8_t v6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0x25 };

/* Takes what is to be sent, checks it and marks it sent. */
static void
expect_out(struct socks5 *s, const uint8_t *want, size_t n)
{
	const uint8_t *o;
	size_t len;

	o = socks5_out(s, &len);
	assert_int_equal(len, n);
	assert_memory_equal(o, want, n);
	socks5_sent(s, len);
	o = socks5_out(s, &len);
	assert_int_equal(len, 0);
}

static void
test_with_password_sends_the_rfc_messages(void **state)
{
	struct socks5 s;
	size_t used;
	static const uint8_t greet[] = { 5, 1, 2 };
	static const uint8_t auth[] = { 1, 3, 'j', 'o', 'e', 2, 'p', 'w' };
	static const uint8_t conn[] = { 5, 1, 0, 1, 192, 0, 2, 25, 0, 25 };
	/* the CONNECT reply with the SMTP greeting right behind it */
	static const uint8_t rep[] = { 5, 0, 0, 1, 10, 0, 0, 1, 0x04, 0x38,
		'2', '2', '0', ' ' };

	(void)state;
	assert_int_equal(socks5_start(&s, "joe", "pw", 4, v4, 25), SOCKS5_OK);
	expect_out(&s, greet, sizeof(greet));
	assert_int_equal(socks5_want(&s), 2);
	assert_int_equal(socks5_feed(&s, (const uint8_t *)"\x05\x02", 2,
	    &used), SOCKS5_S_AUTH);
	assert_int_equal(used, 2);
	expect_out(&s, auth, sizeof(auth));
	assert_int_equal(socks5_feed(&s, (const uint8_t *)"\x01\x00", 2,
	    &used), SOCKS5_S_CONNECT);
	expect_out(&s, conn, sizeof(conn));
	assert_int_equal(socks5_want(&s), 5);
	assert_int_equal(socks5_feed(&s, rep, sizeof(rep), &used),
	    SOCKS5_S_DONE);
	/* the reply's 10 octets, not the greeting behind them */
	assert_int_equal(used, 10);
	assert_int_equal(s.rep, 0);
	assert_int_equal(s.auth_status, 0);
	assert_int_equal(socks5_want(&s), 0);
}

static void
test_without_password_offers_no_authentication(void **state)
{
	struct socks5 s;
	size_t used;
	static const uint8_t greet[] = { 5, 1, 0 };
	static const uint8_t conn[] = { 5, 1, 0, 4, 0x20, 0x01, 0x0d, 0xb8, 0,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x25, 0x01, 0xbb };
	/* BND.ADDR as a domain name */
	static const uint8_t rep[] = { 5, 0, 0, 3, 4, 'p', 'r', 'o', 'x', 0, 1 };

	(void)state;
	assert_int_equal(socks5_start(&s, NULL, NULL, 6, v6, 443), SOCKS5_OK);
	expect_out(&s, greet, sizeof(greet));
	assert_int_equal(socks5_feed(&s, (const uint8_t *)"\x05\x00", 2,
	    &used), SOCKS5_S_CONNECT);
	expect_out(&s, conn, sizeof(conn));
	assert_int_equal(socks5_feed(&s, rep, sizeof(rep), &used),
	    SOCKS5_S_DONE);
	assert_int_equal(used, sizeof(rep));
}

/* Fed one octet at a time, or in any two pieces, the exchange ends the
 * same way and never takes more than it wants. */
static void
test_every_split(void **state)
{
	static const uint8_t replies[] = { 5, 2, 1, 0, 5, 0, 0, 4, 0x20, 0x01,
		0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 25 };
	struct socks5 s;
	size_t cut, off, used, n, len;
	size_t want;

	(void)state;
	for (cut = 0; cut <= sizeof(replies); cut++) {
		assert_int_equal(socks5_start(&s, "u", "p", 4, v4, 25),
		    SOCKS5_OK);
		off = 0;
		while (s.state != SOCKS5_S_DONE && s.state != SOCKS5_S_FAILED) {
			(void)socks5_out(&s, &len);
			socks5_sent(&s, len);
			want = socks5_want(&s);
			assert_true(want > 0);
			n = off < cut ? cut - off : sizeof(replies) - off;
			if (cut == 0)
				n = 1;
			if (n > sizeof(replies) - off)
				n = sizeof(replies) - off;
			assert_true(n > 0);
			/* as smtp_io reads: never more than wanted */
			if (n > want)
				n = want;
			(void)socks5_feed(&s, replies + off, n, &used);
			assert_int_equal(used, n);
			off += used;
		}
		assert_int_equal(s.state, SOCKS5_S_DONE);
		assert_int_equal(off, sizeof(replies));
	}
}

struct fcase {
	const char	*name;
	const char	*user;
	const uint8_t	*in;
	size_t		 n;
	enum socks5_err	 err;
	int		 rep;
	int		 proxy_fault;
};

#define F(name, user, err, rep, fault, ...) { name, user, \
	(const uint8_t[]){ __VA_ARGS__ }, \
	sizeof((const uint8_t[]){ __VA_ARGS__ }), err, rep, fault }

static const struct fcase fcases[] = {
	F("no acceptable method", "u", SOCKS5_E_NO_METHOD, -1, 1, 5, 0xff),
	F("method we did not offer", "u", SOCKS5_E_NO_METHOD, -1, 1, 5, 0),
	F("password method without credentials", NULL, SOCKS5_E_NO_METHOD, -1,
	    1, 5, 2),
	F("SOCKS4 answer", "u", SOCKS5_E_PROTOCOL, -1, 1, 0, 90),
	F("an HTTP proxy", NULL, SOCKS5_E_PROTOCOL, -1, 1, 'H', 'T'),
	F("wrong password", "u", SOCKS5_E_AUTH, -1, 1, 5, 2, 1, 1),
	F("bad auth version", "u", SOCKS5_E_PROTOCOL, -1, 1, 5, 2, 9, 0),
	F("general failure", NULL, SOCKS5_E_REPLY, 1, 1, 5, 0, 5, 1, 0, 1, 0, 0,
	    0, 0, 0, 0),
	F("not allowed", NULL, SOCKS5_E_REPLY, 2, 1, 5, 0, 5, 2, 0, 1, 0, 0, 0,
	    0, 0, 0),
	F("network unreachable", NULL, SOCKS5_E_REPLY, 3, 0, 5, 0, 5, 3, 0, 1,
	    0, 0, 0, 0, 0, 0),
	F("host unreachable", NULL, SOCKS5_E_REPLY, 4, 0, 5, 0, 5, 4, 0, 1, 0,
	    0, 0, 0, 0, 0),
	F("connection refused", "u", SOCKS5_E_REPLY, 5, 0, 5, 2, 1, 0, 5, 5, 0,
	    1, 0, 0, 0, 0, 0, 0),
	F("TTL expired", NULL, SOCKS5_E_REPLY, 6, 0, 5, 0, 5, 6, 0, 1, 0, 0, 0,
	    0, 0, 0),
	F("command not supported", NULL, SOCKS5_E_REPLY, 7, 1, 5, 0, 5, 7, 0,
	    1, 0, 0, 0, 0, 0, 0),
	F("unknown reply code", NULL, SOCKS5_E_REPLY, 200, 1, 5, 0, 5, 200, 0,
	    1, 0, 0, 0, 0, 0, 0),
	F("bad reply version", NULL, SOCKS5_E_PROTOCOL, -1, 1, 5, 0, 4, 0, 0,
	    1, 0, 0, 0, 0, 0, 0),
	F("reserved octet set", NULL, SOCKS5_E_PROTOCOL, -1, 1, 5, 0, 5, 0, 1,
	    1, 0, 0, 0, 0, 0, 0),
	F("unknown address type", NULL, SOCKS5_E_PROTOCOL, -1, 1, 5, 0, 5, 0,
	    0, 9, 0, 0, 0, 0, 0, 0),
	F("empty domain name", NULL, SOCKS5_E_PROTOCOL, -1, 1, 5, 0, 5, 0, 0,
	    3, 0, 0, 0),
};

static void
test_failures(void **state)
{
	struct socks5 s;
	size_t i, off, used, len;

	(void)state;
	for (i = 0; i < sizeof(fcases) / sizeof(fcases[0]); i++) {
		const struct fcase *f = &fcases[i];

		assert_int_equal(socks5_start(&s, f->user, f->user ? "p" :
		    NULL, 4, v4, 25), SOCKS5_OK);
		for (off = 0; off < f->n && s.state != SOCKS5_S_FAILED &&
		    s.state != SOCKS5_S_DONE; off += used) {
			(void)socks5_out(&s, &len);
			socks5_sent(&s, len);
			(void)socks5_feed(&s, f->in + off, f->n - off, &used);
		}
		if (s.state != SOCKS5_S_FAILED || s.err != f->err ||
		    s.rep != f->rep ||
		    socks5_proxy_fault(&s) != f->proxy_fault)
			fail_msg("%s: state %s err %s rep %d fault %d", f->name,
			    socks5_state_names[s.state],
			    socks5_err_names[s.err], s.rep,
			    socks5_proxy_fault(&s));
		assert_int_equal(socks5_want(&s), 0);
		(void)socks5_out(&s, &len);
		assert_int_equal(len, 0);
	}
}

static void
test_bad_arguments(void **state)
{
	struct socks5 s;
	char longname[300];

	(void)state;
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(socks5_start(&s, "u", NULL, 4, v4, 25),
	    SOCKS5_E_ARGS);
	assert_int_equal(socks5_start(&s, "", "p", 4, v4, 25), SOCKS5_E_ARGS);
	assert_int_equal(socks5_start(&s, longname, "p", 4, v4, 25),
	    SOCKS5_E_ARGS);
	assert_int_equal(socks5_start(&s, NULL, NULL, 5, v4, 25),
	    SOCKS5_E_ARGS);
	assert_int_equal(socks5_start(&s, NULL, NULL, 4, v4, 0),
	    SOCKS5_E_ARGS);
	assert_int_equal(socks5_start(&s, NULL, NULL, 4, v4, 65536),
	    SOCKS5_E_ARGS);
	assert_int_equal(s.state, SOCKS5_S_FAILED);
	assert_int_equal(socks5_want(&s), 0);
}

static void
test_name_tables_are_complete(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < SOCKS5_S__MAX; i++)
		assert_non_null(socks5_state_names[i]);
	for (i = 0; i < SOCKS5_E__MAX; i++)
		assert_non_null(socks5_err_names[i]);
	for (i = 0; i < SOCKS5_REP__MAX; i++)
		assert_non_null(socks5_rep_names[i]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_with_password_sends_the_rfc_messages),
		cmocka_unit_test(test_without_password_offers_no_authentication),
		cmocka_unit_test(test_every_split),
		cmocka_unit_test(test_failures),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_name_tables_are_complete),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
