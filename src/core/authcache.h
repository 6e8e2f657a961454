/* authcache.h: one responder process's cache of API key rows, of their
 * accounts' rate-limit windows and of their GET /v1/credits answers, so
 * that most requests authenticate, and a balance is usually read, without
 * a MariaDB round trip.
 *
 * What keeps it correct:
 * - An entry is trusted for at most ttl_ms (auth_cache_ms) after its read
 *   was sent. Whoever revokes a key or changes an account waits ttl_ms
 *   after committing (authcache_settle) before reporting success, so once
 *   the change is reported no process on any host still trusts the old
 *   row. A key's expiry is checked on every request from the cached
 *   expires_at.
 * - Only keys found valid are cached; unknown, revoked and expired keys are
 *   looked up every time, so a new key works at once.
 * - A window is cached only when the process shares a generation table
 *   with every other responder on the host (the prefork master maps it
 *   before forking). Each counted request bumps its account's generation
 *   before it is answered, and a window read under an older generation is
 *   read again: a client sees every request this host has counted for it.
 *   Requests counted on other hosts show up within ttl_ms. Counting itself
 *   never uses the cache (ratelimit_check, under the bucket's lock).
 * - Credits are cached on the same terms, under a second generation per
 *   pool owner (the account, its organization): every request of an
 *   account that may have changed a pool (any method but GET) bumps both
 *   before it is answered, so a charge or refund made through this host's
 *   API shows in the next GET /v1/credits, whichever process serves it.
 *   Charges and refunds made elsewhere (svc-worker, another host) show up
 *   within ttl_ms; svcadm's grants wait ttl_ms before they are reported.
 *   Charging never uses the cache (ledger_charge, under the pool's lock). */
#ifndef SVC_AUTHCACHE_H
#define SVC_AUTHCACHE_H
#include "core/auth.h"
#include "core/ledger.h"
#include "core/ratelimit.h"
#include <stdint.h>

#define AUTHCACHE_SLOTS 256	/* keys per process */
#define AUTHCACHE_WAYS 4	/* a key's place is one of 4 slots of a set */
#define AUTHCACHE_GENS 1024	/* account generations per host */

/* Shared by the responder processes of one master (MAP_SHARED). */
struct authcache_gens {
	uint32_t gen[AUTHCACHE_GENS];		/* windows, by account */
	uint32_t ledger[AUTHCACHE_GENS];	/* credits, by pool owner */
};

/* What GET /v1/credits shows: the account's own pool, its organization
 * ("" when none) and that pool. */
struct authcache_credits {
	struct ledger_totals mine;
	char		 org[IDS_MAX];
	struct ledger_totals pool;
};

struct authcache_entry;

struct authcache {
	int64_t		 ttl_ms;	/* 0: nothing is cached */
	struct authcache_gens *gens;	/* NULL: windows are not cached */
	struct authcache_entry *slot[AUTHCACHE_SLOTS];
};

void	 authcache_init(struct authcache *, long ttl_ms,
	    struct authcache_gens *shared);
void	 authcache_free(struct authcache *);

/* A key row looked up less than ttl_ms ago (mono_ms: timeutil_mono_ms).
 * Returns 1 and sets *k and *rc (AUTH_OK, or AUTH_EXPIRED once now_ms,
 * Unix ms, has reached the key's expiry); 0 when it must be read. When it
 * must be read but an older entry names the key's account, *account gets it
 * (else ""), for authcache_gen before the read. */
int	 authcache_key(struct authcache *, const uint8_t hash[32],
	    int64_t mono_ms, int64_t now_ms, struct auth_key *k,
	    enum auth_result *rc, char account[IDS_MAX]);
/* Stores a valid key's row; read_ms is the monotonic time the read was
 * sent, expires_ms the key's expiry in Unix ms (0: none). */
void	 authcache_put(struct authcache *, const uint8_t hash[32],
	    const struct auth_key *, int64_t expires_ms, int64_t read_ms);
/* The cached window of a cached key's account, if it is still what
 * MariaDB holds as far as this host knows: 1 and *w set, else 0. */
int	 authcache_window(struct authcache *, const uint8_t hash[32],
	    int64_t mono_ms, int64_t now_ms, struct ratelimit_window *w);
/* Stores the window read at read_ms under generation gen (authcache_gen
 * taken before the read was sent). */
void	 authcache_put_window(struct authcache *, const uint8_t hash[32],
	    const struct ratelimit_window *, int64_t read_ms, uint32_t gen);
/* The account's generation on this host (0 without a shared table). */
uint32_t authcache_gen(const struct authcache *, const char *account_id);
/* A request of the account has been counted: cached windows are stale. */
void	 authcache_counted(struct authcache *, const char *account_id);

/* The generation of a pool owner's credits on this host (0 without a
 * shared table). */
uint32_t authcache_ledger_gen(const struct authcache *, const char *owner_id);
/* A request that may have charged or refunded the pool of owner_id has
 * been handled: cached credits naming that owner are stale. */
void	 authcache_ledger_changed(struct authcache *, const char *owner_id);
/* The cached credits of a cached key's account, if they are still what
 * MariaDB holds as far as this host knows: 1 and *cr set, else 0. */
int	 authcache_credits(struct authcache *, const uint8_t hash[32],
	    int64_t mono_ms, struct authcache_credits *cr);
/* A read of credits under way: the generations taken before it, of the
 * account and of the organizations it may find (the key's, and the one
 * the key's last read found). */
struct authcache_credits_read {
	int64_t		 read_ms;
	uint32_t	 gen_account;
	char		 org[2][IDS_MAX];
	uint32_t	 gen_org[2];
};
/* Before reading the credits of key k (hash): takes the generations. */
void	 authcache_credits_begin(struct authcache *,
	    const uint8_t hash[32], const struct auth_key *k, int64_t mono_ms,
	    struct authcache_credits_read *rd);
/* After the read: stores what it found. When it found an organization
 * whose generation was not taken (the account's organization changed),
 * the credits are not used, only remembered for the next read's begin. */
void	 authcache_credits_end(struct authcache *, const uint8_t hash[32],
	    const struct authcache_credits_read *rd,
	    const struct authcache_credits *cr);

/* A generation table shared with the processes forked after this call;
 * NULL when it cannot be mapped. */
struct authcache_gens *authcache_gens_shared(void);
/* Waits until every cache has let go of rows read before now: called
 * after committing a change to keys or accounts, before reporting it. */
void	 authcache_settle(long ttl_ms);
#endif
