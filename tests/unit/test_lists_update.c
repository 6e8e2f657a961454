/* test_lists_update.c: "svcadm lists update" with stand-in fetch scripts:
 * a script that writes the lists (counts printed, success), one that
 * fails or is killed (error, folder unchanged), a missing script, and the
 * check of a folder whose fetched lists are empty. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admin/lists_update.h"

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
		e = lists_update_run(lists, script, out, &err);
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
		    test_update_runs_the_script_then_checks_the_folder),
		cmocka_unit_test(test_default_script_follows_the_environment),
	};

	return cmocka_run_group_tests_name("lists_update", tests, setup,
	    teardown);
}
