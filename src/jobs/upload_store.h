/* upload_store.h: an upload's file in MariaDB (table upload_chunks), in
 * pieces of UPLOAD_STORE_CHUNK bytes keyed by the id of the job it
 * belongs to, so that no process holds a whole file and a worker on any
 * host can read it. svc-api writes an uploaded file while it streams in;
 * svc-worker writes a source_url's download the same way, and reads
 * either back piece by piece. */
#ifndef SVC_UPLOAD_STORE_H
#define SVC_UPLOAD_STORE_H
#include "core/db.h"
#include "util/buf.h"
#include "util/ids.h"
#include <stddef.h>

#define UPLOAD_STORE_CHUNK (1024 * 1024)
/* The largest file: 50 MB (the spec), counted in MiB. */
#define UPLOAD_STORE_FILE_MAX (50LL * 1024 * 1024)

struct upload_store_writer {
	struct db	*db;
	char		 job_id[IDS_MAX];
	struct buf	 pending;	/* less than one piece */
	int		 seq;		/* pieces written */
	long long	 size;		/* bytes given so far */
};

/* Starts the file of job_id (no piece is written until one is full). */
void	 upload_store_begin(struct upload_store_writer *, struct db *,
	    const char *job_id);
/* Appends bytes; each full piece is one INSERT (autocommit). */
enum db_err upload_store_write(struct upload_store_writer *, const void *,
	    size_t);
/* Writes the last piece and frees the writer. */
enum db_err upload_store_end(struct upload_store_writer *);
/* Frees the writer and deletes what it wrote. */
void	 upload_store_abort(struct upload_store_writer *);
/* Deletes the pieces of a job's file. */
enum db_err upload_store_delete(struct db *, const char *job_id);
/* Hands the file's bytes to fn piece by piece (one SELECT per piece, so a
 * reader holds one piece at a time); stops at fn's -1 (returns DB_ABORT). */
typedef int (*upload_store_fn)(void *arg, const void *data, size_t len);
enum db_err upload_store_read(struct db *, const char *job_id,
	    upload_store_fn, void *arg);
/* Deletes pieces older than max_age seconds whose job does not exist (a
 * responder that died in the middle of an upload); returns rows or -1. */
long long upload_store_purge_orphans(struct db *, long max_age);
#endif
