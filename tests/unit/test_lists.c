/* test_lists.c: table-driven tests of the lists module on small fixture
 * files written into a temporary folder: membership of each list, subdomain
 * matching of disposable domains, comments, case, white space and CRLF,
 * IDN entries, the operator's local additions and "!" removals, warnings
 * for skipped lines and missing files, did-you-mean suggestions, role local
 * parts with tags and quotes, and the load time of a 150,000-entry list. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine/lists.h"

static char tmpdir[] = "/tmp/test_lists.XXXXXX";

static void
write_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	assert_true(snprintf(path, sizeof(path), "%s/%s", dir, name) <
	    (int)sizeof(path));
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static const char fx_disposable[] =
    "# disposable fixture\n"
    "mailinator.com\n"
    "  Guerrillamail.COM  \n"
    "trashmail.de\t# trailing comment\n"
    "\n"
    "   # indented comment\n"
    "bad domain.com\n"			/* line 7: skipped */
    "localhost\n"			/* line 8: one label, skipped */
    "bücher-wegwerf.de\n"		/* stored as its A-label */
    "removed.example\n"
    "parent2.example\n"
    "root-dot.example.\n"
    "mailinator.com\n";			/* duplicate: counted once */

static const char fx_free[] =
    "gmail.com\r\n"
    "yahoo.com\r\n"
    "GMX.DE\r\n"
    "mail.example\r\n";

static const char fx_role[] =
    "info\n"
    "sales\n"
    "admin\n"
    "postmaster\n"
    "no-reply\n"
    "Support\n"
    "bad@part\n";			/* line 7: skipped */

/* Order matters: gmx.de before gmx.net decides the "gmx.ne" tie. */
static const char fx_provider[] =
    "gmail.com\n"
    "yahoo.com\n"
    "hotmail.com\n"
    "outlook.com\n"
    "icloud.com\n"
    "aol.com\n"
    "gmx.de\n"
    "gmx.net\n"
    "web.de\n"
    "mail.ru\n"
    "yandex.ru\n";

static const char fx_typo[] =
    "gmial.com\n"
    "hotmial.com\n"
    "yaho.com\n";

static const char fx_local_disposable[] =
    "# operator additions and exceptions\n"
    "localdisp.example\n"
    "!removed.example\n"
    "!sub.parent2.example\n";

static const char fx_local_role[] = "billing\n!admin\n";
static const char fx_local_free[] = "!yahoo.com\n";
static const char fx_local_provider[] = "!aol.com\nmail.example\n";

static struct lists *L;
static struct buf warnings;

static int
setup(void **state)
{
	char local[512];
	enum lists_err e;

	(void)state;
	if (mkdtemp(tmpdir) == NULL)
		return -1;
	write_file(tmpdir, "disposable_domains.txt", fx_disposable);
	write_file(tmpdir, "free_domains.txt", fx_free);
	write_file(tmpdir, "role_local_parts.txt", fx_role);
	write_file(tmpdir, "provider_domains.txt", fx_provider);
	write_file(tmpdir, "typo_trap_domains.txt", fx_typo);
	snprintf(local, sizeof(local), "%s/local", tmpdir);
	if (mkdir(local, 0755) != 0)
		return -1;
	write_file(local, "disposable_domains.txt", fx_local_disposable);
	write_file(local, "role_local_parts.txt", fx_local_role);
	write_file(local, "free_domains.txt", fx_local_free);
	write_file(local, "provider_domains.txt", fx_local_provider);
	write_file(local, "disposable.txt", "typo.example\n");
	buf_init(&warnings, 65536);
	e = lists_load(tmpdir, &L, &warnings);
	if (e != LISTS_OK) {
		fprintf(stderr, "lists_load: %s: %s\n", lists_err_names[e],
		    buf_str(&warnings));
		return -1;
	}
	return 0;
}

static int
teardown(void **state)
{
	char cmd[600];

	(void)state;
	lists_free(L);
	buf_free(&warnings);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

struct lcase {
	const char	*in;
	int		 want;
};

static void
run_cases(const char *what, int (*fn)(const struct lists *, const char *),
    const struct lcase *c, size_t n)
{
	size_t i;
	int fails = 0;

	for (i = 0; i < n; i++) {
		if (fn(L, c[i].in) != c[i].want) {
			fprintf(stderr, "%s(\"%s\"): got %d, want %d\n", what,
			    c[i].in, !c[i].want, c[i].want);
			fails++;
		}
	}
	assert_int_equal(fails, 0);
}

#define RUN(fn, table) run_cases(#fn, fn, table, \
    sizeof(table) / sizeof(table[0]))

static const struct lcase disposable_cases[] = {
	{ "mailinator.com", 1 },
	{ "MAILINATOR.COM", 1 },		/* case folded */
	{ "mailinator.com.", 1 },		/* root dot ignored */
	{ "x.mailinator.com", 1 },		/* subdomain */
	{ "a.b.mailinator.com", 1 },		/* deeper subdomain */
	{ "notmailinator.com", 0 },		/* suffix, not a label */
	{ "mailinator.co", 0 },
	{ "mailinator", 0 },
	{ "com", 0 },
	{ "guerrillamail.com", 1 },		/* trimmed, lower-cased */
	{ "trashmail.de", 1 },			/* comment cut */
	{ "root-dot.example", 1 },		/* entry's root dot dropped */
	{ "xn--bcher-wegwerf-wob.de", 1 },	/* U-label entry, A-label */
	{ "bad domain.com", 0 },
	{ "domain.com", 0 },
	{ "localhost", 0 },			/* refused entry */
	{ "localdisp.example", 1 },		/* local addition */
	{ "sub.localdisp.example", 1 },
	{ "removed.example", 0 },		/* local removal */
	{ "x.removed.example", 0 },		/* ... with its subdomains */
	{ "parent2.example", 1 },
	{ "other.parent2.example", 1 },
	{ "sub.parent2.example", 0 },		/* exception below a parent */
	{ "a.sub.parent2.example", 0 },
	{ "typo.example", 0 },			/* local/disposable.txt: not read */
	{ "gmail.com", 0 },
	{ "", 0 },
	{ ".", 0 },
	{ "..", 0 },
};

static void
test_disposable_matches_listed_domains_and_their_subdomains(void **state)
{
	(void)state;
	RUN(lists_is_disposable, disposable_cases);
	assert_false(lists_is_disposable(L, NULL));
	assert_false(lists_is_disposable(NULL, "mailinator.com"));
}

static const struct lcase free_cases[] = {
	{ "gmail.com", 1 },
	{ "GMail.Com", 1 },
	{ "gmail.com.", 1 },
	{ "gmx.de", 1 },			/* upper case in the file */
	{ "mail.example", 1 },			/* CRLF line */
	{ "x.gmail.com", 0 },			/* exact only */
	{ "yahoo.com", 0 },			/* local removal */
	{ "mailinator.com", 0 },
	{ "", 0 },
};

static void
test_free_is_exact_and_honours_local_removals(void **state)
{
	(void)state;
	RUN(lists_is_free, free_cases);
}

static const struct lcase typo_cases[] = {
	{ "gmial.com", 1 },
	{ "HOTMIAL.com", 1 },
	{ "yaho.com", 1 },
	{ "x.yaho.com", 0 },
	{ "gmail.com", 0 },
};

static void
test_typo_trap_is_exact(void **state)
{
	(void)state;
	RUN(lists_is_typo_trap, typo_cases);
}

static const struct lcase provider_cases[] = {
	{ "gmail.com", 1 },
	{ "mail.example", 1 },			/* local addition */
	{ "aol.com", 0 },			/* local removal */
	{ "gmial.com", 0 },
};

static void
test_provider_membership(void **state)
{
	(void)state;
	RUN(lists_is_provider, provider_cases);
}

static const struct lcase role_cases[] = {
	{ "info", 1 },
	{ "INFO", 1 },
	{ "Info", 1 },
	{ "info+news", 1 },			/* tag dropped */
	{ "Sales+2024+x", 1 },
	{ "\"info\"", 1 },			/* quotes ignored */
	{ "\"info+x\"", 1 },
	{ "support", 1 },			/* upper case in the file */
	{ "postmaster", 1 },
	{ "no-reply", 1 },
	{ "billing", 1 },			/* local addition */
	{ "admin", 0 },				/* local removal */
	{ "admin+x", 0 },
	{ "john", 0 },
	{ "infos", 0 },
	{ "info.smith", 0 },			/* "+" is the only tag mark */
	{ "info-team", 0 },
	{ "+info", 0 },
	{ "bad@part", 0 },			/* refused entry */
	{ "\"\"", 0 },
	{ "\"", 0 },
	{ "", 0 },
};

static void
test_role_local_parts_case_tags_and_quotes(void **state)
{
	(void)state;
	RUN(lists_is_role, role_cases);
	assert_false(lists_is_role(L, NULL));
}

struct scase {
	const char	*in;
	const char	*want;		/* NULL: no suggestion */
};

static const struct scase suggest_cases[] = {
	{ "gmial.com", "gmail.com" },		/* transposition */
	{ "yaho.com", "yahoo.com" },		/* deletion */
	{ "hotmial.com", "hotmail.com" },
	{ "outlok.com", "outlook.com" },
	{ "OUTLOK.COM", "outlook.com" },
	{ "gmail.co", "gmail.com" },
	{ "gmailcom", "gmail.com" },
	{ "gmaill.com", "gmail.com" },		/* insertion */
	{ "gnail.com", "gmail.com" },		/* substitution */
	{ "gamil.com", "gmail.com" },
	{ "yahooo.com", "yahoo.com" },
	{ "hotmali.cm", "hotmail.com" },	/* two edits */
	{ "yandex.ry", "yandex.ru" },
	{ "gmx.ne", "gmx.de" },			/* tie: earlier line wins */
	{ "gmx.nett", "gmx.net" },
	{ "gmail.com", NULL },			/* the domain itself */
	{ "gmail.com.", NULL },
	{ "mail.ru", NULL },
	{ "example.org", NULL },		/* unrelated */
	{ "mailinator.com", NULL },
	{ "gxmial.cmo", NULL },			/* three or more edits */
	{ "aol.cm", NULL },			/* aol.com removed locally */
	{ "gm.c", NULL },			/* shorter than 5 */
	{ "", NULL },
};

static void
test_suggest_closest_provider_within_two_edits(void **state)
{
	char out[LISTS_SUGGEST_MAX];
	size_t i;
	int got, fails = 0;

	(void)state;
	for (i = 0; i < sizeof(suggest_cases) / sizeof(suggest_cases[0]);
	    i++) {
		const struct scase *c = &suggest_cases[i];

		memset(out, 'x', sizeof(out));
		got = lists_suggest(L, c->in, out);
		if (got != (c->want != NULL) ||
		    strcmp(out, c->want ? c->want : "") != 0) {
			fprintf(stderr, "lists_suggest(\"%s\"): %d \"%s\", "
			    "want \"%s\"\n", c->in, got, out,
			    c->want ? c->want : "");
			fails++;
		}
	}
	assert_int_equal(fails, 0);
	assert_int_equal(lists_suggest(NULL, "gmial.com", out), 0);
	assert_string_equal(out, "");
}

static void
test_counts_warnings_and_summary(void **state)
{
	struct buf b;
	const char *w = buf_str(&warnings);

	(void)state;
	/* 8 valid lines, one a duplicate, plus one local addition */
	assert_int_equal(lists_count(L, LISTS_DISPOSABLE), 8);
	assert_int_equal(lists_removed(L, LISTS_DISPOSABLE), 2);
	assert_int_equal(lists_count(L, LISTS_FREE), 4);
	assert_int_equal(lists_count(L, LISTS_ROLE), 7);
	assert_int_equal(lists_removed(L, LISTS_ROLE), 1);
	assert_int_equal(lists_count(L, LISTS_PROVIDER), 12);
	assert_int_equal(lists_count(L, LISTS_TYPO_TRAP), 3);
	assert_int_equal(lists_count(L, LISTS_KIND__MAX), 0);
	assert_non_null(strstr(w, "disposable_domains.txt:7: not a valid "
	    "domain entry"));
	assert_non_null(strstr(w, "disposable_domains.txt:8: not a valid "
	    "domain entry"));
	assert_non_null(strstr(w, "role_local_parts.txt:7: not a valid "
	    "local-part entry"));
	assert_non_null(strstr(w, "local/disposable.txt: not a list file "
	    "name"));
	assert_null(strstr(w, "missing"));

	buf_init(&b, 4096);
	assert_int_equal(lists_summary(L, &b), 0);
	assert_non_null(strstr(buf_str(&b), "disposable=8 free=4 role=7 "
	    "provider=12 typo_trap=3 removed=5 skipped=3 bytes="));
	assert_non_null(strstr(buf_str(&b), " load_ms="));
	buf_free(&b);
}

/* A folder with only some files: the others are empty lists, warned
 * about; a list path that is a folder is an I/O error; no folder at all
 * is an argument error. */
static void
test_missing_files_are_empty_lists_and_errors_are_reported(void **state)
{
	char dir[] = "/tmp/test_lists_m.XXXXXX", path[600], cmd[700];
	struct lists *l = NULL;
	struct buf msg;
	enum lists_err e;

	(void)state;
	buf_init(&msg, 65536);
	assert_non_null(mkdtemp(dir));
	write_file(dir, "role_local_parts.txt", "info\n");
	write_file(dir, "free_domains.txt", "# only a comment\n");
	e = lists_load(dir, &l, &msg);
	assert_int_equal(e, LISTS_OK);
	assert_non_null(l);
	assert_true(lists_is_role(l, "info"));
	assert_false(lists_is_disposable(l, "mailinator.com"));
	assert_int_equal(lists_suggest(l, "gmial.com", path), 0);
	assert_non_null(strstr(buf_str(&msg), "disposable_domains.txt: "
	    "missing, the disposable list is empty"));
	assert_non_null(strstr(buf_str(&msg), "free_domains.txt: no entries, "
	    "the free list is empty"));
	assert_non_null(strstr(buf_str(&msg), "provider_domains.txt: "
	    "missing"));
	lists_free(l);

	snprintf(path, sizeof(path), "%s/typo_trap_domains.txt", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	l = (struct lists *)&msg;
	e = lists_load(dir, &l, &msg);
	assert_int_equal(e, LISTS_ERR_IO);
	assert_null(l);
	assert_non_null(strstr(buf_str(&msg), "typo_trap_domains.txt"));

	assert_int_equal(lists_load("", &l, &msg), LISTS_ERR_ARG);
	assert_null(l);
	assert_int_equal(lists_load(NULL, &l, NULL), LISTS_ERR_ARG);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	buf_free(&msg);
}

/* More than LISTS_WARN_MAX bad lines: the message is capped, the count
 * is not. */
static void
test_warnings_are_capped(void **state)
{
	char dir[] = "/tmp/test_lists_w.XXXXXX", cmd[700];
	struct lists *l;
	struct buf msg, text, sum;
	int i;

	(void)state;
	buf_init(&msg, 65536);
	buf_init(&text, 65536);
	buf_init(&sum, 1024);
	assert_non_null(mkdtemp(dir));
	for (i = 0; i < 100; i++)
		assert_int_equal(buf_printf(&text, "bad_%d\n", i), 0);
	write_file(dir, "disposable_domains.txt", buf_str(&text));
	assert_int_equal(lists_load(dir, &l, &msg), LISTS_OK);
	assert_non_null(strstr(buf_str(&msg), "more warnings)"));
	assert_null(strstr(buf_str(&msg), ":100:"));
	assert_int_equal(lists_summary(l, &sum), 0);
	assert_non_null(strstr(buf_str(&sum), "skipped=100"));
	lists_free(l);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	buf_free(&msg);
	buf_free(&text);
	buf_free(&sum);
}

static long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* 150,000 generated domains (more than the real disposable list) load,
 * every one is found, near misses are not. The bound is loose so that
 * sanitizer builds pass; the figures are printed. */
static void
test_large_list_loads_fast_and_finds_every_entry(void **state)
{
	char dir[] = "/tmp/test_lists_b.XXXXXX", path[600], cmd[700],
	    name[64];
	struct lists *l;
	struct buf sum;
	FILE *f;
	long t0, ms;
	int i, missing = 0, false_hits = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/disposable_domains.txt", dir);
	assert_non_null(f = fopen(path, "w"));
	for (i = 0; i < 150000; i++)
		fprintf(f, "d%07d-mail.example\n", i * 7);
	assert_int_equal(fclose(f), 0);
	t0 = now_ms();
	assert_int_equal(lists_load(dir, &l, NULL), LISTS_OK);
	ms = now_ms() - t0;
	assert_int_equal(lists_count(l, LISTS_DISPOSABLE), 150000);
	for (i = 0; i < 150000; i++) {
		snprintf(name, sizeof(name), "x.d%07d-mail.example", i * 7);
		missing += !lists_is_disposable(l, name);
		snprintf(name, sizeof(name), "d%07d-mail.example", i * 7 + 1);
		false_hits += lists_is_disposable(l, name);
	}
	assert_int_equal(missing, 0);
	assert_int_equal(false_hits, 0);
	buf_init(&sum, 1024);
	assert_int_equal(lists_summary(l, &sum), 0);
	fprintf(stderr, "# 150000 entries: load %ld ms, %s\n", ms,
	    buf_str(&sum));
	assert_true(ms < 5000);
	buf_free(&sum);
	lists_free(l);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void
test_name_tables_are_complete(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < LISTS_KIND__MAX; i++) {
		assert_non_null(lists_kind_names[i]);
		assert_non_null(strstr(lists_kind_files[i], ".txt"));
	}
	for (i = 0; i < LISTS_ERR__MAX; i++)
		assert_non_null(lists_err_names[i]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
		    test_disposable_matches_listed_domains_and_their_subdomains),
		cmocka_unit_test(test_free_is_exact_and_honours_local_removals),
		cmocka_unit_test(test_typo_trap_is_exact),
		cmocka_unit_test(test_provider_membership),
		cmocka_unit_test(test_role_local_parts_case_tags_and_quotes),
		cmocka_unit_test(
		    test_suggest_closest_provider_within_two_edits),
		cmocka_unit_test(test_counts_warnings_and_summary),
		cmocka_unit_test(
		    test_missing_files_are_empty_lists_and_errors_are_reported),
		cmocka_unit_test(test_warnings_are_capped),
		cmocka_unit_test(
		    test_large_list_loads_fast_and_finds_every_entry),
		cmocka_unit_test(test_name_tables_are_complete),
	};

	return cmocka_run_group_tests_name("lists", tests, setup, teardown);
}
