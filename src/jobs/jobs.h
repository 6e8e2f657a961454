/* jobs.h: bulk and batch jobs as the API sees them: the input (cleaned and
 * de-duplicated addresses), creating a job (rows, chunks and charge in one
 * transaction, which the caller completes), reading, listing and
 * cancelling. The worker's side is jobqueue.h. */
#ifndef SVC_JOBS_H
#define SVC_JOBS_H
#include "core/db.h"
#include "jobs/retention.h"
#include "util/ids.h"
#include <jansson.h>

#define JOBS_BULK_MAX 100000
#define JOBS_BATCH_MAX 1000000
#define JOBS_CHUNK_SIZE 200
#define JOBS_NAME_MAX 200
/* The spec's anchor for batch speed, used for estimated_completion. */
#define JOBS_ESTIMATE_PER_MINUTE 500

enum jobs_type {
	JOBS_TYPE_BULK,
	JOBS_TYPE_UPLOAD,
	JOBS_TYPE_BATCH,
	JOBS_TYPE__MAX
};
extern const char *const jobs_type_names[JOBS_TYPE__MAX];

enum jobs_status {
	JOBS_INGESTING,
	JOBS_AWAITING_CONFIRMATION,
	JOBS_PENDING,
	JOBS_PROCESSING,
	JOBS_COMPLETED,
	JOBS_FAILED,
	JOBS_CANCELLED,
	JOBS_STATUS__MAX
};
extern const char *const jobs_status_names[JOBS_STATUS__MAX];

enum jobs_err {
	JOBS_OK,
	JOBS_EMPTY,		/* no address at all */
	JOBS_TOO_MANY,		/* more unique addresses than allowed */
	JOBS_BAD_ITEM,		/* an element is not a string (index given) */
	JOBS_INSUFFICIENT,	/* credits short: nothing written */
	JOBS_NOT_FOUND,
	JOBS_NOT_CANCELLABLE,
	JOBS_NOMEM,
	JOBS_DB,
	JOBS_TOO_BIG,		/* an input would pass its memory_max */
	JOBS_TOO_MANY_JOBS,	/* the account's jobs in flight at the cap */
	JOBS_FREE_ROWS_LIMIT,	/* today's rows costing nothing at the cap */
	JOBS_ERR__MAX
};

/* The unique entries of a job in input order (jobs_input.c): trimmed, and
 * de-duplicated on their normal form: an address's normalised form
 * (addr.h: ASCII-lower-cased local part, A-label domain), the trimmed,
 * ASCII-lower-cased text for an entry that is not an address. The first
 * spelling is the one kept. The strings live in one arena of the input. */
struct jobs_input {
	char		**emails;
	char		**domains;	/* A-label domain, "" when not an address */
	size_t		 n;
	size_t		 duplicates;
	size_t		 sandbox;	/* addresses at the sandbox domain */
	/* entries that are not shaped like an address (addr_parse refuses
	 * them; their domain is ""): kept as rows, verified invalid_syntax,
	 * never charged (spec, credit rule 2) */
	size_t		 invalid;
	struct jobs_input_store *store;	/* private: arena, de-duplication */
};

/* An empty input that takes at most max unique entries; sandbox_domain
 * (A-label) must outlive the input. 0, or -1 when out of memory. */
int	 jobs_input_init(struct jobs_input *, size_t max,
	    const char *sandbox_domain);
/* One entry as given: JOBS_OK (also for a blank or repeated entry),
 * JOBS_TOO_MANY (one unique entry more than max), JOBS_TOO_BIG (keeping
 * it would make jobs_input_bytes pass memory_max, even for a moment) or
 * JOBS_NOMEM. */
enum jobs_err jobs_input_add(struct jobs_input *, const char *, size_t);
/* The bytes the input may hold (no limit after jobs_input_init). */
void	 jobs_input_set_memory_max(struct jobs_input *, size_t);
/* After the last entry: JOBS_OK, or JOBS_EMPTY when no entry was kept.
 * Frees what only de-duplication needed. */
enum jobs_err jobs_input_end(struct jobs_input *);
/* The rows of the input that are charged: its addresses, less those at
 * the sandbox domain when sandbox_free (a sandbox key). */
long long jobs_input_cost(const struct jobs_input *, int sandbox_free);
/* The memory the input holds, in bytes (its allocations, not malloc's
 * overhead; the pointer arrays by their capacity). */
size_t	 jobs_input_bytes(const struct jobs_input *);
void	 jobs_input_free(struct jobs_input *);

struct jobs_new {
	const char	*account_id;
	const char	*pool_id;
	enum jobs_type	 type;
	const char	*name;
	int		 sandbox;	/* no address is charged */
	/* Rows at this (A-label) domain are free: the sandbox domain for a
	 * sandbox key, else NULL. Entries that are not addresses are free
	 * too. cost must be the number of the other rows: jobs_input_cost. */
	const char	*free_domain;
	long long	 cost;
	const char	*webhook_url;	/* NULL: none */
	const char	*webhook_secret;
	const char	*callback_data;	/* JSON text or NULL */
	struct retention_ask retention;
	/* The account's caps (caps.h), checked under the account's lock
	 * before anything is written: jobs not yet ended, and rows costing
	 * nothing (in->n - cost) in the jobs made since 00:00 UTC. */
	long long	 jobs_in_flight_max;
	long long	 free_rows_per_day;
};

/* What creating a job did. */
struct jobs_created {
	char		 id[IDS_MAX];
	/* The pool's balance after the charge; on JOBS_INSUFFICIENT, what it
	 * holds, short of the cost. */
	long long	 balance;
	/* On JOBS_TOO_MANY_JOBS and JOBS_FREE_ROWS_LIMIT: what the account
	 * has already (jobs in flight, or today's free rows). */
	long long	 used;
};

/* Writes the job, in one transaction it begins: the charge (ledger ref
 * job:<id>:charge), the job row, one row per address in input order and
 * the chunks. On JOBS_OK the transaction is left open, so that the caller
 * adds what must stand or fall with the job (the Idempotency-Key answer:
 * idempotency_finish) and then calls db_commit (or db_rollback); on any
 * error it is rolled back and nothing is written (JOBS_TOO_MANY_JOBS and
 * JOBS_FREE_ROWS_LIMIT: the caps of spec, with out->used). */
enum jobs_err jobs_create(struct db *, const struct jobs_new *,
	    const struct jobs_input *, struct jobs_created *);

/* Inside the caller's transaction: the job's rows (one per address, in
 * input order, with the suppression mark from the account's list and, for
 * an upload, its original cells as JSON text; originals may be NULL) and
 * its chunks (addresses grouped by domain). Rows at free_domain (NULL:
 * none) and entries that are not addresses are not charged. */
enum jobs_err jobs_write_rows(struct db *, const char *job_id,
	    const char *account_id, const char *free_domain,
	    const struct jobs_input *, const char *const *originals);

/* One job as stored. */
struct jobs_row {
	char		 id[IDS_MAX], account_id[IDS_MAX], pool_id[IDS_MAX];
	enum jobs_type	 type;
	enum jobs_status status;
	char		 name[JOBS_NAME_MAX * 4 + 1];
	long long	 total, duplicates, processed;
	long long	 counts[6];	/* valid, invalid, risky, catch_all, disposable, unknown */
	long long	 charged, refunded;
	char		 created_at[32], started_at[32], completed_at[32];
	char		 error_code[65], error_message[501];
	char		*webhook_url, *callback_data;	/* NULL when none */
	double		 seconds_running;	/* since started_at */
	char		*preview;	/* an upload's preview (JSON), or NULL */
	char		*original_header;	/* an upload's columns (JSON) */
	long long	 ingest_rows, ingest_bytes, file_size;	/* uploads */
	int		 downloading;	/* a source_url not downloaded yet */
	long long	 retention_days;	/* 0: before it was stored */
	/* ISO 8601, "" when not known yet (the job has not ended) or when
	 * its data was erased already */
	char		 data_expires_at[32];
	char		 data_erased_at[32];	/* "" while not erased */
};
extern const char *const jobs_count_names[6];

/* account NULL: any. JOBS_NOT_FOUND for another account's job. */
enum jobs_err jobs_get(struct db *, const char *account, const char *id,
	    struct jobs_row *);
void	 jobs_row_free(struct jobs_row *);
typedef int (*jobs_each_fn)(void *, const struct jobs_row *);
enum jobs_err jobs_list(struct db *, const char *account, const char *status,
	    const char *type, long page, long limit, long long *total,
	    jobs_each_fn, void *);
/* Cancels a job that is ingesting, awaiting confirmation, pending or
 * processing, and refunds its unprocessed charged addresses
 * (credits_charged - charged_done; ref job:<id>:refund). */
enum jobs_err jobs_cancel(struct db *, const char *account, const char *id,
	    long long *refunded);
/* What cancelling or failing a job gives back: its charged rows not yet
 * done (charged - charged_done), never more than is left unrefunded. */
long long jobs_unprocessed_refund(long long charged, long long charged_done,
	    long long refunded);

/* The enum of a type or status name as stored (the first one for a name
 * not known). */
enum jobs_type	 jobs_type_of(const char *);
enum jobs_status jobs_status_of(const char *);
/* Being verified: pending or processing. */
int	 jobs_status_active(enum jobs_status);
/* Inside the caller's transaction: locks the job's row (every writer of a
 * job's rows and counters takes it first) and gives its status.
 * JOBS_NOT_FOUND for no such job, or another account's (account NULL:
 * any). */
enum jobs_err jobs_lock(struct db *, const char *account, const char *id,
	    enum jobs_status *);
/* Inside the caller's transaction: every chunk of the job done, none
 * leased (the job ended). */
enum db_err jobs_chunks_done(struct db *, const char *id);
#endif
