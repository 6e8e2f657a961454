/* pacing_signal.c: a finished session read for pacing (pacing_signal.h). */
#include "engine/pacing_signal.h"
#include "engine/pacing.h"
#include <stdio.h>
#include <string.h>

const char *
pacing_signal(const struct smtp_rules *rules, const struct smtp_session *s,
    size_t total, int *block, char *why, size_t whysz)
{
	const struct smtp_session_info *si = smtp_session_info(s);
	const struct smtp_rcpt_result *rr;
	size_t i, blocked = 0, answered = 0;

	*block = 0;
	for (i = 0; i < total; i++) {
		if ((rr = smtp_session_rcpt(s, i)) == NULL || rr->code == 0)
			continue;
		answered++;
		if (pacing_is_block(rr->code, rr->enhanced, rr->verdict))
			blocked++;
		if (pacing_is_slow_down(rr->code, rr->enhanced, rr->text,
		    rr->verdict)) {
			snprintf(why, whysz, "%d %s %s", rr->code, rr->enhanced,
			    rr->text ? rr->text : "");
			return why;
		}
	}
	if (pacing_is_slow_down(si->code, si->enhanced, si->text,
	    smtp_classify_rcpt(rules, NULL, si->code, si->enhanced,
	    si->text)) && (si->outcome == SMTP_OUTCOME_TEMPFAIL ||
	    si->outcome == SMTP_OUTCOME_REFUSED_AT_BANNER ||
	    si->outcome == SMTP_OUTCOME_DISCONNECTED)) {
		snprintf(why, whysz, "%d %s %s", si->code, si->enhanced,
		    si->text ? si->text : "");
		return why;
	}
	/* a block: the session refused with 5.7.x, or every RCPT blocked */
	if ((si->outcome == SMTP_OUTCOME_BLOCKED ||
	    si->outcome == SMTP_OUTCOME_REFUSED_AT_BANNER) &&
	    si->code / 100 == 5 && strncmp(si->enhanced, "5.7.", 4) == 0) {
		*block = 1;
		snprintf(why, whysz, "%d %s %s", si->code, si->enhanced,
		    si->text ? si->text : "");
		return why;
	}
	if (answered >= 2 && blocked == answered &&
	    (rr = smtp_session_rcpt(s, 0)) != NULL) {
		*block = 1;
		snprintf(why, whysz, "%d %s %s", rr->code, rr->enhanced,
		    rr->text ? rr->text : "");
		return why;
	}
	return NULL;
}
