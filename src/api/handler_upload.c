/* handler_upload.c: POST /v1/verify/bulk/upload (scope verify:bulk, no
 * sandbox keys). A multipart/form-data body is parsed as it streams in
 * (util/multipart.h): the file part goes to MariaDB in 1 MiB pieces
 * (jobs/upload_store.h) while the body is hashed for the Idempotency-Key,
 * so the responder never holds the file; the other fields are small. A
 * JSON body names a source_url for svc-worker to fetch. Only when the
 * whole request is good is the job row written ("ingesting", nothing
 * charged), with the Idempotency-Key answer in the same transaction (run
 * again after a lost connection: a job whose COMMIT's answer was lost is
 * found and answered); any refusal deletes the pieces already stored (a
 * job that could not be written leaves them to housekeeping). */
#include "api/api.h"
#include "core/idempotency.h"
#include "core/ledger.h"
#include "jobs/caps.h"
#include "jobs/ingest_read.h"
#include "jobs/jobs_body.h"
#include "jobs/upload_store.h"
#include "jobs/uploads.h"
#include "util/log.h"
#include "util/multipart.h"
#include "util/strparse.h"
#include "util/urlguard.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define UPLOAD_FIELD_MAX 8192	/* bytes of a form field's value */
#define UPLOAD_READ (64 * 1024)
#define UPLOAD_SNIFF 4096	/* bytes of a file looked at for its kind */
#define UPLOAD_NAME_SHOWN 64	/* bytes of an unknown field's name shown */

/* The form fields, as text. */
enum upload_field {
	UPLOAD_NAME,
	UPLOAD_EMAIL_COLUMN,
	UPLOAD_MAPPING,
	UPLOAD_PREVIEW,
	UPLOAD_CALLBACK,
	UPLOAD_RETENTION,
	UPLOAD_FIELD__MAX
};
static const char *const upload_field_names[UPLOAD_FIELD__MAX] = {
	"name", "email_column", "column_mapping", "preview", "callback_url",
	"retention_days"
};

struct handler_upload {
	struct api_call	*c;
	char		 id[IDS_MAX];
	struct buf	 field[UPLOAD_FIELD__MAX];
	int		 has[UPLOAD_FIELD__MAX];
	struct buf	*cur;		/* the field being read, or NULL */
	int		 in_file;	/* the part being read is the file */
	int		 files;		/* file parts seen */
	int		 source_url;	/* a source_url part was seen */
	char		 unknown[UPLOAD_NAME_SHOWN]; /* an unknown part's name */
	int		 format;	/* enum ingest_format of the file */
	char		 file_name[256];
	unsigned char	 sniff[UPLOAD_SNIFF];
	size_t		 nsniff;
	struct upload_store_writer w;
	int		 writing;
	/* Bytes of the account's stored files when the request came, and
	 * what it may store (account_upload_storage_mb): the file is
	 * refused as soon as it would pass it (checked again, under the
	 * account's lock, when the job is written). */
	long long	 stored, storage_max;
	/* A refusal found while streaming: answered after the parse stops
	 * (field: the field named in details, for invalid_email). */
	int		 status;
	const char	*code, *bad_field;
	char		 message[300];
	/* What the request asks, once checked. */
	struct uploads_new u;
	char		 column[UPLOADS_COLUMN_MAX + 1];
	char		 secret[64];
	json_t		*email_column;	/* JSON body: string or integer */
	json_t		*answer;	/* the 202's body, once the job is asked */
	/* What "the same request" is for an Idempotency-Key: the parts'
	 * names, file names and contents in order, not the raw body (a client
	 * that retries writes another boundary). */
	struct idempotency_hash hash;
};

static void
handler_upload_refuse(struct handler_upload *h, int status, const char *code,
    const char *field, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Records the first refusal; the rest of the body is not read. */
static void
handler_upload_refuse(struct handler_upload *h, int status, const char *code,
    const char *field, const char *fmt, ...)
{
	va_list ap;

	if (h->status != 0)
		return;
	h->status = status;
	h->code = code;
	h->bad_field = field;
	va_start(ap, fmt);
	vsnprintf(h->message, sizeof(h->message), fmt, ap);
	va_end(ap);
}

static void
handler_upload_answer_refusal(struct handler_upload *h)
{
	/* A 503 is an outage, not a refusal: it says when to come back */
	if (h->status == 503)
		http_set_header(h->c->resp, "Retry-After", API_RETRY_AFTER);
	if (h->bad_field != NULL)
		api_bad_field(h->c, h->bad_field, "%s", h->message);
	else
		http_error(h->c->resp, h->status, h->code, NULL, "%s",
		    h->message);
}

/* ---------------------------------------------------------------- parts */

/* A client's field name as shown back in an error (and logged): printable
 * ASCII only, the rest as '?', at most sz - 1 bytes. */
static void
handler_upload_unknown(char *dst, size_t sz, const char *name)
{
	size_t i;

	for (i = 0; i + 1 < sz && name[i] != '\0'; i++)
		dst[i] = name[i] > 0x20 && name[i] < 0x7f && name[i] != '"' &&
		    name[i] != '\\' ? name[i] : '?';
	dst[i] = '\0';
}

static int
handler_upload_part_begin(void *arg, const struct multipart_part *p)
{
	struct handler_upload *h = arg;
	int i;

	h->cur = NULL;
	h->in_file = 0;
	idempotency_hash_update(&h->hash, p->name, strlen(p->name) + 1);
	idempotency_hash_update(&h->hash, p->filename ? p->filename : "",
	    (p->filename ? strlen(p->filename) : 0) + 1);
	/* A form whose file input was left empty sends filename="". */
	if (strcmp(p->name, "file") == 0 && p->filename != NULL &&
	    p->filename[0] == '\0')
		return 0;
	if (strcmp(p->name, "source_url") == 0 ||
	    strcmp(p->name, "file") == 0) {
		if (strcmp(p->name, "source_url") == 0)
			h->source_url = 1;
		else
			h->files++;
		if (h->files + h->source_url > 1) {
			handler_upload_refuse(h, 400, "missing_file", NULL,
			    "send exactly one of file or source_url: one file "
			    "as multipart/form-data, or a source_url as JSON");
			return -1;
		}
		if (h->source_url)
			return 0;	/* missing_file after the parse */
		if (p->filename == NULL || (h->format =
		    ingest_format_of_name(p->filename)) < 0) {
			handler_upload_refuse(h, 400, "unsupported_file_type",
			    NULL, "the file must be .csv, .tsv, .txt or .xlsx");
			return -1;
		}
		strparse_copy(h->file_name, sizeof(h->file_name), p->filename);
		upload_store_begin(&h->w, h->c->ctx->db, h->id);
		h->writing = 1;
		h->in_file = 1;
		return 0;
	}
	for (i = 0; i < UPLOAD_FIELD__MAX; i++)
		if (strcmp(p->name, upload_field_names[i]) == 0) {
			if (h->has[i]) {
				handler_upload_refuse(h, 400, "invalid_email",
				    upload_field_names[i], "given twice");
				return -1;
			}
			h->has[i] = 1;
			h->cur = &h->field[i];
			return 0;
		}
	handler_upload_unknown(h->unknown, sizeof(h->unknown), p->name);
	handler_upload_refuse(h, 400, "invalid_email", h->unknown,
	    "unknown field; the form takes file, name, email_column, "
	    "column_mapping, preview, callback_url and retention_days");
	return -1;
}

static int
handler_upload_part_data(void *arg, const char *data, size_t len)
{
	struct handler_upload *h = arg;
	size_t n;

	idempotency_hash_update(&h->hash, data, len);
	if (h->in_file) {
		if (h->nsniff < UPLOAD_SNIFF) {
			n = UPLOAD_SNIFF - h->nsniff < len ?
			    UPLOAD_SNIFF - h->nsniff : len;
			memcpy(h->sniff + h->nsniff, data, n);
			h->nsniff += n;
		}
		if (h->w.size + (long long)len > UPLOAD_STORE_FILE_MAX) {
			handler_upload_refuse(h, 413, "file_too_large", NULL,
			    "the file is larger than %lld MB",
			    UPLOAD_STORE_FILE_MAX >> 20);
			return -1;
		}
		if (h->stored + h->w.size + (long long)len > h->storage_max) {
			handler_upload_refuse(h, 409,
			    "upload_storage_exceeded", NULL, "the account's "
			    "uploaded files not yet ingested would pass %lld "
			    "MiB (account_upload_storage_mb): wait for them "
			    "to be ingested or cancel some",
			    h->storage_max >> 20);
			return -1;
		}
		if (upload_store_write(&h->w, data, len) != DB_OK) {
			handler_upload_refuse(h, 503, "queue_unavailable", NULL,
			    "the file could not be stored");
			return -1;
		}
		return 0;
	}
	if (h->cur != NULL && buf_append(h->cur, data, len) == -1) {
		handler_upload_refuse(h, 400, "invalid_email",
		    upload_field_names[h->cur - h->field],
		    "longer than %d bytes", UPLOAD_FIELD_MAX);
		return -1;
	}
	return 0;
}

static int
handler_upload_part_end(void *arg)
{
	struct handler_upload *h = arg;

	h->cur = NULL;
	h->in_file = 0;
	return 0;
}

/* Whether the file's first bytes fit its name: an XLSX file is a zip, a
 * text file is neither a zip nor another binary format and has no NUL
 * byte unless it is UTF-16 (a byte order mark). */
static int
handler_upload_kind_ok(const struct handler_upload *h)
{
	static const char *const binary[] = { "PK\003\004", "%PDF",
	    "\xd0\xcf\x11\xe0", "\x7f" "ELF", "\x89PNG", "GIF8",
	    "\xff\xd8\xff", NULL };
	const unsigned char *s = h->sniff;
	size_t i;

	if (h->format == INGEST_XLSX)
		return h->nsniff >= 4 && memcmp(s, "PK\003\004", 4) == 0;
	for (i = 0; binary[i]; i++)
		if (h->nsniff >= strlen(binary[i]) &&
		    memcmp(s, binary[i], strlen(binary[i])) == 0)
			return 0;
	if (h->nsniff >= 2 && ((s[0] == 0xff && s[1] == 0xfe) ||
	    (s[0] == 0xfe && s[1] == 0xff)))
		return 1;
	return memchr(s, '\0', h->nsniff) == NULL;
}

/* Streams the multipart body through the parser; a refusal is recorded
 * in h (answered by the caller). */
static void
handler_upload_stream(struct handler_upload *h, const char *boundary)
{
	static const struct multipart_cb cb = { handler_upload_part_begin,
	    handler_upload_part_data, handler_upload_part_end };
	struct http_req *req = h->c->req;
	struct multipart *mp;
	enum multipart_err me = MULTIPART_OK;
	char *chunk;
	long n;

	if ((mp = multipart_new(boundary, &cb, h)) == NULL ||
	    (chunk = malloc(UPLOAD_READ)) == NULL) {
		multipart_free(mp);
		handler_upload_refuse(h, 500, "verification_failed", NULL,
		    "out of memory (request %s)", req->request_id);
		return;
	}
	while ((n = req->read(req->io, chunk, UPLOAD_READ)) > 0)
		if ((me = multipart_feed(mp, chunk, (size_t)n)) != MULTIPART_OK)
			break;
	if (n == HTTP_READ_TIMEOUT)
		handler_upload_refuse(h, 408, "request_timeout", NULL,
		    "the request body did not arrive in time");
	else if (n < 0)
		handler_upload_refuse(h, 400, "invalid_email", "body",
		    "the body could not be read");
	else if (me == MULTIPART_OK)
		me = multipart_finish(mp);
	if (me == MULTIPART_LIMIT)
		handler_upload_refuse(h, 400, "invalid_email", "body",
		    "too many parts or headers: %s", multipart_error(mp));
	else if (me != MULTIPART_OK && me != MULTIPART_STOPPED)
		handler_upload_refuse(h, 400, "invalid_email", "body",
		    "not a well-formed multipart/form-data body: %s",
		    multipart_error(mp));
	free(chunk);
	multipart_free(mp);
	/* The last piece of a file that is to stay; a refused one's pieces
	 * are deleted by the caller. */
	if (h->status == 0 && h->writing && upload_store_end(&h->w) != DB_OK)
		handler_upload_refuse(h, 503, "queue_unavailable", NULL,
		    "the file could not be stored");
}

/* ---------------------------------------------------------------- fields */

/* The request's fields, checked in the order the spec lists them; fills
 * h->u. Answers the first refusal and returns -1. */
static int
handler_upload_fields(struct handler_upload *h, const char *source_url,
    json_t *mapping, int preview)
{
	struct api_call *c = h->c;
	int allow = conf_int(c->ctx->conf, CONF_ALLOW_PRIVATE_URLS) != 0;
	const char *ports = conf_str(c->ctx->conf, CONF_ALLOW_URL_PORTS);
	const char *name = h->has[UPLOAD_NAME] ?
	    buf_str(&h->field[UPLOAD_NAME]) : NULL;
	const char *cb = h->has[UPLOAD_CALLBACK] ?
	    buf_str(&h->field[UPLOAD_CALLBACK]) : NULL;
	enum urlguard_reason r;
	json_t *email;
	long days = 0;
	int wrong;

	if (name != NULL && (strparse_utf8_chars(name) < 0 ||
	    strparse_utf8_chars(name) > UPLOADS_NAME_MAX)) {
		api_bad_field(c, "name", "a string of at most %d characters",
		    UPLOADS_NAME_MAX);
		return -1;
	}
	wrong = h->has[UPLOAD_RETENTION] && strparse_long(buf_str(
	    &h->field[UPLOAD_RETENTION]), 1, JOBS_BODY_RETENTION_MAX,
	    &days) == -1;
	if (api_retention_ask(c, h->has[UPLOAD_RETENTION], wrong, days,
	    &h->u.retention) == -1)
		return -1;
	h->u.rule = INGEST_RULE_AUTO;
	if (h->email_column != NULL) {
		if (json_is_integer(h->email_column) &&
		    json_integer_value(h->email_column) >= 0 &&
		    json_integer_value(h->email_column) <= 9999)
			snprintf(h->column, sizeof(h->column), "%lld",
			    (long long)json_integer_value(h->email_column));
		else if (!json_is_string(h->email_column) ||
		    json_string_length(h->email_column) == 0 ||
		    json_string_length(h->email_column) > UPLOADS_COLUMN_MAX) {
			api_bad_field(c, "email_column", "a header name or a "
			    "0-based column index");
			return -1;
		} else
			strparse_copy(h->column, sizeof(h->column),
			    json_string_value(h->email_column));
		h->u.rule = INGEST_RULE_EMAIL_COLUMN;
	} else if (mapping != NULL) {
		email = json_object_get(mapping, "email");
		if (!json_is_object(mapping) || !json_is_string(email) ||
		    json_string_length(email) == 0 ||
		    json_string_length(email) > UPLOADS_COLUMN_MAX) {
			http_error(c->resp, 400, "invalid_column_mapping", NULL,
			    "column_mapping must be an object naming the email "
			    "column: {\"email\": \"<header>\"}");
			return -1;
		}
		strparse_copy(h->column, sizeof(h->column),
		    json_string_value(email));
		h->u.rule = INGEST_RULE_MAPPING;
	}
	if (cb != NULL && ((r = urlguard_check(cb, allow)) != URLGUARD_OK ||
	    (r = urlguard_check_port(cb, ports)) != URLGUARD_OK)) {
		http_error(c->resp, 400, "invalid_callback_url",
		    json_pack("{s:s}", "field", "callback_url"),
		    "callback_url: %s", urlguard_message(r, allow));
		return -1;
	}
	/* https only, even where allow_private_urls lets http through for
	 * webhooks (the worker downloads nothing else) */
	if (source_url != NULL &&
	    ((r = urlguard_check(source_url, allow)) != URLGUARD_OK ||
	    strncasecmp(source_url, "https:", 6) != 0 ||
	    (r = urlguard_check_port(source_url, ports)) != URLGUARD_OK)) {
		http_error(c->resp, 400, "invalid_source_url",
		    json_pack("{s:s}", "field", "source_url"),
		    "source_url: %s", urlguard_message(r == URLGUARD_OK ?
		    URLGUARD_BAD_SCHEME : r, r == URLGUARD_OK ? 0 : allow));
		return -1;
	}
	if (cb != NULL && ids_random_text("whsec_", 32, h->secret,
	    sizeof(h->secret)) == -1) {
		api_internal_error(c, "ids_random_text");
		return -1;
	}
	h->u.id = h->id;
	h->u.account_id = c->key.account_id;
	h->u.pool_id = auth_key_pool(&c->key);
	h->u.name = name;
	h->u.source_url = source_url;
	h->u.email_column = h->u.rule == INGEST_RULE_AUTO ? NULL : h->column;
	h->u.preview = preview;
	h->u.callback_url = cb;
	h->u.callback_secret = cb != NULL ? h->secret : NULL;
	return 0;
}

/* preview in a form: "true" or "false" (any case), or absent. */
static int
handler_upload_form_preview(struct handler_upload *h, int *preview)
{
	const char *v = buf_str(&h->field[UPLOAD_PREVIEW]);

	*preview = 0;
	if (!h->has[UPLOAD_PREVIEW] || strcasecmp(v, "false") == 0)
		return 0;
	if (strcasecmp(v, "true") == 0) {
		*preview = 1;
		return 0;
	}
	api_bad_field(h->c, "preview", "\"true\" or \"false\"");
	return -1;
}

/* The form's email_column (a digit string is an index) and
 * column_mapping (JSON text: invalid_column_mapping at once). */
static int
handler_upload_form_columns(struct handler_upload *h, json_t **mapping)
{
	const char *v = buf_str(&h->field[UPLOAD_EMAIL_COLUMN]);
	json_error_t jerr;

	*mapping = NULL;
	if (h->has[UPLOAD_EMAIL_COLUMN])
		h->email_column = json_string(v);
	if (!h->has[UPLOAD_MAPPING])
		return 0;
	*mapping = json_loads(buf_str(&h->field[UPLOAD_MAPPING]),
	    JSON_REJECT_DUPLICATES, &jerr);
	if (*mapping == NULL) {
		http_error(h->c->resp, 400, "invalid_column_mapping", NULL,
		    "column_mapping is not valid JSON: %s", jerr.text);
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------- answer */

/* Every upload needs at least one credit now (402): a non-preview one
 * as the spec says, a preview one too (its preview is free, not free for
 * everyone: an account with nothing to pay cannot confirm it). */
static int
handler_upload_credit_check(struct handler_upload *h)
{
	struct api_call *c = h->c;
	struct ledger_totals t;

	if (ledger_totals(c->ctx->db, h->u.pool_id, &t) != LEDGER_OK) {
		api_internal_error(c, "ledger_totals");
		return -1;
	}
	if (t.balance >= 1)
		return 0;
	api_insufficient_credits(c, 1, t.balance);
	return -1;
}

/* 409 upload_storage_exceeded: stored bytes and this file's would pass
 * max. */
static void
handler_upload_storage_full(struct api_call *c, long long stored,
    long long size, long long max)
{
	http_error(c->resp, 409, "upload_storage_exceeded", json_pack(
	    "{s:I,s:I,s:I}", "limit_bytes", (json_int_t)max, "stored_bytes",
	    (json_int_t)stored, "file_bytes", (json_int_t)size),
	    "the account's uploaded files not yet ingested would pass %lld "
	    "MiB (account_upload_storage_mb): wait for them to be ingested "
	    "or cancel some", max >> 20);
}

/* The Idempotency-Key's answer, written in the job's transaction
 * (uploads_create's then). */
static enum db_err
handler_upload_answer_in(struct db *db, void *arg)
{
	struct handler_upload *h = arg;

	return api_idempotency_answer_in(h->c, db, 202, h->answer);
}

/* Writes the job with the Idempotency-Key answer and answers 202. */
static void
handler_upload_create(struct handler_upload *h, const uint8_t hash[32])
{
	struct api_call *c = h->c;
	char path[IDS_MAX + 16], prog[IDS_MAX + 32];
	enum uploads_err rc;
	long long used;

	if (c->idem_key != NULL &&
	    api_idempotency_begin(c, c->idem_key, hash) == -1)
		return;
	h->u.jobs_in_flight_max = conf_int(c->ctx->conf,
	    CONF_ACCOUNT_JOBS_IN_FLIGHT_MAX);
	h->u.storage_max = h->storage_max;
	snprintf(path, sizeof(path), "/v1/jobs/%s", h->id);
	snprintf(prog, sizeof(prog), "/v1/jobs/%s/progress", h->id);
	h->answer = json_pack("{s:s,s:s,s:b,s:s,s:s}", "job_id", h->id,
	    "status", "ingesting", "preview", h->u.preview, "status_url", path,
	    "progress_url", prog);
	if (h->u.callback_secret != NULL)
		json_object_set_new(h->answer, "callback_secret",
		    json_string(h->u.callback_secret));
	rc = uploads_create(c->ctx->db, &h->u, &used, c->idem_key != NULL ?
	    handler_upload_answer_in : NULL, h);
	if (rc == UPLOADS_TOO_MANY_JOBS || rc == UPLOADS_STORAGE_FULL) {
		if (c->idem_key != NULL)
			api_idempotency_abandon(c);
		if (rc == UPLOADS_TOO_MANY_JOBS)
			api_too_many_jobs(c, used);
		else
			handler_upload_storage_full(c, used, h->u.size,
			    h->storage_max);
		return;
	}
	if (rc != UPLOADS_OK) {
		/* The job may have been committed all the same (the answer
		 * to its COMMIT lost, and the database out of reach since):
		 * its pieces are left to housekeeping, which deletes those
		 * of a job that never came, and a retry with the same key
		 * may run again if the job was not made. */
		h->writing = 0;
		if (c->idem_key != NULL)
			api_idempotency_abandon(c);
		api_internal_error(c, "uploads_create");
		return;
	}
	c->idem_done = c->idem_key != NULL;
	h->writing = 0;		/* the pieces belong to the job now */
	log_info("event=upload_accepted req=%s job=%s file_bytes=%lld "
	    "preview=%d source_url=%d", c->req->request_id, h->id, h->w.size,
	    h->u.preview, h->u.source_url != NULL);
	api_wake(c, WAKE_UPLOADS);
	http_json(c->resp, 202, json_incref(h->answer));
}

static void
handler_upload_multipart(struct handler_upload *h, const char *boundary)
{
	struct api_call *c = h->c;
	uint8_t digest[32];
	json_t *mapping = NULL;
	const char *marker;
	int preview;

	/* lighttpd and nginx count a chunked body themselves and say so in a
	 * request header, Apache (mod_fcgid) in an environment variable
	 * (their snippets in fcgi-conf/ and contrib/); other servers pass no
	 * CONTENT_LENGTH. */
	if (c->req->content_length < 0 || ((marker = http_param(c->req,
	    "HTTP_X_SVC_BODY_LENGTH")) != NULL && strcmp(marker, "none") ==
	    0) || ((marker = http_param(c->req, "SVC_BODY_LENGTH")) != NULL &&
	    strcmp(marker, "none") == 0)) {
		http_error(c->resp, 411, "length_required", NULL,
		    "send a multipart upload with a Content-Length header");
		return;
	}
	idempotency_hash_begin(&h->hash, c->req->method_text, c->req->path);
	handler_upload_stream(h, boundary);
	idempotency_hash_end(&h->hash, digest);
	if (h->status != 0) {
		handler_upload_answer_refusal(h);
		return;
	}
	if (h->files == 0) {
		http_error(c->resp, 400, "missing_file", NULL, "%s",
		    h->source_url ? "a source_url is sent as application/json, "
		    "not in a form; send exactly one of file or source_url" :
		    "send the file in a form field named \"file\" (or a "
		    "source_url as JSON)");
		return;
	}
	if (h->w.size == 0) {
		http_error(c->resp, 400, "empty_file", NULL,
		    "the file is empty");
		return;
	}
	if (!handler_upload_kind_ok(h)) {
		http_error(c->resp, 400, "unsupported_file_type", NULL,
		    "the content of %s is not %s", h->file_name,
		    ingest_format_names[h->format]);
		return;
	}
	if (handler_upload_form_columns(h, &mapping) == -1 ||
	    handler_upload_form_preview(h, &preview) == -1 ||
	    handler_upload_fields(h, NULL, mapping, preview) == -1)
		goto out;
	h->u.file_name = h->file_name;
	h->u.format = ingest_format_names[h->format];
	h->u.size = h->w.size;
	if (handler_upload_credit_check(h) == -1)
		goto out;
	handler_upload_create(h, digest);
out:
	json_decref(mapping);
}

/* Whether key is one of the JSON form's fields: 0 or -1. */
static int
handler_upload_json_key(const char *key)
{
	int i;

	if (strcmp(key, "source_url") == 0)
		return 0;
	for (i = 0; i < UPLOAD_FIELD__MAX; i++)
		if (strcmp(key, upload_field_names[i]) == 0)
			return 0;
	return -1;
}

/* The JSON form: { source_url, name?, email_column?, column_mapping?,
 * preview?, callback_url?, retention_days? }. */
static void
handler_upload_json(struct handler_upload *h)
{
	struct api_call *c = h->c;
	json_t *body, *v, *mapping;
	const char *key;
	uint8_t digest[32];
	int preview = 0, i;

	c->body_max = API_JSON_MAX;
	if ((body = api_json_body(c)) == NULL)
		return;
	json_object_foreach(body, key, v)
		if (handler_upload_json_key(key) == -1) {
			handler_upload_unknown(h->unknown, sizeof(h->unknown),
			    key);
			api_bad_field(c, h->unknown, "%s", strcmp(key, "file") ==
			    0 ? "a file is sent as multipart/form-data; as JSON "
			    "send a source_url" : "unknown field; the body takes "
			    "source_url, name, email_column, column_mapping, "
			    "preview, callback_url and retention_days");
			goto out;
		}
	v = json_object_get(body, "source_url");
	if (v == NULL || json_is_null(v)) {
		http_error(c->resp, 400, "missing_file", NULL,
		    "send source_url (JSON) or a file (multipart/form-data)");
		goto out;
	}
	if (!json_is_string(v)) {
		http_error(c->resp, 400, "invalid_source_url", NULL,
		    "source_url must be a string");
		goto out;
	}
	for (i = 0; i < UPLOAD_FIELD__MAX; i++) {
		json_t *f = json_object_get(body, upload_field_names[i]);

		if (f == NULL || json_is_null(f) || i == UPLOAD_EMAIL_COLUMN ||
		    i == UPLOAD_MAPPING || i == UPLOAD_PREVIEW)
			continue;
		if (i == UPLOAD_RETENTION) {
			/* a number in JSON, its text in a form; anything
			 * else is kept as "" and refused */
			h->has[i] = 1;
			if (json_is_integer(f))
				buf_printf(&h->field[i], "%lld",
				    (long long)json_integer_value(f));
			continue;
		}
		if (!json_is_string(f)) {
			api_bad_field(c, upload_field_names[i],
			    "must be a string");
			goto out;
		}
		h->has[i] = 1;
		buf_puts(&h->field[i], json_string_value(f));
	}
	v = json_object_get(body, "preview");
	if (v != NULL && !json_is_null(v)) {
		if (!json_is_boolean(v)) {
			api_bad_field(c, "preview", "true or false");
			goto out;
		}
		preview = json_is_true(v);
	}
	v = json_object_get(body, "email_column");
	if (v != NULL && !json_is_null(v))
		h->email_column = json_incref(v);
	mapping = json_object_get(body, "column_mapping");
	if (mapping != NULL && json_is_null(mapping))
		mapping = NULL;
	if (handler_upload_fields(h, json_string_value(json_object_get(body,
	    "source_url")), mapping, preview) == -1 ||
	    handler_upload_credit_check(h) == -1)
		goto out;
	idempotency_request_hash(c->req->method_text, c->req->path,
	    c->req->body.data, c->req->body.len, digest);
	handler_upload_create(h, digest);
out:
	json_decref(body);
}

void
handler_upload(struct api_call *c)
{
	const char *ct = http_param(c->req, "CONTENT_TYPE");
	char boundary[80];
	struct handler_upload h;
	int i;

	memset(&h, 0, sizeof(h));
	h.c = c;
	if (c->key.sandbox) {
		http_error(c->resp, 403, "sandbox_key_restricted", NULL,
		    "sandbox keys cannot upload files; use a live key");
		return;
	}
	/* The route leaves Idempotency-Key to this handler: the body is
	 * hashed while it streams, never held for hashing first. */
	c->idem_key = http_header_in(c->req, "Idempotency-Key");
	if (c->idem_key != NULL && api_idempotency_key_check(c, c->idem_key)
	    == -1)
		return;
	if (api_db(c) == NULL)
		return;
	if (ids_new("job", h.id) == -1) {
		api_internal_error(c, "ids_new");
		return;
	}
	h.storage_max = (long long)conf_int(c->ctx->conf,
	    CONF_ACCOUNT_UPLOAD_STORAGE_MB) << 20;
	/* An early refusal only: when the count cannot be read (a failing
	 * upload_chunks is answered 503 once the file is stored), the check
	 * under the account's lock at creation decides. */
	if (caps_upload_bytes(c->ctx->db, c->key.account_id, NULL, &h.stored) !=
	    DB_OK)
		h.stored = 0;
	for (i = 0; i < UPLOAD_FIELD__MAX; i++)
		buf_init(&h.field[i], UPLOAD_FIELD_MAX);
	if (ct != NULL && strncasecmp(ct, "multipart/form-data", 19) == 0) {
		if (multipart_boundary(ct, boundary, sizeof(boundary)) == -1)
			api_bad_field(c, "Content-Type", "multipart/form-data "
			    "needs a boundary parameter");
		else
			handler_upload_multipart(&h, boundary);
	} else if (ct == NULL || *ct == '\0' ||
	    strncasecmp(ct, "application/json", 16) == 0)
		handler_upload_json(&h);
	else
		http_error(c->resp, 415, "unsupported_media_type", NULL,
		    "send multipart/form-data with a file, or application/json "
		    "with a source_url");
	/* Pieces stored for a request that was refused go again. */
	if (h.writing)
		upload_store_abort(&h.w);
	for (i = 0; i < UPLOAD_FIELD__MAX; i++)
		buf_free(&h.field[i]);
	json_decref(h.email_column);
	json_decref(h.answer);
}
