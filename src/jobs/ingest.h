/* ingest.h: svc-worker's ingestion of an upload job: its stored file read
 * (ingest_read.h) into the job's unique addresses, each with the original
 * cells of the row it first appeared in; the header row and the email
 * column chosen by the spec's rules (ingest_columns.h); then the rows
 * written and the job moved on by the spec's state table: to
 * awaiting_confirmation with its preview, to pending charged once, or to
 * failed with one of the ingestion failure codes. */
#ifndef SVC_INGEST_H
#define SVC_INGEST_H
#include "core/db.h"
#include "jobs/ingest_columns.h"
#include "jobs/jobs.h"
#include "util/ids.h"

/* The spec's ingestion failure codes. */
enum ingest_fail {
	INGEST_FAIL_NONE,
	INGEST_FAIL_NO_EMAILS,
	INGEST_FAIL_TOO_MANY,
	INGEST_FAIL_COLUMN_NOT_FOUND,
	INGEST_FAIL_BAD_MAPPING,
	INGEST_FAIL_INVALID_FILE,
	INGEST_FAIL_FILE_UNAVAILABLE,
	INGEST_FAIL_SOURCE_UNREACHABLE,
	INGEST_FAIL_FILE_TOO_LARGE,
	INGEST_FAIL_INSUFFICIENT_CREDITS,
	INGEST_FAIL_SOURCE_TOO_SLOW,
	INGEST_FAIL_STORAGE_EXCEEDED,
	INGEST_FAIL__MAX
};
extern const char *const ingest_fail_codes[INGEST_FAIL__MAX];

#define INGEST_MESSAGE_MAX 300
/* The original cells kept for a job's addresses, in bytes of JSON. */
#define INGEST_ORIGINALS_MAX (160 * 1024 * 1024)

/* An upload job as a worker claimed it. */
struct ingest_job {
	char		 id[IDS_MAX], account_id[IDS_MAX], pool_id[IDS_MAX];
	char		 format[8];	/* "" for a source_url not fetched */
	char		 source_url[2049];
	enum ingest_rule rule;
	char		 column[256];	/* email_column or mapping's name */
	int		 want_preview;
	int		 refresh;	/* rows written: only the preview is due */
	/* the refresh request served ("YYYY-MM-DD hh:mm:ss.fff", "" none) */
	char		 refresh_at[32];
	long long	 file_size;
};

/* What reading the file gave. */
struct ingest_read {
	struct jobs_input in;		/* the unique addresses, input order */
	char		**originals;	/* per entry: JSON array of its cells */
	char		*header;	/* JSON array of the column names */
	unsigned long long rows;	/* rows read, header included */
	enum ingest_fail fail;
	char		 message[INGEST_MESSAGE_MAX];
	struct ingest_arena *arena;	/* private: the originals' memory */
};

/* Called about once a second while the file is read (rows and bytes so
 * far); returns -1 to stop (the lease was lost, the job cancelled). */
typedef int (*ingest_progress_fn)(void *arg, unsigned long long rows,
	    long long bytes);

enum ingest_err {
	INGEST_OK,		/* read: r->fail says whether it is usable */
	INGEST_STOPPED,		/* progress returned -1 */
	INGEST_DB,
	INGEST_NOMEM,
	INGEST_ERR__MAX
};

/* Claims one upload job that waits for a worker (ingesting, or awaiting
 * confirmation with a preview refresh asked for) whose lease is free: 1
 * and *job, 0 when there is none. The lease lasts lease seconds; renew it
 * with ingest_renew. */
int	 ingest_claim(struct db *, const char *owner, long lease,
	    struct ingest_job *);
/* Renews the lease for lease seconds and records progress (rows or bytes
 * below 0: left as they are): 0, or -1 when the job is no longer this
 * owner's (cancelled, or the lease was taken over). */
int	 ingest_renew(struct db *, const struct ingest_job *,
	    const char *owner, long lease, long long rows, long long bytes);
/* Gives the lease back (a worker that stops): any worker may claim the
 * job at once. */
void	 ingest_release(struct db *, const struct ingest_job *,
	    const char *owner);
/* Reads the job's stored file into r (free with ingest_read_free). */
enum ingest_err ingest_read_file(struct db *, const struct ingest_job *,
	    struct ingest_read *, ingest_progress_fn, void *arg);
void	 ingest_read_free(struct ingest_read *);
/* Writes the rows read (any earlier attempt's rows replaced) and, in the
 * same transaction, moves the job on: with a preview wanted it stays
 * ingesting for the preview (ingest_preview_done ends it); without, it
 * is charged its unique count and pending, or failed with
 * insufficient_credits and nothing written. -1 when the job is no longer
 * this owner's. */
int	 ingest_write(struct db *, const struct ingest_job *, const char *owner,
	    const struct ingest_read *, enum ingest_fail *fail);
/* Stores a computed preview (JSON text): the job goes to (or stays)
 * awaiting_confirmation, and the refresh flag is cleared unless a refresh
 * was asked for after the one served (j->refresh_at): that one is
 * computed again. */
int	 ingest_preview_done(struct db *, const struct ingest_job *,
	    const char *owner, const char *preview);
/* Fails the job with a failure code and message (nothing was charged;
 * job.failed goes to the outbox). */
void	 ingest_fail(struct db *, const struct ingest_job *,
	    enum ingest_fail, const char *message);
#endif
