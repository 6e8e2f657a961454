/* ingest_fetch.c: the download of an upload job's source_url into its
 * stored file (ingest_fetch.h). One easy handle for every hop; each hop's
 * URL goes through fetch_url (the guard, https only) and each connection
 * through fetch's open-socket check; the body of the 2xx answer is
 * streamed into upload_store pieces as it comes, and the lease is renewed
 * from libcurl's progress callback, so that a slow server does not let it
 * run out. A server that trickles (under source_url_min_rate bytes a
 * second over source_url_min_rate_seconds, libcurl's low-speed limit)
 * fails the job with source_too_slow: it cannot hold the worker's one
 * ingestion thread for the whole source_url_timeout_seconds. The account's
 * stored upload files are held to account_upload_storage_mb while the file
 * comes (the API could not know its size when it accepted the job): the
 * room is read when the download starts and again with each progress
 * call, and a file that would pass it fails the job with
 * upload_storage_exceeded, nothing kept. */
#include "jobs/ingest_fetch.h"
#include "jobs/caps.h"
#include "jobs/ingest_read.h"
#include "jobs/upload_store.h"
#include "util/log.h"
#include "util/strparse.h"
#include "util/timeutil.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INGEST_FETCH_PROGRESS_MS 1000

struct ingest_fetch_ctx {
	struct db		*db;
	struct ingest_job	*job;
	const char		*owner;
	struct fetch		 f;
	struct upload_store_writer w;
	ingest_progress_fn	 progress;
	void			*arg;
	int64_t			 last_progress;
	long long		 storage_max;	/* the account's, in bytes */
	long long		 room;		/* what this file may take */
	unsigned char		 head[4];	/* the file's first bytes */
	size_t			 nhead;
	int			 db_failed;
	int			 stopped;	/* progress said -1 */
	enum ingest_fail	 fail;
	char			*message;
};

void
ingest_fetch_opts(struct fetch_opts *o, const struct conf *c)
{
	fetch_opts_from_conf(o, c, conf_int(c,
	    CONF_SOURCE_URL_TIMEOUT_SECONDS) * 1000L, UPLOAD_STORE_FILE_MAX);
	o->https_only = 1;
	o->min_rate = conf_int(c, CONF_SOURCE_URL_MIN_RATE);
	o->min_rate_seconds = conf_int(c, CONF_SOURCE_URL_MIN_RATE_SECONDS);
}

static void
ingest_fetch_failed(struct ingest_fetch_ctx *c, enum ingest_fail f,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The job's failure; the message keeps printable ASCII only (it holds
 * text from libcurl about the customer's server). */
static void
ingest_fetch_failed(struct ingest_fetch_ctx *c, enum ingest_fail f,
    const char *fmt, ...)
{
	va_list ap;
	char *p;

	c->fail = f;
	va_start(ap, fmt);
	vsnprintf(c->message, INGEST_MESSAGE_MAX, fmt, ap);
	va_end(ap);
	for (p = c->message; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
			*p = '?';
}

/* The length the server announced, as the job's file_size while the
 * download runs (/progress shows it). */
static void
ingest_fetch_announced(struct ingest_fetch_ctx *c)
{
	curl_off_t n = -1;

	if (curl_easy_getinfo(c->f.easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T,
	    &n) != CURLE_OK || n < 0)
		return;
	if (db_exec(c->db, "UPDATE jobs SET file_size = ? WHERE id = ? AND "
	    "ingest_owner = ?", DB_ARGS(DBP_INT((long long)n),
	    DBP_STR(c->job->id), DBP_STR(c->owner)), NULL) != DB_OK)
		c->db_failed = 1;
}

/* The room the account's other stored files leave this one: 0, or -1 when
 * the database failed. */
static int
ingest_fetch_room(struct ingest_fetch_ctx *c)
{
	long long others;

	if (caps_upload_bytes(c->db, c->job->account_id, c->job->id,
	    &others) != DB_OK) {
		c->db_failed = 1;
		return -1;
	}
	c->room = c->storage_max - others;
	return 0;
}

/* fetch_sink_fn: a piece of the file into the store. */
static int
ingest_fetch_piece(void *arg, const void *data, size_t len)
{
	struct ingest_fetch_ctx *c = arg;
	size_t n;

	if (c->w.size == 0)
		ingest_fetch_announced(c);
	if (c->nhead < sizeof(c->head)) {
		n = sizeof(c->head) - c->nhead < len ?
		    sizeof(c->head) - c->nhead : len;
		memcpy(c->head + c->nhead, data, n);
		c->nhead += n;
	}
	if (c->w.size + (long long)len > c->room) {
		ingest_fetch_failed(c, INGEST_FAIL_STORAGE_EXCEEDED, "the "
		    "account's stored upload files and this one would pass "
		    "%lld MiB (account_upload_storage_mb): wait for them to be "
		    "ingested or cancel some", c->storage_max >> 20);
		return -1;
	}
	if (c->db_failed || upload_store_write(&c->w, data, len) != DB_OK) {
		c->db_failed = 1;
		return -1;
	}
	return 0;
}

/* CURLOPT_XFERINFOFUNCTION: called at least once a second, bytes coming
 * or not: the lease is renewed with the bytes stored so far. */
static int
ingest_fetch_xfer(void *arg, curl_off_t dltotal, curl_off_t dlnow,
    curl_off_t ultotal, curl_off_t ulnow)
{
	struct ingest_fetch_ctx *c = arg;
	int64_t now = timeutil_mono_ms();

	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	if (now - c->last_progress < INGEST_FETCH_PROGRESS_MS)
		return 0;
	c->last_progress = now;
	if (ingest_fetch_room(c) == -1)
		return 1;
	if (c->progress != NULL && c->progress(c->arg, 0, c->w.size) == -1) {
		c->stopped = 1;
		return 1;
	}
	return 0;
}

/* The format of a URL's path by its last segment's extension, or -1. */
static int
ingest_fetch_url_format(const char *url)
{
	CURLU *u;
	char *path = NULL;
	const char *slash;
	int f = -1;

	if (url == NULL || (u = curl_url()) == NULL)
		return -1;
	if (curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_PATH, &path, 0) == CURLUE_OK) {
		slash = strrchr(path, '/');
		f = ingest_format_of_name(slash != NULL ? slash + 1 : path);
	}
	curl_free(path);
	curl_url_cleanup(u);
	return f;
}

/* The file's format (ingest_fetch.h says in which order). */
static int
ingest_fetch_format(struct ingest_fetch_ctx *c, const char *served)
{
	char *ct = NULL;
	int f;

	if ((f = ingest_fetch_url_format(served)) >= 0 ||
	    (f = ingest_fetch_url_format(c->job->source_url)) >= 0)
		return f;
	if (curl_easy_getinfo(c->f.easy, CURLINFO_CONTENT_TYPE, &ct) ==
	    CURLE_OK && (f = ingest_format_of_media_type(ct)) >= 0)
		return f;
	if (c->nhead == 4 && memcmp(c->head, "PK\003\004", 4) == 0)
		return INGEST_XLSX;
	return INGEST_CSV;
}

/* One request of the download; *next gets the redirect's target (freed
 * by the caller), else stays NULL. -1 when the download is over (failed,
 * stopped or the database failed: see c). */
static int
ingest_fetch_hop(struct ingest_fetch_ctx *c, const char *url, int hop,
    int64_t deadline, char **next)
{
	char *location = NULL;
	enum fetch_err fe;
	int64_t left = deadline - timeutil_mono_ms();
	long status = 0;
	CURLcode rc;

	*next = NULL;
	if ((fe = fetch_url(&c->f, url)) != FETCH_OK) {
		if (fe == FETCH_NOMEM)
			ingest_fetch_failed(c, INGEST_FAIL_SOURCE_UNREACHABLE,
			    "source_url could not be fetched (out of memory)");
		else if (hop == 0)
			ingest_fetch_failed(c, INGEST_FAIL_SOURCE_UNREACHABLE,
			    "source_url is not allowed: %s",
			    fetch_error_text(&c->f, fe));
		else
			ingest_fetch_failed(c, INGEST_FAIL_SOURCE_UNREACHABLE,
			    "source_url redirected to a URL that is not "
			    "allowed: %s", fetch_error_text(&c->f, fe));
		return -1;
	}
	if (left <= 0) {
		ingest_fetch_failed(c, INGEST_FAIL_SOURCE_UNREACHABLE,
		    "the download of source_url took too long");
		return -1;
	}
	if (curl_easy_setopt(c->f.easy, CURLOPT_TIMEOUT_MS, (long)left) !=
	    CURLE_OK) {
		ingest_fetch_failed(c, INGEST_FAIL_SOURCE_UNREACHABLE,
		    "source_url could not be fetched (out of memory)");
		return -1;
	}
	rc = curl_easy_perform(c->f.easy);
	fe = fetch_result(&c->f, rc, &status);
	if (c->db_failed || c->stopped || c->fail != INGEST_FAIL_NONE)
		return -1;	/* the sink's own failure is the job's */
	switch (fe) {
	case FETCH_OK:
		break;
	case FETCH_TOO_LARGE:
		ingest_fetch_failed(c, INGEST_FAIL_FILE_TOO_LARGE, "the file "
		    "at source_url is larger than %lld MB",
		    UPLOAD_STORE_FILE_MAX >> 20);
		return -1;
	case FETCH_ADDRESS_REFUSED:
		ingest_fetch_failed(c, INGEST_FAIL_SOURCE_UNREACHABLE,
		    "the host of %s resolves to a refused address",
		    hop ? "a redirect of source_url" : "source_url");
		return -1;
	case FETCH_TIMEOUT:
		ingest_fetch_failed(c, INGEST_FAIL_SOURCE_UNREACHABLE,
		    "the download of source_url took too long");
		return -1;
	case FETCH_TOO_SLOW:
		ingest_fetch_failed(c, INGEST_FAIL_SOURCE_TOO_SLOW,
		    "the download of source_url was slower than %ld bytes a "
		    "second over %ld seconds", c->f.min_rate,
		    c->f.min_rate_seconds);
		return -1;
	default:
		ingest_fetch_failed(c, INGEST_FAIL_SOURCE_UNREACHABLE,
		    "the download of source_url failed: %s (%s)",
		    fetch_err_names[fe], fetch_error_text(&c->f, fe));
		return -1;
	}
	if (status >= 200 && status <= 299)
		return 0;
	if (status != 301 && status != 302 && status != 303 &&
	    status != 307 && status != 308) {
		ingest_fetch_failed(c, INGEST_FAIL_SOURCE_UNREACHABLE,
		    "source_url answered with HTTP status %ld%s", status,
		    hop ? " after a redirect" : "");
		return -1;
	}
	if (hop >= INGEST_FETCH_REDIRECTS) {
		ingest_fetch_failed(c, INGEST_FAIL_SOURCE_UNREACHABLE,
		    "source_url redirected more than %d times",
		    INGEST_FETCH_REDIRECTS);
		return -1;
	}
	if (curl_easy_getinfo(c->f.easy, CURLINFO_REDIRECT_URL, &location) !=
	    CURLE_OK || location == NULL || location[0] == '\0') {
		ingest_fetch_failed(c, INGEST_FAIL_SOURCE_UNREACHABLE,
		    "source_url answered with HTTP status %ld and no Location",
		    status);
		return -1;
	}
	/* location is the handle's until its next transfer */
	if ((*next = strdup(location)) == NULL) {
		ingest_fetch_failed(c, INGEST_FAIL_SOURCE_UNREACHABLE,
		    "source_url could not be fetched (out of memory)");
		return -1;
	}
	return 0;
}

/* The hops, then the file's format and size into the job's row. */
static enum ingest_err
ingest_fetch_run(struct ingest_fetch_ctx *c, long timeout_ms)
{
	int64_t deadline = timeutil_mono_ms() + timeout_ms;
	char *url = NULL, *next = NULL;
	unsigned long long changed = 0;
	const char *served;
	int hop, f;

	for (hop = 0; ; hop++) {
		served = url != NULL ? url : c->job->source_url;
		if (ingest_fetch_hop(c, served, hop, deadline, &next) == -1)
			goto out;
		if (next == NULL)
			break;
		log_info("event=source_redirect job=%s hop=%d", c->job->id,
		    hop + 1);
		free(url);
		url = next;
		next = NULL;
	}
	if (upload_store_end(&c->w) != DB_OK) {
		c->db_failed = 1;
		goto out;
	}
	if (c->w.size == 0) {
		ingest_fetch_failed(c, INGEST_FAIL_NO_EMAILS,
		    "the file at source_url is empty");
		goto out;
	}
	f = ingest_fetch_format(c, served);
	if (db_exec(c->db, "UPDATE jobs SET file_format = ?, file_size = ?, "
	    "ingest_bytes = 0 WHERE id = ? AND ingest_owner = ? AND status = ?",
	    DB_ARGS(DBP_STR(ingest_format_names[f]), DBP_INT(c->w.size),
	    DBP_STR(c->job->id), DBP_STR(c->owner),
	    DBP_STR(jobs_status_names[JOBS_INGESTING])), &changed) != DB_OK) {
		c->db_failed = 1;
		goto out;
	}
	if (changed != 1) {
		c->stopped = 1;		/* cancelled, or the lease was lost */
		goto out;
	}
	strparse_copy(c->job->format, sizeof(c->job->format),
	    ingest_format_names[f]);
	c->job->file_size = c->w.size;
out:
	free(url);
	if (c->db_failed)
		return INGEST_DB;
	return c->stopped ? INGEST_STOPPED : INGEST_OK;
}

enum ingest_err
ingest_fetch(struct db *db, const struct fetch_opts *o, long long storage_max,
    struct ingest_job *j, const char *owner, ingest_progress_fn progress,
    void *arg, enum ingest_fail *fail, char message[INGEST_MESSAGE_MAX])
{
	struct ingest_fetch_ctx c;
	enum ingest_err rc;
	int bad = 0;

	memset(&c, 0, sizeof(c));
	c.db = db;
	c.job = j;
	c.owner = owner;
	c.progress = progress;
	c.arg = arg;
	c.message = message;
	c.last_progress = timeutil_mono_ms();
	c.storage_max = storage_max;
	*fail = INGEST_FAIL_NONE;
	message[0] = '\0';
	/* what an earlier attempt stored before its worker died */
	if (upload_store_delete(db, j->id) != DB_OK ||
	    ingest_fetch_room(&c) == -1)
		return INGEST_DB;
	if (fetch_init(&c.f, o) == -1)
		return INGEST_NOMEM;
	fetch_stream(&c.f, ingest_fetch_piece, &c);
	bad |= curl_easy_setopt(c.f.easy, CURLOPT_XFERINFOFUNCTION,
	    ingest_fetch_xfer) != CURLE_OK;
	bad |= curl_easy_setopt(c.f.easy, CURLOPT_XFERINFODATA, &c) !=
	    CURLE_OK;
	bad |= curl_easy_setopt(c.f.easy, CURLOPT_NOPROGRESS, 0L) != CURLE_OK;
	if (bad) {
		fetch_free(&c.f);
		return INGEST_NOMEM;
	}
	upload_store_begin(&c.w, db, j->id);
	rc = ingest_fetch_run(&c, o->timeout_ms);
	if (rc == INGEST_OK && c.fail == INGEST_FAIL_NONE) {
		log_info("event=source_fetched job=%s bytes=%lld format=%s",
		    j->id, c.w.size, j->format);
	} else {
		/* nothing of a download that did not end well is kept (the
		 * writer's pieces go; after a database failure the next
		 * attempt deletes them) */
		if (rc == INGEST_DB)
			buf_free(&c.w.pending);
		else
			upload_store_abort(&c.w);
	}
	*fail = c.fail;
	fetch_free(&c.f);
	return rc;
}
