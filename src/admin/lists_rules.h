/* lists_rules.h: the rule tables of lists_dir (mx_providers.txt,
 * smtp_reply_rules.txt, pacing_defaults.txt) refreshed by "svcadm lists
 * update" from the operator's lists_rules_url: each table is downloaded
 * (lists_rules_get.h), checked with the parser the engine reads it with,
 * and only when all three are good, each is written beside its final name
 * and renamed into place, with RULES_SOURCES naming the URLs and the time.
 * lists_dir/local/ (the operator's overrides) is never touched. */
#ifndef SVC_LISTS_RULES_H
#define SVC_LISTS_RULES_H
#include "util/buf.h"
#include <stddef.h>
#include <stdio.h>

#define LISTS_RULES_N		3	/* tables */
#define LISTS_RULES_SOURCES	"RULES_SOURCES"

enum lists_rules_err {
	LISTS_RULES_OK,
	LISTS_RULES_URL,	/* lists_rules_url is not an https:// URL */
	LISTS_RULES_FETCH,	/* a download failed */
	LISTS_RULES_CHECK,	/* a table is empty, too small or has bad lines */
	LISTS_RULES_WRITE,	/* lists_dir could not be written */
	LISTS_RULES_ERR__MAX
};
extern const char *const lists_rules_err_names[LISTS_RULES_ERR__MAX];

/* A table: its file name, what its entries are called, and the fewest
 * entries a served table may have (fewer: a broken file, refused). */
struct lists_rules_table {
	const char	*name;
	const char	*entries;
	size_t		 min;
};
extern const struct lists_rules_table lists_rules_tables[LISTS_RULES_N];

/* Downloads url into body (lists_rules_get has this shape). 0 or -1 with
 * err set. */
typedef int (*lists_rules_get_fn)(const char *url, const char *ca_file,
    struct buf *body, struct buf *err);

struct lists_rules_source {
	const char		*url;	  /* lists_rules_url ("": none) */
	const char		*ca_file; /* ca_file ("": the system's CAs) */
	lists_rules_get_fn	 get;
};

/* Reads text (len bytes) as the engine reads the shipped table t (the
 * index in lists_rules_tables): 0 and its entries in *count, or -1 with
 * err saying why (empty, a line the parser skips, fewer than t's min). */
int	 lists_rules_check(size_t t, const char *text, size_t len,
	    size_t *count, struct buf *err);
/* Writes body[t] beside dir/NAME of each table, then RULES_SOURCES (url[t]
 * and count[t] of each, and the time), and renames each into place: a
 * reader sees the old file or the new one, never part of one. Nothing is
 * renamed unless all were written. */
enum lists_rules_err lists_rules_install(const char *dir,
	    const struct buf body[LISTS_RULES_N],
	    const char *const url[LISTS_RULES_N],
	    const size_t count[LISTS_RULES_N], struct buf *err);
/* The whole refresh: nothing to do (a line on out saying how to set it)
 * when src->url is empty; else download, check and install the three
 * tables, a line on out for each. On an error the installed tables are
 * unchanged and err says why. */
enum lists_rules_err lists_rules_update(const char *dir,
	    const struct lists_rules_source *src, FILE *out, struct buf *err);
/* url as it may be shown (messages, RULES_SOURCES): without the
 * "user:password@" a private mirror's URL may carry. */
void	 lists_rules_url_shown(const char *url, char *out, size_t size);
#endif
