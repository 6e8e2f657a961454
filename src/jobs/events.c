/* events.c: event deliveries (events.h). Fan-out, claims, records and
 * releases each run in one transaction (db_tx_retry); claims lock their
 * rows with SKIP LOCKED, so workers on several hosts never take the same
 * delivery while its lease holds. The body of a delivery is the event's
 * envelope as the outbox holds it, byte for byte, on every attempt.
 * Fair share: a claim looks at each account's few longest-waiting due
 * deliveries only (ROW_NUMBER per account), and the caller's room()
 * refuses an account past its share of the worker's slots, so that one
 * account's many deliveries to slow hosts cannot take every slot. */
#include "jobs/events.h"
#include "jobs/fetch.h"
#include "util/log.h"
#include "util/strparse.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Outbox events turned into deliveries per transaction. */
#define EVENTS_FAN_BATCH	16
/* Rows looked at per claim for each one wanted (some hosts are full). */
#define EVENTS_CLAIM_LOOK	4

const char *const events_state_names[EVENTS_STATE__MAX] = {
	[EVENTS_PENDING] = "pending",
	[EVENTS_SENDING] = "sending",
	[EVENTS_DELIVERED] = "delivered",
	[EVENTS_FAILED] = "failed",
};

void
events_delivery_clear(struct events_delivery *d)
{
	size_t i;

	free(d->url);
	free(d->payload);
	for (i = 0; i < d->nsecrets; i++)
		free(d->secrets[i]);
	memset(d, 0, sizeof(*d));
}

enum db_err
events_add(struct db *db, const struct events_new *n, char out[IDS_MAX])
{
	char id[IDS_MAX], host[EVENTS_HOST_MAX];
	enum db_err e;

	if (ids_new("dlv", id) == -1)
		return DB_ERR_QUERY;
	if (out != NULL)
		memcpy(out, id, IDS_MAX);
	/* a URL without a host cannot be reached: it fails on its attempt */
	if (fetch_host_of(n->url, host, sizeof(host)) == -1)
		host[0] = '\0';
	e = db_exec(db, "INSERT INTO event_deliveries (id, event_id, event, "
	    "account_id, job_id, receiver, webhook_id, url, host, payload, "
	    "state, attempts, next_attempt_at, created_at) VALUES (?, ?, ?, "
	    "?, ?, ?, ?, ?, ?, ?, ?, 0, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))",
	    DB_ARGS(DBP_STR(id), DBP_STR(n->event_id), DBP_STR(n->event),
	    DBP_STR(n->account_id), DBP_STR(n->job_id), DBP_STR(n->receiver),
	    DBP_STR(n->webhook_id), DBP_STR(n->url), DBP_STR(host),
	    DBP_STR(n->payload), DBP_STR(events_state_names[EVENTS_PENDING])),
	    NULL);
	if (e == DB_ERR_DUPLICATE)
		return DB_OK;
	if (e == DB_OK)
		log_info("event=delivery_queued delivery=%s event_id=%s "
		    "kind=%s receiver=%s", id, n->event_id, n->event,
		    n->receiver);
	return e;
}

/* ---------------------------------------------------------------- fan-out */

struct events_outbox {
	char	 id[IDS_MAX], account[IDS_MAX], job[IDS_MAX], event[48];
	char	*payload;
};

struct events_fanning {
	struct events_outbox	 ev[EVENTS_FAN_BATCH];
	size_t			 n;
	long			 limit;
};

static void
events_fanning_clear(struct events_fanning *f)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		free(f->ev[i].payload);
	f->n = 0;
}

/* The account's webhooks subscribed to the event. */
static enum db_err
events_fan_webhooks(struct db *db, const struct events_outbox *ev)
{
	struct db_res *res = NULL;
	struct events_new n;
	char (*ids)[IDS_MAX] = NULL;
	char **urls = NULL;
	size_t cnt = 0, i;
	enum db_err e;

	e = db_query(db, "SELECT id, url FROM webhooks WHERE account_id = ? "
	    "AND enabled = 1 AND FIND_IN_SET(?, events) > 0",
	    DB_ARGS(DBP_STR(ev->account), DBP_STR(ev->event)), &res);
	if (e != DB_OK)
		return e;
	if (db_res_rows(res) > 0 &&
	    ((ids = calloc(db_res_rows(res), sizeof(*ids))) == NULL ||
	    (urls = calloc(db_res_rows(res), sizeof(*urls))) == NULL))
		e = DB_ERR_QUERY;
	while (e == DB_OK && cnt < db_res_rows(res) && db_res_next(res) == 1) {
		strparse_copy(ids[cnt], IDS_MAX, db_res_str(res, 0));
		if ((urls[cnt++] = strdup(db_res_str(res, 1))) == NULL)
			e = DB_ERR_QUERY;
	}
	db_res_free(res);
	for (i = 0; e == DB_OK && i < cnt; i++) {
		memset(&n, 0, sizeof(n));
		n.event_id = ev->id;
		n.event = ev->event;
		n.account_id = ev->account;
		n.job_id = ev->job;
		n.receiver = n.webhook_id = ids[i];
		n.url = urls[i];
		n.payload = ev->payload;
		e = events_add(db, &n, NULL);
	}
	for (i = 0; i < cnt; i++)
		free(urls[i]);
	free(urls);
	free(ids);
	return e;
}

/* The job's own receivers: its callback_url, a batch's webhook_url. */
static enum db_err
events_fan_job(struct db *db, const struct events_outbox *ev)
{
	struct db_res *res = NULL;
	struct events_new n;
	char receiver[EVENTS_RECEIVER_MAX];
	char *urls[2] = { NULL, NULL };
	static const char *const kinds[2] = { EVENTS_JOB_CALLBACK,
	    EVENTS_BATCH_CALLBACK };
	enum db_err e;
	int i;

	e = db_query(db, "SELECT callback_url, IF(type = 'batch', "
	    "webhook_url, NULL) FROM jobs WHERE id = ?",
	    DB_ARGS(DBP_STR(ev->job)), &res);
	if (e != DB_OK)
		return e;
	if (db_res_next(res) == 1)
		for (i = 0; i < 2; i++)
			if (!db_res_isnull(res, (unsigned)i) &&
			    (urls[i] = strdup(db_res_str(res,
			    (unsigned)i))) == NULL)
				e = DB_ERR_QUERY;
	db_res_free(res);
	for (i = 0; e == DB_OK && i < 2; i++) {
		if (urls[i] == NULL || urls[i][0] == '\0')
			continue;
		snprintf(receiver, sizeof(receiver), "%s%s", kinds[i],
		    ev->job);
		memset(&n, 0, sizeof(n));
		n.event_id = ev->id;
		n.event = ev->event;
		n.account_id = ev->account;
		n.job_id = ev->job;
		n.receiver = receiver;
		n.url = urls[i];
		n.payload = ev->payload;
		e = events_add(db, &n, NULL);
	}
	free(urls[0]);
	free(urls[1]);
	return e;
}

static enum db_err
events_fan_work(struct db *db, void *arg)
{
	struct events_fanning *f = arg;
	struct events_outbox *ev;
	struct db_res *res = NULL;
	enum db_err e;
	size_t i;

	events_fanning_clear(f);
	e = db_query(db, "SELECT id, account_id, job_id, event, payload FROM "
	    "event_outbox WHERE delivered_at IS NULL ORDER BY created_at "
	    "LIMIT ? FOR UPDATE SKIP LOCKED", DB_ARGS(DBP_INT(f->limit)),
	    &res);
	if (e != DB_OK)
		return e;
	while (f->n < EVENTS_FAN_BATCH && db_res_next(res) == 1) {
		ev = &f->ev[f->n];
		strparse_copy(ev->id, sizeof(ev->id), db_res_str(res, 0));
		strparse_copy(ev->account, sizeof(ev->account),
		    db_res_str(res, 1));
		strparse_copy(ev->job, sizeof(ev->job), db_res_str(res, 2));
		strparse_copy(ev->event, sizeof(ev->event), db_res_str(res, 3));
		if ((ev->payload = strdup(db_res_str(res, 4))) == NULL) {
			e = DB_ERR_QUERY;
			break;
		}
		f->n++;
	}
	db_res_free(res);
	for (i = 0; e == DB_OK && i < f->n; i++) {
		ev = &f->ev[i];
		if ((e = events_fan_webhooks(db, ev)) == DB_OK &&
		    (e = events_fan_job(db, ev)) == DB_OK)
			e = db_exec(db, "UPDATE event_outbox SET delivered_at = "
			    "UTC_TIMESTAMP(3) WHERE id = ?",
			    DB_ARGS(DBP_STR(ev->id)), NULL);
	}
	return e;
}

long long
events_fan_out(struct db *db, long limit)
{
	struct events_fanning f;
	long long total = 0;
	size_t got;

	memset(&f, 0, sizeof(f));
	while (total < limit) {
		f.limit = limit - total < EVENTS_FAN_BATCH ? limit - total :
		    EVENTS_FAN_BATCH;
		if (db_tx_retry(db, events_fan_work, &f) != DB_OK) {
			events_fanning_clear(&f);
			log_error("event=events_fan_out_failed error=\"%s\"",
			    db_error(db));
			return -1;
		}
		got = f.n;
		events_fanning_clear(&f);
		total += (long long)got;
		if (got < (size_t)f.limit)
			break;
	}
	return total;
}

/* ---------------------------------------------------------------- claims */

struct events_claiming {
	const char		*owner;
	long			 lease;
	size_t			 max, n, per_account;
	events_room_fn		 room;
	void			*arg;
	struct events_delivery	*out;
};

/* The secrets that sign d now: a webhook's unexpired ones (newest first),
 * a job's callback_secret, a batch's webhook_secret. */
static enum db_err
events_secrets(struct db *db, struct events_delivery *d, const char *job,
    const char *webhook)
{
	struct db_res *res = NULL;
	enum db_err e;
	const char *s;

	if (webhook != NULL)
		e = db_query(db, "SELECT secret FROM webhook_secrets WHERE "
		    "webhook_id = ? AND (expires_at IS NULL OR expires_at > "
		    "UTC_TIMESTAMP(3)) ORDER BY created_at DESC, id DESC "
		    "LIMIT ?", DB_ARGS(DBP_STR(webhook),
		    DBP_INT(EVENTS_SECRETS_MAX)), &res);
	else if (strncmp(d->receiver, EVENTS_JOB_CALLBACK,
	    strlen(EVENTS_JOB_CALLBACK)) == 0)
		e = db_query(db, "SELECT callback_secret FROM jobs WHERE id = ?",
		    DB_ARGS(DBP_STR(job)), &res);
	else
		e = db_query(db, "SELECT webhook_secret FROM jobs WHERE id = ?",
		    DB_ARGS(DBP_STR(job)), &res);
	if (e != DB_OK)
		return e;
	while (d->nsecrets < EVENTS_SECRETS_MAX && db_res_next(res) == 1) {
		if ((s = db_res_str(res, 0)) == NULL || *s == '\0')
			continue;
		if ((d->secrets[d->nsecrets] = strdup(s)) == NULL) {
			e = DB_ERR_QUERY;
			break;
		}
		d->nsecrets++;
	}
	db_res_free(res);
	return e;
}

/* Leases one candidate and reads what sending it needs. */
static enum db_err
events_claim_one(struct db *db, struct events_claiming *cl, const char *id)
{
	struct events_delivery *d = &cl->out[cl->n];
	struct db_res *res = NULL;
	char job[IDS_MAX], webhook[IDS_MAX];
	int is_webhook = 0;
	enum db_err e;

	memset(d, 0, sizeof(*d));
	e = db_exec(db, "UPDATE event_deliveries SET state = ?, attempts = "
	    "attempts + 1, lease_owner = ?, lease_expires = UTC_TIMESTAMP(3) "
	    "+ INTERVAL ? SECOND WHERE id = ?",
	    DB_ARGS(DBP_STR(events_state_names[EVENTS_SENDING]),
	    DBP_STR(cl->owner), DBP_INT(cl->lease), DBP_STR(id)), NULL);
	/* an attempt whose worker died never finished: say so */
	if (e == DB_OK)
		e = db_exec(db, "UPDATE event_attempts SET finished_at = "
		    "UTC_TIMESTAMP(3), error = 'interrupted' WHERE "
		    "delivery_id = ? AND finished_at IS NULL",
		    DB_ARGS(DBP_STR(id)), NULL);
	if (e == DB_OK)
		e = db_query(db, "SELECT event_id, event, receiver, "
		    "webhook_id, job_id, url, host, payload, attempts, "
		    "account_id FROM event_deliveries WHERE id = ?",
		    DB_ARGS(DBP_STR(id)), &res);
	if (e != DB_OK)
		return e;
	if (db_res_next(res) != 1) {
		db_res_free(res);
		return DB_ERR_QUERY;
	}
	strparse_copy(d->id, sizeof(d->id), id);
	strparse_copy(d->event_id, sizeof(d->event_id), db_res_str(res, 0));
	strparse_copy(d->event, sizeof(d->event), db_res_str(res, 1));
	strparse_copy(d->receiver, sizeof(d->receiver), db_res_str(res, 2));
	if (!db_res_isnull(res, 3)) {
		is_webhook = 1;
		strparse_copy(webhook, sizeof(webhook), db_res_str(res, 3));
	}
	strparse_copy(job, sizeof(job), db_res_str(res, 4));
	d->url = strdup(db_res_str(res, 5));
	strparse_copy(d->host, sizeof(d->host), db_res_str(res, 6));
	d->payload = strdup(db_res_str(res, 7));
	d->len = db_res_len(res, 7);
	d->attempt = (int)db_res_int(res, 8);
	strparse_copy(d->account, sizeof(d->account), db_res_str(res, 9));
	d->webhook = is_webhook;
	db_res_free(res);
	cl->n++;	/* cleared by the caller from here on */
	if (d->url == NULL || d->payload == NULL)
		return DB_ERR_QUERY;
	if ((e = events_secrets(db, d, job, is_webhook ? webhook : NULL)) !=
	    DB_OK)
		return e;
	return db_exec(db, "INSERT INTO event_attempts (delivery_id, attempt, "
	    "started_at) VALUES (?, ?, UTC_TIMESTAMP(3))",
	    DB_ARGS(DBP_STR(id), DBP_INT(d->attempt)), NULL);
}

/* The candidates of one kind (per_account of each account's at most):
 * ids, hosts and accounts, locked. */
struct events_candidate {
	char	 id[IDS_MAX];
	char	 host[EVENTS_HOST_MAX];
	char	 account[IDS_MAX];
};

static enum db_err
events_candidates(struct db *db, const char *sql, size_t want,
    size_t per_account, struct events_candidate **c, size_t *n)
{
	struct db_res *res = NULL;
	enum db_err e;

	*n = 0;
	if ((*c = calloc(want, sizeof(**c))) == NULL)
		return DB_ERR_QUERY;
	if ((e = db_query(db, sql, DB_ARGS(DBP_INT(per_account > 0 ?
	    (long long)per_account : (long long)want),
	    DBP_INT((long long)want)), &res)) != DB_OK)
		return e;
	while (*n < want && db_res_next(res) == 1) {
		strparse_copy((*c)[*n].id, IDS_MAX, db_res_str(res, 0));
		strparse_copy((*c)[*n].host, EVENTS_HOST_MAX,
		    db_res_str(res, 1));
		strparse_copy((*c)[*n].account, IDS_MAX, db_res_str(res, 2));
		(*n)++;
	}
	db_res_free(res);
	return DB_OK;
}

static void
events_claiming_clear(struct events_claiming *cl)
{
	size_t i;

	for (i = 0; i < cl->n; i++)
		events_delivery_clear(&cl->out[i]);
	cl->n = 0;
}

/* Deliveries to host, and of account, this claim took already. */
static size_t
events_claimed(const struct events_claiming *cl, const char *host)
{
	size_t i, k = 0;

	for (i = 0; i < cl->n; i++)
		k += strcmp(cl->out[i].host, host) == 0;
	return k;
}

static size_t
events_claimed_account(const struct events_claiming *cl, const char *account)
{
	size_t i, k = 0;

	for (i = 0; i < cl->n; i++)
		k += strcmp(cl->out[i].account, account) == 0;
	return k;
}

/* The due deliveries of one kind, each account's first ones (ROW_NUMBER
 * per account, at most the first parameter), the longest waiting first. */
#define EVENTS_DUE(cond, order) \
	"SELECT id, host, account_id FROM event_deliveries WHERE " cond \
	" AND id IN (SELECT id FROM (SELECT id, ROW_NUMBER() OVER " \
	"(PARTITION BY account_id ORDER BY " order ", id) AS rn FROM " \
	"event_deliveries WHERE " cond ") AS firsts WHERE rn <= ?) " \
	"ORDER BY " order " LIMIT ? FOR UPDATE SKIP LOCKED"

static enum db_err
events_claim_work(struct db *db, void *arg)
{
	/* expired leases first: their receivers have waited longest */
	static const char *const sql[2] = {
		EVENTS_DUE("state = 'sending' AND lease_expires < "
		    "UTC_TIMESTAMP(3)", "lease_expires"),
		EVENTS_DUE("state = 'pending' AND next_attempt_at <= "
		    "UTC_TIMESTAMP(3)", "next_attempt_at"),
	};
	struct events_claiming *cl = arg;
	struct events_candidate *c = NULL;
	enum db_err e = DB_OK;
	size_t k, i, n;
	long long mine = 0;
	int one;

	/* run again (db_tx_retry, after a lost connection): when the last
	 * run's first delivery is leased to us at its attempt, that run's
	 * COMMIT was applied and its claims stand (cleared, they would wait
	 * for their leases to run out, sent by nobody) */
	if (cl->n > 0) {
		if ((e = db_query_int(db, "SELECT COUNT(*) FROM event_deliveries "
		    "WHERE id = ? AND state = ? AND lease_owner = ? AND "
		    "attempts = ?", DB_ARGS(DBP_STR(cl->out[0].id),
		    DBP_STR(events_state_names[EVENTS_SENDING]),
		    DBP_STR(cl->owner), DBP_INT(cl->out[0].attempt)), &mine,
		    &one)) != DB_OK)
			return e;
		if (mine > 0)
			return DB_OK;
	}
	events_claiming_clear(cl);
	for (k = 0; e == DB_OK && k < 2 && cl->n < cl->max; k++) {
		e = events_candidates(db, sql[k], (cl->max - cl->n) *
		    EVENTS_CLAIM_LOOK, cl->per_account, &c, &n);
		for (i = 0; e == DB_OK && i < n && cl->n < cl->max; i++)
			if (cl->room(cl->arg, c[i].host, events_claimed(cl,
			    c[i].host), c[i].account,
			    events_claimed_account(cl, c[i].account)))
				e = events_claim_one(db, cl, c[i].id);
		free(c);
		c = NULL;
	}
	return e;
}

enum db_err
events_claim(struct db *db, const char *owner, long lease_seconds,
    size_t max, size_t per_account, events_room_fn room, void *arg,
    struct events_delivery *out, size_t *n)
{
	struct events_claiming cl;
	enum db_err e;

	memset(&cl, 0, sizeof(cl));
	cl.owner = owner;
	cl.lease = lease_seconds;
	cl.max = max;
	cl.per_account = per_account;
	cl.room = room;
	cl.arg = arg;
	cl.out = out;
	*n = 0;
	if (max == 0)
		return DB_OK;
	if ((e = db_tx_retry(db, events_claim_work, &cl)) != DB_OK) {
		events_claiming_clear(&cl);
		return e;
	}
	*n = cl.n;
	return DB_OK;
}

/* ---------------------------------------------------------------- records */

struct events_recording {
	const struct events_delivery	*d;
	const char			*owner;
	const struct events_attempt	*a;
	const long			*schedule;
	size_t				 nschedule;
	enum events_state		 became;
	int				 release;	/* events_release */
};

/* The delivery's new state, and when it is pending again, in how many
 * seconds (*wait). */
static enum events_state
events_next(const struct events_recording *r, long *wait)
{
	const struct events_attempt *a = r->a;

	*wait = 0;
	if (a->error == NULL && a->status >= 200 && a->status <= 299)
		return EVENTS_DELIVERED;
	if (a->permanent || (a->error == NULL && a->status == 410))
		return EVENTS_FAILED;
	if (r->d->attempt < 1 || (size_t)r->d->attempt > r->nschedule)
		return EVENTS_FAILED;
	*wait = r->schedule[r->d->attempt - 1];
	return EVENTS_PENDING;
}

/* A webhook that answered 410 Gone: disabled, its pending deliveries
 * given up. */
static enum db_err
events_gone(struct db *db, const struct events_recording *r,
    const char *webhook_id)
{
	enum db_err e;

	e = db_exec(db, "UPDATE webhooks SET enabled = 0, disabled_reason = "
	    "'gone', updated_at = UTC_TIMESTAMP(3) WHERE id = ?",
	    DB_ARGS(DBP_STR(webhook_id)), NULL);
	if (e == DB_OK)
		e = db_exec(db, "UPDATE event_deliveries SET state = ?, "
		    "finished_at = UTC_TIMESTAMP(3), last_error = "
		    "'webhook_disabled' WHERE webhook_id = ? AND state = ?",
		    DB_ARGS(DBP_STR(events_state_names[EVENTS_FAILED]),
		    DBP_STR(webhook_id),
		    DBP_STR(events_state_names[EVENTS_PENDING])), NULL);
	if (e == DB_OK)
		log_warn("event=webhook_disabled webhook=%s reason=gone "
		    "delivery=%s", webhook_id, r->d->id);
	return e;
}

static enum db_err
events_record_work(struct db *db, void *arg)
{
	struct events_recording *r = arg;
	const struct events_delivery *d = r->d;
	const struct events_attempt *a = r->a;
	unsigned long long changed = 0;
	char error[201];
	long wait = 0;
	enum db_err e;

	if (r->release) {
		r->became = EVENTS_PENDING;
		strparse_copy(error, sizeof(error), "interrupted");
	} else {
		r->became = events_next(r, &wait);
		strparse_copy(error, sizeof(error), a->error);
	}
	e = db_exec(db, "UPDATE event_deliveries SET state = ?, "
	    "next_attempt_at = IF(? = 'pending', UTC_TIMESTAMP(3) + "
	    "INTERVAL ? SECOND, next_attempt_at), finished_at = IF(? = "
	    "'pending', NULL, UTC_TIMESTAMP(3)), last_status = IF(? > 0, ?, "
	    "NULL), last_error = ?, lease_owner = NULL, lease_expires = NULL "
	    "WHERE id = ? AND state = ? AND lease_owner = ? AND attempts = ?",
	    DB_ARGS(DBP_STR(events_state_names[r->became]),
	    DBP_STR(events_state_names[r->became]), DBP_INT(wait),
	    DBP_STR(events_state_names[r->became]),
	    DBP_INT(r->release ? 0 : a->status),
	    DBP_INT(r->release ? 0 : a->status),
	    DBP_STR(error[0] ? error : NULL), DBP_STR(d->id),
	    DBP_STR(events_state_names[EVENTS_SENDING]), DBP_STR(r->owner),
	    DBP_INT(d->attempt)), &changed);
	if (e != DB_OK)
		return e;
	if (changed == 0)
		return DB_ABORT;	/* not ours any more */
	e = db_exec(db, "UPDATE event_attempts SET finished_at = "
	    "UTC_TIMESTAMP(3), duration_ms = ?, status_code = IF(? > 0, ?, "
	    "NULL), error = ? WHERE delivery_id = ? AND attempt = ?",
	    DB_ARGS(DBP_INT(r->release ? 0 : a->duration_ms),
	    DBP_INT(r->release ? 0 : a->status),
	    DBP_INT(r->release ? 0 : a->status),
	    DBP_STR(error[0] ? error : NULL), DBP_STR(d->id),
	    DBP_INT(d->attempt)), NULL);
	if (e == DB_OK && !r->release && d->webhook && a->error == NULL &&
	    a->status == 410)
		e = events_gone(db, r, d->receiver);
	return e;
}

enum db_err
events_record(struct db *db, const struct events_delivery *d,
    const char *owner, const struct events_attempt *a, const long *schedule,
    size_t nschedule, enum events_state *became)
{
	struct events_recording r;
	enum db_err e;

	memset(&r, 0, sizeof(r));
	r.d = d;
	r.owner = owner;
	r.a = a;
	r.schedule = schedule;
	r.nschedule = nschedule;
	e = db_tx_retry(db, events_record_work, &r);
	*became = r.became;
	return e;
}

enum db_err
events_release(struct db *db, const struct events_delivery *d,
    const char *owner)
{
	struct events_recording r;
	struct events_attempt none;

	memset(&r, 0, sizeof(r));
	memset(&none, 0, sizeof(none));
	r.d = d;
	r.owner = owner;
	r.a = &none;
	r.release = 1;
	return db_tx_retry(db, events_record_work, &r);
}

/* ---------------------------------------------------------------- purge */

long long
events_purge(struct db *db, long days, long limit)
{
	struct db_res *res = NULL;
	char (*ids)[IDS_MAX];
	unsigned long long changed = 0;
	long long purged = 0;
	size_t n = 0, i;

	if (limit <= 0)
		return 0;
	if ((ids = calloc((size_t)limit, sizeof(*ids))) == NULL)
		return -1;
	if (db_query(db, "SELECT id FROM event_deliveries WHERE finished_at < "
	    "UTC_TIMESTAMP(3) - INTERVAL ? DAY LIMIT ?",
	    DB_ARGS(DBP_INT(days), DBP_INT(limit)), &res) != DB_OK)
		goto fail;
	while (n < (size_t)limit && db_res_next(res) == 1)
		strparse_copy(ids[n++], IDS_MAX, db_res_str(res, 0));
	db_res_free(res);
	/* attempts first: an interrupted purge leaves the delivery row */
	for (i = 0; i < n; i++) {
		if (db_exec(db, "DELETE FROM event_attempts WHERE "
		    "delivery_id = ?", DB_ARGS(DBP_STR(ids[i])), NULL) !=
		    DB_OK || db_exec(db, "DELETE FROM event_deliveries WHERE "
		    "id = ?", DB_ARGS(DBP_STR(ids[i])), NULL) != DB_OK)
			goto fail;
		purged++;
	}
	if (db_exec(db, "DELETE FROM event_outbox WHERE delivered_at < "
	    "UTC_TIMESTAMP(3) - INTERVAL ? DAY LIMIT ?",
	    DB_ARGS(DBP_INT(days), DBP_INT(limit)), &changed) != DB_OK)
		goto fail;
	free(ids);
	return purged + (long long)changed;
fail:
	free(ids);
	return -1;
}
