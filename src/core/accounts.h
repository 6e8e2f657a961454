/* accounts.h: accounts (tier, subscription) and organizations. */
#ifndef SVC_ACCOUNTS_H
#define SVC_ACCOUNTS_H
#include "core/auth.h"
#include "core/db.h"
#include "util/ids.h"

enum accounts_err {
	ACCOUNTS_OK,
	ACCOUNTS_INVALID,	/* bad input; the buf says which */
	ACCOUNTS_EXISTS,	/* e-mail already has an account */
	ACCOUNTS_NOT_FOUND,
	ACCOUNTS_DB,
	ACCOUNTS_ERR__MAX
};
extern const char *const accounts_err_names[ACCOUNTS_ERR__MAX];

/* Creates an account with an active subscription named after its tier and
 * an empty credit pool. */
enum accounts_err accounts_create(struct db *, const char *email,
	    enum auth_tier, char id[IDS_MAX], struct buf *why);
enum accounts_err accounts_set_subscription(struct db *, const char *id,
	    int active, const char *type);
enum accounts_err accounts_set_tier(struct db *, const char *id,
	    enum auth_tier);
/* The account's retention in days for its new jobs (0: none, the
 * operator's job_retention_days applies). */
enum accounts_err accounts_set_retention(struct db *, const char *id,
	    long days);
enum accounts_err accounts_org_create(struct db *, const char *name,
	    long api_rate_limit, char id[IDS_MAX], struct buf *why);
enum accounts_err accounts_join_org(struct db *, const char *account,
	    const char *org);
/* Org of an account into org ("" when none). */
enum accounts_err accounts_org_of(struct db *, const char *account,
	    char org[IDS_MAX]);
enum accounts_err accounts_exists(struct db *, const char *id, int *found);
#endif
