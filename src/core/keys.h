/* keys.h: creating, listing and revoking API keys. */
#ifndef SVC_KEYS_H
#define SVC_KEYS_H
#include "core/auth.h"
#include "core/db.h"

#define KEYS_RATE_LIMIT_MAX 100000
/* The spec's default rateLimit (requests per minute) of a customer's key
 * made without one, or the limit the key would otherwise have when that is
 * lower. */
#define KEYS_RATE_LIMIT_DEFAULT 100
#define KEYS_NAME_MAX 200

enum keys_err {
	KEYS_OK,
	KEYS_INVALID,		/* bad input; the buf names the field */
	KEYS_NOT_FOUND,
	KEYS_DB,
	KEYS_ERR__MAX
};
extern const char *const keys_err_names[KEYS_ERR__MAX];

struct keys_spec {
	const char	*account_id;
	const char	*org_id;	/* NULL: the account's own pool */
	const char	*name;		/* NULL: "" */
	unsigned	 scopes;
	int		 sandbox;
	long		 rate_limit;	/* -1: not set */
	/* A customer's key (POST /v1/keys): rate_limit may not go above the
	 * limit the key would have without it (its organization's
	 * api_rate_limit, else its account's tier), and is clamped to it
	 * again at every use (auth_key_rate_limit). Only the operator
	 * (svcadm, capped 0) raises a key above that, and such a limit is
	 * kept as it is (api_keys.rate_limit_operator). Without one (-1) a
	 * customer's key gets KEYS_RATE_LIMIT_DEFAULT, or that limit when
	 * lower: keys_create writes the limit given into rate_limit. An
	 * operator's key without one has none (the organization's or the
	 * tier's limit applies). */
	int		 capped;
	const char	*ip_allowlist;	/* NULL or CIDR list */
	const char	*expires_at;	/* NULL or ISO 8601 UTC, in the future */
	/* NULL, or run in the key's transaction after its row is written
	 * (then(db, id, then_arg)): what must be written with the key or not
	 * at all, such as the request's Idempotency-Key answer */
	enum db_err	(*then)(struct db *, const char *id, void *);
	void		*then_arg;
};

struct keys_info {
	const char	*id, *name, *hint, *scopes, *org_id, *ip_allowlist;
	const char	*created_at, *expires_at, *revoked_at; /* ISO or NULL */
	int		 sandbox;
	long		 rate_limit;	/* -1: not set */
};

typedef int (*keys_each_fn)(void *, const struct keys_info *);

enum keys_err keys_create(struct db *, struct keys_spec *,
	    char id[IDS_MAX], char key[AUTH_KEY_MAX], struct buf *why);
/* account NULL: any account (operator). KEYS_NOT_FOUND for an unknown
 * key, another account's, or one revoked already. */
enum keys_err keys_revoke(struct db *, const char *account, const char *id);
/* KEYS_OK when the key exists, is not revoked and (account not NULL)
 * belongs to the account; else KEYS_NOT_FOUND. */
enum keys_err keys_find_active(struct db *, const char *account,
	    const char *id);
/* The operator's override of a key's limit (-1: none, back to the
 * organization's or the tier's), kept above the tier or organization
 * limit too. KEYS_NOT_FOUND for an unknown key. */
enum keys_err keys_set_rate_limit(struct db *, const char *id, long limit);
/* The requests per minute a key of this account (and organization, NULL
 * for none) has without an override of its own. */
enum keys_err keys_default_limit(struct db *, const char *account,
	    const char *org, long *limit);
enum keys_err keys_list(struct db *, const char *account, keys_each_fn,
	    void *);
#endif
