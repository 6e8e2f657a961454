/* smtp_rules.h: the reading rules of SMTP replies, as data: the parser of
 * smtp_reply_rules.txt (shipped in lists_dir, the operator's own rules in
 * lists_dir/local/ read first) and the accept-all provider lines. What a
 * rule means when a reply comes is smtp_classify.c's.
 *
 * One rule or directive a line; blank lines and lines whose first non-blank
 * character is '#' are ignored; fields are separated by blanks:
 *
 *   reply PROVIDER CODE ENHANCED VERDICT [PHRASE [| PHRASE ...]]
 *   accept_all PROVIDER [PROVIDER ...]
 *
 * PROVIDER  a provider id ("google", "microsoft365", or the registrable
 *           domain of an MX host nobody named: [a-z0-9._-], at most
 *           SMTP_RULES_PROVIDER_MAX - 1 characters, upper case folded) or
 *           "*" for any (accept_all takes ids only).
 * CODE      three characters, the first 1-5, the others a digit or "x":
 *           "550", "45x", "5xx".
 * ENHANCED  "*" (any reply, with or without an enhanced status code) or
 *           CLASS.SUBJECT.DETAIL, each a number or "*" ("5.1.*", "4.7.650",
 *           "*.7.*"): the reply must carry an enhanced code that matches
 *           (one whose class is not the reply code's is no code at all).
 * VERDICT   a name of smtp_verdict_names ("mailbox_not_found", "blocked",
 *           "rate_limited", ...).
 * PHRASE    the rest of the line, phrases separated by "|": any one of them
 *           must be in the reply text (case-insensitive, at word
 *           boundaries; a trailing "*" matches a word's beginning:
 *           "greylist*"). No phrase: any text.
 *
 * A bad line is skipped with a warning naming the file and line; it never
 * stops the load. accept_all: a 250 to a random address tells nothing on
 * that provider's hosts, nor does a 250 to the real one while the domain's
 * catch-all probe got no 5xx (verify_batch.c). */
#ifndef SVC_SMTP_RULES_H
#define SVC_SMTP_RULES_H
#include "engine/smtp_classify.h"
#include "util/buf.h"
#include <stddef.h>

#define SMTP_RULES_FILE		"smtp_reply_rules.txt"
#define SMTP_RULES_PROVIDER_MAX	256	/* an id (a registrable domain for
					 * a provider with no name) and NUL */
#define SMTP_RULES_LINE_MAX	4096	/* longer lines are refused */
#define SMTP_RULES_PHRASE_MAX	200	/* octets of one phrase */
#define SMTP_RULES_PHRASES_MAX	128	/* phrases of one rule */
#define SMTP_RULES_MAX		4096	/* rules of one set */
#define SMTP_RULES_ACCEPT_ALL_MAX 64	/* accept-all providers */

struct smtp_rule_phrase {
	char		*text;		/* lower case, no "*" */
	size_t		 len;
	int		 prefix;	/* written with a trailing "*" */
};

struct smtp_rule {
	char		 provider[SMTP_RULES_PROVIDER_MAX]; /* "" for "*" */
	char		 code[3];	/* digits or 'x' */
	int		 has_enh;	/* 0: ENHANCED was "*" */
	int		 enh[3];	/* -1 for "*" */
	enum smtp_verdict verdict;
	struct smtp_rule_phrase *phrases;
	size_t		 nphrases;
	unsigned	 line;
	int		 local;		/* from the operator's file */
};

/* Read in file order, the operator's (local) rules first. */
struct smtp_rules {
	struct smtp_rule *rule;
	size_t		 n, cap;
	char		 accept_all[SMTP_RULES_ACCEPT_ALL_MAX]
			    [SMTP_RULES_PROVIDER_MAX];
	size_t		 naccept_all;
	size_t		 skipped;	/* bad lines */
};

enum smtp_rules_err {
	SMTP_RULES_OK,
	SMTP_RULES_ERR_NOMEM,
	SMTP_RULES_ERR_IO,	/* a file exists but cannot be read */
	SMTP_RULES_ERR_ARG,	/* no folder, or the path is too long */
	SMTP_RULES_ERR__MAX
};
extern const char *const smtp_rules_err_names[SMTP_RULES_ERR__MAX];

struct smtp_rules *smtp_rules_new(void);
void	 smtp_rules_free(struct smtp_rules *);
/* Adds the rules of text (len octets, NUL bytes allowed: a line with one
 * is bad) to r, after those it has. shown names the source in warnings;
 * local marks the rules as the operator's. Warnings (bad lines, at most a
 * few) go to msg, one a line; msg may be NULL. SMTP_RULES_OK or NOMEM. */
enum smtp_rules_err smtp_rules_parse(struct smtp_rules *, const char *text,
	    size_t len, const char *shown, int local, struct buf *msg);
/* dir/local/smtp_reply_rules.txt (if there is one), then
 * dir/smtp_reply_rules.txt (missing: a warning; no rule then reads a
 * reply but by its class). msg (emptied first) gets the warnings, or why
 * it failed; *out is NULL on an error. */
enum smtp_rules_err smtp_rules_load(const char *dir, struct smtp_rules **out,
	    struct buf *msg);
/* 1 when provider (non-empty) is named by an accept_all line. */
int	 smtp_rules_accept_all(const struct smtp_rules *, const char *provider);
/* Whether a word character (phrases match at their boundaries). */
int	 smtp_rules_is_word(unsigned char);
#endif
