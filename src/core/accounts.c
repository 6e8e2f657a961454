/* accounts.c: accounts and organizations, each with its credit pool. */
#include "core/accounts.h"
#include "core/ledger.h"
#include <string.h>

const char *const accounts_err_names[ACCOUNTS_ERR__MAX] = {
	"ok", "invalid", "exists", "not_found", "db"
};

static enum accounts_err
accounts_from_db(enum db_err e)
{
	return e == DB_OK ? ACCOUNTS_OK :
	    e == DB_ERR_DUPLICATE ? ACCOUNTS_EXISTS : ACCOUNTS_DB;
}

enum accounts_err
accounts_create(struct db *db, const char *email, enum auth_tier tier,
    char id[IDS_MAX], struct buf *why)
{
	enum db_err e;
	size_t n = strlen(email);

	if (n < 3 || n > 254 || strchr(email, '@') == NULL) {
		buf_puts(why, "email must look like an address");
		return ACCOUNTS_INVALID;
	}
	if (tier <= AUTH_TIER_ANONYMOUS || tier >= AUTH_TIER__MAX) {
		buf_puts(why, "tier must be free, trial, pro or admin");
		return ACCOUNTS_INVALID;
	}
	if (ids_new("acc", id) == -1)
		return ACCOUNTS_DB;
	if ((e = db_begin(db)) != DB_OK)
		return ACCOUNTS_DB;
	e = db_exec(db, "INSERT INTO accounts (id, email, tier, "
	    "subscription_type, subscription_active, created_at) VALUES "
	    "(?, ?, ?, ?, 1, UTC_TIMESTAMP(3))",
	    DB_ARGS(DBP_STR(id), DBP_STR(email), DBP_STR(auth_tier_names[tier]),
	    DBP_STR(auth_tier_names[tier])), NULL);
	if (e == DB_OK && ledger_pool_ensure(db, id) != LEDGER_OK)
		e = DB_ERR_QUERY;
	if (e == DB_OK)
		e = db_commit(db);
	else
		db_rollback(db);
	if (e == DB_ERR_DUPLICATE)
		buf_printf(why, "an account for %s exists already", email);
	return accounts_from_db(e);
}

static enum accounts_err
accounts_update(struct db *db, const char *sql, const struct db_param *p,
    size_t n)
{
	/* Callers check that the row exists first: MariaDB counts an update
	 * that changes nothing as 0 rows, so affected rows cannot tell. */
	return db_exec(db, sql, p, n, NULL) == DB_OK ? ACCOUNTS_OK :
	    ACCOUNTS_DB;
}

enum accounts_err
accounts_exists(struct db *db, const char *id, int *found)
{
	long long v;

	return db_query_int(db, "SELECT 1 FROM accounts WHERE id = ?",
	    DB_ARGS(DBP_STR(id)), &v, found) == DB_OK ? ACCOUNTS_OK :
	    ACCOUNTS_DB;
}

static enum accounts_err
accounts_must_exist(struct db *db, const char *id)
{
	int found = 0;

	if (accounts_exists(db, id, &found) != ACCOUNTS_OK)
		return ACCOUNTS_DB;
	return found ? ACCOUNTS_OK : ACCOUNTS_NOT_FOUND;
}

enum accounts_err
accounts_set_subscription(struct db *db, const char *id, int active,
    const char *type)
{
	enum accounts_err rc;

	if ((rc = accounts_must_exist(db, id)) != ACCOUNTS_OK)
		return rc;
	if (type != NULL)
		return accounts_update(db, "UPDATE accounts SET "
		    "subscription_active = ?, subscription_type = ? WHERE id = ?",
		    DB_ARGS(DBP_INT(active), DBP_STR(type), DBP_STR(id)));
	return accounts_update(db, "UPDATE accounts SET subscription_active = ?"
	    " WHERE id = ?", DB_ARGS(DBP_INT(active), DBP_STR(id)));
}

enum accounts_err
accounts_set_retention(struct db *db, const char *id, long days)
{
	enum accounts_err rc;

	if ((rc = accounts_must_exist(db, id)) != ACCOUNTS_OK)
		return rc;
	return accounts_update(db, "UPDATE accounts SET retention_days = "
	    "NULLIF(?, 0) WHERE id = ?", DB_ARGS(DBP_INT(days), DBP_STR(id)));
}

enum accounts_err
accounts_set_tier(struct db *db, const char *id, enum auth_tier tier)
{
	enum accounts_err rc;

	if ((rc = accounts_must_exist(db, id)) != ACCOUNTS_OK)
		return rc;
	return accounts_update(db, "UPDATE accounts SET tier = ? WHERE id = ?",
	    DB_ARGS(DBP_STR(auth_tier_names[tier]), DBP_STR(id)));
}

enum accounts_err
accounts_org_create(struct db *db, const char *name, long api_rate_limit,
    char id[IDS_MAX], struct buf *why)
{
	enum db_err e;
	size_t n = strlen(name);

	if (n == 0 || n > 200) {
		buf_puts(why, "name must be 1 to 200 characters");
		return ACCOUNTS_INVALID;
	}
	if (ids_new("org", id) == -1)
		return ACCOUNTS_DB;
	if ((e = db_begin(db)) != DB_OK)
		return ACCOUNTS_DB;
	e = db_exec(db, "INSERT INTO organizations (id, name, api_rate_limit, "
	    "created_at) VALUES (?, ?, ?, UTC_TIMESTAMP(3))",
	    DB_ARGS(DBP_STR(id), DBP_STR(name), api_rate_limit > 0 ?
	    DBP_INT(api_rate_limit) : DBP_NULL), NULL);
	if (e == DB_OK && ledger_pool_ensure(db, id) != LEDGER_OK)
		e = DB_ERR_QUERY;
	if (e == DB_OK)
		e = db_commit(db);
	else
		db_rollback(db);
	return accounts_from_db(e);
}

enum accounts_err
accounts_join_org(struct db *db, const char *account, const char *org)
{
	long long v;
	int found = 0;
	enum accounts_err rc;

	if ((rc = accounts_must_exist(db, account)) != ACCOUNTS_OK)
		return rc;
	if (db_query_int(db, "SELECT 1 FROM organizations WHERE id = ?",
	    DB_ARGS(DBP_STR(org)), &v, &found) != DB_OK)
		return ACCOUNTS_DB;
	if (!found)
		return ACCOUNTS_NOT_FOUND;
	return accounts_update(db, "UPDATE accounts SET org_id = ? WHERE id = ?",
	    DB_ARGS(DBP_STR(org), DBP_STR(account)));
}

enum accounts_err
accounts_org_of(struct db *db, const char *account, char org[IDS_MAX])
{
	struct db_res *r;
	const char *s;
	int row;

	org[0] = '\0';
	if (db_query(db, "SELECT org_id FROM accounts WHERE id = ?",
	    DB_ARGS(DBP_STR(account)), &r) != DB_OK)
		return ACCOUNTS_DB;
	row = db_res_next(r);
	if (row == 1 && (s = db_res_str(r, 0)) != NULL && strlen(s) < IDS_MAX)
		memcpy(org, s, strlen(s) + 1);
	db_res_free(r);
	return row == -1 ? ACCOUNTS_DB : row == 0 ? ACCOUNTS_NOT_FOUND :
	    ACCOUNTS_OK;
}
