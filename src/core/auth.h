/* auth.h: API keys (format, hash, lookup), scopes and tiers. */
#ifndef SVC_AUTH_H
#define SVC_AUTH_H
#include "core/db.h"
#include "core/ratelimit.h"
#include "util/ids.h"
#include <stdint.h>

enum auth_scope {
	AUTH_SCOPE_VERIFY_SINGLE,
	AUTH_SCOPE_VERIFY_BULK,
	AUTH_SCOPE_JOBS_READ,
	AUTH_SCOPE_JOBS_WRITE,
	AUTH_SCOPE_WEBHOOKS_MANAGE,
	AUTH_SCOPE_CREDITS_READ,
	AUTH_SCOPE_FEEDBACK_WRITE,
	AUTH_SCOPE_ALL,		/* "*" */
	AUTH_SCOPE__MAX
};
extern const char *const auth_scope_names[AUTH_SCOPE__MAX];

enum auth_tier {
	AUTH_TIER_ANONYMOUS,
	AUTH_TIER_FREE,
	AUTH_TIER_TRIAL,
	AUTH_TIER_PRO,
	AUTH_TIER_ADMIN,
	AUTH_TIER__MAX
};
extern const char *const auth_tier_names[AUTH_TIER__MAX];
/* Requests per minute of each tier (spec, Limits). */
extern const long auth_tier_limits[AUTH_TIER__MAX];

enum auth_result {
	AUTH_OK,
	AUTH_MISSING,		/* no Authorization header */
	AUTH_MALFORMED,		/* not "Bearer svc_live_/svc_test_..." */
	AUTH_UNKNOWN,		/* no such key */
	AUTH_EXPIRED,
	AUTH_REVOKED,
	AUTH_ORG_CHANGED,	/* an organization's key whose account has left
				 * that organization (refused: 403) */
	AUTH_DB_ERROR,
	AUTH_RESULT__MAX
};
extern const char *const auth_result_names[AUTH_RESULT__MAX];

#define AUTH_KEY_RANDOM_LEN 40
#define AUTH_KEY_MAX 64		/* "svc_live_" + 40 + NUL fits */
#define AUTH_LIVE_PREFIX "svc_live_"
#define AUTH_TEST_PREFIX "svc_test_"

struct auth_key {
	char		 key_id[IDS_MAX];
	char		 account_id[IDS_MAX];
	char		 org_id[IDS_MAX];	/* "" unless org-managed */
	enum auth_tier	 tier;
	char		 subscription_type[48];
	int		 subscription_active;
	unsigned	 scopes;		/* bit per enum auth_scope */
	int		 sandbox;
	long		 key_rate_limit;	/* -1: not set */
	int		 key_rate_limit_operator; /* set by svcadm: not clamped */
	long		 org_rate_limit;	/* -1: not set or not org-managed */
	char		 ip_allowlist[4001];
};

int	 auth_scope_parse_list(const char *, unsigned *mask);
void	 auth_scope_format(unsigned mask, struct buf *);
int	 auth_has_scope(unsigned mask, enum auth_scope);
int	 auth_tier_parse(const char *, enum auth_tier *);
void	 auth_key_hash(const char *key, uint8_t out[32]);
/* Syntactic check of a presented key; sets *sandbox from its prefix. */
int	 auth_key_well_formed(const char *key, int *sandbox);
/* Creates a new random key text with the live or test prefix. */
int	 auth_key_generate(int sandbox, char out[AUTH_KEY_MAX]);
/* From the raw Authorization header value (NULL when absent): AUTH_OK and
 * the presented key's hash, or AUTH_MISSING / AUTH_MALFORMED. */
enum auth_result auth_presented_hash(const char *authorization,
	    uint8_t hash[32]);
/* The key with that hash: AUTH_OK (and *expires_ms, the key's expiry in
 * Unix ms, 0 for none), AUTH_UNKNOWN, AUTH_REVOKED, AUTH_EXPIRED,
 * AUTH_ORG_CHANGED (the key was made for an organization its account is no
 * longer a member of: it would charge that organization's pool) or
 * AUTH_DB_ERROR. */
enum auth_result auth_lookup(struct db *, const uint8_t hash[32],
	    struct auth_key *, int64_t *expires_ms);
/* auth_lookup and, in the same statement, the window of the key's account
 * bucket at now_ms (what ratelimit_window_read reads); *w is set only when
 * AUTH_OK is returned. */
enum auth_result auth_lookup_window(struct db *, const uint8_t hash[32],
	    int64_t now_ms, struct auth_key *, int64_t *expires_ms,
	    struct ratelimit_window *w);
/* The credit pool a key pays from: its organization's, else its account's. */
const char *auth_key_pool(const struct auth_key *);
/* The limit applying to requests with this key: its own rateLimit, else
 * its organization's api_rate_limit, else its account's tier's. A
 * rateLimit the customer set is clamped to what the key would have
 * without it, as the account and organization are now (a downgrade takes
 * effect at once); one the operator set (svcadm) is used as it is. */
long	 auth_key_rate_limit(const struct auth_key *);
#endif
