/* jobqueue.h: the verification side of jobs in MariaDB, as svc-worker uses
 * it: claiming chunks of a job under a lease (SELECT ... FOR UPDATE SKIP
 * LOCKED), renewing and releasing leases, reading a chunk's addresses,
 * writing results and the job's counters in one transaction under the job
 * row lock (so cancellation's refund of unprocessed addresses stays exact),
 * and finishing chunks: the last one completes the job (jobend.h). */
#ifndef SVC_JOBQUEUE_H
#define SVC_JOBQUEUE_H
#include "core/db.h"
#include "engine/verdict.h"
#include "engine/verify.h"
#include <stddef.h>
#include <time.h>

#define JOBQUEUE_ID_MAX 40
#define JOBQUEUE_OWNER_MAX 100

enum jobqueue_err {
	JOBQUEUE_OK,
	JOBQUEUE_GONE,		/* the job is no longer pending or processing
				 * (cancelled, failed, completed): nothing was
				 * written, the chunk is marked done */
	JOBQUEUE_LOST,		/* the chunk's lease belongs to someone else */
	JOBQUEUE_DB,		/* the database failed (after retries) */
	JOBQUEUE_ERR__MAX
};
extern const char *const jobqueue_err_names[JOBQUEUE_ERR__MAX];

struct jobqueue_chunk {
	char	 job_id[JOBQUEUE_ID_MAX + 1];
	/* the job's account, read by the claim's own statement (its own
	 * complainer list counts in the chunk's verdicts), and whether that
	 * list had any address at the claim (none: nothing to look up) */
	char	 account[JOBQUEUE_ID_MAX + 1];
	int	 account_complainers;
	int	 chunk;
	int	 attempts;		/* claims so far, this one included */
	/* set by the worker before jobqueue_finish: a chunk it hands back
	 * with addresses left (they wait for a paced host) is claimable
	 * again only this many seconds later; 0: at once */
	long	 defer_s;
};

/* One address of a chunk to verify (pending, or retry that is due). */
struct jobqueue_row {
	int	 seq;
	int	 attempts;		/* greylisted attempts so far */
	char	*email;
	char	*domain;		/* A-label domain, "" if not an address */
};

/* What is written for one address: a result (state done) or, with retry
 * set, "greylisted: try again later" (state retry). */
struct jobqueue_result {
	int			 seq;
	int			 retry;
	long			 retry_after_s;	/* retry: 0 is retry_seconds */
	enum verdict_class	 classification;
	enum verdict_status	 status;
	enum verdict_reason	 reason;
	enum verdict_sub	 sub;
	enum verdict_catch_all	 catch_all;
	int			 score;
	enum calibration_basis	 score_basis;
	int			 free_provider, role, disposable, accept_all;
	char			 provider[PROVIDERS_NAME_MAX];	/* "": NULL */
	char			 mx_host[DNS_NAME_MAX + 1];	/* "": NULL */
	time_t			 verified_at;
};

#define JOBQUEUE_CLAIM_MAX 64	/* chunks a claim takes at most */

/* Claims up to max (at most JOBQUEUE_CLAIM_MAX) chunks that are pending
 * (and due) or whose lease has expired, for owner, for lease_seconds; *n
 * gets how many. Jobs claimed
 * for the first time go from pending to processing (started_at set). */
enum jobqueue_err jobqueue_claim(struct db *, const char *owner,
	    long lease_seconds, struct jobqueue_chunk *out, size_t max,
	    size_t *n);
/* Extends the lease; JOBQUEUE_LOST when the chunk is no longer ours. */
enum jobqueue_err jobqueue_renew(struct db *, const struct jobqueue_chunk *,
	    const char *owner, long lease_seconds);
/* Gives a chunk back (pending, lease cleared), results written stay. */
enum jobqueue_err jobqueue_release(struct db *, const struct jobqueue_chunk *,
	    const char *owner);
/* Gives back every chunk leased to owner (a run that lost its database
 * and dropped its chunks without a word); *n how many. */
enum jobqueue_err jobqueue_release_owner(struct db *, const char *owner,
	    unsigned long long *n);

/* The chunk's addresses that need work, in input order; *total gets *n,
 * or when none needs work the number of rows the chunk has in any state
 * (0: it has none). Free with jobqueue_rows_free. */
enum jobqueue_err jobqueue_rows(struct db *, const struct jobqueue_chunk *,
	    struct jobqueue_row **rows, size_t *n, size_t *total);
void	 jobqueue_rows_free(struct jobqueue_row *, size_t n);

void	 jobqueue_result_set(struct jobqueue_result *, int seq,
	    const struct verify_result *);
/* Writes results (rows not done yet only) and adds what changed to the
 * job's processed_emails and count_* columns, in one transaction that
 * first locks the job row. Retry rows get retry_at = now + retry_seconds
 * (or their own retry_after_s) and one more attempt. *done gets the rows
 * that became done. GONE: the job was cancelled (or ended) meanwhile:
 * nothing written, chunk done. */
enum jobqueue_err jobqueue_write(struct db *, const struct jobqueue_chunk *,
	    const struct jobqueue_result *, size_t n, long retry_seconds,
	    size_t *done);
/* After a pass over a chunk: done when every row is done (owner kept in
 * done_by), else pending again (not_before: the earliest retry_at of its
 * retry rows, or when rows are still pending: now, or c->defer_s seconds
 * later). The last chunk to be
 * done completes the job (*completed set): status completed, refund of
 * unknown results for bulk and upload jobs (once, ledger ref
 * job:<id>:refund), job.completed event: jobend_complete. */
enum jobqueue_err jobqueue_finish(struct db *, const struct jobqueue_chunk *,
	    const char *owner, int *completed);
/* A chunk handed back with defer_s, still pending, is claimable at once
 * (*changed: whether it was still waiting). */
enum jobqueue_err jobqueue_hasten(struct db *, const char *job_id, int chunk,
	    int *changed);
#endif
