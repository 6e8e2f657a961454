/* complainers.h: the known-complainer list (addresses that report mail as
 * spam or abuse), imported by the operator with svcadm. */
#ifndef SVC_COMPLAINERS_H
#define SVC_COMPLAINERS_H
#include "core/db.h"
#include <stdio.h>

/* normalised: the addr_parse de-duplication key. */
enum db_err complainers_contains(struct db *, const char *normalised,
	    int *found);
/* Many at once, in a few statements: found[i] is set to 1 or 0. */
enum db_err complainers_contains_many(struct db *,
	    const char *const *normalised, size_t n, unsigned char *found);
/* One address per line ('#' comments, blank lines skipped). Counts what
 * was added, what was there already and what was not an address. */
struct complainers_counts {
	unsigned long	 added, existing, invalid;
};
enum db_err complainers_import(struct db *, FILE *, const char *source,
	    struct complainers_counts *);
#endif
