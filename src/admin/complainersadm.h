/* complainersadm.h: svcadm's side of the operator's known-complainer list,
 * kept as keyed hashes under feedback_hash_key (engine/complainers.h).
 * Each returns 0, or -1 with why in err. */
#ifndef SVC_COMPLAINERSADM_H
#define SVC_COMPLAINERSADM_H
#include "core/db.h"
#include "engine/complainers.h"
#include "util/buf.h"
#include "util/conf.h"
#include <stdio.h>

/* "svcadm db migrate"'s last step, after the key files: rows left in clear
 * by schema versions before 25 replaced by their hashes, how many said on
 * out. Without a key nothing is hashed, with a warning on stderr. */
int	 complainersadm_hash_clear(struct db *, struct conf *, FILE *out,
	    struct buf *err);
/* "svcadm complainers import": one address per line of in. */
int	 complainersadm_import(struct db *, const struct conf *, FILE *in,
	    const char *source, struct complainers_counts *,
	    struct buf *err);
#endif
