/* events.h: the deliveries of events (API.md, "Webhooks and callbacks").
 * An event of the outbox (jobend.c writes job.completed and job.failed)
 * becomes one delivery per receiver: each of the account's enabled
 * webhooks subscribed to it, the job's callback_url, a batch's
 * webhook_url. Workers claim due deliveries under a lease, send them
 * (worker/deliveries.c) and record each attempt: delivered, tried again
 * after the next wait of the retry schedule, or given up. A worker that
 * dies leaves its deliveries to be claimed again once their lease
 * expires, with the same event and body (at-least-once). */
#ifndef SVC_EVENTS_H
#define SVC_EVENTS_H
#include "core/db.h"
#include "util/ids.h"
#include <stddef.h>

enum events_state {
	EVENTS_PENDING,
	EVENTS_SENDING,
	EVENTS_DELIVERED,
	EVENTS_FAILED,
	EVENTS_STATE__MAX
};
extern const char *const events_state_names[EVENTS_STATE__MAX];

/* What a receiver's X-Webhook-ID is: the webhook's id, or one of these
 * prefixes and the job's id. */
#define EVENTS_JOB_CALLBACK	"job_callback:"
#define EVENTS_BATCH_CALLBACK	"batch_callback:"
#define EVENTS_RECEIVER_MAX	(IDS_MAX + 16)
/* Secrets that sign one delivery at most (a webhook's rotated ones). */
#define EVENTS_SECRETS_MAX	8
#define EVENTS_HOST_MAX		256

/* A delivery to make, for events_add. */
struct events_new {
	const char	*event_id, *event, *account_id;
	const char	*job_id;	/* NULL: none (webhook.test) */
	const char	*receiver, *webhook_id;	/* webhook_id NULL: a callback */
	const char	*url, *payload;
};

/* A claimed delivery, ready to be sent. */
struct events_delivery {
	char		 id[IDS_MAX];
	char		 event_id[IDS_MAX];
	char		 event[48];
	char		 receiver[EVENTS_RECEIVER_MAX];
	char		 host[EVENTS_HOST_MAX];
	char		 account[IDS_MAX];	/* whose event it is */
	char		*url;
	char		*payload;
	size_t		 len;
	char		*secrets[EVENTS_SECRETS_MAX];	/* newest first */
	size_t		 nsecrets;	/* 0: nothing can sign it */
	int		 attempt;	/* this attempt's number, from 1 */
	int		 webhook;	/* the receiver is an account webhook */
};
void	 events_delivery_clear(struct events_delivery *);

/* How an attempt went. */
struct events_attempt {
	long		 status;	/* response status, 0 when none came */
	const char	*error;		/* NULL when a response came */
	long		 duration_ms;
	int		 permanent;	/* never to be tried again */
};

/* Inside the caller's transaction: one pending delivery, due now (a
 * second one for the same event and receiver is not an error); its id
 * goes to id when id is not NULL. */
enum db_err events_add(struct db *, const struct events_new *,
	    char id[IDS_MAX]);
/* Turns up to limit events of the outbox into their deliveries; how
 * many events, or -1 when the database failed. */
long long events_fan_out(struct db *, long limit);

/* Whether the host and the account may have one more delivery in flight,
 * besides the claimed ones the running claim took for them already
 * (host_claimed, account_claimed; the caller counts its deliveries in
 * flight once the claim returns). */
typedef int (*events_room_fn)(void *arg, const char *host, size_t
	    host_claimed, const char *account, size_t account_claimed);
/* Claims up to max due deliveries (pending whose time has come, or
 * sending whose lease expired) for lease_seconds, each one attempt more,
 * those whose host or account room() refuses left for later; *n says how
 * many went to out. Each account's per_account longest-waiting due
 * deliveries are looked at (0: any number), so that one account's many
 * cannot hide the others' from a claim. */
enum db_err events_claim(struct db *, const char *owner, long lease_seconds,
	    size_t max, size_t per_account, events_room_fn room, void *arg,
	    struct events_delivery *out, size_t *n);
/* Records an attempt of a delivery this owner holds: a status 200-299
 * delivers it; 410 gives it up (and disables the webhook, failing its
 * other pending deliveries); anything else, or an error, makes it pending
 * again after schedule[attempt - 1] seconds, or gives it up after the
 * last (or at once when permanent). *became: the new state. DB_ABORT when
 * the delivery is no longer this owner's (its lease expired and another
 * claimed it, or it was deleted). */
enum db_err events_record(struct db *, const struct events_delivery *,
	    const char *owner, const struct events_attempt *,
	    const long *schedule, size_t nschedule, enum events_state *became);
/* Gives back a delivery this owner holds, due at once (the worker
 * stops): the attempt is recorded as interrupted. */
enum db_err events_release(struct db *, const struct events_delivery *,
	    const char *owner);
/* Housekeeping: deletes deliveries (and their attempts) that ended more
 * than days ago, and outbox events turned into deliveries more than days
 * ago, at most limit of each; how many rows, or -1. */
long long events_purge(struct db *, long days, long limit);
#endif
