/* pacing_signal.c: a finished session read for pacing (pacing_signal.h),
 * its reply kept without the addresses it quotes. */
#include "engine/pacing_signal.h"
#include "engine/pacing.h"
#include <stdio.h>
#include <string.h>

/* Characters around an address in a reply ("<a@b>: Relay access denied"). */
#define PACING_SIGNAL_DELIMS " <>\"'()[],;:"

/* A reply as kept for pacing (logs, pacing_pairs.reason, the host's
 * last_block): every word with an '@' in it is replaced by "address", as
 * replies often quote the recipient and no log keeps whole addresses. */
static const char *
pacing_signal_why(char *why, size_t whysz, int code, const char *enhanced,
    const char *text)
{
	char raw[PACING_REASON_MAX];
	size_t i = 0, j = 0, w;

	snprintf(raw, sizeof(raw), "%d %s %s", code, enhanced,
	    text ? text : "");
	while (raw[i] != '\0' && j + 1 < whysz) {
		w = strcspn(raw + i, PACING_SIGNAL_DELIMS);
		if (w == 0) {
			why[j++] = raw[i++];
			continue;
		}
		if (memchr(raw + i, '@', w) != NULL)
			j += (size_t)snprintf(why + j, whysz - j, "%s", "address");
		else
			j += (size_t)snprintf(why + j, whysz - j, "%.*s", (int)w,
			    raw + i);
		if (j >= whysz)
			j = whysz - 1;
		i += w;
	}
	why[j] = '\0';
	return why;
}

const char *
pacing_signal(const struct smtp_rules *rules, const struct smtp_session *s,
    size_t total, int *block, char *why, size_t whysz)
{
	const struct smtp_session_info *si = smtp_session_info(s);
	const struct smtp_rcpt_result *rr;
	size_t i, blocked = 0, named = 0, answered = 0;

	*block = 0;
	for (i = 0; i < total; i++) {
		if ((rr = smtp_session_rcpt(s, i)) == NULL || rr->code == 0)
			continue;
		answered++;
		if (pacing_is_block(rr->code, rr->verdict))
			blocked++;
		if (rr->verdict == SMTP_VERDICT_BLOCKED_CLIENT)
			named++;
		if (pacing_is_slow_down(rr->code, rr->verdict)) {
			return pacing_signal_why(why, whysz, rr->code,
			    rr->enhanced, rr->text);
		}
	}
	if (pacing_is_slow_down(si->code, smtp_classify_rcpt(rules,
	    smtp_session_provider(s), si->code, si->enhanced, si->text)) &&
	    (si->outcome == SMTP_OUTCOME_TEMPFAIL ||
	    si->outcome == SMTP_OUTCOME_REFUSED_AT_BANNER ||
	    si->outcome == SMTP_OUTCOME_DISCONNECTED)) {
		return pacing_signal_why(why, whysz, si->code, si->enhanced,
		    si->text);
	}
	/* a block: the session refused with 5.7.x */
	if ((si->outcome == SMTP_OUTCOME_BLOCKED ||
	    si->outcome == SMTP_OUTCOME_REFUSED_AT_BANNER) &&
	    si->code / 100 == 5 && strncmp(si->enhanced, "5.7.", 4) == 0) {
		*block = 1;
		return pacing_signal_why(why, whysz, si->code, si->enhanced,
		    si->text);
	}
	/* or every RCPT blocked: two or more (one alone may be a mailbox's
	 * own policy), or one that names our client (a DNSBL, a block list:
	 * how a host that takes one RCPT a session, as Outlook.com, says it) */
	if (answered >= 1 && blocked == answered &&
	    (answered >= 2 || named == answered) &&
	    (rr = smtp_session_rcpt(s, 0)) != NULL) {
		*block = 1;
		return pacing_signal_why(why, whysz, rr->code, rr->enhanced,
		    rr->text);
	}
	return NULL;
}
