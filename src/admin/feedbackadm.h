/* feedbackadm.h: svcadm's side of delivery feedback: the hash key file,
 * an account's feedback settings, and the accuracy report over every
 * account (or one). Each returns 0, or -1 with why in err. */
#ifndef SVC_FEEDBACKADM_H
#define SVC_FEEDBACKADM_H
#include "core/db.h"
#include "util/buf.h"
#include "util/conf.h"
#include <stdio.h>

/* "svcadm db migrate": writes a new random key into feedback_hash_key_file
 * when that setting names a file that does not exist and feedback_hash_key
 * is not set (0640, as the verdict cache's; never overwritten); *wrote 1
 * when it did. */
int	 feedbackadm_key_init(const struct conf *, int *wrote, struct buf *err);
/* "svcadm feedback set ACCOUNT": suppress -1 (unchanged), 0 or 1;
 * mailgun_key, postmark_auth ("user:password"), sendgrid_key (base64
 * DER public key, checked) and ses_topics (SNS topic ARNs separated by
 * commas, checked; "" for none) NULL: unchanged. */
int	 feedbackadm_set(struct db *, const char *account, int suppress,
	    const char *mailgun_key, const char *postmark_auth,
	    const char *sendgrid_key, const char *ses_topics, struct buf *err);
/* "svcadm feedback import --account ACCOUNT FILE": the delivery lines of
 * a Postfix log (util/postfix_log.h) read as the account's outcomes and
 * stored as POST /v1/feedback's are, 10,000 at a time; what it read and
 * did is printed to out. Lines are streamed: a log of any size. */
int	 feedbackadm_import(struct db *, const struct conf *,
	    const char *account, FILE *in, FILE *out, struct buf *err);
/* "svcadm report accuracy": account NULL for all; as text, or as the
 * API's JSON. */
int	 feedbackadm_report(struct db *, const struct conf *,
	    const char *account, const char *since, const char *until,
	    int json, FILE *out, struct buf *err);
#endif
