/* test_lists_update.c: "svcadm lists update" with stand-in fetch scripts:
 * a script that writes the lists (counts printed, success), one that
 * fails or is killed (error, folder unchanged), a missing script, and the
 * check of a folder whose fetched lists are empty; and the refresh of the
 * rule tables (lists_rules.h) with a stand-in download: the shipped
 * tables pass the check, broken, empty and too small ones are refused,
 * and a refresh installs all three tables (new files, RULES_SOURCES,
 * local/ untouched) or, when one fails, none. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "admin/lists_rules.h"
#include "admin/lists_update.h"

static const struct lists_rules_source no_rules = { "", "", NULL };

static char dir[] = "/tmp/test_lists_update.XXXXXX";
static char lists[600], script[600];

static void
write_file(const char *path, const char *text)
{
	FILE *f;

	assert_non_null(f = fopen(path, "w"));
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

static int
setup(void **state)
{
	char cmd[700];

	(void)state;
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(lists, sizeof(lists), "%s/lists", dir);
	snprintf(script, sizeof(script), "%s/fetch", dir);
	snprintf(cmd, sizeof(cmd), "mkdir '%s'", lists);
	return system(cmd) == 0 ? 0 : -1;
}

static int
teardown(void **state)
{
	char cmd[700];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

struct ucase {
	const char		*name;
	const char		*script;	/* NULL: no script file */
	enum lists_update_err	 want;
	const char		*out;		/* expected in the output */
	const char		*err;		/* expected in err */
};

static const struct ucase cases[] = {
	{ "fetch fails", "echo 'fetch-lists: no network' >&2; exit 1\n",
	    LISTS_UPDATE_FETCH, NULL, "failed (exit 1)" },
	{ "fetch killed", "kill -9 $$\n", LISTS_UPDATE_FETCH, NULL,
	    "killed by signal 9" },
	{ "no script", NULL, LISTS_UPDATE_FETCH, NULL, "No such file" },
	{ "fetched lists empty", ": > \"$1/disposable_domains.txt\"\n"
	    ": > \"$1/free_domains.txt\"\n", LISTS_UPDATE_EMPTY,
	    "lists: disposable=0 free=0", "the disposable list is empty" },
	{ "fetch writes lists",
	    "printf 'mailinator.com\\nbad entry\\n' >\"$1/disposable_domains.txt\"\n"
	    "printf 'gmail.com\\n' >\"$1/free_domains.txt\"\n",
	    LISTS_UPDATE_OK, "lists: disposable=1 free=1 role=0 provider=0 "
	    "typo_trap=0 removed=0 skipped=1", NULL },
	{ "no rules url: the tables kept, how to set it said",
	    "exit 0\n", LISTS_UPDATE_OK, "rule tables: lists_rules_url is not "
	    "set; the installed mx_providers.txt, smtp_reply_rules.txt and "
	    "pacing_defaults.txt are kept", NULL },
	{ "running services told", "exit 0\n", LISTS_UPDATE_OK,
	    "note: running svc-api and svc-worker processes keep the lists "
	    "and tables they loaded: send the svc-worker daemon", NULL },
	{ "warnings printed", "exit 0\n", LISTS_UPDATE_OK,
	    "warning: disposable_domains.txt:2: not a valid domain entry, "
	    "skipped\nwarning: role_local_parts.txt: missing", NULL },
	{ "provider table checked",
	    "printf '*.google.com google\\n*.com all\\n' >\"$1/mx_providers.txt\"\n",
	    LISTS_UPDATE_OK, "warning: mx_providers.txt:2: a wildcard needs "
	    "two labels at least (*.example.com), skipped\nproviders: "
	    "patterns=1 skipped=1", NULL },
	{ "reading rules checked too",
	    "printf 'reply * 5xx 5.1.1 mailbox_not_found\\nreply * 650 * x\\n"
	    "accept_all yahoo\\n' >\"$1/smtp_reply_rules.txt\"\n",
	    LISTS_UPDATE_OK, "warning: smtp_reply_rules.txt:2: bad reply code "
	    "(like 550, 45x, 5xx), line skipped\nsmtp_reply_rules: rules=1 "
	    "local=0 accept_all=1 skipped=1", NULL },
};

static void
test_update_runs_the_script_then_checks_the_folder(void **state)
{
	char outbuf[8192];
	struct buf err;
	size_t i;
	FILE *out;
	enum lists_update_err e;

	(void)state;
	buf_init(&err, 4096);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct ucase *c = &cases[i];

		unlink(script);
		if (c->script != NULL)
			write_file(script, c->script);
		memset(outbuf, 0, sizeof(outbuf));
		assert_non_null(out = fmemopen(outbuf, sizeof(outbuf) - 1,
		    "w"));
		buf_reset(&err);
		e = lists_update_run(lists, script, &no_rules, out, &err);
		fclose(out);
		if (e != c->want || (c->out && !strstr(outbuf, c->out)) ||
		    (c->err && !strstr(buf_str(&err), c->err)))
			fail_msg("%s: got %s, out \"%s\", err \"%s\"", c->name,
			    lists_update_err_names[e], outbuf, buf_str(&err));
	}
	buf_free(&err);
}

static void
test_default_script_follows_the_environment(void **state)
{
	(void)state;
	unsetenv("SVC_FETCH_LISTS");
	assert_non_null(strstr(lists_update_script(), "/fetch-lists"));
	setenv("SVC_FETCH_LISTS", "/x/fetch", 1);
	assert_string_equal(lists_update_script(), "/x/fetch");
	unsetenv("SVC_FETCH_LISTS");
}


/* The shipped rule tables (contrib/lists), read once. */
static struct buf shipped[LISTS_RULES_N];

static void
read_shipped(void)
{
	char path[600], chunk[4096];
	size_t t, n;
	FILE *f;

	for (t = 0; t < LISTS_RULES_N; t++) {
		if (shipped[t].len > 0)
			continue;
		buf_init(&shipped[t], 1 << 22);
		snprintf(path, sizeof(path), "%s/%s", LISTS_CURATED_DIR,
		    lists_rules_tables[t].name);
		assert_non_null(f = fopen(path, "r"));
		while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
			assert_int_equal(buf_append(&shipped[t], chunk, n), 0);
		fclose(f);
	}
}

static void
test_shipped_tables_pass_the_check(void **state)
{
	struct buf err;
	size_t t, count;

	(void)state;
	read_shipped();
	buf_init(&err, 4096);
	for (t = 0; t < LISTS_RULES_N; t++) {
		buf_reset(&err);
		if (lists_rules_check(t, buf_str(&shipped[t]), shipped[t].len,
		    &count, &err) != 0)
			fail_msg("%s: %s", lists_rules_tables[t].name,
			    buf_str(&err));
		assert_true(count >= lists_rules_tables[t].min);
	}
	buf_free(&err);
}

struct ccase {
	const char	*name;
	size_t		 table;
	const char	*text;		/* NULL: the shipped table + extra */
	const char	*extra;
	const char	*err;		/* expected in err */
};

static const struct ccase check_cases[] = {
	{ "empty table", 0, "", NULL, "mx_providers.txt is empty" },
	{ "an HTML page", 0, "<html><body>Not found</body></html>\n", NULL,
	    "mx_providers.txt does not parse: mx_providers.txt:1:" },
	{ "a bad line in a whole table", 0, NULL, "*.com everyone\n",
	    "mx_providers.txt does not parse: mx_providers.txt:" },
	{ "too few patterns", 0, "*.google.com google\n", NULL,
	    "mx_providers.txt has 1 patterns, fewer than 10" },
	{ "a bad reply rule", 1, NULL, "reply * 650 * x\n",
	    "smtp_reply_rules.txt does not parse: smtp_reply_rules.txt:" },
	{ "comments only", 1, "# nothing\n\n", NULL,
	    "smtp_reply_rules.txt has 0 rules, fewer than 10" },
	{ "a bad pacing line", 2, NULL, "google fast 60\n",
	    "pacing_defaults.txt does not parse: pacing_defaults.txt:" },
	{ "NUL bytes", 2, "google\0 60 60\n", NULL,
	    "pacing_defaults.txt" },
};

static void
test_broken_tables_are_refused(void **state)
{
	struct buf err, text;
	size_t i, count, len;

	(void)state;
	read_shipped();
	buf_init(&err, 4096);
	buf_init(&text, 1 << 22);
	for (i = 0; i < sizeof(check_cases) / sizeof(check_cases[0]); i++) {
		const struct ccase *c = &check_cases[i];

		buf_reset(&err);
		buf_reset(&text);
		if (c->text == NULL) {
			buf_append(&text, buf_str(&shipped[c->table]),
			    shipped[c->table].len);
			buf_puts(&text, c->extra);
			len = text.len;
		} else {
			len = strlen(c->text);
			if (strcmp(c->name, "NUL bytes") == 0)
				len = 14;
			buf_append(&text, c->text, len);
		}
		if (lists_rules_check(c->table, buf_str(&text), len, &count,
		    &err) != -1 || strstr(buf_str(&err), c->err) == NULL)
			fail_msg("%s: err \"%s\"", c->name, buf_str(&err));
	}
	buf_free(&text);
	buf_free(&err);
}

/* The stand-in download: serves served[t] for a URL ending in table t's
 * name; fails for table fail_at. The URLs asked are noted. */
static const char *served[LISTS_RULES_N];
static size_t served_len[LISTS_RULES_N];
static int fail_at = -1;
static char asked[LISTS_RULES_N][600];

static int
fake_get(const char *url, const char *ca_file, struct buf *body,
    struct buf *err)
{
	size_t t, ul = strlen(url), nl;

	assert_string_equal(ca_file, "/test/ca.pem");
	buf_reset(body);
	for (t = 0; t < LISTS_RULES_N; t++) {
		nl = strlen(lists_rules_tables[t].name);
		if (ul > nl && strcmp(url + ul - nl,
		    lists_rules_tables[t].name) == 0)
			break;
	}
	assert_true(t < LISTS_RULES_N);
	snprintf(asked[t], sizeof(asked[t]), "%s", url);
	if ((int)t == fail_at) {
		buf_printf(err, "%s: Connection refused", url);
		return -1;
	}
	return buf_append(body, served[t], served_len[t]);
}

/* The content of dir/name ("" when missing) into b. */
static void
read_into(const char *name, struct buf *b)
{
	char path[700], chunk[4096];
	size_t n;
	FILE *f;

	buf_reset(b);
	snprintf(path, sizeof(path), "%s/%s", lists, name);
	if ((f = fopen(path, "r")) == NULL)
		return;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		assert_int_equal(buf_append(b, chunk, n), 0);
	fclose(f);
}

/* 1 when the folder has a staged file (".NAME.new.PID") left. */
static int
staged_left(void)
{
	char cmd[700];

	snprintf(cmd, sizeof(cmd), "ls -a '%s' | grep -q '\\.new\\.'", lists);
	return system(cmd) == 0;
}

/* stat of the folder's file name (which must exist) */
static struct stat
stat_of(const char *name)
{
	char path[700];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", lists, name);
	assert_int_equal(stat(path, &st), 0);
	return st;
}

static ino_t
inode_of(const char *name)
{
	return stat_of(name).st_ino;
}

static mode_t
mode_of(const char *name)
{
	return stat_of(name).st_mode & 07777;
}

/* The URL shown (messages, RULES_SOURCES) without its user and password. */
static void
test_url_shown_without_password(void **state)
{
	char out[256];

	(void)state;
	lists_rules_url_shown("https://u:p@w@mirror.test/svc/a.txt", out,
	    sizeof(out));
	assert_string_equal(out, "https://mirror.test/svc/a.txt");
	lists_rules_url_shown("https://mirror.test/a@b/x.txt", out,
	    sizeof(out));
	assert_string_equal(out, "https://mirror.test/a@b/x.txt");
	lists_rules_url_shown("https://mirror.test", out, sizeof(out));
	assert_string_equal(out, "https://mirror.test");
	lists_rules_url_shown("no scheme", out, sizeof(out));
	assert_string_equal(out, "no scheme");
}

static void
test_rule_tables_install_all_or_none(void **state)
{
	static const char newer[] = "*.mx.newprov.test newprov\n";
	struct lists_rules_source src = { "https://rules.test/svc/",
	    "/test/ca.pem", fake_get };
	char local[4096], outbuf[8192];
	struct buf err, got, newmx, before[LISTS_RULES_N];
	size_t t;
	ino_t ino;
	mode_t mask;
	FILE *out;

	(void)state;
	read_shipped();
	buf_init(&err, 4096);
	buf_init(&got, 1 << 22);
	buf_init(&newmx, 1 << 22);
	buf_append(&newmx, buf_str(&shipped[0]), shipped[0].len);
	buf_puts(&newmx, newer);
	/* the installed tables: the shipped ones; an operator's override */
	snprintf(local, sizeof(local), "mkdir -p '%s/local' && cp '%s/%s' "
	    "'%s/%s' '%s/%s' '%s' && echo '*.mx.newprov.test mine' > "
	    "'%s/local/mx_providers.txt'", lists, LISTS_CURATED_DIR,
	    "mx_providers.txt", LISTS_CURATED_DIR, "smtp_reply_rules.txt",
	    LISTS_CURATED_DIR, "pacing_defaults.txt", lists, lists);
	assert_int_equal(system(local), 0);
	for (t = 0; t < LISTS_RULES_N; t++) {
		buf_init(&before[t], 1 << 22);
		read_into(lists_rules_tables[t].name, &before[t]);
		served[t] = buf_str(&shipped[t]);
		served_len[t] = shipped[t].len;
	}
	served[0] = buf_str(&newmx);
	served_len[0] = newmx.len;

	/* a broken second table: nothing installed */
	served[1] = "reply * 650 * x\n";
	served_len[1] = strlen(served[1]);
	buf_reset(&err);
	assert_int_equal(lists_rules_update(lists, &src, stdout, &err),
	    LISTS_RULES_CHECK);
	assert_non_null(strstr(buf_str(&err), "smtp_reply_rules.txt does "
	    "not parse"));
	assert_non_null(strstr(buf_str(&err), "are unchanged"));
	read_into("mx_providers.txt", &got);
	assert_string_equal(buf_str(&got), buf_str(&before[0]));
	assert_false(staged_left());
	served[1] = buf_str(&shipped[1]);
	served_len[1] = shipped[1].len;

	/* the third download fails: nothing installed */
	fail_at = 2;
	buf_reset(&err);
	assert_int_equal(lists_rules_update(lists, &src, stdout, &err),
	    LISTS_RULES_FETCH);
	assert_non_null(strstr(buf_str(&err), "Connection refused"));
	read_into("mx_providers.txt", &got);
	assert_string_equal(buf_str(&got), buf_str(&before[0]));
	read_into(LISTS_RULES_SOURCES, &got);
	assert_int_equal(got.len, 0);
	fail_at = -1;

	/* not https: refused before any download */
	src.url = "http://rules.test/svc";
	memset(asked, 0, sizeof(asked));
	buf_reset(&err);
	assert_int_equal(lists_rules_update(lists, &src, stdout, &err),
	    LISTS_RULES_URL);
	assert_string_equal(asked[0], "");

	/* all good: each table replaced by a new file (renamed, not
	 * rewritten) readable by the services whatever root's umask, the
	 * sources noted without the URL's password, local/ untouched */
	src.url = "https://mirror:s3cr@t@rules.test/svc";
	ino = inode_of("mx_providers.txt");
	memset(outbuf, 0, sizeof(outbuf));
	assert_non_null(out = fmemopen(outbuf, sizeof(outbuf) - 1, "w"));
	buf_reset(&err);
	mask = umask(077);
	assert_int_equal(lists_rules_update(lists, &src, out, &err),
	    LISTS_RULES_OK);
	umask(mask);
	fclose(out);
	assert_int_equal(mode_of("mx_providers.txt"), 0644);
	assert_int_equal(mode_of(LISTS_RULES_SOURCES), 0644);
	assert_null(strstr(outbuf, "s3cr"));
	read_into(LISTS_RULES_SOURCES, &got);
	assert_null(strstr(buf_str(&got), "s3cr"));
	assert_string_equal(asked[0],
	    "https://mirror:s3cr@t@rules.test/svc/mx_providers.txt");
	src.url = "https://rules.test/svc";
	ino = inode_of("mx_providers.txt");
	memset(outbuf, 0, sizeof(outbuf));
	assert_non_null(out = fmemopen(outbuf, sizeof(outbuf) - 1, "w"));
	buf_reset(&err);
	assert_int_equal(lists_rules_update(lists, &src, out, &err),
	    LISTS_RULES_OK);
	fclose(out);
	assert_string_equal(asked[0],
	    "https://rules.test/svc/mx_providers.txt");
	read_into("mx_providers.txt", &got);
	assert_string_equal(buf_str(&got), buf_str(&newmx));
	assert_true(inode_of("mx_providers.txt") != ino);
	assert_non_null(strstr(outbuf, "rule tables: mx_providers.txt: "));
	assert_non_null(strstr(outbuf, " from https://rules.test/svc/"
	    "pacing_defaults.txt\n"));
	read_into(LISTS_RULES_SOURCES, &got);
	assert_non_null(strstr(buf_str(&got), "# Rule tables fetched by "
	    "svcadm lists update at "));
	assert_non_null(strstr(buf_str(&got), "\nsmtp_reply_rules.txt "
	    "https://rules.test/svc/smtp_reply_rules.txt "));
	read_into("local/mx_providers.txt", &got);
	assert_string_equal(buf_str(&got), "*.mx.newprov.test mine\n");
	assert_false(staged_left());

	/* a folder that cannot be written: an error, nothing half done */
	snprintf(local, sizeof(local), "%s/none", lists);
	buf_reset(&err);
	assert_int_equal(lists_rules_update(local, &src, stdout, &err),
	    LISTS_RULES_WRITE);
	assert_non_null(strstr(buf_str(&err), "cannot create"));
	assert_non_null(strstr(buf_str(&err), "are unchanged"));
	for (t = 0; t < LISTS_RULES_N; t++)
		buf_free(&before[t]);
	buf_free(&newmx);
	buf_free(&got);
	buf_free(&err);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
		    test_update_runs_the_script_then_checks_the_folder),
		cmocka_unit_test(test_default_script_follows_the_environment),
		cmocka_unit_test(test_shipped_tables_pass_the_check),
		cmocka_unit_test(test_broken_tables_are_refused),
		cmocka_unit_test(test_rule_tables_install_all_or_none),
		cmocka_unit_test(test_url_shown_without_password),
	};

	return cmocka_run_group_tests_name("lists_update", tests, setup,
	    teardown);
}
