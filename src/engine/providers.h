/* providers.h: who runs a mail host. The table mx_providers.txt of the
 * lists folder (setting lists_dir; shipped in contrib/lists/) maps MX host
 * patterns to a provider id; a host no pattern matches is named by its
 * registrable domain (the Public Suffix List through libpsl: the system's
 * list, else libpsl's built-in one; mx.example.co.uk -> example.co.uk).
 *
 * One entry a line, '#' starts a comment (at the start of a line or after
 * white space), blank lines ignored:
 *   PATTERN  ID
 * PATTERN is "*.suffix" (any host below suffix, not suffix itself; suffix
 * has two labels at least) or an exact host name: lower-case A-labels
 * (upper case is folded, one root dot dropped). ID is 1 to
 * PROVIDERS_ID_MAX of [a-z0-9_-], starting with a letter or digit. The
 * most specific pattern wins: the host itself, then "*." of its parent,
 * and so on towards the TLD. The operator's DIR/local/mx_providers.txt
 * overrides: "PATTERN ID" gives a pattern another id (or adds one),
 * "!PATTERN" removes a pattern of the shipped table. A bad line is skipped
 * with a warning, never an error; a missing file is an empty table. A
 * loaded table is never written again: threads and processes share it. */
#ifndef SVC_PROVIDERS_H
#define SVC_PROVIDERS_H
#include "util/buf.h"
#include <stddef.h>

#define PROVIDERS_FILE		"mx_providers.txt"
#define PROVIDERS_ID_MAX	32	/* longest provider id */
/* Size of what providers_of_mx writes: an id or a domain name, NUL. */
#define PROVIDERS_NAME_MAX	254

enum providers_err {
	PROVIDERS_OK,
	PROVIDERS_ERR_NOMEM,	/* out of memory */
	PROVIDERS_ERR_IO,	/* a file exists but cannot be read */
	PROVIDERS_ERR_ARG,	/* no folder given, or the path is too long */
	PROVIDERS_ERR__MAX
};
extern const char *const providers_err_names[PROVIDERS_ERR__MAX];

struct providers;

/* An empty table with the Public Suffix List loaded (NULL: no memory). */
struct providers *providers_new(void);
void		 providers_free(struct providers *);
/* Reads the table of dir and dir/local into a new table. On PROVIDERS_OK
 * *out is set and msg (may be NULL) receives warnings, one per line; on
 * an error *out is NULL and msg says why. */
enum providers_err providers_load(const char *dir, struct providers **out,
		    struct buf *msg);
/* Adds the entries of text (len bytes, any content) to p; local: the
 * operator's file ("!PATTERN" allowed, its entries override the shipped
 * ones). shown names the text in warnings. Only PROVIDERS_ERR_NOMEM fails.
 * providers_load is this on the two files. */
enum providers_err providers_parse(struct providers *, const char *text,
		    size_t len, const char *shown, int local, struct buf *msg);

/* The id of the table's most specific pattern for host (any case, one
 * root dot ignored), or NULL when none matches. */
const char	*providers_lookup(const struct providers *, const char *host);
/* The provider of an MX host: its id in the table, else its registrable
 * domain, else (a public suffix itself) the host, lower-cased, without
 * the root dot. Returns 0, or -1 (out set to "") for a host that is not
 * a host name. */
int		 providers_of_mx(const struct providers *, const char *host,
		    char out[PROVIDERS_NAME_MAX]);
/* Patterns in the table (removed ones not counted), lines skipped. */
size_t		 providers_count(const struct providers *);
size_t		 providers_skipped(const struct providers *);
#endif
