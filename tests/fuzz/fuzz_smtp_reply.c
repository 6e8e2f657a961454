/* fuzz_smtp_reply.c: libFuzzer target for the SMTP reply parser and the
 * RCPT classifier. The input is fed in pieces whose sizes come from the
 * first byte, and again one byte at a time; both runs must produce the
 * same replies and the same final status. Invariants on every reply: code
 * 200-599, bounded cleaned text (valid UTF-8, no control characters but
 * the line separators), consistent enhanced code, a verdict in range. */
#include "engine/smtp_classify.h"
#include "engine/smtp_reply.h"
#include "engine/smtp_rules.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_smtp_reply: %s " \
	"failed (line %d)\n", #c, __LINE__); abort(); } } while (0)

#define MAX_REPLIES 64

/* A few rules of each kind (the shipped file's are fuzzed apart, by
 * fuzz_smtp_rules), parsed once. */
static const char rules_text[] =
    "accept_all yahoo\n"
    "reply google 450 4.2.1 accepted receiving mail at a rate\n"
    "reply yahoo 4xx * rate_limited [tss04]\n"
    "reply * 2xx * accepted\n"
    "reply * 4xx 4.7.28 rate_limited\n"
    "reply * 4xx * greylisted greylist* | try again later\n"
    "reply * 4xx 4.7.* blocked\n"
    "reply * 5xx 5.7.* blocked\n"
    "reply * 5xx * blocked spamhaus | dnsbl* | block list*\n"
    "reply * 5xx 5.1.1 mailbox_not_found\n"
    "reply * 5xx *.2.* disabled\n"
    "reply * 5xx * mailbox_not_found user unknown | no such user* | a\n";
static struct smtp_rules *rules;

static const char *const providers[] = { NULL, "", "google", "yahoo" };

struct run {
	int	 codes[MAX_REPLIES];
	size_t	 lens[MAX_REPLIES];
	size_t	 n;
	enum smtp_reply_status final;
};

static void
check_reply(const struct smtp_reply *r)
{
	const unsigned char *t = (const unsigned char *)r->text;
	struct smtp_ehlo e;
	struct buf b;
	int v[3];
	size_t i, nl = 0;

	CHECK(r->code >= 200 && r->code <= 599);
	CHECK(r->text != NULL && strlen(r->text) == r->text_len);
	CHECK(r->text_len <= SMTP_REPLY_MAX);
	CHECK(r->lines >= 1);
	for (i = 0; i < r->text_len; i++) {
		CHECK(t[i] >= 0x20 || t[i] == '\n');
		CHECK(t[i] != 0x7f);
		if (t[i] == '\n')
			nl++;
	}
	CHECK(nl + 1 == r->lines);
	if (r->enhanced[0] != '\0') {
		CHECK(smtp_reply_parse_enhanced(r->enhanced,
		    strlen(r->enhanced), v) == strlen(r->enhanced));
		CHECK(v[0] == r->code / 100 && v[0] == r->enh_class);
		CHECK(v[1] == r->enh_subject && v[2] == r->enh_detail);
	} else
		CHECK(r->enh_class == -1);
	CHECK(smtp_classify_reply(rules, providers[r->code % 4], r) <
	    SMTP_VERDICT__MAX);
	if (smtp_reply_ehlo(r, &e) == 0)
		CHECK(e.ext < SMTP_EXT_BIT(SMTP_EXT__MAX));
	buf_init(&b, SMTP_REPLY_MAX);
	CHECK(smtp_reply_oneline(r, &b) == 0);
	CHECK(b.len == r->text_len);
	buf_free(&b);
}

static void
run(const uint8_t *data, size_t size, size_t chunk, struct run *out)
{
	struct smtp_reply_parser p;
	struct smtp_reply r;
	enum smtp_reply_status st = SMTP_REPLY_MORE;
	size_t off = 0, n, used;

	memset(out, 0, sizeof(*out));
	smtp_reply_parser_init(&p);
	while (off < size) {
		n = size - off < chunk ? size - off : chunk;
		while (n > 0) {
			st = smtp_reply_parser_feed(&p, (const char *)data + off,
			    n, &used, &r);
			CHECK(used <= n);
			CHECK(st < SMTP_REPLY_STATUS__MAX);
			off += used;
			n -= used;
			if (st == SMTP_REPLY_OK) {
				check_reply(&r);
				if (out->n < MAX_REPLIES) {
					out->codes[out->n] = r.code;
					out->lens[out->n] = r.text_len;
				}
				out->n++;
				smtp_reply_free(&r);
				continue;
			}
			if (st != SMTP_REPLY_MORE)
				goto out;
			CHECK(n == 0);
		}
	}
	st = smtp_reply_parser_finish(&p, &r);
	if (st == SMTP_REPLY_OK) {
		check_reply(&r);
		if (out->n < MAX_REPLIES) {
			out->codes[out->n] = r.code;
			out->lens[out->n] = r.text_len;
		}
		out->n++;
		smtp_reply_free(&r);
	}
out:
	/* Bounded memory: the buffers never pass their caps. */
	CHECK(p.line.len < SMTP_REPLY_LINE_MAX);
	CHECK(p.text.len <= SMTP_REPLY_MAX);
	out->final = st;
	smtp_reply_parser_free(&p);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run a, b;
	struct smtp_reply r;
	size_t chunk, i;

	if (rules == NULL) {
		CHECK((rules = smtp_rules_new()) != NULL);
		CHECK(smtp_rules_parse(rules, rules_text, sizeof(rules_text) -
		    1, "fuzz", 0, NULL) == SMTP_RULES_OK);
		CHECK(rules->n == 11 && rules->skipped == 0);
	}
	if (size == 0)
		return 0;
	chunk = (size_t)data[0] % 17 + 1;
	data++, size--;
	run(data, size, size ? size : 1, &a);
	run(data, size, chunk, &b);
	CHECK(a.n == b.n && a.final == b.final);
	for (i = 0; i < a.n && i < MAX_REPLIES; i++)
		CHECK(a.codes[i] == b.codes[i] && a.lens[i] == b.lens[i]);
	if (size <= 4 * SMTP_REPLY_LINE_MAX) {
		run(data, size, 1, &b);
		CHECK(a.n == b.n && a.final == b.final);
	}
	if (smtp_reply_parse((const char *)data, size, &r) == SMTP_REPLY_OK) {
		check_reply(&r);
		smtp_reply_free(&r);
	}
	/* The classifier on raw bytes as a text. */
	if (size >= 3) {
		char text[512];
		size_t n = size - 3 < sizeof(text) - 1 ? size - 3 :
		    sizeof(text) - 1;
		int code = (data[0] % 7 + 1) * 100 + data[1] % 100;

		memcpy(text, data + 3, n);
		text[n] = '\0';
		CHECK(smtp_classify_rcpt(rules, providers[data[2] % 4], code,
		    data[2] & 1 ? text : NULL, text) < SMTP_VERDICT__MAX);
		CHECK(smtp_classify_rcpt(NULL, NULL, code, text, text) <
		    SMTP_VERDICT__MAX);
	}
	return 0;
}
