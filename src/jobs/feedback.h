/* feedback.h: delivery outcomes an account reports back (POST /v1/feedback
 * and the senders' webhooks): one event's checks, and storing a call's
 * events with their effects, all or nothing.
 *
 * An address is kept only as its keyed hash (addrhash.h, the key is
 * feedback_hash_key) of its normalised form. The diagnostic text is
 * checked but never stored (bounce texts quote the address). An event_id
 * makes an event idempotent: the same (account, source, event_id) again is
 * a replay, ignored and counted as such.
 *
 * Effects of a new event: a hard bounce whose enhanced status code says
 * the mailbox or domain does not exist (5.1.0, 5.1.1, 5.1.2, 5.1.3, 5.1.6,
 * 5.1.10; a bare 550 without an enhanced code does not: it is as often a
 * policy block) puts the address on the account's suppression list,
 * unless the account turned it off (svcadm feedback set) or the list is
 * full (account_suppressions_max: counted as skipped); a complaint puts
 * the hash on the account's complainer list. */
#ifndef SVC_FEEDBACK_H
#define SVC_FEEDBACK_H
#include "core/db.h"
#include "engine/addr.h"
#include "util/addrhash.h"
#include "util/conf.h"
#include <jansson.h>
#include <time.h>

#define FEEDBACK_EVENTS_MAX	10000	/* events in one call */
#define FEEDBACK_EVENT_ID_MAX	200
#define FEEDBACK_DIAGNOSTIC_MAX	2000
#define FEEDBACK_ENHANCED_MAX	15	/* "5.123.123" and some room */

enum feedback_outcome {
	FEEDBACK_DELIVERED,
	FEEDBACK_HARD_BOUNCE,
	FEEDBACK_SOFT_BOUNCE,
	FEEDBACK_COMPLAINT,
	FEEDBACK_OUTCOME__MAX
};
extern const char *const feedback_outcome_names[FEEDBACK_OUTCOME__MAX];

/* Where an event came from: event ids are unique per source. */
enum feedback_source {
	FEEDBACK_SOURCE_API,
	FEEDBACK_SOURCE_MAILGUN,
	FEEDBACK_SOURCE_POSTMARK,
	FEEDBACK_SOURCE_SENDGRID,
	FEEDBACK_SOURCE_POSTFIX,	/* svcadm feedback import */
	FEEDBACK_SOURCE_SES,		/* Amazon SES through SNS */
	FEEDBACK_SOURCE__MAX
};
extern const char *const feedback_source_names[FEEDBACK_SOURCE__MAX];

struct feedback_event {
	char			 normalised[ADDR_MAX + 1]; /* in memory only */
	char			 addr_hash[ADDRHASH_HEX_LEN + 1];
	enum feedback_outcome	 outcome;
	time_t			 occurred_at;
	int			 smtp_code;	/* 0: none */
	char			 enhanced[FEEDBACK_ENHANCED_MAX + 1]; /* "": none */
	char			 event_id[FEEDBACK_EVENT_ID_MAX + 1]; /* "": none */
};


/* Checks one event object of POST /v1/feedback and fills ev (hashing the
 * address with key). 0, or -1 with the offending member's name in field
 * ("email", "outcome", ...) and what is wrong in why. */
int	 feedback_event_parse(const json_t *, const struct addrhash_key *,
	    struct feedback_event *ev, char *field, size_t fieldsz, char *why,
	    size_t whysz);
/* Sets ev's address (parsed, normalised, hashed): 0, or -1 when it is not
 * an address. */
int	 feedback_event_address(struct feedback_event *, const char *email,
	    const struct addrhash_key *);
/* A status code "X.Y.Z" (class 2, 4 or 5, at most 3 digits each): 0 or -1. */
int	 feedback_enhanced_ok(const char *);
/* Finds the first enhanced status code in a diagnostic text (such as
 * "smtp; 550 5.1.1 <a@b>: user unknown") into out: 0, or -1 when none. */
int	 feedback_enhanced_find(const char *text,
	    char out[FEEDBACK_ENHANCED_MAX + 1]);
/* Whether a (new) event puts its address on the suppression list. */
int	 feedback_suppresses(const struct feedback_event *);

struct feedback_counts {
	size_t	 accepted;	/* new events stored */
	size_t	 replayed;	/* event_id seen before: ignored */
	size_t	 suppressed;	/* addresses added to the suppression list */
	size_t	 suppress_skipped; /* the list was full */
	size_t	 complainers;	/* hashes added to the complainer list */
	unsigned char *replay;	/* n flags: 1 for each replayed event */
};

/* Stores n checked events of one account and source, and their effects,
 * in one transaction under the account's lock. c->replay must hold n
 * bytes (or be NULL). DB_OK or the error. */
enum db_err feedback_store(struct db *, const char *account,
	    enum feedback_source, struct feedback_event *, size_t n,
	    long long suppressions_max, struct feedback_counts *c);

/* The account's settings (defaults when it has no row). */
struct feedback_settings {
	int	 suppress_hard_bounces;
	char	 mailgun_signing_key[201];	/* "": none */
	char	 postmark_user[101];		/* "": none */
	char	 postmark_auth_hash[65];	/* SHA-256 hex of "user:pass" */
	char	 sendgrid_public_key[201];	/* base64 DER; "": none */
	char	 ses_topic_arns[1025];		/* SNS topics; "": none */
};
enum db_err feedback_settings_get(struct db *, const char *account,
	    struct feedback_settings *);
/* Changes what is given (NULL: unchanged; suppress -1: unchanged). */
enum db_err feedback_settings_set(struct db *, const char *account,
	    int suppress, const char *mailgun_key, const char *postmark_user,
	    const char *postmark_auth_hash, const char *sendgrid_key);

/* Sets the SNS topics whose messages /v1/feedback/ses takes for the
 * account (feedback_sns_topics_valid; "" for none). */
enum db_err feedback_settings_set_ses(struct db *, const char *account,
	    const char *topics);

/* Housekeeping: deletes outcomes that occurred more than days ago (at
 * most limit rows); returns how many, or -1. */
long long feedback_expire(struct db *, long days, long limit);
#endif
