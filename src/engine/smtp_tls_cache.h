/* smtp_tls_cache.h: the SMTP client's cache of TLS session data, for
 * resumption (as Postfix's smtp_tls_session_cache): the bytes GnuTLS gives
 * after a handshake (gnutls_session_get_data2), kept per MX host name as
 * connected (its SNI), port and egress route (a session made from one
 * source address or proxy is never offered through another), with whether
 * that session's certificate verified for the host name (a resumed session
 * reports that). Bounded (the least recently used entry goes first) and
 * with an expiry. One per set of TLS credentials (struct smtp_tls: one per
 * engine); a mutex guards it, as engines may be shared by threads. It
 * knows nothing of GnuTLS: bytes in, bytes out. */
#ifndef SVC_SMTP_TLS_CACHE_H
#define SVC_SMTP_TLS_CACHE_H
#include <stddef.h>
#include <stdint.h>

#define SMTP_TLS_CACHE_MAX	4096		/* entries */
#define SMTP_TLS_CACHE_TTL_MS	(3600 * 1000)	/* the longest kept */
#define SMTP_TLS_CACHE_DATA_MAX	(16 * 1024)	/* bytes of one entry */

struct smtp_tls_cache;

/* max entries (0: SMTP_TLS_CACHE_MAX); NULL when out of memory. */
struct smtp_tls_cache *smtp_tls_cache_new(size_t max);
void	 smtp_tls_cache_free(struct smtp_tls_cache *);

/* Keeps data (len bytes, copied) for host, port and route until
 * expires_ms (timeutil_mono_ms() time; held to now_ms +
 * SMTP_TLS_CACHE_TTL_MS at most), replacing what the key had. verified:
 * the certificate verified for host. 0, or -1 (nothing kept: bad
 * arguments, too long, no memory). */
int	 smtp_tls_cache_put(struct smtp_tls_cache *, const char *host,
	    unsigned port, const char *route, const void *data, size_t len,
	    int verified, int64_t expires_ms, int64_t now_ms);
/* The data kept for the key, not expired: 1 with *data (malloc'ed, the
 * caller frees it), *len and *verified; 0 when none (an expired entry is
 * dropped). -1 when out of memory. */
int	 smtp_tls_cache_get(struct smtp_tls_cache *, const char *host,
	    unsigned port, const char *route, int64_t now_ms, void **data,
	    size_t *len, int *verified);
/* Drops the key's entry (a server that refused it). */
void	 smtp_tls_cache_drop(struct smtp_tls_cache *, const char *host,
	    unsigned port, const char *route);
size_t	 smtp_tls_cache_count(struct smtp_tls_cache *);
#endif
