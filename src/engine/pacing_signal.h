/* pacing_signal.h: what one finished SMTP session says to pacing: nothing,
 * "slow down" (a rate reply: 421 4.7.28, 451 4.7.650, [TSS04]) or a block
 * (the session refused with 5.7.x, or every RCPT answered with a block:
 * two or more, or one that names our client, smtp_verdict blocked_client).
 * Read the same way by svc-worker's pacer and by the sessions opened
 * outside it (pacing_route.h). */
#ifndef SVC_PACING_SIGNAL_H
#define SVC_PACING_SIGNAL_H
#include "engine/smtp.h"
#include "engine/smtp_classify.h"
#include <stddef.h>

/* The reply that says "slow down" or blocks us ("CODE ENHANCED TEXT" in
 * why, *block 1 for a block), or NULL. total: the session's RCPTs to look
 * at (the first total). */
const char *pacing_signal(const struct smtp_rules *,
	    const struct smtp_session *, size_t total, int *block, char *why,
	    size_t whysz);
#endif
