/* complainers.h: the known-complainer list (addresses that report mail as
 * spam or abuse), imported by the operator with svcadm, and each account's
 * own list, filled by the complaints its delivery feedback reports. Kept as keyed
 * hashes (util/addrhash.h) of the normalised addresses under the delivery
 * feedback's key (feedback_hash_key), as account_complainers is: that key
 * is never rotated, so the list stays findable; the verdict cache's key is
 * rotated on purpose and is not used here. */
#ifndef SVC_COMPLAINERS_H
#define SVC_COMPLAINERS_H
#include "core/db.h"
#include "util/addrhash.h"
#include "util/conf.h"
#include <stdio.h>

/* The key is addrhash_key_from_conf's of CONF_FEEDBACK_HASH_KEY; without
 * one nothing is found and nothing can be imported.
 * normalised: the addr_parse de-duplication key. key NULL: not found. */
enum db_err complainers_contains(struct db *, const struct addrhash_key *,
	    const char *normalised, int *found);
/* Many at once, in a few statements: found[i] is set to 1 or 0. */
enum db_err complainers_contains_many(struct db *,
	    const struct addrhash_key *, const char *const *normalised,
	    size_t n, unsigned char *found);
/* The verifying account's own list (account_complainers: the complaints
 * its delivery feedback reported, jobs/feedback.c), hashed under the same
 * key; read like the operator's, many at once or one. key or account
 * NULL: not found (without the key, feedback cannot have filled it). */
enum db_err complainers_account_contains_many(struct db *,
	    const struct addrhash_key *, const char *account,
	    const char *const *normalised, size_t n, unsigned char *found);
enum db_err complainers_account_contains(struct db *,
	    const struct addrhash_key *, const char *account,
	    const char *normalised, int *found);
/* One address per line ('#' comments, blank lines skipped). Counts what
 * was added, what was there already and what was not an address. */
struct complainers_counts {
	unsigned long	 added, existing, invalid;
};
enum db_err complainers_import(struct db *, const struct addrhash_key *,
	    FILE *, const char *source, struct complainers_counts *);
/* Rows left in clear by schema versions before 25 replaced by their
 * hashes, all in one transaction (all or none): *n is how many. */
enum db_err complainers_hash_clear(struct db *, const struct addrhash_key *,
	    unsigned long *n);
#endif
