/* uploads.c: upload jobs as the API sees them (uploads.h): the job row
 * made in the request's transaction, confirmation charging exactly once
 * (the job row's lock orders concurrent confirms; the ledger's unique ref
 * would refuse a second charge anyway), and the preview's state. */
#include "jobs/uploads.h"
#include "core/ledger.h"
#include "jobs/caps.h"
#include "util/strparse.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Inside the transaction: the account's caps on jobs in flight and on
 * stored upload bytes; DB_ABORT with rc at a cap. */
static enum db_err
uploads_caps_check(struct db *db, const struct uploads_new *u,
    long long *used, enum uploads_err *rc)
{
	enum db_err e;

	if ((e = caps_lock(db, u->account_id)) != DB_OK ||
	    (e = caps_jobs_in_flight(db, u->account_id, used)) != DB_OK)
		return e;
	if (*used >= u->jobs_in_flight_max) {
		*rc = UPLOADS_TOO_MANY_JOBS;
		return DB_ABORT;
	}
	if ((e = caps_upload_bytes(db, u->account_id, NULL, used)) != DB_OK)
		return e;
	if (*used + u->size > u->storage_max ||
	    (u->source_url != NULL && *used >= u->storage_max)) {
		*rc = UPLOADS_STORAGE_FULL;
		return DB_ABORT;
	}
	return DB_OK;
}

/* The job's row, and then, in one transaction run by db_tx_retry: a run
 * after one whose COMMIT's answer was lost finds the row written (the id
 * is the caller's) and writes only then's part again (an UPDATE by a
 * key), instead of failing on the primary key or at a cap the job itself
 * now fills. */
struct uploads_creating {
	const struct uploads_new *u;
	long long	*used;
	enum uploads_err rc;
	int		 runs;
	enum db_err	(*then)(struct db *, void *);
	void		*then_arg;
};

static enum db_err
uploads_create_work(struct db *db, void *arg)
{
	struct uploads_creating *k = arg;
	const struct uploads_new *u = k->u;
	long long n = 0;
	int found = 0;
	enum db_err e;

	*k->used = 0;
	if (k->runs++ > 0) {
		/* a COMMIT applied through a node that died is seen */
		(void)db_sync_wait(db, 1);
		e = db_query_int(db, "SELECT COUNT(*) FROM jobs WHERE id = ?",
		    DB_ARGS(DBP_STR(u->id)), &n, &found);
		(void)db_sync_wait(db, 0);
		if (e != DB_OK)
			return e;
	}
	if (n == 0 && ((e = uploads_caps_check(db, u, k->used, &k->rc)) !=
	    DB_OK || (e = db_exec(db, "INSERT INTO jobs (id, account_id, "
	    "pool_id, type, name, status, file_name, file_format, file_size, "
	    "source_url, column_rule, email_column, want_preview, "
	    "callback_url, callback_secret, created_at, retention_days) "
	    "VALUES (?, ?, ?, 'upload', ?, 'ingesting', ?, ?, ?, ?, ?, ?, ?, "
	    "?, ?, UTC_TIMESTAMP(3), " RETENTION_ASK_SQL ")",
	    DB_ARGS(DBP_STR(u->id), DBP_STR(u->account_id),
	    DBP_STR(u->pool_id), DBP_STR(u->name ? u->name : ""),
	    DBP_STR(u->file_name), DBP_STR(u->format), DBP_INT(u->size),
	    DBP_STR(u->source_url), DBP_STR(ingest_rule_names[u->rule]),
	    DBP_STR(u->email_column), DBP_INT(u->preview),
	    DBP_STR(u->callback_url), DBP_STR(u->callback_secret),
	    RETENTION_ASK_ARGS(&u->retention, u->account_id)), NULL)) !=
	    DB_OK))
		return e;
	return k->then != NULL ? k->then(db, k->then_arg) : DB_OK;
}

enum uploads_err
uploads_create(struct db *db, const struct uploads_new *u, long long *used,
    enum db_err (*then)(struct db *, void *), void *then_arg)
{
	struct uploads_creating k = { u, used, UPLOADS_OK, 0, then, then_arg };
	enum db_err e;

	e = db_tx_retry(db, uploads_create_work, &k);
	if (e == DB_ABORT)
		return k.rc;
	return e == DB_OK ? UPLOADS_OK : UPLOADS_DB;
}

struct uploads_confirming {
	const char	*account, *id;
	struct uploads_confirmed *out;
	enum uploads_err rc;
	/* the last run got to its end (the UPDATE and then): run again
	 * (db_tx_retry, after a lost connection) and the job is no longer
	 * awaiting confirmation, that run's COMMIT was applied, and its
	 * answer (out) stands */
	int		 updated;
	uploads_confirm_then_fn then;
	void		*then_arg;
};

static enum db_err
uploads_confirm_work(struct db *db, void *arg)
{
	struct uploads_confirming *k = arg;
	struct uploads_confirmed *o = k->out;
	char pool[IDS_MAX], ref[IDS_MAX + 16];
	struct db_res *r;
	enum ledger_err lr;
	enum db_err e;
	int row;

	switch (jobs_lock(db, k->account, k->id, &o->status)) {
	case JOBS_OK:
		break;
	case JOBS_NOT_FOUND:
		k->rc = UPLOADS_NOT_FOUND;
		return DB_ABORT;
	default:
		return DB_ERR_QUERY;
	}
	if (o->status != JOBS_AWAITING_CONFIRMATION && k->updated) {
		o->status = JOBS_PENDING;	/* as the applied run said */
		return k->then != NULL ? k->then(db, o, k->then_arg) : DB_OK;
	}
	k->updated = 0;
	if (o->status != JOBS_AWAITING_CONFIRMATION) {
		k->rc = UPLOADS_WRONG_STATUS;
		return DB_ABORT;
	}
	if ((e = db_query(db, "SELECT pool_id, credits_needed FROM jobs WHERE "
	    "id = ?", DB_ARGS(DBP_STR(k->id)), &r)) != DB_OK)
		return e;
	if ((row = db_res_next(r)) == 1) {
		strparse_copy(pool, sizeof(pool), db_res_str(r, 0));
		o->required = db_res_int(r, 1);
	}
	db_res_free(r);
	if (row != 1)
		return DB_ERR_QUERY;
	snprintf(ref, sizeof(ref), "job:%s:charge", k->id);
	lr = ledger_charge(db, pool, k->account, o->required, ref,
	    &o->balance);
	if (lr == LEDGER_INSUFFICIENT) {
		k->rc = UPLOADS_INSUFFICIENT;
		return DB_ABORT;
	}
	if (lr == LEDGER_RETRY)
		return DB_ERR_RETRY;
	if (lr != LEDGER_OK)
		return DB_ERR_QUERY;
	o->charged = o->required;
	o->status = JOBS_PENDING;
	if ((e = db_exec(db, "UPDATE jobs SET status = ?, credits_charged = ? "
	    "WHERE id = ?", DB_ARGS(DBP_STR(jobs_status_names[JOBS_PENDING]),
	    DBP_INT(o->charged), DBP_STR(k->id)), NULL)) != DB_OK ||
	    (k->then != NULL && (e = k->then(db, o, k->then_arg)) != DB_OK))
		return e;
	k->updated = 1;
	return DB_OK;
}

enum uploads_err
uploads_confirm(struct db *db, const char *account, const char *id,
    struct uploads_confirmed *out, uploads_confirm_then_fn then,
    void *then_arg)
{
	struct uploads_confirming k = { account, id, out, UPLOADS_OK, 0, then,
	    then_arg };
	enum db_err e;

	memset(out, 0, sizeof(*out));
	/* a confirmation made through another node is seen (Galera) */
	(void)db_sync_wait(db, 1);
	e = db_tx_retry(db, uploads_confirm_work, &k);
	(void)db_sync_wait(db, 0);
	if (e == DB_ABORT)
		return k.rc;
	return e == DB_OK ? UPLOADS_OK : UPLOADS_DB;
}

enum uploads_err
uploads_preview_get(struct db *db, const char *account, const char *id,
    int refresh, struct uploads_preview *out)
{
	struct db_res *r;
	int row, wanted = 0;

	memset(out, 0, sizeof(*out));
	/* A refresh is asked for first, so that this answer already says
	 * so; each request moves preview_refresh_at (the worker computes
	 * again for one that came while it worked: ingest_preview_done). */
	if (refresh && db_exec(db, "UPDATE jobs SET preview_refresh = 1, "
	    "preview_refresh_at = UTC_TIMESTAMP(3) WHERE id = ? AND "
	    "account_id = ? AND status = ? AND want_preview = 1",
	    DB_ARGS(DBP_STR(id), DBP_STR(account),
	    DBP_STR(jobs_status_names[JOBS_AWAITING_CONFIRMATION])), NULL) !=
	    DB_OK)
		return UPLOADS_DB;
	if (db_query(db, "SELECT status, want_preview, preview, "
	    "preview_refresh = 1 AND status = ?, DATE_FORMAT("
	    "preview_refresh_at, '%Y-%m-%dT%H:%i:%sZ') FROM jobs "
	    "WHERE id = ? AND account_id = ?", DB_ARGS(
	    DBP_STR(jobs_status_names[JOBS_AWAITING_CONFIRMATION]),
	    DBP_STR(id), DBP_STR(account)), &r) != DB_OK)
		return UPLOADS_DB;
	if ((row = db_res_next(r)) == 1) {
		out->status = jobs_status_of(db_res_str(r, 0));
		wanted = (int)db_res_int(r, 1);
		out->refreshing = (int)db_res_int(r, 3);
		if (out->refreshing && db_res_str(r, 4) != NULL)
			strparse_copy(out->refresh_requested_at,
			    sizeof(out->refresh_requested_at),
			    db_res_str(r, 4));
		if (db_res_str(r, 2) != NULL &&
		    (out->preview = strdup(db_res_str(r, 2))) == NULL)
			row = -1;
	}
	db_res_free(r);
	if (row == -1)
		return UPLOADS_DB;
	if (row == 0)
		return UPLOADS_NOT_FOUND;
	if (!wanted) {
		free(out->preview);
		out->preview = NULL;
		return UPLOADS_NO_PREVIEW;
	}
	return UPLOADS_OK;
}

enum uploads_err
uploads_preview_refresh_count(struct db *db, const char *account,
    const char *id, long limit, long long *used)
{
	unsigned long long changed = 0;
	int found = 0;

	*used = 0;
	if (db_exec(db, "UPDATE jobs SET preview_refreshes = preview_refreshes "
	    "+ 1 WHERE id = ? AND account_id = ? AND want_preview = 1 AND "
	    "status = ? AND preview_refreshes < ?", DB_ARGS(DBP_STR(id),
	    DBP_STR(account),
	    DBP_STR(jobs_status_names[JOBS_AWAITING_CONFIRMATION]),
	    DBP_INT(limit)), &changed) != DB_OK)
		return UPLOADS_DB;
	if (changed == 1)
		return UPLOADS_OK;
	if (db_query_int(db, "SELECT preview_refreshes FROM jobs WHERE id = ? "
	    "AND account_id = ? AND want_preview = 1 AND status = ?",
	    DB_ARGS(DBP_STR(id), DBP_STR(account),
	    DBP_STR(jobs_status_names[JOBS_AWAITING_CONFIRMATION])), used,
	    &found) != DB_OK)
		return UPLOADS_DB;
	return found && *used >= limit ? UPLOADS_REFRESH_LIMIT : UPLOADS_OK;
}
