/* suppressions.h: an account's suppression list (API.md): addresses and
 * whole domains ("@example.com") it never wants to mail. Entries are kept
 * in their normal form (addr.h: ASCII-lower-cased local part, A-label
 * domain), so every spelling of an address or domain finds its entry. The
 * preview counts suppressed addresses; result rows say "suppressed". */
#ifndef SVC_SUPPRESSIONS_H
#define SVC_SUPPRESSIONS_H
#include "core/db.h"
#include "engine/addr.h"
#include <stdio.h>

#define SUPPRESSIONS_ENTRY_MAX (ADDR_MAX + 2)	/* "@domain" or an address */
#define SUPPRESSIONS_ADD_MAX 10000		/* entries in one request */

enum suppressions_err {
	SUPPRESSIONS_OK,
	SUPPRESSIONS_INVALID,	/* not an address or "@domain" */
	SUPPRESSIONS_NOT_FOUND,
	SUPPRESSIONS_DB,
	SUPPRESSIONS_NOMEM,
	SUPPRESSIONS_LIMIT,	/* the list would pass its cap */
	SUPPRESSIONS_ERR__MAX
};

/* The normal form of an entry as given (trimmed): an address, or "@" and
 * a domain. SUPPRESSIONS_INVALID for anything else. */
enum suppressions_err suppressions_norm(const char *entry,
	    char out[SUPPRESSIONS_ENTRY_MAX + 1]);
/* Adds normalised entries (those already there are counted in *existing),
 * in one transaction, under the account's lock (caps.h). When the list
 * would then hold more than max entries: SUPPRESSIONS_LIMIT, nothing
 * added, *total the size of the list as it stays. then, when not NULL,
 * runs in that transaction once the entries are in (then(db, added,
 * existing, then_arg), with the counts the caller is given): what must be
 * written with them or not at all (svc-api: its Idempotency-Key answer).
 * An error from it rolls the addition back (SUPPRESSIONS_DB). */
typedef enum db_err (*suppressions_then_fn)(struct db *, size_t added,
	    size_t existing, void *);
enum suppressions_err suppressions_add(struct db *, const char *account,
	    char (*entries)[SUPPRESSIONS_ENTRY_MAX + 1], size_t n,
	    long long max, size_t *added, size_t *existing,
	    long long *total, suppressions_then_fn then, void *then_arg);
typedef int (*suppressions_each_fn)(void *, const char *entry,
	    const char *created_at);
/* Newest first, a page of limit; *total is the size of what is listed:
 * the whole list, or with q (NULL or "": every entry) the entries that
 * hold q (a search, ASCII letters in either case; at most
 * SUPPRESSIONS_SEARCH_MAX bytes, else SUPPRESSIONS_INVALID). */
#define SUPPRESSIONS_SEARCH_MAX SUPPRESSIONS_ENTRY_MAX
enum suppressions_err suppressions_list(struct db *, const char *account,
	    const char *q, long page, long limit, long long *total,
	    suppressions_each_fn, void *);
/* Removes an entry as given (normalised first). */
enum suppressions_err suppressions_delete(struct db *, const char *account,
	    const char *entry);

/* "svcadm suppressions import": one entry per line ('#' comments and
 * blank lines skipped). */
struct suppressions_counts {
	unsigned long	 added, existing, invalid;
};
enum suppressions_err suppressions_import(struct db *, const char *account,
	    FILE *, struct suppressions_counts *);

/* Whether the account's list has any entry at all (*any 0 or 1). */
enum suppressions_err suppressions_any(struct db *, const char *account,
	    int *any);
/* Which of n addresses (as stored: parsed here, an entry that is no
 * address is never on the list) are on the account's list, by the
 * address or its domain: hit[i] 1 or 0. Looked up by the table's key, a
 * few IN lists per call, never the whole list; n at most
 * SUPPRESSIONS_LOOKUP_MAX. */
#define SUPPRESSIONS_LOOKUP_MAX 1000
enum suppressions_err suppressions_lookup(struct db *, const char *account,
	    char *const *emails, size_t n, unsigned char *hit);
#endif
