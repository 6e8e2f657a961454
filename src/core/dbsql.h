/* dbsql.h: statement text for multi-row statements (INSERT ... VALUES of
 * many rows, IN lists, UNION ALL derived tables). db.c prepares statements
 * once per distinct text, so callers write in groups of a few fixed sizes
 * (dbsql_group) instead of one statement text per row count. */
#ifndef SVC_DBSQL_H
#define SVC_DBSQL_H
#include "core/db.h"
#include "util/buf.h"
#include <stddef.h>

/* Keys per IN (...) list at most (a power of two). */
#define DBSQL_IN_MAX 128
/* Parameters before the IN list at most (dbsql_select_in_args). */
#define DBSQL_LEAD_MAX 4

/* b = head, then item n times separated by sep, then tail. */
void	 dbsql_repeat(struct buf *b, const char *head, const char *item,
	    const char *sep, size_t n, const char *tail);
/* How many of left items the next statement takes: the largest power of
 * two not above left or max (max a power of two), so that any count is
 * written with statements of at most log2(max) + 1 distinct texts. */
size_t	 dbsql_group(size_t left, size_t max);
/* The same in steps of step (a power of two, max a multiple of it): a
 * multiple of step up to max while left holds one, then powers of two
 * below step, so that up to max items take one statement and at most
 * log2(step) more (50: 48 + 2, where dbsql_group takes 32 + 16 + 2),
 * with at most max / step + log2(step) distinct texts. */
size_t	 dbsql_group_steps(size_t left, size_t max, size_t step);
/* Keys per SELECT of dbsql_select_in at most (a power of two). */
#define DBSQL_SELECT_IN_MAX 256
/* Runs head followed by "?,?,...)" over keys, in groups of at most
 * DBSQL_SELECT_IN_MAX (head ends with "IN ("; the first column selected is
 * the key): ceil(n / DBSQL_SELECT_IN_MAX) statements, the last one's list
 * filled up to a power of two with its last key again (a few texts to
 * prepare, and one round trip where groups of powers of two would take
 * several: 200 keys were 128 + 64 + 8). fn is called with the row for
 * every i whose keys[i] equals it (a key may be given more than once). */
typedef void (*dbsql_row_fn)(void *arg, struct db_res *, size_t i);
enum db_err dbsql_select_in(struct db *, const char *head,
	    const char *const *keys, size_t n, dbsql_row_fn, void *arg);
/* The same with nlead (at most DBSQL_LEAD_MAX) parameters bound before
 * the keys, for the ? that head has before its IN list ("... WHERE
 * account_id = ? AND k IN ("). */
enum db_err dbsql_select_in_args(struct db *, const char *head,
	    const struct db_param *lead, size_t nlead,
	    const char *const *keys, size_t n, dbsql_row_fn, void *arg);
#endif
