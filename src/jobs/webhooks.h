/* webhooks.h: an account's webhooks as the management API sees them
 * (API.md, "Webhooks and callbacks"): create (the secret shown once),
 * read, list, change, delete, rotate the secret (the old one keeps signing
 * for WEBHOOKS_GRACE_SECONDS), send a webhook.test event, and list the
 * deliveries with their attempts. Another account's webhook is
 * WEBHOOKS_NOT_FOUND. URLs are checked by the caller (fetch.h). */
#ifndef SVC_WEBHOOKS_H
#define SVC_WEBHOOKS_H
#include "core/db.h"
#include "util/ids.h"
#include "util/timeutil.h"

#define WEBHOOKS_PER_ACCOUNT	20
#define WEBHOOKS_DESCRIPTION_MAX 500	/* characters */
#define WEBHOOKS_GRACE_SECONDS	86400	/* a rotated secret keeps signing */
#define WEBHOOKS_SECRET_MAX	64
#define WEBHOOKS_PAGE_MAX	100

enum webhooks_err {
	WEBHOOKS_OK,
	WEBHOOKS_NOT_FOUND,
	WEBHOOKS_LIMIT,		/* WEBHOOKS_PER_ACCOUNT already */
	WEBHOOKS_NOMEM,
	WEBHOOKS_DB,
	WEBHOOKS_TEST_IN_FLIGHT,	/* a test of the webhook is being sent */
	WEBHOOKS_TEST_LIMIT,	/* per_hour tests in the last hour already */
	WEBHOOKS_ERR__MAX
};

/* The events a webhook may subscribe to (bits of webhooks_row.events). */
enum webhooks_event {
	WEBHOOKS_JOB_COMPLETED,
	WEBHOOKS_JOB_FAILED,
	WEBHOOKS_EVENT__MAX
};
extern const char *const webhooks_event_names[WEBHOOKS_EVENT__MAX];
#define WEBHOOKS_ALL_EVENTS	((1u << WEBHOOKS_EVENT__MAX) - 1)
/* The bit of an event name, or 0 for a name not known. */
unsigned webhooks_event_bit(const char *);

struct webhooks_row {
	char		 id[IDS_MAX];
	char		*url;
	unsigned	 events;
	char		*description;
	int		 enabled;
	char		 disabled_reason[65];	/* "" when enabled */
	char		 created_at[TIMEUTIL_ISO_LEN];
	char		 updated_at[TIMEUTIL_ISO_LEN];
	/* the last expiry of a rotated secret still signing, "" for none */
	char		 rotated_until[TIMEUTIL_ISO_LEN];
};
void	 webhooks_row_free(struct webhooks_row *);

/* What a change sets: a NULL pointer, events 0 or enabled -1 leave that
 * field alone. Re-enabling clears disabled_reason; a new URL goes to the
 * webhook's pending deliveries too. */
struct webhooks_change {
	const char	*url;
	unsigned	 events;
	const char	*description;
	int		 enabled;
};

/* A new webhook with a new secret (secret: WEBHOOKS_SECRET_MAX bytes).
 * then, when not NULL, runs in the creation's transaction after the row
 * (then(db, the new row, then_arg)): what must be written with the
 * webhook or not at all (svc-api: its Idempotency-Key answer). An error
 * from it rolls the creation back (WEBHOOKS_DB). */
enum webhooks_err webhooks_create(struct db *, const char *account,
	    const char *url, unsigned events, const char *description,
	    struct webhooks_row *, char *secret,
	    enum db_err (*then)(struct db *, const struct webhooks_row *,
	    void *), void *then_arg);
enum webhooks_err webhooks_get(struct db *, const char *account,
	    const char *id, struct webhooks_row *);
typedef int (*webhooks_each_fn)(void *, const struct webhooks_row *);
/* The account's webhooks, oldest first. */
enum webhooks_err webhooks_list(struct db *, const char *account,
	    webhooks_each_fn, void *);
enum webhooks_err webhooks_update(struct db *, const char *account,
	    const char *id, const struct webhooks_change *,
	    struct webhooks_row *);
/* Deletes the webhook, its secrets and its deliveries. */
enum webhooks_err webhooks_delete(struct db *, const char *account,
	    const char *id);
/* A new secret signs from now on; the secrets signing until now keep
 * signing for WEBHOOKS_GRACE_SECONDS at most (*until: when the last of
 * them stops), and only the newest EVENTS_SECRETS_MAX sign at all. */
enum webhooks_err webhooks_rotate(struct db *, const char *account,
	    const char *id, char *secret, char until[TIMEUTIL_ISO_LEN]);
/* Queues a webhook.test event for the webhook (the worker sends it), so
 * that tests cannot fill the workers' delivery slots: one test of a
 * webhook at a time (WEBHOOKS_TEST_IN_FLIGHT while one is being sent; an
 * earlier test still waiting to be sent or for its retry is given up,
 * last_error "superseded", the new one taking its place) and per_hour
 * tests of a webhook in any hour (WEBHOOKS_TEST_LIMIT, *retry_after the
 * seconds until one leaves the hour, *reset_at that time as Unix
 * seconds). */
enum webhooks_err webhooks_test(struct db *, const char *account,
	    const char *id, long per_hour, char delivery_id[IDS_MAX],
	    char event_id[IDS_MAX], long *retry_after, long long *reset_at);

/* One delivery of a webhook, with its attempts. */
struct webhooks_attempt {
	int		 attempt;
	char		 started_at[TIMEUTIL_ISO_LEN];
	long		 duration_ms;		/* -1: not finished */
	long		 status_code;		/* 0: no response */
	char		 error[201];		/* "" when none */
};
struct webhooks_delivery {
	char		 id[IDS_MAX], event_id[IDS_MAX], event[48];
	char		 job_id[IDS_MAX];	/* "" when none */
	char		 state[16];
	int		 attempts;
	long		 last_status;		/* 0: none */
	char		 last_error[201];
	char		 next_attempt_at[TIMEUTIL_ISO_LEN];	/* "" unless pending */
	char		 created_at[TIMEUTIL_ISO_LEN];
	char		 finished_at[TIMEUTIL_ISO_LEN];		/* "" when not */
	struct webhooks_attempt *log;
	size_t		 nlog;
};
typedef int (*webhooks_delivery_fn)(void *, const struct webhooks_delivery *);
/* The webhook's deliveries, newest first, page (from 1) of limit. */
enum webhooks_err webhooks_deliveries(struct db *, const char *account,
	    const char *id, long page, long limit, long long *total,
	    webhooks_delivery_fn, void *);
#endif
