/* authcache.c: the per-process cache of key rows, account windows and
 * credits described in authcache.h. Keys are placed by their hash (a
 * SHA-256, so its first bytes are as good as any hash of it) in a set of
 * AUTHCACHE_WAYS slots; a new key takes a free slot of its set, else the
 * one read longest ago. (Direct-mapped, 32 keys in turn kept evicting each
 * other: a few of them always share a slot.) That placement needs no keyed
 * hash: a lookup is at most AUTHCACHE_WAYS compares, whatever the keys, and
 * only keys found valid are stored. Generations are shared memory written
 * with atomic increments by every responder of the host, at an index given
 * by the keyed hash of the account id (or pool owner id): owners that
 * share an index only make each other's entries stale more often. */
#include "core/authcache.h"
#include "util/khash.h"
#include "util/timeutil.h"
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

struct authcache_entry {
	uint8_t		 hash[32];
	struct auth_key	 key;
	int64_t		 expires_ms;	/* Unix ms; 0: never */
	int64_t		 read_ms;	/* monotonic, when the row's read was sent */
	int		 has_window;
	struct ratelimit_window win;
	int64_t		 win_read_ms;
	uint32_t	 win_gen;
	int		 has_credits;
	struct authcache_credits credits;
	int64_t		 cr_read_ms;
	uint32_t	 cr_gen_account, cr_gen_org;
};

void
authcache_init(struct authcache *c, long ttl_ms, struct authcache_gens *g)
{
	memset(c, 0, sizeof(*c));
	c->ttl_ms = ttl_ms > 0 ? ttl_ms : 0;
	c->gens = g;
}

void
authcache_free(struct authcache *c)
{
	size_t i;

	for (i = 0; i < AUTHCACHE_SLOTS; i++) {
		free(c->slot[i]);
		c->slot[i] = NULL;
	}
}

/* The first slot of the key's set. */
static struct authcache_entry **
authcache_set(struct authcache *c, const uint8_t hash[32])
{
	unsigned set = (hash[0] | (unsigned)hash[1] << 8) %
	    (AUTHCACHE_SLOTS / AUTHCACHE_WAYS);

	return &c->slot[set * AUTHCACHE_WAYS];
}

static struct authcache_entry *
authcache_find(struct authcache *c, const uint8_t hash[32])
{
	struct authcache_entry **set = authcache_set(c, hash);
	size_t i;

	for (i = 0; i < AUTHCACHE_WAYS; i++)
		if (set[i] && memcmp(set[i]->hash, hash, 32) == 0)
			return set[i];
	return NULL;
}

/* Where the key goes: its own slot, a free one, or the one read longest
 * ago. */
static struct authcache_entry **
authcache_place(struct authcache *c, const uint8_t hash[32])
{
	struct authcache_entry **set = authcache_set(c, hash), **oldest = set;
	size_t i;

	for (i = 0; i < AUTHCACHE_WAYS; i++)
		if (set[i] && memcmp(set[i]->hash, hash, 32) == 0)
			return &set[i];
	for (i = 0; i < AUTHCACHE_WAYS; i++) {
		if (set[i] == NULL)
			return &set[i];
		if (set[i]->read_ms < (*oldest)->read_ms)
			oldest = &set[i];
	}
	return oldest;
}

static int
authcache_fresh(const struct authcache *c, int64_t read_ms, int64_t mono_ms)
{
	return mono_ms >= read_ms && mono_ms - read_ms < c->ttl_ms;
}

int
authcache_key(struct authcache *c, const uint8_t hash[32], int64_t mono_ms,
    int64_t now_ms, struct auth_key *k, enum auth_result *rc,
    char account[IDS_MAX])
{
	struct authcache_entry *e = authcache_find(c, hash);

	account[0] = '\0';
	if (e == NULL)
		return 0;
	if (!authcache_fresh(c, e->read_ms, mono_ms)) {
		memcpy(account, e->key.account_id, IDS_MAX);
		return 0;
	}
	*k = e->key;
	*rc = e->expires_ms && now_ms >= e->expires_ms ? AUTH_EXPIRED : AUTH_OK;
	return 1;
}

void
authcache_put(struct authcache *c, const uint8_t hash[32],
    const struct auth_key *k, int64_t expires_ms, int64_t read_ms)
{
	struct authcache_entry **slot, *e;

	if (c->ttl_ms == 0)
		return;
	slot = authcache_place(c, hash);
	e = *slot;
	if (e == NULL && (e = *slot = calloc(1, sizeof(*e))) == NULL)
		return;		/* no memory: simply not cached */
	if (memcmp(e->hash, hash, 32) != 0 ||
	    strcmp(e->key.account_id, k->account_id) != 0) {
		e->has_window = e->has_credits = 0;
		e->credits.org[0] = '\0';
	}
	memcpy(e->hash, hash, 32);
	e->key = *k;
	e->expires_ms = expires_ms;
	e->read_ms = read_ms;
}

/* The same in every responder of a master: the key is set before the
 * fork (authcache_gens_shared). */
static size_t
authcache_gen_index(const char *account_id)
{
	return khash(account_id, strlen(account_id)) % AUTHCACHE_GENS;
}

/* The generation of id in the windows' table or in the credits' one;
 * NULL without a shared table. */
static uint32_t *
authcache_gen_slot(const struct authcache *c, int credits, const char *id)
{
	if (c->gens == NULL)
		return NULL;
	return &(credits ? c->gens->ledger : c->gens->gen)[
	    authcache_gen_index(id)];
}

static uint32_t
authcache_gen_load(const struct authcache *c, int credits, const char *id)
{
	uint32_t *g = authcache_gen_slot(c, credits, id);

	return g ? __atomic_load_n(g, __ATOMIC_SEQ_CST) : 0;
}

static void
authcache_gen_bump(const struct authcache *c, int credits, const char *id)
{
	uint32_t *g = authcache_gen_slot(c, credits, id);

	if (g != NULL)
		__atomic_add_fetch(g, 1, __ATOMIC_SEQ_CST);
}

uint32_t
authcache_gen(const struct authcache *c, const char *account_id)
{
	return authcache_gen_load(c, 0, account_id);
}

void
authcache_counted(struct authcache *c, const char *account_id)
{
	authcache_gen_bump(c, 0, account_id);
}

uint32_t
authcache_ledger_gen(const struct authcache *c, const char *owner_id)
{
	return authcache_gen_load(c, 1, owner_id);
}

void
authcache_ledger_changed(struct authcache *c, const char *owner_id)
{
	authcache_gen_bump(c, 1, owner_id);
}

int
authcache_window(struct authcache *c, const uint8_t hash[32],
    int64_t mono_ms, int64_t now_ms, struct ratelimit_window *w)
{
	struct authcache_entry *e = authcache_find(c, hash);

	if (e == NULL || !e->has_window || c->gens == NULL ||
	    !authcache_fresh(c, e->read_ms, mono_ms) ||
	    !authcache_fresh(c, e->win_read_ms, mono_ms) ||
	    authcache_gen(c, e->key.account_id) != e->win_gen)
		return 0;
	/* The oldest counted second has left the window since the read:
	 * what is left of the window is not known. */
	if (e->win.used > 0 &&
	    e->win.oldest_ms / 1000 <= ratelimit_window_start(now_ms))
		return 0;
	*w = e->win;
	return 1;
}

void
authcache_put_window(struct authcache *c, const uint8_t hash[32],
    const struct ratelimit_window *w, int64_t read_ms, uint32_t gen)
{
	struct authcache_entry *e = authcache_find(c, hash);

	if (e == NULL || c->gens == NULL)
		return;
	e->win = *w;
	e->win_read_ms = read_ms;
	e->win_gen = gen;
	e->has_window = 1;
}

int
authcache_credits(struct authcache *c, const uint8_t hash[32],
    int64_t mono_ms, struct authcache_credits *cr)
{
	struct authcache_entry *e = authcache_find(c, hash);

	if (e == NULL || !e->has_credits || c->gens == NULL ||
	    !authcache_fresh(c, e->read_ms, mono_ms) ||
	    !authcache_fresh(c, e->cr_read_ms, mono_ms) ||
	    authcache_ledger_gen(c, e->key.account_id) != e->cr_gen_account ||
	    (e->credits.org[0] &&
	    authcache_ledger_gen(c, e->credits.org) != e->cr_gen_org))
		return 0;
	*cr = e->credits;
	return 1;
}

void
authcache_credits_begin(struct authcache *c, const uint8_t hash[32],
    const struct auth_key *k, int64_t mono_ms,
    struct authcache_credits_read *rd)
{
	const struct authcache_entry *e = authcache_find(c, hash);
	size_t i;

	memset(rd, 0, sizeof(*rd));
	rd->read_ms = mono_ms;
	rd->gen_account = authcache_ledger_gen(c, k->account_id);
	memcpy(rd->org[0], k->org_id, IDS_MAX);
	if (e != NULL)
		memcpy(rd->org[1], e->credits.org, IDS_MAX);
	for (i = 0; i < 2; i++)
		if (rd->org[i][0])
			rd->gen_org[i] = authcache_ledger_gen(c, rd->org[i]);
}

void
authcache_credits_end(struct authcache *c, const uint8_t hash[32],
    const struct authcache_credits_read *rd,
    const struct authcache_credits *cr)
{
	struct authcache_entry *e = authcache_find(c, hash);
	size_t i;

	if (e == NULL || c->gens == NULL)
		return;
	e->credits = *cr;
	e->cr_read_ms = rd->read_ms;
	e->cr_gen_account = rd->gen_account;
	e->cr_gen_org = 0;
	e->has_credits = cr->org[0] == '\0';
	for (i = 0; i < 2 && !e->has_credits; i++)
		if (strcmp(cr->org, rd->org[i]) == 0) {
			e->cr_gen_org = rd->gen_org[i];
			e->has_credits = 1;
		}
}

struct authcache_gens *
authcache_gens_shared(void)
{
	void *p;

	/* The processes forked after this call index the table with the
	 * key they inherit: it must exist before they do (khash.h). */
	if (khash_init() == -1)
		return NULL;
	p = mmap(NULL, sizeof(struct authcache_gens),
	    PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;	/* zero-filled */
}

void
authcache_settle(long ttl_ms)
{
	timeutil_sleep_ms(ttl_ms);
}
