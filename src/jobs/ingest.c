/* ingest.c: an upload job's file into its rows (ingest.h). The file's
 * pieces (upload_store.h) go through the reader of its format; the first
 * INGEST_COLUMNS_SAMPLE non-empty rows are held until the header and the
 * email column are chosen, then every row's email cell goes into the
 * job's input (trimmed, de-duplicated on the normal form, as JSON bulk
 * jobs) and the row's cells, as a JSON array, are kept for the address it
 * brought first. Nothing is written until the whole file was read; the
 * rows then go in with the job's next state, in one transaction that
 * also deletes the stored file.
 *
 * Fair share (ingest_claim): every worker has one ingestion thread, which
 * takes uploads, previews and preview refreshes one at a time, so their
 * order decides who waits. It is round robin across accounts: each claim
 * records the account's turn (ingest_turns, migration 017), and the next
 * claim takes a job of the account whose turn was longest ago (one never
 * served first), within it the job waiting longest, a refresh waiting
 * from when it was asked for. So an account's second job waits for every
 * other waiting account's turn, and a refresh of an old job does not
 * jump ahead by its age: it waits for its account's turn like an upload
 * asked for at the same time. */
#include "jobs/ingest.h"
#include "core/ledger.h"
#include "jobs/ingest_read.h"
#include "jobs/jobend.h"
#include "jobs/upload_store.h"
#include "util/buf.h"
#include "util/grow.h"
#include "util/log.h"
#include "util/strparse.h"
#include "util/timeutil.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const ingest_fail_codes[INGEST_FAIL__MAX] = {
	"", "no_emails", "too_many_emails", "email_column_not_found",
	"invalid_column_mapping", "invalid_file", "file_unavailable",
	"source_unreachable", "file_too_large", "insufficient_credits",
	"source_too_slow", "upload_storage_exceeded"
};

#define INGEST_PROGRESS_MS 1000
#define INGEST_ARENA_BLOCK (4 * 1024 * 1024)
#define INGEST_UNIQUE_MAX 500000	/* the spec's limit for uploads */
/* The input's memory: 500,000 addresses of the longest kind fit. */
#define INGEST_INPUT_MEMORY (256 * 1024 * 1024)

/* The originals' JSON text, in large blocks. */
struct ingest_arena {
	struct ingest_arena_block {
		struct ingest_arena_block *next;
		size_t	 used, cap;
		char	 data[];
	} *blocks;
	size_t		 total;
};

struct ingest_ctx {
	const struct ingest_job	*job;
	struct ingest_read	*r;
	size_t			 cap_originals;
	/* the first rows, held until the columns are chosen */
	char			**sample[INGEST_COLUMNS_SAMPLE];
	size_t			 sample_n[INGEST_COLUMNS_SAMPLE];
	size_t			 nsample;
	size_t			 sample_bytes;	/* held by the sample */
	int			 decided;
	struct ingest_columns	 cols;
	size_t			 width;		/* the widest row */
	struct buf		 json;		/* scratch */
	long long		 bytes;
	int64_t			 last_progress;
	ingest_progress_fn	 progress;
	void			*arg;
	struct ingest_reader	*reader;
	int			 stopped;
};

/* ---------------------------------------------------------------- claim */

/* When an upload job of the ingester's queue (alias t) began to wait: a
 * preview refresh when it was asked for. */
#define INGEST_QUEUED_AT(t) "IF(" t ".preview_refresh = 1, COALESCE(" \
	t ".preview_refresh_at, " t ".created_at), " t ".created_at)"

int
ingest_claim(struct db *db, const char *owner, long lease,
    struct ingest_job *j)
{
	struct db_res *r;
	int row;

	memset(j, 0, sizeof(*j));
	if (db_begin(db) != DB_OK)
		return -1;
	/* refresh: the rows are written (a preview job whose worker died
	 * before its preview was stored has them, and no stored file).
	 * Round robin across accounts (see the top of this file): the job of
	 * the account whose turn was longest ago (never: first), then the
	 * one waiting longest, a refresh from when it was asked for. The
	 * turn is read by a subquery, which does not lock its rows. */
	if (db_query(db, "SELECT j.id, j.account_id, j.pool_id, "
	    "COALESCE(j.file_format, ''), COALESCE(j.source_url, ''), "
	    "j.column_rule, COALESCE(j.email_column, ''), j.want_preview, "
	    "j.status = ? OR j.original_header IS NOT NULL, "
	    "COALESCE(j.file_size, 0), COALESCE(DATE_FORMAT("
	    "j.preview_refresh_at, '%Y-%m-%d %H:%i:%s.%f'), '') FROM jobs j "
	    "WHERE j.type = 'upload' AND (j.status = ? OR (j.status = ? AND "
	    "j.preview_refresh = 1)) AND (j.ingest_lease_expires IS NULL OR "
	    "j.ingest_lease_expires < UTC_TIMESTAMP(3)) ORDER BY COALESCE(("
	    "SELECT t.turn_at FROM ingest_turns t WHERE t.account_id = "
	    "j.account_id), '1000-01-01'), " INGEST_QUEUED_AT("j") ", j.id "
	    "LIMIT 1 FOR UPDATE SKIP LOCKED",
	    DB_ARGS(DBP_STR(jobs_status_names[JOBS_AWAITING_CONFIRMATION]),
	    DBP_STR(jobs_status_names[JOBS_INGESTING]),
	    DBP_STR(jobs_status_names[JOBS_AWAITING_CONFIRMATION])), &r) !=
	    DB_OK) {
		db_rollback(db);
		return -1;
	}
	if ((row = db_res_next(r)) == 1) {
		strparse_copy(j->id, sizeof(j->id), db_res_str(r, 0));
		strparse_copy(j->account_id, sizeof(j->account_id),
		    db_res_str(r, 1));
		strparse_copy(j->pool_id, sizeof(j->pool_id), db_res_str(r, 2));
		strparse_copy(j->format, sizeof(j->format), db_res_str(r, 3));
		strparse_copy(j->source_url, sizeof(j->source_url),
		    db_res_str(r, 4));
		j->rule = strcmp(db_res_str(r, 5) ? db_res_str(r, 5) : "",
		    ingest_rule_names[INGEST_RULE_EMAIL_COLUMN]) == 0 ?
		    INGEST_RULE_EMAIL_COLUMN : strcmp(db_res_str(r, 5) ?
		    db_res_str(r, 5) : "",
		    ingest_rule_names[INGEST_RULE_MAPPING]) == 0 ?
		    INGEST_RULE_MAPPING : INGEST_RULE_AUTO;
		strparse_copy(j->column, sizeof(j->column), db_res_str(r, 6));
		j->want_preview = (int)db_res_int(r, 7);
		j->refresh = (int)db_res_int(r, 8);
		j->file_size = db_res_int(r, 9);
		strparse_copy(j->refresh_at, sizeof(j->refresh_at),
		    db_res_str(r, 10));
	}
	db_res_free(r);
	if (row != 1) {
		db_rollback(db);
		return row == 0 ? 0 : -1;
	}
	if (db_exec(db, "UPDATE jobs SET ingest_owner = ?, "
	    "ingest_lease_expires = UTC_TIMESTAMP(3) + INTERVAL ? SECOND "
	    "WHERE id = ?",
	    DB_ARGS(DBP_STR(owner), DBP_INT(lease), DBP_STR(j->id)), NULL) !=
	    DB_OK || db_exec(db, "INSERT INTO ingest_turns (account_id, "
	    "turn_at) VALUES (?, UTC_TIMESTAMP(3)) ON DUPLICATE KEY UPDATE "
	    "turn_at = VALUES(turn_at)", DB_ARGS(DBP_STR(j->account_id)),
	    NULL) != DB_OK || db_commit(db) != DB_OK) {
		db_rollback(db);
		return -1;
	}
	return 1;
}

int
ingest_renew(struct db *db, const struct ingest_job *j, const char *owner,
    long lease, long long rows, long long bytes)
{
	unsigned long long changed = 0;

	if (db_exec(db, "UPDATE jobs SET ingest_lease_expires = "
	    "UTC_TIMESTAMP(3) + INTERVAL ? SECOND, ingest_rows = IF(? < 0, "
	    "ingest_rows, ?), ingest_bytes = IF(? < 0, ingest_bytes, ?) WHERE "
	    "id = ? AND ingest_owner = ? AND status IN (?, ?)",
	    DB_ARGS(DBP_INT(lease), DBP_INT(rows), DBP_INT(rows),
	    DBP_INT(bytes), DBP_INT(bytes), DBP_STR(j->id), DBP_STR(owner),
	    DBP_STR(jobs_status_names[JOBS_INGESTING]),
	    DBP_STR(jobs_status_names[JOBS_AWAITING_CONFIRMATION])), &changed)
	    != DB_OK)
		return -1;
	return changed == 1 ? 0 : -1;
}

void
ingest_release(struct db *db, const struct ingest_job *j, const char *owner)
{
	db_exec(db, "UPDATE jobs SET ingest_owner = NULL, ingest_lease_expires "
	    "= NULL WHERE id = ? AND ingest_owner = ?",
	    DB_ARGS(DBP_STR(j->id), DBP_STR(owner)), NULL);
}

/* ---------------------------------------------------------------- read */

static char *
ingest_arena_copy(struct ingest_arena *a, const char *s, size_t n)
{
	struct ingest_arena_block *b = a->blocks;
	size_t cap;

	if (b == NULL || b->cap - b->used < n + 1) {
		cap = n + 1 > INGEST_ARENA_BLOCK ? n + 1 : INGEST_ARENA_BLOCK;
		if ((b = malloc(sizeof(*b) + cap)) == NULL)
			return NULL;
		b->next = a->blocks;
		b->used = 0;
		b->cap = cap;
		a->blocks = b;
	}
	memcpy(b->data + b->used, s, n);
	b->data[b->used + n] = '\0';
	b->used += n + 1;
	a->total += n + 1;
	return b->data + b->used - n - 1;
}

/* One JSON string (the reader hands over valid UTF-8). */
static void
ingest_json_string(struct buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, run = 0;
	unsigned char c;

	buf_putc(b, '"');
	for (i = 0; i < n; i++) {
		c = (unsigned char)s[i];
		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		buf_append(b, s + run, i - run);
		run = i + 1;
		buf_putc(b, '\\');
		switch (c) {
		case '"': buf_putc(b, '"'); break;
		case '\\': buf_putc(b, '\\'); break;
		case '\n': buf_putc(b, 'n'); break;
		case '\r': buf_putc(b, 'r'); break;
		case '\t': buf_putc(b, 't'); break;
		default:
			buf_puts(b, "u00");
			buf_putc(b, hex[c >> 4]);
			buf_putc(b, hex[c & 15]);
			break;
		}
	}
	buf_append(b, s + run, n - run);
	buf_putc(b, '"');
}

/* The cells of a row as a JSON array, into c->json. */
static void
ingest_json_row(struct ingest_ctx *c, const struct ingest_cell *cells,
    size_t n)
{
	size_t i;

	buf_reset(&c->json);
	buf_putc(&c->json, '[');
	for (i = 0; i < n; i++) {
		if (i)
			buf_putc(&c->json, ',');
		ingest_json_string(&c->json, cells[i].s, cells[i].len);
	}
	buf_putc(&c->json, ']');
}

static int
ingest_failed(struct ingest_ctx *c, enum ingest_fail f, const char *fmt,
    ...) __attribute__((format(printf, 3, 4)));

static int
ingest_failed(struct ingest_ctx *c, enum ingest_fail f, const char *fmt, ...)
{
	va_list ap;

	if (c->r->fail == INGEST_FAIL_NONE) {
		c->r->fail = f;
		va_start(ap, fmt);
		vsnprintf(c->r->message, sizeof(c->r->message), fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* A data row: its email cell into the input, its cells kept for the
 * address when it is new. */
static int
ingest_row_data(struct ingest_ctx *c, const struct ingest_cell *cells,
    size_t n)
{
	struct ingest_read *r = c->r;
	size_t before = r->in.n;
	const struct ingest_cell *e;

	if (c->cols.column >= n)
		return 0;
	e = &cells[c->cols.column];
	switch (jobs_input_add(&r->in, e->s, e->len)) {
	case JOBS_OK:
		break;
	case JOBS_TOO_MANY:
		return ingest_failed(c, INGEST_FAIL_TOO_MANY, "the file has "
		    "more than %d unique addresses", INGEST_UNIQUE_MAX);
	case JOBS_TOO_BIG:
		return ingest_failed(c, INGEST_FAIL_INVALID_FILE, "the "
		    "addresses need more than %d MiB",
		    INGEST_INPUT_MEMORY >> 20);
	default:
		return ingest_failed(c, INGEST_FAIL_INVALID_FILE,
		    "out of memory reading the file");
	}
	if (r->in.n == before)
		return 0;		/* blank, or seen before */
	ingest_json_row(c, cells, n);
	/* the sample is still held while its rows are written here */
	if (r->arena->total + c->sample_bytes + c->json.len >
	    INGEST_ORIGINALS_MAX)
		return ingest_failed(c, INGEST_FAIL_INVALID_FILE, "the rows "
		    "of the file need more than %d MiB once read",
		    INGEST_ORIGINALS_MAX >> 20);
	if (grow(&r->originals, before, &c->cap_originals,
	    sizeof(*r->originals), 1024) == -1 ||
	    (r->originals[before] = ingest_arena_copy(r->arena,
	    buf_str(&c->json), c->json.len)) == NULL)
		return ingest_failed(c, INGEST_FAIL_INVALID_FILE,
		    "out of memory reading the file");
	return 0;
}

/* The column names as a JSON array: the header's, then column_<n> for
 * columns past it; without a header "email" for a one-column file. */
static int
ingest_header(struct ingest_ctx *c)
{
	struct ingest_cell cells[INGEST_COLUMNS_MAX];
	char names[INGEST_COLUMNS_MAX][16];
	size_t i, have = c->cols.header ? c->sample_n[0] : 0;

	for (i = 0; i < c->width && i < INGEST_COLUMNS_MAX; i++) {
		if (i < have) {
			cells[i].s = c->sample[0][i];
			cells[i].len = strlen(c->sample[0][i]);
			continue;
		}
		if (c->width == 1)
			snprintf(names[i], sizeof(names[i]), "email");
		else
			snprintf(names[i], sizeof(names[i]), "column_%zu",
			    i + 1);
		cells[i].s = names[i];
		cells[i].len = strlen(names[i]);
	}
	ingest_json_row(c, cells, i);
	free(c->r->header);
	c->r->header = strdup(buf_str(&c->json));
	return c->r->header ? 0 : -1;
}

/* The header and the email column from the sample, then the sampled data
 * rows; the sample is let go. */
static int
ingest_decide(struct ingest_ctx *c)
{
	struct ingest_columns_row rows[INGEST_COLUMNS_SAMPLE];
	struct ingest_cell cells[INGEST_COLUMNS_MAX];
	size_t i, k;
	int rc = 0;

	c->decided = 1;
	for (i = 0; i < c->nsample; i++) {
		rows[i].cells = (const char *const *)c->sample[i];
		rows[i].n = c->sample_n[i];
	}
	switch (ingest_columns_choose(rows, c->nsample, c->job->rule,
	    c->job->rule == INGEST_RULE_AUTO ? NULL : c->job->column,
	    &c->cols)) {
	case INGEST_CHOICE_FOUND:
		break;
	case INGEST_CHOICE_BAD_MAPPING:
		return ingest_failed(c, INGEST_FAIL_BAD_MAPPING, "column_mapping "
		    "names a column the file does not have: %s",
		    c->job->column);
	default:
		if (c->job->rule != INGEST_RULE_AUTO)
			return ingest_failed(c, INGEST_FAIL_COLUMN_NOT_FOUND,
			    "the file has no column %s", c->job->column);
		return ingest_failed(c, INGEST_FAIL_COLUMN_NOT_FOUND, "no "
		    "column of the file holds email addresses; name it with "
		    "email_column");
	}
	for (i = c->cols.header ? 1 : 0; rc == 0 && i < c->nsample; i++) {
		for (k = 0; k < c->sample_n[i]; k++) {
			cells[k].s = c->sample[i][k];
			cells[k].len = strlen(c->sample[i][k]);
		}
		rc = ingest_row_data(c, cells, c->sample_n[i]);
	}
	return rc;
}

static void
ingest_sample_free(struct ingest_ctx *c)
{
	size_t i, k;

	for (i = 0; i < c->nsample; i++) {
		for (k = 0; k < c->sample_n[i]; k++)
			free(c->sample[i][k]);
		free(c->sample[i]);
	}
	c->nsample = 0;
	c->sample_bytes = 0;
}

static int
ingest_row(void *arg, const struct ingest_cell *cells, size_t n)
{
	struct ingest_ctx *c = arg;
	size_t k;

	if (n > c->width)
		c->width = n;
	if (c->decided)
		return ingest_row_data(c, cells, n);
	if (n == 0)
		return 0;
	/* The sample counts against the cap of the originals: a small XLSX
	 * file whose cells all name one long shared string would otherwise
	 * hold INGEST_COLUMNS_SAMPLE rows of INGEST_COLUMNS_MAX such cells. */
	c->sample_bytes += n * sizeof(char *);
	for (k = 0; k < n; k++)
		c->sample_bytes += cells[k].len + 1;
	if (c->sample_bytes > INGEST_ORIGINALS_MAX)
		return ingest_failed(c, INGEST_FAIL_INVALID_FILE, "the first "
		    "rows of the file need more than %d MiB once read",
		    INGEST_ORIGINALS_MAX >> 20);
	if ((c->sample[c->nsample] = calloc(n, sizeof(char *))) == NULL)
		return ingest_failed(c, INGEST_FAIL_INVALID_FILE,
		    "out of memory reading the file");
	c->sample_n[c->nsample] = n;
	for (k = 0; k < n; k++)
		if ((c->sample[c->nsample][k] = strdup(cells[k].s)) == NULL) {
			c->sample_n[c->nsample] = k;
			c->nsample++;
			return ingest_failed(c, INGEST_FAIL_INVALID_FILE,
			    "out of memory reading the file");
		}
	c->nsample++;
	if (c->nsample < INGEST_COLUMNS_SAMPLE)
		return 0;
	return ingest_decide(c);
}

/* upload_store_fn: a piece of the file into the reader. */
static int
ingest_piece(void *arg, const void *data, size_t len)
{
	struct ingest_ctx *c = arg;
	int64_t now = timeutil_mono_ms();

	c->bytes += (long long)len;
	if (ingest_reader_feed(c->reader, data, len) != INGEST_READ_OK)
		return -1;
	if (c->progress != NULL && now - c->last_progress >=
	    INGEST_PROGRESS_MS) {
		c->last_progress = now;
		if (c->progress(c->arg, ingest_reader_rows(c->reader),
		    c->bytes) == -1) {
			c->stopped = 1;
			return -1;
		}
	}
	return 0;
}

/* After the last row: the columns if the file was shorter than the
 * sample, the column names (the widest row is known now), then whether
 * the file held an address at all. */
static void
ingest_end(struct ingest_ctx *c)
{
	struct ingest_read *r = c->r;
	size_t i;

	if (!c->decided) {
		if (c->nsample == 0) {
			ingest_failed(c, INGEST_FAIL_NO_EMAILS,
			    "the file has no rows");
			return;
		}
		if (ingest_decide(c) == -1)
			return;
	}
	if (ingest_header(c) == -1) {
		ingest_failed(c, INGEST_FAIL_INVALID_FILE,
		    "out of memory reading the file");
		return;
	}
	if (jobs_input_end(&r->in) == JOBS_EMPTY) {
		ingest_failed(c, INGEST_FAIL_NO_EMAILS, "the email column has "
		    "no addresses");
		return;
	}
	for (i = 0; i < r->in.n; i++)
		if (r->in.domains[i][0] != '\0')
			return;
	ingest_failed(c, INGEST_FAIL_NO_EMAILS, "no value of the email "
	    "column is an email address");
}

enum ingest_err
ingest_read_file(struct db *db, const struct ingest_job *j,
    struct ingest_read *r, ingest_progress_fn progress, void *arg)
{
	struct ingest_ctx c;
	enum ingest_read_err re = INGEST_READ_OK;
	enum db_err e;
	int fmt;

	memset(r, 0, sizeof(*r));
	memset(&c, 0, sizeof(c));
	c.job = j;
	c.r = r;
	c.progress = progress;
	c.arg = arg;
	c.last_progress = timeutil_mono_ms();
	buf_init(&c.json, BUF_NOMAX);
	if ((r->arena = calloc(1, sizeof(*r->arena))) == NULL ||
	    jobs_input_init(&r->in, INGEST_UNIQUE_MAX, "") == -1) {
		free(r->arena);
		r->arena = NULL;
		return INGEST_NOMEM;
	}
	jobs_input_set_memory_max(&r->in, INGEST_INPUT_MEMORY);
	for (fmt = 0; fmt < INGEST_FORMAT__MAX; fmt++)
		if (strcmp(j->format, ingest_format_names[fmt]) == 0)
			break;
	if (fmt == INGEST_FORMAT__MAX) {
		ingest_failed(&c, INGEST_FAIL_FILE_UNAVAILABLE, "the stored "
		    "file has no known format");
		buf_free(&c.json);
		return INGEST_OK;
	}
	if ((c.reader = ingest_reader_new(fmt, ingest_row, &c)) == NULL) {
		buf_free(&c.json);
		return INGEST_NOMEM;
	}
	e = upload_store_read(db, j->id, ingest_piece, &c);
	if (e == DB_OK && c.bytes == 0)
		ingest_failed(&c, INGEST_FAIL_FILE_UNAVAILABLE, "the uploaded "
		    "file is no longer stored");
	else if (e == DB_OK)
		re = ingest_reader_end(c.reader);
	else if (e == DB_ABORT && !c.stopped && r->fail == INGEST_FAIL_NONE)
		re = INGEST_READ_INVALID;	/* the reader refused a piece */
	if (re == INGEST_READ_INVALID && r->fail == INGEST_FAIL_NONE)
		ingest_failed(&c, INGEST_FAIL_INVALID_FILE, "%s",
		    ingest_reader_error(c.reader));
	if (e == DB_OK && r->fail == INGEST_FAIL_NONE &&
	    re == INGEST_READ_OK && c.bytes > 0)
		ingest_end(&c);
	r->rows = ingest_reader_rows(c.reader);
	/* every row read is shown while the rows are written (a file read in
	 * less than INGEST_PROGRESS_MS showed none until the job moved on) */
	if (e == DB_OK && r->fail == INGEST_FAIL_NONE && !c.stopped &&
	    c.progress != NULL &&
	    c.progress(c.arg, r->rows, c.bytes) == -1)
		c.stopped = 1;
	ingest_reader_free(c.reader);
	ingest_sample_free(&c);
	buf_free(&c.json);
	if (c.stopped)
		return INGEST_STOPPED;
	if (e != DB_OK && e != DB_ABORT)
		return INGEST_DB;
	return INGEST_OK;
}

void
ingest_read_free(struct ingest_read *r)
{
	struct ingest_arena_block *b, *next;

	if (r->arena != NULL)
		for (b = r->arena->blocks; b != NULL; b = next) {
			next = b->next;
			free(b);
		}
	free(r->arena);
	free(r->originals);
	free(r->header);
	jobs_input_free(&r->in);
	memset(r, 0, sizeof(*r));
}

/* ---------------------------------------------------------------- write */

struct ingest_writing {
	const struct ingest_job	*job;
	const char		*owner;
	const struct ingest_read *r;
	enum ingest_fail	 fail;
	int			 lost;
};

static enum db_err
ingest_write_work(struct db *db, void *arg)
{
	struct ingest_writing *w = arg;
	const struct ingest_job *j = w->job;
	long long n = (long long)w->r->in.n, balance;
	/* Cells not shaped like an address are rows, not charges. */
	long long cost = jobs_input_cost(&w->r->in, 0);
	char ref[IDS_MAX + 16];
	enum jobs_status st;
	enum ledger_err lr;
	long long mine = 0;
	int found;
	enum db_err e;

	w->fail = INGEST_FAIL_NONE;
	w->lost = 0;
	if (jobs_lock(db, NULL, j->id, &st) != JOBS_OK ||
	    db_query_int(db, "SELECT ingest_owner = ? FROM jobs WHERE id = ?",
	    DB_ARGS(DBP_STR(w->owner), DBP_STR(j->id)), &mine, &found) !=
	    DB_OK)
		return DB_ERR_QUERY;
	if (st != JOBS_INGESTING || !mine) {
		w->lost = 1;
		return DB_ABORT;
	}
	/* An earlier attempt's rows (its worker died after writing). */
	if ((e = db_exec(db, "DELETE FROM job_emails WHERE job_id = ?",
	    DB_ARGS(DBP_STR(j->id)), NULL)) != DB_OK ||
	    (e = db_exec(db, "DELETE FROM job_chunks WHERE job_id = ?",
	    DB_ARGS(DBP_STR(j->id)), NULL)) != DB_OK)
		return e;
	if (!j->want_preview) {
		snprintf(ref, sizeof(ref), "job:%s:charge", j->id);
		lr = ledger_charge(db, j->pool_id, j->account_id, cost, ref,
		    &balance);
		if (lr == LEDGER_INSUFFICIENT) {
			w->fail = INGEST_FAIL_INSUFFICIENT_CREDITS;
			return DB_ABORT;
		}
		if (lr == LEDGER_RETRY)
			return DB_ERR_RETRY;
		if (lr != LEDGER_OK)
			return DB_ERR_QUERY;
	}
	if (jobs_write_rows(db, j->id, j->account_id, NULL, &w->r->in,
	    (const char *const *)w->r->originals) != JOBS_OK)
		return DB_ERR_QUERY;
	if ((e = db_exec(db, "UPDATE jobs SET total_emails = ?, "
	    "duplicates_removed = ?, original_header = ?, ingest_rows = ?, "
	    "ingest_bytes = file_size, status = ?, credits_charged = ?, "
	    "credits_needed = ?, ingest_owner = IF(? = 1, ingest_owner, NULL), "
	    "ingest_lease_expires = IF(? = 1, ingest_lease_expires, NULL) "
	    "WHERE id = ?", DB_ARGS(DBP_INT(n),
	    DBP_INT((long long)w->r->in.duplicates), DBP_STR(w->r->header), DBP_INT((long long)w->r->rows),
	    DBP_STR(jobs_status_names[j->want_preview ? JOBS_INGESTING :
	    JOBS_PENDING]), DBP_INT(j->want_preview ? 0 : cost), DBP_INT(cost),
	    DBP_INT(j->want_preview), DBP_INT(j->want_preview),
	    DBP_STR(j->id)), NULL)) != DB_OK)
		return e;
	/* The rows are the job now (include_original downloads read their
	 * cells, a preview refresh their addresses): the file goes with the
	 * transaction that wrote them, so a worker that dies before it
	 * commits leaves the file to the next one. */
	return upload_store_delete(db, j->id);
}

int
ingest_write(struct db *db, const struct ingest_job *j, const char *owner,
    const struct ingest_read *r, enum ingest_fail *fail)
{
	struct ingest_writing w = { j, owner, r, INGEST_FAIL_NONE, 0 };
	enum db_err e = db_tx_retry(db, ingest_write_work, &w);

	*fail = w.fail;
	if (e == DB_OK || (e == DB_ABORT && w.fail != INGEST_FAIL_NONE))
		return 0;
	if (e != DB_ABORT)
		log_error("event=ingest_write_failed job=%s error=\"%s\"",
		    j->id, db_error(db));
	return -1;
}

int
ingest_preview_done(struct db *db, const struct ingest_job *j,
    const char *owner, const char *preview)
{
	unsigned long long changed = 0;

	if (db_exec(db, "UPDATE jobs SET preview = ?, preview_refresh = "
	    "IF(preview_refresh_at <=> CAST(? AS DATETIME(3)), 0, "
	    "preview_refresh), "
	    "status = ?, ingest_owner = NULL, ingest_lease_expires = NULL "
	    "WHERE id = ? AND ingest_owner = ? AND status IN (?, ?)",
	    DB_ARGS(DBP_STR(preview), DBP_STR(j->refresh_at[0] ?
	    j->refresh_at : NULL),
	    DBP_STR(jobs_status_names[JOBS_AWAITING_CONFIRMATION]),
	    DBP_STR(j->id), DBP_STR(owner),
	    DBP_STR(jobs_status_names[JOBS_INGESTING]),
	    DBP_STR(jobs_status_names[JOBS_AWAITING_CONFIRMATION])), &changed)
	    != DB_OK)
		return -1;
	return changed == 1 ? 0 : -1;
}

void
ingest_fail(struct db *db, const struct ingest_job *j, enum ingest_fail f,
    const char *message)
{
	struct buf q;

	/* the message may carry the customer's email_column or
	 * column_mapping, or a source_url's server's text: cleaned */
	buf_init(&q, 1024);
	log_quote(&q, message, 512);
	log_info("event=ingest_failed job=%s code=%s message=%s", j->id,
	    ingest_fail_codes[f], buf_str(&q));
	buf_free(&q);
	jobend_fail(db, j->id, ingest_fail_codes[f], message);
	db_exec(db, "UPDATE jobs SET ingest_owner = NULL, "
	    "ingest_lease_expires = NULL WHERE id = ?",
	    DB_ARGS(DBP_STR(j->id)), NULL);
}
