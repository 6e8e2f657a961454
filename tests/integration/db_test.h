/* db_test.h: what the cmocka programs that test against the test stack's
 * MariaDB share (db_ledger.c, db_jobqueue.c): the svc.conf that SVC_CONF
 * names, read once by db_test_setup, and a connection to its database.
 * Header only (each test program is one file); include it after cmocka.h
 * and unit_skip.h. */
#ifndef SVC_TESTS_DB_TEST_H
#define SVC_TESTS_DB_TEST_H
#include "core/db.h"
#include "util/buf.h"
#include "util/conf.h"
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static struct conf conf;

/* A connection to the test database; fails the test without one. */
static struct db *
open_db(void)
{
	struct db *db;
	struct buf err;

	buf_init(&err, 1024);
	if (db_open(&conf, 1, &db, &err) != DB_OK) {
		fprintf(stderr, "db_open: %s\n", buf_str(&err));
		fail();
	}
	buf_free(&err);
	return db;
}

/* main's start: reads SVC_CONF; 0 to run the tests, or -1 with *status
 * main's exit status (a skip without SVC_CONF, which name's test script
 * sets; 1 when it cannot be read). */
static int
db_test_setup(const char *name, const char *script, int *status)
{
	struct buf err;
	const char *path = getenv("SVC_CONF");
	char why[256];

	if (path == NULL) {
		snprintf(why, sizeof(why), "%s needs SVC_CONF naming a test "
		    "svc.conf (%s)", name, script);
		*status = unit_skip_rest(0, why);
		return -1;
	}
	buf_init(&err, 1024);
	if (conf_load(&conf, path, 1, &err) == -1) {
		fprintf(stderr, "%s: %s: %s\n", name, path, buf_str(&err));
		buf_free(&err);
		*status = 1;
		return -1;
	}
	buf_free(&err);
	srand((unsigned)getpid());
	return 0;
}
#endif
