/* upload_store.c: an upload's file in pieces in table upload_chunks
 * (upload_store.h). */
#include "jobs/upload_store.h"
#include "util/strparse.h"
#include <string.h>

void
upload_store_begin(struct upload_store_writer *w, struct db *db,
    const char *job_id)
{
	memset(w, 0, sizeof(*w));
	w->db = db;
	strparse_copy(w->job_id, sizeof(w->job_id), job_id);
	buf_init(&w->pending, UPLOAD_STORE_CHUNK);
}

static enum db_err
upload_store_flush(struct upload_store_writer *w)
{
	enum db_err e;

	if (w->pending.len == 0)
		return DB_OK;
	e = db_exec(w->db, "INSERT INTO upload_chunks (job_id, seq, data, "
	    "created_at) VALUES (?, ?, ?, UTC_TIMESTAMP(3))",
	    DB_ARGS(DBP_STR(w->job_id), DBP_INT(w->seq),
	    DBP_BLOB(w->pending.data, w->pending.len)), NULL);
	if (e == DB_OK) {
		w->seq++;
		buf_reset(&w->pending);
	}
	return e;
}

enum db_err
upload_store_write(struct upload_store_writer *w, const void *data,
    size_t len)
{
	const char *p = data;
	size_t room, n;
	enum db_err e;

	w->size += (long long)len;
	while (len > 0) {
		room = UPLOAD_STORE_CHUNK - w->pending.len;
		n = len < room ? len : room;
		if (buf_append(&w->pending, p, n) == -1)
			return DB_ERR_QUERY;
		p += n;
		len -= n;
		if (w->pending.len == UPLOAD_STORE_CHUNK &&
		    (e = upload_store_flush(w)) != DB_OK)
			return e;
	}
	return DB_OK;
}

enum db_err
upload_store_end(struct upload_store_writer *w)
{
	enum db_err e = upload_store_flush(w);

	buf_free(&w->pending);
	return e;
}

void
upload_store_abort(struct upload_store_writer *w)
{
	buf_free(&w->pending);
	if (w->seq > 0)
		upload_store_delete(w->db, w->job_id);
}

enum db_err
upload_store_delete(struct db *db, const char *job_id)
{
	return db_exec(db, "DELETE FROM upload_chunks WHERE job_id = ?",
	    DB_ARGS(DBP_STR(job_id)), NULL);
}

enum db_err
upload_store_read(struct db *db, const char *job_id, upload_store_fn fn,
    void *arg)
{
	struct db_res *r;
	enum db_err e;
	int seq, row, stop = 0;

	for (seq = 0; !stop; seq++) {
		if ((e = db_query(db, "SELECT data FROM upload_chunks WHERE "
		    "job_id = ? AND seq = ?", DB_ARGS(DBP_STR(job_id),
		    DBP_INT(seq)), &r)) != DB_OK)
			return e;
		if ((row = db_res_next(r)) == 1)
			stop = fn(arg, db_res_str(r, 0), db_res_len(r, 0)) == -1;
		db_res_free(r);
		if (row == -1)
			return DB_ERR_QUERY;
		if (row == 0)
			return DB_OK;
	}
	return DB_ABORT;
}

long long
upload_store_purge_orphans(struct db *db, long max_age)
{
	unsigned long long n = 0;

	if (db_exec(db, "DELETE c FROM upload_chunks c LEFT JOIN jobs j ON "
	    "j.id = c.job_id WHERE j.id IS NULL AND c.created_at < "
	    "UTC_TIMESTAMP(3) - INTERVAL ? SECOND", DB_ARGS(DBP_INT(max_age)),
	    &n) != DB_OK)
		return -1;
	return (long long)n;
}
