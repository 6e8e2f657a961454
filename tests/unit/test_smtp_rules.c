/* test_smtp_rules.c: table-driven tests of the parser of the SMTP reply
 * reading rules (smtp_rules.c): each field of a good line, every kind of
 * bad line skipped with a warning naming its file and line, comments,
 * blanks and CRLF, accept_all lines; loading a folder with the operator's
 * local file read first (its rules win) and a missing file; and how the
 * classifier applies rules (provider first, then generic, first match). */
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

#include "engine/smtp_classify.h"
#include "engine/smtp_rules.h"

#define V(x) SMTP_VERDICT_##x

static struct smtp_rules *
parse(const char *text, struct buf *msg)
{
	struct smtp_rules *r = smtp_rules_new();

	assert_non_null(r);
	if (msg != NULL)
		buf_reset(msg);
	assert_int_equal(smtp_rules_parse(r, text, strlen(text), "t.txt", 0,
	    msg), SMTP_RULES_OK);
	return r;
}

static void
test_good_line_fields(void **state)
{
	struct smtp_rules *r;
	struct buf msg;

	(void)state;
	buf_init(&msg, 4096);
	r = parse("# a comment\n"
	    "\n"
	    "   # indented comment\n"
	    "reply Google 450 4.2.1 accepted  Receiving   Mail at a rate \r\n"
	    "reply * 5XX *.7.* blocked\n"
	    "reply\t*\t55x\t5.1.10\tmailbox_not_found\tno such user* | "
	    "user unknown|x\n"
	    "accept_all yahoo MICROSOFT365 yahoo\n", &msg);
	assert_int_equal(msg.len, 0);
	assert_int_equal(r->skipped, 0);
	assert_int_equal(r->n, 3);
	assert_string_equal(r->rule[0].provider, "google");
	assert_memory_equal(r->rule[0].code, "450", 3);
	assert_int_equal(r->rule[0].has_enh, 1);
	assert_int_equal(r->rule[0].enh[0], 4);
	assert_int_equal(r->rule[0].enh[1], 2);
	assert_int_equal(r->rule[0].enh[2], 1);
	assert_int_equal(r->rule[0].verdict, V(ACCEPTED));
	assert_int_equal(r->rule[0].nphrases, 1);
	assert_string_equal(r->rule[0].phrases[0].text,
	    "receiving mail at a rate");
	assert_int_equal(r->rule[0].line, 4);
	assert_string_equal(r->rule[1].provider, "");
	assert_memory_equal(r->rule[1].code, "5xx", 3);
	assert_int_equal(r->rule[1].enh[0], -1);
	assert_int_equal(r->rule[1].enh[1], 7);
	assert_int_equal(r->rule[1].enh[2], -1);
	assert_int_equal(r->rule[1].nphrases, 0);
	assert_int_equal(r->rule[2].enh[2], 10);
	assert_int_equal(r->rule[2].nphrases, 3);
	assert_string_equal(r->rule[2].phrases[0].text, "no such user");
	assert_int_equal(r->rule[2].phrases[0].prefix, 1);
	assert_string_equal(r->rule[2].phrases[1].text, "user unknown");
	assert_int_equal(r->rule[2].phrases[1].prefix, 0);
	assert_string_equal(r->rule[2].phrases[2].text, "x");
	assert_int_equal(r->naccept_all, 2);
	assert_true(smtp_rules_accept_all(r, "yahoo"));
	assert_true(smtp_rules_accept_all(r, "microsoft365"));
	assert_false(smtp_rules_accept_all(r, "google"));
	smtp_rules_free(r);
	buf_free(&msg);
}

static const struct {
	const char	*line;
	const char	*why;		/* in the warning */
} bad_lines[] = {
	{ "rule * 550 * unknown", "not \"reply\"" },
	{ "reply * 550 * ", "needs PROVIDER" },
	{ "reply * 550", "needs PROVIDER" },
	{ "reply bad/id 550 * unknown", "bad provider" },
	{ "reply g@ogle 550 * unknown", "bad provider" },
	{ "reply * 650 * unknown", "bad reply code" },
	{ "reply * x50 * unknown", "bad reply code" },
	{ "reply * 5500 * unknown", "bad reply code" },
	{ "reply * 5 * unknown", "bad reply code" },
	{ "reply * 550 5.1 unknown", "bad enhanced" },
	{ "reply * 550 5.1.1.1 unknown", "bad enhanced" },
	{ "reply * 550 5.1000.1 unknown", "bad enhanced" },
	{ "reply * 550 3.1.1 unknown", "bad enhanced" },
	{ "reply * 550 5..1 unknown", "bad enhanced" },
	{ "reply * 550 4.1.1 unknown", "class is not" },
	{ "reply * 550 * nosuch", "unknown verdict" },
	{ "reply * 550 * unknown a||b", "bad phrase" },
	{ "reply * 550 * unknown a|", "bad phrase" },
	{ "reply * 550 * unknown *", "bad phrase" },
	{ "reply * 550 * unknown a*b", "bad phrase" },
	{ "accept_all", "names no provider" },
	{ "accept_all *", "bad provider" },
};

static void
test_bad_lines_are_skipped_with_a_warning(void **state)
{
	struct smtp_rules *r;
	struct buf msg, text;
	size_t i;

	(void)state;
	buf_init(&msg, 4096);
	buf_init(&text, 4096);
	for (i = 0; i < sizeof(bad_lines) / sizeof(bad_lines[0]); i++) {
		buf_reset(&text);
		buf_printf(&text, "reply * 2xx * accepted\n%s\n"
		    "reply * 5xx * unknown\n", bad_lines[i].line);
		r = parse(buf_str(&text), &msg);
		if (r->n != 2 || r->skipped != 1 ||
		    strstr(buf_str(&msg), "t.txt:2: ") == NULL ||
		    strstr(buf_str(&msg), bad_lines[i].why) == NULL)
			fail_msg("[%s]: n=%zu skipped=%zu msg=%s",
			    bad_lines[i].line, r->n, r->skipped,
			    buf_str(&msg));
		smtp_rules_free(r);
	}
	buf_free(&msg);
	buf_free(&text);
}

static void
test_limits(void **state)
{
	static const char nul[] = "reply * 5xx * unknown\0x\n"
	    "reply * 2xx * accepted";
	struct smtp_rules *r;
	struct buf msg, text;
	size_t i;

	(void)state;
	buf_init(&msg, 4096);
	buf_init(&text, 1 << 20);
	/* too many phrases, too long a phrase, too long a line, a NUL */
	buf_puts(&text, "reply * 5xx * unknown p0");
	for (i = 1; i <= SMTP_RULES_PHRASES_MAX; i++)
		buf_printf(&text, " | p%zu", i);
	buf_puts(&text, "\nreply * 5xx * unknown ");
	for (i = 0; i <= SMTP_RULES_PHRASE_MAX; i++)
		buf_puts(&text, "x");
	buf_puts(&text, "\nreply * 5xx * unknown ");
	for (i = 0; i <= SMTP_RULES_LINE_MAX; i++)
		buf_puts(&text, "y");
	buf_puts(&text, "\n");
	r = smtp_rules_new();
	assert_int_equal(smtp_rules_parse(r, buf_str(&text), text.len, "t",
	    0, &msg), SMTP_RULES_OK);
	assert_int_equal(r->n, 0);
	assert_int_equal(r->skipped, 3);
	assert_non_null(strstr(buf_str(&msg), "t:3: line too long"));
	assert_int_equal(smtp_rules_parse(r, nul, sizeof(nul) - 1, "t", 0,
	    &msg), SMTP_RULES_OK);
	assert_int_equal(r->n, 1);
	assert_int_equal(r->skipped, 4);
	smtp_rules_free(r);
	/* a provider id of SMTP_RULES_PROVIDER_MAX - 1 characters, then
	 * one more */
	for (i = 0; i < 2; i++) {
		size_t k;

		buf_reset(&text);
		buf_puts(&text, "reply ");
		for (k = 0; k < SMTP_RULES_PROVIDER_MAX - 1 + i; k++)
			buf_puts(&text, "a");
		buf_puts(&text, " 5xx * unknown\n");
		r = parse(buf_str(&text), &msg);
		assert_int_equal(r->n, 1 - i);
		assert_int_equal(r->skipped, i);
		if (i == 0)
			assert_int_equal(strlen(r->rule[0].provider),
			    SMTP_RULES_PROVIDER_MAX - 1);
		smtp_rules_free(r);
	}
	/* the number of rules is bounded */
	buf_reset(&text);
	for (i = 0; i <= SMTP_RULES_MAX; i++)
		buf_puts(&text, "reply * 5xx * unknown\n");
	r = parse(buf_str(&text), &msg);
	assert_int_equal(r->n, SMTP_RULES_MAX);
	assert_int_equal(r->skipped, 1);
	smtp_rules_free(r);
	buf_free(&msg);
	buf_free(&text);
}

static char tmpdir[] = "/tmp/test_smtp_rules.XXXXXX";

static void
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

static void
test_load_reads_local_first(void **state)
{
	char path[512];
	struct smtp_rules *r;
	struct buf msg;

	(void)state;
	buf_init(&msg, 4096);
	assert_non_null(mkdtemp(tmpdir));
	/* no file at all: a warning, no rules, the class decides */
	assert_int_equal(smtp_rules_load(tmpdir, &r, &msg), SMTP_RULES_OK);
	assert_int_equal(r->n, 0);
	assert_non_null(strstr(buf_str(&msg), "missing"));
	assert_int_equal(smtp_classify_rcpt(r, NULL, 550, "5.1.1", "x"),
	    V(UNKNOWN));
	smtp_rules_free(r);
	snprintf(path, sizeof(path), "%s/%s", tmpdir, SMTP_RULES_FILE);
	write_file(path, "reply * 5xx 5.1.1 mailbox_not_found\n"
	    "reply * 5xx * unknown\n");
	snprintf(path, sizeof(path), "%s/local", tmpdir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/local/%s", tmpdir, SMTP_RULES_FILE);
	write_file(path, "reply * 550 5.1.1 blocked our own gateway\n"
	    "bad line\n");
	assert_int_equal(smtp_rules_load(tmpdir, &r, &msg), SMTP_RULES_OK);
	assert_int_equal(r->n, 3);
	assert_int_equal(r->rule[0].local, 1);
	assert_int_equal(r->rule[1].local, 0);
	assert_non_null(strstr(buf_str(&msg), "local/" SMTP_RULES_FILE ":2:"));
	assert_int_equal(smtp_classify_rcpt(r, NULL, 550, "5.1.1",
	    "rejected by our own gateway"), V(BLOCKED));
	assert_int_equal(smtp_classify_rcpt(r, NULL, 550, "5.1.1",
	    "User unknown"), V(MAILBOX_NOT_FOUND));
	smtp_rules_free(r);
	/* a file that exists but cannot be read is an error */
	assert_int_equal(chmod(path, 0), 0);
	if (access(path, R_OK) != 0) {	/* not when running as root */
		buf_reset(&msg);
		assert_int_equal(smtp_rules_load(tmpdir, &r, &msg),
		    SMTP_RULES_ERR_IO);
		assert_null(r);
	}
	unlink(path);
	snprintf(path, sizeof(path), "%s/local", tmpdir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/%s", tmpdir, SMTP_RULES_FILE);
	unlink(path);
	rmdir(tmpdir);
	assert_int_equal(smtp_rules_load("", &r, &msg), SMTP_RULES_ERR_ARG);
	buf_free(&msg);
}

/* First match, provider rules before generic ones, codes and enhanced
 * codes and phrases as patterns. */
static void
test_classify_applies_rules_in_order(void **state)
{
	struct smtp_rules *r;

	(void)state;
	r = parse("reply * 5xx * blocked spamhaus\n"
	    "reply acme 550 * mailbox_not_found nobody here\n"
	    "reply acme 5xx 5.7.* unknown\n"
	    "reply * 55x 5.1.* mailbox_not_found\n"
	    "reply * 5xx * disabled disab*\n"
	    "reply * 4xx 4.7.650 rate_limited\n", NULL);
	/* generic */
	assert_int_equal(smtp_classify_rcpt(r, NULL, 550, "5.1.1",
	    "listed at Spamhaus"), V(BLOCKED));
	assert_int_equal(smtp_classify_rcpt(r, NULL, 553, "5.1.3", "x"),
	    V(MAILBOX_NOT_FOUND));
	assert_int_equal(smtp_classify_rcpt(r, NULL, 541, "5.1.3", "x"),
	    V(UNKNOWN));		/* 541 is not 55x: by class */
	assert_int_equal(smtp_classify_rcpt(r, NULL, 550, NULL, "x"),
	    V(UNKNOWN));		/* 5.1.* needs an enhanced code */
	assert_int_equal(smtp_classify_rcpt(r, NULL, 550, "4.1.1", "x"),
	    V(UNKNOWN));		/* of the reply's class */
	assert_int_equal(smtp_classify_rcpt(r, NULL, 550, NULL,
	    "Account DISABLED"), V(DISABLED));
	assert_int_equal(smtp_classify_rcpt(r, NULL, 550, NULL,
	    "undisabled"), V(UNKNOWN));	/* word start */
	assert_int_equal(smtp_classify_rcpt(r, NULL, 451, "4.7.650", "x"),
	    V(RATE_LIMITED));
	assert_int_equal(smtp_classify_rcpt(r, NULL, 451, "4.7.65", "x"),
	    V(TEMPORARY));
	assert_int_equal(smtp_classify_rcpt(r, NULL, 550, NULL,
	    "nobody here"), V(UNKNOWN));
	/* the provider's rules first */
	assert_int_equal(smtp_classify_rcpt(r, "acme", 550, NULL,
	    "nobody here"), V(MAILBOX_NOT_FOUND));
	assert_int_equal(smtp_classify_rcpt(r, "acme", 550, "5.7.1",
	    "spamhaus"), V(UNKNOWN));
	assert_int_equal(smtp_classify_rcpt(r, "other", 550, "5.7.1",
	    "spamhaus"), V(BLOCKED));
	assert_int_equal(smtp_classify_rcpt(r, "", 550, NULL, "nobody here"),
	    V(UNKNOWN));
	assert_int_equal(smtp_classify_rcpt(r, "acme", 250, NULL, NULL),
	    V(ACCEPTED));
	smtp_rules_free(r);
}

/* A blank before the trailing "*" is not part of the phrase: "over quota *"
 * is the prefix "over quota", which matches at the reply's end too. */
static void
test_blank_before_star_is_trimmed(void **state)
{
	struct smtp_rules *r;

	(void)state;
	r = parse("reply * 5xx * mailbox_full over  quota *| full\t*\n", NULL);
	assert_int_equal(r->n, 1);
	assert_int_equal(r->rule[0].nphrases, 2);
	assert_string_equal(r->rule[0].phrases[0].text, "over quota");
	assert_int_equal(r->rule[0].phrases[0].prefix, 1);
	assert_string_equal(r->rule[0].phrases[1].text, "full");
	assert_int_equal(r->rule[0].phrases[1].prefix, 1);
	assert_int_equal(smtp_classify_rcpt(r, NULL, 552, "5.2.2",
	    "User is over quota"), V(MAILBOX_FULL));
	assert_int_equal(smtp_classify_rcpt(r, NULL, 552, "5.2.2",
	    "Mailbox full"), V(MAILBOX_FULL));
	smtp_rules_free(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_line_fields),
		cmocka_unit_test(test_bad_lines_are_skipped_with_a_warning),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_load_reads_local_first),
		cmocka_unit_test(test_classify_applies_rules_in_order),
		cmocka_unit_test(test_blank_before_star_is_trimmed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
