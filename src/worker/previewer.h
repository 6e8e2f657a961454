/* previewer.h: the free List Health Preview of an upload job, computed by
 * svc-worker: the free checks on every unique address (syntax, disposable,
 * role, free provider, the account's suppression list, DNS/MX through the
 * engine's cache, with the lookups the cache cannot answer made by a few
 * resolver threads at once), an SMTP sample of min(200, 2%) of the rows
 * that need SMTP drawn at random and verified at once (verify_many.h), and
 * the estimate (jobs/preview.h). Nothing is charged. */
#ifndef SVC_WORKER_PREVIEWER_H
#define SVC_WORKER_PREVIEWER_H
#include "core/db.h"
#include "engine/verify.h"
#include "util/conf.h"
#include <stddef.h>

/* A job's unique addresses and their A-label domains ("" for an entry
 * that is not an address), as jobs_input holds them. */
struct previewer_list {
	char		**emails;
	char		**domains;
	size_t		 n;
	long long	 duplicates;
};

/* The preview object as JSON text (free it), or NULL when the database
 * failed or memory ran out. */
char	*previewer_run(const struct conf *, struct verify_engine *,
	    struct db *, const char *account, const struct previewer_list *);
#endif
