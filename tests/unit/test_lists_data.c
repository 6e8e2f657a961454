/* test_lists_data.c: the real lists load and hold what they should: the
 * curated files of contrib/lists/ (no skipped line, known role parts,
 * providers and typo traps, no overlap that would give wrong verdicts) and
 * the lists fetched by contrib/fetch-lists at build time (mailinator.com is
 * disposable, gmail.com is free and not disposable). Exits 77 (skipped)
 * when the fetched lists are missing or empty, i.e. the build could not
 * reach the npm registry. Folders: LISTS_CURATED_DIR and LISTS_FETCHED_DIR,
 * set by tests/unit/engine.inc. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "unit_skip.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/lists.h"

#ifndef LISTS_CURATED_DIR
#define LISTS_CURATED_DIR "contrib/lists"
#endif
#ifndef LISTS_FETCHED_DIR
#define LISTS_FETCHED_DIR "contrib/lists/fetched"
#endif

static char dir[] = "/tmp/test_lists_data.XXXXXX";
static struct lists *L;

/* Reads every entry of a list file (comments and blanks dropped). */
static size_t
read_entries(const char *path, char ***out)
{
	FILE *f;
	char *line = NULL, **v = NULL, *hash;
	size_t cap = 0, n = 0;
	ssize_t len;

	assert_non_null(f = fopen(path, "r"));
	while ((len = getline(&line, &cap, f)) != -1) {
		if ((hash = strchr(line, '#')) != NULL)
			*hash = '\0';
		line[strcspn(line, " \t\r\n")] = '\0';
		if (*line == '\0')
			continue;
		assert_non_null(v = realloc(v, (n + 1) * sizeof(*v)));
		assert_non_null(v[n++] = strdup(line));
	}
	free(line);
	fclose(f);
	*out = v;
	return n;
}

static void
free_entries(char **v, size_t n)
{
	while (n > 0)
		free(v[--n]);
	free(v);
}

static void
test_curated_lists_load_without_skipped_lines(void **state)
{
	struct lists *l;
	struct buf msg, sum;

	(void)state;
	buf_init(&msg, 65536);
	buf_init(&sum, 1024);
	assert_int_equal(lists_load(LISTS_CURATED_DIR, &l, &msg), LISTS_OK);
	assert_int_equal(lists_summary(l, &sum), 0);
	fprintf(stderr, "# curated: %s\n", buf_str(&sum));
	assert_null(strstr(buf_str(&msg), "not a valid"));
	assert_non_null(strstr(buf_str(&sum), "skipped=0"));
	assert_true(lists_count(l, LISTS_ROLE) >= 100);
	assert_true(lists_count(l, LISTS_PROVIDER) >= 50);
	assert_true(lists_count(l, LISTS_TYPO_TRAP) >= 20);
	lists_free(l);
	buf_free(&msg);
	buf_free(&sum);
}

static const char *const roles[] = {
	"info", "sales", "admin", "support", "postmaster", "abuse",
	"noreply", "no-reply", "webmaster", "contact", "billing", "hr",
};
static const char *const not_roles[] = {
	"john", "alexa", "maria.garcia", "j.smith", "family",
};
static const char *const providers[] = {
	"gmail.com", "yahoo.com", "outlook.com", "hotmail.com", "icloud.com",
	"aol.com", "gmx.de", "web.de", "mail.ru", "yandex.ru",
};
static const char *const traps[] = { "gmial.com", "hotmial.com",
    "yaho.com" };

static void
test_known_entries_are_in_the_real_lists(void **state)
{
	size_t i;

	(void)state;
	assert_true(lists_is_disposable(L, "mailinator.com"));
	assert_true(lists_is_disposable(L, "x.mailinator.com"));
	assert_true(lists_is_disposable(L, "guerrillamail.com"));
	assert_true(lists_is_disposable(L, "10minutemail.com"));
	assert_true(lists_is_free(L, "gmail.com"));
	assert_true(lists_is_free(L, "yahoo.com"));
	assert_true(lists_is_free(L, "hotmail.com"));
	for (i = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
		assert_true(lists_is_role(L, roles[i]));
	for (i = 0; i < sizeof(not_roles) / sizeof(not_roles[0]); i++)
		assert_false(lists_is_role(L, not_roles[i]));
	for (i = 0; i < sizeof(providers) / sizeof(providers[0]); i++) {
		assert_true(lists_is_provider(L, providers[i]));
		assert_false(lists_is_disposable(L, providers[i]));
	}
	for (i = 0; i < sizeof(traps) / sizeof(traps[0]); i++)
		assert_true(lists_is_typo_trap(L, traps[i]));
	assert_false(lists_is_disposable(L, "example.com"));
}

/* A provider that were disposable, or a typo trap that were a provider,
 * would give wrong verdicts for real users of a big mailbox provider. */
static void
test_curated_lists_do_not_contradict_the_fetched_ones(void **state)
{
	char **v, out[LISTS_SUGGEST_MAX];
	size_t i, n;
	int bad = 0;

	(void)state;
	n = read_entries(LISTS_CURATED_DIR "/provider_domains.txt", &v);
	assert_true(n >= 50);	/* a loop over nothing would pass */
	for (i = 0; i < n; i++) {
		if (lists_is_disposable(L, v[i]) ||
		    lists_is_typo_trap(L, v[i])) {
			fprintf(stderr, "provider %s is disposable or a typo "
			    "trap\n", v[i]);
			bad++;
		}
		/* a listed provider is never "corrected" */
		if (lists_suggest(L, v[i], out)) {
			fprintf(stderr, "provider %s gets suggestion %s\n",
			    v[i], out);
			bad++;
		}
	}
	free_entries(v, n);
	n = read_entries(LISTS_CURATED_DIR "/typo_trap_domains.txt", &v);
	assert_true(n >= 20);
	for (i = 0; i < n; i++) {
		if (lists_is_provider(L, v[i])) {
			fprintf(stderr, "typo trap %s is a provider\n", v[i]);
			bad++;
		}
		/* each trap is a near miss of a provider */
		if (!lists_suggest(L, v[i], out)) {
			fprintf(stderr, "typo trap %s: no suggestion\n", v[i]);
			bad++;
		}
	}
	free_entries(v, n);
	assert_int_equal(bad, 0);
}

static int
fetched_present(void)
{
	struct stat st;

	return stat(LISTS_FETCHED_DIR "/disposable_domains.txt", &st) == 0 &&
	    st.st_size > 0 &&
	    stat(LISTS_FETCHED_DIR "/free_domains.txt", &st) == 0 &&
	    st.st_size > 0;
}

/* One folder with all five lists, as installed: symbolic links. */
static int
setup(void **state)
{
	static const char *const files[][2] = {
		{ LISTS_FETCHED_DIR, "disposable_domains.txt" },
		{ LISTS_FETCHED_DIR, "free_domains.txt" },
		{ LISTS_CURATED_DIR, "role_local_parts.txt" },
		{ LISTS_CURATED_DIR, "provider_domains.txt" },
		{ LISTS_CURATED_DIR, "typo_trap_domains.txt" },
	};
	char from[1024], to[1024];
	struct buf msg, sum;
	size_t i;

	(void)state;
	if (mkdtemp(dir) == NULL)
		return -1;
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(from, sizeof(from), "%s/%s", files[i][0], files[i][1]);
		if (from[0] != '/') {
			char cwd[512];

			if (getcwd(cwd, sizeof(cwd)) == NULL)
				return -1;
			snprintf(from, sizeof(from), "%s/%s/%s", cwd,
			    files[i][0], files[i][1]);
		}
		snprintf(to, sizeof(to), "%s/%s", dir, files[i][1]);
		if (symlink(from, to) != 0)
			return -1;
	}
	buf_init(&msg, 65536);
	buf_init(&sum, 1024);
	if (lists_load(dir, &L, &msg) != LISTS_OK) {
		fprintf(stderr, "lists_load: %s\n", buf_str(&msg));
		return -1;
	}
	lists_summary(L, &sum);
	fprintf(stderr, "# all lists: %s\n", buf_str(&sum));
	if (buf_str(&msg)[0] != '\0')
		fprintf(stderr, "# warnings:\n%s", buf_str(&msg));
	buf_free(&msg);
	buf_free(&sum);
	return 0;
}

static int
teardown(void **state)
{
	char cmd[600];

	(void)state;
	lists_free(L);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int
main(void)
{
	const struct CMUnitTest curated[] = {
		cmocka_unit_test(test_curated_lists_load_without_skipped_lines),
	};
	const struct CMUnitTest all[] = {
		cmocka_unit_test(test_known_entries_are_in_the_real_lists),
		cmocka_unit_test(
		    test_curated_lists_do_not_contradict_the_fetched_ones),
	};
	int rc;

	rc = cmocka_run_group_tests_name("lists_curated", curated, NULL,
	    NULL);
	if (!fetched_present())
		return unit_skip_rest(rc, "no fetched lists in "
		    LISTS_FETCHED_DIR " (the build could not run "
		    "contrib/fetch-lists)");
	rc += cmocka_run_group_tests_name("lists_fetched", all, setup,
	    teardown);
	return unit_skip_status(rc);
}
