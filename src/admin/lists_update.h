/* lists_update.h: "svcadm lists update" and "svcadm lists check": refresh
 * the rule tables of lists_dir from lists_rules_url (lists_rules.h) and the
 * fetched lists with the installed fetch-lists script, and load every list
 * and table as the engine does to check it and print its counts. */
#ifndef SVC_LISTS_UPDATE_H
#define SVC_LISTS_UPDATE_H
#include "admin/lists_rules.h"
#include "util/buf.h"
#include <stdio.h>

enum lists_update_err {
	LISTS_UPDATE_OK,
	LISTS_UPDATE_FETCH,	/* fetch-lists missing, failed or was killed */
	LISTS_UPDATE_LOAD,	/* lists_load refused the folder */
	LISTS_UPDATE_EMPTY,	/* the disposable or free list has no entry */
	LISTS_UPDATE_RULES,	/* the rule tables could not be refreshed */
	LISTS_UPDATE_ERR__MAX
};
extern const char *const lists_update_err_names[LISTS_UPDATE_ERR__MAX];

/* PKGDATADIR "/fetch-lists", or $SVC_FETCH_LISTS when set. */
const char *lists_update_script(void);
/* Refreshes the rule tables from rules (lists_rules_update; nothing to do
 * when rules->url is empty), then runs "sh script dir" (its messages go to
 * the same stdout and stderr), then lists_update_check, and says on out
 * what running services do. A failure stops the run there; err says why. */
enum lists_update_err lists_update_run(const char *dir, const char *script,
    const struct lists_rules_source *rules, FILE *out, struct buf *err);
/* Loads dir, writes the warnings (each line prefixed "warning: ") and the
 * counts ("lists: disposable=N free=N ...") to out. An empty disposable
 * or free list is LISTS_UPDATE_EMPTY: the verdicts would miss them. */
enum lists_update_err lists_update_check(const char *dir, FILE *out,
    struct buf *err);
#endif
