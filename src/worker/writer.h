/* writer.h: svc-worker's database writer: a thread with a MariaDB
 * connection of its own that writes what the SMTP loop hands over (a
 * chunk's results, a chunk's end) in the order it was handed over, so that
 * the loop never waits for the database, and a second one that writes the
 * results' verdict cache entries beside it.
 * What the loop must act on (a job that ended, a lease lost, a database
 * failure) comes back as outcomes. */
#ifndef SVC_WORKER_WRITER_H
#define SVC_WORKER_WRITER_H
#include "jobs/jobqueue.h"
#include "engine/vcache.h"
#include "util/buf.h"
#include "util/conf.h"
#include <stddef.h>

struct writer;

enum writer_kind {
	WRITER_RESULTS,		/* jobqueue_write (and, with one lane,
				 * vcache_put_many) */
	WRITER_FINISH,		/* jobqueue_finish */
	WRITER_CACHE,		/* vcache_put_many alone */
	WRITER_KIND__MAX
};

/* What a task came to when it was not plain success. */
struct writer_outcome {
	enum writer_kind	 kind;
	struct jobqueue_chunk	 c;
	enum jobqueue_err	 rc;	/* GONE, LOST or DB */
};

/* Connects (NULL with a message in err when the results' connection
 * cannot be made; without the cache's, the cache entries go with the
 * results) and starts the threads. owner: the lease owner the chunks are held by. */
struct writer *writer_start(const struct conf *, const char *owner,
	    long retry_seconds, struct buf *err);
/* Hands over a chunk's results and cache entries: the writer owns and
 * frees both arrays (either may be NULL with a count of 0). With no
 * results the task still locks the job row: a cancelled job comes back
 * as a GONE outcome. -1 (nothing handed over, arrays freed) when out of
 * memory. */
int	 writer_results(struct writer *, const struct jobqueue_chunk *,
	    struct jobqueue_result *res, size_t nres,
	    struct vcache_entry *cache, size_t ncache);
/* After the chunk's last results: done, or pending again (jobqueue.h). */
int	 writer_finish(struct writer *, const struct jobqueue_chunk *);
/* Results and chunk ends handed over and not done yet (cache entries
 * not counted: nothing waits for them but a chunk's end). */
size_t	 writer_backlog(struct writer *);
/* Copies out up to max outcomes that came back; returns how many. */
size_t	 writer_outcomes(struct writer *, struct writer_outcome *, size_t max);
/* Waits until every task handed over is done (cache entries too). */
void	 writer_drain(struct writer *);
/* Drains, stops the threads and closes their connections. */
void	 writer_stop(struct writer *);
#endif
