/* verdict.c: API.md's classification table, the score, the catch-all send
 * verdict, the spam-trap local-part heuristic and the sandbox domain's
 * verdicts by local part.
 *
 * Score (0-100): how likely a message reaches a mailbox, in bands that
 * follow the status (deliverable 81-100 above risky 61-80 above unknown
 * 21-60 above undeliverable 0-20: a risky address takes mail, an unknown
 * one may not): the base of the row, then adjustments, clamped to 0..100.
 *   deliverable: accepted 95;
 *   risky: role 78, mailbox full 72, known complainer 66, spam trap 62;
 *   unknown: catch-all 45, greylisted 40, blocked 35, undetermined 35,
 *   dns error 30, unreachable 25;
 *   undeliverable: disposable 10, account disabled 5, rejected / invalid
 *   syntax / invalid domain / no MX 0.
 *   Catch-all: send_safe +15, send_with_caution +0, avoid -15.
 *   Deliverable or catch-all at a free provider -5 (consumer inboxes churn);
 *   no TLS at the MX -3 for deliverable, role and catch-all (weaker hosting).
 *
 * Catch-all send verdict (for catch-all domains only):
 *   avoid             the domain has no web presence (nothing at the domain
 *                     or www.), or the local part looks machine-made (long
 *                     digit runs, hex strings, no vowels) or is a role;
 *   send_safe         the domain has a web presence and the local part looks
 *                     like a person's name (letters, at most one '.', '_' or
 *                     '-', 2 to 30 characters);
 *   send_with_caution anything else. */
#include "engine/verdict.h"
#include <ctype.h>
#include <string.h>
#include <strings.h>

const char *const verdict_status_names[VERDICT_STATUS__MAX] = {
	"deliverable", "undeliverable", "risky", "unknown"
};
const char *const verdict_reason_names[VERDICT_REASON__MAX] = {
	"accepted_email", "rejected_email", "invalid_syntax", "invalid_domain",
	"no_mx_record", "disposable_email", "role_based", "catch_all",
	"account_disabled", "mailbox_full", "known_complainer", "spam_trap",
	"unknown"
};
const char *const verdict_sub_names[VERDICT_SUB__MAX] = {
	NULL, "possible_typo", "mailbox_not_found", "account_disabled",
	"mailbox_full", "catch_all", "disposable", "spam_trap",
	"known_complainer", "role_based", "greylisted", "smtp_blocked",
	"smtp_unreachable", "dns_error"
};
const char *const verdict_class_names[VERDICT_CLASS__MAX] = {
	"valid", "invalid", "risky", "catch_all", "disposable", "unknown"
};
const char *const verdict_kind_names[VERDICT_KIND__MAX] = {
	"accepted", "role", "invalid_syntax", "invalid_domain", "no_mx",
	"rejected", "disabled", "full", "catch_all", "disposable",
	"spam_trap", "complainer", "greylisted", "blocked", "unreachable",
	"dns_error", "undetermined"
};
const char *const verdict_catch_all_names[VERDICT_CA__MAX] = {
	NULL, "send_safe", "send_with_caution", "avoid"
};
const char *const verdict_trap_names[VERDICT_TRAP__MAX] = {
	NULL, "typo_trap_domain", "trap_local_pattern", "pristine_catch_all"
};

static const struct {
	enum verdict_status	 status;
	enum verdict_reason	 reason;
	enum verdict_sub	 sub;
	enum verdict_class	 classification;
	int			 score;
} verdict_rows[VERDICT_KIND__MAX] = {
	[VERDICT_K_ACCEPTED] = { VERDICT_DELIVERABLE, VERDICT_R_ACCEPTED_EMAIL,
	    VERDICT_S_NONE, VERDICT_C_VALID, 95 },
	[VERDICT_K_ROLE] = { VERDICT_RISKY, VERDICT_R_ROLE_BASED,
	    VERDICT_S_ROLE_BASED, VERDICT_C_RISKY, 78 },
	[VERDICT_K_INVALID_SYNTAX] = { VERDICT_UNDELIVERABLE,
	    VERDICT_R_INVALID_SYNTAX, VERDICT_S_NONE, VERDICT_C_INVALID, 0 },
	[VERDICT_K_INVALID_DOMAIN] = { VERDICT_UNDELIVERABLE,
	    VERDICT_R_INVALID_DOMAIN, VERDICT_S_NONE, VERDICT_C_INVALID, 0 },
	[VERDICT_K_NO_MX] = { VERDICT_UNDELIVERABLE, VERDICT_R_NO_MX_RECORD,
	    VERDICT_S_NONE, VERDICT_C_INVALID, 0 },
	[VERDICT_K_REJECTED] = { VERDICT_UNDELIVERABLE,
	    VERDICT_R_REJECTED_EMAIL, VERDICT_S_MAILBOX_NOT_FOUND,
	    VERDICT_C_INVALID, 0 },
	[VERDICT_K_DISABLED] = { VERDICT_UNDELIVERABLE,
	    VERDICT_R_ACCOUNT_DISABLED, VERDICT_S_ACCOUNT_DISABLED,
	    VERDICT_C_INVALID, 5 },
	[VERDICT_K_FULL] = { VERDICT_RISKY, VERDICT_R_MAILBOX_FULL,
	    VERDICT_S_MAILBOX_FULL, VERDICT_C_RISKY, 72 },
	[VERDICT_K_CATCH_ALL] = { VERDICT_UNKNOWN, VERDICT_R_CATCH_ALL,
	    VERDICT_S_CATCH_ALL, VERDICT_C_CATCH_ALL, 45 },
	[VERDICT_K_DISPOSABLE] = { VERDICT_UNDELIVERABLE,
	    VERDICT_R_DISPOSABLE_EMAIL, VERDICT_S_DISPOSABLE,
	    VERDICT_C_DISPOSABLE, 10 },
	[VERDICT_K_SPAM_TRAP] = { VERDICT_RISKY, VERDICT_R_SPAM_TRAP,
	    VERDICT_S_SPAM_TRAP, VERDICT_C_RISKY, 62 },
	[VERDICT_K_COMPLAINER] = { VERDICT_RISKY, VERDICT_R_KNOWN_COMPLAINER,
	    VERDICT_S_KNOWN_COMPLAINER, VERDICT_C_RISKY, 66 },
	[VERDICT_K_GREYLISTED] = { VERDICT_UNKNOWN, VERDICT_R_UNKNOWN,
	    VERDICT_S_GREYLISTED, VERDICT_C_UNKNOWN, 40 },
	[VERDICT_K_BLOCKED] = { VERDICT_UNKNOWN, VERDICT_R_UNKNOWN,
	    VERDICT_S_SMTP_BLOCKED, VERDICT_C_UNKNOWN, 35 },
	[VERDICT_K_UNREACHABLE] = { VERDICT_UNKNOWN, VERDICT_R_UNKNOWN,
	    VERDICT_S_SMTP_UNREACHABLE, VERDICT_C_UNKNOWN, 25 },
	[VERDICT_K_DNS_ERROR] = { VERDICT_UNKNOWN, VERDICT_R_UNKNOWN,
	    VERDICT_S_DNS_ERROR, VERDICT_C_UNKNOWN, 30 },
	[VERDICT_K_UNDETERMINED] = { VERDICT_UNKNOWN, VERDICT_R_UNKNOWN,
	    VERDICT_S_NONE, VERDICT_C_UNKNOWN, 35 },
};

struct verdict
verdict_of(enum verdict_kind k, int typo)
{
	struct verdict v;

	v.kind = k;
	v.status = verdict_rows[k].status;
	v.reason = verdict_rows[k].reason;
	v.sub = verdict_rows[k].sub;
	v.classification = verdict_rows[k].classification;
	if (typo && (k == VERDICT_K_INVALID_SYNTAX ||
	    k == VERDICT_K_INVALID_DOMAIN))
		v.sub = VERDICT_S_POSSIBLE_TYPO;
	return v;
}

enum verdict_kind
verdict_sandbox_kind(const char *local)
{
	static const struct { const char *name; enum verdict_kind k; } m[] = {
		{ "accepted_email", VERDICT_K_ACCEPTED },
		{ "rejected_email", VERDICT_K_REJECTED },
		{ "mailbox_not_found", VERDICT_K_REJECTED },
		{ "invalid_syntax", VERDICT_K_INVALID_SYNTAX },
		{ "invalid_domain", VERDICT_K_INVALID_DOMAIN },
		{ "no_mx_record", VERDICT_K_NO_MX },
		{ "disposable_email", VERDICT_K_DISPOSABLE },
		{ "role_based", VERDICT_K_ROLE },
		{ "catch_all", VERDICT_K_CATCH_ALL },
		{ "account_disabled", VERDICT_K_DISABLED },
		{ "mailbox_full", VERDICT_K_FULL },
		{ "known_complainer", VERDICT_K_COMPLAINER },
		{ "spam_trap", VERDICT_K_SPAM_TRAP },
		{ "unknown", VERDICT_K_UNDETERMINED },
		{ "greylisted", VERDICT_K_GREYLISTED },
		{ "smtp_blocked", VERDICT_K_BLOCKED },
		{ "smtp_unreachable", VERDICT_K_UNREACHABLE },
		{ "dns_error", VERDICT_K_DNS_ERROR },
	};
	enum verdict_kind k = VERDICT_K_ACCEPTED;
	size_t i;

	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		if (strcasecmp(local, m[i].name) == 0)
			k = m[i].k;
	return k;
}

int
verdict_parse_kind(const char *s, enum verdict_kind *out)
{
	int i;

	for (i = 0; i < VERDICT_KIND__MAX; i++)
		if (strcmp(s, verdict_kind_names[i]) == 0) {
			*out = (enum verdict_kind)i;
			return 0;
		}
	return -1;
}

int
verdict_score(const struct verdict *v, enum verdict_catch_all ca,
    const struct verdict_facts *f)
{
	int s = verdict_rows[v->kind].score;

	if (v->kind == VERDICT_K_CATCH_ALL)
		s += ca == VERDICT_CA_SEND_SAFE ? 15 :
		    ca == VERDICT_CA_AVOID ? -15 : 0;
	if (f->free_provider && (v->kind == VERDICT_K_ACCEPTED ||
	    v->kind == VERDICT_K_CATCH_ALL))
		s -= 5;
	if (!f->tls && (v->kind == VERDICT_K_ACCEPTED ||
	    v->kind == VERDICT_K_ROLE || v->kind == VERDICT_K_CATCH_ALL))
		s -= 3;
	return s < 0 ? 0 : s > 100 ? 100 : s;
}

/* Machine-made local parts: a run of 5+ digits, 12+ hex characters in a
 * row, or no vowel at all in 6+ letters. */
static int
verdict_looks_generated(const char *l)
{
	size_t i, digits = 0, hex = 0, letters = 0, vowels = 0;

	for (i = 0; l[i]; i++) {
		int c = tolower((unsigned char)l[i]);
		digits = isdigit(c) ? digits + 1 : 0;
		hex = isxdigit(c) ? hex + 1 : 0;
		if (digits >= 5 || hex >= 12)
			return 1;
		if (isalpha(c)) {
			letters++;
			vowels += strchr("aeiouy", c) != NULL;
		}
	}
	return letters >= 6 && vowels == 0;
}

static int
verdict_looks_personal(const char *l)
{
	size_t i, n = strlen(l), seps = 0;

	if (n < 2 || n > 30)
		return 0;
	for (i = 0; i < n; i++) {
		if (l[i] == '.' || l[i] == '_' || l[i] == '-') {
			if (i == 0 || i == n - 1 || ++seps > 1)
				return 0;
		} else if (!isalpha((unsigned char)l[i]))
			return 0;
	}
	return 1;
}

enum verdict_catch_all
verdict_catch_all_of(const struct verdict_facts *f)
{
	const char *l = f->local ? f->local : "";

	if (!f->web_presence || f->role || verdict_looks_generated(l))
		return VERDICT_CA_AVOID;
	if (verdict_looks_personal(l))
		return VERDICT_CA_SEND_SAFE;
	return VERDICT_CA_SEND_WITH_CAUTION;
}

int
verdict_trap_local(const char *local)
{
	static const char *const words[] = {
		"spamtrap", "spam-trap", "spam.trap", "spam_trap", "honeypot",
		"honey-pot", "honey.pot", "trapmail", "mailtrap", "blackhole",
		"spamcatcher", "uce-trap",
	};
	char low[65];
	size_t i, n = strlen(local);

	if (n >= sizeof(low))
		return 0;
	for (i = 0; i <= n; i++)
		low[i] = (char)tolower((unsigned char)local[i]);
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strstr(low, words[i]) != NULL)
			return 1;
	return 0;
}

long
verdict_cache_seconds(const struct verdict *v)
{
	switch (v->status) {
	case VERDICT_UNKNOWN:	/* catch-all included: 15 minutes at most */
		return 15 * 60;
	case VERDICT_RISKY:
		return 24 * 3600;
	default:
		return 7 * 24 * 3600;
	}
}
