/* test_mxprofile.c: a mail host's profile notes (engine/mxprofile.h)
 * without MariaDB: a new note knows nothing but the host (lower-cased),
 * and a later note merged into an earlier one of the same host keeps what
 * only the earlier knew and takes what the later knows, as writing the
 * two one after the other would (svc-worker writes merged notes once a
 * second, worker/profiles.c); a learned cap on sessions at once holds a
 * day. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "engine/mxprofile.h"

static void
test_init_knows_nothing(void **state)
{
	struct mxprofile p;

	(void)state;
	mxprofile_init(&p, "MX1.Example.COM");
	assert_string_equal(p.host, "mx1.example.com");
	assert_string_equal(p.provider, "");
	assert_int_equal(p.rcpts_per_session, -1);
	assert_int_equal(p.accept_all, -1);
	assert_int_equal(p.greylist_delay_s, -1);
	assert_int_equal(p.starttls, -1);
	assert_int_equal(p.rate_421, -1);
	assert_string_equal(p.last_block, "");
	assert_int_equal(p.sessions_max, -1);
	assert_int_equal(mxprofile_sessions_max(&p), -1);
}

static void
test_merge_later_wins_where_it_knows(void **state)
{
	struct mxprofile a, b;

	(void)state;
	/* the first session: STARTTLS and no catch-all */
	mxprofile_init(&a, "mx.example.com");
	a.starttls = 1;
	a.accept_all = 0;
	a.rcpts_per_session = 3;
	/* a later one: one RCPT a session, a block, catch-all after all */
	mxprofile_init(&b, "mx.example.com");
	b.rcpts_per_session = 1;
	b.accept_all = 1;
	strcpy(b.last_block, "554 5.7.1 blocked");
	mxprofile_merge(&a, &b);
	assert_int_equal(a.starttls, 1);		/* only a knew */
	assert_int_equal(a.rcpts_per_session, 1);	/* b knew better */
	assert_int_equal(a.accept_all, 1);
	assert_string_equal(a.last_block, "554 5.7.1 blocked");
	assert_int_equal(a.greylist_delay_s, -1);	/* nobody knew */
	assert_int_equal(a.rate_421, -1);
	/* a note that knows nothing changes nothing; 0 is knowledge */
	mxprofile_init(&b, "mx.example.com");
	mxprofile_merge(&a, &b);
	assert_int_equal(a.accept_all, 1);
	assert_string_equal(a.last_block, "554 5.7.1 blocked");
	b.accept_all = 0;
	b.rate_421 = 120;
	strcpy(b.provider, "google");
	mxprofile_merge(&a, &b);
	assert_int_equal(a.accept_all, 0);
	assert_int_equal(a.rate_421, 120);
	assert_string_equal(a.provider, "google");
	assert_string_equal(a.host, "mx.example.com");
	/* the sessions at once: a later cap replaces an earlier one */
	b.sessions_max = 7;
	mxprofile_merge(&a, &b);
	mxprofile_init(&b, "mx.example.com");
	b.sessions_max = 4;
	mxprofile_merge(&a, &b);
	assert_int_equal(a.sessions_max, 4);
	assert_int_equal(a.rate_421, 120);
}

/* A stored cap on the sessions at once holds for a day from when it was
 * learned (the age comes with the row), then the window is whole again. */
static void
test_sessions_max_holds_a_day(void **state)
{
	struct mxprofile p;

	(void)state;
	mxprofile_init(&p, "mx.example.com");
	p.sessions_max = 3;
	strcpy(p.sessions_max_at, "2026-11-29 10:00:00.000");
	p.sessions_max_age_s = 0;
	assert_int_equal(mxprofile_sessions_max(&p), 3);
	p.sessions_max_age_s = MXPROFILE_SESSIONS_MAX_TTL_S - 1;
	assert_int_equal(mxprofile_sessions_max(&p), 3);
	p.sessions_max_age_s = MXPROFILE_SESSIONS_MAX_TTL_S;
	assert_int_equal(mxprofile_sessions_max(&p), -1);
	p.sessions_max_age_s = -5;		/* another node's clock */
	assert_int_equal(mxprofile_sessions_max(&p), 3);
	p.sessions_max_at[0] = '\0';		/* no time: not applied */
	p.sessions_max_age_s = 0;
	assert_int_equal(mxprofile_sessions_max(&p), -1);
	strcpy(p.sessions_max_at, "2026-11-29 10:00:00.000");
	p.sessions_max_age_s = 10;
	p.sessions_max = 0;			/* nonsense: not applied */
	assert_int_equal(mxprofile_sessions_max(&p), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_knows_nothing),
		cmocka_unit_test(test_merge_later_wins_where_it_knows),
		cmocka_unit_test(test_sessions_max_holds_a_day),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
