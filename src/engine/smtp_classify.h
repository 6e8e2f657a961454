/* smtp_classify.h: what an RCPT TO reply says about the mailbox. Pure: the
 * reading rules (smtp_rules.h, data), the provider that runs the host, the
 * reply code, its enhanced status code and its text go in, a verdict comes
 * out. The verification engine maps verdicts onto API.md's table. */
#ifndef SVC_SMTP_CLASSIFY_H
#define SVC_SMTP_CLASSIFY_H
#include "engine/smtp_reply.h"

/*
 * Intended mapping (API.md classification table):
 *   ACCEPTED          -> deliverable / accepted_email (unless catch-all, role)
 *   MAILBOX_NOT_FOUND -> undeliverable / rejected_email / mailbox_not_found
 *   DISABLED          -> undeliverable / account_disabled / account_disabled
 *   MAILBOX_FULL      -> risky / mailbox_full / mailbox_full
 *   GREYLISTED, TEMPORARY, RATE_LIMITED -> retry; after the budget
 *                        unknown / greylisted
 *   BLOCKED, BLOCKED_CLIENT -> unknown / smtp_blocked (never undeliverable)
 *   SENDER_REJECTED, BAD_DESTINATION, UNKNOWN -> unknown
 */
enum smtp_verdict {
	SMTP_VERDICT_ACCEPTED,		/* 2xx */
	SMTP_VERDICT_MAILBOX_NOT_FOUND,	/* 5xx x.1.1, x.1.10, "user unknown" */
	SMTP_VERDICT_DISABLED,		/* 5xx x.2.1, "disabled", "inactive" */
	SMTP_VERDICT_MAILBOX_FULL,	/* x.2.2, "over quota", "mailbox full" */
	SMTP_VERDICT_GREYLISTED,	/* 4xx that says greylisting / retry */
	SMTP_VERDICT_TEMPORARY,		/* any other 4xx */
	SMTP_VERDICT_BLOCKED,		/* x.7.x, DNSBL, reputation, policy */
	SMTP_VERDICT_SENDER_REJECTED,	/* x.1.7, x.1.8: our MAIL FROM */
	SMTP_VERDICT_BAD_DESTINATION,	/* x.1.2: wrong system for the domain */
	SMTP_VERDICT_UNKNOWN,		/* 5xx that says nothing telling, 1xx/3xx */
	SMTP_VERDICT_RATE_LIMITED,	/* 4xx "slow down": 4.7.28, 4.7.650,
					 * Yahoo's [TSS04]: temporary, and
					 * the sign to pace that host */
	SMTP_VERDICT_BLOCKED_CLIENT,	/* a block that names our client: a
					 * DNSBL, a block list, reputation;
					 * one such RCPT alone is a block of
					 * the pair (pacing_signal.c) */
	SMTP_VERDICT__MAX
};
extern const char *const smtp_verdict_names[SMTP_VERDICT__MAX];

/* Whether v refuses our client rather than says something of the
 * mailbox: BLOCKED or BLOCKED_CLIENT. */
int	 smtp_classify_is_block(enum smtp_verdict v);

struct smtp_rules;

/* rules: the reading rules (NULL, or none that matches: the reply class
 * alone decides: 2xx accepted, 4xx temporary, else unknown); provider: the
 * id of who runs the mail host ("google", "microsoft365"...; NULL or "":
 * generic), whose own rules are read before the generic ones;
 * code: the 3-digit reply code; enhanced: "5.1.1" or NULL/"" when absent
 * (a code whose class differs from code's first digit is ignored);
 * text: the reply text (any case, NULL allowed). */
enum smtp_verdict smtp_classify_rcpt(const struct smtp_rules *,
	    const char *provider, int code, const char *enhanced,
	    const char *text);
/* The same for a parsed reply. */
enum smtp_verdict smtp_classify_reply(const struct smtp_rules *,
	    const char *provider, const struct smtp_reply *);
#endif
