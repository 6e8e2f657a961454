/* caps.h: what one account may hold in the shared database (issue 25,
 * item 2): jobs in flight, raw upload bytes stored, rows that cost no
 * credit made today, suppression entries. Each count is read inside the
 * caller's transaction after caps_lock, so that two requests of the same
 * account are counted one after the other and a refused one writes
 * nothing. The limits are settings (conf.h); the caller maps a refusal to
 * its answer. */
#ifndef SVC_CAPS_H
#define SVC_CAPS_H
#include "core/db.h"

/* Inside the caller's transaction: locks the account's row, so that the
 * counts below stay true until it commits. */
enum db_err caps_lock(struct db *, const char *account);
/* Jobs of the account not yet completed, failed or cancelled (ingesting,
 * awaiting confirmation, pending, processing), of every type. */
enum db_err caps_jobs_in_flight(struct db *, const char *account,
	    long long *n);
/* Bytes of raw upload files the account has stored in upload_chunks (the
 * file_size of its jobs whose pieces are still there; while a source_url
 * downloads, the length its server announced), but for the job except_job
 * (NULL: every job). */
enum db_err caps_upload_bytes(struct db *, const char *account,
	    const char *except_job, long long *n);
/* Rows of the account's jobs made since 00:00 UTC today that cost no
 * credit (sandbox addresses, entries that are not addresses). */
enum db_err caps_free_rows_today(struct db *, const char *account,
	    long long *n);
/* Entries on the account's suppression list. */
enum db_err caps_suppressions(struct db *, const char *account,
	    long long *n);
#endif
