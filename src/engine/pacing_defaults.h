/* pacing_defaults.h: the shipped starting rates of reputation-aware pacing
 * (issue 24 item 4), as data: lists_dir/pacing_defaults.txt, and the
 * operator's lists_dir/local/pacing_defaults.txt over it. One entry a
 * line, '#' starts a comment:
 *
 *   PATTERN  START_RATE  PENALTY_SECONDS
 *
 * PATTERN is a provider id (letters, digits, '-', '_': "google",
 * "microsoft365"; matched against the provider of item 1 once it is
 * known), an MX host name ("mx.example.com") or a suffix of one
 * ("*.google.com": any name under google.com). START_RATE: RCPTs a minute
 * from one egress address to begin with (1..1000000): a start, not a
 * ceiling (pacing.c grows it until the host says "slow down");
 * PENALTY_SECONDS (1..86400): how long nobody sends to the host from that
 * address after it did. A local line replaces the shipped entry of its
 * pattern; "!PATTERN" removes it. A pair whose host matches no entry is
 * not paced until it says "slow down" (a friendly host is never slowed).
 * The budget of every host a pattern matches is one: the pattern is its
 * key. A loaded table is never written again. */
#ifndef SVC_PACING_DEFAULTS_H
#define SVC_PACING_DEFAULTS_H
#include "util/buf.h"
#include <stddef.h>

#define PACING_DEFAULTS_FILE	"pacing_defaults.txt"
#define PACING_PATTERN_MAX	256
#define PACING_RATE_MAX		1000000L
#define PACING_PENALTY_MAX	86400L

struct pacing_default {
	char	 pattern[PACING_PATTERN_MAX];
	long	 start_rate;		/* RCPTs a minute */
	long	 penalty_s;
};

struct pacing_defaults {
	struct pacing_default	*v;
	size_t			 n, cap;
};

/* Adds the entries of one file's text (len octets, NUL bytes end a line's
 * worth) to d, a later line for a pattern replacing an earlier one and
 * "!PATTERN" removing it; lines that are not an entry are skipped with a
 * warning in msg ("NAME:LINE: why", one a line; msg may be NULL). name is
 * for the warnings. 0, or -1 when out of memory. */
int	 pacing_defaults_parse(struct pacing_defaults *, const char *name,
	    const char *text, size_t len, struct buf *msg);
/* dir/pacing_defaults.txt then dir/local/pacing_defaults.txt (a missing
 * file adds nothing, with a warning for the shipped one). 0, or -1 when
 * a file cannot be read or out of memory (msg says which). */
int	 pacing_defaults_load(struct pacing_defaults *, const char *dir,
	    struct buf *msg);
void	 pacing_defaults_free(struct pacing_defaults *);
/* The entry for a host: the provider's (provider NULL or "": not known),
 * else the MX host's own name, else the longest "*." suffix that matches
 * mx_host (case-insensitive). NULL: none. */
const struct pacing_default *pacing_defaults_match(
	    const struct pacing_defaults *, const char *provider,
	    const char *mx_host);
#endif
