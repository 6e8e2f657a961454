/* conf.h: svc.conf, "name = value" lines; every setting is declared once in
 * the table in conf.c with its type, default and range. */
#ifndef SVC_CONF_H
#define SVC_CONF_H
#include "util/buf.h"
#include <stdio.h>

enum conf_key {
	CONF_DB_HOST,
	CONF_DB_PORT,
	CONF_DB_SOCKET,
	CONF_DB_HOSTS,
	CONF_DB_NAME,
	CONF_DB_USER,
	CONF_DB_PASSWORD,
	CONF_DB_PASSWORD_FILE,
	CONF_CACHE_HASH_KEY,
	CONF_CACHE_HASH_KEY_FILE,
	CONF_BASE_URL,
	CONF_SERVICE_DOMAIN,
	CONF_TRUSTED_PROXIES,
	CONF_API_WORKERS,
	CONF_AUTH_CACHE_MS,
	CONF_API_JOB_MEMORY_MB,
	CONF_API_BODY_TIMEOUT_MS,
	CONF_RATE_WINDOW_SECONDS,
	CONF_RATE_PERMITS_MAX,
	CONF_RUN_DIR,
	CONF_PROBE_CONCURRENCY_PER_ACCOUNT,
	CONF_PROBE_RESERVED_RESPONDERS,
	CONF_ACCOUNT_JOBS_IN_FLIGHT_MAX,
	CONF_ACCOUNT_UPLOAD_STORAGE_MB,
	CONF_ACCOUNT_SANDBOX_ROWS_PER_DAY,
	CONF_ACCOUNT_SUPPRESSIONS_MAX,
	CONF_LOG_LEVEL,
	CONF_LOG_FILE,
	CONF_WORKER_POLL_INTERVAL,
	CONF_WORKER_WAKE_DIR,
	CONF_WORKER_ONCE_SECONDS,
	CONF_WORKER_LEASE_SECONDS,
	CONF_HOUSEKEEPING_INTERVAL,
	CONF_JOB_RETENTION_DAYS,
	CONF_RETENTION_DAYS_MAX,
	CONF_TEST_CLOCK_OFFSET_SECONDS,
	CONF_DNS_RESOLVER,
	CONF_DNS_TIMEOUT_MS,
	CONF_SMTP_PORT,
	CONF_SMTP_HELO_NAME,
	CONF_SMTP_MAIL_FROM,
	CONF_SMTP_EGRESS,
	CONF_SMTP_PROVIDER_ROUTES_FILE,
	CONF_SMTP_CONNECT_TIMEOUT_MS,
	CONF_SMTP_REPLY_TIMEOUT_MS,
	CONF_SMTP_TLS_RESUME,
	CONF_VERIFY_TIME_BUDGET_MS,
	CONF_GREYLIST_RETRY_MS,
	CONF_ALLOW_PRIVATE_MX,
	CONF_ALLOW_PRIVATE_URLS,
	CONF_ALLOW_PRIVATE_URL_NETWORKS,
	CONF_ALLOW_URL_PORTS,
	CONF_CA_FILE,
	CONF_LISTS_DIR,
	CONF_LISTS_RULES_URL,
	CONF_WORKER_CONCURRENCY,
	CONF_WORKER_DOMAIN_CONCURRENCY,
	CONF_WORKER_DOMAIN_CONCURRENCY_INITIAL,
	CONF_WORKER_RCPTS_PER_SESSION,
	CONF_WORKER_TRANSACTIONS_PER_SESSION,
	CONF_WORKER_SESSION_RCPT_LIMIT,
	CONF_PACING_WINDOW_MS,
	CONF_PACING_PENALTY_MS,
	CONF_PACING_PAUSE_MS,
	CONF_PACING_PATIENCE_MS,
	CONF_PACING_MAX_RATE,
	CONF_PACING_LEARNED_PERCENT,
	CONF_PACING_BLOCK_STRIKES,
	CONF_PACING_PAIR_SESSIONS,
	CONF_WORKER_GREYLIST_DELAY,
	CONF_WORKER_GREYLIST_RETRIES,
	CONF_PREVIEW_BUDGET_SECONDS,
	CONF_PREVIEW_SMTP_MIN_ROWS,
	CONF_PREVIEW_REFRESH_LIMIT,
	CONF_SOURCE_URL_TIMEOUT_SECONDS,
	CONF_SOURCE_URL_MIN_RATE,
	CONF_SOURCE_URL_MIN_RATE_SECONDS,
	CONF_WEBHOOK_RETRY_SCHEDULE,
	CONF_WEBHOOK_TIMEOUT_MS,
	CONF_WEBHOOK_CONCURRENCY,
	CONF_WEBHOOK_HOST_CONCURRENCY,
	CONF_WEBHOOK_ACCOUNT_CONCURRENCY,
	CONF_WEBHOOK_TEST_LIMIT,
	CONF_STATUS_MIN_WORKERS,
	CONF_STATUS_WORKER_WINDOW,
	CONF_STATUS_MAX_JOB_AGE,
	CONF_STATUS_MAX_QUEUE,
	CONF_STATUS_MAX_OUTBOX_AGE,
	CONF_DOCTOR_ADDRESS,
	CONF_DOCTOR_PORT25_TARGET,
	CONF_DOCTOR_DNSBL_ZONES,
	CONF_DOCTOR_SKIP,
	CONF_FEEDBACK_HASH_KEY,
	CONF_FEEDBACK_HASH_KEY_FILE,
	CONF_FEEDBACK_RETENTION_DAYS,
	CONF_FEEDBACK_WEBHOOK_RATE_LIMIT,
	CONF_CALIBRATION_WINDOW_DAYS,
	CONF_CALIBRATION_MIN_OUTCOMES,
	CONF_CALIBRATION_UPDATE_SECONDS,
	CONF_CALIBRATION_RELOAD_SECONDS,
	CONF_CALIBRATION_SEND_SAFE_MIN,
	CONF_CALIBRATION_AVOID_BELOW,
	CONF_SESSION_IDLE_SECONDS,
	CONF_SESSION_MAX_SECONDS,
	CONF_SIGNIN_ATTEMPTS_MAX,
	CONF_SIGNIN_ADDRESS_ATTEMPTS_MAX,
	CONF_INVITE_TTL_SECONDS,
	CONF__MAX
};

enum conf_type {
	CONF_TYPE_STRING,
	CONF_TYPE_INT,
	CONF_TYPE_BOOL,
	CONF_TYPE_DURATIONS,	/* strparse_durations, CONF_DURATIONS_MAX */
	CONF_TYPE_ENDPOINTS,	/* dbhosts_parse, DBHOSTS_MAX */
	CONF_TYPE__MAX
};

/* Entries a CONF_TYPE_DURATIONS list may have. */
#define CONF_DURATIONS_MAX 20

struct conf_setting {
	const char	*name;
	enum conf_type	 type;
	const char	*def;
	long		 min, max;	/* CONF_TYPE_INT only */
	int		 secret;	/* hidden by conf_dump */
	const char	*help;
};

extern const struct conf_setting conf_settings[CONF__MAX];

struct conf {
	char	*str[CONF__MAX];	/* every value as text */
	long	 num[CONF__MAX];	/* INT and BOOL values; entries of
					 * a DURATIONS list */
	char	 path[512];		/* file it came from, "" for defaults */
};

/* Path from $SVC_CONF, else SYSCONFDIR/svc/svc.conf. */
const char *conf_default_path(void);
void	 conf_defaults(struct conf *);
/* Loads defaults, then the file. A missing file is an error only if
 * must_exist. Errors name the file, line and setting. */
int	 conf_load(struct conf *, const char *path, int must_exist,
	    struct buf *err);
/* The same, from an open stream; name is used in messages and as the path
 * shown by conf_dump. The caller closes the stream. */
int	 conf_load_stream(struct conf *, FILE *, const char *name,
	    struct buf *err);
/* feedback_hash_key read again from feedback_hash_key_file (svcadm db
 * migrate, after writing that file): 0, or -1 with err. */
int	 conf_reread_feedback_key(struct conf *, struct buf *err);
/* Sets one value by name, with the same checks as a file line. */
int	 conf_set(struct conf *, const char *name, const char *value,
	    struct buf *err);
void	 conf_free(struct conf *);
const char *conf_str(const struct conf *, enum conf_key);
long	 conf_int(const struct conf *, enum conf_key);
void	 conf_dump(const struct conf *, FILE *);
#endif
