/* cachekey.h: the key of the shared verdict cache (util/addrhash.h), from
 * the setting cache_hash_key_file (looked at again at the first address
 * after CACHEKEY_RECHECK_MS and re-read when it was replaced, so "svcadm
 * cache rotate-key", which waits that long before it empties the cache,
 * reaches running responders and workers) or else cache_hash_key. Without a key the verdict cache is off:
 * cachekey_hash says so and nothing is looked up or stored. */
#ifndef SVC_CACHEKEY_H
#define SVC_CACHEKEY_H
#include "util/addrhash.h"
#include "util/buf.h"
#include "util/conf.h"
#include <time.h>
#include <stdint.h>
#include <sys/types.h>

/* How often a running process looks whether the key file was replaced: a
 * stat(2) per address cost the preview of 500,000 addresses about a second
 * of CPU on a VM where a system call costs 1.6 us (bench-uploads). */
#define CACHEKEY_RECHECK_MS 1000

struct cachekey {
	struct addrhash_key	 key;
	int			 have;		/* key holds a key */
	char			 path[1024];	/* "" when set in svc.conf */
	dev_t			 dev;		/* the file read last */
	ino_t			 ino;
	struct timespec		 mtime;
	int			 loaded;	/* the file was read once */
	int64_t			 checked_ms;	/* looked at (coarse clock) */
	int64_t			 recheck_ms;	/* CACHEKEY_RECHECK_MS */
};

/* Reads the key (a missing file is no error: the cache is off, and a
 * warning is logged once). */
void	 cachekey_init(struct cachekey *, const struct conf *);
/* The stored hash of a normalised address: 0, or -1 when there is no key. */
int	 cachekey_hash(struct cachekey *, const char *normalised,
	    char out[ADDRHASH_HEX_LEN + 1]);
/* Writes a new random key into path (mode 0640 when new; a replaced file
 * keeps its owner, group and mode), by a rename so readers see the old or
 * the new key: 0, or -1 with err. */
int	 cachekey_write_file(const char *path, struct buf *err);
/* Whether c holds a usable key (from the setting or the file): 0 yes,
 * -1 no, with the reason in err. */
int	 cachekey_check(const struct conf *, struct buf *err);
#endif
