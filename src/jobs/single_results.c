/* single_results.c: single verifications kept as keyed hashes for the
 * accuracy report and the calibration (single_results.h). */
#include "jobs/single_results.h"
#include <string.h>

enum db_err
single_results_add(struct db *db, const struct addrhash_key *key,
    const char *account, const struct verify_result *r,
    const struct retention_ask *ask)
{
	char hash[ADDRHASH_HEX_LEN + 1];
	unsigned long long affected;

	if (r->normalised[0] == '\0' || r->sandbox)
		return DB_OK;
	addrhash_hex(key, r->normalised, strlen(r->normalised), hash);
	return db_exec(db, "INSERT INTO single_results (account_id, addr_hash, "
	    "classification, provider, mx_host, verified_at, expires_at) "
	    "VALUES (?, ?, ?, ?, ?, FROM_UNIXTIME(?), FROM_UNIXTIME(?) + "
	    "INTERVAL " RETENTION_ASK_SQL " DAY)",
	    DB_ARGS(DBP_STR(account), DBP_STR(hash),
	    DBP_STR(verdict_class_names[r->v.classification]),
	    r->provider[0] ? DBP_STR(r->provider) : DBP_NULL,
	    r->nmx > 0 ? DBP_STR(r->mx[0].host) : DBP_NULL,
	    DBP_INT((long long)r->verified_at),
	    DBP_INT((long long)r->verified_at),
	    RETENTION_ASK_ARGS(ask, account)), &affected);
}

long long
single_results_expire(struct db *db, long limit)
{
	unsigned long long affected = 0;

	if (db_exec(db, "DELETE FROM single_results WHERE expires_at < "
	    "UTC_TIMESTAMP(3) LIMIT ?", DB_ARGS(DBP_INT(limit)), &affected) !=
	    DB_OK)
		return -1;
	return (long long)affected;
}

long long
single_results_erase_account(struct db *db, const char *account)
{
	unsigned long long affected = 0, total = 0;

	do {
		if (db_exec(db, "DELETE FROM single_results WHERE account_id = "
		    "? LIMIT 10000", DB_ARGS(DBP_STR(account)), &affected) !=
		    DB_OK)
			return -1;
		total += affected;
	} while (affected == 10000);
	return (long long)total;
}
