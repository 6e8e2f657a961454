/* fuzz_smtp_rules.c: libFuzzer target for the parser of the SMTP reply
 * reading rules (smtp_reply_rules.txt, smtp_rules.c), which the operator
 * may write. The input is a rules file. Invariants: every rule kept has
 * well-formed fields (code, enhanced pattern, a verdict in range, phrases
 * lower-cased, non-empty, bounded, no "*" but the prefix flag, no control
 * characters); parsing the text at once or split after any line gives the
 * same rules; classifying replies with them gives a verdict in range. */
#include "engine/smtp_classify.h"
#include "engine/smtp_rules.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_smtp_rules: %s " \
	"failed (line %d)\n", #c, __LINE__); abort(); } } while (0)

static void
check_rule(const struct smtp_rule *r)
{
	size_t i, j;

	CHECK(strlen(r->provider) < SMTP_RULES_PROVIDER_MAX);
	CHECK(r->code[0] >= '1' && r->code[0] <= '5');
	for (i = 1; i < 3; i++)
		CHECK(r->code[i] == 'x' || (r->code[i] >= '0' &&
		    r->code[i] <= '9'));
	for (i = 0; i < 3; i++) {
		CHECK(r->enh[i] >= -1 && r->enh[i] <= 999);
		CHECK(r->has_enh || r->enh[i] == -1);
	}
	CHECK(r->enh[0] == -1 || r->enh[0] == r->code[0] - '0');
	CHECK((unsigned)r->verdict < SMTP_VERDICT__MAX);
	CHECK(r->nphrases <= SMTP_RULES_PHRASES_MAX);
	for (i = 0; i < r->nphrases; i++) {
		const struct smtp_rule_phrase *p = &r->phrases[i];

		CHECK(p->len > 0 && p->len <= SMTP_RULES_PHRASE_MAX);
		CHECK(strlen(p->text) == p->len);
		for (j = 0; j < p->len; j++) {
			unsigned char c = (unsigned char)p->text[j];

			CHECK(c >= 0x20 && c != 0x7f && c != '*' && c != '|');
			CHECK(!(c >= 'A' && c <= 'Z'));
		}
		CHECK(p->text[0] != ' ' && p->text[p->len - 1] != ' ');
	}
}

static const struct {
	int		 code;
	const char	*enh, *text;
} replies[] = {
	{ 250, "2.1.5", "Ok" },
	{ 550, "5.1.1", "User unknown" },
	{ 550, "5.4.1", "Recipient address rejected: Access denied. "
	  "AS(201806281)" },
	{ 450, "4.2.1", "The user you are trying to contact is receiving mail "
	  "at a rate" },
	{ 421, "4.7.0", "[TSS04] Messages temporarily deferred" },
	{ 554, NULL, "Service unavailable; Client host [192.0.2.1] blocked "
	  "using Barracuda Reputation" },
	{ 550, "4.1.1", "x" },
	{ 354, NULL, NULL },
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const fixed[] = { NULL, "", "google", "yahoo" };
	struct smtp_rules *a, *b;
	const char *text = (const char *)data, *nl;
	size_t i, j, split;

	CHECK((a = smtp_rules_new()) != NULL);
	CHECK((b = smtp_rules_new()) != NULL);
	CHECK(smtp_rules_parse(a, text, size, "fuzz", 0, NULL) ==
	    SMTP_RULES_OK);
	CHECK(a->n <= SMTP_RULES_MAX);
	CHECK(a->naccept_all <= SMTP_RULES_ACCEPT_ALL_MAX);
	for (i = 0; i < a->n; i++)
		check_rule(&a->rule[i]);
	for (i = 0; i < a->naccept_all; i++)
		CHECK(smtp_rules_accept_all(a, a->accept_all[i]));
	/* Split after the line holding the middle byte: the same rules. */
	nl = size ? memchr(text + size / 2, '\n', size - size / 2) : NULL;
	split = nl ? (size_t)(nl - text) + 1 : size;
	CHECK(smtp_rules_parse(b, text, split, "fuzz", 1, NULL) ==
	    SMTP_RULES_OK);
	CHECK(smtp_rules_parse(b, text + split, size - split, "fuzz", 0,
	    NULL) == SMTP_RULES_OK);
	CHECK(a->n == b->n && a->skipped == b->skipped &&
	    a->naccept_all == b->naccept_all);
	for (i = 0; i < a->n; i++) {
		CHECK(a->rule[i].verdict == b->rule[i].verdict);
		CHECK(a->rule[i].nphrases == b->rule[i].nphrases);
		CHECK(strcmp(a->rule[i].provider, b->rule[i].provider) == 0);
	}
	for (i = 0; i < sizeof(replies) / sizeof(replies[0]); i++) {
		for (j = 0; j < sizeof(fixed) / sizeof(fixed[0]); j++)
			CHECK(smtp_classify_rcpt(a, fixed[j], replies[i].code,
			    replies[i].enh, replies[i].text) <
			    SMTP_VERDICT__MAX);
		for (j = 0; j < a->n && j < 8; j++)
			CHECK(smtp_classify_rcpt(a, a->rule[j].provider,
			    replies[i].code, replies[i].enh,
			    replies[i].text) < SMTP_VERDICT__MAX);
	}
	smtp_rules_free(a);
	smtp_rules_free(b);
	return 0;
}
