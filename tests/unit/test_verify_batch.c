/* test_verify_batch.c: the parts of the engine's batch face that need no
 * network: where the catch-all probe goes in a transaction (after the real
 * addresses), and the catch-all answer items are concluded with on a
 * provider whose hosts accept any address (smtp_reply_rules.txt's
 * accept_all lines): a 250 there is never taken for "valid" unless the
 * domain's probe was refused with a 5xx. An engine is made with the
 * shipped lists folder; sessions are made, never run. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/smtp.h"
#include "engine/verify_batch.h"
#include "util/conf.h"

static struct conf conf;
static struct verify_engine *engine;

static int
setup(void **state)
{
	struct buf err;

	(void)state;
	buf_init(&err, 4096);
	conf_defaults(&conf);
	if (conf_set(&conf, "lists_dir", LISTS_CURATED_DIR, &err) != 0 ||
	    conf_set(&conf, "dns_resolver", "127.0.0.1", &err) != 0 ||
	    (engine = verify_engine_new(&conf, &err)) == NULL) {
		fprintf(stderr, "engine: %s\n", buf_str(&err));
		buf_free(&err);
		return -1;
	}
	buf_free(&err);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	verify_engine_free(engine);
	conf_free(&conf);
	return 0;
}

/* A batch of domain with one MX address on loopback (never connected). */
static void
batch_for(struct verify_batch *b, const char *domain)
{
	struct dns_mx_result mx;

	verify_batch_init(b, domain);
	memset(&mx, 0, sizeof(mx));
	mx.status = DNS_OK;
	assert_non_null(mx.hosts = calloc(1, sizeof(*mx.hosts)));
	snprintf(mx.hosts[0].name, sizeof(mx.hosts[0].name), "mx.%s",
	    domain);
	mx.hosts[0].addrs.status = DNS_OK;
	mx.hosts[0].addrs.n = 1;
	assert_int_equal(ipnet_parse_addr("127.0.0.1",
	    &mx.hosts[0].addrs.addr[0].ip), 0);
	snprintf(mx.hosts[0].addrs.addr[0].text, DNS_ADDR_TEXT, "127.0.0.1");
	mx.nhosts = 1;
	verify_batch_mx_answer(NULL, b, &mx);
}

static void
test_probe_is_the_last_rcpt(void **state)
{
	struct verify_item a, c, *v[2] = { &a, &c };
	struct verify_batch b;
	struct smtp_session *s;
	int probe;

	(void)state;
	batch_for(&b, "example.test");
	assert_int_equal(verify_batch_item_begin(engine, "jane@example.test",
	    &a), VERIFY_STEP_NEXT);
	assert_int_equal(verify_batch_item_begin(engine, "joe@example.test",
	    &c), VERIFY_STEP_NEXT);
	s = verify_batch_session(engine, NULL, &b, v, 2, 1000, &probe);
	assert_non_null(s);
	assert_int_equal(probe, 1);
	assert_int_equal(b.probe, VERIFY_PROBE_RUNNING);
	assert_int_equal(smtp_session_nrcpt(s), 3);
	assert_string_equal(smtp_session_rcpt(s, 0)->rcpt,
	    "jane@example.test");
	assert_string_equal(smtp_session_rcpt(s, 1)->rcpt, "joe@example.test");
	assert_non_null(strstr(smtp_session_rcpt(s, 2)->rcpt, "@example.test"));
	assert_string_not_equal(smtp_session_rcpt(s, 2)->rcpt,
	    "jane@example.test");
	smtp_session_free(s);
	/* while the probe is out, no other session carries one */
	s = verify_batch_session(engine, NULL, &b, v, 1, 1000, &probe);
	assert_non_null(s);
	assert_int_equal(probe, 0);
	assert_int_equal(smtp_session_nrcpt(s), 1);
	smtp_session_free(s);
	verify_batch_free(&b);
}

static void
test_accept_all_provider_250_is_catch_all_unless_probe_refused(void **state)
{
	struct verify_batch b;

	(void)state;
	batch_for(&b, "example.test");
	/* generic: an unknown probe answer is no catch-all */
	assert_int_equal(verify_batch_accept_all(&b), 0);
	verify_batch_provider(engine, &b, "google");
	assert_string_equal(b.provider, "google");
	assert_int_equal(verify_batch_accept_all(&b), 0);
	/* yahoo and microsoft365 (accept_all in the shipped rules) */
	verify_batch_provider(engine, &b, "yahoo");
	assert_int_equal(verify_batch_accept_all(&b), 1);
	b.probe = VERIFY_PROBE_RUNNING;
	assert_int_equal(verify_batch_accept_all(&b), 1);
	b.probe = VERIFY_PROBE_KNOWN;		/* the probe got a 5xx */
	b.accept_all = 0;
	assert_int_equal(verify_batch_accept_all(&b), 0);
	b.accept_all = 1;			/* a 250 */
	assert_int_equal(verify_batch_accept_all(&b), 1);
	b.probe = VERIFY_PROBE_UNKNOWN;
	verify_batch_provider(engine, &b, "microsoft365");
	assert_int_equal(verify_batch_accept_all(&b), 1);
	verify_batch_provider(engine, &b, NULL);
	assert_string_equal(b.provider, "");
	assert_int_equal(verify_batch_accept_all(&b), 0);
	verify_batch_free(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe_is_the_last_rcpt),
		cmocka_unit_test(
		    test_accept_all_provider_250_is_catch_all_unless_probe_refused),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
