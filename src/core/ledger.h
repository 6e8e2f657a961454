/* ledger.h: credits as an append-only ledger of grant, charge and refund
 * rows, one pool per account and per organization. */
#ifndef SVC_LEDGER_H
#define SVC_LEDGER_H
#include "core/db.h"
#include "util/ids.h"
#include <time.h>

enum ledger_err {
	LEDGER_OK,
	LEDGER_INSUFFICIENT,	/* balance below the amount; nothing written */
	LEDGER_ALREADY,		/* a row with this ref exists; nothing written */
	LEDGER_RETRY,		/* deadlock: retry the whole transaction */
	LEDGER_DB,
	LEDGER_ERR__MAX
};
extern const char *const ledger_err_names[LEDGER_ERR__MAX];

struct ledger_totals {
	long long	 balance, used, refunded, granted;
};

/* Creates the pool row if missing (outside or inside a transaction). */
enum ledger_err ledger_pool_ensure(struct db *, const char *pool);
/* The three below must run inside the caller's transaction; they lock the
 * pool row. ref (may be NULL for grants) makes the row happen at most once.
 * An amount of 0 writes nothing and succeeds. */
enum ledger_err ledger_charge(struct db *, const char *pool,
	    const char *account, long long amount, const char *ref,
	    long long *available);
enum ledger_err ledger_refund(struct db *, const char *pool,
	    const char *account, long long amount, const char *ref);
enum ledger_err ledger_grant(struct db *, const char *pool,
	    const char *account, long long amount, const char *note);
/* ledger_charge and ledger_grant as transactions of their own, retried
 * on deadlock and after a lost connection (db_tx_retry). Without a ref
 * (a single verification's charge, a grant) each gets one of its own
 * ("charge_...", "grant_..."), so that a run again after a COMMIT whose
 * answer was lost finds the movement done instead of making it twice. */
enum ledger_err ledger_charge_tx(struct db *, const char *pool,
	    const char *account, long long amount, const char *ref,
	    long long *available);
/* ledger_charge_tx with then(db, available, arg) run in the same
 * transaction after the charge (also in a run that finds the charge made
 * by a run before it, whose answer was lost): what must be written with
 * the charge or not at all, such as the request's Idempotency-Key answer.
 * An error from then rolls both back (DB_ERR_RETRY and DB_ERR_CONNECT run
 * them again); it returns LEDGER_DB then. */
enum ledger_err ledger_charge_tx_then(struct db *, const char *pool,
	    const char *account, long long amount, const char *ref,
	    long long *available,
	    enum db_err (*then)(struct db *, long long available, void *),
	    void *arg);
enum ledger_err ledger_grant_tx(struct db *, const char *pool,
	    const char *account, long long amount, const char *note);
/* An account's totals, its organization (org "" when none) and that
 * pool's totals, read in one statement (GET /v1/credits); LEDGER_DB also
 * when there is no such account. A missing pool reads as zeros. */
enum ledger_err ledger_account_totals(struct db *, const char *account,
	    struct ledger_totals *mine, char org[IDS_MAX],
	    struct ledger_totals *pool);
enum ledger_err ledger_totals(struct db *, const char *pool,
	    struct ledger_totals *);
/* One UTC day of a pool's movements (GET /v1/credits?days=N). */
struct ledger_day {
	time_t		 day;		/* 00:00:00 UTC of the day */
	long long	 used, refunded;
};
#define LEDGER_DAYS_MAX 366
/* The pool's charges and refunds summed per UTC day over the ndays (1 to
 * LEDGER_DAYS_MAX) days that end with the day of now, oldest first: out[i]
 * is the day ndays - 1 - i days before now's; days without a movement are
 * zeros. Grants are not usage and are left out. */
enum ledger_err ledger_daily(struct db *, const char *pool, time_t now,
	    int ndays, struct ledger_day *out);
/* Recomputes the totals from the ledger rows and compares: 1 if equal. */
enum ledger_err ledger_verify(struct db *, const char *pool, int *equal);
#endif
