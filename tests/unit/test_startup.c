/* test_startup.c: the first steps of every program (src/util/startup.c):
 * which svc.conf is read (-c, $SVC_CONF, the default path), which missing
 * file is an error, the messages a program prints before it exits, the
 * configuration freed on failure, and the log opened at log_level in
 * log_file only for a program that asks (svcadm does not). Files live in a
 * mkdtemp folder. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/log.h"
#include "util/startup.h"

static char dir[64];
static char conf_path[128], absent_path[128], log_path[128];

static int
tmp_setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_startup.XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(conf_path, sizeof(conf_path), "%s/svc.conf", dir);
	snprintf(absent_path, sizeof(absent_path), "%s/absent.conf", dir);
	snprintf(log_path, sizeof(log_path), "%s/svc.log", dir);
	return 0;
}

static int
tmp_teardown(void **state)
{
	(void)state;
	unlink(conf_path);
	unlink(log_path);
	rmdir(dir);
	return 0;
}

static void
write_conf(const char *text)
{
	FILE *f = fopen(conf_path, "w");

	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

enum where {
	WHERE_OPTION,		/* -c PATH */
	WHERE_ENV,		/* $SVC_CONF, no -c */
	WHERE_BOTH,		/* -c PATH wins over $SVC_CONF=absent */
	WHERE__MAX
};

struct startup_case {
	const char	*name;
	const char	*text;		/* svc.conf, NULL: no such file */
	enum where	 where;
	const char	*prog;		/* NULL: svcadm's way, no log */
	int		 rc;
	const char	*err;		/* "%s" stands for the file */
	long		 workers;	/* api_workers read, when rc is 0 */
};

static const struct startup_case cases[] = {
	{ "a file named with -c must exist", NULL, WHERE_OPTION, "svc-api",
	  -1, "%s: No such file or directory", 0 },
	{ "a file named by $SVC_CONF must exist", NULL, WHERE_ENV,
	  "svc-worker", -1, "%s: No such file or directory", 0 },
	{ "$SVC_CONF is read without -c", "api_workers = 7\n", WHERE_ENV,
	  "svc-api", 0, "", 7 },
	{ "-c wins over $SVC_CONF", "api_workers = 9\n", WHERE_BOTH,
	  "svc-api", 0, "", 9 },
	{ "an error of the file names it", "api_workers = 0\n",
	  WHERE_OPTION, "svc-api", -1,
	  "%s:1: api_workers: \"0\" is not an integer in 1..512", 0 },
	{ "an unknown log_level stops svc-api", "log_level = loud\n",
	  WHERE_OPTION, "svc-api", -1,
	  "log_level: error, warn, info or debug", 0 },
	{ "an unknown log_level stops svc-worker", "log_level = loud\n",
	  WHERE_ENV, "svc-worker", -1,
	  "log_level: error, warn, info or debug", 0 },
	{ "svcadm does not read log_level",
	  "log_level = loud\napi_workers = 3\n", WHERE_OPTION, NULL, 0, "",
	  3 },
};

static void
test_startup_finds_the_file_and_fails_with_its_messages(void **state)
{
	size_t i, k;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct startup_case *t = &cases[i];
		const char *file = t->text ? conf_path : absent_path;
		struct conf c;
		struct buf err;
		char want[256];

		print_message("case %zu: %s\n", i, t->name);
		unlink(conf_path);
		if (t->text)
			write_conf(t->text);
		if (t->where == WHERE_OPTION)
			unsetenv("SVC_CONF");
		else
			setenv("SVC_CONF", t->where == WHERE_ENV ? file :
			    absent_path, 1);
		buf_init(&err, 1024);
		assert_int_equal(startup(&c, t->where == WHERE_ENV ? NULL :
		    file, t->prog, &err), t->rc);
		snprintf(want, sizeof(want), t->err, file);
		assert_string_equal(buf_str(&err), want);
		if (t->rc == 0) {
			assert_string_equal(c.path, file);
			assert_int_equal(conf_int(&c, CONF_API_WORKERS),
			    t->workers);
		}
		/* Freed on failure: nothing is left for the caller. */
		for (k = 0; t->rc == -1 && k < CONF__MAX; k++)
			assert_null(c.str[k]);
		conf_free(&c);
		buf_free(&err);
	}
	unsetenv("SVC_CONF");
}

/* Counts the lines of log_path that contain s (0 without the file). */
static int
log_lines_with(const char *s)
{
	char line[4096];
	FILE *f = fopen(log_path, "r");
	int n = 0;

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, s) != NULL)
			n++;
	fclose(f);
	return n;
}

static void
test_startup_opens_the_log_only_for_a_program_that_asks(void **state)
{
	struct conf c;
	struct buf err;
	char text[256];

	(void)state;
	snprintf(text, sizeof(text), "log_level = warn\nlog_file = %s\n",
	    log_path);
	write_conf(text);
	buf_init(&err, 1024);
	/* svcadm's way: the log stays where it was (stderr). */
	assert_int_equal(startup(&c, conf_path, NULL, &err), 0);
	log_warn("event=before");
	assert_int_equal(access(log_path, F_OK), -1);
	conf_free(&c);
	/* A daemon's: log_file at log_level, lines named after it. */
	assert_int_equal(startup(&c, conf_path, "test-prog", &err), 0);
	log_info("event=below_the_level");
	log_warn("event=at_the_level");
	assert_int_equal(log_lines_with("event=before"), 0);
	assert_int_equal(log_lines_with("event=below_the_level"), 0);
	assert_int_equal(log_lines_with("test-prog["), 1);
	assert_int_equal(log_lines_with("event=at_the_level"), 1);
	conf_free(&c);
	buf_free(&err);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
		    test_startup_finds_the_file_and_fails_with_its_messages),
		cmocka_unit_test(
		    test_startup_opens_the_log_only_for_a_program_that_asks),
	};

	return cmocka_run_group_tests_name("startup", tests, tmp_setup,
	    tmp_teardown);
}
