/* cacheadm.h: svcadm's side of the verdict cache's key (engine/cachekey.h):
 * create it when missing (svcadm db migrate), rotate it, and show the
 * stored hash of an address (to find or forget its cache row). */
#ifndef SVC_CACHEADM_H
#define SVC_CACHEADM_H
#include "core/db.h"
#include "engine/cachekey.h"
#include <stdio.h>

/* A key file written when cache_hash_key_file names a missing file: 1 when
 * one was written, 0 when a key was there already, -1 with err. */
int	 cacheadm_ensure_key(const struct conf *, struct buf *err);
/* A new key in cache_hash_key_file, then every verdict_cache row deleted
 * (they were stored under the old key): 0 with *deleted, or -1 with err. */
int	 cacheadm_rotate(struct db *, const struct conf *,
	    unsigned long long *deleted, struct buf *err);
/* The stored hash of each address (one a line, or "-": lines read from
 * stdin) under the current key, one a line on out (an empty line for what
 * is not an address): 0, or -1 with err (no key). */
int	 cacheadm_hash(const struct conf *, char *const *addresses, size_t n,
	    FILE *out, struct buf *err);
#endif
