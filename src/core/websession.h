/* websession.h: the dashboard's sign-in: account passwords (Argon2id),
 * browser sessions (random id stored hashed, CSRF token, idle and absolute
 * expiry) kept in MariaDB (sql/026_web_sessions.sql). */
#ifndef SVC_WEBSESSION_H
#define SVC_WEBSESSION_H
#include "core/auth.h"
#include "core/db.h"
#include "util/ids.h"

#define WEBSESSION_COOKIE "svc_session"
#define WEBSESSION_ID_LEN 43	/* base62 characters of a session id */
#define WEBSESSION_ID_MAX (WEBSESSION_ID_LEN + 1)
#define WEBSESSION_CSRF_MAX (WEBSESSION_ID_LEN + 1)
#define WEBSESSION_PASSWORD_MIN 12
#define WEBSESSION_PASSWORD_MAX 1024

enum websession_result {
	WEBSESSION_OK,
	WEBSESSION_REFUSED,	/* unknown e-mail, no password, wrong password,
				 * unknown or ended session: one answer */
	WEBSESSION_INVALID,	/* a password outside the length limits */
	WEBSESSION_ERROR	/* database or libsodium failure */
};

struct websession {
	char	 account_id[IDS_MAX];
	char	 email[256];
	char	 csrf[WEBSESSION_CSRF_MAX];
	int64_t	 created_ms;
	int64_t	 expires_ms;	/* the earlier of the idle and the absolute end */
};

/* Stores the Argon2id hash of password for the account; INVALID (too
 * short or long), REFUSED (no such account) or ERROR. */
enum websession_result websession_set_password(struct db *,
	    const char *account_id, const char *password);
/* Checks email and password and, when they match, starts a session: id
 * (the cookie's value) and *s. Unknown e-mail and wrong password both
 * answer REFUSED after one Argon2id verification each (similar time). A
 * hash made with weaker parameters than today's is replaced. */
enum websession_result websession_signin(struct db *, const char *email,
	    const char *password, char id[WEBSESSION_ID_MAX],
	    struct websession *s);
/* The session of a cookie value: OK (and its last use set to now),
 * REFUSED (malformed, unknown, idle longer than idle_s or older than
 * max_s), or ERROR. */
enum websession_result websession_lookup(struct db *, const char *id,
	    long idle_s, long max_s, struct websession *s);
/* Ends the session (sign-out); OK even when it had already ended. */
enum websession_result websession_end(struct db *, const char *id);
/* What a session may do, as a key would have it (auth.h): the account's
 * tier and subscription, every scope, its own pool, no allowlist.
 * WEBSESSION_REFUSED when the account is gone. */
enum websession_result websession_key(struct db *, const char *account_id,
	    struct auth_key *);
/* A one-time invitation for the account, valid ttl_s seconds: token (43
 * base62 characters, for the link). REFUSED: no such account. */
enum websession_result websession_invite(struct db *, const char *account_id,
	    long ttl_s, char token[WEBSESSION_ID_MAX]);
/* Uses an invitation: sets password (INVALID: its length) and marks the
 * token used, in one transaction; REFUSED when the token is unknown, used
 * or expired. */
enum websession_result websession_accept(struct db *, const char *token,
	    const char *password);
/* Deletes up to limit ended sessions (idle longer than idle_s or older
 * than max_s: websession_lookup already refuses them) and up to limit
 * invitations used or expired. The rows deleted, or -1. */
long long websession_purge(struct db *, long idle_s, long max_s, long limit);
/* 1 when the presented CSRF token equals the session's (constant time). */
int	 websession_csrf_ok(const struct websession *, const char *presented);
#endif
