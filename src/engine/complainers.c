/* complainers.c: the known-complainer list (complainers.h). Rows hold the
 * keyed hash of the normalised address, so that case and quoting do not
 * hide a match and no address is kept in clear. */
#include "engine/complainers.h"
#include "engine/addr.h"
#include "core/dbsql.h"
#include "util/strparse.h"
#include <stdlib.h>
#include <string.h>

enum db_err
complainers_contains(struct db *db, const struct addrhash_key *key,
    const char *normalised, int *found)
{
	char h[ADDRHASH_HEX_LEN + 1];
	long long v;

	*found = 0;
	if (key == NULL)
		return DB_OK;
	addrhash_hex(key, normalised, strlen(normalised), h);
	return db_query_int(db, "SELECT 1 FROM complainers WHERE addr_hash = ?",
	    DB_ARGS(DBP_STR(h)), &v, found);
}

static void
complainers_hit(void *arg, struct db_res *r, size_t i)
{
	unsigned char *found = arg;

	(void)r;
	found[i] = 1;
}

/* The addresses' hashes looked up by head (its IN list last), with the
 * nlead parameters before them. */
static enum db_err
complainers_find_many(struct db *db, const struct addrhash_key *key,
    const char *head, const struct db_param *lead, size_t nlead,
    const char *const *normalised, size_t n, unsigned char *found)
{
	char (*h)[ADDRHASH_HEX_LEN + 1];
	const char **keys;
	enum db_err e;
	size_t i;

	memset(found, 0, n);
	if (key == NULL || n == 0)
		return DB_OK;
	h = calloc(n, sizeof(*h));
	keys = calloc(n, sizeof(*keys));
	if (h == NULL || keys == NULL) {
		free(h);
		free(keys);
		return DB_ERR_QUERY;
	}
	for (i = 0; i < n; i++) {
		addrhash_hex(key, normalised[i], strlen(normalised[i]), h[i]);
		keys[i] = h[i];
	}
	e = dbsql_select_in_args(db, head, lead, nlead, keys, n,
	    complainers_hit, found);
	free(h);
	free(keys);
	return e;
}

enum db_err
complainers_contains_many(struct db *db, const struct addrhash_key *key,
    const char *const *normalised, size_t n, unsigned char *found)
{
	return complainers_find_many(db, key, "SELECT addr_hash FROM "
	    "complainers WHERE addr_hash IN (", NULL, 0, normalised, n, found);
}

enum db_err
complainers_account_contains_many(struct db *db,
    const struct addrhash_key *key, const char *account,
    const char *const *normalised, size_t n, unsigned char *found)
{
	if (account == NULL) {
		memset(found, 0, n);
		return DB_OK;
	}
	return complainers_find_many(db, key, "SELECT addr_hash FROM "
	    "account_complainers WHERE account_id = ? AND addr_hash IN (",
	    DB_ARGS(DBP_STR(account)), normalised, n, found);
}

enum db_err
complainers_account_contains(struct db *db, const struct addrhash_key *key,
    const char *account, const char *normalised, int *found)
{
	unsigned char f = 0;
	enum db_err e;

	e = complainers_account_contains_many(db, key, account, &normalised,
	    1, &f);
	*found = f;
	return e;
}

enum db_err
complainers_import(struct db *db, const struct addrhash_key *key, FILE *in,
    const char *source, struct complainers_counts *c)
{
	char line[1024], h[ADDRHASH_HEX_LEN + 1], *p;
	struct addr a;
	unsigned long long affected;
	enum db_err e;

	memset(c, 0, sizeof(*c));
	while (fgets(line, sizeof(line), in) != NULL) {
		p = strparse_trim(line);
		if (*p == '\0' || *p == '#')
			continue;
		if (addr_parse(p, &a) != ADDR_OK) {
			c->invalid++;
			continue;
		}
		addrhash_hex(key, a.normalised, strlen(a.normalised), h);
		e = db_exec(db, "INSERT IGNORE INTO complainers (addr_hash, "
		    "source, added_at) VALUES (?, ?, UTC_TIMESTAMP(3))",
		    DB_ARGS(DBP_STR(h), DBP_STR(source)), &affected);
		if (e != DB_OK)
			return e;
		if (affected)
			c->added++;
		else
			c->existing++;
	}
	return DB_OK;
}

enum db_err
complainers_hash_clear(struct db *db, const struct addrhash_key *key,
    unsigned long *n)
{
	char h[ADDRHASH_HEX_LEN + 1];
	struct db_res *r = NULL;
	unsigned long long affected;
	const char *addr;
	enum db_err e;

	*n = 0;
	if ((e = db_begin(db)) != DB_OK)
		return e;
	e = db_query(db, "SELECT id, address FROM complainers WHERE address "
	    "IS NOT NULL FOR UPDATE", DB_NOARGS, &r);
	while (e == DB_OK && db_res_next(r) == 1) {
		if ((addr = db_res_str(r, 1)) == NULL)
			continue;
		/* stored in the normalised form already */
		addrhash_hex(key, addr, db_res_len(r, 1), h);
		/* IGNORE: the hash may be there already (imported since) */
		e = db_exec(db, "UPDATE IGNORE complainers SET addr_hash = ?, "
		    "address = NULL WHERE id = ?", DB_ARGS(DBP_STR(h),
		    DBP_INT(db_res_int(r, 0))), &affected);
		if (e == DB_OK)
			(*n)++;
	}
	db_res_free(r);
	if (e == DB_OK)
		e = db_exec(db, "DELETE FROM complainers WHERE address IS NOT "
		    "NULL", DB_NOARGS, &affected);
	if (e == DB_OK)
		e = db_commit(db);
	if (e != DB_OK) {
		db_rollback(db);
		*n = 0;
	}
	return e;
}
