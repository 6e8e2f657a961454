/* handler_feedback.h: what the feedback handlers share
 * (handler_feedback.c, handler_feedback_ses.c). */
#ifndef SVC_HANDLER_FEEDBACK_H
#define SVC_HANDLER_FEEDBACK_H
#include "api/api.h"
#include "jobs/feedback.h"

/* The feedback key, or 503 answered (-1). */
int	 handler_feedback_key(struct api_call *, struct addrhash_key *);
/* Stores checked events and answers the counts. */
void	 handler_feedback_store(struct api_call *, const char *account,
	    enum feedback_source, struct feedback_event *, size_t n);
/* 401: the sender's signature or credentials do not match. */
void	 handler_feedback_unauthorized(struct api_call *, const char *sender);
/* POST /v1/feedback/ses?account=ID once the body is read. */
void	 handler_feedback_ses(struct api_call *,
	    const struct feedback_settings *, const struct addrhash_key *,
	    const char *account);
#endif
