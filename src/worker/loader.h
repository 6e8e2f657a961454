/* loader.h: svc-worker's chunk loader: a thread with a MariaDB connection
 * of its own that claims chunks (jobqueue_claim) and reads their rows
 * (jobqueue_rows) when the SMTP loop asks, so that the loop goes on
 * stepping its sessions meanwhile instead of waiting for the claim's
 * transaction and the rows (as the writer thread takes the results off
 * it). One claim at a time: loader_ask starts it, loader_take gives its
 * answer back, and loader_fd is readable while an answer waits. */
#ifndef SVC_WORKER_LOADER_H
#define SVC_WORKER_LOADER_H
#include "jobs/jobqueue.h"
#include "util/buf.h"
#include "util/conf.h"
#include <stddef.h>

#define LOADER_CLAIM_MAX	4	/* chunks a claim takes at most: sessions
					 * start while the next ones come */

struct loader;

struct loader_chunk {
	struct jobqueue_chunk	 c;
	struct jobqueue_row	*rows;	/* the taker frees them
					 * (jobqueue_rows_free) */
	size_t			 n;	/* rows that need work */
	size_t			 total;	/* jobqueue_rows' *total */
};

struct loader_answer {
	/* OK; or DB: the database failed, and the chunks listed (rows NULL
	 * where they were not read) may be leased to the owner still */
	enum jobqueue_err	 rc;
	size_t			 want;	/* chunks asked for */
	size_t			 n;
	struct loader_chunk	 ch[LOADER_CLAIM_MAX];
};

/* Connects (NULL with a message in err when it cannot) and starts the
 * thread; chunks are claimed for owner for lease_seconds. */
struct loader *loader_start(const struct conf *, const char *owner,
	    long lease_seconds, struct buf *err);
/* Asks for a claim of want (1..LOADER_CLAIM_MAX) chunks; -1 when one is
 * under way or its answer is not taken yet, or want is out of range. */
int	 loader_ask(struct loader *, size_t want);
/* A claim asked for whose answer is not taken yet. */
int	 loader_busy(struct loader *);
/* Takes the answer of the claim asked for: 1 (into *a), or 0 when there
 * is none yet; with wait set, waits for it while a claim is under way. */
int	 loader_take(struct loader *, struct loader_answer *a, int wait);
/* Readable while an answer waits to be taken. */
int	 loader_fd(const struct loader *);
/* Waits for a claim under way, stops the thread and closes the
 * connection; an answer not taken is given back (its chunks released on
 * the loader's connection, or left to their leases if that fails). */
void	 loader_stop(struct loader *);
#endif
