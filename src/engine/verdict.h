/* verdict.h: the classification table of API.md as code: what each
 * situation the engine can meet means in status, reason, sub_status and bulk
 * classification; the score; the catch-all send verdict; the spam-trap
 * local-part heuristic. Pure functions, no I/O. */
#ifndef SVC_VERDICT_H
#define SVC_VERDICT_H

enum verdict_status {
	VERDICT_DELIVERABLE,
	VERDICT_UNDELIVERABLE,
	VERDICT_RISKY,
	VERDICT_UNKNOWN,
	VERDICT_STATUS__MAX
};
extern const char *const verdict_status_names[VERDICT_STATUS__MAX];

enum verdict_reason {
	VERDICT_R_ACCEPTED_EMAIL,
	VERDICT_R_REJECTED_EMAIL,
	VERDICT_R_INVALID_SYNTAX,
	VERDICT_R_INVALID_DOMAIN,
	VERDICT_R_NO_MX_RECORD,
	VERDICT_R_DISPOSABLE_EMAIL,
	VERDICT_R_ROLE_BASED,
	VERDICT_R_CATCH_ALL,
	VERDICT_R_ACCOUNT_DISABLED,
	VERDICT_R_MAILBOX_FULL,
	VERDICT_R_KNOWN_COMPLAINER,
	VERDICT_R_SPAM_TRAP,
	VERDICT_R_UNKNOWN,
	VERDICT_REASON__MAX
};
extern const char *const verdict_reason_names[VERDICT_REASON__MAX];

enum verdict_sub {
	VERDICT_S_NONE,			/* JSON null */
	VERDICT_S_POSSIBLE_TYPO,
	VERDICT_S_MAILBOX_NOT_FOUND,
	VERDICT_S_ACCOUNT_DISABLED,
	VERDICT_S_MAILBOX_FULL,
	VERDICT_S_CATCH_ALL,
	VERDICT_S_DISPOSABLE,
	VERDICT_S_SPAM_TRAP,
	VERDICT_S_KNOWN_COMPLAINER,
	VERDICT_S_ROLE_BASED,
	VERDICT_S_GREYLISTED,
	VERDICT_S_SMTP_BLOCKED,
	VERDICT_S_SMTP_UNREACHABLE,
	VERDICT_S_DNS_ERROR,
	VERDICT_SUB__MAX
};
extern const char *const verdict_sub_names[VERDICT_SUB__MAX];

enum verdict_class {
	VERDICT_C_VALID,
	VERDICT_C_INVALID,
	VERDICT_C_RISKY,
	VERDICT_C_CATCH_ALL,
	VERDICT_C_DISPOSABLE,
	VERDICT_C_UNKNOWN,
	VERDICT_CLASS__MAX
};
extern const char *const verdict_class_names[VERDICT_CLASS__MAX];

/* One row of the classification table each. */
enum verdict_kind {
	VERDICT_K_ACCEPTED,
	VERDICT_K_ROLE,
	VERDICT_K_INVALID_SYNTAX,
	VERDICT_K_INVALID_DOMAIN,
	VERDICT_K_NO_MX,
	VERDICT_K_REJECTED,
	VERDICT_K_DISABLED,
	VERDICT_K_FULL,
	VERDICT_K_CATCH_ALL,
	VERDICT_K_DISPOSABLE,
	VERDICT_K_SPAM_TRAP,
	VERDICT_K_COMPLAINER,
	VERDICT_K_GREYLISTED,
	VERDICT_K_BLOCKED,
	VERDICT_K_UNREACHABLE,
	VERDICT_K_DNS_ERROR,
	VERDICT_K_UNDETERMINED,	/* a reply nothing can be concluded from */
	VERDICT_KIND__MAX
};
extern const char *const verdict_kind_names[VERDICT_KIND__MAX];

enum verdict_catch_all {
	VERDICT_CA_NONE,		/* JSON null: not a catch-all result */
	VERDICT_CA_SEND_SAFE,
	VERDICT_CA_SEND_WITH_CAUTION,
	VERDICT_CA_AVOID,
	VERDICT_CA__MAX
};
extern const char *const verdict_catch_all_names[VERDICT_CA__MAX];

enum verdict_trap {
	VERDICT_TRAP_NONE,
	VERDICT_TRAP_TYPO_DOMAIN,	/* "typo_trap_domain" */
	VERDICT_TRAP_LOCAL_PATTERN,	/* "trap_local_pattern" */
	VERDICT_TRAP_PRISTINE_CATCH_ALL, /* "pristine_catch_all" */
	VERDICT_TRAP__MAX
};
extern const char *const verdict_trap_names[VERDICT_TRAP__MAX];

struct verdict {
	enum verdict_kind	 kind;
	enum verdict_status	 status;
	enum verdict_reason	 reason;
	enum verdict_sub	 sub;
	enum verdict_class	 classification;
};

/* The table row of a kind; typo adds sub_status possible_typo where the
 * table allows it (invalid syntax, invalid domain). */
struct verdict verdict_of(enum verdict_kind, int typo);
int	 verdict_parse_kind(const char *, enum verdict_kind *);
/* The sandbox domain's verdict for a local part (any case): the reason
 * or sub_status it names, else accepted. */
enum verdict_kind verdict_sandbox_kind(const char *local);

/* Facts the score and the catch-all verdict look at. */
struct verdict_facts {
	int	 free_provider;
	int	 role;
	int	 web_presence;	/* the domain or www. has an address */
	int	 tls;		/* the MX offered STARTTLS and it worked */
	int	 possible_typo;
	const char *local;	/* the local part, for the catch-all verdict */
};

/* 0-100; the formula is documented in verdict.c and the README. */
int	 verdict_score(const struct verdict *, enum verdict_catch_all,
	    const struct verdict_facts *);
enum verdict_catch_all verdict_catch_all_of(const struct verdict_facts *);
/* Local parts that spam traps are known to use ("spamtrap", "honeypot"...). */
int	 verdict_trap_local(const char *local);
/* How long a result may be served from the cache, in seconds. */
long	 verdict_cache_seconds(const struct verdict *);
#endif
