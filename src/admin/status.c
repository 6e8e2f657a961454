/* status.c: "svcadm status". It reads what every host shares in MariaDB:
 * the schema version (and the stored routines the migrations made), the
 * jobs queued or in progress and the oldest of them, the chunks waiting or
 * leased, the workers whose heartbeat (worker_heartbeats, written by
 * svc-worker) is recent and the chunks each holds, and the event outbox
 * (events not yet fanned out, deliveries due or stuck), and how direct
 * SMTP sessions fared lately (port25.c: does port 25 look blocked?). Each
 * figure that a status_* setting limits is judged, and the whole is
 * printed as "name: value" lines or as one JSON object. */
#include "admin/status.h"
#include "admin/migrate.h"
#include "admin/port25.h"
#include "core/dbcluster.h"
#include "jobs/events.h"
#include "jobs/jobs.h"
#include "util/strparse.h"
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

const char *const status_check_names[STATUS_CHECK__MAX] = {
	[STATUS_SCHEMA] = "schema",
	[STATUS_WORKERS] = "workers",
	[STATUS_JOB_AGE] = "job_age",
	[STATUS_QUEUE] = "queue",
	[STATUS_OUTBOX] = "outbox",
	[STATUS_PORT25] = "port25",
};

/* The stored routines this build calls (sql/010_rate_permits.sql): a
 * dump made without --routines restores a database without them. */
static const char *const status_routines[] = { "ratelimit_lease" };

/* Workers listed at most (the count is exact). */
#define STATUS_WORKERS_MAX 1000

struct status_worker {
	char		 owner[101];
	char		 host[65];
	char		 mode[8];
	char		 version[33];
	long long	 pid;
	long long	 seen_ago;	/* seconds */
	long long	 leased;	/* chunks it holds now */
};

/* Pacing pairs listed at most. */
#define STATUS_PAIRS_MAX 100

/* A (provider or mail host, egress) pair that nothing is sent to now. */
struct status_pair {
	char		 pair[256];
	char		 egress[129];
	char		 reason[201];
	int		 paused;	/* 1 a block's pause, 0 a penalty */
	long long	 left;		/* seconds */
};

/* The figures; an age is -1 when there is nothing to be old. */
struct status_figures {
	long long		 version;
	/* the database: the endpoint this program uses, every endpoint */
	const char		*endpoint;
	struct dbcluster_node	 nodes[DBHOSTS_MAX];
	size_t			 nnodes;
	long long		 cluster_size;	/* the largest a node reports */
	const char		*missing_routine;	/* NULL: all there */
	long long		 jobs[JOBS_STATUS__MAX];
	long long		 oldest_job_age;
	long long		 chunks_pending, chunks_leased, chunks_expired;
	/* pending ones not claimable before a later time: greylisted
	 * addresses' retries, chunks a worker handed back for a paced pair */
	long long		 chunks_later;
	long long		 workers_seen;
	size_t			 nworkers;
	struct status_worker	*workers;
	long long		 events_undelivered, oldest_event_age;
	long long		 deliveries_waiting, deliveries_due;
	long long		 oldest_due_age;
	size_t			 npairs;
	struct status_pair	 pairs[STATUS_PAIRS_MAX];
	struct port25_figures	 port25;
	char			 port25_msg[400];
	/* the problems found: a message per failed check, "" when it
	 * passed */
	char			 problem[STATUS_CHECK__MAX][400];
};

/* The queued and running statuses, in the order they are listed. */
static const enum jobs_status status_queued[] = { JOBS_INGESTING,
    JOBS_PENDING, JOBS_PROCESSING, JOBS_AWAITING_CONFIRMATION };
#define STATUS_NQUEUED (sizeof(status_queued) / sizeof(status_queued[0]))

static enum db_err
status_routines_present(struct db *db, struct status_figures *f)
{
	enum db_err e;
	long long n;
	size_t i;
	int found;

	for (i = 0; i < sizeof(status_routines) / sizeof(status_routines[0]);
	    i++) {
		if ((e = db_query_int(db, "SELECT COUNT(*) FROM "
		    "information_schema.routines WHERE routine_schema = "
		    "DATABASE() AND routine_name = ?",
		    DB_ARGS(DBP_STR(status_routines[i])), &n, &found)) != DB_OK)
			return e;
		if (n == 0) {
			f->missing_routine = status_routines[i];
			break;
		}
	}
	return DB_OK;
}

static enum db_err
status_jobs(struct db *db, struct status_figures *f)
{
	struct db_res *r = NULL;
	enum db_err e;
	size_t i;
	int k;

	e = db_query(db, "SELECT status, COUNT(*), TIMESTAMPDIFF(SECOND, "
	    "MIN(created_at), UTC_TIMESTAMP(3)) FROM jobs WHERE status IN "
	    "(?, ?, ?, ?) GROUP BY status", DB_ARGS(
	    DBP_STR(jobs_status_names[status_queued[0]]),
	    DBP_STR(jobs_status_names[status_queued[1]]),
	    DBP_STR(jobs_status_names[status_queued[2]]),
	    DBP_STR(jobs_status_names[status_queued[3]])), &r);
	if (e != DB_OK)
		return e;
	while (db_res_next(r) == 1)
		for (k = 0; k < JOBS_STATUS__MAX; k++) {
			if (db_res_str(r, 0) == NULL ||
			    strcmp(db_res_str(r, 0), jobs_status_names[k]) != 0)
				continue;
			f->jobs[k] = db_res_int(r, 1);
			/* Waiting for the customer's confirmation is not
			 * waiting for a worker. */
			for (i = 0; i + 1 < STATUS_NQUEUED; i++)
				if (status_queued[i] == (enum jobs_status)k &&
				    db_res_int(r, 2) > f->oldest_job_age)
					f->oldest_job_age = db_res_int(r, 2);
		}
	db_res_free(r);
	return DB_OK;
}

/* The first row of a query whose columns are integers, into *out[i]; an
 * SQL NULL (an age of nothing) leaves its -1. */
static enum db_err
status_row(struct db *db, const char *sql, const struct db_param *args,
    size_t nargs, long long *const *out, size_t n)
{
	struct db_res *r = NULL;
	enum db_err e;
	size_t i;

	if ((e = db_query(db, sql, args, nargs, &r)) != DB_OK)
		return e;
	if (db_res_next(r) == 1)
		for (i = 0; i < n; i++)
			*out[i] = db_res_isnull(r, (unsigned)i) ? -1 :
			    db_res_int(r, (unsigned)i);
	db_res_free(r);
	return DB_OK;
}

static enum db_err
status_chunks(struct db *db, struct status_figures *f)
{
	long long *const out[] = { &f->chunks_pending, &f->chunks_leased,
	    &f->chunks_expired, &f->chunks_later };

	/* A cancelled or failed job's chunks are done, so every chunk not
	 * done belongs to a job a worker should finish. */
	return status_row(db, "SELECT COALESCE(SUM(state = 'pending'), 0), "
	    "COALESCE(SUM(state = 'leased'), 0), COALESCE(SUM(state = "
	    "'leased' AND lease_expires < UTC_TIMESTAMP(3)), 0), "
	    "COALESCE(SUM(state = 'pending' AND not_before > "
	    "UTC_TIMESTAMP(3)), 0) FROM job_chunks WHERE state <> 'done'",
	    DB_NOARGS, out, 4);
}

static enum db_err
status_workers(struct db *db, long window, struct status_figures *f)
{
	struct db_res *r = NULL;
	struct status_worker *w;
	enum db_err e;

	e = db_query(db, "SELECT h.owner, h.host, h.pid, h.mode, h.version, "
	    "TIMESTAMPDIFF(SECOND, h.seen_at, UTC_TIMESTAMP(3)), (SELECT "
	    "COUNT(*) FROM job_chunks c WHERE c.state = 'leased' AND "
	    "c.lease_owner = h.owner) FROM worker_heartbeats h WHERE "
	    "h.seen_at >= UTC_TIMESTAMP(3) - INTERVAL ? SECOND ORDER BY "
	    "h.host, h.pid", DB_ARGS(DBP_INT(window)), &r);
	if (e != DB_OK)
		return e;
	f->workers_seen = (long long)db_res_rows(r);
	if ((f->workers = calloc(f->workers_seen < STATUS_WORKERS_MAX ?
	    (size_t)f->workers_seen + 1 : STATUS_WORKERS_MAX,
	    sizeof(*f->workers))) == NULL) {
		db_res_free(r);
		return DB_ERR_QUERY;
	}
	while (f->nworkers < STATUS_WORKERS_MAX && db_res_next(r) == 1) {
		w = &f->workers[f->nworkers++];
		strparse_copy(w->owner, sizeof(w->owner), db_res_str(r, 0));
		strparse_copy(w->host, sizeof(w->host), db_res_str(r, 1));
		w->pid = db_res_int(r, 2);
		strparse_copy(w->mode, sizeof(w->mode), db_res_str(r, 3));
		strparse_copy(w->version, sizeof(w->version), db_res_str(r, 4));
		w->seen_ago = db_res_int(r, 5);
		w->leased = db_res_int(r, 6);
	}
	db_res_free(r);
	return DB_OK;
}

static enum db_err
status_outbox(struct db *db, struct status_figures *f)
{
	long long *const events[] = { &f->events_undelivered,
	    &f->oldest_event_age };
	long long *const deliveries[] = { &f->deliveries_waiting,
	    &f->deliveries_due, &f->oldest_due_age };
	enum db_err e;

	e = status_row(db, "SELECT COUNT(*), TIMESTAMPDIFF(SECOND, "
	    "MIN(created_at), UTC_TIMESTAMP(3)) FROM event_outbox WHERE "
	    "delivered_at IS NULL", DB_NOARGS, events, 2);
	if (e != DB_OK)
		return e;
	/* Due: a pending delivery whose time has come, or one being sent
	 * whose lease ran out (its worker died). */
	return status_row(db, "SELECT COUNT(*), COALESCE(SUM(due IS NOT "
	    "NULL), 0), TIMESTAMPDIFF(SECOND, MIN(due), UTC_TIMESTAMP(3)) "
	    "FROM (SELECT CASE WHEN state = ? AND next_attempt_at <= "
	    "UTC_TIMESTAMP(3) THEN next_attempt_at WHEN state = ? AND "
	    "lease_expires < UTC_TIMESTAMP(3) THEN lease_expires END AS due "
	    "FROM event_deliveries WHERE state IN (?, ?)) d", DB_ARGS(
	    DBP_STR(events_state_names[EVENTS_PENDING]),
	    DBP_STR(events_state_names[EVENTS_SENDING]),
	    DBP_STR(events_state_names[EVENTS_PENDING]),
	    DBP_STR(events_state_names[EVENTS_SENDING])), deliveries, 3);
}

/* Fills f->problem from the figures and the limits; returns how many
 * checks failed. */
/* Pairs paused (a block) or in a penalty ("slow down") now, the longest
 * wait first. */
static enum db_err
status_pacing(struct db *db, struct status_figures *f)
{
	struct status_pair *sp;
	struct db_res *r = NULL;
	const char *s;
	enum db_err e;

	e = db_query(db, "SELECT pair, egress, reason, "
	    "paused_until > UTC_TIMESTAMP(3), "
	    "CEIL(GREATEST(COALESCE(TIMESTAMPDIFF(MICROSECOND, "
	    "UTC_TIMESTAMP(3), paused_until), 0), COALESCE("
	    "TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(3), penalty_until), 0)) "
	    "/ 1000000) AS left_s FROM pacing_pairs WHERE paused_until > "
	    "UTC_TIMESTAMP(3) OR penalty_until > UTC_TIMESTAMP(3) "
	    "ORDER BY left_s DESC LIMIT 100", DB_NOARGS, &r);
	if (e != DB_OK)
		return e;
	while (f->npairs < STATUS_PAIRS_MAX && db_res_next(r) == 1) {
		sp = &f->pairs[f->npairs++];
		s = db_res_str(r, 0);
		snprintf(sp->pair, sizeof(sp->pair), "%s", s ? s : "");
		s = db_res_str(r, 1);
		snprintf(sp->egress, sizeof(sp->egress), "%s", s ? s : "");
		s = db_res_str(r, 2);
		snprintf(sp->reason, sizeof(sp->reason), "%s", s ? s : "");
		sp->paused = db_res_int(r, 3) != 0;
		sp->left = db_res_int(r, 4);
	}
	db_res_free(r);
	return DB_OK;
}

static int
status_judge(const struct conf *c, struct status_figures *f)
{
	long min_workers = conf_int(c, CONF_STATUS_MIN_WORKERS);
	long window = conf_int(c, CONF_STATUS_WORKER_WINDOW);
	long max_age = conf_int(c, CONF_STATUS_MAX_JOB_AGE);
	long max_queue = conf_int(c, CONF_STATUS_MAX_QUEUE);
	long max_outbox = conf_int(c, CONF_STATUS_MAX_OUTBOX_AGE);
	long long outbox_age;
	int i, n = 0;

	snprintf(f->port25_msg, sizeof(f->port25_msg), "not judged");
	if (f->version < DB_SCHEMA_VERSION)
		snprintf(f->problem[STATUS_SCHEMA], sizeof(f->problem[0]),
		    "the schema is at version %lld, this build needs %d: run "
		    "svcadm db migrate", f->version, DB_SCHEMA_VERSION);
	else {
		if (f->missing_routine != NULL)
			snprintf(f->problem[STATUS_SCHEMA],
			    sizeof(f->problem[0]), "the stored procedure %s is "
			    "missing (restored from a dump made without "
			    "--routines?)", f->missing_routine);
		if (min_workers > 0 && f->workers_seen < min_workers)
			snprintf(f->problem[STATUS_WORKERS],
			    sizeof(f->problem[0]), "%lld seen in the last "
			    "%ld s, status_min_workers is %ld",
			    f->workers_seen, window, min_workers);
		if (max_age > 0 && f->oldest_job_age > max_age)
			snprintf(f->problem[STATUS_JOB_AGE],
			    sizeof(f->problem[0]), "a job has waited %lld s, "
			    "status_max_job_age is %ld", f->oldest_job_age,
			    max_age);
		if (max_queue > 0 && f->chunks_pending > max_queue)
			snprintf(f->problem[STATUS_QUEUE],
			    sizeof(f->problem[0]), "%lld chunks waiting, "
			    "status_max_queue is %ld", f->chunks_pending,
			    max_queue);
		outbox_age = f->oldest_event_age > f->oldest_due_age ?
		    f->oldest_event_age : f->oldest_due_age;
		if (max_outbox > 0 && outbox_age > max_outbox)
			snprintf(f->problem[STATUS_OUTBOX],
			    sizeof(f->problem[0]), "an event has been due for "
			    "%lld s, status_max_outbox_age is %ld",
			    outbox_age, max_outbox);
		if (port25_blocked(&f->port25, f->port25_msg,
		    sizeof(f->port25_msg)))
			snprintf(f->problem[STATUS_PORT25],
			    sizeof(f->problem[0]), "%s", f->port25_msg);
	}
	for (i = 0; i < STATUS_CHECK__MAX; i++)
		if (f->problem[i][0] != '\0')
			n++;
	return n;
}

static json_t *
status_age(long long age)
{
	return age < 0 ? json_null() : json_integer(age);
}

static int
status_print_json(const struct conf *c, const struct status_figures *f,
    int healthy, FILE *out)
{
	json_t *o, *jobs, *workers, *problems, *pacing, *nodes;
	size_t i;
	int k, rc;

	jobs = json_object();
	for (i = 0; i < STATUS_NQUEUED; i++)
		json_object_set_new(jobs, jobs_status_names[status_queued[i]],
		    json_integer(f->jobs[status_queued[i]]));
	json_object_set_new(jobs, "oldest_age_seconds",
	    status_age(f->oldest_job_age));
	workers = json_array();
	for (i = 0; i < f->nworkers; i++)
		json_array_append_new(workers, json_pack("{s:s, s:s, s:I, s:s, "
		    "s:s, s:I, s:I}", "owner", f->workers[i].owner, "host",
		    f->workers[i].host, "pid", (json_int_t)f->workers[i].pid,
		    "mode", f->workers[i].mode, "version",
		    f->workers[i].version, "seen_seconds_ago",
		    (json_int_t)f->workers[i].seen_ago, "chunks_leased",
		    (json_int_t)f->workers[i].leased));
	pacing = json_array();
	for (i = 0; i < f->npairs; i++)
		json_array_append_new(pacing, json_pack("{s:s, s:s, s:s, s:I, "
		    "s:s}", "pair", f->pairs[i].pair, "egress",
		    f->pairs[i].egress, "state", f->pairs[i].paused ? "paused" :
		    "penalty", "seconds_left", (json_int_t)f->pairs[i].left,
		    "reason", f->pairs[i].reason));
	problems = json_array();
	for (k = 0; k < STATUS_CHECK__MAX; k++)
		if (f->problem[k][0] != '\0')
			json_array_append_new(problems, json_pack("{s:s, s:s}",
			    "check", status_check_names[k], "message",
			    f->problem[k]));
	o = json_pack("{s:b, s:{s:I, s:i}, s:o, s:{s:I, s:I, s:I, s:I}, "
	    "s:{s:I, s:I, s:o}, s:{s:I, s:o, s:I, s:I, s:o}, "
	    "s:{s:I, s:I, s:I, s:I, s:s}, "
	    "s:{s:I, s:I, s:I, s:I, s:I}, s:o}", "healthy", healthy,
	    "schema", "version", (json_int_t)f->version, "needed",
	    DB_SCHEMA_VERSION, "jobs", jobs, "chunks", "pending",
	    (json_int_t)f->chunks_pending, "later",
	    (json_int_t)f->chunks_later, "leased",
	    (json_int_t)f->chunks_leased, "lease_expired",
	    (json_int_t)f->chunks_expired, "workers", "window_seconds",
	    (json_int_t)conf_int(c, CONF_STATUS_WORKER_WINDOW), "seen",
	    (json_int_t)f->workers_seen, "list", workers, "outbox",
	    "events_undelivered", (json_int_t)f->events_undelivered,
	    "oldest_event_age_seconds", status_age(f->oldest_event_age),
	    "deliveries_waiting", (json_int_t)f->deliveries_waiting,
	    "deliveries_due", (json_int_t)f->deliveries_due,
	    "oldest_due_age_seconds", status_age(f->oldest_due_age),
	    "port25", "direct_sessions_last_hour", (json_int_t)f->port25.sessions,
	    "connected", (json_int_t)f->port25.connected, "refused",
	    (json_int_t)f->port25.refused, "timed_out",
	    (json_int_t)f->port25.timed_out, "verdict", f->port25_msg,
	    "limits", "min_workers",
	    (json_int_t)conf_int(c, CONF_STATUS_MIN_WORKERS), "worker_window",
	    (json_int_t)conf_int(c, CONF_STATUS_WORKER_WINDOW), "max_job_age",
	    (json_int_t)conf_int(c, CONF_STATUS_MAX_JOB_AGE), "max_queue",
	    (json_int_t)conf_int(c, CONF_STATUS_MAX_QUEUE), "max_outbox_age",
	    (json_int_t)conf_int(c, CONF_STATUS_MAX_OUTBOX_AGE), "problems",
	    problems);
	if (o == NULL) {
		json_decref(pacing);
		return -1;
	}
	json_object_set_new(o, "pacing", pacing);
	nodes = json_array();
	for (i = 0; i < f->nnodes; i++)
		json_array_append_new(nodes, json_pack("{s:s, s:s, s:I, s:b}",
		    "endpoint", f->nodes[i].endpoint, "state",
		    f->nodes[i].state, "cluster_size",
		    (json_int_t)f->nodes[i].cluster_size, "ready",
		    dbcluster_node_ready(&f->nodes[i])));
	json_object_set_new(o, "database", json_pack("{s:s, s:I, s:o}",
	    "endpoint", f->endpoint, "cluster_size",
	    (json_int_t)f->cluster_size, "nodes", nodes));
	rc = json_dumpf(o, out, JSON_INDENT(2)) == 0 ? 0 : -1;
	fputc('\n', out);
	json_decref(o);
	return rc;
}

static void
status_print_age(FILE *out, const char *what, long long age)
{
	if (age < 0)
		fprintf(out, "%s: none\n", what);
	else
		fprintf(out, "%s: %lld s\n", what, age);
}

static void
status_print_text(const struct conf *c, const struct status_figures *f,
    int healthy, FILE *out)
{
	const struct status_worker *w;
	size_t i;
	int k;

	fprintf(out, "status: %s\n", healthy ? "healthy" : "unhealthy");
	fprintf(out, "schema: %lld (this build needs %d)\n", f->version,
	    DB_SCHEMA_VERSION);
	fprintf(out, "database: %s (used by this program), cluster size "
	    "%lld\n", f->endpoint, f->cluster_size);
	for (i = 0; i < f->nnodes; i++)
		fprintf(out, "db node: %s: %s%s, cluster size %lld\n",
		    f->nodes[i].endpoint, f->nodes[i].state,
		    dbcluster_node_ready(&f->nodes[i]) ? "" : " (not ready)",
		    f->nodes[i].cluster_size);
	fprintf(out, "jobs:");
	for (i = 0; i < STATUS_NQUEUED; i++)
		fprintf(out, "%s %lld %s", i ? "," : "",
		    f->jobs[status_queued[i]],
		    jobs_status_names[status_queued[i]]);
	fputc('\n', out);
	status_print_age(out, "oldest job", f->oldest_job_age);
	fprintf(out, "chunks: %lld pending (%lld of them not before a later "
	    "time), %lld leased, %lld past their lease\n", f->chunks_pending,
	    f->chunks_later, f->chunks_leased, f->chunks_expired);
	fprintf(out, "workers: %lld seen in the last %ld s\n", f->workers_seen,
	    conf_int(c, CONF_STATUS_WORKER_WINDOW));
	for (i = 0; i < f->nworkers; i++) {
		w = &f->workers[i];
		fprintf(out, "worker: %s %s %s, seen %lld s ago, %lld chunks "
		    "leased\n", w->owner, w->mode, w->version, w->seen_ago,
		    w->leased);
	}
	fprintf(out, "outbox: %lld events undelivered, %lld deliveries "
	    "waiting, %lld due\n", f->events_undelivered,
	    f->deliveries_waiting, f->deliveries_due);
	status_print_age(out, "oldest undelivered event", f->oldest_event_age);
	status_print_age(out, "oldest due delivery", f->oldest_due_age);
	fprintf(out, "pacing: %zu pairs paused or slowed down\n", f->npairs);
	for (i = 0; i < f->npairs; i++)
		fprintf(out, "%s: %s from %s, %lld s left: %s\n",
		    f->pairs[i].paused ? "paused" : "penalty", f->pairs[i].pair,
		    f->pairs[i].egress, f->pairs[i].left, f->pairs[i].reason);
	fprintf(out, "port25: %s\n", f->port25_msg);
	for (k = 0; k < STATUS_CHECK__MAX; k++)
		if (f->problem[k][0] != '\0')
			fprintf(out, "problem: %s: %s\n", status_check_names[k],
			    f->problem[k]);
}

int
status_run(struct db *db, const struct conf *c, int json, FILE *out,
    struct buf *err)
{
	struct status_figures f;
	enum db_err e = DB_OK;
	int healthy, rc = -1;
	size_t i;

	memset(&f, 0, sizeof(f));
	f.oldest_job_age = f.oldest_event_age = f.oldest_due_age = -1;
	if (migrate_version(db, &f.version) == -1) {
		buf_printf(err, "%s", db_error(db));
		return -1;
	}
	/* An older schema may lack the tables read below: only the schema
	 * is judged then. */
	if (f.version >= DB_SCHEMA_VERSION &&
	    ((e = status_routines_present(db, &f)) != DB_OK ||
	    (e = status_jobs(db, &f)) != DB_OK ||
	    (e = status_chunks(db, &f)) != DB_OK ||
	    (e = status_workers(db, conf_int(c, CONF_STATUS_WORKER_WINDOW),
	    &f)) != DB_OK || (e = status_outbox(db, &f)) != DB_OK ||
	    (e = status_pacing(db, &f)) != DB_OK ||
	    (e = port25_read(db, &f.port25)) != DB_OK)) {
		buf_puts(err, db_error(db)[0] != '\0' ? db_error(db) :
		    "out of memory");
		goto out;
	}
	f.endpoint = db_endpoint(db);
	if (dbcluster_probe(c, f.nodes, DBHOSTS_MAX, &f.nnodes) == 0)
		for (i = 0; i < f.nnodes; i++)
			if (f.nodes[i].cluster_size > f.cluster_size)
				f.cluster_size = f.nodes[i].cluster_size;
	healthy = status_judge(c, &f) == 0;
	if (json) {
		if (status_print_json(c, &f, healthy, out) == -1) {
			buf_puts(err, "out of memory");
			goto out;
		}
	} else
		status_print_text(c, &f, healthy, out);
	rc = healthy ? 0 : 1;
out:
	free(f.workers);
	return rc;
}

void
status_print_failure(const char *why, int json, FILE *out)
{
	json_t *o;

	if (!json || (o = json_pack("{s:b, s:s}", "healthy", 0, "error",
	    why)) == NULL) {
		fputs("status: unhealthy\n", out);
		return;
	}
	json_dumpf(o, out, JSON_INDENT(2));
	fputc('\n', out);
	json_decref(o);
}
