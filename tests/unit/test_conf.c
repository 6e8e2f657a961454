/* test_conf.c: the svc.conf reader: defaults from the table, range and type
 * errors naming file:line and the setting, unknown and repeated names,
 * comments and white space, the 0600 db_password_file, conf_set, and
 * conf_load on real files (missing, present). Text is fed through
 * conf_load_stream and fmemopen; files live in a mkdtemp folder. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/conf.h"
#include "util/strparse.h"

/* Parses text as a file called "t.conf"; returns conf_load_stream's result
 * with the error text in err (max 1024, as the programs use). */
static int
load_text(struct conf *c, const char *text, struct buf *err)
{
	FILE *f;
	int rc;

	buf_init(err, 1024);
	f = fmemopen((void *)text, strlen(text), "r");
	assert_non_null(f);
	rc = conf_load_stream(c, f, "t.conf", err);
	fclose(f);
	return rc;
}

static void
test_conf_defaults_match_the_table_and_lie_in_range(void **state)
{
	struct conf c;
	long v;
	int i, b;

	(void)state;
	conf_defaults(&c);
	assert_string_equal(c.path, "");
	for (i = 0; i < CONF__MAX; i++) {
		const struct conf_setting *s = &conf_settings[i];

		print_message("setting %s\n", s->name);
		assert_non_null(s->name);
		assert_non_null(s->def);
		assert_non_null(s->help);
		assert_string_equal(conf_str(&c, (enum conf_key)i), s->def);
		switch (s->type) {
		case CONF_TYPE_INT:
			assert_true(s->min <= s->max);
			assert_int_equal(strparse_long(s->def, s->min, s->max,
			    &v), 0);
			assert_int_equal(conf_int(&c, (enum conf_key)i), v);
			break;
		case CONF_TYPE_BOOL:
			assert_int_equal(strparse_bool(s->def, &b), 0);
			assert_int_equal(conf_int(&c, (enum conf_key)i), b);
			break;
		case CONF_TYPE_DURATIONS:
			assert_true(conf_int(&c, (enum conf_key)i) >= 1);
			break;
		default:
			break;
		}
	}
	assert_int_equal(conf_int(&c, CONF_DB_PORT), 3306);
	assert_int_equal(conf_int(&c, CONF_ALLOW_PRIVATE_MX), 0);
	assert_string_equal(conf_str(&c, CONF_DB_NAME), "svc");
	conf_free(&c);
}

static void
test_conf_setting_names_are_unique(void **state)
{
	int i, j;

	(void)state;
	for (i = 0; i < CONF__MAX; i++)
		for (j = i + 1; j < CONF__MAX; j++)
			assert_string_not_equal(conf_settings[i].name,
			    conf_settings[j].name);
}

static void
test_conf_empty_stream_gives_defaults_and_records_name(void **state)
{
	struct conf c;
	struct buf err;

	(void)state;
	assert_int_equal(load_text(&c, "", &err), 0);
	assert_string_equal(buf_str(&err), "");
	assert_string_equal(c.path, "t.conf");
	assert_int_equal(conf_int(&c, CONF_SMTP_PORT), 25);
	conf_free(&c);
	buf_free(&err);
}

static void
test_conf_reads_every_type_with_comments_blank_lines_and_crlf(void **state)
{
	static const char text[] =
	    "# svc.conf\n"
	    "\n"
	    "   # indented comment\n"
	    "db_host=db.internal\n"
	    "  db_port   =   3307  \n"
	    "\t\n"
	    "allow_private_mx = YES\r\n"
	    "allow_private_urls = off\r\n"
	    "db_password = pa#ss=word\n"	/* '#' inside a value is kept */
	    "base_url = https://x.example/?a=b\n"
	    "log_file =\n"
	    "smtp_port = 2525";		/* last line without newline */
	struct conf c;
	struct buf err;

	(void)state;
	assert_int_equal(load_text(&c, text, &err), 0);
	assert_string_equal(buf_str(&err), "");
	assert_string_equal(conf_str(&c, CONF_DB_HOST), "db.internal");
	assert_int_equal(conf_int(&c, CONF_DB_PORT), 3307);
	assert_string_equal(conf_str(&c, CONF_DB_PORT), "3307");
	assert_int_equal(conf_int(&c, CONF_ALLOW_PRIVATE_MX), 1);
	assert_int_equal(conf_int(&c, CONF_ALLOW_PRIVATE_URLS), 0);
	assert_string_equal(conf_str(&c, CONF_DB_PASSWORD), "pa#ss=word");
	assert_string_equal(conf_str(&c, CONF_BASE_URL),
	    "https://x.example/?a=b");
	assert_string_equal(conf_str(&c, CONF_LOG_FILE), "");
	assert_int_equal(conf_int(&c, CONF_SMTP_PORT), 2525);
	/* untouched settings keep their defaults */
	assert_string_equal(conf_str(&c, CONF_DB_NAME), "svc");
	conf_free(&c);
	buf_free(&err);
}

/* Every INT setting: its bounds are accepted, one past them and junk are
 * refused with "t.conf:3: <name>: ..." (two comment lines come first). */
static void
test_conf_int_settings_refuse_out_of_range_with_file_and_line(void **state)
{
	int i;
	size_t j;

	(void)state;
	for (i = 0; i < CONF__MAX; i++) {
		const struct conf_setting *s = &conf_settings[i];
		char good[2][32], bad[6][32], text[256], want[128];
		struct conf c;
		struct buf err;

		if (s->type != CONF_TYPE_INT)
			continue;
		snprintf(good[0], sizeof(good[0]), "%ld", s->min);
		snprintf(good[1], sizeof(good[1]), "%ld", s->max);
		snprintf(bad[0], sizeof(bad[0]), "%ld", s->min - 1);
		snprintf(bad[1], sizeof(bad[1]), "%ld", s->max + 1);
		snprintf(bad[2], sizeof(bad[2]), "%s", "many");
		snprintf(bad[3], sizeof(bad[3]), "%s", "");
		snprintf(bad[4], sizeof(bad[4]), "%ld0", s->max);
		snprintf(bad[5], sizeof(bad[5]), "%ld.5", s->min);
		for (j = 0; j < 2; j++) {
			snprintf(text, sizeof(text), "#\n#\n%s = %s\n",
			    s->name, good[j]);
			assert_int_equal(load_text(&c, text, &err), 0);
			assert_string_equal(conf_str(&c, (enum conf_key)i),
			    good[j]);
			conf_free(&c);
			buf_free(&err);
		}
		for (j = 0; j < 6; j++) {
			print_message("%s = \"%s\"\n", s->name, bad[j]);
			snprintf(text, sizeof(text), "#\n#\n%s = %s\n",
			    s->name, bad[j]);
			assert_int_equal(load_text(&c, text, &err), -1);
			snprintf(want, sizeof(want),
			    "t.conf:3: %s: \"%s\" is not an integer in "
			    "%ld..%ld", s->name, bad[j], s->min, s->max);
			assert_string_equal(buf_str(&err), want);
			conf_free(&c);
			buf_free(&err);
		}
	}
}

static void
test_conf_bool_settings_refuse_other_words_with_file_and_line(void **state)
{
	static const char *const bad[] = { "maybe", "2", "", "y", "yes please" };
	int i;
	size_t j;

	(void)state;
	for (i = 0; i < CONF__MAX; i++) {
		const struct conf_setting *s = &conf_settings[i];
		char text[256], want[256];
		struct conf c;
		struct buf err;

		if (s->type != CONF_TYPE_BOOL)
			continue;
		for (j = 0; j < sizeof(bad) / sizeof(bad[0]); j++) {
			snprintf(text, sizeof(text), "db_name = x\n%s = %s\n",
			    s->name, bad[j]);
			assert_int_equal(load_text(&c, text, &err), -1);
			snprintf(want, sizeof(want),
			    "t.conf:2: %s: \"%s\" is not yes or no", s->name,
			    bad[j]);
			assert_string_equal(buf_str(&err), want);
			conf_free(&c);
			buf_free(&err);
		}
	}
}

struct errcase {
	const char	*text;
	const char	*want;		/* whole error message */
};

static const struct errcase err_cases[] = {
	{ "nosuch = 1\n", "t.conf:1: unknown setting \"nosuch\"" },
	{ "# c\nDB_PORT = 1\n", "t.conf:2: unknown setting \"DB_PORT\"" },
	{ "db port = 1\n", "t.conf:1: unknown setting \"db port\"" },
	{ "= 1\n", "t.conf:1: unknown setting \"\"" },
	{ "db_port\n", "t.conf:1: expected \"name = value\"" },
	{ "\n\n\njust words\n", "t.conf:4: expected \"name = value\"" },
	{ "db_port = 1\ndb_port = 1\n", "t.conf:2: \"db_port\" is set twice" },
	{ "db_name = a\n#\ndb_name = b\n",
	  "t.conf:3: \"db_name\" is set twice" },
	{ "db_name = a\n db_name=a", "t.conf:2: \"db_name\" is set twice" },
	{ "db_port = 1\nsmtp_port = 0\n",
	  "t.conf:2: smtp_port: \"0\" is not an integer in 1..65535" },
	{ "webhook_retry_schedule = 1m 5x\n",
	  "t.conf:1: webhook_retry_schedule: \"1m 5x\" is not a list of 1 "
	  "to 20 durations (1s to 30d)" },
	{ "webhook_retry_schedule =\n",
	  "t.conf:1: webhook_retry_schedule: \"\" is not a list of 1 "
	  "to 20 durations (1s to 30d)" },
	{ "webhook_retry_schedule = 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 "
	  "17 18 19 20 21\n",
	  "t.conf:1: webhook_retry_schedule: \"1 2 3 4 5 6 7 8 9 10 11 12 13 "
	  "14 15 16 17 18 19 20 21\" is not a list of 1 to 20 durations (1s "
	  "to 30d)" },
};

static void
test_conf_durations_count_their_entries(void **state)
{
	struct conf c;
	struct buf err;

	(void)state;
	conf_defaults(&c);
	assert_int_equal(conf_int(&c, CONF_WEBHOOK_RETRY_SCHEDULE), 7);
	conf_free(&c);
	assert_int_equal(load_text(&c, "webhook_retry_schedule = 2, 3s\n",
	    &err), 0);
	assert_int_equal(conf_int(&c, CONF_WEBHOOK_RETRY_SCHEDULE), 2);
	assert_string_equal(conf_str(&c, CONF_WEBHOOK_RETRY_SCHEDULE), "2, 3s");
	conf_free(&c);
	buf_free(&err);
}

static void
test_conf_reports_unknown_malformed_and_repeated_lines(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(err_cases) / sizeof(err_cases[0]); i++) {
		struct conf c;
		struct buf err;

		print_message("case %zu\n", i);
		assert_int_equal(load_text(&c, err_cases[i].text, &err), -1);
		assert_string_equal(buf_str(&err), err_cases[i].want);
		conf_free(&c);
		buf_free(&err);
	}
}

static void
test_conf_refuses_line_longer_than_reader_buffer(void **state)
{
	struct conf c;
	struct buf err;
	char *text;
	size_t n = 5000;

	(void)state;
	text = malloc(n + 32);
	assert_non_null(text);
	memcpy(text, "db_name = x\ndb_host = ", 22);
	memset(text + 22, 'h', n);
	memcpy(text + 22 + n, "\n", 2);
	assert_int_equal(load_text(&c, text, &err), -1);
	assert_string_equal(buf_str(&err), "t.conf:2: line too long");
	conf_free(&c);
	buf_free(&err);
	free(text);
}

/* A long bad value or name still gives a message that names the line and
 * the setting and fits the 1024-byte error buffer the programs use. */
static void
test_conf_error_for_long_value_or_name_keeps_file_line_and_setting(void **state)
{
	static const char *const around[][2] = {
		{ "api_workers = ", "\n" },		/* bad integer */
		{ "allow_private_mx = ", "\n" },	/* bad boolean */
		{ "", " = 1\n" },			/* unknown name */
	};
	static const char *const want[] = {
		"t.conf:1: api_workers: \"xxxxxxxxxx",
		"t.conf:1: allow_private_mx: \"xxxxxxxxxx",
		"t.conf:1: unknown setting \"xxxxxxxxxx",
	};
	size_t i, n;

	(void)state;
	for (i = 0; i < 3; i++)
		for (n = 900; n <= 4000; n += 1100) {
			char *text = malloc(n + 64), *x = malloc(n + 1);
			struct conf c;
			struct buf err;

			assert_non_null(text);
			assert_non_null(x);
			memset(x, 'x', n);
			x[n] = '\0';
			snprintf(text, n + 64, "%s%s%s", around[i][0], x,
			    around[i][1]);
			print_message("case %zu, %zu bytes\n", i, n);
			assert_int_equal(load_text(&c, text, &err), -1);
			assert_true(strncmp(buf_str(&err), want[i],
			    strlen(want[i])) == 0);
			assert_true(err.len < 256);
			conf_free(&c);
			buf_free(&err);
			free(text);
			free(x);
		}
}

/* A folder of temporary files, removed at the end of each test. */
struct tmp {
	char	dir[64];
	char	path[3][128];
};

static int
tmp_setup(void **state)
{
	struct tmp *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return -1;
	snprintf(t->dir, sizeof(t->dir), "/tmp/test_conf.XXXXXX");
	if (mkdtemp(t->dir) == NULL)
		return -1;
	snprintf(t->path[0], sizeof(t->path[0]), "%s/svc.conf", t->dir);
	snprintf(t->path[1], sizeof(t->path[1]), "%s/dbpass", t->dir);
	snprintf(t->path[2], sizeof(t->path[2]), "%s/absent", t->dir);
	*state = t;
	return 0;
}

static int
tmp_teardown(void **state)
{
	struct tmp *t = *state;

	unlink(t->path[0]);
	unlink(t->path[1]);
	rmdir(t->dir);
	free(t);
	return 0;
}

static void
write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, mode), 0);
}

static void
test_conf_load_missing_file_is_defaults_unless_it_must_exist(void **state)
{
	struct tmp *t = *state;
	struct conf c;
	struct buf err;
	char want[256];

	buf_init(&err, 1024);
	assert_int_equal(conf_load(&c, t->path[2], 0, &err), 0);
	assert_string_equal(buf_str(&err), "");
	assert_string_equal(c.path, "");
	assert_string_equal(conf_str(&c, CONF_DB_USER), "svc");
	conf_free(&c);
	assert_int_equal(conf_load(&c, t->path[2], 1, &err), -1);
	snprintf(want, sizeof(want), "%s: %s", t->path[2], strerror(ENOENT));
	assert_string_equal(buf_str(&err), want);
	conf_free(&c);
	buf_free(&err);
}

static void
test_conf_load_names_the_file_and_line_of_an_error(void **state)
{
	struct tmp *t = *state;
	struct conf c;
	struct buf err;
	char want[256];

	write_file(t->path[0], "# x\napi_workers = 4\napi_workers = 5\n", 0644);
	buf_init(&err, 1024);
	assert_int_equal(conf_load(&c, t->path[0], 1, &err), -1);
	snprintf(want, sizeof(want), "%s:3: \"api_workers\" is set twice",
	    t->path[0]);
	assert_string_equal(buf_str(&err), want);
	conf_free(&c);
	buf_reset(&err);
	write_file(t->path[0], "api_workers = 513\n", 0644);
	assert_int_equal(conf_load(&c, t->path[0], 1, &err), -1);
	snprintf(want, sizeof(want),
	    "%s:1: api_workers: \"513\" is not an integer in 1..512",
	    t->path[0]);
	assert_string_equal(buf_str(&err), want);
	conf_free(&c);
	buf_reset(&err);
	write_file(t->path[0], "api_workers = 512\n", 0644);
	assert_int_equal(conf_load(&c, t->path[0], 1, &err), 0);
	assert_int_equal(conf_int(&c, CONF_API_WORKERS), 512);
	assert_string_equal(c.path, t->path[0]);
	conf_free(&c);
	buf_free(&err);
}

static void
test_conf_db_password_file_supplies_trimmed_first_line(void **state)
{
	struct tmp *t = *state;
	struct conf c;
	struct buf err;
	struct stat st;
	char text[256];

	write_file(t->path[1], "  s3cr#t=pw \t\nsecond line\n", 0600);
	assert_int_equal(stat(t->path[1], &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	snprintf(text, sizeof(text), "db_password_file = %s\n", t->path[1]);
	write_file(t->path[0], text, 0644);
	buf_init(&err, 1024);
	assert_int_equal(conf_load(&c, t->path[0], 1, &err), 0);
	assert_string_equal(buf_str(&err), "");
	assert_string_equal(conf_str(&c, CONF_DB_PASSWORD), "s3cr#t=pw");
	assert_string_equal(conf_str(&c, CONF_DB_PASSWORD_FILE), t->path[1]);
	conf_free(&c);
	/* An empty file is an empty password, not an error. */
	write_file(t->path[1], "", 0600);
	assert_int_equal(conf_load(&c, t->path[0], 1, &err), 0);
	assert_string_equal(conf_str(&c, CONF_DB_PASSWORD), "");
	conf_free(&c);
	buf_free(&err);
}

static void
test_conf_db_password_file_that_cannot_be_read_is_an_error(void **state)
{
	struct tmp *t = *state;
	struct conf c;
	struct buf err;
	char text[256], want[256];

	snprintf(text, sizeof(text), "db_password_file = %s\n", t->path[2]);
	write_file(t->path[0], text, 0644);
	buf_init(&err, 1024);
	assert_int_equal(conf_load(&c, t->path[0], 1, &err), -1);
	snprintf(want, sizeof(want), "db_password_file %s: %s", t->path[2],
	    strerror(ENOENT));
	assert_string_equal(buf_str(&err), want);
	conf_free(&c);
	buf_free(&err);
}

struct setcase {
	const char	*name, *value;
	int		 want;
	const char	*err;		/* whole message when refused */
};

static const struct setcase set_cases[] = {
	{ "smtp_port", "2525", 0, NULL },
	{ "smtp_port", "65536", -1,
	  "smtp_port: \"65536\" is not an integer in 1..65535" },
	{ "dns_timeout_ms", "99", -1,
	  "dns_timeout_ms: \"99\" is not an integer in 100..60000" },
	{ "allow_private_urls", "true", 0, NULL },
	{ "allow_private_urls", "perhaps", -1,
	  "allow_private_urls: \"perhaps\" is not yes or no" },
	{ "dns_resolver", "127.0.0.1:5353", 0, NULL },
	{ "no_such_setting", "1", -1, "unknown setting \"no_such_setting\"" },
};

static void
test_conf_set_applies_file_checks_and_keeps_old_value_on_error(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(set_cases) / sizeof(set_cases[0]); i++) {
		const struct setcase *s = &set_cases[i];
		struct conf c;
		struct buf err;
		char before[256];
		int k;

		print_message("case %zu: %s = %s\n", i, s->name, s->value);
		conf_defaults(&c);
		buf_init(&err, 1024);
		for (k = 0; k < CONF__MAX; k++)
			if (strcmp(conf_settings[k].name, s->name) == 0)
				break;
		if (k < CONF__MAX)
			snprintf(before, sizeof(before), "%s",
			    conf_str(&c, (enum conf_key)k));
		assert_int_equal(conf_set(&c, s->name, s->value, &err),
		    s->want);
		if (s->want == 0) {
			assert_string_equal(conf_str(&c, (enum conf_key)k),
			    s->value);
			assert_string_equal(buf_str(&err), "");
		} else {
			assert_string_equal(buf_str(&err), s->err);
			if (k < CONF__MAX)
				assert_string_equal(conf_str(&c,
				    (enum conf_key)k), before);
		}
		conf_free(&c);
		buf_free(&err);
	}
}

static void
test_conf_set_updates_numeric_value(void **state)
{
	struct conf c;
	struct buf err;

	(void)state;
	conf_defaults(&c);
	buf_init(&err, 1024);
	assert_int_equal(conf_set(&c, "worker_lease_seconds", "300", &err), 0);
	assert_int_equal(conf_int(&c, CONF_WORKER_LEASE_SECONDS), 300);
	assert_int_equal(conf_set(&c, "allow_private_mx", "on", &err), 0);
	assert_int_equal(conf_int(&c, CONF_ALLOW_PRIVATE_MX), 1);
	assert_int_equal(conf_set(&c, "allow_private_mx", "0", &err), 0);
	assert_int_equal(conf_int(&c, CONF_ALLOW_PRIVATE_MX), 0);
	conf_free(&c);
	buf_free(&err);
}

static void
test_conf_dump_hides_the_password_but_shows_the_rest(void **state)
{
	struct conf c;
	struct buf err;
	char *out = NULL;
	size_t outlen = 0;
	FILE *f;

	(void)state;
	assert_int_equal(load_text(&c, "db_password = hunter2\n"
	    "db_user = app\n", &err), 0);
	f = open_memstream(&out, &outlen);
	assert_non_null(f);
	conf_dump(&c, f);
	fclose(f);
	assert_null(strstr(out, "hunter2"));
	assert_non_null(strstr(out, "\ndb_password = (hidden)\n"));
	assert_non_null(strstr(out, "\ndb_user = app\n"));
	assert_non_null(strstr(out, "(file: t.conf)"));
	free(out);
	conf_free(&c);
	buf_free(&err);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conf_defaults_match_the_table_and_lie_in_range),
		cmocka_unit_test(test_conf_setting_names_are_unique),
		cmocka_unit_test(test_conf_empty_stream_gives_defaults_and_records_name),
		cmocka_unit_test(test_conf_reads_every_type_with_comments_blank_lines_and_crlf),
		cmocka_unit_test(test_conf_int_settings_refuse_out_of_range_with_file_and_line),
		cmocka_unit_test(test_conf_bool_settings_refuse_other_words_with_file_and_line),
		cmocka_unit_test(test_conf_reports_unknown_malformed_and_repeated_lines),
		cmocka_unit_test(test_conf_durations_count_their_entries),
		cmocka_unit_test(test_conf_refuses_line_longer_than_reader_buffer),
		cmocka_unit_test(test_conf_error_for_long_value_or_name_keeps_file_line_and_setting),
		cmocka_unit_test_setup_teardown(test_conf_load_missing_file_is_defaults_unless_it_must_exist, tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(test_conf_load_names_the_file_and_line_of_an_error, tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(test_conf_db_password_file_supplies_trimmed_first_line, tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(test_conf_db_password_file_that_cannot_be_read_is_an_error, tmp_setup, tmp_teardown),
		cmocka_unit_test(test_conf_set_applies_file_checks_and_keeps_old_value_on_error),
		cmocka_unit_test(test_conf_set_updates_numeric_value),
		cmocka_unit_test(test_conf_dump_hides_the_password_but_shows_the_rest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
