/* smtp_classify.c: classifies an SMTP reply (an RCPT TO's, and the
 * greeting's or MAIL's when the session asks whether it is a block) by the
 * reading rules of smtp_reply_rules.txt (smtp_rules.h). The provider's own
 * rules are read first, then the generic ones ("*"), each in file order
 * (the operator's local file before the shipped one); the first rule whose
 * code, enhanced code and phrases match gives the verdict. Phrases match
 * the lower-cased text at word boundaries. The order of the shipped rules
 * (blocks first: a verifier that is blocked has learnt nothing about the
 * mailbox; then enhanced status codes, then texts) is the file's. */
#include "engine/smtp_classify.h"
#include "engine/smtp_rules.h"
#include <string.h>

const char *const smtp_verdict_names[SMTP_VERDICT__MAX] = {
	[SMTP_VERDICT_ACCEPTED] = "accepted",
	[SMTP_VERDICT_MAILBOX_NOT_FOUND] = "mailbox_not_found",
	[SMTP_VERDICT_DISABLED] = "disabled",
	[SMTP_VERDICT_MAILBOX_FULL] = "mailbox_full",
	[SMTP_VERDICT_GREYLISTED] = "greylisted",
	[SMTP_VERDICT_TEMPORARY] = "temporary",
	[SMTP_VERDICT_BLOCKED] = "blocked",
	[SMTP_VERDICT_SENDER_REJECTED] = "sender_rejected",
	[SMTP_VERDICT_BAD_DESTINATION] = "bad_destination",
	[SMTP_VERDICT_UNKNOWN] = "unknown",
	[SMTP_VERDICT_RATE_LIMITED] = "rate_limited",
	[SMTP_VERDICT_BLOCKED_CLIENT] = "blocked_client",
};

int
smtp_classify_is_block(enum smtp_verdict v)
{
	return v == SMTP_VERDICT_BLOCKED || v == SMTP_VERDICT_BLOCKED_CLIENT;
}

/* The reply as the rules see it; its text lower-cased when a rule with
 * phrases first needs it. */
struct smtp_classify_in {
	char		 code[3];
	int		 enh[3];	/* -1 -1 -1: none */
	const char	*raw;
	char		*text;		/* lower case, NULL until needed */
	size_t		 len;
	char		 lower[4096];
};

static size_t smtp_classify_lower(const char *, char *, size_t);

static int
smtp_classify_phrase(const struct smtp_classify_in *in,
    const struct smtp_rule_phrase *ph)
{
	const char *t = in->text, *p;
	size_t n = ph->len, tn = in->len;

	for (p = t; (size_t)(p - t) + n <= tn &&
	    (p = memmem(p, tn - (size_t)(p - t), ph->text, n)) != NULL; p++) {
		if (p > t && smtp_rules_is_word((unsigned char)p[-1]) &&
		    smtp_rules_is_word((unsigned char)ph->text[0]))
			continue;
		if (ph->prefix || p[n] == '\0' ||
		    !smtp_rules_is_word((unsigned char)p[n]) ||
		    !smtp_rules_is_word((unsigned char)ph->text[n - 1]))
			return 1;
	}
	return 0;
}

static int
smtp_classify_match(struct smtp_classify_in *in, const struct smtp_rule *r)
{
	size_t i;

	for (i = 0; i < 3; i++)
		if (r->code[i] != 'x' && r->code[i] != in->code[i])
			return 0;
	if (r->has_enh) {
		if (in->enh[0] == -1)
			return 0;
		for (i = 0; i < 3; i++)
			if (r->enh[i] != -1 && r->enh[i] != in->enh[i])
				return 0;
	}
	if (r->nphrases == 0)
		return 1;
	if (in->text == NULL) {
		in->len = smtp_classify_lower(in->raw, in->lower,
		    sizeof(in->lower));
		in->text = in->lower;
	}
	for (i = 0; i < r->nphrases; i++)
		if (smtp_classify_phrase(in, &r->phrases[i]))
			return 1;
	return 0;
}

/* Lower-cased copy of the first sizeof(lower)-1 bytes of text; line
 * breaks and tabs become spaces. Returns its length. */
static size_t
smtp_classify_lower(const char *text, char *lower, size_t sz)
{
	size_t i;

	if (text == NULL)
		text = "";
	for (i = 0; i + 1 < sz && text[i] != '\0'; i++) {
		char c = text[i];

		lower[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') :
		    (c == '\n' || c == '\r' || c == '\t' ? ' ' : c);
	}
	lower[i] = '\0';
	return i;
}

static enum smtp_verdict
smtp_classify_by_class(int code)
{
	if (code / 100 == 2)
		return SMTP_VERDICT_ACCEPTED;
	if (code / 100 == 4)
		return SMTP_VERDICT_TEMPORARY;
	return SMTP_VERDICT_UNKNOWN;
}

enum smtp_verdict
smtp_classify_rcpt(const struct smtp_rules *rules, const char *provider,
    int code, const char *enhanced, const char *text)
{
	struct smtp_classify_in in;
	size_t i;
	int pass;

	if (code < 100 || code > 599)
		return SMTP_VERDICT_UNKNOWN;
	if (rules == NULL)
		return smtp_classify_by_class(code);
	in.code[0] = (char)('0' + code / 100);
	in.code[1] = (char)('0' + code / 10 % 10);
	in.code[2] = (char)('0' + code % 10);
	in.enh[0] = in.enh[1] = in.enh[2] = -1;
	if (enhanced != NULL &&
	    smtp_reply_parse_enhanced(enhanced, strlen(enhanced), in.enh) == 0)
		in.enh[0] = -1;
	if (in.enh[0] != code / 100)
		in.enh[0] = in.enh[1] = in.enh[2] = -1;
	in.raw = text;
	in.text = NULL;
	in.len = 0;
	if (provider != NULL && *provider == '\0')
		provider = NULL;
	for (pass = provider != NULL ? 0 : 1; pass < 2; pass++)
		for (i = 0; i < rules->n; i++) {
			const struct smtp_rule *r = &rules->rule[i];

			if (pass == 0 ? strcmp(r->provider, provider) != 0 :
			    r->provider[0] != '\0')
				continue;
			if (smtp_classify_match(&in, r))
				return r->verdict;
		}
	return smtp_classify_by_class(code);
}

enum smtp_verdict
smtp_classify_reply(const struct smtp_rules *rules, const char *provider,
    const struct smtp_reply *r)
{
	return smtp_classify_rcpt(rules, provider, r->code, r->enhanced,
	    r->text);
}
