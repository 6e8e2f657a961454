/* test_smtp_reply.c: table-driven tests of the SMTP reply parser (single
 * and multi-line replies, every way of splitting the input, pipelined
 * replies, limits, malformed codes, text cleaning), the EHLO helper, and the
 * RCPT classifier, with the shipped reading rules
 * (contrib/lists/smtp_reply_rules.txt), against real-world replies of
 * Postfix, Exim, sendmail, qmail, Gmail, Outlook/Office 365, Yahoo/AOL,
 * the gateways and others, generic and per provider. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/smtp_classify.h"
#include "engine/smtp_rules.h"
#include "engine/smtp_reply.h"

/* The shipped rules, loaded once (group setup). */
static struct smtp_rules *rules;

static enum smtp_verdict
classify(int code, const char *enhanced, const char *text)
{
	return smtp_classify_rcpt(rules, NULL, code, enhanced, text);
}

static int
load_rules(void **state)
{
	struct buf msg;

	(void)state;
	buf_init(&msg, 4096);
	if (smtp_rules_load(LISTS_CURATED_DIR, &rules, &msg) !=
	    SMTP_RULES_OK || msg.len != 0) {
		fprintf(stderr, "rules: %s\n", buf_str(&msg));
		buf_free(&msg);
		return -1;
	}
	buf_free(&msg);
	return 0;
}

static int
free_rules(void **state)
{
	(void)state;
	smtp_rules_free(rules);
	return 0;
}

struct rcase {
	const char		*in;
	enum smtp_reply_status	 want;
	int			 code;
	const char		*enhanced;
	const char		*text;
	size_t			 lines;
};

static const struct rcase reply_cases[] = {
	{ "250 OK\r\n", SMTP_REPLY_OK, 250, "", "OK", 1 },
	{ "250 OK\n", SMTP_REPLY_OK, 250, "", "OK", 1 },
	{ "250 OK", SMTP_REPLY_OK, 250, "", "OK", 1 },	/* finish() */
	{ "250\r\n", SMTP_REPLY_OK, 250, "", "", 1 },
	{ "250 \r\n", SMTP_REPLY_OK, 250, "", "", 1 },
	{ "220 mx.example.com ESMTP Postfix (Debian/GNU)\r\n", SMTP_REPLY_OK,
	    220, "", "mx.example.com ESMTP Postfix (Debian/GNU)", 1 },
	{ "250 2.1.5 Ok\r\n", SMTP_REPLY_OK, 250, "2.1.5", "Ok", 1 },
	{ "250 2.1.0 Ok\r\n", SMTP_REPLY_OK, 250, "2.1.0", "Ok", 1 },
	{ "550 5.1.1 <a@b.c>: Recipient address rejected: User unknown\r\n",
	    SMTP_REPLY_OK, 550, "5.1.1",
	    "<a@b.c>: Recipient address rejected: User unknown", 1 },
	{ "550 5.1.10 RESOLVER.ADR.RecipientNotFound; not found\r\n",
	    SMTP_REPLY_OK, 550, "5.1.10",
	    "RESOLVER.ADR.RecipientNotFound; not found", 1 },
	{ "550 5.7.606 Access denied\r\n", SMTP_REPLY_OK, 550, "5.7.606",
	    "Access denied", 1 },
	{ "451 4.7.500 Server busy\r\n", SMTP_REPLY_OK, 451, "4.7.500",
	    "Server busy", 1 },
	{ "550 5.1.1\r\n", SMTP_REPLY_OK, 550, "5.1.1", "", 1 },
	/* class must match the code; else it is just text */
	{ "550 2.1.5 odd\r\n", SMTP_REPLY_OK, 550, "", "2.1.5 odd", 1 },
	{ "250 5.1.1 odd\r\n", SMTP_REPLY_OK, 250, "", "5.1.1 odd", 1 },
	/* not enhanced codes */
	{ "550 5.1 short\r\n", SMTP_REPLY_OK, 550, "", "5.1 short", 1 },
	{ "550 5.1.1234 long\r\n", SMTP_REPLY_OK, 550, "",
	    "5.1.1234 long", 1 },
	{ "550 5.1.1x\r\n", SMTP_REPLY_OK, 550, "", "5.1.1x", 1 },
	{ "550 3.1.1 x\r\n", SMTP_REPLY_OK, 550, "", "3.1.1 x", 1 },
	{ "550 5..1 x\r\n", SMTP_REPLY_OK, 550, "", "5..1 x", 1 },
	{ "550 5.1.\r\n", SMTP_REPLY_OK, 550, "", "5.1.", 1 },
	{ "550 #5.1.1 x\r\n", SMTP_REPLY_OK, 550, "", "#5.1.1 x", 1 },
	{ "550 5.999.999 x\r\n", SMTP_REPLY_OK, 550, "5.999.999", "x", 1 },
	/* multi-line */
	{ "250-mx.example.com\r\n250-PIPELINING\r\n250 8BITMIME\r\n",
	    SMTP_REPLY_OK, 250, "", "mx.example.com\nPIPELINING\n8BITMIME",
	    3 },
	{ "250-a\n250-b\r\n250 c\n", SMTP_REPLY_OK, 250, "", "a\nb\nc", 3 },
	{ "250-\r\n250 \r\n", SMTP_REPLY_OK, 250, "", "\n", 2 },
	{ "250-\r\n250\r\n", SMTP_REPLY_OK, 250, "", "\n", 2 },
	{ "550-5.1.1 The email account that you tried to reach does not "
	  "exist. Please try\r\n550-5.1.1 double-checking the recipient's "
	  "email address for typos or\r\n550-5.1.1 unnecessary spaces.\r\n"
	  "550 5.1.1  https://support.google.com/mail/?p=NoSuchUser x - "
	  "gsmtp\r\n", SMTP_REPLY_OK, 550, "5.1.1",
	  "The email account that you tried to reach does not exist. Please "
	  "try\ndouble-checking the recipient's email address for typos or\n"
	  "unnecessary spaces.\nhttps://support.google.com/mail/?p=NoSuchUser"
	  " x - gsmtp", 4 },
	/* later lines that do not repeat the code keep their text */
	{ "550-5.7.1 first\r\n550 second 5.7.1\r\n", SMTP_REPLY_OK, 550,
	    "5.7.1", "first\nsecond 5.7.1", 2 },
	/* cleaning */
	{ "250 a\tb\r\n", SMTP_REPLY_OK, 250, "", "a b", 1 },
	{ "250 a\rb\r\n", SMTP_REPLY_OK, 250, "", "a b", 1 },
	{ "250 a\x01\x1b[31mb\x7f\r\n", SMTP_REPLY_OK, 250, "",
	    "a  [31mb ", 1 },
	{ "250 caf\xc3\xa9 \xe2\x9c\x93\r\n", SMTP_REPLY_OK, 250, "",
	    "caf\xc3\xa9 \xe2\x9c\x93", 1 },
	{ "250 bad \xff\xfe\xc3(\r\n", SMTP_REPLY_OK, 250, "", "bad ??" "?(", 1 },
	{ "250 over \xc0\xaf long\r\n", SMTP_REPLY_OK, 250, "",
	    "over ?? long", 1 },
	{ "250 c1 \xc2\x85 ctl\r\n", SMTP_REPLY_OK, 250, "", "c1 ?? ctl", 1 },
	{ "250 nul\0x\r\n", SMTP_REPLY_OK, 250, "", "nul x", 1 },
	/* errors */
	{ "\r\n", SMTP_REPLY_BAD_CODE, 0, NULL, NULL, 0 },
	{ "\n", SMTP_REPLY_BAD_CODE, 0, NULL, NULL, 0 },
	{ "25\r\n", SMTP_REPLY_BAD_CODE, 0, NULL, NULL, 0 },
	{ "2x0 OK\r\n", SMTP_REPLY_BAD_CODE, 0, NULL, NULL, 0 },
	{ "abc OK\r\n", SMTP_REPLY_BAD_CODE, 0, NULL, NULL, 0 },
	{ " 250 OK\r\n", SMTP_REPLY_BAD_CODE, 0, NULL, NULL, 0 },
	{ "-250 OK\r\n", SMTP_REPLY_BAD_CODE, 0, NULL, NULL, 0 },
	{ "HTTP/1.1 400 Bad Request\r\n", SMTP_REPLY_BAD_CODE, 0, NULL, NULL,
	    0 },
	{ "SSH-2.0-OpenSSH_9.2\r\n", SMTP_REPLY_BAD_CODE, 0, NULL, NULL, 0 },
	{ "100 continue\r\n", SMTP_REPLY_CODE_RANGE, 0, NULL, NULL, 0 },
	{ "199 x\r\n", SMTP_REPLY_CODE_RANGE, 0, NULL, NULL, 0 },
	{ "600 x\r\n", SMTP_REPLY_CODE_RANGE, 0, NULL, NULL, 0 },
	{ "000 x\r\n", SMTP_REPLY_CODE_RANGE, 0, NULL, NULL, 0 },
	{ "999 x\r\n", SMTP_REPLY_CODE_RANGE, 0, NULL, NULL, 0 },
	{ "2500 x\r\n", SMTP_REPLY_BAD_SEPARATOR, 0, NULL, NULL, 0 },
	{ "250OK\r\n", SMTP_REPLY_BAD_SEPARATOR, 0, NULL, NULL, 0 },
	{ "250\tOK\r\n", SMTP_REPLY_BAD_SEPARATOR, 0, NULL, NULL, 0 },
	{ "250_OK\r\n", SMTP_REPLY_BAD_SEPARATOR, 0, NULL, NULL, 0 },
	{ "250-a\r\n251 b\r\n", SMTP_REPLY_CODE_MISMATCH, 0, NULL, NULL, 0 },
	{ "250-a\r\n550 b\r\n", SMTP_REPLY_CODE_MISMATCH, 0, NULL, NULL, 0 },
	{ "250-a\r\nxyz b\r\n", SMTP_REPLY_BAD_CODE, 0, NULL, NULL, 0 },
	{ "250-a\r\n\r\n", SMTP_REPLY_BAD_CODE, 0, NULL, NULL, 0 },
	{ "250 a\r\n250 b\r\n", SMTP_REPLY_TRAILING, 0, NULL, NULL, 0 },
	{ "250-a\r\n", SMTP_REPLY_MORE, 0, NULL, NULL, 0 },
	{ "250-a\r\n250-b", SMTP_REPLY_MORE, 0, NULL, NULL, 0 },
	{ "", SMTP_REPLY_MORE, 0, NULL, NULL, 0 },
};

static size_t
case_len(const char *s)
{
	/* one case embeds a NUL: count up to the final LF */
	if (strncmp(s, "250 nul", 7) == 0)
		return 11;
	return strlen(s);
}

static void
test_reply_table(void **state)
{
	struct smtp_reply r;
	enum smtp_reply_status st;
	size_t i;
	int fails = 0;

	for (i = 0; i < sizeof(reply_cases) / sizeof(reply_cases[0]); i++) {
		const struct rcase *c = &reply_cases[i];

		st = smtp_reply_parse(c->in, case_len(c->in), &r);
		if (st != c->want) {
			print_message("FAIL case %zu: got %s want %s\n", i,
			    smtp_reply_status_names[st],
			    smtp_reply_status_names[c->want]);
			fails++;
			continue;
		}
		if (st != SMTP_REPLY_OK) {
			if (r.text != NULL)
				fails++;
			continue;
		}
		if (r.code != c->code || strcmp(r.enhanced, c->enhanced) ||
		    strcmp(r.text, c->text) || r.lines != c->lines ||
		    r.text_len != strlen(c->text)) {
			print_message("FAIL case %zu: %d [%s] [%s] %zu\n", i,
			    r.code, r.enhanced, r.text, r.lines);
			fails++;
		}
		smtp_reply_free(&r);
	}
	assert_int_equal(fails, 0);
}

static void
test_enhanced_fields(void **state)
{
	struct smtp_reply r;

	assert_int_equal(smtp_reply_parse("550 5.1.10 x", 12, &r),
	    SMTP_REPLY_OK);
	assert_int_equal(r.enh_class, 5);
	assert_int_equal(r.enh_subject, 1);
	assert_int_equal(r.enh_detail, 10);
	smtp_reply_free(&r);
	assert_int_equal(smtp_reply_parse("250 ok", 6, &r), SMTP_REPLY_OK);
	assert_int_equal(r.enh_class, -1);
	assert_int_equal(r.enh_subject, -1);
	assert_int_equal(r.enh_detail, -1);
	smtp_reply_free(&r);
}

/* Feeds s in pieces of the given sizes (cycled) and records the replies. */
struct result {
	int	 codes[16];
	char	 texts[16][256];
	size_t	 n;
	enum smtp_reply_status last;
};

static void
feed_split(const char *s, size_t len, const size_t *sizes, size_t nsizes,
    struct result *res)
{
	struct smtp_reply_parser p;
	struct smtp_reply r;
	enum smtp_reply_status st = SMTP_REPLY_MORE;
	size_t off = 0, k = 0, n, used;

	memset(res, 0, sizeof(*res));
	smtp_reply_parser_init(&p);
	while (off < len) {
		n = sizes[k++ % nsizes];
		if (n > len - off)
			n = len - off;
		while (n > 0) {
			st = smtp_reply_parser_feed(&p, s + off, n, &used, &r);
			assert_true(used <= n);
			off += used;
			n -= used;
			if (st == SMTP_REPLY_OK) {
				assert_true(res->n < 16);
				res->codes[res->n] = r.code;
				snprintf(res->texts[res->n], 256, "%s", r.text);
				res->n++;
				smtp_reply_free(&r);
			} else if (st != SMTP_REPLY_MORE)
				goto out;
		}
	}
	st = smtp_reply_parser_finish(&p, &r);
	if (st == SMTP_REPLY_OK) {
		res->codes[res->n] = r.code;
		snprintf(res->texts[res->n], 256, "%s", r.text);
		res->n++;
		smtp_reply_free(&r);
	}
out:
	res->last = st;
	smtp_reply_parser_free(&p);
}

static const char *const split_inputs[] = {
	"220 mx.example.com ESMTP\r\n",
	"250-mx.example.com Hello\r\n250-PIPELINING\r\n250-SIZE 10240000\r\n"
	"250-STARTTLS\r\n250 SMTPUTF8\r\n",
	/* PIPELINING: MAIL, RCPT, RCPT, RSET replies in one read */
	"250 2.1.0 Ok\r\n250 2.1.5 Ok\r\n550 5.1.1 <x@y>: User unknown\r\n"
	"250 2.0.0 Ok\r\n",
	"250-a\n250 b\n354 go ahead\n221 2.0.0 Bye\n",
	"550-5.1.1 one\r\n550-5.1.1 two\r\n550 5.1.1 three\r\n450 4.2.0 x\r\n",
	"250 ok\r\n2x0 bad\r\n250 never\r\n",
	"250-a\r\n251 b\r\n",
	"221 bye",
};

static void
test_every_split_gives_the_same_replies(void **state)
{
	struct result whole, part;
	size_t i, a, b, len, sizes[3];
	static const size_t ones[] = { 1 };
	static const size_t odd[] = { 3, 1, 7, 2 };

	for (i = 0; i < sizeof(split_inputs) / sizeof(split_inputs[0]); i++) {
		len = strlen(split_inputs[i]);
		sizes[0] = len;
		feed_split(split_inputs[i], len, sizes, 1, &whole);
		feed_split(split_inputs[i], len, ones, 1, &part);
		assert_int_equal(part.n, whole.n);
		assert_int_equal(part.last, whole.last);
		feed_split(split_inputs[i], len, odd, 4, &part);
		assert_int_equal(part.n, whole.n);
		/* every split into three pieces */
		for (a = 0; a <= len; a++)
			for (b = a; b <= len; b++) {
				sizes[0] = a ? a : 1;
				sizes[1] = b - a ? b - a : 1;
				sizes[2] = len;
				feed_split(split_inputs[i], len, sizes, 3,
				    &part);
				assert_int_equal(part.n, whole.n);
				assert_int_equal(part.last, whole.last);
				for (size_t k = 0; k < whole.n; k++) {
					assert_int_equal(part.codes[k],
					    whole.codes[k]);
					assert_string_equal(part.texts[k],
					    whole.texts[k]);
				}
			}
	}
}

static void
test_pipelined_replies_come_one_at_a_time(void **state)
{
	static const char in[] = "250 2.1.0 Ok\r\n250 2.1.5 Ok\r\n"
	    "550 5.1.1 No such user\r\n250 2.0.0 Ok\r\n";
	static const int codes[] = { 250, 250, 550, 250 };
	static const size_t ends[] = { 14, 28, 52, 66 };
	struct smtp_reply_parser p;
	struct smtp_reply r;
	size_t off = 0, used, i;

	smtp_reply_parser_init(&p);
	for (i = 0; i < 4; i++) {
		assert_int_equal(smtp_reply_parser_feed(&p, in + off,
		    sizeof(in) - 1 - off, &used, &r), SMTP_REPLY_OK);
		off += used;
		assert_int_equal(off, ends[i]);
		assert_int_equal(r.code, codes[i]);
		smtp_reply_free(&r);
	}
	assert_int_equal(off, sizeof(in) - 1);
	assert_false(smtp_reply_parser_pending(&p));
	assert_int_equal(smtp_reply_parser_feed(&p, "", 0, &used, &r),
	    SMTP_REPLY_MORE);
	assert_int_equal(smtp_reply_parser_finish(&p, &r), SMTP_REPLY_MORE);
	smtp_reply_parser_free(&p);
}

static void
test_line_and_reply_limits(void **state)
{
	struct smtp_reply_parser p;
	struct smtp_reply r;
	char *big;
	size_t used, i, n, off;
	enum smtp_reply_status st;

	big = malloc(2 * SMTP_REPLY_MAX);
	assert_non_null(big);
	/* a line of exactly SMTP_REPLY_LINE_MAX octets with CRLF is fine */
	memcpy(big, "250 ", 4);
	memset(big + 4, 'x', SMTP_REPLY_LINE_MAX - 6);
	memcpy(big + SMTP_REPLY_LINE_MAX - 2, "\r\n", 2);
	assert_int_equal(smtp_reply_parse(big, SMTP_REPLY_LINE_MAX, &r),
	    SMTP_REPLY_OK);
	assert_int_equal(r.text_len, SMTP_REPLY_LINE_MAX - 6);
	smtp_reply_free(&r);
	/* one more octet is not */
	memcpy(big, "250 ", 4);
	memset(big + 4, 'x', SMTP_REPLY_LINE_MAX - 5);
	memcpy(big + SMTP_REPLY_LINE_MAX - 1, "\r\n", 2);
	assert_int_equal(smtp_reply_parse(big, SMTP_REPLY_LINE_MAX + 1, &r),
	    SMTP_REPLY_LINE_TOO_LONG);
	/* a line without end, one byte at a time: stops at the cap */
	smtp_reply_parser_init(&p);
	memset(big, '5', SMTP_REPLY_MAX);
	for (i = 0; i < SMTP_REPLY_MAX; i++) {
		st = smtp_reply_parser_feed(&p, big + i, 1, &used, &r);
		if (st != SMTP_REPLY_MORE)
			break;
	}
	assert_int_equal(st, SMTP_REPLY_LINE_TOO_LONG);
	assert_int_equal(i, SMTP_REPLY_LINE_MAX - 1);
	assert_true(p.line.len < SMTP_REPLY_LINE_MAX);
	/* the error is sticky until reset */
	assert_int_equal(smtp_reply_parser_feed(&p, "250 ok\r\n", 8, &used,
	    &r), SMTP_REPLY_LINE_TOO_LONG);
	assert_int_equal(used, 0);
	smtp_reply_parser_reset(&p);
	assert_int_equal(smtp_reply_parser_feed(&p, "250 ok\r\n", 8, &used,
	    &r), SMTP_REPLY_OK);
	smtp_reply_free(&r);
	/* endless continuation lines: stop at the reply cap */
	smtp_reply_parser_reset(&p);
	n = 0;
	for (off = 0; off + 1000 < 2 * SMTP_REPLY_MAX; off += 1000) {
		memcpy(big + off, "250-", 4);
		memset(big + off + 4, 'y', 994);
		memcpy(big + off + 998, "\r\n", 2);
		n++;
	}
	st = smtp_reply_parser_feed(&p, big, off, &used, &r);
	assert_int_equal(st, SMTP_REPLY_TOO_LONG);
	assert_true(used <= SMTP_REPLY_MAX);
	assert_true(p.text.len <= SMTP_REPLY_MAX);
	smtp_reply_parser_free(&p);
	free(big);
}

static void
test_finish_completes_an_unterminated_last_line(void **state)
{
	struct smtp_reply_parser p;
	struct smtp_reply r;
	size_t used;

	smtp_reply_parser_init(&p);
	assert_int_equal(smtp_reply_parser_feed(&p, "221 2.0.0 Bye", 13, &used,
	    &r), SMTP_REPLY_MORE);
	assert_true(smtp_reply_parser_pending(&p));
	assert_int_equal(smtp_reply_parser_finish(&p, &r), SMTP_REPLY_OK);
	assert_int_equal(r.code, 221);
	assert_string_equal(r.enhanced, "2.0.0");
	assert_string_equal(r.text, "Bye");
	smtp_reply_free(&r);
	/* an unfinished multi-line reply stays unfinished */
	assert_int_equal(smtp_reply_parser_feed(&p, "250-a\r\n250-b", 12,
	    &used, &r), SMTP_REPLY_MORE);
	assert_int_equal(smtp_reply_parser_finish(&p, &r), SMTP_REPLY_MORE);
	smtp_reply_parser_free(&p);
}

static void
test_oneline_joins_with_spaces(void **state)
{
	struct smtp_reply r;
	struct buf b;

	assert_int_equal(smtp_reply_parse("550-5.1.1 a\r\n550-5.1.1 b\r\n"
	    "550 5.1.1 c\r\n", 39, &r), SMTP_REPLY_OK);
	buf_init(&b, 1024);
	assert_int_equal(smtp_reply_oneline(&r, &b), 0);
	assert_string_equal(buf_str(&b), "a b c");
	buf_free(&b);
	smtp_reply_free(&r);
}

static const char ehlo_postfix[] =
	"250-mx.example.com\r\n250-PIPELINING\r\n250-SIZE 10240000\r\n"
	"250-VRFY\r\n250-ETRN\r\n250-STARTTLS\r\n250-ENHANCEDSTATUSCODES\r\n"
	"250-8BITMIME\r\n250-DSN\r\n250-SMTPUTF8\r\n250 CHUNKING\r\n";
static const char ehlo_gmail[] =
	"250-mx.google.com at your service, [192.0.2.1]\r\n"
	"250-SIZE 157286400\r\n250-8BITMIME\r\n250-STARTTLS\r\n"
	"250-ENHANCEDSTATUSCODES\r\n250-PIPELINING\r\n250-CHUNKING\r\n"
	"250 SMTPUTF8\r\n";
static const char ehlo_outlook[] =
	"250-AM0PR01CA0001.outlook.office365.com Hello [192.0.2.1]\r\n"
	"250-SIZE 157286400\r\n250-PIPELINING\r\n250-DSN\r\n"
	"250-ENHANCEDSTATUSCODES\r\n250-STARTTLS\r\n250-8BITMIME\r\n"
	"250-BINARYMIME\r\n250-CHUNKING\r\n250 SMTPUTF8\r\n";
static const char ehlo_exim[] =
	"250-mail.example.org Hello x [192.0.2.1]\r\n250-SIZE 52428800\r\n"
	"250-8BITMIME\r\n250-PIPELINING\r\n250-AUTH PLAIN LOGIN\r\n"
	"250-CHUNKING\r\n250-STARTTLS\r\n250-PRDR\r\n250 HELP\r\n";
static const char ehlo_minimal[] = "250 old.example.net\r\n";
static const char ehlo_lower[] =
	"250-Mx.Example\r\n250-starttls\r\n250-size\r\n250 pipelining\r\n";
/* The greeting line is not a keyword even when it looks like one. */
static const char ehlo_tricky[] =
	"250-STARTTLS.example.com\r\n250-XSTARTTLS\r\n250-SIZE=1000\r\n"
	"250 STARTTLSX\r\n";

static void
check_ehlo(const char *in, unsigned want, unsigned long size)
{
	struct smtp_reply r;
	struct smtp_ehlo e;

	assert_int_equal(smtp_reply_parse(in, strlen(in), &r), SMTP_REPLY_OK);
	assert_int_equal(smtp_reply_ehlo(&r, &e), 0);
	assert_int_equal(e.ext, want);
	assert_int_equal(e.size, size);
	smtp_reply_free(&r);
}

#define B(x) SMTP_EXT_BIT(SMTP_EXT_##x)

static void
test_ehlo_extensions(void **state)
{
	struct smtp_reply r;
	struct smtp_ehlo e;
	const char *pr;
	size_t pl;

	check_ehlo(ehlo_postfix, B(STARTTLS) | B(PIPELINING) | B(SIZE) |
	    B(8BITMIME) | B(SMTPUTF8) | B(ENHANCEDSTATUSCODES) | B(CHUNKING) |
	    B(DSN), 10240000);
	check_ehlo(ehlo_gmail, B(STARTTLS) | B(PIPELINING) | B(SIZE) |
	    B(8BITMIME) | B(SMTPUTF8) | B(ENHANCEDSTATUSCODES) | B(CHUNKING),
	    157286400);
	check_ehlo(ehlo_outlook, B(STARTTLS) | B(PIPELINING) | B(SIZE) |
	    B(8BITMIME) | B(SMTPUTF8) | B(ENHANCEDSTATUSCODES) | B(CHUNKING) |
	    B(DSN), 157286400);
	check_ehlo(ehlo_exim, B(STARTTLS) | B(PIPELINING) | B(SIZE) |
	    B(8BITMIME) | B(CHUNKING), 52428800);
	check_ehlo(ehlo_minimal, 0, 0);
	check_ehlo(ehlo_lower, B(STARTTLS) | B(SIZE) | B(PIPELINING), 0);
	check_ehlo(ehlo_tricky, B(SIZE), 1000);

	assert_int_equal(smtp_reply_parse(ehlo_exim, strlen(ehlo_exim), &r),
	    SMTP_REPLY_OK);
	assert_true(smtp_reply_ehlo_has(&r, "auth", &pr, &pl));
	assert_int_equal(pl, 11);
	assert_memory_equal(pr, "PLAIN LOGIN", 11);
	assert_true(smtp_reply_ehlo_has(&r, "PRDR", NULL, NULL));
	assert_false(smtp_reply_ehlo_has(&r, "SMTPUTF8", NULL, NULL));
	assert_false(smtp_reply_ehlo_has(&r, "mail.example.org", NULL, NULL));
	smtp_reply_free(&r);
	/* a refused EHLO offers nothing */
	assert_int_equal(smtp_reply_parse("502 5.5.1 no\r\n", 14, &r),
	    SMTP_REPLY_OK);
	assert_int_equal(smtp_reply_ehlo(&r, &e), -1);
	assert_int_equal(e.ext, 0);
	smtp_reply_free(&r);
	/* an absurd SIZE is "no limit" rather than a wrapped number */
	assert_int_equal(smtp_reply_parse("250-x\r\n250 SIZE "
	    "999999999999999999999999999\r\n", 43, &r), SMTP_REPLY_OK);
	assert_int_equal(smtp_reply_ehlo(&r, &e), 0);
	assert_int_equal(e.size, 0);
	smtp_reply_free(&r);
}

static const struct {
	const char	*text;
	int		 v[3];
	size_t		 len;
} enh_cases[] = {
	{ "5.1.1", { 5, 1, 1 }, 5 },
	{ "5.1.1 text", { 5, 1, 1 }, 5 },
	{ "4.7.500 x", { 4, 7, 500 }, 7 },
	{ "2.0.0", { 2, 0, 0 }, 5 },
	{ "5.999.999", { 5, 999, 999 }, 9 },
	{ "5.1.10\tx", { 5, 1, 10 }, 6 },
	{ "5.1000.1", { 0 }, 0 },
	{ "5.1.1000", { 0 }, 0 },
	{ "3.1.1", { 0 }, 0 },
	{ "5.1", { 0 }, 0 },
	{ "5.1.", { 0 }, 0 },
	{ "5..1", { 0 }, 0 },
	{ ".1.1", { 0 }, 0 },
	{ "5.1.1.", { 0 }, 0 },
	{ "5.1.1;", { 0 }, 0 },
	{ "51.1.1", { 0 }, 0 },
	{ "", { 0 }, 0 },
};

static void
test_enhanced_code_syntax(void **state)
{
	size_t i, k;
	int v[3];

	for (i = 0; i < sizeof(enh_cases) / sizeof(enh_cases[0]); i++) {
		k = smtp_reply_parse_enhanced(enh_cases[i].text,
		    strlen(enh_cases[i].text), v);
		assert_int_equal(k, enh_cases[i].len);
		if (k > 0)
			assert_memory_equal(v, enh_cases[i].v, sizeof(v));
	}
}

/*
 * RCPT classification against real-world replies. Each is the raw reply as
 * a server sends it.
 */
#define V(x) SMTP_VERDICT_##x
static const struct {
	const char		*reply;
	enum smtp_verdict	 want;
} classify_cases[] = {
	/* accepted */
	{ "250 2.1.5 Ok\r\n", V(ACCEPTED) },
	{ "250 2.1.5 OK x12si345 - gsmtp\r\n", V(ACCEPTED) },
	{ "250 2.1.5 Recipient OK\r\n", V(ACCEPTED) },
	{ "250 Accepted\r\n", V(ACCEPTED) },
	{ "250 <x@example.com>... Recipient ok\r\n", V(ACCEPTED) },
	{ "251 User not local; will forward to <x@example.org>\r\n",
	    V(ACCEPTED) },
	{ "252 2.1.5 Cannot VRFY user, but will accept message\r\n",
	    V(ACCEPTED) },
	{ "250 recipient <x@yahoo.com> ok\r\n", V(ACCEPTED) },

	/* mailbox not found: Gmail */
	{ "550-5.1.1 The email account that you tried to reach does not "
	  "exist. Please try\r\n550-5.1.1 double-checking the recipient's "
	  "email address for typos or\r\n550-5.1.1 unnecessary spaces. For "
	  "more information, go to\r\n550 5.1.1  https://support.google.com/"
	  "mail/?p=NoSuchUser d2si1qkb.123 - gsmtp\r\n",
	  V(MAILBOX_NOT_FOUND) },
	/* Outlook / Office 365 / Hotmail */
	{ "550 5.5.0 Requested action not taken: mailbox unavailable "
	  "(S2017062302). [AM5EUR02FT012.eop-EUR02.prod.protection.outlook.com]"
	  "\r\n", V(MAILBOX_NOT_FOUND) },
	{ "550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient "
	  "x@contoso.com not found by SMTP address lookup\r\n",
	  V(MAILBOX_NOT_FOUND) },
	{ "550 5.4.1 Recipient address rejected: Access denied. "
	  "AS(201806281) [DM6NAM11FT012.eop-nam11.prod.protection.outlook.com]"
	  "\r\n", V(MAILBOX_NOT_FOUND) },
	{ "550 5.1.1 RESOLVER.ADR.RecipNotFound; not found\r\n",
	  V(MAILBOX_NOT_FOUND) },
	{ "550 Requested action not taken: mailbox unavailable (3150)\r\n",
	  V(MAILBOX_NOT_FOUND) },
	/* Yahoo / AOL */
	{ "554 delivery error: dd This user doesn't have a yahoo.com account "
	  "(x@yahoo.com) [0] - mta1234.mail.bf1.yahoo.com\r\n",
	  V(MAILBOX_NOT_FOUND) },
	{ "552 1 Requested mail action aborted, mailbox not found\r\n",
	  V(MAILBOX_NOT_FOUND) },
	{ "554 delivery error: dd This user doesn't have a aol.com account "
	  "(x@aol.com) [-9] - mtaout-aaa01.mx.aol.com\r\n",
	  V(MAILBOX_NOT_FOUND) },
	/* Postfix */
	{ "550 5.1.1 <x@example.com>: Recipient address rejected: User "
	  "unknown in local recipient table\r\n", V(MAILBOX_NOT_FOUND) },
	{ "550 5.1.1 <x@example.com>: Recipient address rejected: User "
	  "unknown in virtual mailbox table\r\n", V(MAILBOX_NOT_FOUND) },
	{ "550 5.1.1 <x@example.com>: Recipient address rejected: User "
	  "unknown in relay recipient table\r\n", V(MAILBOX_NOT_FOUND) },
	{ "550 5.1.1 <x@example.com>: Recipient address rejected: "
	  "undeliverable address: host mx[192.0.2.1] said: 550 5.1.1 User "
	  "unknown\r\n", V(MAILBOX_NOT_FOUND) },
	/* Exim */
	{ "550 Unrouteable address\r\n", V(MAILBOX_NOT_FOUND) },
	{ "550 No Such User Here\"\r\n", V(MAILBOX_NOT_FOUND) },
	{ "550-Callout verification failed:\r\n550 550 Unrouteable "
	  "address\r\n", V(MAILBOX_NOT_FOUND) },
	{ "550 5.1.1 <x@example.com>: Recipient address rejected: "
	  "x@example.com\r\n", V(MAILBOX_NOT_FOUND) },
	/* sendmail, qmail, others */
	{ "550 5.1.1 <x@example.com>... User unknown\r\n",
	  V(MAILBOX_NOT_FOUND) },
	{ "553 5.3.0 <x@example.com>... No such user\r\n",
	  V(MAILBOX_NOT_FOUND) },
	{ "550 sorry, no mailbox here by that name. (#5.1.1)\r\n",
	  V(MAILBOX_NOT_FOUND) },
	{ "511 sorry, no mailbox here by that name (#5.1.1 - chkuser)\r\n",
	  V(MAILBOX_NOT_FOUND) },
	{ "550 5.1.1 <x@icloud.com>: user does not exist\r\n",
	  V(MAILBOX_NOT_FOUND) },
	{ "550 Message was not accepted -- invalid mailbox.  Local mailbox "
	  "x@mail.ru is unavailable: user not found\r\n",
	  V(MAILBOX_NOT_FOUND) },
	{ "550 5.1.1 Not our Customer\r\n", V(MAILBOX_NOT_FOUND) },
	{ "550 Invalid Recipient - https://community.mimecast.com/docs/"
	  "DOC-1369#550 [abcdEFG.us12]\r\n", V(MAILBOX_NOT_FOUND) },
	{ "550 5.1.1 User Unknown\r\n", V(MAILBOX_NOT_FOUND) },
	{ "550 5.1.1 User does not exist - <x@zoho.com>\r\n",
	  V(MAILBOX_NOT_FOUND) },
	{ "550 #5.1.0 Address rejected x@example.com\r\n", V(UNKNOWN) },
	{ "550 Mailbox not found\r\n", V(MAILBOX_NOT_FOUND) },
	{ "550 no such recipient\r\n", V(MAILBOX_NOT_FOUND) },
	{ "550 Recipient unknown\r\n", V(MAILBOX_NOT_FOUND) },
	{ "550 unknown user\r\n", V(MAILBOX_NOT_FOUND) },
	{ "550 Invalid recipient: <x@example.com>\r\n", V(MAILBOX_NOT_FOUND) },
	{ "550 The mailbox does not exist\r\n", V(MAILBOX_NOT_FOUND) },
	{ "550 Requested action not taken: mailbox unavailable\r\n",
	  V(MAILBOX_NOT_FOUND) },
	{ "553 5.1.3 <x>... Invalid recipient address syntax\r\n",
	  V(MAILBOX_NOT_FOUND) },
	{ "551 5.1.6 Recipient no longer on server\r\n", V(MAILBOX_NOT_FOUND) },
	{ "550 5.1.10 Recipient address has null MX\r\n",
	  V(MAILBOX_NOT_FOUND) },
	{ "550 5.1.1 <x@t-online.de>: Recipient address rejected\r\n",
	  V(MAILBOX_NOT_FOUND) },

	/* disabled */
	{ "550-5.2.1 The email account that you tried to reach is disabled. "
	  "Learn more at\r\n550 5.2.1  https://support.google.com/mail/?p="
	  "DisabledUser x - gsmtp\r\n", V(DISABLED) },
	{ "554 delivery error: dd Sorry your message to x@yahoo.com cannot be "
	  "delivered. This mailbox is disabled (554.30). - mta.yahoo.com\r\n",
	  V(DISABLED) },
	{ "550 5.2.1 <x@example.com>: Recipient address rejected: Account "
	  "disabled\r\n", V(DISABLED) },
	{ "550 5.2.1 Mailbox unavailable. This account has been disabled\r\n",
	  V(DISABLED) },
	{ "550 Account Inactive\r\n", V(DISABLED) },
	{ "550 5.0.0 <x@example.com>... User is inactive\r\n", V(DISABLED) },
	{ "550 Recipient suspended\r\n", V(DISABLED) },
	{ "550 This account has been deactivated\r\n", V(DISABLED) },
	{ "550 5.2.1 Mailbox disabled, not accepting messages\r\n",
	  V(DISABLED) },
	{ "550 account expired\r\n", V(DISABLED) },

	/* full */
	{ "552-5.2.2 The email account that you tried to reach is over quota. "
	  "Please direct\r\n552-5.2.2 the recipient to\r\n552 5.2.2  https://"
	  "support.google.com/mail/?p=OverQuotaPerm x - gsmtp\r\n",
	  V(MAILBOX_FULL) },
	{ "452-4.2.2 The email account that you tried to reach is over quota. "
	  "Please direct\r\n452 4.2.2 the recipient to https://support.google."
	  "com/mail/?p=OverQuotaTemp x - gsmtp\r\n", V(MAILBOX_FULL) },
	{ "452 4.2.2 The recipient's mailbox is full and can't accept "
	  "messages now.\r\n", V(MAILBOX_FULL) },
	{ "552 5.2.2 <x@example.com>: Recipient address rejected: mailbox "
	  "full\r\n", V(MAILBOX_FULL) },
	{ "550 5.2.2 mailbox full\r\n", V(MAILBOX_FULL) },
	{ "552 Requested mail action aborted: exceeded storage allocation\r\n",
	  V(MAILBOX_FULL) },
	{ "550 Mailbox quota exceeded\r\n", V(MAILBOX_FULL) },
	{ "552 5.2.2 Mailbox size limit exceeded\r\n", V(MAILBOX_FULL) },
	{ "452 Mailbox is full\r\n", V(MAILBOX_FULL) },
	{ "554 5.2.2 mailbox full; x@example.com\r\n", V(MAILBOX_FULL) },
	{ "552 5.2.2 Over quota\r\n", V(MAILBOX_FULL) },
	{ "550 user is overquota\r\n", V(MAILBOX_FULL) },
	{ "450 4.2.2 x@example.com: mailbox is full / blocks limit "
	  "exceeded\r\n", V(MAILBOX_FULL) },
	{ "552 5.2.2 mailbox is full / blocks limit exceeded\r\n",
	  V(MAILBOX_FULL) },

	/* greylisting and temporary */
	{ "450 4.2.0 <x@example.com>: Recipient address rejected: "
	  "Greylisted, see http://postgrey.schweikert.ch/help/example.com."
	  "html\r\n", V(GREYLISTED) },
	{ "450 4.7.1 <x@example.com>: Recipient address rejected: "
	  "Greylisted for 300 seconds\r\n", V(GREYLISTED) },
	{ "451 4.7.1 Greylisting in action, please come back later\r\n",
	  V(GREYLISTED) },
	{ "451 4.7.1 Please try again later\r\n", V(GREYLISTED) },
	{ "451 Greylisted, please try again in 300 seconds\r\n",
	  V(GREYLISTED) },
	{ "450 graylisted, try later\r\n", V(GREYLISTED) },
	{ "451 Temporary local problem - please try later\r\n",
	  V(GREYLISTED) },
	{ "451-The server has reached its limit for processing requests from "
	  "your host.\r\n451 Please try again later.\r\n", V(GREYLISTED) },
	{ "421 4.7.0 Try again later, closing connection. (EHLO) x - gsmtp"
	  "\r\n", V(GREYLISTED) },
	{ "450-4.2.1 The user you are trying to contact is receiving mail at "
	  "a rate that\r\n450-4.2.1 prevents additional messages from being "
	  "delivered. Please resend your\r\n450 4.2.1 message at a later time."
	  "\r\n", V(TEMPORARY) },
	{ "450 4.1.1 <x@example.com>: Recipient address rejected: unverified "
	  "address: host mx[192.0.2.1] said: 550 5.1.1 User unknown\r\n",
	  V(TEMPORARY) },
	{ "451 4.3.0 <x@example.com>: Temporary lookup failure\r\n",
	  V(TEMPORARY) },
	{ "452 4.5.3 Error: too many recipients\r\n", V(TEMPORARY) },
	{ "421 4.3.2 Service shutting down\r\n", V(TEMPORARY) },
	{ "421 4.4.2 mx.example.com Error: timeout exceeded\r\n",
	  V(TEMPORARY) },
	{ "451-4.3.0 Mail server temporarily rejected message. x - gsmtp\r\n"
	  "451 4.3.0 x\r\n", V(TEMPORARY) },
	{ "450 4.2.1 Mailbox disabled, not accepting messages\r\n",
	  V(TEMPORARY) },
	{ "450 Requested mail action not taken: mailbox unavailable\r\n",
	  V(TEMPORARY) },
	{ "450 4.1.8 <s@x.example>: Sender address rejected: Domain not "
	  "found\r\n", V(TEMPORARY) },
	{ "452 Too many recipients received this hour\r\n", V(TEMPORARY) },
	{ "421 Service not available\r\n", V(TEMPORARY) },
	{ "450\r\n", V(TEMPORARY) },

	/* blocks: never a mailbox verdict */
	{ "550 5.7.1 Service unavailable, Client host [192.0.2.1] blocked "
	  "using Spamhaus. To request removal from this list see https://www."
	  "spamhaus.org/query/ip/192.0.2.1 AS(1450) [x.outlook.com]\r\n",
	  V(BLOCKED_CLIENT) },
	{ "550 5.7.606 Access denied, banned sending IP [192.0.2.1]. To "
	  "request removal from this list please visit https://sender.office."
	  "com/ and follow the directions.\r\n", V(BLOCKED_CLIENT) },
	{ "550 SC-001 (BAY004-MC1F7) Unfortunately, messages from 192.0.2.1 "
	  "weren't sent. Please contact your Internet service provider since "
	  "part of their network is on our block list.\r\n", V(BLOCKED_CLIENT) },
	{ "451 4.7.500 Server busy. Please try again later from [192.0.2.1]. "
	  "(S77714) [x.outlook.com]\r\n", V(GREYLISTED) },
	{ "421-4.7.0 [192.0.2.1      15] Our system has detected an unusual "
	  "rate of\r\n421-4.7.0 unsolicited mail originating from your IP "
	  "address. To protect our\r\n421-4.7.0 users from spam, mail sent "
	  "from your IP address has been temporarily\r\n421 4.7.0 rate limited."
	  "\r\n", V(BLOCKED) },
	{ "550-5.7.1 [192.0.2.1] Our system has detected that this message "
	  "is\r\n550-5.7.1 likely unsolicited mail.\r\n550 5.7.1 x - gsmtp\r\n",
	  V(BLOCKED) },
	{ "550-5.7.26 This mail is unauthenticated, which poses a security "
	  "risk to the\r\n550 5.7.26 sender and Gmail users.\r\n", V(BLOCKED) },
	{ "421 4.7.0 [TSS04] Messages from 192.0.2.1 temporarily deferred due "
	  "to unexpected volume or user complaints - 4.16.55.1; see https://"
	  "postmaster.yahooinc.com/error-codes\r\n", V(BLOCKED) },
	{ "553 5.7.1 [BL21] Connections will not be accepted from 192.0.2.1, "
	  "because the ip is in Spamhaus's list; see https://postmaster."
	  "yahooinc.com/error-codes\r\n", V(BLOCKED_CLIENT) },
	{ "554 5.7.1 Service unavailable; Client host [192.0.2.1] blocked "
	  "using zen.spamhaus.org; https://www.spamhaus.org/query/ip/"
	  "192.0.2.1\r\n", V(BLOCKED_CLIENT) },
	/* relaying refused says nothing of us: not a block */
	{ "554 5.7.1 <x@example.com>: Relay access denied\r\n",
	    V(BAD_DESTINATION) },
	{ "550 5.7.1 <x@example.com>... Relaying denied\r\n",
	    V(BAD_DESTINATION) },
	{ "550 5.7.54 SMTP; Unable to relay recipient in non-accepted domain"
	  "\r\n", V(BAD_DESTINATION) },
	{ "554 5.7.1 <x@example.com>: Recipient address rejected: Access "
	  "denied\r\n", V(BLOCKED) },
	{ "450 4.7.1 Client host rejected: cannot find your hostname, "
	  "[192.0.2.1]\r\n", V(BLOCKED) },
	{ "550 5.7.1 No such user!\r\n", V(BLOCKED) },	/* Yandex: x.7 wins */
	{ "550 rejected because 192.0.2.1 is in a black list at "
	  "zen.spamhaus.org\r\n", V(BLOCKED_CLIENT) },
	{ "550 Administrative prohibition\r\n", V(BLOCKED) },
	{ "550 Rejected by header based Blocked Senders - block policy for "
	  "Sender - https://community.mimecast.com/docs/DOC-1369#550\r\n",
	  V(BLOCKED) },
	{ "550 permanent failure for one or more recipients (x@example.com:"
	  "blocked)\r\n", V(BLOCKED) },
	{ "554 5.7.1 Message rejected due to sender reputation\r\n",
	  V(BLOCKED) },
	{ "550 5.7.1 Unauthenticated email from example.com is not accepted "
	  "due to domain's DMARC policy\r\n", V(BLOCKED) },
	{ "550 High probability of spam\r\n", V(BLOCKED) },
	{ "550 5.7.1 Connections not accepted from servers without a valid "
	  "sender domain.flph829 Fix reverse DNS for 192.0.2.1\r\n",
	  V(BLOCKED) },
	{ "554-gmx.net (mxgmx017) Nemesis ESMTP Service not available\r\n"
	  "554-No SMTP service\r\n554 IP address is block listed.\r\n",
	  V(BLOCKED_CLIENT) },
	{ "550-Requested action not taken: mailbox unavailable\r\n550 invalid "
	  "DNS PTR resource record, IP=192.0.2.1\r\n", V(BLOCKED) },
	{ "554 Your access to this mail system has been rejected due to the "
	  "sending MTA's poor reputation.\r\n", V(BLOCKED_CLIENT) },
	{ "550 5.7.1 Email rejected per DMARC policy\r\n", V(BLOCKED) },
	{ "554 IP 192.0.2.1 listed on bl.spamcop.net\r\n", V(BLOCKED_CLIENT) },
	{ "550 Your IP is blacklisted\r\n", V(BLOCKED_CLIENT) },
	{ "554 rejected: listed at DNSBL b.barracudacentral.org\r\n",
	  V(BLOCKED_CLIENT) },
	/* a DNSBL text wins even over a mailbox code */
	{ "550 5.1.1 rejected: 192.0.2.1 listed in zen.spamhaus.org\r\n",
	  V(BLOCKED_CLIENT) },

	/* sender problems are not mailbox verdicts */
	{ "553 5.1.8 <s@x.example>: Sender address rejected: Domain not "
	  "found\r\n", V(SENDER_REJECTED) },
	{ "550 5.1.7 <s@x.example>: Sender address rejected: bad syntax\r\n",
	  V(SENDER_REJECTED) },
	{ "550 5.1.0 <s@x.example>: Sender address rejected: User unknown "
	  "in local recipient table\r\n", V(SENDER_REJECTED) },
	{ "550-Verification failed for <s@x.example>\r\n550-Unrouteable "
	  "address\r\n550 Sender verify failed\r\n", V(SENDER_REJECTED) },
	{ "550 5.1.8 Invalid sender domain\r\n", V(SENDER_REJECTED) },

	/* bad destination system */
	{ "550 5.1.2 <x@example.com>: Recipient address rejected: Domain not "
	  "found\r\n", V(BAD_DESTINATION) },
	{ "550 5.1.2 Host unknown\r\n", V(BAD_DESTINATION) },

	/* unknown: a 5xx that says nothing about the mailbox */
	{ "550\r\n", V(UNKNOWN) },
	{ "550 5.0.0\r\n", V(UNKNOWN) },
	{ "550 Message rejected\r\n", V(UNKNOWN) },
	{ "550 Recipient rejected\r\n", V(UNKNOWN) },
	{ "503 5.5.1 Error: need MAIL command\r\n", V(UNKNOWN) },
	{ "504 5.5.2 <x>: Helo command rejected: need fully-qualified hostname"
	  "\r\n", V(UNKNOWN) },
	{ "552 5.3.4 Message size exceeds fixed limit\r\n", V(UNKNOWN) },
	{ "553 sorry, that domain isn't in my list of allowed rcpthosts "
	  "(#5.7.1)\r\n", V(BAD_DESTINATION) },
	{ "550 relay not permitted\r\n", V(BAD_DESTINATION) },
	{ "554 Transaction failed\r\n", V(UNKNOWN) },
	{ "500 5.5.1 Command unrecognized\r\n", V(UNKNOWN) },
	{ "550 2.1.5 odd server\r\n", V(UNKNOWN) },
	{ "354 End data with <CR><LF>.<CR><LF>\r\n", V(UNKNOWN) },
};

static void
test_rcpt_classification(void **state)
{
	struct smtp_reply r;
	enum smtp_verdict v;
	size_t i;
	int fails = 0;

	for (i = 0; i < sizeof(classify_cases) / sizeof(classify_cases[0]);
	    i++) {
		const char *in = classify_cases[i].reply;

		if (smtp_reply_parse(in, strlen(in), &r) != SMTP_REPLY_OK) {
			print_message("FAIL parse [%s]\n", in);
			fails++;
			continue;
		}
		v = smtp_classify_reply(rules, NULL, &r);
		if (v != classify_cases[i].want) {
			print_message("FAIL [%s]: got %s want %s\n", in,
			    smtp_verdict_names[v],
			    smtp_verdict_names[classify_cases[i].want]);
			fails++;
		}
		smtp_reply_free(&r);
	}
	assert_int_equal(fails, 0);
}

static void
test_classify_raw_arguments(void **state)
{
	assert_int_equal(classify(550, "5.1.1", "whatever"),
	    V(MAILBOX_NOT_FOUND));
	assert_int_equal(classify(550, NULL, NULL), V(UNKNOWN));
	assert_int_equal(classify(550, "", "User unknown"),
	    V(MAILBOX_NOT_FOUND));
	/* enhanced code of the wrong class is ignored */
	assert_int_equal(classify(550, "4.1.1", "x"), V(UNKNOWN));
	assert_int_equal(classify(550, "garbage", "x"), V(UNKNOWN));
	assert_int_equal(classify(250, "5.1.1", NULL), V(ACCEPTED));
	assert_int_equal(classify(0, NULL, NULL), V(UNKNOWN));
	assert_int_equal(classify(600, NULL, NULL), V(UNKNOWN));
	assert_int_equal(classify(-1, NULL, NULL), V(UNKNOWN));
	/* word boundaries: "spam" inside another word does not block */
	assert_int_equal(classify(550, NULL,
	    "user unknown at antispam.example"), V(MAILBOX_NOT_FOUND));
	assert_int_equal(classify(550, NULL,
	    "user unknown (anti-spam gateway)"), V(BLOCKED));
	assert_int_equal(classify(550, NULL,
	    "UNBLOCKED: user unknown"), V(MAILBOX_NOT_FOUND));
	/* ... nor at the start of one: "rbl" and "block" in a quoted address */
	assert_int_equal(classify(550, "5.1.1",
	    "<rbloggs@example.com>: Recipient address rejected: User unknown"),
	    V(MAILBOX_NOT_FOUND));
	assert_int_equal(classify(550, NULL,
	    "<blockley@example.com>... User unknown"), V(MAILBOX_NOT_FOUND));
	/* a recipient verdict that merely mentions the sender */
	assert_int_equal(classify(550, NULL,
	    "Recipient address rejected: user unknown (mail from "
	    "<s@x.example>)"), V(MAILBOX_NOT_FOUND));
}

/*
 * Per provider: the same reply may mean something else on a provider's
 * hosts; blocks stay blocks everywhere.
 */
static const struct {
	const char		*provider;
	const char		*reply;
	enum smtp_verdict	 want;
} provider_cases[] = {
	/* Microsoft 365, directory-based edge blocking */
	{ "microsoft365", "550 5.4.1 Recipient address rejected: Access "
	  "denied. AS(201806281) [DM6NAM11FT012.eop-nam11.prod.protection."
	  "outlook.com]\r\n", V(MAILBOX_NOT_FOUND) },
	{ "microsoft365", "550 5.4.1 Access denied AS(201806281)\r\n",
	  V(MAILBOX_NOT_FOUND) },
	{ NULL, "550 5.4.1 Access denied AS(201806281)\r\n", V(UNKNOWN) },
	/* Gmail: busy mailbox exists; full; disabled */
	{ "google", "450-4.2.1 The user you are trying to contact is receiving "
	  "mail at a rate that\r\n450-4.2.1 prevents additional messages from "
	  "being delivered. Please resend your\r\n450 4.2.1 message at a "
	  "later time. x - gsmtp\r\n", V(ACCEPTED) },
	{ NULL, "450-4.2.1 The user you are trying to contact is receiving "
	  "mail at a rate that\r\n450 4.2.1 prevents additional messages\r\n",
	  V(TEMPORARY) },
	{ "google", "450 4.2.1 Mailbox disabled, not accepting messages\r\n",
	  V(TEMPORARY) },
	{ "google", "452-4.2.2 The recipient's inbox is out of storage space. "
	  "Please direct the\r\n452 4.2.2 recipient to https://support.google."
	  "com/mail/?p=OverQuotaTemp x - gsmtp\r\n", V(MAILBOX_FULL) },
	{ "google", "552-5.2.2 The recipient's inbox is out of storage space "
	  "and inactive.\r\n552 5.2.2 https://support.google.com/mail/?p="
	  "OverQuotaPerm x - gsmtp\r\n", V(MAILBOX_FULL) },
	{ "google", "550-5.2.1 The email account that you tried to reach is "
	  "disabled. Learn more at\r\n550 5.2.1 https://support.google.com/"
	  "mail/?p=DisabledUser x - gsmtp\r\n", V(DISABLED) },
	{ "google", "550-5.1.1 The email account that you tried to reach does "
	  "not exist.\r\n550 5.1.1 x - gsmtp\r\n", V(MAILBOX_NOT_FOUND) },
	/* rate limits: slow down (every provider, generic too) */
	{ "google", "421-4.7.28 [192.0.2.1      15] Our system has detected an "
	  "unusual rate of\r\n421-4.7.28 unsolicited mail originating from "
	  "your IP address. To protect our\r\n421 4.7.28 users from spam, mail "
	  "sent from your IP address has been temporarily rate limited.\r\n",
	  V(RATE_LIMITED) },
	{ NULL, "421 4.7.28 Gmail has detected an unusual rate of mail "
	  "originating from your SPF domain\r\n", V(RATE_LIMITED) },
	{ "outlook", "451 4.7.650 The mail server [192.0.2.1] has been "
	  "temporarily rate limited due to IP reputation. For e-mail delivery "
	  "information, see https://postmaster.live.com (S775) [x.outlook.com]"
	  "\r\n", V(RATE_LIMITED) },
	{ "microsoft365", "421 4.7.650 The mail server [192.0.2.1] has been "
	  "temporarily rate limited due to IP reputation.\r\n",
	  V(RATE_LIMITED) },
	{ NULL, "451 4.7.650 The mail server [192.0.2.1] has been "
	  "temporarily rate limited due to IP reputation.\r\n",
	  V(RATE_LIMITED) },
	{ "yahoo", "421 4.7.0 [TSS04] Messages from 192.0.2.1 temporarily "
	  "deferred due to unexpected volume or user complaints - 4.16.55.1; "
	  "see https://postmaster.yahooinc.com/error-codes\r\n",
	  V(RATE_LIMITED) },
	/* blocks that name our client, a DNSBL or a reputation policy */
	{ "proofpoint", "554 5.7.0 Blocked - see https://ipcheck.proofpoint.com/"
	  "?ip=192.0.2.1\r\n", V(BLOCKED) },
	{ "proofpoint", "554 Blocked - see https://ipcheck.proofpoint.com/"
	  "?ip=192.0.2.1\r\n", V(BLOCKED) },
	{ "mimecast", "550 Rejected by header based Anti-Spoofing policy: "
	  "x@example.com - https://community.mimecast.com/docs/DOC-1369#550 "
	  "[x.us12]\r\n", V(BLOCKED) },
	{ "mimecast", "554 Email rejected due to security policies - https://"
	  "community.mimecast.com/docs/DOC-1369#554 [x.us12]\r\n", V(BLOCKED) },
	{ "barracuda", "554 Service unavailable; Client host [192.0.2.1] "
	  "blocked using Barracuda Reputation; http://www.barracudanetworks."
	  "com/reputation/?r=1&ip=192.0.2.1\r\n", V(BLOCKED_CLIENT) },
	{ "mimecast", "550 Invalid Recipient - https://community.mimecast.com/"
	  "docs/DOC-1369#550 [x.us12]\r\n", V(MAILBOX_NOT_FOUND) },
	{ "microsoft365", "550 5.7.606 Access denied, banned sending IP "
	  "[192.0.2.1].\r\n", V(BLOCKED_CLIENT) },
	/* a tenant's own block list: a block, but not of our client by
	 * Microsoft (one alone pauses no pair) */
	{ "microsoft365", "550 5.7.1 Service unavailable, Client host "
	  "[192.0.2.1] blocked using Customer Block list (AS16012607)\r\n",
	  V(BLOCKED) },
	{ "yahoo", "553 5.7.1 [BL21] Connections will not be accepted from "
	  "192.0.2.1, because the ip is in Spamhaus's list\r\n", V(BLOCKED_CLIENT) },
	{ "google", "550-5.7.1 [192.0.2.1] Our system has detected that this "
	  "message is\r\n550 5.7.1 likely unsolicited mail.\r\n", V(BLOCKED) },
	/* a provider with no rules of its own reads as the generic rules */
	{ "example-isp", "550 5.1.1 User unknown\r\n", V(MAILBOX_NOT_FOUND) },
	{ "", "250 2.1.5 Ok\r\n", V(ACCEPTED) },
};

static void
test_provider_readings(void **state)
{
	struct smtp_reply r;
	enum smtp_verdict v;
	size_t i;
	int fails = 0;

	(void)state;
	for (i = 0; i < sizeof(provider_cases) / sizeof(provider_cases[0]);
	    i++) {
		const char *in = provider_cases[i].reply;

		assert_int_equal(smtp_reply_parse(in, strlen(in), &r),
		    SMTP_REPLY_OK);
		v = smtp_classify_reply(rules, provider_cases[i].provider, &r);
		if (v != provider_cases[i].want) {
			print_message("FAIL %s [%s]: got %s want %s\n",
			    provider_cases[i].provider ?
			    provider_cases[i].provider : "(generic)", in,
			    smtp_verdict_names[v],
			    smtp_verdict_names[provider_cases[i].want]);
			fails++;
		}
		smtp_reply_free(&r);
	}
	assert_int_equal(fails, 0);
}

/* Every provider named in the shipped rules, and the gateways: a reply
 * classified blocked generically (a 5.7.x, a DNSBL, a reputation) is
 * blocked on that provider's hosts too, never a mailbox verdict. */
static void
test_blocks_stay_blocks_for_every_provider(void **state)
{
	static const char *const extra[] = { "google", "microsoft365",
	    "outlook", "yahoo", "mimecast", "proofpoint", "barracuda",
	    "apple", "broadcom" };
	const char *ids[SMTP_RULES_MAX / 8];
	size_t nids = 0, i, j, c;
	int fails = 0;

	(void)state;
	for (i = 0; i < sizeof(extra) / sizeof(extra[0]); i++)
		ids[nids++] = extra[i];
	for (i = 0; i < rules->n && nids < sizeof(ids) / sizeof(ids[0]); i++)
		if (rules->rule[i].provider[0] != '\0')
			ids[nids++] = rules->rule[i].provider;
	for (c = 0; c < sizeof(classify_cases) / sizeof(classify_cases[0]);
	    c++) {
		struct smtp_reply r;
		const char *in = classify_cases[c].reply;

		if (!smtp_classify_is_block(classify_cases[c].want) ||
		    strncmp(in, "5", 1) != 0)
			continue;
		assert_int_equal(smtp_reply_parse(in, strlen(in), &r),
		    SMTP_REPLY_OK);
		for (j = 0; j < nids; j++)
			if (smtp_classify_reply(rules, ids[j], &r) !=
			    classify_cases[c].want) {
				print_message("FAIL %s [%s] not blocked\n",
				    ids[j], in);
				fails++;
			}
		smtp_reply_free(&r);
	}
	assert_int_equal(fails, 0);
}

static void
test_without_rules_the_class_decides(void **state)
{
	(void)state;
	assert_int_equal(smtp_classify_rcpt(NULL, NULL, 250, NULL, "ok"),
	    V(ACCEPTED));
	assert_int_equal(smtp_classify_rcpt(NULL, "google", 450, "4.2.1",
	    "receiving mail at a rate"), V(TEMPORARY));
	assert_int_equal(smtp_classify_rcpt(NULL, NULL, 550, "5.1.1",
	    "User unknown"), V(UNKNOWN));
	assert_int_equal(smtp_classify_rcpt(NULL, NULL, 354, NULL, NULL),
	    V(UNKNOWN));
}

static void
test_accept_all_providers(void **state)
{
	(void)state;
	assert_true(smtp_rules_accept_all(rules, "yahoo"));
	assert_true(smtp_rules_accept_all(rules, "microsoft365"));
	assert_false(smtp_rules_accept_all(rules, "google"));
	assert_false(smtp_rules_accept_all(rules, "outlook"));
	assert_false(smtp_rules_accept_all(rules, ""));
	assert_false(smtp_rules_accept_all(rules, NULL));
	assert_false(smtp_rules_accept_all(NULL, "yahoo"));
}

static void
test_name_tables_are_complete(void **state)
{
	size_t i;

	for (i = 0; i < SMTP_REPLY_STATUS__MAX; i++)
		assert_non_null(smtp_reply_status_names[i]);
	for (i = 0; i < SMTP_VERDICT__MAX; i++)
		assert_non_null(smtp_verdict_names[i]);
	for (i = 0; i < SMTP_EXT__MAX; i++)
		assert_non_null(smtp_ext_names[i]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reply_table),
		cmocka_unit_test(test_enhanced_fields),
		cmocka_unit_test(test_every_split_gives_the_same_replies),
		cmocka_unit_test(test_pipelined_replies_come_one_at_a_time),
		cmocka_unit_test(test_line_and_reply_limits),
		cmocka_unit_test(test_finish_completes_an_unterminated_last_line),
		cmocka_unit_test(test_oneline_joins_with_spaces),
		cmocka_unit_test(test_ehlo_extensions),
		cmocka_unit_test(test_enhanced_code_syntax),
		cmocka_unit_test(test_rcpt_classification),
		cmocka_unit_test(test_classify_raw_arguments),
		cmocka_unit_test(test_provider_readings),
		cmocka_unit_test(test_blocks_stay_blocks_for_every_provider),
		cmocka_unit_test(test_without_rules_the_class_decides),
		cmocka_unit_test(test_accept_all_providers),
		cmocka_unit_test(test_name_tables_are_complete),
	};

	return cmocka_run_group_tests(tests, load_rules, free_rules);
}
