/* webhooks.c: the account webhooks' rows (webhooks.h). Every statement
 * names the account, so another account's webhook is never read, changed
 * or counted; changes run in one transaction each (db_tx_retry) under the
 * webhook row's lock. Secrets are kept as they are (they key the HMAC
 * that signs each delivery), each with its expiry: NULL for the one that
 * signs until the next rotation. Tests (webhooks_test) are free, so they
 * are limited per webhook: one being sent at a time and
 * webhook_test_limit an hour, counted from the deliveries' own rows (the
 * webhook row's lock orders two tests of one webhook), so that a slow
 * host's tests cannot fill the workers' delivery slots. */
#include "jobs/webhooks.h"
#include "jobs/events.h"
#include "jobs/fetch.h"
#include "util/buf.h"
#include "util/log.h"
#include "util/strparse.h"
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WEBHOOKS_ISO(col) "DATE_FORMAT(" col ", '%Y-%m-%dT%H:%i:%sZ')"

const char *const webhooks_event_names[WEBHOOKS_EVENT__MAX] = {
	[WEBHOOKS_JOB_COMPLETED] = "job.completed",
	[WEBHOOKS_JOB_FAILED] = "job.failed",
};

unsigned
webhooks_event_bit(const char *name)
{
	int i;

	for (i = 0; i < WEBHOOKS_EVENT__MAX; i++)
		if (strcmp(name, webhooks_event_names[i]) == 0)
			return 1u << i;
	return 0;
}

/* "job.completed,job.failed" (MariaDB's SET) from bits, and back. */
static void
webhooks_events_text(unsigned bits, char *out, size_t n)
{
	size_t len = 0;
	int i;

	out[0] = '\0';
	for (i = 0; i < WEBHOOKS_EVENT__MAX; i++)
		if (bits & (1u << i))
			len += (size_t)snprintf(out + len, len < n ? n - len : 0,
			    "%s%s", len ? "," : "", webhooks_event_names[i]);
}

static unsigned
webhooks_events_bits(const char *text)
{
	char name[48];
	unsigned bits = 0;
	size_t k;

	while (text != NULL && *text != '\0') {
		k = strcspn(text, ",");
		if (k < sizeof(name)) {
			memcpy(name, text, k);
			name[k] = '\0';
			bits |= webhooks_event_bit(name);
		}
		text += k;
		text += *text == ',';
	}
	return bits;
}

void
webhooks_row_free(struct webhooks_row *w)
{
	free(w->url);
	free(w->description);
	w->url = w->description = NULL;
}

static void
webhooks_row_read(struct db_res *res, struct webhooks_row *w)
{
	memset(w, 0, sizeof(*w));
	strparse_copy(w->id, sizeof(w->id), db_res_str(res, 0));
	w->url = strdup(db_res_str(res, 1) ? db_res_str(res, 1) : "");
	w->events = webhooks_events_bits(db_res_str(res, 2));
	w->description = strdup(db_res_str(res, 3) ? db_res_str(res, 3) : "");
	w->enabled = db_res_int(res, 4) != 0;
	strparse_copy(w->disabled_reason, sizeof(w->disabled_reason),
	    db_res_str(res, 5));
	strparse_copy(w->created_at, sizeof(w->created_at), db_res_str(res, 6));
	strparse_copy(w->updated_at, sizeof(w->updated_at), db_res_str(res, 7));
	strparse_copy(w->rotated_until, sizeof(w->rotated_until),
	    db_res_str(res, 8));
}

#define WEBHOOKS_COLUMNS "SELECT w.id, w.url, w.events, w.description, " \
	"w.enabled, w.disabled_reason, " WEBHOOKS_ISO("w.created_at") ", " \
	WEBHOOKS_ISO("w.updated_at") ", (SELECT " \
	WEBHOOKS_ISO("MAX(s.expires_at)") " FROM webhook_secrets s WHERE " \
	"s.webhook_id = w.id AND s.expires_at > UTC_TIMESTAMP(3)) " \
	"FROM webhooks w "

enum webhooks_err
webhooks_get(struct db *db, const char *account, const char *id,
    struct webhooks_row *w)
{
	struct db_res *res = NULL;
	int row;

	memset(w, 0, sizeof(*w));
	if (db_query(db, WEBHOOKS_COLUMNS "WHERE w.account_id = ? AND w.id = ?",
	    DB_ARGS(DBP_STR(account), DBP_STR(id)), &res) != DB_OK)
		return WEBHOOKS_DB;
	if ((row = db_res_next(res)) == 1)
		webhooks_row_read(res, w);
	db_res_free(res);
	if (row != 1)
		return row == 0 ? WEBHOOKS_NOT_FOUND : WEBHOOKS_DB;
	if (w->url == NULL || w->description == NULL) {
		webhooks_row_free(w);
		return WEBHOOKS_NOMEM;
	}
	return WEBHOOKS_OK;
}

enum webhooks_err
webhooks_list(struct db *db, const char *account, webhooks_each_fn fn,
    void *arg)
{
	struct db_res *res = NULL;
	struct webhooks_row w;
	enum webhooks_err rc = WEBHOOKS_OK;

	if (db_query(db, WEBHOOKS_COLUMNS "WHERE w.account_id = ? ORDER BY "
	    "w.created_at, w.id", DB_ARGS(DBP_STR(account)), &res) != DB_OK)
		return WEBHOOKS_DB;
	while (rc == WEBHOOKS_OK && db_res_next(res) == 1) {
		webhooks_row_read(res, &w);
		if (w.url == NULL || w.description == NULL)
			rc = WEBHOOKS_NOMEM;
		else if (fn(arg, &w) == -1)
			rc = WEBHOOKS_NOMEM;
		webhooks_row_free(&w);
	}
	db_res_free(res);
	return rc;
}

/* ---------------------------------------------------------------- changes */

/* One change of a webhook, run by db_tx_retry. */
struct webhooks_tx {
	const char			*account, *id;
	const char			*url, *description;
	unsigned			 events;
	const struct webhooks_change	*change;
	char				*secret;
	char				 until[TIMEUTIL_ISO_LEN];
	char				 delivery[IDS_MAX], event[IDS_MAX];
	long				 per_hour;	/* webhooks_test */
	long				 retry_after;
	long long			 reset_at;
	/* webhooks_create: run after the row, in its transaction */
	enum db_err			(*then)(struct db *,
					    const struct webhooks_row *, void *);
	void				*then_arg;
	enum webhooks_err		 rc;
	/* runs of the work (db_tx_retry runs it again after a lost
	 * connection, when its COMMIT may have been applied) */
	int				 runs;
};

/* Locks the account's webhook: DB_OK, or DB_ABORT with NOT_FOUND. */
static enum db_err
webhooks_lock(struct db *db, struct webhooks_tx *t, char **url)
{
	struct db_res *res = NULL;
	enum db_err e;
	int row;

	e = db_query(db, "SELECT url FROM webhooks WHERE id = ? AND "
	    "account_id = ? FOR UPDATE", DB_ARGS(DBP_STR(t->id),
	    DBP_STR(t->account)), &res);
	if (e != DB_OK)
		return e;
	row = db_res_next(res);
	if (row == 1 && url != NULL && (*url = strdup(db_res_str(res, 0))) ==
	    NULL)
		row = -1;
	db_res_free(res);
	if (row == 0) {
		t->rc = WEBHOOKS_NOT_FOUND;
		return DB_ABORT;
	}
	return row == 1 ? DB_OK : DB_ERR_QUERY;
}

static enum db_err
webhooks_insert_secret(struct db *db, const char *id, char *secret)
{
	if (ids_random_text("whsec_", 32, secret, WEBHOOKS_SECRET_MAX) == -1)
		return DB_ERR_QUERY;
	return db_exec(db, "INSERT INTO webhook_secrets (webhook_id, secret, "
	    "created_at) VALUES (?, ?, UTC_TIMESTAMP(3))",
	    DB_ARGS(DBP_STR(id), DBP_STR(secret)), NULL);
}

/* The caller's then with the new row, read in the transaction. */
static enum db_err
webhooks_create_then(struct db *db, struct webhooks_tx *t)
{
	struct webhooks_row w;
	enum db_err e;

	switch (webhooks_get(db, t->account, t->id, &w)) {
	case WEBHOOKS_OK:
		break;
	case WEBHOOKS_DB:
		return db_unreachable(db) ? DB_ERR_CONNECT : DB_ERR_QUERY;
	default:
		return DB_ERR_QUERY;
	}
	e = t->then(db, &w, t->then_arg);
	webhooks_row_free(&w);
	return e;
}

static enum db_err
webhooks_create_work(struct db *db, void *arg)
{
	struct webhooks_tx *t = arg;
	struct db_res *res = NULL;
	char events[64];
	unsigned long long n;
	long long found = 0;
	int one;
	enum db_err e;

	/* run again: the webhook is there when the last run committed (its
	 * secret, in t->secret, is the one stored) */
	if (t->runs++ > 0) {
		if ((e = db_query_int(db, "SELECT COUNT(*) FROM webhooks WHERE "
		    "id = ?", DB_ARGS(DBP_STR(t->id)), &found, &one)) !=
		    DB_OK)
			return e;
		if (found)
			return DB_OK;
	}
	/* the lock on the account's range keeps two creations apart */
	e = db_query(db, "SELECT id FROM webhooks WHERE account_id = ? FOR "
	    "UPDATE", DB_ARGS(DBP_STR(t->account)), &res);
	if (e != DB_OK)
		return e;
	n = db_res_rows(res);
	db_res_free(res);
	if (n >= WEBHOOKS_PER_ACCOUNT) {
		t->rc = WEBHOOKS_LIMIT;
		return DB_ABORT;
	}
	webhooks_events_text(t->events, events, sizeof(events));
	e = db_exec(db, "INSERT INTO webhooks (id, account_id, url, events, "
	    "description, enabled, created_at, updated_at) VALUES (?, ?, ?, "
	    "?, ?, 1, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))",
	    DB_ARGS(DBP_STR(t->id), DBP_STR(t->account), DBP_STR(t->url),
	    DBP_STR(events), DBP_STR(t->description)), NULL);
	if (e == DB_OK)
		e = webhooks_insert_secret(db, t->id, t->secret);
	if (e == DB_OK && t->then != NULL)
		e = webhooks_create_then(db, t);
	return e;
}

/* db_tx_retry's answer as the caller's. */
static enum webhooks_err
webhooks_tx_run(struct db *db, enum db_err (*work)(struct db *, void *),
    struct webhooks_tx *t)
{
	t->rc = WEBHOOKS_OK;
	t->runs = 0;
	switch (db_tx_retry(db, work, t)) {
	case DB_OK:
		return WEBHOOKS_OK;
	case DB_ABORT:
		return t->rc;
	default:
		log_error("event=webhooks_db_error webhook=%s error=\"%s\"",
		    t->id, db_error(db));
		return WEBHOOKS_DB;
	}
}

enum webhooks_err
webhooks_create(struct db *db, const char *account, const char *url,
    unsigned events, const char *description, struct webhooks_row *w,
    char *secret, enum db_err (*then)(struct db *,
    const struct webhooks_row *, void *), void *then_arg)
{
	struct webhooks_tx t;
	char id[IDS_MAX];
	enum webhooks_err rc;

	memset(w, 0, sizeof(*w));
	if (ids_new("wh", id) == -1)
		return WEBHOOKS_NOMEM;
	memset(&t, 0, sizeof(t));
	t.account = account;
	t.id = id;
	t.url = url;
	t.events = events ? events : WEBHOOKS_ALL_EVENTS;
	t.description = description ? description : "";
	t.secret = secret;
	t.then = then;
	t.then_arg = then_arg;
	if ((rc = webhooks_tx_run(db, webhooks_create_work, &t)) !=
	    WEBHOOKS_OK)
		return rc;
	log_info("event=webhook_created webhook=%s account=%s", id, account);
	return webhooks_get(db, account, id, w);
}

static enum db_err
webhooks_update_work(struct db *db, void *arg)
{
	struct webhooks_tx *t = arg;
	const struct webhooks_change *c = t->change;
	char events[64], host[EVENTS_HOST_MAX];
	enum db_err e;

	if ((e = webhooks_lock(db, t, NULL)) != DB_OK)
		return e;
	webhooks_events_text(c->events, events, sizeof(events));
	e = db_exec(db, "UPDATE webhooks SET url = COALESCE(?, url), events = "
	    "IF(? = '', events, ?), description = COALESCE(?, description), "
	    "enabled = IF(? < 0, enabled, ?), disabled_reason = IF(? = 1, "
	    "NULL, disabled_reason), updated_at = UTC_TIMESTAMP(3) WHERE "
	    "id = ?", DB_ARGS(DBP_STR(c->url), DBP_STR(events),
	    DBP_STR(events), DBP_STR(c->description), DBP_INT(c->enabled),
	    DBP_INT(c->enabled), DBP_INT(c->enabled), DBP_STR(t->id)), NULL);
	if (e != DB_OK || c->url == NULL)
		return e;
	/* what is still to be sent goes to the new URL */
	if (fetch_host_of(c->url, host, sizeof(host)) == -1)
		host[0] = '\0';
	return db_exec(db, "UPDATE event_deliveries SET url = ?, host = ? "
	    "WHERE webhook_id = ? AND state = ?", DB_ARGS(DBP_STR(c->url),
	    DBP_STR(host), DBP_STR(t->id),
	    DBP_STR(events_state_names[EVENTS_PENDING])), NULL);
}

enum webhooks_err
webhooks_update(struct db *db, const char *account, const char *id,
    const struct webhooks_change *c, struct webhooks_row *w)
{
	struct webhooks_tx t;
	enum webhooks_err rc;

	memset(w, 0, sizeof(*w));
	memset(&t, 0, sizeof(t));
	t.account = account;
	t.id = id;
	t.change = c;
	if ((rc = webhooks_tx_run(db, webhooks_update_work, &t)) !=
	    WEBHOOKS_OK)
		return rc;
	log_info("event=webhook_updated webhook=%s", id);
	return webhooks_get(db, account, id, w);
}

static enum db_err
webhooks_delete_work(struct db *db, void *arg)
{
	struct webhooks_tx *t = arg;
	enum db_err e;

	if ((e = webhooks_lock(db, t, NULL)) != DB_OK) {
		/* run again and gone: the last run's COMMIT was applied */
		if (e == DB_ABORT && t->rc == WEBHOOKS_NOT_FOUND &&
		    t->runs > 0) {
			t->rc = WEBHOOKS_OK;
			return DB_OK;
		}
		return e;
	}
	t->runs++;
	if ((e = db_exec(db, "DELETE a FROM event_attempts a JOIN "
	    "event_deliveries d ON d.id = a.delivery_id WHERE d.webhook_id = ?",
	    DB_ARGS(DBP_STR(t->id)), NULL)) != DB_OK ||
	    (e = db_exec(db, "DELETE FROM event_deliveries WHERE "
	    "webhook_id = ?", DB_ARGS(DBP_STR(t->id)), NULL)) != DB_OK ||
	    (e = db_exec(db, "DELETE FROM webhook_secrets WHERE "
	    "webhook_id = ?", DB_ARGS(DBP_STR(t->id)), NULL)) != DB_OK)
		return e;
	return db_exec(db, "DELETE FROM webhooks WHERE id = ?",
	    DB_ARGS(DBP_STR(t->id)), NULL);
}

enum webhooks_err
webhooks_delete(struct db *db, const char *account, const char *id)
{
	struct webhooks_tx t;
	enum webhooks_err rc;

	memset(&t, 0, sizeof(t));
	t.account = account;
	t.id = id;
	if ((rc = webhooks_tx_run(db, webhooks_delete_work, &t)) ==
	    WEBHOOKS_OK)
		log_info("event=webhook_deleted webhook=%s", id);
	return rc;
}

/* Only the newest EVENTS_SECRETS_MAX secrets sign: older ones stop now. */
static enum db_err
webhooks_expire_extra(struct db *db, const char *id)
{
	struct db_res *res = NULL;
	long long extra[16];
	size_t n = 0, i;
	enum db_err e;

	e = db_query(db, "SELECT id FROM webhook_secrets WHERE webhook_id = ? "
	    "AND (expires_at IS NULL OR expires_at > UTC_TIMESTAMP(3)) ORDER "
	    "BY created_at DESC, id DESC LIMIT 16 OFFSET ?",
	    DB_ARGS(DBP_STR(id), DBP_INT(EVENTS_SECRETS_MAX)), &res);
	if (e != DB_OK)
		return e;
	while (n < 16 && db_res_next(res) == 1)
		extra[n++] = db_res_int(res, 0);
	db_res_free(res);
	for (i = 0; e == DB_OK && i < n; i++)
		e = db_exec(db, "UPDATE webhook_secrets SET expires_at = "
		    "UTC_TIMESTAMP(3) WHERE id = ?", DB_ARGS(DBP_INT(extra[i])),
		    NULL);
	return e;
}

static enum db_err
webhooks_rotate_work(struct db *db, void *arg)
{
	struct webhooks_tx *t = arg;
	struct db_res *res = NULL;
	long long stored = 0;
	int one;
	enum db_err e;

	t->until[0] = '\0';
	/* run again (db_tx_retry): when the last run's secret is stored, its
	 * COMMIT was applied; rotating once more would sign with a secret
	 * nobody was told */
	if (t->runs++ > 0 && (e = db_query_int(db, "SELECT COUNT(*) FROM "
	    "webhook_secrets WHERE webhook_id = ? AND secret = ?",
	    DB_ARGS(DBP_STR(t->id), DBP_STR(t->secret)), &stored, &one)) !=
	    DB_OK)
		return e;
	if (stored)
		goto until;
	if ((e = webhooks_lock(db, t, NULL)) != DB_OK)
		return e;
	/* the signing ones keep signing for the grace period (one that
	 * stops sooner keeps its time); the stopped ones go */
	if ((e = db_exec(db, "DELETE FROM webhook_secrets WHERE webhook_id = ? "
	    "AND expires_at <= UTC_TIMESTAMP(3)", DB_ARGS(DBP_STR(t->id)),
	    NULL)) != DB_OK ||
	    (e = db_exec(db, "UPDATE webhook_secrets SET expires_at = "
	    "UTC_TIMESTAMP(3) + INTERVAL ? SECOND WHERE webhook_id = ? AND "
	    "(expires_at IS NULL OR expires_at > UTC_TIMESTAMP(3) + "
	    "INTERVAL ? SECOND)", DB_ARGS(DBP_INT(WEBHOOKS_GRACE_SECONDS),
	    DBP_STR(t->id), DBP_INT(WEBHOOKS_GRACE_SECONDS)), NULL)) != DB_OK ||
	    (e = webhooks_insert_secret(db, t->id, t->secret)) != DB_OK ||
	    (e = webhooks_expire_extra(db, t->id)) != DB_OK ||
	    (e = db_exec(db, "UPDATE webhooks SET updated_at = "
	    "UTC_TIMESTAMP(3) WHERE id = ?", DB_ARGS(DBP_STR(t->id)), NULL)) !=
	    DB_OK)
		return e;
until:
	e = db_query(db, "SELECT " WEBHOOKS_ISO("MAX(expires_at)") " FROM "
	    "webhook_secrets WHERE webhook_id = ? AND expires_at > "
	    "UTC_TIMESTAMP(3)", DB_ARGS(DBP_STR(t->id)), &res);
	if (e != DB_OK)
		return e;
	if (db_res_next(res) == 1)
		strparse_copy(t->until, sizeof(t->until), db_res_str(res, 0));
	db_res_free(res);
	return DB_OK;
}

enum webhooks_err
webhooks_rotate(struct db *db, const char *account, const char *id,
    char *secret, char until[TIMEUTIL_ISO_LEN])
{
	struct webhooks_tx t;
	enum webhooks_err rc;

	memset(&t, 0, sizeof(t));
	t.account = account;
	t.id = id;
	t.secret = secret;
	if ((rc = webhooks_tx_run(db, webhooks_rotate_work, &t)) ==
	    WEBHOOKS_OK) {
		memcpy(until, t.until, TIMEUTIL_ISO_LEN);
		log_info("event=webhook_secret_rotated webhook=%s "
		    "previous_until=%s", id, until[0] ? until : "-");
	}
	return rc;
}

/* The envelope of a webhook.test event. */
static char *
webhooks_test_payload(const char *event_id, const char *webhook_id)
{
	char ts[TIMEUTIL_ISO_LEN], *text;
	json_t *o;

	timeutil_iso8601(time(NULL), ts);
	o = json_pack("{s:s, s:s, s:s, s:{s:s, s:s}}", "event_id", event_id,
	    "event", "webhook.test", "timestamp", ts, "data", "webhook_id",
	    webhook_id, "message", "a test event, sent on request");
	text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	return text;
}

/* The limits of webhooks_test, under the webhook row's lock (so two
 * tests of one webhook are counted one after the other): DB_OK when a
 * test may be queued, DB_ABORT with t->rc when not. */
static enum db_err
webhooks_test_limits(struct db *db, struct webhooks_tx *t)
{
	struct db_res *res = NULL;
	enum db_err e;
	long long n = 0;
	int row;

	/* a test being sent (its lease running): the new one waits */
	e = db_query(db, "SELECT COUNT(*) FROM event_deliveries WHERE "
	    "webhook_id = ? AND event = 'webhook.test' AND state = ? AND "
	    "lease_expires > UTC_TIMESTAMP(3)", DB_ARGS(DBP_STR(t->id),
	    DBP_STR(events_state_names[EVENTS_SENDING])), &res);
	if (e != DB_OK)
		return e;
	if ((row = db_res_next(res)) == 1)
		n = db_res_int(res, 0);
	db_res_free(res);
	if (row != 1)
		return DB_ERR_QUERY;
	if (n > 0) {
		t->rc = WEBHOOKS_TEST_IN_FLIGHT;
		return DB_ABORT;
	}
	/* per_hour in the last hour; reset when the oldest leaves it */
	e = db_query(db, "SELECT COUNT(*), COALESCE(TIMESTAMPDIFF(SECOND, "
	    "UTC_TIMESTAMP(3), MIN(created_at) + INTERVAL 1 HOUR), 0), "
	    "COALESCE(UNIX_TIMESTAMP(MIN(created_at) + INTERVAL 1 HOUR), 0) "
	    "FROM event_deliveries WHERE webhook_id = ? AND event = "
	    "'webhook.test' AND created_at > UTC_TIMESTAMP(3) - INTERVAL 1 "
	    "HOUR", DB_ARGS(DBP_STR(t->id)), &res);
	if (e != DB_OK)
		return e;
	if ((row = db_res_next(res)) == 1) {
		n = db_res_int(res, 0);
		t->retry_after = (long)db_res_int(res, 1) + 1;
		t->reset_at = db_res_int(res, 2);
	}
	db_res_free(res);
	if (row != 1)
		return DB_ERR_QUERY;
	if (n >= t->per_hour) {
		t->rc = WEBHOOKS_TEST_LIMIT;
		return DB_ABORT;
	}
	/* a test still waiting (to be sent, or for its retry, or whose
	 * worker died): given up, the new one takes its place */
	return db_exec(db, "UPDATE event_deliveries SET state = ?, "
	    "finished_at = UTC_TIMESTAMP(3), next_attempt_at = NULL, "
	    "lease_owner = NULL, lease_expires = NULL, last_error = "
	    "'superseded' WHERE webhook_id = ? AND event = 'webhook.test' AND "
	    "state IN (?, ?)", DB_ARGS(
	    DBP_STR(events_state_names[EVENTS_FAILED]), DBP_STR(t->id),
	    DBP_STR(events_state_names[EVENTS_PENDING]),
	    DBP_STR(events_state_names[EVENTS_SENDING])), NULL);
}

/* The test's delivery when the last run stored it (its COMMIT applied,
 * the answer lost): *found 1 with its id in t->delivery. */
static enum db_err
webhooks_test_stored(struct db *db, struct webhooks_tx *t, int *found)
{
	struct db_res *res = NULL;
	enum db_err e;

	*found = 0;
	if ((e = db_query(db, "SELECT id FROM event_deliveries WHERE "
	    "event_id = ? AND receiver = ?", DB_ARGS(DBP_STR(t->event),
	    DBP_STR(t->id)), &res)) != DB_OK)
		return e;
	if (db_res_next(res) == 1) {
		strparse_copy(t->delivery, sizeof(t->delivery),
		    db_res_str(res, 0));
		*found = 1;
	}
	db_res_free(res);
	return DB_OK;
}

static enum db_err
webhooks_test_work(struct db *db, void *arg)
{
	struct webhooks_tx *t = arg;
	struct events_new n;
	char *url = NULL, *payload = NULL;
	enum db_err e;
	int found;

	/* run again (db_tx_retry): the test is there when the last run
	 * committed; another would supersede it */
	if (t->runs++ > 0 && ((e = webhooks_test_stored(db, t, &found)) !=
	    DB_OK || found))
		return e;
	if ((e = webhooks_lock(db, t, &url)) != DB_OK)
		return e;
	if ((e = webhooks_test_limits(db, t)) != DB_OK) {
		free(url);
		return e;
	}
	if ((payload = webhooks_test_payload(t->event, t->id)) == NULL) {
		free(url);
		return DB_ERR_QUERY;
	}
	memset(&n, 0, sizeof(n));
	n.event_id = t->event;
	n.event = "webhook.test";
	n.account_id = t->account;
	n.receiver = n.webhook_id = t->id;
	n.url = url;
	n.payload = payload;
	e = events_add(db, &n, t->delivery);
	free(url);
	free(payload);
	return e;
}

enum webhooks_err
webhooks_test(struct db *db, const char *account, const char *id,
    long per_hour, char delivery_id[IDS_MAX], char event_id[IDS_MAX],
    long *retry_after, long long *reset_at)
{
	struct webhooks_tx t;
	enum webhooks_err rc;

	memset(&t, 0, sizeof(t));
	t.account = account;
	t.id = id;
	t.per_hour = per_hour;
	if (ids_new("evt", t.event) == -1)
		return WEBHOOKS_NOMEM;
	if ((rc = webhooks_tx_run(db, webhooks_test_work, &t)) == WEBHOOKS_OK) {
		memcpy(delivery_id, t.delivery, IDS_MAX);
		memcpy(event_id, t.event, IDS_MAX);
	}
	*retry_after = t.retry_after > 0 ? t.retry_after : 1;
	*reset_at = t.reset_at;
	return rc;
}

/* ---------------------------------------------------------------- deliveries */

static enum db_err
webhooks_attempts(struct db *db, struct webhooks_delivery *d)
{
	struct db_res *res = NULL;
	struct webhooks_attempt *a;
	enum db_err e;

	e = db_query(db, "SELECT attempt, " WEBHOOKS_ISO("started_at") ", "
	    "duration_ms, status_code, error FROM event_attempts WHERE "
	    "delivery_id = ? ORDER BY attempt", DB_ARGS(DBP_STR(d->id)), &res);
	if (e != DB_OK)
		return e;
	if (db_res_rows(res) > 0 && (d->log = calloc(db_res_rows(res),
	    sizeof(*d->log))) == NULL)
		e = DB_ERR_QUERY;
	while (e == DB_OK && d->nlog < db_res_rows(res) &&
	    db_res_next(res) == 1) {
		a = &d->log[d->nlog++];
		a->attempt = (int)db_res_int(res, 0);
		strparse_copy(a->started_at, sizeof(a->started_at),
		    db_res_str(res, 1));
		a->duration_ms = db_res_isnull(res, 2) ? -1 :
		    (long)db_res_int(res, 2);
		a->status_code = (long)db_res_int(res, 3);
		strparse_copy(a->error, sizeof(a->error), db_res_str(res, 4));
	}
	db_res_free(res);
	return e;
}

enum webhooks_err
webhooks_deliveries(struct db *db, const char *account, const char *id,
    long page, long limit, long long *total, webhooks_delivery_fn fn,
    void *arg)
{
	struct db_res *res = NULL;
	struct webhooks_delivery d;
	struct webhooks_row w;
	enum webhooks_err rc;
	int found = 0;

	if ((rc = webhooks_get(db, account, id, &w)) != WEBHOOKS_OK)
		return rc;
	webhooks_row_free(&w);
	if (db_query_int(db, "SELECT COUNT(*) FROM event_deliveries WHERE "
	    "webhook_id = ?", DB_ARGS(DBP_STR(id)), total, &found) != DB_OK ||
	    db_query(db, "SELECT id, event_id, event, job_id, state, attempts, "
	    "last_status, last_error, IF(state = 'pending', "
	    WEBHOOKS_ISO("next_attempt_at") ", NULL), "
	    WEBHOOKS_ISO("created_at") ", " WEBHOOKS_ISO("finished_at") " "
	    "FROM event_deliveries WHERE webhook_id = ? ORDER BY created_at "
	    "DESC, id DESC LIMIT ? OFFSET ?", DB_ARGS(DBP_STR(id),
	    DBP_INT(limit), DBP_INT((page - 1) * limit)), &res) != DB_OK)
		return WEBHOOKS_DB;
	while (rc == WEBHOOKS_OK && db_res_next(res) == 1) {
		memset(&d, 0, sizeof(d));
		strparse_copy(d.id, sizeof(d.id), db_res_str(res, 0));
		strparse_copy(d.event_id, sizeof(d.event_id), db_res_str(res, 1));
		strparse_copy(d.event, sizeof(d.event), db_res_str(res, 2));
		strparse_copy(d.job_id, sizeof(d.job_id), db_res_str(res, 3));
		strparse_copy(d.state, sizeof(d.state), db_res_str(res, 4));
		d.attempts = (int)db_res_int(res, 5);
		d.last_status = (long)db_res_int(res, 6);
		strparse_copy(d.last_error, sizeof(d.last_error),
		    db_res_str(res, 7));
		strparse_copy(d.next_attempt_at, sizeof(d.next_attempt_at),
		    db_res_str(res, 8));
		strparse_copy(d.created_at, sizeof(d.created_at),
		    db_res_str(res, 9));
		strparse_copy(d.finished_at, sizeof(d.finished_at),
		    db_res_str(res, 10));
		if (webhooks_attempts(db, &d) != DB_OK)
			rc = WEBHOOKS_DB;
		else if (fn(arg, &d) == -1)
			rc = WEBHOOKS_NOMEM;
		free(d.log);
	}
	db_res_free(res);
	return rc;
}
