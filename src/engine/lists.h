/* lists.h: the domain and local-part lists of the verification engine
 * (disposable, free-provider, role local parts, well-known providers for
 * typo suggestions, typo-trap domains), read once from plain files into
 * hash sets, and the did-you-mean suggestion by edit distance.
 *
 * Files in the lists folder (setting lists_dir), one entry per line, '#'
 * starts a comment, blank lines ignored, entries trimmed and lower-cased:
 *   disposable_domains.txt  free_domains.txt     (fetched: contrib/fetch-lists)
 *   role_local_parts.txt    provider_domains.txt typo_trap_domains.txt
 *                                                (curated: contrib/lists/)
 * and the operator's own DIR/local/<same name>: a line "name" adds an
 * entry, a line "!name" removes one (a removal wins over any addition). A
 * missing file is an empty list (reported as a warning), never an error.
 * Domain entries may be written as U-labels; they are stored as A-labels.
 * provider_domains.txt is ordered by popularity: earlier lines win ties.
 * A loaded struct lists is never written again: threads and forked
 * processes may share it. Figures (121,569 disposable + 14,125 free
 * entries): about 40 ms of CPU to load, 4.7 MB of tables. */
#ifndef SVC_LISTS_H
#define SVC_LISTS_H
#include "util/buf.h"
#include <stddef.h>

enum lists_kind {
	LISTS_DISPOSABLE,	/* disposable_domains.txt */
	LISTS_FREE,		/* free_domains.txt */
	LISTS_ROLE,		/* role_local_parts.txt */
	LISTS_PROVIDER,		/* provider_domains.txt */
	LISTS_TYPO_TRAP,	/* typo_trap_domains.txt */
	LISTS_KIND__MAX
};
/* "disposable", "free", "role", "provider", "typo_trap": log keys. */
extern const char *const lists_kind_names[LISTS_KIND__MAX];
/* "disposable_domains.txt", ...: the file names in the folder. */
extern const char *const lists_kind_files[LISTS_KIND__MAX];

enum lists_err {
	LISTS_OK,
	LISTS_ERR_NOMEM,	/* out of memory */
	LISTS_ERR_IO,		/* a file exists but cannot be opened or read */
	LISTS_ERR_ARG,		/* no folder given, or the path is too long */
	LISTS_ERR__MAX
};
extern const char *const lists_err_names[LISTS_ERR__MAX];

#define LISTS_SUGGEST_MAX	256	/* size of lists_suggest's out buffer */
#define LISTS_SUGGEST_DIST	2	/* largest edit distance suggested */
#define LISTS_SUGGEST_MINLEN	5	/* shorter domains get no suggestion */

struct lists;

/* Reads the lists of dir (and dir/local). On LISTS_OK *out is set and msg
 * receives warnings, one per line (missing or empty files, lines that are
 * not a valid entry and were skipped, unknown files in local/), or stays
 * empty; on an error *out is NULL and msg says why. msg may be NULL. */
enum lists_err	 lists_load(const char *dir, struct lists **out,
		    struct buf *msg);
void		 lists_free(struct lists *);

/* Domain lookups take the lower-case A-label domain (struct addr's
 * ascii_domain); one trailing dot is ignored. Upper case is folded. */

/* True for a listed domain and for any subdomain of one
 * (x.mailinator.com), unless the operator removed that name or a parent
 * of it closer to the domain ("!sub.example.com" in local/). */
int		 lists_is_disposable(const struct lists *, const char *domain);
/* Exact domain matches only. */
int		 lists_is_free(const struct lists *, const char *domain);
int		 lists_is_provider(const struct lists *, const char *domain);
int		 lists_is_typo_trap(const struct lists *, const char *domain);
/* The local part as written (struct addr's local), ASCII case-insensitive.
 * Surrounding double quotes are ignored, and so is a sub-address tag: when
 * "info+news" is not listed itself, "info" is looked up; the tag separator
 * is "+" only. */
int		 lists_is_role(const struct lists *, const char *local);

/* Best well-known provider domain for a probable typo of domain: the
 * provider at the smallest Damerau-Levenshtein (optimal string alignment)
 * distance, at most LISTS_SUGGEST_DIST, earlier in provider_domains.txt on
 * ties. Nothing for domains shorter than LISTS_SUGGEST_MINLEN or for a
 * domain that is itself a listed provider. Returns 1 and writes the
 * suggestion to out (LISTS_SUGGEST_MAX bytes) or returns 0 and writes "".
 * Whether to show it (only when the domain does not receive mail) is the
 * caller's decision. */
int		 lists_suggest(const struct lists *, const char *domain,
		    char out[LISTS_SUGGEST_MAX]);

/* Entries of one kind after local additions (removals are not subtracted:
 * they are counted apart). */
size_t		 lists_count(const struct lists *, enum lists_kind);
/* Local "!name" lines of one kind. */
size_t		 lists_removed(const struct lists *, enum lists_kind);
/* One log line: "disposable=121581 free=14125 role=... removed=N
 * skipped=N bytes=N load_ms=N". */
int		 lists_summary(const struct lists *, struct buf *);
#endif
