/* handler_jobs.c: the job endpoints: GET /v1/jobs, GET /v1/jobs/{id},
 * /progress, /results, /download (CSV, streamed), DELETE /v1/jobs/{id}
 * (cancel), DELETE /v1/jobs/{id}/data (erase now: retention.h), and
 * GET /v1/verify/batch/{id}. Another account's job is 404; the results of
 * a job whose data was erased are 410 job_data_erased. */
#include "api/api.h"
#include "jobs/jobs.h"
#include "util/strparse.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RESULTS_LIMIT_MAX 1000
#define DOWNLOAD_PAGE 5000

static json_t *
handler_jobs_opt(const char *s)
{
	return s && *s ? json_string(s) : json_null();
}

static json_t *
handler_jobs_download_url(struct api_call *c, const struct jobs_row *j)
{
	char url[1024];

	if (j->status != JOBS_COMPLETED || j->data_erased_at[0])
		return json_null();
	snprintf(url, sizeof(url), "%s/v1/jobs/%s/download",
	    conf_str(c->ctx->conf, CONF_BASE_URL), j->id);
	return json_string(url);
}

/* Stored JSON text as a value (null if it does not parse). */
static json_t *
handler_jobs_json_or_null(const char *text)
{
	json_t *v = json_loads(text, 0, NULL);

	return v ? v : json_null();
}

/* The retention fields of a job object. */
static void
handler_jobs_retention(json_t *o, const struct jobs_row *j)
{
	json_object_set_new(o, "retention_days", j->retention_days > 0 ?
	    json_integer(j->retention_days) : json_null());
	json_object_set_new(o, "data_expires_at",
	    handler_jobs_opt(j->data_expires_at));
	json_object_set_new(o, "data_erased_at",
	    handler_jobs_opt(j->data_erased_at));
}

/* 410 for a job whose data was erased: 0, or -1 (answered). */
static int
handler_jobs_erased(struct api_call *c, const struct jobs_row *j)
{
	if (!j->data_erased_at[0])
		return 0;
	http_error(c->resp, 410, "job_data_erased", json_pack("{s:s}",
	    "data_erased_at", j->data_erased_at), "the data of job %s was "
	    "erased at %s; only its counts remain", j->id, j->data_erased_at);
	return -1;
}

static json_t *
handler_jobs_record(struct api_call *c, const struct jobs_row *j)
{
	json_t *counts = json_object(), *o;
	int i;

	for (i = 0; i < 6; i++)
		json_object_set_new(counts, jobs_count_names[i],
		    json_integer(j->counts[i]));
	o = json_pack("{s:s,s:s,s:s,s:s,s:I,s:I,s:I,s:o,s:I,s:I,s:s,s:o,"
	    "s:o,s:o,s:o,s:o}",
	    "job_id", j->id, "type", jobs_type_names[j->type], "name", j->name,
	    "status", jobs_status_names[j->status],
	    "total_emails", (json_int_t)j->total,
	    "processed_emails", (json_int_t)j->processed,
	    "duplicates_removed", (json_int_t)j->duplicates,
	    "counts", counts, "credits_charged", (json_int_t)j->charged,
	    "credits_refunded", (json_int_t)j->refunded,
	    "created_at", j->created_at,
	    "started_at", handler_jobs_opt(j->started_at),
	    "completed_at", handler_jobs_opt(j->completed_at),
	    "error", j->error_code[0] ? json_pack("{s:s,s:s}", "code",
	    j->error_code, "message", j->error_message) : json_null(),
	    "preview", j->preview ? handler_jobs_json_or_null(j->preview) :
	    json_null(), "download_url", handler_jobs_download_url(c, j));
	if (o != NULL)
		handler_jobs_retention(o, j);
	return o;
}

/* Loads the caller's job named in the path; 404 or 500 answered. */
static int
handler_jobs_load(struct api_call *c, struct jobs_row *j)
{
	switch (jobs_get(c->ctx->db, c->key.account_id, c->params[0], j)) {
	case JOBS_OK:
		return 0;
	case JOBS_NOT_FOUND:
		http_error(c->resp, 404, "not_found", NULL, "no job %s",
		    c->params[0]);
		return -1;
	default:
		api_internal_error(c, "jobs_get");
		return -1;
	}
}

/* A query parameter that must be one of names[] (NULL-terminated). */
static int
handler_jobs_query_enum(struct api_call *c, const char *name,
    const char *const *names, struct buf *out)
{
	size_t i;

	if (http_query_get(c->req->query, name, out) == -1 || out->len == 0) {
		buf_reset(out);
		return 0;
	}
	for (i = 0; names[i]; i++)
		if (strcmp(buf_str(out), names[i]) == 0)
			return 0;
	api_bad_field(c, name, "\"%s\" is not a valid value", buf_str(out));
	return -1;
}

struct handler_jobs_list_ctx {
	struct api_call	*c;
	json_t		*data;
};

static int
handler_jobs_list_one(void *arg, const struct jobs_row *j)
{
	struct handler_jobs_list_ctx *l = arg;

	json_array_append_new(l->data, handler_jobs_record(l->c, j));
	return 0;
}

void
handler_jobs_list(struct api_call *c)
{
	static const char *const statuses[] = { "ingesting",
	    "awaiting_confirmation", "pending", "processing", "completed",
	    "failed", "cancelled", NULL };
	static const char *const types[] = { "bulk", "upload", "batch", NULL };
	struct handler_jobs_list_ctx l = { c, NULL };
	struct buf status, type;
	long page, limit;
	long long total = 0;

	buf_init(&status, 64);
	buf_init(&type, 64);
	if (handler_jobs_query_enum(c, "status", statuses, &status) == -1 ||
	    handler_jobs_query_enum(c, "type", types, &type) == -1 ||
	    api_query_long(c, "page", 1, 1000000, 1, &page) == -1 ||
	    api_query_long(c, "limit", 1, 100, 20, &limit) == -1)
		goto out;
	l.data = json_array();
	if (jobs_list(c->ctx->db, c->key.account_id, status.len ?
	    buf_str(&status) : NULL, type.len ? buf_str(&type) : NULL, page,
	    limit, &total, handler_jobs_list_one, &l) != JOBS_OK) {
		json_decref(l.data);
		api_internal_error(c, "jobs_list");
		goto out;
	}
	http_json(c->resp, 200, json_pack("{s:o,s:i,s:i,s:I}", "data", l.data,
	    "page", (int)page, "limit", (int)limit, "total", (json_int_t)total));
out:
	buf_free(&status);
	buf_free(&type);
}

void
handler_jobs_get(struct api_call *c)
{
	struct jobs_row j;

	if (handler_jobs_load(c, &j) == -1)
		return;
	http_json(c->resp, 200, handler_jobs_record(c, &j));
	jobs_row_free(&j);
}

void
handler_jobs_progress(struct api_call *c)
{
	struct jobs_row j;
	double rate = 0, minutes;
	json_t *eta = json_null(), *o;

	if (handler_jobs_load(c, &j) == -1)
		return;
	minutes = j.seconds_running / 60.0;
	if (j.processed > 0 && minutes > 0)
		rate = (double)j.processed / minutes;
	/* null while unknown, and once the job has ended (nothing is left
	 * to wait for: no time, not 0 of it) */
	if (rate > 0 && (j.status == JOBS_PROCESSING ||
	    j.status == JOBS_PENDING))
		eta = json_integer((json_int_t)((double)(j.total - j.processed)
		    / rate * 60.0 + 0.5));
	o = json_pack("{s:s,s:s,s:I,s:I,s:i,s:{s:I,s:I,s:I,s:I},s:i,s:o}",
	    "job_id", j.id, "status", jobs_status_names[j.status],
	    "total_emails", (json_int_t)j.total,
	    "processed_emails", (json_int_t)j.processed,
	    "percent", j.total ? (int)(j.processed * 100 / j.total) : 0,
	    "counts_by_status",
	    "deliverable", (json_int_t)j.counts[0],
	    "undeliverable", (json_int_t)(j.counts[1] + j.counts[4]),
	    "risky", (json_int_t)j.counts[2],
	    "unknown", (json_int_t)(j.counts[3] + j.counts[5]),
	    "rate_per_minute", (int)(rate + 0.5), "eta_seconds", eta);
	/* An upload being read: rows and bytes so far (the spec's progress
	 * while ingesting); a source_url being downloaded: the bytes come so
	 * far of the length announced (0: none). */
	if (j.type == JOBS_TYPE_UPLOAD && j.status == JOBS_INGESTING)
		json_object_set_new(o, "ingestion", json_pack("{s:s,s:I,s:I,s:I,"
		    "s:i}", "phase", j.downloading ? "downloading" : "reading",
		    "rows_read", (json_int_t)j.ingest_rows,
		    "bytes_read", (json_int_t)j.ingest_bytes,
		    "bytes_total", (json_int_t)j.file_size, "percent",
		    j.file_size > 0 ? (int)(j.ingest_bytes * 100 /
		    j.file_size) : 0));
	http_json(c->resp, 200, o);
	jobs_row_free(&j);
}

#define RESULT_COLUMNS \
	"email, classification, status, reason, sub_status, score, free, " \
	"role, disposable, accept_all, catch_all_verdict, " \
	"DATE_FORMAT(verified_at, '%Y-%m-%dT%H:%i:%sZ'), suppressed, " \
	"provider, COALESCE(score_basis, 'rules')"

static const char *
handler_jobs_yes_no(const struct db_res *r, unsigned col)
{
	return db_res_int(r, col) ? "yes" : "no";
}

void
handler_jobs_results(struct api_call *c)
{
	static const char *const classes[] = { "valid", "invalid", "risky",
	    "catch_all", "disposable", "unknown", NULL };
	struct jobs_row j;
	struct db_res *r;
	struct buf cls;
	long page, limit;
	long long total = 0;
	json_t *rows;
	int found, row;

	buf_init(&cls, 64);
	if (handler_jobs_query_enum(c, "classification", classes, &cls) == -1 ||
	    api_query_long(c, "page", 1, 100000000, 1, &page) == -1 ||
	    api_query_long(c, "limit", 1, RESULTS_LIMIT_MAX, 100,
	    &limit) == -1 || handler_jobs_load(c, &j) == -1)
		goto out;
	jobs_row_free(&j);
	if (handler_jobs_erased(c, &j) == -1)
		goto out;
	if (db_query_int(c->ctx->db, "SELECT COUNT(*) FROM job_emails WHERE "
	    "job_id = ? AND state = 'done' AND (? IS NULL OR classification = "
	    "?)", DB_ARGS(DBP_STR(j.id), DBP_STR(cls.len ? buf_str(&cls) :
	    NULL), DBP_STR(cls.len ? buf_str(&cls) : NULL)), &total, &found) !=
	    DB_OK || db_query(c->ctx->db, "SELECT " RESULT_COLUMNS " FROM "
	    "job_emails WHERE job_id = ? AND state = 'done' AND (? IS NULL OR "
	    "classification = ?) ORDER BY seq LIMIT ? OFFSET ?",
	    DB_ARGS(DBP_STR(j.id), DBP_STR(cls.len ? buf_str(&cls) : NULL),
	    DBP_STR(cls.len ? buf_str(&cls) : NULL), DBP_INT(limit),
	    DBP_INT((page - 1) * limit)), &r) != DB_OK) {
		api_internal_error(c, "jobs_results");
		goto out;
	}
	rows = json_array();
	while ((row = db_res_next(r)) == 1)
		json_array_append_new(rows, json_pack("{s:s,s:s,s:s,s:s,s:o,"
		    "s:i,s:s,s:s,s:s,s:s,s:s,s:o,s:o,s:s,s:o}",
		    "email", db_res_str(r, 0), "classification",
		    db_res_str(r, 1), "status", db_res_str(r, 2),
		    "reason", db_res_str(r, 3), "sub_status",
		    handler_jobs_opt(db_res_str(r, 4)),
		    "score", (int)db_res_int(r, 5),
		    "score_basis", db_res_str(r, 14),
		    "free", handler_jobs_yes_no(r, 6),
		    "role", handler_jobs_yes_no(r, 7),
		    "disposable", handler_jobs_yes_no(r, 8),
		    "accept_all", handler_jobs_yes_no(r, 9),
		    "catch_all_verdict", handler_jobs_opt(db_res_str(r, 10)),
		    "verified_at", handler_jobs_opt(db_res_str(r, 11)),
		    "suppressed", handler_jobs_yes_no(r, 12),
		    "provider", handler_jobs_opt(db_res_str(r, 13))));
	db_res_free(r);
	if (row == -1) {
		json_decref(rows);
		api_internal_error(c, "jobs_results");
		goto out;
	}
	http_json(c->resp, 200, json_pack("{s:s,s:i,s:i,s:I,s:o}", "job_id",
	    j.id, "page", (int)page, "limit", (int)limit, "total",
	    (json_int_t)total, "results", rows));
out:
	buf_free(&cls);
}

/* ---------------------------------------------------------------- CSV */

struct handler_jobs_csv {
	struct db	*db;
	char		 id[IDS_MAX];
	char		 filter[32];
	json_t		*header;	/* include_original: the columns */
};

static void
handler_jobs_csv_free(void *arg)
{
	struct handler_jobs_csv *d = arg;

	json_decref(d->header);
	free(d);
}

/* RFC 4180: a field with a comma, quote, CR or LF is quoted, quotes
 * doubled. A cell that a spreadsheet would run as a formula (it starts with
 * =, +, -, @, tab or CR) gets a leading ' (OWASP's advice on CSV
 * injection): the address "=HYPERLINK(...)" stays text. */
static void
handler_jobs_csv_field(struct buf *b, const char *s, int last)
{
	const char *p;
	int formula;

	if (s == NULL)
		s = "";
	formula = *s != '\0' && strchr("=+-@\t\r", *s) != NULL;
	if (strpbrk(s, ",\"\r\n") == NULL) {
		if (formula)
			buf_putc(b, '\'');
		buf_puts(b, s);
	} else {
		buf_putc(b, '"');
		if (formula)
			buf_putc(b, '\'');
		for (p = s; *p; p++) {
			if (*p == '"')
				buf_putc(b, '"');
			buf_putc(b, *p);
		}
		buf_putc(b, '"');
	}
	buf_puts(b, last ? "\r\n" : ",");
}

/* An upload's original cells (stored as a JSON array), padded to the
 * header's width, each followed by a comma. */
static void
handler_jobs_csv_original(struct buf *b, const char *text, size_t width)
{
	json_t *a = text ? json_loads(text, 0, NULL) : NULL;
	size_t i;

	for (i = 0; i < width; i++)
		handler_jobs_csv_field(b, json_string_value(json_array_get(a,
		    i)), 0);
	json_decref(a);
}

static int
handler_jobs_csv_stream(void *arg, http_write_fn w, void *io)
{
	struct handler_jobs_csv *d = arg;
	const char *f = d->filter[0] ? d->filter : NULL;
	struct db_res *r;
	struct buf b;
	long long after = -1, n;
	int row, rc = 0;
	char score[8];
	size_t i;

	buf_init(&b, BUF_NOMAX);
	if (d->header != NULL)
		for (i = 0; i < json_array_size(d->header); i++)
			handler_jobs_csv_field(&b, json_string_value(
			    json_array_get(d->header, i)), 0);
	else
		buf_puts(&b, "email,");
	buf_puts(&b, "svc_status,svc_classification,svc_sub_status,"
	    "svc_reason,svc_score,svc_free,svc_role,svc_disposable,"
	    "svc_accept_all,svc_catch_all_verdict,svc_verified_at,"
	    "svc_provider,svc_score_basis\r\n");
	do {
		/* Keyset pagination by seq: each page is one short query. */
		if (db_query(d->db, "SELECT seq, " RESULT_COLUMNS ", original FROM "
		    "job_emails WHERE job_id = ? AND seq > ? AND state = 'done' "
		    "AND (? IS NULL OR (? = 'send_safe' AND (status = "
		    "'deliverable' OR (classification = 'catch_all' AND "
		    "catch_all_verdict = 'send_safe'))) OR status = ?) "
		    "ORDER BY seq LIMIT ?", DB_ARGS(DBP_STR(d->id),
		    DBP_INT(after), DBP_STR(f), DBP_STR(f), DBP_STR(f),
		    DBP_INT(DOWNLOAD_PAGE)), &r) != DB_OK) {
			rc = -1;
			break;
		}
		n = 0;
		while ((row = db_res_next(r)) == 1) {
			after = db_res_int(r, 0);
			n++;
			if (d->header != NULL)
				handler_jobs_csv_original(&b, db_res_str(r, 16),
				    json_array_size(d->header));
			else
				handler_jobs_csv_field(&b, db_res_str(r, 1), 0);
			handler_jobs_csv_field(&b, db_res_str(r, 3), 0);
			handler_jobs_csv_field(&b, db_res_str(r, 2), 0);
			handler_jobs_csv_field(&b, db_res_str(r, 5), 0);
			handler_jobs_csv_field(&b, db_res_str(r, 4), 0);
			snprintf(score, sizeof(score), "%lld", db_res_int(r, 6));
			handler_jobs_csv_field(&b, score, 0);
			handler_jobs_csv_field(&b,
			    handler_jobs_yes_no(r, 7), 0);
			handler_jobs_csv_field(&b,
			    handler_jobs_yes_no(r, 8), 0);
			handler_jobs_csv_field(&b,
			    handler_jobs_yes_no(r, 9), 0);
			handler_jobs_csv_field(&b,
			    handler_jobs_yes_no(r, 10), 0);
			handler_jobs_csv_field(&b, db_res_str(r, 11), 0);
			handler_jobs_csv_field(&b, db_res_str(r, 12), 0);
			handler_jobs_csv_field(&b, db_res_str(r, 14), 0);
			handler_jobs_csv_field(&b, db_res_str(r, 15), 1);
			if (b.len > 256 * 1024) {
				if (w(io, b.data, b.len) == -1)
					rc = -1;
				buf_reset(&b);
			}
		}
		db_res_free(r);
		if (row == -1)
			rc = -1;
	} while (rc == 0 && n == DOWNLOAD_PAGE);
	if (rc == 0 && b.len && w(io, b.data, b.len) == -1)
		rc = -1;
	buf_free(&b);
	return rc;
}

void
handler_jobs_download(struct api_call *c)
{
	static const char *const filters[] = { "deliverable", "undeliverable",
	    "risky", "unknown", "send_safe", NULL };
	static const char *const formats[] = { "csv", NULL };
	static const char *const bools[] = { "true", "false", NULL };
	struct handler_jobs_csv *d;
	struct jobs_row j;
	struct buf filter, format, orig;
	char disp[IDS_MAX + 64];
	int original;

	buf_init(&filter, 64);
	buf_init(&format, 64);
	buf_init(&orig, 64);
	if (handler_jobs_query_enum(c, "filter", filters, &filter) == -1 ||
	    handler_jobs_query_enum(c, "format", formats, &format) == -1 ||
	    handler_jobs_query_enum(c, "include_original", bools, &orig) ==
	    -1 || handler_jobs_load(c, &j) == -1)
		goto out;
	if (handler_jobs_erased(c, &j) == -1) {
		jobs_row_free(&j);
		goto out;
	}
	original = strcmp(buf_str(&orig), "true") == 0;
	if (original && j.type != JOBS_TYPE_UPLOAD) {
		api_bad_field(c, "include_original", "only an upload job has "
		    "original columns; job %s is a %s job", j.id,
		    jobs_type_names[j.type]);
		jobs_row_free(&j);
		goto out;
	}
	if (j.status != JOBS_COMPLETED) {
		http_error(c->resp, 409, "job_not_completed", json_pack("{s:s}",
		    "status", jobs_status_names[j.status]),
		    "job %s is %s; its results can be downloaded once it is "
		    "completed", j.id, jobs_status_names[j.status]);
		jobs_row_free(&j);
		goto out;
	}
	if ((d = calloc(1, sizeof(*d))) == NULL) {
		jobs_row_free(&j);
		api_internal_error(c, "download");
		goto out;
	}
	d->db = c->ctx->db;
	memcpy(d->id, j.id, sizeof(d->id));
	snprintf(d->filter, sizeof(d->filter), "%s", buf_str(&filter));
	if (original && (d->header = json_loads(j.original_header ?
	    j.original_header : "[]", 0, NULL)) == NULL)
		d->header = json_array();
	jobs_row_free(&j);
	c->resp->status = 200;
	http_set_header(c->resp, "Content-Type", "text/csv; charset=utf-8");
	snprintf(disp, sizeof(disp), "attachment; filename=\"%s%s%s.csv\"",
	    d->id, d->filter[0] ? "-" : "", d->filter);
	http_set_header(c->resp, "Content-Disposition", disp);
	c->resp->stream = handler_jobs_csv_stream;
	c->resp->stream_arg = d;
	c->resp->stream_free = handler_jobs_csv_free;
out:
	buf_free(&filter);
	buf_free(&format);
	buf_free(&orig);
}

void
handler_jobs_cancel(struct api_call *c)
{
	long long refunded = 0;

	switch (jobs_cancel(c->ctx->db, c->key.account_id, c->params[0],
	    &refunded)) {
	case JOBS_OK:
		http_json(c->resp, 200, json_pack("{s:s,s:s,s:I}", "job_id",
		    c->params[0], "status", "cancelled", "credits_refunded",
		    (json_int_t)refunded));
		break;
	case JOBS_NOT_FOUND:
		http_error(c->resp, 404, "not_found", NULL, "no job %s",
		    c->params[0]);
		break;
	case JOBS_NOT_CANCELLABLE:
		http_error(c->resp, 409, "job_not_cancellable", NULL,
		    "job %s is finished and cannot be cancelled", c->params[0]);
		break;
	default:
		api_internal_error(c, "jobs_cancel");
	}
}

void
handler_jobs_erase(struct api_call *c)
{
	struct retention_who who = { RETENTION_BY_API_KEY, c->key.key_id,
	    RETENTION_REQUESTED };
	struct retention_counts n;
	struct jobs_row j;
	long long refunded = 0;
	enum jobs_err rc;
	json_t *erased;
	int k;

	if (handler_jobs_load(c, &j) == -1)
		return;
	jobs_row_free(&j);
	/* A job not ended is cancelled first, with the usual refund (a
	 * job that ended meanwhile is not cancellable: erased as it is). */
	rc = jobs_cancel(c->ctx->db, c->key.account_id, j.id, &refunded);
	if (rc != JOBS_OK && rc != JOBS_NOT_CANCELLABLE) {
		api_internal_error(c, "jobs_cancel");
		return;
	}
	memset(&n, 0, sizeof(n));
	if (retention_erase_job(c->ctx->db, j.id, &who, &n) == -1 ||
	    jobs_get(c->ctx->db, c->key.account_id, j.id, &j) != JOBS_OK) {
		api_internal_error(c, "retention_erase_job");
		return;
	}
	erased = json_object();
	for (k = 0; k < RETENTION_KIND__MAX; k++)
		if (k != RETENTION_SUPPRESSIONS &&
		    k != RETENTION_STORED_ANSWERS)
			json_object_set_new(erased, retention_kind_names[k],
			    json_integer(n.n[k]));
	http_json(c->resp, 200, json_pack("{s:s,s:s,s:I,s:o,s:o}",
	    "job_id", j.id, "status", jobs_status_names[j.status],
	    "credits_refunded", (json_int_t)refunded,
	    "data_erased_at", handler_jobs_opt(j.data_erased_at),
	    "erased", erased));
	jobs_row_free(&j);
}

void
handler_jobs_batch_get(struct api_call *c)
{
	struct jobs_row j;
	json_t *o;

	if (handler_jobs_load(c, &j) == -1)
		return;
	if (j.type != JOBS_TYPE_BATCH) {
		http_error(c->resp, 404, "not_found", NULL, "no batch %s",
		    c->params[0]);
		jobs_row_free(&j);
		return;
	}
	o = json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:s,s:o}",
	    "id", j.id, "name", j.name,
	    "status", jobs_status_names[j.status],
	    "total_emails", (json_int_t)j.total,
	    "processed_emails", (json_int_t)j.processed,
	    "valid_count", (json_int_t)j.counts[0],
	    "invalid_count", (json_int_t)(j.counts[1] + j.counts[4]),
	    "risky_count", (json_int_t)j.counts[2],
	    "created_at", j.created_at,
	    "completed_at", handler_jobs_opt(j.completed_at));
	handler_jobs_retention(o, &j);
	if (j.status == JOBS_COMPLETED && !j.data_erased_at[0])
		json_object_set_new(o, "download_url",
		    handler_jobs_download_url(c, &j));
	if (j.error_code[0])
		json_object_set_new(o, "error", json_pack("{s:s,s:s}", "code",
		    j.error_code, "message", j.error_message));
	http_json(c->resp, 200, o);
	jobs_row_free(&j);
}
