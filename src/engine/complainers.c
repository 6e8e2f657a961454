/* complainers.c: the known-complainer list. Addresses are stored in their
 * normalised form so that case and quoting do not hide a match. */
#include "engine/complainers.h"
#include "engine/addr.h"
#include "core/dbsql.h"
#include "util/strparse.h"
#include <string.h>

enum db_err
complainers_contains(struct db *db, const char *normalised, int *found)
{
	long long v;

	return db_query_int(db, "SELECT 1 FROM complainers WHERE address = ?",
	    DB_ARGS(DBP_STR(normalised)), &v, found);
}

static void
complainers_hit(void *arg, struct db_res *r, size_t i)
{
	unsigned char *found = arg;

	(void)r;
	found[i] = 1;
}

enum db_err
complainers_contains_many(struct db *db, const char *const *normalised,
    size_t n, unsigned char *found)
{
	memset(found, 0, n);
	return dbsql_select_in(db, "SELECT address FROM complainers WHERE "
	    "address IN (", normalised, n, complainers_hit, found);
}

enum db_err
complainers_import(struct db *db, FILE *in, const char *source,
    struct complainers_counts *c)
{
	char line[1024], *p;
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
		e = db_exec(db, "INSERT IGNORE INTO complainers (address, "
		    "source, added_at) VALUES (?, ?, UTC_TIMESTAMP(3))",
		    DB_ARGS(DBP_STR(a.normalised), DBP_STR(source)), &affected);
		if (e != DB_OK)
			return e;
		if (affected)
			c->added++;
		else
			c->existing++;
	}
	return DB_OK;
}
