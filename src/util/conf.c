/* conf.c: the settings table and the svc.conf reader. A file has one
 * "name = value" per line; '#' starts a comment; unknown names, values out
 * of range and repeated names are errors, reported with file and line.
 * conf_load_stream parses an open stream, so tests and the fuzz target can
 * feed it a buffer through fmemopen. */
#include "util/conf.h"
#include "util/dbhosts.h"
#include "util/strparse.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif
#ifndef PKGDATADIR
#define PKGDATADIR "/usr/share/svc"
#endif

const struct conf_setting conf_settings[CONF__MAX] = {
	[CONF_DB_HOST] = { "db_host", CONF_TYPE_STRING, "localhost", 0, 0, 0,
	    "MariaDB host (\"localhost\" means the socket)" },
	[CONF_DB_PORT] = { "db_port", CONF_TYPE_INT, "3306", 1, 65535, 0,
	    "MariaDB TCP port" },
	[CONF_DB_SOCKET] = { "db_socket", CONF_TYPE_STRING, "", 0, 0, 0,
	    "MariaDB unix socket path (empty: client default)" },
	[CONF_DB_HOSTS] = { "db_hosts", CONF_TYPE_ENDPOINTS, "", 0, 0, 0,
	    "MariaDB endpoints, \"host:port host:port ...\" (Galera nodes, "
	    "tried in turn, only a Synced one used; empty: db_host and "
	    "db_port)" },
	[CONF_DB_NAME] = { "db_name", CONF_TYPE_STRING, "svc", 0, 0, 0,
	    "database name" },
	[CONF_DB_USER] = { "db_user", CONF_TYPE_STRING, "svc", 0, 0, 0,
	    "database user" },
	[CONF_DB_PASSWORD] = { "db_password", CONF_TYPE_STRING, "", 0, 0, 1,
	    "database password" },
	[CONF_DB_PASSWORD_FILE] = { "db_password_file", CONF_TYPE_STRING, "",
	    0, 0, 0, "file holding the database password (0600)" },
	[CONF_CACHE_HASH_KEY] = { "cache_hash_key", CONF_TYPE_STRING, "", 0, 0,
	    1, "key of the verdict cache's address hashes (64 hex digits; "
	    "used when cache_hash_key_file is empty)" },
	[CONF_CACHE_HASH_KEY_FILE] = { "cache_hash_key_file", CONF_TYPE_STRING,
	    SYSCONFDIR "/svc/cache_hash_key", 0, 0, 0, "file holding the "
	    "verdict cache's key (svcadm db migrate creates it, svcadm cache "
	    "rotate-key replaces it; empty: cache_hash_key)" },
	[CONF_BASE_URL] = { "base_url", CONF_TYPE_STRING,
	    "http://127.0.0.1:8080", 0, 0, 0,
	    "public base URL, used for absolute links" },
	[CONF_SERVICE_DOMAIN] = { "service_domain", CONF_TYPE_STRING,
	    "svc.example", 0, 0, 0,
	    "sandbox addresses live at sandbox.<service_domain>" },
	[CONF_TRUSTED_PROXIES] = { "trusted_proxies", CONF_TYPE_STRING, "",
	    0, 0, 0, "CIDRs whose X-Forwarded-For is believed" },
	[CONF_API_WORKERS] = { "api_workers", CONF_TYPE_INT, "16", 1, 512, 0,
	    "svc-api processes of the host (the prefork master's without -n; "
	    "mod_fcgid's FcgidMaxProcessesPerClass)" },
	[CONF_AUTH_CACHE_MS] = { "auth_cache_ms", CONF_TYPE_INT, "1000", 0,
	    60000, 0, "how long svc-api trusts a key row it read (0: never); "
	    "key revocations and account changes wait this long" },
	[CONF_API_JOB_MEMORY_MB] = { "api_job_memory_mb", CONF_TYPE_INT,
	    "144", 8, 4096, 0, "MiB a bulk or batch request's addresses may "
	    "take in svc-api besides the body, else 413" },
	[CONF_API_BODY_TIMEOUT_MS] = { "api_body_timeout_ms", CONF_TYPE_INT,
	    "30000", 100, 600000, 0, "a request's body must reach svc-api "
	    "within this long, else 408 (the web server buffers it first)" },
	[CONF_RATE_WINDOW_SECONDS] = { "rate_window_seconds", CONF_TYPE_INT,
	    "60", 1, 3600, 0, "length of the sliding rate-limit window (the "
	    "spec's 60; shorter ones are for tests)" },
	[CONF_RATE_PERMITS_MAX] = { "rate_permits_max", CONF_TYPE_INT,
	    "1000", 1, 100000, 0, "permits of an account's (or address's) "
	    "window a host leases from MariaDB at once, handed out from "
	    "memory (1: every counted request is a round trip)" },
	[CONF_RUN_DIR] = { "run_dir", CONF_TYPE_STRING, "", 0, 0, 0,
	    "folder of svc-api's shared slot file and svc-worker --once's lock "
	    "(empty: memory shared by one master's responders, no lock; set it "
	    "under mod_fcgid and cron)" },
	[CONF_PROBE_CONCURRENCY_PER_ACCOUNT] = {
	    "probe_concurrency_per_account", CONF_TYPE_INT, "4", 1, 64, 0,
	    "single verifications and domain checks one account may have "
	    "probing at once on a host (beyond: 429)" },
	[CONF_PROBE_RESERVED_RESPONDERS] = { "probe_reserved_responders",
	    CONF_TYPE_INT, "2", 0, 511, 0,
	    "responders never used by probes and revocation waits, so other "
	    "requests always find one (a probe beyond: 503)" },
	[CONF_ACCOUNT_JOBS_IN_FLIGHT_MAX] = { "account_jobs_in_flight_max",
	    CONF_TYPE_INT, "50", 1, 1000000, 0,
	    "jobs (bulk, batch, upload) one account may have not yet "
	    "completed, failed or cancelled (beyond: 409 too_many_jobs)" },
	[CONF_ACCOUNT_UPLOAD_STORAGE_MB] = { "account_upload_storage_mb",
	    CONF_TYPE_INT, "500", 1, 1000000, 0,
	    "MiB of uploaded files not yet ingested one account may have "
	    "stored (beyond: 409 upload_storage_exceeded)" },
	[CONF_ACCOUNT_SANDBOX_ROWS_PER_DAY] = { "account_sandbox_rows_per_day",
	    CONF_TYPE_INT, "100000", 0, 100000000, 0,
	    "rows costing no credit (sandbox addresses, entries that are not "
	    "addresses) one account's bulk and batch jobs may have per UTC "
	    "day (beyond: 429 sandbox_daily_limit)" },
	[CONF_ACCOUNT_SUPPRESSIONS_MAX] = { "account_suppressions_max",
	    CONF_TYPE_INT, "1000000", 0, 100000000, 0,
	    "entries one account's suppression list may hold (beyond: 409 "
	    "suppression_limit_reached)" },
	[CONF_LOG_LEVEL] = { "log_level", CONF_TYPE_STRING, "info", 0, 0, 0,
	    "error, warn, info or debug" },
	[CONF_LOG_FILE] = { "log_file", CONF_TYPE_STRING, "", 0, 0, 0,
	    "log file (empty: standard error)" },
	[CONF_WORKER_POLL_INTERVAL] = { "worker_poll_interval", CONF_TYPE_INT,
	    "2", 1, 3600, 0, "seconds between queue polls when idle" },
	[CONF_WORKER_WAKE_DIR] = { "worker_wake_dir", CONF_TYPE_STRING, "",
	    0, 0, 0, "folder of the sockets svc-api wakes the host's "
	    "svc-workers through when a job is queued (empty: they only "
	    "poll)" },
	[CONF_WORKER_ONCE_SECONDS] = { "worker_once_seconds", CONF_TYPE_INT,
	    "50", 1, 86400, 0, "seconds a svc-worker --once run works before "
	    "it gives back what it holds and exits (cron: under 60)" },
	[CONF_WORKER_LEASE_SECONDS] = { "worker_lease_seconds", CONF_TYPE_INT,
	    "120", 5, 86400, 0, "how long a claimed chunk stays leased" },
	[CONF_HOUSEKEEPING_INTERVAL] = { "housekeeping_interval",
	    CONF_TYPE_INT, "60", 1, 86400, 0,
	    "seconds between housekeeping passes" },
	[CONF_JOB_RETENTION_DAYS] = { "job_retention_days", CONF_TYPE_INT,
	    "90", 1, 3650, 0, "days a job's data (results, original rows, "
	    "stored file, callback data) is kept after the job ended, unless "
	    "the job or its account asks otherwise (batch jobs: 30 at most, "
	    "the spec's); then it is erased and the job keeps its counts" },
	[CONF_RETENTION_DAYS_MAX] = { "retention_days_max", CONF_TYPE_INT,
	    "365", 1, 3650, 0, "the most days a job's retention_days or an "
	    "account's retention may ask for" },
	[CONF_TEST_CLOCK_OFFSET_SECONDS] = { "test_clock_offset_seconds",
	    CONF_TYPE_INT, "0", 0, 3650L * 86400, 0, "for tests only: "
	    "housekeeping erases data as if the clock were this many seconds "
	    "ahead (keep 0 in production)" },
	[CONF_DNS_RESOLVER] = { "dns_resolver", CONF_TYPE_STRING, "", 0, 0, 0,
	    "resolver address[:port] (empty: /etc/resolv.conf)" },
	[CONF_DNS_TIMEOUT_MS] = { "dns_timeout_ms", CONF_TYPE_INT, "3000",
	    100, 60000, 0, "DNS query timeout" },
	[CONF_SMTP_PORT] = { "smtp_port", CONF_TYPE_INT, "25", 1, 65535, 0,
	    "port of the MX hosts" },
	[CONF_SMTP_HELO_NAME] = { "smtp_helo_name", CONF_TYPE_STRING,
	    "verifier.svc.example", 0, 0, 0, "name sent in EHLO/HELO" },
	[CONF_SMTP_MAIL_FROM] = { "smtp_mail_from", CONF_TYPE_STRING,
	    "verify@svc.example", 0, 0, 0, "envelope sender of probes" },
	[CONF_SMTP_EGRESS] = { "smtp_egress", CONF_TYPE_STRING, "direct", 0,
	    0, 1, "routes SMTP probes leave by, spread over in turn: direct, "
	    "bind:ADDRESS, socks5://[USER:PASS@]HOST:PORT (hidden by svcadm "
	    "config: it may hold a proxy password)" },
	[CONF_SMTP_PROVIDER_ROUTES_FILE] = { "smtp_provider_routes_file",
	    CONF_TYPE_STRING, "", 0, 0, 0, "per-provider override file: a "
	    "provider's MX hosts pinned to some smtp_egress routes, with their "
	    "own HELO name and MAIL FROM (empty: none)" },
	[CONF_SMTP_CONNECT_TIMEOUT_MS] = { "smtp_connect_timeout_ms",
	    CONF_TYPE_INT, "10000", 100, 120000, 0, "TCP connect timeout" },
	[CONF_SMTP_REPLY_TIMEOUT_MS] = { "smtp_reply_timeout_ms",
	    CONF_TYPE_INT, "15000", 100, 300000, 0, "per-reply timeout" },
	[CONF_SMTP_TLS_RESUME] = { "smtp_tls_resume", CONF_TYPE_BOOL, "yes",
	    0, 1, 0, "offer the MX hosts TLS session resumption: session "
	    "data kept per host name, port and egress route (an hour at "
	    "most)" },
	[CONF_VERIFY_TIME_BUDGET_MS] = { "verify_time_budget_ms",
	    CONF_TYPE_INT, "20000", 500, 300000, 0,
	    "total time a single verification or domain check may take, "
	    "DNS included" },
	[CONF_GREYLIST_RETRY_MS] = { "greylist_retry_ms", CONF_TYPE_INT,
	    "3000", 0, 600000, 0,
	    "wait before a greylisted single verification is retried "
	    "(within verify_time_budget_ms)" },
	[CONF_ALLOW_PRIVATE_MX] = { "allow_private_mx", CONF_TYPE_BOOL, "no",
	    0, 1, 0, "probe MX hosts on private/loopback addresses" },
	[CONF_ALLOW_PRIVATE_URLS] = { "allow_private_urls", CONF_TYPE_BOOL,
	    "no", 0, 1, 0, "allow private/loopback and http:// URLs" },
	[CONF_ALLOW_PRIVATE_URL_NETWORKS] = { "allow_private_url_networks",
	    CONF_TYPE_STRING, "", 0, 0, 0,
	    "private networks (CIDR) that outbound URLs may connect to when "
	    "their host name resolves into them (empty: none)" },
	[CONF_ALLOW_URL_PORTS] = { "allow_url_ports", CONF_TYPE_STRING, "", 0,
	    0, 0, "ports outbound URLs may name besides 443 (and 80 for "
	    "http), comma-separated (empty: none)" },
	[CONF_CA_FILE] = { "ca_file", CONF_TYPE_STRING, "", 0, 0, 0,
	    "CA bundle for outbound TLS (empty: system)" },
	[CONF_LISTS_DIR] = { "lists_dir", CONF_TYPE_STRING, PKGDATADIR "/lists", 0, 0,
	    0, "folder of the domain and local-part lists" },
	[CONF_LISTS_RULES_URL] = { "lists_rules_url", CONF_TYPE_STRING, "", 0,
	    0, 0, "https:// folder URL that svcadm lists update fetches "
	    "mx_providers.txt, smtp_reply_rules.txt and pacing_defaults.txt "
	    "from (empty: the installed ones are kept)" },
	[CONF_WORKER_CONCURRENCY] = { "worker_concurrency", CONF_TYPE_INT,
	    "50", 1, 1000, 0,
	    "SMTP sessions one svc-worker runs at once" },
	[CONF_WORKER_DOMAIN_CONCURRENCY] = { "worker_domain_concurrency",
	    CONF_TYPE_INT, "20", 1, 100, 0,
	    "SMTP sessions one svc-worker runs at once to one MX host, at "
	    "most (the limit its window grows to)" },
	[CONF_WORKER_DOMAIN_CONCURRENCY_INITIAL] = {
	    "worker_domain_concurrency_initial", CONF_TYPE_INT, "5", 1, 100, 0,
	    "SMTP sessions one svc-worker runs at once to an MX host it has "
	    "just met or that deferred (its window grows by one a transaction "
	    "answered in full while every session of it is in use, up to "
	    "worker_domain_concurrency)" },
	[CONF_WORKER_RCPTS_PER_SESSION] = { "worker_rcpts_per_session",
	    CONF_TYPE_INT, "50", 1, 100, 0,
	    "recipients of one domain checked in one SMTP transaction of a "
	    "job" },
	[CONF_WORKER_TRANSACTIONS_PER_SESSION] = {
	    "worker_transactions_per_session", CONF_TYPE_INT, "20", 1, 1000, 0,
	    "transactions (one domain's recipients each) one SMTP session of "
	    "a job carries at most, for domains whose MX is the same host "
	    "(1: a session per transaction)" },
	[CONF_WORKER_SESSION_RCPT_LIMIT] = { "worker_session_rcpt_limit",
	    CONF_TYPE_INT, "2000", 1, 100000, 0,
	    "recipients one SMTP session of a job sends at most over its "
	    "transactions (a later transaction carries what still fits; the "
	    "first is never cut)" },
	[CONF_PACING_WINDOW_MS] = { "pacing_window_ms", CONF_TYPE_INT,
	    "60000", 1000, 60000, 0,
	    "window of a paced (mail host, egress) budget: a rate of R a "
	    "minute lets R * window / 60000 RCPTs into any window, on all "
	    "worker hosts together; a paced rate grows once a window (at "
	    "most the 60 s that rate_counts is kept for)" },
	[CONF_PACING_PENALTY_MS] = { "pacing_penalty_ms", CONF_TYPE_INT,
	    "300000", 100, 86400000, 0,
	    "after a 421 / 4.7.x \"slow down\", nothing is sent to that host "
	    "from that egress for this long (pacing_defaults.txt may set a "
	    "provider's own)" },
	[CONF_PACING_PAUSE_MS] = { "pacing_pause_ms", CONF_TYPE_INT,
	    "3600000", 1000, 604800000, 0,
	    "a (mail host, egress) pair that blocked us (5.7.x naming our "
	    "client or a DNSBL, or pacing_block_strikes \"slow down\"s in a "
	    "row) is paused this long" },
	[CONF_PACING_PATIENCE_MS] = { "pacing_patience_ms", CONF_TYPE_INT,
	    "900000", 0, 604800000, 0,
	    "addresses wait this long at most for a paused pair; longer, they "
	    "end unknown / smtp_blocked (refunded as unknown)" },
	[CONF_PACING_MAX_RATE] = { "pacing_max_rate", CONF_TYPE_INT, "0", 0,
	    100000000, 0,
	    "ceiling of every paced pair's rate, RCPTs a minute (0: none; "
	    "shipped rates are starts, not ceilings)" },
	[CONF_PACING_LEARNED_PERCENT] = { "pacing_learned_percent",
	    CONF_TYPE_INT, "90", 50, 100, 0,
	    "a pair that has heard \"slow down\" runs at this percentage of "
	    "the rate it heard it at at most (just under it)" },
	[CONF_PACING_BLOCK_STRIKES] = { "pacing_block_strikes", CONF_TYPE_INT,
	    "3", 0, 100, 0,
	    "\"slow down\"s in a row (each within a penalty of the last one's "
	    "end) that count as a block (0: never)" },
	[CONF_PACING_PAIR_SESSIONS] = { "pacing_pair_sessions", CONF_TYPE_INT,
	    "1", 0, 1000, 0,
	    "SMTP sessions svc-worker keeps open at once on one paced (mail "
	    "host, egress) pair (0: no cap; worker_domain_concurrency still "
	    "holds): the commands of a session already on their way when "
	    "another session hears 421 reach the host during its penalty, "
	    "which counts them as coming back" },
	[CONF_WORKER_GREYLIST_DELAY] = { "worker_greylist_delay",
	    CONF_TYPE_INT, "300", 1, 86400, 0,
	    "seconds before a greylisted address of a job is tried again" },
	[CONF_WORKER_GREYLIST_RETRIES] = { "worker_greylist_retries",
	    CONF_TYPE_INT, "3", 0, 20, 0,
	    "times a greylisted address of a job is tried again before it "
	    "is given the greylisted result" },
	[CONF_PREVIEW_BUDGET_SECONDS] = { "preview_budget_seconds",
	    CONF_TYPE_INT, "120", 5, 3600, 0,
	    "seconds an upload preview's DNS lookups and SMTP sample may "
	    "take together (what is not answered by then counts as unknown)" },
	[CONF_PREVIEW_SMTP_MIN_ROWS] = { "preview_smtp_min_rows",
	    CONF_TYPE_INT, "100", 1, 1000000, 0,
	    "SMTP-bound rows an upload needs before its preview probes an "
	    "SMTP sample (fewer: no sample, those rows estimated unknown), so "
	    "that a short list's preview is no free verification" },
	[CONF_PREVIEW_REFRESH_LIMIT] = { "preview_refresh_limit",
	    CONF_TYPE_INT, "5", 0, 1000, 0,
	    "times one job's preview may be recomputed with ?refresh=true "
	    "(beyond: 409 rate_limit_exceeded)" },
	[CONF_SOURCE_URL_TIMEOUT_SECONDS] = { "source_url_timeout_seconds",
	    CONF_TYPE_INT, "600", 5, 3600, 0,
	    "seconds the download of an upload's source_url may take, "
	    "redirects included (source_unreachable after that)" },
	[CONF_SOURCE_URL_MIN_RATE] = { "source_url_min_rate", CONF_TYPE_INT,
	    "1024", 0, 104857600, 0,
	    "bytes a second the download of an upload's source_url must "
	    "average over each source_url_min_rate_seconds (slower: the job "
	    "fails with source_too_slow; 0: no minimum)" },
	[CONF_SOURCE_URL_MIN_RATE_SECONDS] = { "source_url_min_rate_seconds",
	    CONF_TYPE_INT, "30", 1, 3600, 0,
	    "seconds over which source_url_min_rate is measured" },
	[CONF_WEBHOOK_RETRY_SCHEDULE] = { "webhook_retry_schedule",
	    CONF_TYPE_DURATIONS, "1m 5m 30m 2h 5h 10h 24h", 0, 0, 0,
	    "waits before each new attempt of a failed webhook or callback "
	    "delivery (s, m, h, d); after the last one it is given up" },
	[CONF_WEBHOOK_TIMEOUT_MS] = { "webhook_timeout_ms", CONF_TYPE_INT,
	    "10000", 100, 60000, 0,
	    "time one delivery attempt may take, connection included" },
	[CONF_WEBHOOK_CONCURRENCY] = { "webhook_concurrency", CONF_TYPE_INT,
	    "20", 1, 500, 0, "deliveries one svc-worker sends at once" },
	[CONF_WEBHOOK_HOST_CONCURRENCY] = { "webhook_host_concurrency",
	    CONF_TYPE_INT, "4", 1, 100, 0,
	    "deliveries one svc-worker sends at once to one receiving host" },
	[CONF_WEBHOOK_ACCOUNT_CONCURRENCY] = {
	    "webhook_account_concurrency", CONF_TYPE_INT, "5", 1, 500, 0,
	    "deliveries of one account's events one svc-worker sends at "
	    "once (its share of webhook_concurrency)" },
	[CONF_WEBHOOK_TEST_LIMIT] = { "webhook_test_limit", CONF_TYPE_INT,
	    "10", 1, 1000, 0,
	    "POST /v1/webhooks/{id}/test calls one webhook may have in any "
	    "hour (beyond: 429 rate_limited; one being sent: 409 "
	    "webhook_test_in_flight)" },
	[CONF_STATUS_MIN_WORKERS] = { "status_min_workers", CONF_TYPE_INT,
	    "1", 0, 10000, 0, "svcadm status: unhealthy when fewer workers "
	    "were seen within status_worker_window (0: no check)" },
	[CONF_STATUS_WORKER_WINDOW] = { "status_worker_window", CONF_TYPE_INT,
	    "120", 20, 86400, 0, "svcadm status: seconds within which a "
	    "worker counts as seen" },
	[CONF_STATUS_MAX_JOB_AGE] = { "status_max_job_age", CONF_TYPE_INT,
	    "3600", 0, 31536000, 0, "svcadm status: unhealthy when a job "
	    "still queued or in progress is older (seconds; 0: no check)" },
	[CONF_STATUS_MAX_QUEUE] = { "status_max_queue", CONF_TYPE_INT, "0", 0,
	    1000000000, 0, "svcadm status: unhealthy when more chunks of "
	    "200 addresses are waiting (0: no check)" },
	[CONF_STATUS_MAX_OUTBOX_AGE] = { "status_max_outbox_age",
	    CONF_TYPE_INT, "600", 0, 31536000, 0, "svcadm status: unhealthy "
	    "when an event or a delivery has been due for longer (seconds; "
	    "0: no check)" },
	[CONF_DOCTOR_ADDRESS] = { "doctor_address", CONF_TYPE_STRING, "", 0,
	    0, 0, "svcadm doctor: the verifier's outbound address (empty: "
	    "the local address of the route to doctor_port25_target)" },
	[CONF_DOCTOR_PORT25_TARGET] = { "doctor_port25_target",
	    CONF_TYPE_STRING, "gmail-smtp-in.l.google.com:25", 0, 0, 0,
	    "svcadm doctor: host[:port] whose SMTP greeting proves outbound "
	    "port 25 open" },
	[CONF_DOCTOR_DNSBL_ZONES] = { "doctor_dnsbl_zones", CONF_TYPE_STRING,
	    "zen.spamhaus.org bl.spamcop.net b.barracudacentral.org", 0, 0, 0,
	    "svcadm doctor: DNS blocklists the outbound address is looked up "
	    "in" },
	[CONF_DOCTOR_SKIP] = { "doctor_skip", CONF_TYPE_STRING, "", 0, 0, 0,
	    "svcadm doctor: checks not to run (ptr, fcrdns, port25, dnsbl, "
	    "port25_seen)" },
	[CONF_FEEDBACK_HASH_KEY] = { "feedback_hash_key", CONF_TYPE_STRING,
	    "", 0, 0, 1, "key of the stored hashes of addresses in delivery "
	    "outcomes (64 hex digits; svcadm db migrate writes one into "
	    "feedback_hash_key_file when missing; never rotate it: stored "
	    "outcomes would no longer match)" },
	[CONF_FEEDBACK_HASH_KEY_FILE] = { "feedback_hash_key_file",
	    CONF_TYPE_STRING, "", 0, 0, 0, "file holding feedback_hash_key "
	    "(0600; svcadm db migrate creates it when missing)" },
	[CONF_FEEDBACK_RETENTION_DAYS] = { "feedback_retention_days",
	    CONF_TYPE_INT, "400", 1, 3650, 0, "days delivery outcomes are "
	    "kept (by the date they occurred)" },
	[CONF_FEEDBACK_WEBHOOK_RATE_LIMIT] = {
	    "feedback_webhook_rate_limit", CONF_TYPE_INT, "600", 1, 1000000, 0,
	    "requests a minute the senders' webhooks (/v1/feedback/{sender}) "
	    "may make for one account (counted per ?account=)" },
	[CONF_CALIBRATION_WINDOW_DAYS] = { "calibration_window_days",
	    CONF_TYPE_INT, "90", 1, 3650, 0, "the calibration counts the "
	    "outcomes of results verified in this many last days" },
	[CONF_CALIBRATION_MIN_OUTCOMES] = { "calibration_min_outcomes",
	    CONF_TYPE_INT, "50", 1, 1000000000L, 0, "outcomes (delivered and "
	    "hard-bounced) a provider needs in a classification before the "
	    "score of its verdicts is calibrated" },
	[CONF_CALIBRATION_UPDATE_SECONDS] = { "calibration_update_seconds",
	    CONF_TYPE_INT, "3600", 0, 30L * 86400, 0, "svc-worker's "
	    "housekeeping rewrites the calibration counts when they are older "
	    "than this (0: never; svcadm calibration update does it at once)" },
	[CONF_CALIBRATION_RELOAD_SECONDS] = { "calibration_reload_seconds",
	    CONF_TYPE_INT, "300", 0, 86400, 0, "each process reads the "
	    "calibration counts again after this many seconds (0: for every "
	    "verdict)" },
	[CONF_CALIBRATION_SEND_SAFE_MIN] = { "calibration_send_safe_min",
	    CONF_TYPE_INT, "95", 0, 100, 0, "a calibrated catch-all verdict "
	    "is send_safe from this score up (unless the rules said avoid)" },
	[CONF_CALIBRATION_AVOID_BELOW] = { "calibration_avoid_below",
	    CONF_TYPE_INT, "80", 0, 100, 0, "a calibrated catch-all verdict "
	    "is avoid below this score (send_with_caution between)" },
	[CONF_SESSION_IDLE_SECONDS] = { "session_idle_seconds", CONF_TYPE_INT,
	    "1800", 60, 30L * 86400, 0, "a dashboard session ends after this "
	    "many seconds without a request" },
	[CONF_SESSION_MAX_SECONDS] = { "session_max_seconds", CONF_TYPE_INT,
	    "43200", 60, 90L * 86400, 0, "a dashboard session ends this many "
	    "seconds after its sign-in, however busy" },
	[CONF_SIGNIN_ATTEMPTS_MAX] = { "signin_attempts_max", CONF_TYPE_INT,
	    "10", 1, 10000, 0, "failed sign-in attempts per e-mail in a "
	    "rate-limit window; then sign-in with it answers 429 with "
	    "Retry-After until the window has room" },
	[CONF_SIGNIN_ADDRESS_ATTEMPTS_MAX] = { "signin_address_attempts_max",
	    CONF_TYPE_INT, "50", 1, 100000, 0, "failed sign-in attempts per "
	    "client address in a rate-limit window (then 429, as above)" },
	[CONF_INVITE_TTL_SECONDS] = { "invite_ttl_seconds", CONF_TYPE_INT,
	    "604800", 60, 90L * 86400, 0, "an invitation made by svcadm "
	    "account invite can be used this many seconds (and once)" },
};

const char *
conf_default_path(void)
{
	const char *e = getenv("SVC_CONF");

	return e && *e ? e : SYSCONFDIR "/svc/svc.conf";
}

/* Text quoted in an error message is cut at 64 bytes ("..." added), so a
 * long bad value cannot push the message past the caller's buffer cap. */
#define CONF_QUOTE_MAX 64
#define CONF_QUOTE(s) (strlen(s) > CONF_QUOTE_MAX ? CONF_QUOTE_MAX : \
	(int)strlen(s)), (s), (strlen(s) > CONF_QUOTE_MAX ? "..." : "")

static int
conf_find(const char *name)
{
	int i;

	for (i = 0; i < CONF__MAX; i++)
		if (strcmp(conf_settings[i].name, name) == 0)
			return i;
	return -1;
}

static int
conf_assign(struct conf *c, int k, const char *value, struct buf *err)
{
	const struct conf_setting *s = &conf_settings[k];
	long v = 0, d[CONF_DURATIONS_MAX];
	size_t nd;
	int b;
	char *copy;

	switch (s->type) {
	case CONF_TYPE_INT:
		if (strparse_long(value, s->min, s->max, &v) == -1) {
			buf_printf(err, "%s: \"%.*s%s\" is not an integer in "
			    "%ld..%ld", s->name, CONF_QUOTE(value), s->min,
			    s->max);
			return -1;
		}
		break;
	case CONF_TYPE_BOOL:
		if (strparse_bool(value, &b) == -1) {
			buf_printf(err, "%s: \"%.*s%s\" is not yes or no",
			    s->name, CONF_QUOTE(value));
			return -1;
		}
		v = b;
		break;
	case CONF_TYPE_DURATIONS:
		if (strparse_durations(value, d, CONF_DURATIONS_MAX, &nd) ==
		    -1) {
			buf_printf(err, "%s: \"%.*s%s\" is not a list of 1 to "
			    "%d durations (1s to 30d)", s->name,
			    CONF_QUOTE(value), CONF_DURATIONS_MAX);
			return -1;
		}
		v = (long)nd;
		break;
	case CONF_TYPE_ENDPOINTS: {
		struct dbhost hosts[DBHOSTS_MAX];
		struct buf why;

		buf_init(&why, 128);
		if (dbhosts_parse(value, hosts, DBHOSTS_MAX, &nd, &why) == -1) {
			buf_printf(err, "%s: %s", s->name, buf_str(&why));
			buf_free(&why);
			return -1;
		}
		buf_free(&why);
		v = (long)nd;
		break;
	}
	default:
		break;
	}
	if ((copy = strdup(value)) == NULL) {
		buf_printf(err, "%s: out of memory", s->name);
		return -1;
	}
	free(c->str[k]);
	c->str[k] = copy;
	c->num[k] = v;
	return 0;
}

void
conf_defaults(struct conf *c)
{
	struct buf ignored;
	int i;

	memset(c, 0, sizeof(*c));
	buf_init(&ignored, 256);
	for (i = 0; i < CONF__MAX; i++)
		conf_assign(c, i, conf_settings[i].def, &ignored);
	buf_free(&ignored);
}

int
conf_set(struct conf *c, const char *name, const char *value, struct buf *err)
{
	int k = conf_find(name);

	if (k == -1) {
		buf_printf(err, "unknown setting \"%.*s%s\"", CONF_QUOTE(name));
		return -1;
	}
	return conf_assign(c, k, value, err);
}

/* The setting value_key from the first line of the file the setting
 * file_key names (db_password_file, feedback_hash_key_file), when it names
 * one. A missing file is an error unless missing_ok (feedback_hash_key_file:
 * svcadm db migrate writes it, and feedback is refused until then). */
static int
conf_read_secret_file(struct conf *c, enum conf_key file_key,
    enum conf_key value_key, int missing_ok, struct buf *err)
{
	const char *path = c->str[file_key];
	char line[512];
	FILE *f;

	if (path == NULL || *path == '\0')
		return 0;
	if ((f = fopen(path, "re")) == NULL) {
		if (missing_ok && errno == ENOENT)
			return 0;
		buf_printf(err, "%s %s: %s", conf_settings[file_key].name, path,
		    strerror(errno));
		return -1;
	}
	if (fgets(line, sizeof(line), f) == NULL)
		line[0] = '\0';
	fclose(f);
	return conf_assign(c, value_key, strparse_trim(line), err);
}

int
conf_load_stream(struct conf *c, FILE *f, const char *name, struct buf *err)
{
	char line[4096], *p, *eq, *key, *value;
	unsigned char seen[CONF__MAX];
	unsigned lineno = 0;
	struct buf msg;
	int k;

	conf_defaults(c);
	memset(seen, 0, sizeof(seen));
	snprintf(c->path, sizeof(c->path), "%s", name);
	while (fgets(line, sizeof(line), f) != NULL) {
		lineno++;
		if (strchr(line, '\n') == NULL && !feof(f)) {
			buf_printf(err, "%s:%u: line too long", name, lineno);
			return -1;
		}
		p = strparse_trim(line);
		if (*p == '\0' || *p == '#')
			continue;
		if ((eq = strchr(p, '=')) == NULL) {
			buf_printf(err, "%s:%u: expected \"name = value\"", name,
			    lineno);
			return -1;
		}
		*eq = '\0';
		key = strparse_trim(p);
		value = strparse_trim(eq + 1);
		if ((k = conf_find(key)) == -1) {
			buf_printf(err, "%s:%u: unknown setting \"%.*s%s\"",
			    name, lineno, CONF_QUOTE(key));
			return -1;
		}
		if (seen[k]) {
			buf_printf(err, "%s:%u: \"%s\" is set twice", name,
			    lineno, key);
			return -1;
		}
		seen[k] = 1;
		if (conf_assign(c, k, value, err) == -1) {
			buf_init(&msg, BUF_NOMAX);
			buf_printf(&msg, "%s:%u: %s", name, lineno, buf_str(err));
			buf_reset(err);
			buf_puts(err, buf_str(&msg));
			buf_free(&msg);
			return -1;
		}
	}
	if (ferror(f)) {
		buf_printf(err, "%s: read error", name);
		return -1;
	}
	if (conf_read_secret_file(c, CONF_DB_PASSWORD_FILE, CONF_DB_PASSWORD, 0,
	    err) == -1)
		return -1;
	return conf_read_secret_file(c, CONF_FEEDBACK_HASH_KEY_FILE,
	    CONF_FEEDBACK_HASH_KEY, 1, err);
}

int
conf_reread_feedback_key(struct conf *c, struct buf *err)
{
	return conf_read_secret_file(c, CONF_FEEDBACK_HASH_KEY_FILE,
	    CONF_FEEDBACK_HASH_KEY, 1, err);
}

int
conf_load(struct conf *c, const char *path, int must_exist, struct buf *err)
{
	FILE *f;
	int rc;

	if ((f = fopen(path, "re")) == NULL) {
		int e = errno;

		conf_defaults(c);
		if (e == ENOENT && !must_exist)
			return 0;
		buf_printf(err, "%s: %s", path, strerror(e));
		return -1;
	}
	rc = conf_load_stream(c, f, path, err);
	fclose(f);
	return rc;
}

void
conf_free(struct conf *c)
{
	int i;

	for (i = 0; i < CONF__MAX; i++) {
		free(c->str[i]);
		c->str[i] = NULL;
	}
}

const char *
conf_str(const struct conf *c, enum conf_key k)
{
	return c->str[k] ? c->str[k] : conf_settings[k].def;
}

long
conf_int(const struct conf *c, enum conf_key k)
{
	return c->num[k];
}

void
conf_dump(const struct conf *c, FILE *out)
{
	int i;

	fprintf(out, "# effective settings (file: %s)\n",
	    c->path[0] ? c->path : "none, defaults only");
	for (i = 0; i < CONF__MAX; i++) {
		const char *v = conf_str(c, (enum conf_key)i);
		if (conf_settings[i].secret && *v)
			v = "(hidden)";
		fprintf(out, "%s = %s\n", conf_settings[i].name, v);
	}
}
