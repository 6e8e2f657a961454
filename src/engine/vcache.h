/* vcache.h: the verification caches in MariaDB: verdicts per address, MX
 * answers per domain (JSON text with an expiry), domain facts (catch-all,
 * web presence), and their expiry. */
#ifndef SVC_VCACHE_H
#define SVC_VCACHE_H
#include "core/db.h"
#include <jansson.h>

enum vcache_table {
	VCACHE_VERDICT,		/* key: keyed hash of the normalised address */
	VCACHE_DNS,		/* key: A-label domain */
	VCACHE_TABLE__MAX
};

/* *out is a new reference, or NULL on a miss (expired rows miss). */
enum db_err vcache_get(struct db *, enum vcache_table, const char *key,
	    json_t **out);
enum db_err vcache_put(struct db *, enum vcache_table, const char *key,
	    const json_t *value, long seconds);
/* Many keys in a few statements: out[i] gets a new reference for a hit on
 * keys[i], NULL on a miss; on an error every out[i] is NULL. */
enum db_err vcache_get_many(struct db *, enum vcache_table,
	    const char *const *keys, size_t n, json_t **out);
/* One entry to write with vcache_put_many: value is JSON text. */
struct vcache_entry {
	char	*key;
	char	*value;
	long	 seconds;
};
/* Frees the keys and values of n entries (not the array). */
void	 vcache_entries_clear(struct vcache_entry *, size_t n);
/* Writes entries (those with seconds > 0) in a few statements. */
enum db_err vcache_put_many(struct db *, enum vcache_table,
	    const struct vcache_entry *, size_t n);

struct vcache_facts {
	int	 accept_all;	/* -1 unknown */
	int	 web_presence;	/* -1 unknown */
};
/* The facts of n domains in a few statements: f[i] for domains[i], -1 in
 * both fields when none are kept (or on an error). */
enum db_err vcache_facts_get_many(struct db *, const char *const *domains,
	    size_t n, struct vcache_facts *f);
enum db_err vcache_facts_put(struct db *, const char *domain,
	    const struct vcache_facts *, long seconds);
/* Deletes expired rows of every cache; returns rows removed or -1. */
long long vcache_expire(struct db *);
#endif
