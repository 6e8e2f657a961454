/* verify.h: the verification engine: one address (single verification) or
 * one domain (domain check) from syntax to verdict, shared by svc-api and
 * svc-worker. A process makes one engine (DNS resolver, lists, TLS
 * credentials) and reuses it. */
#ifndef SVC_VERIFY_H
#define SVC_VERIFY_H
#include "engine/addr.h"
#include "engine/calibration.h"
#include "core/db.h"
#include "engine/dns.h"
#include "engine/lists.h"
#include "engine/providers.h"
#include "engine/smtp.h"
#include "engine/vcache.h"
#include "engine/verdict.h"
#include "util/addrhash.h"
#include "util/conf.h"
#include <jansson.h>
#include <time.h>

#define VERIFY_EMAIL_MAX 320
#define VERIFY_TEXT_MAX 512

struct verify_engine;
struct verify_batch;

struct verify_mx {
	unsigned	 priority;
	char		 host[DNS_NAME_MAX + 1];
};

struct verify_result {
	char		 email[VERIFY_EMAIL_MAX + 1];	/* cleaned input */
	char		 normalised[VERIFY_EMAIL_MAX + 1]; /* "" if invalid */
	char		 domain[256];		/* as given, lower-cased */
	char		 ascii_domain[256];
	struct verdict	 v;
	int		 score;
	/* rules, or calibrated from delivery outcomes (calibration.h):
	 * verify_conclude's verdicts only */
	enum calibration_basis score_basis;
	char		 did_you_mean[VERIFY_EMAIL_MAX + 1]; /* "" none */
	enum verdict_trap trap;
	int		 role, free_provider, disposable, accept_all;
	enum verdict_catch_all catch_all;
	struct verify_mx mx[DNS_MAX_MX];
	size_t		 nmx;
	/* Who runs the first MX host (providers.h: an id of the table or
	 * the host's registrable domain); "" when there is no MX. */
	char		 provider[PROVIDERS_NAME_MAX];
	int		 has_smtp;
	int		 smtp_code;
	char		 smtp_enhanced[16];
	char		 smtp_message[VERIFY_TEXT_MAX];
	int		 smtp_tls;
	time_t		 verified_at;
	int		 cached;
	/* The verdict cache's key for this address (cachekey.h), "" when
	 * the cache is off or the address is not one. */
	char		 cache_key[ADDRHASH_HEX_LEN + 1];
	int		 sandbox;		/* a sandbox-domain address */
	/* Facts a caller may know already (the worker looks them up for
	 * many addresses at once): 1 or 0, or -1 (verify_begin's value)
	 * when verify_conclude is to look them up. */
	int		 complainer;		/* on the complainer list */
	/* on the verifying account's own complainer list (complainers.h;
	 * verify_batch_lookup, else verify_conclude asks): a result with 1
	 * is never written to the shared verdict cache (verify_cache_entry),
	 * whatever its verdict, so no other account is served a verdict
	 * this account's list made */
	int		 account_complainer;
	int		 web_presence;		/* the domain has a web site */
};

struct verify_domain_result {
	char		 domain[256];
	enum dns_status	 dns;
	struct verify_mx mx[DNS_MAX_MX];
	size_t		 nmx;
	char		 provider[PROVIDERS_NAME_MAX];	/* "": no MX */
	int		 accept_all;		/* -1: could not tell */
	int		 disposable;
	int		 has_valid_mx;
};

enum verify_err {
	VERIFY_OK,
	VERIFY_ERR_DB,		/* the database failed: no result to give */
	VERIFY_ERR_INTERNAL,
	VERIFY_ERR_REFUSED,	/* the gate refused the network: no result */
	VERIFY_ERR__MAX
};

/* Asked once, just before a verification first needs the network (a DNS
 * lookup the cache cannot answer, an SMTP probe): admit returns 0 to go on,
 * -1 to stop with VERIFY_ERR_REFUSED. Answers from the verdict, DNS and
 * domain caches, syntax errors and sandbox addresses never ask. svc-api
 * uses it to count the probes running (slots.h). */
struct verify_gate {
	int		(*admit)(void *arg);
	void		*arg;
	int		 asked;		/* set by the engine */
};

struct verify_engine *verify_engine_new(const struct conf *, struct buf *err);
void	 verify_engine_free(struct verify_engine *);
/* SOCKS5 proxies named by host name are looked up by a thread of their
 * own from now on (egress_refresh.h: the first look-ups before it
 * returns), no longer by the sessions; for a loop of many sessions
 * (svc-worker). 0 (also when no route needs it), or -1 with a message. */
int	 verify_engine_refresh_routes(struct verify_engine *, struct buf *err);
/* The egress route of a session to mx_host opened outside svc-worker's
 * loop, under the pacing pairs (pacing_route_pick: 1, 0 none now, -1). */
int	 verify_engine_route(struct verify_engine *, struct db *,
	    const char *mx_host, long want, size_t *route, char *why,
	    size_t whysz);
/* Verifies one address within verify_time_budget_ms, DNS included, for
 * account (its own complainer list is read too; NULL: none). DNS, SMTP
 * and cache trouble become "unknown" verdicts; only a failing database
 * (complainer lists) is an error. db may be NULL (no caches, no
 * complainer lists). */
enum verify_err verify_address(struct verify_engine *, struct db *,
	    const char *account, const char *email, struct verify_gate *,
	    struct verify_result *);
/* The domain-check endpoint: MX, provider, catch-all probe, disposable,
 * within verify_time_budget_ms. gate as for verify_address (NULL: none). */
enum verify_err verify_domain(struct verify_engine *, struct db *,
	    const char *ascii_domain, const char *display, struct verify_gate *,
	    struct verify_domain_result *);
/* The steps of a verification, for verify_batch.c (the face callers use:
 * verify_batch.h). */
enum verify_step {
	VERIFY_STEP_DONE,	/* r holds the result */
	VERIFY_STEP_NEXT,	/* go on with the next step */
	VERIFY_STEP__MAX
};
/* Syntax and sandbox. Fills *a. */
enum verify_step verify_begin(struct verify_engine *, const char *email,
	    struct verify_result *, struct addr *a);
/* Invalid domain, no MX, DNS failure, disposable: DONE; else NEXT (SMTP).
 * Copies the MX hosts into r. */
enum verify_step verify_with_mx(struct verify_engine *,
	    struct verify_result *, const struct addr *,
	    const struct dns_mx_result *);
/* The mailbox verdict from the address's RCPT reply (rr with code 0 or
 * NULL: from the session outcome; read by provider's rules first when
 * provider is not NULL or ""), then spam trap, complainer (the operator's
 * list, or account's own: NULL none), catch-all (accept_all: the domain
 * took a random address) and role. Greylisted
 * answers come out as unknown/greylisted: retrying is the caller's.
 * provider: who runs the host that answered (verify_engine_provider; NULL
 * or "": not known), for the reading of its replies. */
enum verify_err verify_conclude(struct verify_engine *, struct db *,
	    const char *account, struct verify_result *, const struct addr *,
	    const char *provider,
	    const struct smtp_session_info *, const struct smtp_rcpt_result *,
	    int accept_all);
/* The complainer list's key (complainers.h), NULL when none is set. */
const struct addrhash_key *verify_engine_complainers_key(
	    const struct verify_engine *);
/* Who runs the first host of an MX answer (providers_of_mx with the
 * engine's table), or "" when the answer has no host. */
void	 verify_engine_provider(const struct verify_engine *,
	    const struct dns_mx_result *, char out[PROVIDERS_NAME_MAX]);
/* The provider id the table (mx_providers.txt) gives an MX host, or ""
 * when no pattern matches (no registrable-domain fallback: pacing keys a
 * host the table does not know by the host itself). */
void	 verify_engine_host_provider(const struct verify_engine *,
	    const char *host, char out[PROVIDERS_NAME_MAX]);
/* The SMTP options of the engine's sessions (its TLS credentials in). */
const struct smtp_opts *verify_engine_smtp(const struct verify_engine *);
/* What a session opened outside svc-worker's loop (verify_batch_session:
 * the single path, the domain check, verify_many) heard, for pacing and
 * the host's profile (pacing_route_learn), keyed by the MX host its route
 * was picked for. */
void	 verify_engine_learn(struct verify_engine *, struct db *,
	    const struct verify_batch *, const struct smtp_session *);
/* The SMTP options of sessions to mx_host: those of its provider's pin
 * (smtp_provider_routes_file: its routes, HELO name and MAIL FROM) when
 * it has one, else verify_engine_smtp's. */
const struct smtp_opts *verify_engine_smtp_host(const struct verify_engine *,
	    const char *mx_host);
/* An MX lookup with the engine's resolver (verify_batch_mx_answer takes
 * the answer over), for a caller with no resolver of its own. */
void	 verify_engine_lookup_mx(struct verify_engine *, const char *domain,
	    struct dns_mx_result *);
/* Every DNS lookup of the engine ends by deadline (timeutil_mono_ms()
 * time; 0: none) until it is set again. */
void	 verify_engine_deadline(struct verify_engine *, int64_t deadline);
/* Stores a result in the verdict cache for its lifetime. */
void	 verify_store(struct db *, const struct verify_result *);
/* The verdict cache entry of a result (key and JSON text, to free), for a
 * caller that writes many with vcache_put_many; -1 if it is not cached
 * (sandbox, from the cache, not an address) or out of memory. */
int	 verify_cache_entry(const struct verify_result *,
	    struct vcache_entry *);
/* A result from a verdict cache hit (as vcache_get_many gives them) for
 * the address verify_begin parsed: 0, or -1 if the entry is unusable (r
 * is then as verify_begin left it). */
int	 verify_from_cache(struct verify_result *, const struct addr *,
	    json_t *cached);
/* A result from the verdict cache for an address on the verifying
 * account's own complainer list (r->account_complainer set): the mail
 * host's acceptance (accepted, catch-all, role) becomes the known-
 * complainer verdict verify_conclude would have made of it, score
 * calibrated alike, verified_at kept; any other verdict ranks above the
 * list (mailbox verdict, spam trap, the operator's list) or is no
 * acceptance (unknown), and stands. */
void	 verify_account_complainer(struct verify_engine *, struct db *,
	    struct verify_result *, const struct addr *);

/* The sandbox domain: "sandbox.<service_domain>". */
const char *verify_sandbox_domain(const struct verify_engine *);
#endif
