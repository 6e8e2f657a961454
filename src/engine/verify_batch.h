/* verify_batch.h: the engine's face for a domain's worth of addresses, the
 * one svc-worker's jobs and a single verification (a batch of one) both go
 * through. For the items (addresses): syntax and sandbox, then the verdict
 * cache and the complainer lists (the operator's, the verifying account's
 * own) looked up for many at once; for the batch
 * (their domain): the MX answer and its cache, what is known of the domain
 * (catch-all, web presence: domain_facts), SMTP sessions carrying the
 * catch-all probe while its answer is not known, the probe's answer read by
 * one rule, and each item's conclusion. What runs when, how many sessions
 * at once and to which host is the caller's. In a transaction RCPT i is
 * item i; the probe, when it is carried, comes last (the real addresses
 * first: a host that answers one RCPT a session answers the one that
 * matters). */
#ifndef SVC_VERIFY_BATCH_H
#define SVC_VERIFY_BATCH_H
#include "engine/verify.h"
#include "engine/pacing.h"
#include "engine/smtp_rules.h"

/* One address on its way. */
struct verify_item {
	struct verify_result	 r;
	struct addr		 a;
	/* the verifying account, whose own complainer list counts (set by
	 * verify_batch_lookup; NULL: none) */
	const char		*account;
};

/* Where the domain's catch-all probe is. */
enum verify_probe {
	VERIFY_PROBE_UNKNOWN,	/* the next session carries the probe */
	VERIFY_PROBE_RUNNING,	/* a session with it is out */
	VERIFY_PROBE_KNOWN,	/* accept_all holds the answer */
	VERIFY_PROBE__MAX
};

/* A domain and what is known of it. */
struct verify_batch {
	char			 domain[ADDR_ASCII_DOMAIN_MAX + 1];
	struct dns_mx_result	 mx;
	int			 resolved;	/* mx holds the answer */
	enum verify_probe	 probe;
	int			 accept_all;	/* PROBE_KNOWN: 1 or 0 */
	int			 web_presence;	/* 1, 0, or -1 not known */
	/* Who runs the MX (verify_engine_provider; "": no MX), known once
	 * an item went through verify_batch_item_with_mx: what the items'
	 * results carry and the name their replies are read under. */
	char			 provider[PROVIDERS_NAME_MAX];
	int			 provider_known;
	/* whether the provider's hosts answer 250 to any address (its
	 * accept_all line in smtp_reply_rules.txt, set by
	 * verify_batch_provider) */
	int			 provider_accept_all;
	/* The options of a session with its own deadline: a session keeps a
	 * pointer to them, so they live as long as the batch. */
	struct smtp_opts	 opts;
	/* verify_batch_session made no session because every route's pacing
	 * pair for the MX host is paused or out of budget (why: the reply) */
	int			 paced_out;
	char			 paced_why[PACING_REASON_MAX];
};

/* Syntax and sandbox, no database: DONE with the result in it->r, or NEXT
 * (it->a parsed, the list facts set). */
enum verify_step verify_batch_item_begin(struct verify_engine *,
	    const char *email, struct verify_item *);
/* The verifying account's own complainer list (account NULL: none; the
 * string must outlive the items), the verdict cache and the operator's
 * complainer list for items that are NEXT, in a few statements: a cached
 * item is DONE (it->r.cached set; the account's list turns its verdict,
 * verify_account_complainer). A lookup that fails finds nothing: the
 * verdict is made afresh (a failed read of the account's list leaves the
 * verdict cache unread), and the lists are asked again one by one when an
 * item concludes. */
void	 verify_batch_lookup(struct verify_engine *, struct db *,
	    const char *account, struct verify_item *const *, size_t n);
/* Its domain's answer and facts: the MX hosts and who runs the first one
 * (the batch's provider, found at the first item), or the reason there
 * are none. DONE for an address that needs no SMTP (invalid domain, no
 * MX, DNS error, disposable), else NEXT. */
enum verify_step verify_batch_item_with_mx(struct verify_engine *,
	    struct verify_batch *, struct verify_item *);
/* The batch's provider from its MX answer (once): b->provider. */
const char *verify_batch_provider_of(struct verify_engine *,
	    struct verify_batch *);
/* Its conclusion from a finished session (its reply to RCPT number rcpt,
 * or the session's outcome) or, with s NULL, as unreachable; with the
 * batch's catch-all answer (0 while not known) and web presence (looked up
 * once per batch, only for a catch-all domain). VERIFY_ERR_DB when the
 * complainer list could not be read. */
enum verify_err verify_batch_item_conclude(struct verify_engine *, struct db *,
	    struct verify_batch *, struct verify_item *,
	    const struct smtp_session *s, size_t rcpt);

/* Its conclusion without a session of its own, from what si says (an
 * outcome and the reply behind it: a pair paused by pacing). */
enum verify_err verify_batch_item_conclude_info(struct verify_engine *,
	    struct db *, struct verify_batch *, struct verify_item *,
	    const struct smtp_session_info *si);
/* An item whose MX host may not be asked now (every route's pacing pair
 * paused, why in b->paced_why): unknown / smtp_blocked, as a block is. */
enum verify_err verify_batch_item_conclude_paused(struct verify_engine *,
	    struct db *, struct verify_batch *, struct verify_item *);

void	 verify_batch_init(struct verify_batch *, const char *ascii_domain);
void	 verify_batch_free(struct verify_batch *);
/* The MX answer from the DNS cache: 1 (resolved, facts read), or 0. */
int	 verify_batch_mx_cached(struct db *, struct verify_batch *);
/* The same for n batches in a few statements (a DNS cache read, then one
 * of domain_facts for the hits): b[i]->resolved set for each hit. */
void	 verify_batch_mx_cached_many(struct db *, struct verify_batch *const *,
	    size_t n);
/* An MX answer looked up by the caller (taken over), stored in the DNS
 * cache unless it is an error or incomplete, then the domain's facts. */
void	 verify_batch_mx_answer(struct db *, struct verify_batch *,
	    struct dns_mx_result *);
/* The same for n answers (m[i] for b[i], each taken over) in a few
 * statements: one write to the DNS cache, one read of domain_facts. */
void	 verify_batch_mx_answer_many(struct db *, struct verify_batch *const *,
	    struct dns_mx_result *m, size_t n);
/* Sets the id of the provider that runs the batch's MX (NULL or "":
 * generic): the rules of smtp_reply_rules.txt for it read the replies, and
 * an accept_all provider's 250 is a catch-all unless the probe got a 5xx.
 * Provider identification calls it once the MX answer is known. */
void	 verify_batch_provider(struct verify_engine *, struct verify_batch *,
	    const char *provider);
/* A session for n items (rcpts in their order), with the catch-all probe
 * while the domain's answer is not known and no probe is out (*probe set,
 * and the probe is the last RCPT, n); deadline_ms: the session's deadline from now
 * (0: verify_time_budget_ms). n may be 0 with the probe (a domain check).
 * Its egress route is paced (db not NULL: verify_engine_route, the RCPTs
 * taken from the pair's budget). NULL when it cannot be made (no memory),
 * or, paced_out set, when no route may reach the MX host now. */
struct smtp_session *verify_batch_session(struct verify_engine *,
	    struct db *, struct verify_batch *, struct verify_item *const *,
	    size_t n, int64_t deadline_ms, int *probe);
/* The options of the batch's sessions: those of its first MX host's
 * provider's pin (verify_engine_smtp_host), else the engine's. */
const struct smtp_opts *verify_batch_opts(const struct verify_engine *,
	    const struct verify_batch *);
/* A session for transactions of any domain whose MX is the same host,
 * given one by one (smtp_session_open_mx): opened to this batch's MX
 * hosts by egress route route, READY after its handshake. NULL when it
 * cannot be made. */
struct smtp_session *verify_batch_open(struct verify_engine *,
	    struct verify_batch *, size_t route);
/* The batch's next transaction on a READY session s (smtp_session_next):
 * n items (1..SMTP_RCPT_MAX - 1), with the catch-all probe as in
 * verify_batch_session (*probe); last: QUIT after it. 0, or -1 when it
 * could not be given (s is unchanged). The session's deadline (the
 * engine's verify_time_budget_ms) starts again, and its replies are read
 * by this batch's provider's rules (a session may go on to a domain whose
 * MX host is another name of the same server). */
int	 verify_batch_next(struct verify_engine *, struct verify_batch *,
	    struct smtp_session *s,
	    struct verify_item *const *, size_t n, int last, int64_t now_ms,
	    int *probe);
/* A finished session that carried the probe (its last RCPT): its answer,
 * by the one rule
 * (2xx: the domain accepts any address; 5xx: it does not; anything else,
 * or no reply: not known, the next session probes again), kept for the
 * batch and in domain_facts. Returns the catch-all answer to conclude the
 * session's items with: 1, or 0 (also when not known). */
int	 verify_batch_probe_done(struct db *, struct verify_batch *,
	    const struct smtp_session *);
/* The answer items are concluded with now: 1 when the domain is known to
 * accept any address, or when its probe's answer is not known and its
 * provider's hosts accept any address (accept_all); else 0. */
int	 verify_batch_accept_all(const struct verify_batch *);
#endif
