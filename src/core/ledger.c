/* ledger.c: the credit ledger. Each charge, refund or grant inserts one row
 * (never updated, never deleted) and moves the pool's running totals in the
 * same transaction, under the pool's row lock; a unique ref per charge or
 * refund makes a retried operation a no-op instead of a second movement. */
#include "core/ledger.h"
#include <string.h>

const char *const ledger_err_names[LEDGER_ERR__MAX] = {
	"ok", "insufficient", "already", "retry", "db"
};

static enum ledger_err
ledger_from_db(enum db_err e)
{
	switch (e) {
	case DB_OK:
		return LEDGER_OK;
	case DB_ERR_DUPLICATE:
		return LEDGER_ALREADY;
	case DB_ERR_RETRY:
		return LEDGER_RETRY;
	default:
		return LEDGER_DB;
	}
}

enum ledger_err
ledger_pool_ensure(struct db *db, const char *pool)
{
	return ledger_from_db(db_exec(db,
	    "INSERT IGNORE INTO credit_pools (owner_id) VALUES (?)",
	    DB_ARGS(DBP_STR(pool)), NULL));
}

static enum ledger_err
ledger_lock_balance(struct db *db, const char *pool, long long *balance,
    int *found)
{
	return ledger_from_db(db_query_int(db,
	    "SELECT balance FROM credit_pools WHERE owner_id = ? FOR UPDATE",
	    DB_ARGS(DBP_STR(pool)), balance, found));
}

static enum ledger_err
ledger_insert(struct db *db, const char *pool, const char *account,
    const char *kind, long long amount, const char *ref, const char *note)
{
	return ledger_from_db(db_exec(db,
	    "INSERT INTO credit_ledger (pool_id, account_id, kind, amount, "
	    "ref, note, created_at) VALUES (?, ?, ?, ?, ?, ?, UTC_TIMESTAMP(3))",
	    DB_ARGS(DBP_STR(pool), DBP_STR(account), DBP_STR(kind),
	    DBP_INT(amount), DBP_STR(ref), DBP_STR(note)), NULL));
}

enum ledger_err
ledger_charge(struct db *db, const char *pool, const char *account,
    long long amount, const char *ref, long long *available)
{
	long long balance = 0;
	int found = 0;
	enum ledger_err rc;

	if ((rc = ledger_lock_balance(db, pool, &balance, &found)) != LEDGER_OK)
		return rc;
	if (available)
		*available = balance;
	if (amount <= 0)
		return LEDGER_OK;
	if (!found || balance < amount)
		return LEDGER_INSUFFICIENT;
	if ((rc = ledger_insert(db, pool, account, "charge", amount, ref,
	    NULL)) != LEDGER_OK)
		return rc;
	if (available)
		*available = balance - amount;
	return ledger_from_db(db_exec(db,
	    "UPDATE credit_pools SET balance = balance - ?, used = used + ? "
	    "WHERE owner_id = ?",
	    DB_ARGS(DBP_INT(amount), DBP_INT(amount), DBP_STR(pool)), NULL));
}

/* Adds credits to a pool: a refund (with a ref) or a grant (with a note). */
static enum ledger_err
ledger_credit(struct db *db, const char *pool, const char *account,
    const char *kind, long long amount, const char *ref, const char *note)
{
	static const char refund_sql[] = "UPDATE credit_pools SET balance = "
	    "balance + ?, refunded = refunded + ? WHERE owner_id = ?";
	static const char grant_sql[] = "UPDATE credit_pools SET balance = "
	    "balance + ?, granted = granted + ? WHERE owner_id = ?";
	long long balance;
	int found;
	enum ledger_err rc;

	if (amount <= 0)
		return LEDGER_OK;
	if ((rc = ledger_pool_ensure(db, pool)) != LEDGER_OK ||
	    (rc = ledger_lock_balance(db, pool, &balance, &found)) != LEDGER_OK)
		return rc;
	if ((rc = ledger_insert(db, pool, account, kind, amount, ref, note)) !=
	    LEDGER_OK)
		return rc;
	return ledger_from_db(db_exec(db, strcmp(kind, "refund") == 0 ?
	    refund_sql : grant_sql, DB_ARGS(DBP_INT(amount), DBP_INT(amount),
	    DBP_STR(pool)), NULL));
}

enum ledger_err
ledger_refund(struct db *db, const char *pool, const char *account,
    long long amount, const char *ref)
{
	return ledger_credit(db, pool, account, "refund", amount, ref, NULL);
}

enum ledger_err
ledger_grant(struct db *db, const char *pool, const char *account,
    long long amount, const char *note)
{
	return ledger_credit(db, pool, account, "grant", amount, NULL, note);
}

/* A pool's balance, used, refunded and granted from columns col.. of
 * the current row. */
static void
ledger_totals_row(struct db_res *r, unsigned col, struct ledger_totals *t)
{
	t->balance = db_res_int(r, col);
	t->used = db_res_int(r, col + 1);
	t->refunded = db_res_int(r, col + 2);
	t->granted = db_res_int(r, col + 3);
}

enum ledger_err
ledger_totals(struct db *db, const char *pool, struct ledger_totals *t)
{
	struct db_res *r;
	enum db_err e;
	int row;

	memset(t, 0, sizeof(*t));
	e = db_query(db, "SELECT balance, used, refunded, granted FROM "
	    "credit_pools WHERE owner_id = ?", DB_ARGS(DBP_STR(pool)), &r);
	if (e != DB_OK)
		return ledger_from_db(e);
	if ((row = db_res_next(r)) == 1)
		ledger_totals_row(r, 0, t);
	db_res_free(r);
	return row == -1 ? LEDGER_DB : LEDGER_OK;
}

enum ledger_err
ledger_account_totals(struct db *db, const char *account,
    struct ledger_totals *mine, char org[IDS_MAX], struct ledger_totals *pool)
{
	struct db_res *r;
	const char *o;
	enum db_err e;
	int row;

	memset(mine, 0, sizeof(*mine));
	memset(pool, 0, sizeof(*pool));
	org[0] = '\0';
	e = db_query(db, "SELECT p.balance, p.used, p.refunded, p.granted, "
	    "a.org_id, q.balance, q.used, q.refunded, q.granted "
	    "FROM accounts a LEFT JOIN credit_pools p ON p.owner_id = a.id "
	    "LEFT JOIN credit_pools q ON q.owner_id = a.org_id WHERE a.id = ?",
	    DB_ARGS(DBP_STR(account)), &r);
	if (e != DB_OK)
		return ledger_from_db(e);
	if ((row = db_res_next(r)) == 1) {
		ledger_totals_row(r, 0, mine);
		if ((o = db_res_str(r, 4)) != NULL && strlen(o) < IDS_MAX)
			memcpy(org, o, strlen(o) + 1);
		ledger_totals_row(r, 5, pool);
	}
	db_res_free(r);
	return row == 1 ? LEDGER_OK : LEDGER_DB;
}

enum ledger_err
ledger_daily(struct db *db, const char *pool, time_t now, int ndays,
    struct ledger_day *out)
{
	struct db_res *r;
	struct tm tm;
	char first[32];
	time_t start;
	long long d;
	int i, row;

	if (ndays < 1 || ndays > LEDGER_DAYS_MAX)
		return LEDGER_DB;
	start = now - now % 86400 - (time_t)(ndays - 1) * 86400;
	for (i = 0; i < ndays; i++) {
		out[i].day = start + (time_t)i * 86400;
		out[i].used = out[i].refunded = 0;
	}
	gmtime_r(&start, &tm);
	strftime(first, sizeof(first), "%Y-%m-%d 00:00:00", &tm);
	/* (the session's time zone is UTC: db.c) */
	if (db_query(db, "SELECT DATEDIFF(created_at, ?) AS d, "
	    "COALESCE(SUM(CASE kind WHEN 'charge' THEN amount END), 0), "
	    "COALESCE(SUM(CASE kind WHEN 'refund' THEN amount END), 0) "
	    "FROM credit_ledger WHERE pool_id = ? AND created_at >= ? "
	    "AND kind <> 'grant' GROUP BY d",
	    DB_ARGS(DBP_STR(first), DBP_STR(pool), DBP_STR(first)), &r) !=
	    DB_OK)
		return LEDGER_DB;
	while ((row = db_res_next(r)) == 1) {
		/* (a row stamped after now's day, by a clock ahead: not in
		 * the window) */
		if ((d = db_res_int(r, 0)) < 0 || d >= ndays)
			continue;
		out[d].used = db_res_int(r, 1);
		out[d].refunded = db_res_int(r, 2);
	}
	db_res_free(r);
	return row == -1 ? LEDGER_DB : LEDGER_OK;
}

enum ledger_err
ledger_verify(struct db *db, const char *pool, int *equal)
{
	struct ledger_totals t, sum;
	struct db_res *r;
	enum ledger_err rc;
	int row;

	*equal = 0;
	if ((rc = ledger_totals(db, pool, &t)) != LEDGER_OK)
		return rc;
	if (db_query(db, "SELECT "
	    "COALESCE(SUM(CASE kind WHEN 'charge' THEN amount END), 0), "
	    "COALESCE(SUM(CASE kind WHEN 'refund' THEN amount END), 0), "
	    "COALESCE(SUM(CASE kind WHEN 'grant' THEN amount END), 0) "
	    "FROM credit_ledger WHERE pool_id = ?",
	    DB_ARGS(DBP_STR(pool)), &r) != DB_OK)
		return LEDGER_DB;
	memset(&sum, 0, sizeof(sum));
	if ((row = db_res_next(r)) == 1) {
		sum.used = db_res_int(r, 0);
		sum.refunded = db_res_int(r, 1);
		sum.granted = db_res_int(r, 2);
		sum.balance = sum.granted - sum.used + sum.refunded;
	}
	db_res_free(r);
	if (row == -1)
		return LEDGER_DB;
	*equal = t.balance == sum.balance && t.used == sum.used &&
	    t.refunded == sum.refunded && t.granted == sum.granted;
	return LEDGER_OK;
}

/* One movement as a transaction of its own. It always has a ref (the
 * caller's, or one made for it), so that a run again after a lost
 * connection (db_tx_retry) finds out whether the first run's COMMIT was
 * applied before its answer was lost: then the movement is done, and
 * making it again would charge or grant twice. */
struct ledger_move {
	const char	*pool, *account, *note;
	char		 ref[IDS_MAX];
	long long	 amount, available;
	int		 grant, runs;
	enum ledger_err	 rc;
	/* ledger_charge_tx_then: run after the movement, in its transaction */
	enum db_err	(*then)(struct db *, long long, void *);
	void		*then_arg;
};

/* The movement made (now or by a run before): then, if any. */
static enum db_err
ledger_move_then(struct db *db, struct ledger_move *m)
{
	enum db_err e;

	if (m->then == NULL)
		return DB_OK;
	if ((e = m->then(db, m->available, m->then_arg)) != DB_OK)
		m->rc = LEDGER_DB;
	return e;
}

/* Whether the move's row is there already (a run before this one
 * committed): *done 1 with m->available read, or 0. */
static enum db_err
ledger_move_done(struct db *db, struct ledger_move *m, int *done)
{
	long long n = 0;
	int found = 0;
	enum db_err e;

	*done = 0;
	if ((e = db_query_int(db, "SELECT COUNT(*) FROM credit_ledger WHERE "
	    "ref = ?", DB_ARGS(DBP_STR(m->ref)), &n, &found)) != DB_OK ||
	    n == 0)
		return e;
	*done = 1;
	return db_query_int(db, "SELECT balance FROM credit_pools WHERE "
	    "owner_id = ?", DB_ARGS(DBP_STR(m->pool)), &m->available, &found);
}

static enum db_err
ledger_move_work(struct db *db, void *arg)
{
	struct ledger_move *m = arg;
	enum db_err e;
	int done;

	if (m->runs++ > 0) {
		if ((e = ledger_move_done(db, m, &done)) != DB_OK)
			return e;
		if (done) {
			m->rc = LEDGER_OK;
			return ledger_move_then(db, m);
		}
	}
	m->rc = m->grant ? ledger_credit(db, m->pool, m->account, "grant",
	    m->amount, m->ref, m->note) : ledger_charge(db, m->pool,
	    m->account, m->amount, m->ref, &m->available);
	switch (m->rc) {
	case LEDGER_OK:
		return ledger_move_then(db, m);
	case LEDGER_RETRY:
		return DB_ERR_RETRY;
	case LEDGER_INSUFFICIENT:
	case LEDGER_ALREADY:
		return DB_ABORT;
	default:
		return DB_ERR_QUERY;
	}
}

static enum ledger_err
ledger_move_tx(struct db *db, struct ledger_move *m)
{
	switch (db_tx_retry(db, ledger_move_work, m)) {
	case DB_OK:
	case DB_ABORT:
		return m->rc;
	case DB_ERR_RETRY:
		return LEDGER_RETRY;
	default:
		return LEDGER_DB;
	}
}

/* A move of amount with the caller's ref, or a new one ("prefix_..."). */
static int
ledger_move_init(struct ledger_move *m, const char *pool, const char *account,
    long long amount, const char *ref, const char *prefix)
{
	memset(m, 0, sizeof(*m));
	m->pool = pool;
	m->account = account;
	m->amount = amount;
	if (ref != NULL) {
		if (strlen(ref) >= sizeof(m->ref))
			return -1;
		memcpy(m->ref, ref, strlen(ref) + 1);
		return 0;
	}
	return ids_new(prefix, m->ref);
}

enum ledger_err
ledger_charge_tx(struct db *db, const char *pool, const char *account,
    long long amount, const char *ref, long long *available)
{
	struct ledger_move m;
	enum ledger_err rc;

	if (ledger_move_init(&m, pool, account, amount, ref, "charge") == -1)
		return LEDGER_DB;
	rc = ledger_move_tx(db, &m);
	if (available)
		*available = m.available;
	return rc;
}

enum ledger_err
ledger_charge_tx_then(struct db *db, const char *pool, const char *account,
    long long amount, const char *ref, long long *available,
    enum db_err (*then)(struct db *, long long, void *), void *arg)
{
	struct ledger_move m;
	enum ledger_err rc;

	if (ledger_move_init(&m, pool, account, amount, ref, "charge") == -1)
		return LEDGER_DB;
	m.then = then;
	m.then_arg = arg;
	rc = ledger_move_tx(db, &m);
	if (available)
		*available = m.available;
	return rc;
}

enum ledger_err
ledger_grant_tx(struct db *db, const char *pool, const char *account,
    long long amount, const char *note)
{
	struct ledger_move m;

	if (ledger_move_init(&m, pool, account, amount, NULL, "grant") == -1)
		return LEDGER_DB;
	m.note = note;
	m.grant = 1;
	return ledger_move_tx(db, &m);
}
