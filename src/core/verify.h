/* verify.h: the verification engine: one address (single verification) or
 * one domain (domain check) from syntax to verdict, shared by svc-api and
 * svc-worker. A process makes one engine (DNS resolver, lists, TLS
 * credentials) and reuses it. */
#ifndef SVC_VERIFY_H
#define SVC_VERIFY_H
#include "core/db.h"
#include "core/dns.h"
#include "core/lists.h"
#include "core/verdict.h"
#include "util/conf.h"
#include <jansson.h>
#include <time.h>

#define VERIFY_EMAIL_MAX 320
#define VERIFY_TEXT_MAX 512

struct verify_engine;

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
	char		 did_you_mean[VERIFY_EMAIL_MAX + 1]; /* "" none */
	enum verdict_trap trap;
	int		 role, free_provider, disposable, accept_all;
	enum verdict_catch_all catch_all;
	struct verify_mx mx[DNS_MAX_MX];
	size_t		 nmx;
	int		 has_smtp;
	int		 smtp_code;
	char		 smtp_enhanced[16];
	char		 smtp_message[VERIFY_TEXT_MAX];
	int		 smtp_tls;
	time_t		 verified_at;
	int		 cached;
	int		 sandbox;		/* a sandbox-domain address */
};

struct verify_domain_result {
	char		 domain[256];
	enum dns_status	 dns;
	struct verify_mx mx[DNS_MAX_MX];
	size_t		 nmx;
	char		 provider[64];
	int		 accept_all;		/* -1: could not tell */
	int		 disposable;
	int		 has_valid_mx;
};

enum verify_err {
	VERIFY_OK,
	VERIFY_ERR_DB,		/* the database failed: no result to give */
	VERIFY_ERR_INTERNAL,
	VERIFY_ERR__MAX
};

struct verify_engine *verify_engine_new(const struct conf *, struct buf *err);
void	 verify_engine_free(struct verify_engine *);
/* Verifies one address within verify_time_budget_ms. DNS, SMTP and cache
 * trouble become "unknown" verdicts; only a failing database (complainer
 * list) is an error. db may be NULL (no caches, no complainer list). */
enum verify_err verify_address(struct verify_engine *, struct db *,
	    const char *email, struct verify_result *);
/* The domain-check endpoint: MX, provider, catch-all probe, disposable. */
enum verify_err verify_domain(struct verify_engine *, struct db *,
	    const char *ascii_domain, const char *display,
	    struct verify_domain_result *);
/* API.md's result object (without the credits fields). */
json_t	*verify_result_json(const struct verify_result *);
/* The sandbox domain: "sandbox.<service_domain>". */
const char *verify_sandbox_domain(const struct verify_engine *);
#endif
