/* lists_update.h: "svcadm lists update" and "svcadm lists check": refresh
 * the fetched lists in lists_dir with the installed fetch-lists script, and
 * load every list with lists_load to check it and print its counts. */
#ifndef SVC_LISTS_UPDATE_H
#define SVC_LISTS_UPDATE_H
#include "util/buf.h"
#include <stdio.h>

enum lists_update_err {
	LISTS_UPDATE_OK,
	LISTS_UPDATE_FETCH,	/* fetch-lists missing, failed or was killed */
	LISTS_UPDATE_LOAD,	/* lists_load refused the folder */
	LISTS_UPDATE_EMPTY,	/* the disposable or free list has no entry */
	LISTS_UPDATE_ERR__MAX
};
extern const char *const lists_update_err_names[LISTS_UPDATE_ERR__MAX];

/* PKGDATADIR "/fetch-lists", or $SVC_FETCH_LISTS when set. */
const char *lists_update_script(void);
/* Runs "sh script dir" (its messages go to the same stdout and stderr),
 * then lists_update_check. On failure err says why. */
enum lists_update_err lists_update_run(const char *dir, const char *script,
    FILE *out, struct buf *err);
/* Loads dir, writes the warnings (each line prefixed "warning: ") and the
 * counts ("lists: disposable=N free=N ...") to out. An empty disposable
 * or free list is LISTS_UPDATE_EMPTY: the verdicts would miss them. */
enum lists_update_err lists_update_check(const char *dir, FILE *out,
    struct buf *err);
#endif
