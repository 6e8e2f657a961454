/* apierr.h: reading the API's error answers (both 429 body shapes) and
 * what they mean for svc: the wait before a 429 is retried and the exit
 * status of a refused request. */
#ifndef SVC_CLI_APIERR_H
#define SVC_CLI_APIERR_H
#include <stddef.h>
#include <time.h>

/* svc's exit statuses (svc(1), EXIT STATUS). */
enum apierr_exit {
	APIERR_EXIT_OK = 0,
	APIERR_EXIT_ERROR = 1,		/* any other refusal; a job that failed */
	APIERR_EXIT_USAGE = 2,		/* command line; invalid_input */
	APIERR_EXIT_AUTH = 3,		/* no usable key, 401, 403 */
	APIERR_EXIT_NOT_FOUND = 4,	/* 404 */
	APIERR_EXIT_CREDITS = 5,	/* 402 */
	APIERR_EXIT_RATE_LIMITED = 6,	/* 429 after the retries */
	APIERR_EXIT_NETWORK = 7,	/* no answer from the API */
	APIERR_EXIT_SERVER = 8,		/* 5xx, or an answer that is not the API's */
	APIERR_EXIT__MAX
};
#define APIERR_EXIT_INTERRUPTED 130	/* Ctrl-C while waiting for a job */

extern const char *const apierr_exit_names[APIERR_EXIT__MAX];

struct apierr {
	char	 code[64];	/* "" when the body is not an API error */
	char	 message[512];	/* control characters replaced */
	int	 flat;		/* the flat 429 shape { success, error, ... } */
	long long reset_at;	/* Unix seconds when the window frees, 0 unknown */
};

/* Reads an error body: { "error": { code, message, details } } (details
 * reset_at in Unix seconds on 429) or the flat 429 shape { "success":
 * false, "error": "<text>", "limit", "reset_at": "<ISO 8601>" }. Anything
 * else leaves code and message empty. */
void	 apierr_parse(const char *body, size_t len, struct apierr *);
/* Seconds to wait before retrying a 429: the Retry-After header when it is
 * a number of seconds, else reset_at less now (at least 1); -1 when
 * neither says. */
long	 apierr_retry_wait(const char *retry_after, const struct apierr *,
	    time_t now);
/* The exit status of an HTTP answer (2xx: APIERR_EXIT_OK). */
enum apierr_exit apierr_exit(long status);
#endif
