/* api.h: what a responder process keeps (config, DB connection, trusted
 * proxies), what one request's handler is given, and the helpers every
 * handler uses (api.c). */
#ifndef SVC_API_H
#define SVC_API_H
#include "api/http.h"
#include "api/slots.h"
#include "core/auth.h"
#include "core/authcache.h"
#include "core/db.h"
#include "core/idempotency_pending.h"
#include "core/permits.h"
#include "core/ratelimit.h"
#include "core/websession.h"
#include "engine/verify.h"
#include "jobs/retention.h"
#include "jobs/upload_store.h"
#include "util/conf.h"
#include "util/ipnet.h"
#include "util/wake.h"

#define API_MAX_PARAMS 2
#define API_JSON_MAX (1024 * 1024)
/* An upload's body: the file and its form. */
#define UPLOAD_BODY_MAX (UPLOAD_STORE_FILE_MAX + 1024 * 1024)

/* What the responders of one host share, set up before they serve (by
 * the prefork master, or by a process serving alone). */
struct api_shared {
	struct authcache_gens *gens;	/* key cache generations, or NULL */
	struct permits	*permits;	/* rate-limit permits, or NULL */
	int		 slots_fd;	/* slots_create's file */
	long		 responders;	/* svc-api processes of the host */
	struct idempotency_pending *pending; /* entries left to abandon, or
					 * NULL */
};

struct api_ctx {
	const struct conf *conf;
	struct db	*db;		/* opened on first use, kept */
	struct verify_engine *engine;	/* made on first use, kept */
	struct ipnet	*proxies;
	size_t		 nproxies;
	struct authcache cache;		/* key rows and windows (authcache.h) */
	struct slots	*slots;		/* places for slow requests (slots.h) */
	struct permits	*permits;	/* the host's leases, or NULL: each
					 * counted request is a round trip */
	long		 responders;	/* svc-api processes on this host */
	struct idempotency_pending *pending; /* the host's entries left to
					 * abandon (idempotency_pending.h) */
};

struct api_call {
	struct api_ctx	*ctx;
	struct http_req	*req;
	struct http_resp *resp;
	int		 authenticated;
	struct auth_key	 key;
	uint8_t		 key_hash[32];	/* the presented key's, when authenticated */
	struct ratelimit_status rl;
	char		 params[API_MAX_PARAMS][256];
	size_t		 body_max;	/* the route's body limit */
	char		*account_for_log; /* IDS_MAX bytes, "" when none */
	const char	*idem_key;	/* Idempotency-Key of this request */
	int		 idem_done;	/* the handler stored the answer itself */
	struct idempotency_claim idem_claim; /* its running entry's token */
	int		 session;	/* authenticated by the dashboard's
					 * session cookie, not a key */
	struct websession ws;		/* that session */
	char		 session_id[WEBSESSION_ID_MAX];
};

typedef void (*api_handler_fn)(struct api_call *);

/* Opens the per-process DB connection if needed; on failure answers 503. */
struct db *api_db(struct api_call *);
/* Reads the body of a JSON request into c->req->body: 0, or -1 with 415
 * (another Content-Type), 413 (over c->body_max) or 408 answered. */
int	 api_json_read(struct api_call *);
/* Parses the body as a JSON object (415/413/400 answered on failure). */
json_t	*api_json_body(struct api_call *);
/* 500 verification_failed for an unexpected failure, logged with the
 * request id; 503 queue_unavailable when the database is unreachable. */
void	 api_internal_error(struct api_call *, const char *what);
/* 503 queue_unavailable with Retry-After; why is the message's start. */
void	 api_unavailable(struct api_call *, const char *why);
#define API_RETRY_AFTER "5"	/* seconds, on a 503 */
/* Work of kind was committed: wakes the host's svc-workers at once
 * (worker_wake_dir, wake.h) rather than at their next poll. */
void	 api_wake(struct api_call *, enum wake_kind);
/* The verification engine of this process; on failure answers 503. */
struct verify_engine *api_engine(struct api_call *);
/* 402 insufficient_credits with details.required and details.available. */
void	 api_insufficient_credits(struct api_call *, long long required,
	    long long available);
/* 409 too_many_jobs: the account has used (details.in_flight) jobs not
 * yet ended, account_jobs_in_flight_max (details.limit) or more. */
void	 api_too_many_jobs(struct api_call *, long long used);
/* For a request that shows a secret once (a key, a webhook's secret):
 * stores the answer o for its Idempotency-Key with field null and
 * "<field>_shown" false, so that a replay never holds the secret; takes
 * o. Written through db, in the transaction of what it answers, its
 * error returned; the caller sets c->idem_done. */
enum db_err api_idempotency_hide_in(struct api_call *, struct db *,
	    int status, json_t *o, const char *field);
/* Stores status and o (not taken) as the request's Idempotency-Key answer
 * through db, in the transaction of what it answers, so that what was
 * made is never left without its answer (a host or database node that
 * died between the two); nothing without a key. The caller sets
 * c->idem_done once that transaction is committed. */
enum db_err api_idempotency_answer_in(struct api_call *, struct db *,
	    int status, const json_t *o);
/* 400 invalid_email naming the field (details.field); printf message. */
void	 api_bad_field(struct api_call *, const char *field, const char *fmt,
	    ...) __attribute__((format(printf, 3, 4)));
/* An integer query parameter within [min, max], def when absent; 400
 * invalid_email naming it answered (-1) when it is something else. */
/* The retention a new job asks for: given (the request had
 * retention_days, days), else the account's or job_retention_days, bounded
 * by retention_days_max. A given value that is not a whole number of days
 * from 1 to retention_days_max (wrong: not even a whole number) answers 400
 * invalid_email naming retention_days and returns -1. */
int	 api_retention_ask(struct api_call *, int given, int wrong, long days,
	    struct retention_ask *);
int	 api_query_long(struct api_call *, const char *name, long min,
	    long max, long def, long *out);

/* Idempotency-Key (API.md) for a handler that hashes the request itself
 * (a streamed upload): the key's syntax (400 answered, -1), then the
 * stored answer: 0 to go on (the key is this request's now), -1 when the
 * response is decided (replay, 409 in use, 422 reused, 500). */
int	 api_idempotency_key_check(struct api_call *, const char *key);
int	 api_idempotency_begin(struct api_call *, const char *key,
	    const uint8_t hash[32]);
/* After a 5xx (or a refusal that leaves nothing made): forgets the
 * request's running entry so that a retry may run again, trying for
 * IDEMPOTENCY_ABANDON_TRY_MS while the database is out of reach, then
 * leaving it to the host's pending table (idempotency_pending.h). */
void	 api_idempotency_abandon(struct api_call *);
/* The host's entries left to abandon, deleted if the database answers
 * (before a request's Idempotency-Key is begun, after each request). */
void	 api_idempotency_flush(struct api_ctx *);

/* Handlers, one file per resource. */
void	 handler_rate_limit(struct api_call *);
void	 handler_openapi(struct api_call *);
void	 handler_session_create(struct api_call *);
void	 handler_session_get(struct api_call *);
void	 handler_session_accept(struct api_call *);
void	 handler_session_delete(struct api_call *);
void	 handler_credits_get(struct api_call *);
void	 handler_keys_create(struct api_call *);
void	 handler_keys_list(struct api_call *);
void	 handler_keys_delete(struct api_call *);
void	 handler_verify(struct api_call *);
void	 handler_bulk_create(struct api_call *);
void	 handler_bulk_batch_create(struct api_call *);
void	 handler_jobs_batch_get(struct api_call *);
void	 handler_jobs_list(struct api_call *);
void	 handler_jobs_get(struct api_call *);
void	 handler_jobs_progress(struct api_call *);
void	 handler_jobs_results(struct api_call *);
void	 handler_jobs_download(struct api_call *);
void	 handler_jobs_cancel(struct api_call *);
void	 handler_jobs_erase(struct api_call *);
void	 handler_audit_list(struct api_call *);
void	 handler_domain_check(struct api_call *);
void	 handler_upload(struct api_call *);
void	 handler_preview(struct api_call *);
void	 handler_preview_confirm(struct api_call *);
void	 handler_suppressions_add(struct api_call *);
void	 handler_suppressions_list(struct api_call *);
void	 handler_suppressions_delete(struct api_call *);
void	 handler_feedback_post(struct api_call *);
void	 handler_feedback_sender(struct api_call *);
void	 handler_feedback_report(struct api_call *);
void	 handler_webhooks_create(struct api_call *);
void	 handler_webhooks_list(struct api_call *);
void	 handler_webhooks_get(struct api_call *);
void	 handler_webhooks_update(struct api_call *);
void	 handler_webhooks_delete(struct api_call *);
void	 handler_webhooks_test(struct api_call *);
void	 handler_webhooks_rotate(struct api_call *);
void	 handler_webhooks_deliveries(struct api_call *);
#endif
