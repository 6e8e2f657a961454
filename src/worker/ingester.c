/* ingester.c: upload jobs in svc-worker (ingester.h). One job at a time:
 * claim (a lease like a chunk's, renewed while the file is downloaded and
 * read), download a source_url into the stored file, read the file, write
 * the rows with the job's next state, and for a preview
 * job compute the preview from the addresses just read (or, for a
 * refresh, from the job's rows). Failures of the file are the job's
 * (failed, with the spec's code); failures of the database leave the
 * job to its lease, for this or another worker to take up again. Jobs
 * are claimed round robin across accounts (ingest_claim, jobs/ingest.c
 * says how), so one account's many uploads, slow downloads or preview
 * refreshes do not hold up another account's upload behind all of them;
 * each claim is logged (event=ingest_claimed) with the job's account. */
#include "worker/ingester.h"
#include "jobs/ingest.h"
#include "jobs/ingest_fetch.h"
#include "util/buf.h"
#include "util/log.h"
#include "util/strparse.h"
#include "util/timeutil.h"
#include "util/wake.h"
#include "worker/previewer.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define INGESTER_RETRY_SECONDS 60	/* between failed engine starts */

struct ingester {
	const struct conf	*conf;
	char			 owner[100];
	pthread_t		 thread;
	volatile sig_atomic_t	 stop;
};

/* Work stopped: by the worker stopping (the lease is given back, for
 * another worker to take up at once), or because the job is no longer
 * this owner's. */
static void
ingester_stopped(struct db *db, const struct ingest_job *j, const char *owner,
    volatile sig_atomic_t *stop)
{
	log_warn("event=ingest_stopped job=%s reason=%s", j->id,
	    *stop ? "stopping" : "lease");
	if (*stop)
		ingest_release(db, j, owner);
}

struct ingester_progress {
	struct db		*db;
	const struct ingest_job	*job;
	const char		*owner;
	long			 lease;
	volatile sig_atomic_t	*stop;
};

/* About once a second while a file is downloaded or read: -1 stops the
 * work when the worker is stopping or the job is no longer this owner's. */
static int
ingester_progress(void *arg, unsigned long long rows, long long bytes)
{
	struct ingester_progress *p = arg;

	if (*p->stop)
		return -1;
	return ingest_renew(p->db, p->job, p->owner, p->lease,
	    (long long)rows, bytes);
}

/* A source_url not downloaded yet: into the stored file (j->format set).
 * 1 when the job is to be read, 0 when it failed or stopped, -1 when the
 * database failed. */
static int
ingester_fetch(const struct conf *c, struct db *db, struct ingest_job *j,
    const char *owner, struct ingester_progress *pr)
{
	struct fetch_opts o;
	enum ingest_fail fail;
	char msg[INGEST_MESSAGE_MAX];
	enum ingest_err rc;

	log_info("event=source_fetch_started job=%s", j->id);
	ingest_fetch_opts(&o, c);
	rc = ingest_fetch(db, &o, (long long)conf_int(c,
	    CONF_ACCOUNT_UPLOAD_STORAGE_MB) << 20, j, owner, ingester_progress,
	    pr, &fail, msg);
	if (rc == INGEST_STOPPED) {
		ingester_stopped(db, j, owner, pr->stop);
		return 0;
	}
	if (rc != INGEST_OK)
		return -1;
	if (fail != INGEST_FAIL_NONE) {
		ingest_fail(db, j, fail, msg);
		return 0;
	}
	return 1;
}

/* The addresses of a job already ingested (a preview refresh): its rows
 * in order, into l (strings in one result set, kept in *res). */
static int
ingester_load_rows(struct db *db, const char *id, struct previewer_list *l,
    struct db_res **res)
{
	size_t n, i = 0;
	long long dups = 0;
	int found, row;

	memset(l, 0, sizeof(*l));
	if (db_query_int(db, "SELECT duplicates_removed FROM jobs WHERE "
	    "id = ?", DB_ARGS(DBP_STR(id)), &dups, &found) != DB_OK ||
	    db_query(db, "SELECT email, domain FROM job_emails WHERE "
	    "job_id = ? ORDER BY seq", DB_ARGS(DBP_STR(id)), res) != DB_OK)
		return -1;
	n = (size_t)db_res_rows(*res);
	if ((l->emails = calloc(n ? n : 1, sizeof(char *))) == NULL ||
	    (l->domains = calloc(n ? n : 1, sizeof(char *))) == NULL)
		return -1;
	while (i < n && (row = db_res_next(*res)) == 1) {
		/* db_res rows are not kept once the next is read: copy */
		l->emails[i] = strdup(db_res_str(*res, 0));
		l->domains[i] = strdup(db_res_str(*res, 1) ?
		    db_res_str(*res, 1) : "");
		if (l->emails[i] == NULL || l->domains[i] == NULL)
			return -1;
		i++;
	}
	l->n = i;
	l->duplicates = dups;
	return 0;
}

static void
ingester_rows_free(struct previewer_list *l, struct db_res *res)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->emails[i]);
		free(l->domains[i]);
	}
	free(l->emails);
	free(l->domains);
	db_res_free(res);
}

/* The job's lease over the preview's whole budget; -1 when the job is
 * no longer this worker's (the preview is skipped). */
static int
ingester_preview_lease(const struct conf *c, struct db *db,
    const struct ingest_job *j, const char *owner)
{
	if (ingest_renew(db, j, owner, conf_int(c, CONF_WORKER_LEASE_SECONDS) +
	    conf_int(c, CONF_PREVIEW_BUDGET_SECONDS), -1, -1) == -1) {
		log_warn("event=preview_skipped job=%s reason=lease", j->id);
		return -1;
	}
	return 0;
}

/* A preview computed (NULL: the database failed), stored; frees it. */
static int
ingester_preview_store(struct db *db, const struct ingest_job *j,
    const char *owner, char *preview, size_t n)
{
	int rc;

	if (preview == NULL)
		return -1;
	rc = ingest_preview_done(db, j, owner, preview);
	free(preview);
	if (rc == 0)
		log_info("event=preview_ready job=%s addresses=%zu", j->id, n);
	return rc;
}

/* The preview of a job from its addresses, stored (a refresh). */
static int
ingester_preview(const struct conf *c, struct db *db,
    struct verify_engine *e, const struct ingest_job *j, const char *owner,
    const struct previewer_list *l)
{
	if (ingester_preview_lease(c, db, j, owner) == -1)
		return 0;
	return ingester_preview_store(db, j, owner,
	    previewer_run(c, e, db, j->account_id, l), l->n);
}

/* A new upload's preview, computed by a thread of its own with a database
 * connection of its own while this one writes the rows: the DNS lookups
 * and the SMTP sample need not wait for the rows' transaction (the two
 * took about as long each for a 50 MB file), and touch none of its rows.
 * Without a second connection the preview follows the write. */
struct ingester_beside {
	const struct conf		*conf;
	struct verify_engine		*e;
	struct db			*db;
	const char			*account;
	const struct previewer_list	*l;
	char				*preview;
	pthread_t			 thread;
	int				 running;
};

static void *
ingester_beside_main(void *arg)
{
	struct ingester_beside *b = arg;

	b->preview = previewer_run(b->conf, b->e, b->db, b->account, b->l);
	return NULL;
}

static void
ingester_beside_start(struct ingester_beside *b)
{
	struct buf err;

	buf_init(&err, 512);
	if (db_open(b->conf, 1, &b->db, &err) != DB_OK)
		log_warn("event=preview_after_write error=\"%s\"",
		    buf_str(&err));
	else if (pthread_create(&b->thread, NULL, ingester_beside_main,
	    b) != 0)
		log_warn("event=preview_after_write error=\"no thread\"");
	else
		b->running = 1;
	buf_free(&err);
}

/* The preview, waited for (the caller frees it); NULL when it failed or
 * none was started. */
static char *
ingester_beside_end(struct ingester_beside *b)
{
	char *preview;

	if (b->running)
		pthread_join(b->thread, NULL);
	preview = b->preview;
	b->running = 0;
	b->preview = NULL;
	db_close(b->db);
	b->db = NULL;
	return preview;
}

/* One claimed job; -1 when the database failed. */
static int
ingester_job(const struct conf *c, struct db *db, struct verify_engine *e,
    const char *owner, struct ingest_job *j, volatile sig_atomic_t *stop)
{
	struct ingester_progress pr = { db, j, owner,
	    conf_int(c, CONF_WORKER_LEASE_SECONDS), stop };
	struct previewer_list l;
	struct ingest_read r;
	struct db_res *res = NULL;
	enum ingest_fail fail;
	enum ingest_err rc;
	struct ingester_beside b = { .conf = c, .e = e,
	    .account = j->account_id, .l = &l };
	int64_t t0, t1;
	int ret = 0, want = 0;

	if (j->refresh) {
		if (ingester_load_rows(db, j->id, &l, &res) == 0)
			ret = ingester_preview(c, db, e, j, owner, &l);
		else
			ret = -1;
		ingester_rows_free(&l, res);
		return ret;
	}
	if (j->format[0] == '\0' && j->source_url[0] != '\0' &&
	    (ret = ingester_fetch(c, db, j, owner, &pr)) != 1)
		return ret;
	ret = 0;
	log_info("event=ingest_started job=%s format=%s bytes=%lld", j->id,
	    j->format, j->file_size);
	t0 = timeutil_mono_ms();
	rc = ingest_read_file(db, j, &r, ingester_progress, &pr);
	t1 = timeutil_mono_ms();
	if (rc == INGEST_STOPPED) {
		ingester_stopped(db, j, owner, stop);
		goto out;
	}
	if (rc != INGEST_OK) {
		ret = -1;
		goto out;
	}
	if (r.fail != INGEST_FAIL_NONE) {
		ingest_fail(db, j, r.fail, r.message);
		goto out;
	}
	l.emails = r.in.emails;
	l.domains = r.in.domains;
	l.n = r.in.n;
	l.duplicates = (long long)r.in.duplicates;
	want = j->want_preview && ingester_preview_lease(c, db, j, owner) == 0;
	if (want)
		ingester_beside_start(&b);
	if (ingest_write(db, j, owner, &r, &fail) == -1) {
		ret = -1;
		goto out;
	}
	if (fail == INGEST_FAIL_INSUFFICIENT_CREDITS) {
		char msg[INGEST_MESSAGE_MAX];

		snprintf(msg, sizeof(msg), "the job needs %lld credits (one per "
		    "unique address) and the balance is short of that",
		    jobs_input_cost(&r.in, 0));
		ingest_fail(db, j, fail, msg);
		goto out;
	}
	log_info("event=ingest_done job=%s rows=%llu addresses=%zu "
	    "duplicates=%zu preview=%d read_ms=%lld write_ms=%lld", j->id,
	    r.rows, r.in.n, r.in.duplicates, j->want_preview,
	    (long long)(t1 - t0), (long long)(timeutil_mono_ms() - t1));
	if (want)
		ret = ingester_preview_store(db, j, owner, b.running ?
		    ingester_beside_end(&b) : previewer_run(c, e, db,
		    j->account_id, &l), l.n);
out:
	free(ingester_beside_end(&b));
	ingest_read_free(&r);
	return ret;
}

int
ingester_run_pending(const struct conf *c, struct db *db,
    struct verify_engine *e, const char *owner, int max,
    volatile sig_atomic_t *stop)
{
	struct ingest_job j;
	int n = 0, got;

	while (!*stop && (max == 0 || n < max)) {
		got = ingest_claim(db, owner, conf_int(c,
		    CONF_WORKER_LEASE_SECONDS), &j);
		if (got == 0)
			break;
		if (got == 1)
			log_info("event=ingest_claimed job=%s account=%s "
			    "refresh=%d", j.id, j.account_id, j.refresh);
		if (got == -1 || ingester_job(c, db, e, owner, &j, stop) ==
		    -1) {
			log_error("event=ingester_db_error error=\"%s\"",
			    db_error(db));
			return -1;
		}
		n++;
	}
	return n;
}

/* The thread: connect, make the engine, run what waits, sleep until
 * worker_poll_interval has passed or svc-api wakes it (an upload came). */
static void *
ingester_main(void *arg)
{
	struct ingester *g = arg;
	struct verify_engine *e = NULL;
	struct db *db = NULL;
	struct wake *w = NULL;
	struct buf err;
	time_t tried = 0;
	long left, slice;

	buf_init(&err, 1024);
	if (*conf_str(g->conf, CONF_WORKER_WAKE_DIR) != '\0' &&
	    (w = wake_listen(conf_str(g->conf, CONF_WORKER_WAKE_DIR),
	    WAKE_UPLOADS, &err)) == NULL)
		log_warn("event=wake_unavailable what=uploads error=\"%s\"",
		    buf_str(&err));
	while (!g->stop) {
		buf_reset(&err);
		if (db == NULL && db_open(g->conf, 1, &db, &err) != DB_OK)
			log_error("event=ingester_db_unavailable error=\"%s\"",
			    buf_str(&err));
		if (e == NULL && db != NULL && time(NULL) - tried >=
		    INGESTER_RETRY_SECONDS) {
			tried = time(NULL);
			if ((e = verify_engine_new(g->conf, &err)) == NULL)
				log_error("event=ingester_engine_unavailable "
				    "error=\"%s\"", buf_str(&err));
		}
		if (db != NULL && e != NULL && ingester_run_pending(g->conf,
		    db, e, g->owner, 0, &g->stop) == -1) {
			db_close(db);
			db = NULL;
		}
		/* in slices of a second, so that a stop is seen soon */
		left = conf_int(g->conf, CONF_WORKER_POLL_INTERVAL) * 1000;
		for (; !g->stop && left > 0; left -= slice) {
			slice = left > 1000 ? 1000 : left;
			if (w == NULL)
				sleep((unsigned)(slice / 1000));
			else if (wake_wait(w, (int)slice))
				break;
		}
	}
	wake_close(w);
	verify_engine_free(e);
	db_close(db);
	buf_free(&err);
	return NULL;
}

struct ingester *
ingester_start(const struct conf *c, const char *owner)
{
	struct ingester *g;

	if ((g = calloc(1, sizeof(*g))) == NULL)
		return NULL;
	g->conf = c;
	snprintf(g->owner, sizeof(g->owner), "%s:ingest", owner);
	if (pthread_create(&g->thread, NULL, ingester_main, g) != 0) {
		free(g);
		return NULL;
	}
	return g;
}

void
ingester_stop(struct ingester *g)
{
	if (g == NULL)
		return;
	g->stop = 1;
	pthread_join(g->thread, NULL);
	free(g);
}
