/* smtp_classify.c: classifies an RCPT TO reply into a mailbox verdict.
 * A reply is judged by its class first (2xx, 4xx, 5xx), then by its
 * enhanced status code (RFC 3463), then by its text, matched as
 * case-insensitive whole words or phrases. A policy or reputation block is
 * never a mailbox verdict: x.7.x and DNSBL/reputation texts win over
 * everything in a 5xx, because a verifier that is blocked has learnt
 * nothing about the mailbox. 5.1.7/5.1.8 are about our sender, 5.1.2 about
 * the destination system, not the mailbox. */
#include "engine/smtp_classify.h"
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
};

/*
 * Phrase lists. A phrase matches at word boundaries on both sides; a
 * trailing "*" makes it a prefix ("greylist*" matches "greylisted").
 * Texts are lower-cased first.
 */

/* DNSBL and reputation blocks: strong enough to override a mailbox code. */
static const char *const smtp_classify_reputation[] = {
	"spamhaus", "spamcop", "sorbs", "barracuda*", "dnsbl*", "rbl",
	"blacklist*", "black list*", "blocklist*", "block list*",
	"blacklisted", "denylist*", "reputation", "proofpoint dynamic",
	"cloudmark", "ip listed", "listed at", "listed on", "listed in",
	NULL
};

/* Other policy texts: blocks unless a mailbox code said otherwise. */
static const char *const smtp_classify_policy[] = {
	"blocked", "block", "blocking", "policy", "policies", "spam",
	"spammer", "banned", "abuse", "not authorized", "unauthorized",
	"prohibited", "prohibition", "refused by", "ptr", "reverse dns",
	"rdns", "reverse lookup", "rejected by policy", "message refused",
	"access denied, banned", "client host rejected", "rate limit*",
	"too many connections", "unsolicited", "complaints",
	NULL
};

static const char *const smtp_classify_grey[] = {
	"greylist*", "graylist*", "grey list*", "gray list*", "grey-list*",
	"gray-list*", "postgrey", "greylisting", NULL
};

static const char *const smtp_classify_retry[] = {
	"try again later", "try later", "retry later", "please retry",
	"come back later", "try again in*", "temporarily deferred",
	"deferred", "try again", NULL
};

static const char *const smtp_classify_full[] = {
	"quota*", "overquota", "over quota", "mailbox full", "mailbox is full",
	"mailbox was full", "inbox is full", "mailbox has exceeded",
	"mailbox size limit", "out of storage", "storage space",
	"exceeded storage allocation", "mailfolder is full",
	"insufficient mailbox space", "user is over", "full mailbox",
	NULL
};

static const char *const smtp_classify_disabled[] = {
	"disabled", "deactivated", "inactive", "suspended", "not active",
	"no longer active", "account expired", "mailbox expired",
	"account has been closed", "account is closed", "locked", "frozen",
	NULL
};

static const char *const smtp_classify_sender[] = {
	"sender address rejected", "sender rejected", "sender verify failed",
	"sender verification failed", "sender domain", "sender unknown",
	"unknown sender", "envelope sender", "invalid sender",
	"sender not", NULL
};

static const char *const smtp_classify_notfound[] = {
	"user unknown", "unknown user", "no such user*", "no such mailbox",
	"no such recipient", "no such account", "no such address",
	"no such person", "no mailbox", "mailbox unavailable",
	"mailbox is unavailable", "mailbox not found", "mailbox not available",
	"does not exist", "doesn't exist", "does not exists", "dont exist",
	"not exist", "nonexistent", "non-existent", "invalid recipient*",
	"invalid mailbox", "invalid address", "invalid user",
	"recipient unknown", "unknown recipient", "recipient not found",
	"recipient does not", "user not found", "address not found",
	"unknown address", "unknown mailbox", "unrouteable address",
	"unroutable address", "user doesn't have", "doesn't have a",
	"not a valid mailbox", "no valid recipients", "not our customer",
	"recipientnotfound", "recipient address rejected: access denied",
	"undeliverable address", "address rejected: user unknown",
	"account does not", "user invalid", "bad recipient",
	"no such local user", "unknown local part",
	NULL
};

static int
smtp_classify_is_word(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c >= 0x80;
}

static int
smtp_classify_match(const char *text, const char *const *list)
{
	const char *pat, *p;
	size_t n, tn = strlen(text);
	int prefix;

	for (; *list != NULL; list++) {
		pat = *list;
		n = strlen(pat);
		prefix = n > 0 && pat[n - 1] == '*';
		if (prefix)
			n--;
		for (p = text; (p = memmem(p, tn - (size_t)(p - text), pat,
		    n)) != NULL; p++) {
			if (p > text && smtp_classify_is_word(
			    (unsigned char)p[-1]) &&
			    smtp_classify_is_word((unsigned char)pat[0]))
				continue;
			if (prefix || p[n] == '\0' ||
			    !smtp_classify_is_word((unsigned char)p[n]) ||
			    !smtp_classify_is_word((unsigned char)pat[n - 1]))
				return 1;
		}
	}
	return 0;
}

/* Lower-cased copy of the first sizeof(lower)-1 bytes of text. */
static void
smtp_classify_lower(const char *text, char *lower, size_t sz)
{
	size_t i;

	if (text == NULL)
		text = "";
	for (i = 0; i + 1 < sz && text[i] != '\0'; i++) {
		char c = text[i];

		lower[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') :
		    (c == '\n' || c == '\t' ? ' ' : c);
	}
	lower[i] = '\0';
}

static enum smtp_verdict
smtp_classify_4xx(const int enh[3], const char *t)
{
	if (smtp_classify_match(t, smtp_classify_grey))
		return SMTP_VERDICT_GREYLISTED;
	if ((enh[1] == 2 && enh[2] == 2) ||
	    smtp_classify_match(t, smtp_classify_full))
		return SMTP_VERDICT_MAILBOX_FULL;
	if (smtp_classify_match(t, smtp_classify_reputation) ||
	    smtp_classify_match(t, smtp_classify_policy))
		return SMTP_VERDICT_BLOCKED;
	/* "451 4.7.1 Please try again later" is how greylisting often says
	 * it; a 4.7.x without such words is a (temporary) block. */
	if (smtp_classify_match(t, smtp_classify_retry))
		return SMTP_VERDICT_GREYLISTED;
	if (enh[1] == 7)
		return SMTP_VERDICT_BLOCKED;
	return SMTP_VERDICT_TEMPORARY;
}

static enum smtp_verdict
smtp_classify_5xx(const int enh[3], const char *t)
{
	if (enh[1] == 7 || smtp_classify_match(t, smtp_classify_reputation))
		return SMTP_VERDICT_BLOCKED;
	if (enh[1] == 1) {
		switch (enh[2]) {
		case 1:		/* bad destination mailbox address */
		case 3:		/* bad destination mailbox address syntax */
		case 6:		/* mailbox has moved, no forwarding address */
		case 10:	/* recipient address has null MX (RFC 7505) */
			return SMTP_VERDICT_MAILBOX_NOT_FOUND;
		case 2:		/* bad destination system address */
			return SMTP_VERDICT_BAD_DESTINATION;
		case 7:		/* bad sender's mailbox address syntax */
		case 8:		/* bad sender's system address */
			return SMTP_VERDICT_SENDER_REJECTED;
		default:
			break;
		}
	}
	if (enh[1] == 2 && enh[2] == 1)
		return SMTP_VERDICT_DISABLED;
	if (enh[1] == 2 && enh[2] == 2)
		return SMTP_VERDICT_MAILBOX_FULL;
	if (smtp_classify_match(t, smtp_classify_policy))
		return SMTP_VERDICT_BLOCKED;
	if (smtp_classify_match(t, smtp_classify_sender))
		return SMTP_VERDICT_SENDER_REJECTED;
	if (smtp_classify_match(t, smtp_classify_full))
		return SMTP_VERDICT_MAILBOX_FULL;
	if (smtp_classify_match(t, smtp_classify_disabled))
		return SMTP_VERDICT_DISABLED;
	if (smtp_classify_match(t, smtp_classify_notfound))
		return SMTP_VERDICT_MAILBOX_NOT_FOUND;
	return SMTP_VERDICT_UNKNOWN;
}

enum smtp_verdict
smtp_classify_rcpt(int code, const char *enhanced, const char *text)
{
	char lower[4096];
	int enh[3] = { -1, -1, -1 };

	if (code >= 200 && code <= 299)
		return SMTP_VERDICT_ACCEPTED;
	if (code < 400 || code > 599)
		return SMTP_VERDICT_UNKNOWN;
	if (enhanced != NULL &&
	    smtp_reply_parse_enhanced(enhanced, strlen(enhanced), enh) == 0)
		enh[0] = enh[1] = enh[2] = -1;
	if (enh[0] != code / 100)
		enh[0] = enh[1] = enh[2] = -1;
	smtp_classify_lower(text, lower, sizeof(lower));
	if (code < 500)
		return smtp_classify_4xx(enh, lower);
	return smtp_classify_5xx(enh, lower);
}

enum smtp_verdict
smtp_classify_reply(const struct smtp_reply *r)
{
	return smtp_classify_rcpt(r->code, r->enhanced, r->text);
}
