/* verify_cache.h: what of a verification goes into the shared verdict
 * cache and how a hit is given its address back. The cache is shared by
 * every account and keyed by the address's keyed hash (cachekey.h); its
 * value holds no address either: no "email", a typo suggestion keeps its
 * domain, and the address in the SMTP text is a mark. */
#ifndef SVC_VERIFY_CACHE_H
#define SVC_VERIFY_CACHE_H
#include "engine/verify.h"

/* An entry of the cache (JSON, either form: the compact array written
 * now, or the object of entries cached before it) into r, which the
 * caller zeroed: 0, or -1 when it is not usable (a miss). */
int	 verify_cache_read(json_t *, struct verify_result *r);
/* The address of the request put back into a result read from the cache
 * (c, as verify_cache_read read it) and copied into r. */
void	 verify_cache_restore(struct verify_result *r, const struct addr *a,
	    const struct verify_result *c);
#endif
