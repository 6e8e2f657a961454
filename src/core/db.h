/* db.h: MariaDB access through prepared statements only. One connection per
 * process; statements are prepared once and cached by their SQL text. */
#ifndef SVC_DB_H
#define SVC_DB_H
#include "util/buf.h"
#include "util/conf.h"
#include <stddef.h>

/* Schema version this build needs; svcadm db migrate brings a database there. */
#define DB_SCHEMA_VERSION 32

enum db_err {
	DB_OK,
	DB_ERR_CONNECT,		/* server unreachable or connection lost */
	DB_ERR_QUERY,		/* any other failure */
	DB_ERR_DUPLICATE,	/* unique key violated */
	DB_ERR_RETRY,		/* deadlock or lock wait timeout: retry the transaction */
	DB_ERR_SCHEMA,		/* schema older than this build */
	DB_ABORT,		/* db_tx_retry: the work undid itself on purpose */
	DB_ERR__MAX
};
extern const char *const db_err_names[DB_ERR__MAX];

enum db_param_type {
	DB_PARAM_NULL,
	DB_PARAM_INT,
	DB_PARAM_STR,
	DB_PARAM__MAX
};

struct db_param {
	enum db_param_type	 type;
	long long		 i;
	const char		*s;
	size_t			 len;
};

#define DBP_INT(v)	((struct db_param){ .type = DB_PARAM_INT, .i = (v) })
#define DBP_STR(v)	db_param_str(v)
#define DBP_BLOB(p, n)	((struct db_param){ .type = DB_PARAM_STR, .s = (const char *)(p), .len = (n) })
#define DBP_NULL	((struct db_param){ .type = DB_PARAM_NULL })
/* DB_ARGS(DBP_STR(id), DBP_INT(5)) expands to the array and its length. */
#define DB_ARGS(...) (const struct db_param[]){ __VA_ARGS__ }, \
	(sizeof((const struct db_param[]){ __VA_ARGS__ }) / sizeof(struct db_param))
#define DB_NOARGS NULL, 0

struct db;
struct db_res;

/* A NULL string pointer binds SQL NULL. */
struct db_param db_param_str(const char *);

enum db_err db_open(const struct conf *, int check_schema, struct db **,
	    struct buf *err);
void	 db_close(struct db *);
const char *db_error(const struct db *);
/* 1 while the server cannot be reached (the last connection attempt, or
 * the last statement, failed for want of a connection): the service is
 * unavailable rather than broken. */
int	 db_unreachable(const struct db *);
/* 1 when the last statement was sent to a server before it failed (its
 * answer lost with the connection: it may have been applied), 0 when it
 * never left (no connection could be made). */
int	 db_sent(const struct db *);
/* Galera: on, the reads that follow wait until this node has applied every
 * write the cluster committed before them (wsrep_sync_wait = 1; kept over
 * a reconnection) until turned off again; for reads that must see a
 * write made through another node. Nothing on a server without Galera. */
enum db_err db_sync_wait(struct db *, int on);
/* "host:port" of the endpoint connected to (or last tried). */
const char *db_endpoint(const struct db *);

enum db_err db_exec(struct db *, const char *sql, const struct db_param *,
	    size_t n, unsigned long long *affected);
/* Runs a SELECT and keeps its rows; free with db_res_free before reusing
 * the same SQL text. */
enum db_err db_query(struct db *, const char *sql, const struct db_param *,
	    size_t n, struct db_res **);
/* 1: a row is current, 0: no more rows, -1: error. */
int	 db_res_next(struct db_res *);
unsigned long long db_res_rows(const struct db_res *);
const char *db_res_str(const struct db_res *, unsigned col); /* NULL if SQL NULL */
size_t	 db_res_len(const struct db_res *, unsigned col);
long long db_res_int(const struct db_res *, unsigned col);   /* 0 if NULL */
int	 db_res_isnull(const struct db_res *, unsigned col);
void	 db_res_free(struct db_res *);

/* Convenience: first column of the first row as an integer. */
enum db_err db_query_int(struct db *, const char *sql,
	    const struct db_param *, size_t n, long long *out, int *found);

enum db_err db_begin(struct db *);
enum db_err db_commit(struct db *);
void	 db_rollback(struct db *);

/* How often db_tx_retry runs a transaction that keeps deadlocking (or
 * whose connection keeps getting lost). */
#define DB_TX_TRIES 5
/* The one way to run a transaction that may deadlock: begins it, runs
 * work(db, arg), commits when work returns DB_OK and rolls back otherwise.
 * A deadlock, lock wait timeout or Galera certification failure
 * (DB_ERR_RETRY, from work or the commit), or a lost connection
 * (DB_ERR_CONNECT: re-opened on the next ready endpoint), runs the whole
 * of it again, DB_TX_TRIES times at most, so work must leave nothing
 * behind in arg that a second run would double, and its writes must be
 * idempotent by unique keys (a COMMIT whose answer was lost may have
 * been applied). work
 * returns DB_ABORT to roll back on purpose (it says why in arg). Returns
 * DB_OK (committed), DB_ABORT, or the error (logged by the caller). */
enum db_err db_tx_retry(struct db *,
	    enum db_err (*work)(struct db *, void *arg), void *arg);
/* Runs a statement that takes no parameters, such as DDL (migrations). */
enum db_err db_exec_plain(struct db *, const char *sql);
#endif
