/* db.c: MariaDB connection, cached prepared statements and result rows read
 * as text. The connection goes to one of the endpoints (db_hosts, else
 * db_host/db_port) that answers and is ready (a Galera node Synced); a
 * lost one is re-opened on the next such endpoint, once outside
 * transactions, and db_tx_retry runs its transaction again there. */
#include "core/db.h"
#include "util/dbhosts.h"
#include "util/log.h"
#include "util/timeutil.h"
#include <errmsg.h>
#include <mysql.h>
#include <mysqld_error.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DB_CACHE_SIZE 96

const char *const db_err_names[DB_ERR__MAX] = {
	"ok", "connect", "query", "duplicate", "retry", "schema", "abort"
};

struct db_cached {
	char		*sql;
	MYSQL_STMT	*stmt;
};

struct db {
	MYSQL		*my;
	const struct conf *conf;
	int		 in_tx;
	struct db_cached cache[DB_CACHE_SIZE];
	size_t		 ncache;
	size_t		 evict;
	char		 err[512];
	int		 lost;		/* the server is unreachable for now */
	unsigned	 errcode;	/* the server's last error number */
	struct dbhost	 hosts[DBHOSTS_MAX];
	size_t		 nhosts;	/* 0: db_host/db_port/db_socket */
	size_t		 cur;		/* the endpoint connected to, or last tried */
	char		 endpoint[DBHOSTS_HOST_MAX + 16];
	int		 galera;	/* the node connected to has wsrep_on */
	int		 sync_wait;	/* db_sync_wait on: set again on reconnect */
	int		 sent;		/* db_sent */
};

struct db_res {
	struct db	*db;
	MYSQL_STMT	*stmt;
	unsigned	 ncols;
	MYSQL_BIND	*bind;
	char		**val;
	unsigned long	*len;
	unsigned long	*cap;
	my_bool		*isnull;
	my_bool		*trunc;
};

struct db_param
db_param_str(const char *s)
{
	struct db_param p;

	memset(&p, 0, sizeof(p));
	if (s == NULL)
		p.type = DB_PARAM_NULL;
	else {
		p.type = DB_PARAM_STR;
		p.s = s;
		p.len = strlen(s);
	}
	return p;
}

static enum db_err
db_classify(struct db *db, unsigned code, const char *msg)
{
	snprintf(db->err, sizeof(db->err), "%u: %s", code, msg);
	db->errcode = code;
	switch (code) {
	case ER_DUP_ENTRY:
		return DB_ERR_DUPLICATE;
	case ER_LOCK_DEADLOCK:		/* also a Galera certification failure */
	case ER_LOCK_WAIT_TIMEOUT:
		return DB_ERR_RETRY;
	case ER_ERROR_DURING_COMMIT:
		/* Galera: a write its node could not replicate ("Error while
		 * appending streaming replication fragment (provider status:
		 * Not connected to Primary Component)", "Got error 6 during
		 * COMMIT"): rolled back, the node lost to us as with 1047 */
		if (!db->galera)
			return DB_ERR_QUERY;
		db->lost = 1;
		return DB_ERR_CONNECT;
	case ER_UNKNOWN_COM_ERROR:	/* WSREP has not yet prepared node */
	case ER_SERVER_SHUTDOWN:	/* the server is stopping */
	case ER_CONNECTION_KILLED:	/* KILL CONNECTION, a node leaving */
	case CR_SERVER_GONE_ERROR:
	case CR_SERVER_LOST:
	case CR_CONNECTION_ERROR:
	case CR_CONN_HOST_ERROR:
		db->lost = 1;
		return DB_ERR_CONNECT;
	default:
		return DB_ERR_QUERY;
	}
}

static void
db_cache_clear(struct db *db)
{
	size_t i;

	for (i = 0; i < db->ncache; i++) {
		mysql_stmt_close(db->cache[i].stmt);
		free(db->cache[i].sql);
	}
	db->ncache = 0;
	db->evict = 0;
}

/* Galera: 1 when the node may be used (wsrep_ready ON and Synced); a
 * server without wsrep is always ready. */
static int
db_node_ready(struct db *db)
{
	MYSQL_RES *res;
	MYSQL_ROW row;
	int ready = 1;

	/* MariaDB builds carry wsrep; without a provider (wsrep_on OFF)
	 * wsrep_ready is OFF too, and the server is a plain one. */
	if (mysql_query(db->my, "SELECT @@global.wsrep_on") != 0)
		return mysql_errno(db->my) == ER_UNKNOWN_SYSTEM_VARIABLE;
	if ((res = mysql_store_result(db->my)) == NULL)
		return 0;
	row = mysql_fetch_row(res);
	ready = row == NULL || row[0] == NULL || strcmp(row[0], "1") != 0;
	mysql_free_result(res);
	db->galera = !ready;
	if (ready)
		return 1;
	if (mysql_query(db->my, "SHOW STATUS WHERE Variable_name IN "
	    "('wsrep_ready', 'wsrep_local_state_comment')") != 0 ||
	    (res = mysql_store_result(db->my)) == NULL) {
		snprintf(db->err, sizeof(db->err), "%s: status: %s",
		    db->endpoint, mysql_error(db->my));
		return 0;
	}
	ready = 1;
	while ((row = mysql_fetch_row(res)) != NULL)
		if (row[0] && row[1] && ((strcmp(row[0], "wsrep_ready") == 0 &&
		    strcmp(row[1], "ON") != 0) || (strcmp(row[0],
		    "wsrep_local_state_comment") == 0 &&
		    strcmp(row[1], "Synced") != 0))) {
			snprintf(db->err, sizeof(db->err), "%s: not ready "
			    "(%s = %s)", db->endpoint, row[0], row[1]);
			ready = 0;
		}
	mysql_free_result(res);
	return ready;
}

/* Connects to endpoint i (of db_hosts, or the single db_host one). */
static enum db_err
db_connect_one(struct db *db, size_t i)
{
	const struct conf *c = db->conf;
	const char *sock = conf_str(c, CONF_DB_SOCKET), *host;
	unsigned int timeout = 5, port;
	static const char *setup =
	    "SET time_zone = '+00:00', sql_mode = 'STRICT_ALL_TABLES,"
	    "NO_ZERO_DATE,NO_ENGINE_SUBSTITUTION,ERROR_FOR_DIVISION_BY_ZERO'";

	if (db->nhosts > 0) {
		host = db->hosts[i].host;
		port = db->hosts[i].port;
		sock = "";
		dbhosts_format(&db->hosts[i], db->endpoint,
		    sizeof(db->endpoint));
	} else {
		host = conf_str(c, CONF_DB_HOST);
		port = (unsigned)conf_int(c, CONF_DB_PORT);
		snprintf(db->endpoint, sizeof(db->endpoint), "%s:%u", host,
		    port);
	}
	if ((db->my = mysql_init(NULL)) == NULL) {
		snprintf(db->err, sizeof(db->err), "out of memory");
		return DB_ERR_CONNECT;
	}
	mysql_options(db->my, MYSQL_SET_CHARSET_NAME, "utf8mb4");
	mysql_options(db->my, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
	if (mysql_real_connect(db->my, host, conf_str(c, CONF_DB_USER),
	    conf_str(c, CONF_DB_PASSWORD), conf_str(c, CONF_DB_NAME), port,
	    *sock ? sock : NULL, 0) == NULL) {
		snprintf(db->err, sizeof(db->err), "connect %s: %s",
		    db->endpoint, mysql_error(db->my));
		goto fail;
	}
	if (!db_node_ready(db))
		goto fail;
	/* READ COMMITTED: every locking step sees what others committed
	 * before it got its lock, and no gap locks between queue rows. */
	if (mysql_query(db->my, setup) != 0 || mysql_query(db->my,
	    "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED") != 0) {
		snprintf(db->err, sizeof(db->err), "%s: %u: %s", db->endpoint,
		    mysql_errno(db->my), mysql_error(db->my));
		goto fail;
	}
	if (db->galera && db->sync_wait &&
	    mysql_query(db->my, "SET SESSION wsrep_sync_wait = 1") != 0) {
		snprintf(db->err, sizeof(db->err), "%s: %u: %s", db->endpoint,
		    mysql_errno(db->my), mysql_error(db->my));
		goto fail;
	}
	return DB_OK;
fail:
	mysql_close(db->my);
	db->my = NULL;
	return DB_ERR_CONNECT;
}

/* How many rounds over every endpoint a (re)connection makes before it
 * gives up, sleeping DB_BACKOFF_MS, then twice that, ... between them
 * (several endpoints only: a single server fails at once, as before). */
#define DB_CONNECT_ROUNDS	4
#define DB_BACKOFF_MS		100

/* (Re)connects: after a loss, the endpoints after the one that was lost
 * are tried first, so a dead or desynced node is left behind. */
static enum db_err
db_connect(struct db *db)
{
	size_t n = db->nhosts ? db->nhosts : 1, k, i, lost = db->cur;
	int round, rounds = db->nhosts > 1 ? DB_CONNECT_ROUNDS : 1;
	long ms = DB_BACKOFF_MS;

	if (db->my != NULL) {
		db_cache_clear(db);
		mysql_close(db->my);
		db->my = NULL;
		if (n > 1)
			db->cur = (db->cur + 1) % n;
	}
	db->in_tx = 0;
	for (round = 0; round < rounds; round++) {
		if (round > 0) {
			timeutil_nap_ms(ms);
			ms *= 2;
		}
		for (k = 0; k < n; k++) {
			i = (db->cur + k) % n;
			if (db_connect_one(db, i) == DB_OK) {
				/* (a move to another endpoint, after a
				 * loss too, is logged) */
				if (i != lost || round > 0)
					log_info("event=db_endpoint "
					    "endpoint=%s", db->endpoint);
				db->cur = i;
				db->lost = 0;
				return DB_OK;
			}
			if (n > 1)
				log_warn("event=db_endpoint_skipped "
				    "error=\"%s\"", db->err);
		}
	}
	db->lost = 1;
	return DB_ERR_CONNECT;
}

enum db_err
db_open(const struct conf *c, int check_schema, struct db **out,
    struct buf *err)
{
	struct db *db;
	enum db_err rc;
	long long v = 0;
	int found = 0;

	*out = NULL;
	if ((db = calloc(1, sizeof(*db))) == NULL) {
		buf_puts(err, "out of memory");
		return DB_ERR_CONNECT;
	}
	db->conf = c;
	if (dbhosts_parse(conf_str(c, CONF_DB_HOSTS), db->hosts, DBHOSTS_MAX,
	    &db->nhosts, err) == -1) {
		db_close(db);
		return DB_ERR_CONNECT;
	}
	if ((rc = db_connect(db)) != DB_OK) {
		buf_puts(err, db->err);
		db_close(db);
		return rc;
	}
	if (check_schema) {
		rc = db_query_int(db, "SELECT MAX(version) FROM schema_version",
		    DB_NOARGS, &v, &found);
		if (rc != DB_OK || v < DB_SCHEMA_VERSION) {
			buf_printf(err, "database schema is at version %lld, "
			    "this build needs %d: run \"svcadm db migrate\"",
			    rc == DB_OK ? v : 0LL, DB_SCHEMA_VERSION);
			db_close(db);
			return DB_ERR_SCHEMA;
		}
	}
	*out = db;
	return DB_OK;
}

void
db_close(struct db *db)
{
	if (db == NULL)
		return;
	db_cache_clear(db);
	if (db->my)
		mysql_close(db->my);
	free(db);
}

const char *
db_error(const struct db *db)
{
	return db->err;
}

int
db_sent(const struct db *db)
{
	return db->sent;
}

int
db_unreachable(const struct db *db)
{
	return db->lost;
}

enum db_err
db_sync_wait(struct db *db, int on)
{
	enum db_err e = DB_OK;

	/* without a connection, the next one sets it (db_connect_one): none
	 * is opened here, nor is db_unreachable's answer changed (the caller
	 * turning it off after a failed read is about to report that) */
	if (db->my == NULL) {
		db->sync_wait = on;
		return DB_OK;
	}
	if (db->galera && on != db->sync_wait)
		e = db_exec_plain(db, on ? "SET SESSION wsrep_sync_wait = 1" :
		    "SET SESSION wsrep_sync_wait = 0");
	db->sync_wait = on;
	return e;
}

const char *
db_endpoint(const struct db *db)
{
	return db->endpoint;
}

/* A new prepared statement (NULL, MariaDB's error kept, when it cannot be
 * made). */
static MYSQL_STMT *
db_stmt_new(struct db *db, const char *sql, enum db_err *rc,
    unsigned *code)
{
	MYSQL_STMT *st;
	my_bool on = 1;

	*code = 0;
	if ((st = mysql_stmt_init(db->my)) == NULL) {
		*rc = db_classify(db, mysql_errno(db->my), mysql_error(db->my));
		return NULL;
	}
	mysql_stmt_attr_set(st, STMT_ATTR_UPDATE_MAX_LENGTH, &on);
	if (mysql_stmt_prepare(st, sql, strlen(sql)) != 0) {
		*code = mysql_stmt_errno(st);
		*rc = db_classify(db, *code, mysql_stmt_error(st));
		mysql_stmt_close(st);
		return NULL;
	}
	return st;
}

static MYSQL_STMT *
db_prepare(struct db *db, const char *sql, enum db_err *rc)
{
	MYSQL_STMT *st;
	struct db_cached *slot;
	char *copy;
	unsigned code;
	size_t i;

	for (i = 0; i < db->ncache; i++)
		if (db->cache[i].sql == sql || strcmp(db->cache[i].sql, sql) == 0)
			return db->cache[i].stmt;
	if ((st = db_stmt_new(db, sql, rc, &code)) == NULL &&
	    code == ER_MAX_PREPARED_STMT_COUNT_REACHED && db->ncache > 0) {
		/* The server's limit over every connection
		 * (max_prepared_stmt_count, many svc-api processes each
		 * keeping DB_CACHE_SIZE): this connection's statements give
		 * their places back, and this one is prepared again. */
		log_warn("event=db_statement_limit cached=%zu", db->ncache);
		db_cache_clear(db);
		st = db_stmt_new(db, sql, rc, &code);
	}
	if (st == NULL)
		return NULL;
	if ((copy = strdup(sql)) == NULL) {
		mysql_stmt_close(st);
		*rc = DB_ERR_QUERY;
		return NULL;
	}
	if (db->ncache < DB_CACHE_SIZE)
		slot = &db->cache[db->ncache++];
	else {
		slot = &db->cache[db->evict];
		db->evict = (db->evict + 1) % DB_CACHE_SIZE;
		mysql_stmt_close(slot->stmt);
		free(slot->sql);
	}
	slot->sql = copy;
	slot->stmt = st;
	return st;
}

static enum db_err
db_run_once(struct db *db, const char *sql, const struct db_param *p,
    size_t n, MYSQL_STMT **out)
{
	MYSQL_BIND small[32], *bind = small;
	MYSQL_STMT *st;
	enum db_err rc = DB_ERR_QUERY;
	my_bool isnull = 1;
	size_t i;

	db->sent = 0;
	if (db->my == NULL && (rc = db_connect(db)) != DB_OK)
		return rc;
	if ((st = db_prepare(db, sql, &rc)) == NULL)
		return rc;
	if (mysql_stmt_param_count(st) != n) {
		snprintf(db->err, sizeof(db->err), "statement wants %lu "
		    "parameters, got %zu", mysql_stmt_param_count(st), n);
		return DB_ERR_QUERY;
	}
	/* Multi-row inserts bind thousands of parameters. */
	if (n > sizeof(small) / sizeof(small[0]) &&
	    (bind = calloc(n, sizeof(*bind))) == NULL) {
		snprintf(db->err, sizeof(db->err), "out of memory");
		return DB_ERR_QUERY;
	}
	if (bind == small)
		memset(small, 0, sizeof(small));
	for (i = 0; i < n; i++) {
		switch (p[i].type) {
		case DB_PARAM_NULL:
			bind[i].buffer_type = MYSQL_TYPE_NULL;
			bind[i].is_null = &isnull;
			break;
		case DB_PARAM_INT:
			bind[i].buffer_type = MYSQL_TYPE_LONGLONG;
			bind[i].buffer = (void *)&p[i].i;
			break;
		default:
			bind[i].buffer_type = MYSQL_TYPE_STRING;
			bind[i].buffer = (void *)(p[i].s ? p[i].s : "");
			bind[i].buffer_length = p[i].len;
			break;
		}
	}
	if (n && mysql_stmt_bind_param(st, bind) != 0)
		rc = db_classify(db, mysql_stmt_errno(st), mysql_stmt_error(st));
	else {
		db->sent = 1;
		if (mysql_stmt_execute(st) != 0)
			rc = db_classify(db, mysql_stmt_errno(st),
			    mysql_stmt_error(st));
		else {
			*out = st;
			rc = DB_OK;
		}
	}
	if (bind != small)
		free(bind);
	return rc;
}

/* Galera: a read that waits for the cluster (db_sync_wait) fails with
 * 1205 "Lock wait timeout", not 1047, when its node cannot reach the rest
 * of the cluster (it is losing or has lost its Primary component; for a
 * moment it may still say it is ready): that node is lost to us, not busy.
 * Returns 1 (db->lost set) for such a failure; a 1205 without sync_wait is
 * a row lock's, retried as before. */
static int
db_wsrep_lost(struct db *db)
{
	if (!db->galera || !db->sync_wait ||
	    db->errcode != ER_LOCK_WAIT_TIMEOUT)
		return 0;
	db->lost = 1;
	return 1;
}

/* Runs a statement; a lost connection outside a transaction is re-opened
 * and the statement tried once more. */
static enum db_err
db_run(struct db *db, const char *sql, const struct db_param *p, size_t n,
    MYSQL_STMT **out)
{
	enum db_err rc = db_run_once(db, sql, p, n, out);

	if (rc == DB_ERR_RETRY && db_wsrep_lost(db))
		rc = DB_ERR_CONNECT;
	if (rc == DB_ERR_CONNECT && !db->in_tx) {
		log_warn("event=db_reconnect error=\"%s\"", db->err);
		if (db_connect(db) == DB_OK &&
		    (rc = db_run_once(db, sql, p, n, out)) == DB_ERR_RETRY &&
		    db_wsrep_lost(db))
			rc = DB_ERR_CONNECT;
	}
	if (rc == DB_ERR_CONNECT && db->in_tx)
		db->in_tx = 0;
	return rc;
}

enum db_err
db_exec(struct db *db, const char *sql, const struct db_param *p, size_t n,
    unsigned long long *affected)
{
	MYSQL_STMT *st;
	enum db_err rc;

	if ((rc = db_run(db, sql, p, n, &st)) != DB_OK)
		return rc;
	if (affected)
		*affected = (unsigned long long)mysql_stmt_affected_rows(st);
	mysql_stmt_free_result(st);
	return DB_OK;
}

enum db_err
db_query(struct db *db, const char *sql, const struct db_param *p, size_t n,
    struct db_res **out)
{
	struct db_res *r;
	MYSQL_RES *meta;
	MYSQL_FIELD *f;
	MYSQL_STMT *st;
	enum db_err rc;
	unsigned i;

	*out = NULL;
	if ((rc = db_run(db, sql, p, n, &st)) != DB_OK)
		return rc;
	if (mysql_stmt_store_result(st) != 0)
		return db_classify(db, mysql_stmt_errno(st), mysql_stmt_error(st));
	if ((r = calloc(1, sizeof(*r))) == NULL)
		goto nomem;
	r->db = db;
	r->stmt = st;
	if ((meta = mysql_stmt_result_metadata(st)) == NULL) {
		*out = r;
		return DB_OK;
	}
	r->ncols = mysql_num_fields(meta);
	f = mysql_fetch_fields(meta);
	r->bind = calloc(r->ncols, sizeof(*r->bind));
	r->val = calloc(r->ncols, sizeof(*r->val));
	r->len = calloc(r->ncols, sizeof(*r->len));
	r->cap = calloc(r->ncols, sizeof(*r->cap));
	r->isnull = calloc(r->ncols, sizeof(*r->isnull));
	r->trunc = calloc(r->ncols, sizeof(*r->trunc));
	if (!r->bind || !r->val || !r->len || !r->cap || !r->isnull ||
	    !r->trunc) {
		mysql_free_result(meta);
		goto nomem_res;
	}
	for (i = 0; i < r->ncols; i++) {
		r->cap[i] = (f[i].max_length > 63 ? f[i].max_length : 63) + 1;
		if ((r->val[i] = malloc(r->cap[i])) == NULL) {
			mysql_free_result(meta);
			goto nomem_res;
		}
		r->bind[i].buffer_type = MYSQL_TYPE_STRING;
		r->bind[i].buffer = r->val[i];
		r->bind[i].buffer_length = r->cap[i] - 1;
		r->bind[i].length = &r->len[i];
		r->bind[i].is_null = &r->isnull[i];
		r->bind[i].error = &r->trunc[i];
	}
	mysql_free_result(meta);
	if (mysql_stmt_bind_result(st, r->bind) != 0) {
		rc = db_classify(db, mysql_stmt_errno(st), mysql_stmt_error(st));
		db_res_free(r);
		return rc;
	}
	*out = r;
	return DB_OK;
nomem_res:
	db_res_free(r);
nomem:
	mysql_stmt_free_result(st);
	snprintf(db->err, sizeof(db->err), "out of memory");
	return DB_ERR_QUERY;
}

int
db_res_next(struct db_res *r)
{
	unsigned i;
	int rc;
	char *p;

	if (r->ncols == 0)
		return 0;
	rc = mysql_stmt_fetch(r->stmt);
	if (rc == MYSQL_NO_DATA)
		return 0;
	if (rc == 1)
		return -1;
	for (i = 0; i < r->ncols; i++) {
		if (!r->isnull[i] && r->len[i] + 1 > r->cap[i]) {
			/* A value longer than the longest the server announced. */
			if ((p = realloc(r->val[i], r->len[i] + 1)) == NULL)
				return -1;
			r->val[i] = p;
			r->cap[i] = r->len[i] + 1;
			r->bind[i].buffer = p;
			r->bind[i].buffer_length = r->len[i];
			if (mysql_stmt_fetch_column(r->stmt, &r->bind[i], i, 0))
				return -1;
		}
		if (!r->isnull[i])
			r->val[i][r->len[i]] = '\0';
	}
	return 1;
}

unsigned long long
db_res_rows(const struct db_res *r)
{
	return (unsigned long long)mysql_stmt_num_rows(r->stmt);
}

const char *
db_res_str(const struct db_res *r, unsigned col)
{
	if (col >= r->ncols || r->isnull[col])
		return NULL;
	return r->val[col];
}

size_t
db_res_len(const struct db_res *r, unsigned col)
{
	if (col >= r->ncols || r->isnull[col])
		return 0;
	return r->len[col];
}

long long
db_res_int(const struct db_res *r, unsigned col)
{
	const char *s = db_res_str(r, col);

	return s ? strtoll(s, NULL, 10) : 0;
}

int
db_res_isnull(const struct db_res *r, unsigned col)
{
	return col >= r->ncols || r->isnull[col];
}

void
db_res_free(struct db_res *r)
{
	unsigned i;

	if (r == NULL)
		return;
	mysql_stmt_free_result(r->stmt);
	/* A CALL's result set is followed by the CALL's own status: read
	 * it (it is already on its way, no round trip) or the connection is
	 * out of sync for the next statement. */
	while (mysql_stmt_more_results(r->stmt) &&
	    mysql_stmt_next_result(r->stmt) == 0)
		mysql_stmt_free_result(r->stmt);
	for (i = 0; r->val && i < r->ncols; i++)
		free(r->val[i]);
	free(r->bind);
	free(r->val);
	free(r->len);
	free(r->cap);
	free(r->isnull);
	free(r->trunc);
	free(r);
}

enum db_err
db_query_int(struct db *db, const char *sql, const struct db_param *p,
    size_t n, long long *out, int *found)
{
	struct db_res *r;
	enum db_err rc;
	int row;

	*out = 0;
	if (found)
		*found = 0;
	if ((rc = db_query(db, sql, p, n, &r)) != DB_OK)
		return rc;
	row = db_res_next(r);
	if (row == 1) {
		if (found)
			*found = !db_res_isnull(r, 0);
		*out = db_res_int(r, 0);
	}
	db_res_free(r);
	return row == -1 ? DB_ERR_QUERY : DB_OK;
}

enum db_err
db_exec_plain(struct db *db, const char *sql)
{
	if (db->my == NULL) {
		enum db_err rc = db_connect(db);
		if (rc != DB_OK)
			return rc;
	}
	if (mysql_query(db->my, sql) != 0)
		return db_classify(db, mysql_errno(db->my), mysql_error(db->my));
	return DB_OK;
}

enum db_err
db_begin(struct db *db)
{
	enum db_err rc = db_exec_plain(db, "START TRANSACTION");

	if (rc == DB_ERR_CONNECT) {
		log_warn("event=db_reconnect error=\"%s\"", db->err);
		if ((rc = db_connect(db)) == DB_OK)
			rc = db_exec_plain(db, "START TRANSACTION");
	}
	if (rc == DB_OK)
		db->in_tx = 1;
	return rc;
}

enum db_err
db_commit(struct db *db)
{
	enum db_err rc = db_exec_plain(db, "COMMIT");

	db->in_tx = 0;
	return rc;
}

void
db_rollback(struct db *db)
{
	if (db->my != NULL && db->in_tx)
		(void)mysql_rollback(db->my);
	db->in_tx = 0;
}


enum db_err
db_tx_retry(struct db *db, enum db_err (*work)(struct db *, void *),
    void *arg)
{
	enum db_err e = DB_ERR_RETRY;
	int tries;

	for (tries = 0; tries < DB_TX_TRIES && (e == DB_ERR_RETRY ||
	    e == DB_ERR_CONNECT); tries++) {
		/* A lost connection was re-opened on another endpoint (if
		 * one is ready) by db_begin; the work runs again there. */
		if ((e = db_begin(db)) != DB_OK)
			continue;
		if ((e = work(db, arg)) == DB_OK && (e = db_commit(db)) == DB_OK)
			return DB_OK;
		db_rollback(db);
		if (e == DB_ERR_CONNECT)
			log_warn("event=db_tx_retry error=\"%s\"", db->err);
	}
	return e;
}
