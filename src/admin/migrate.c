/* migrate.c: forward-only schema migrations. Files are named
 * NNN_description.sql; each is applied once, in number order, statement by
 * statement (a statement ends with ';' at the end of a line, or with the
 * text a "DELIMITER //" line sets, as in the mariadb client, for stored
 * procedures whose bodies hold ';'), then recorded in schema_version. Two
 * migrating hosts are kept apart by a lock row in schema_version (version
 * -1, a unique key: it works on a Galera cluster, where GET_LOCK is local
 * to one node), so migrations run once for the whole cluster; the one that
 * finds the row taken waits for it to go, then finds nothing left to do. */
#include "admin/migrate.h"
#include "util/strparse.h"
#include "util/timeutil.h"
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct migration {
	long	 version;
	char	 name[256];
};

static int
migrate_cmp(const void *a, const void *b)
{
	const struct migration *x = a, *y = b;

	return (x->version > y->version) - (x->version < y->version);
}

int
migrate_version(struct db *db, long long *version)
{
	long long n = 0;
	int found = 0;

	*version = 0;
	if (db_query_int(db, "SELECT COUNT(*) FROM information_schema.tables "
	    "WHERE table_schema = DATABASE() AND table_name = "
	    "'schema_version'", DB_NOARGS, &n, &found) != DB_OK)
		return -1;
	if (n == 0)
		return 0;
	return db_query_int(db, "SELECT COALESCE(MAX(version), 0) FROM "
	    "schema_version", DB_NOARGS, version, &found) == DB_OK ? 0 : -1;
}

static int
migrate_list(const char *dir, struct migration **out, size_t *n,
    struct buf *err)
{
	struct migration *v = NULL, *nv;
	struct dirent *de;
	char num[16];
	size_t cnt = 0, len;
	DIR *d;

	if ((d = opendir(dir)) == NULL) {
		buf_printf(err, "%s: %s", dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len < 9 || len >= sizeof(v->name) ||
		    strcmp(de->d_name + len - 4, ".sql") != 0 ||
		    de->d_name[3] != '_')
			continue;
		memcpy(num, de->d_name, 3);
		num[3] = '\0';
		if ((nv = realloc(v, (cnt + 1) * sizeof(*v))) == NULL)
			break;
		v = nv;
		if (strparse_long(num, 1, 999, &v[cnt].version) == -1)
			continue;
		memcpy(v[cnt].name, de->d_name, len + 1);
		cnt++;
	}
	closedir(d);
	qsort(v, cnt, sizeof(*v), migrate_cmp);
	*out = v;
	*n = cnt;
	return 0;
}

static int
migrate_file(struct db *db, const char *path, struct buf *err)
{
	char line[8192], delim[16] = ";", *p;
	struct buf stmt;
	FILE *f;
	size_t l, dl;
	int rc = 0;

	if ((f = fopen(path, "r")) == NULL) {
		buf_printf(err, "%s: %s", path, strerror(errno));
		return -1;
	}
	buf_init(&stmt, 1024 * 1024);
	while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
		p = strparse_trim(line);
		if (*p == '\0' || strncmp(p, "--", 2) == 0)
			continue;
		if (stmt.len == 0 && strncasecmp(p, "DELIMITER ", 10) == 0) {
			p = strparse_trim(p + 10);
			if (*p == '\0' || strlen(p) >= sizeof(delim)) {
				buf_printf(err, "%s: bad DELIMITER line", path);
				rc = -1;
			} else
				strparse_copy(delim, sizeof(delim), p);
			continue;
		}
		l = strlen(p);
		dl = strlen(delim);
		if (l < dl || strcmp(p + l - dl, delim) != 0) {
			buf_puts(&stmt, p);
			buf_putc(&stmt, '\n');
			continue;
		}
		/* the statement ends here; ';' may stay, another delimiter not */
		if (strcmp(delim, ";") != 0)
			p[l - dl] = '\0';
		buf_puts(&stmt, p);
		buf_putc(&stmt, '\n');
		if (db_exec_plain(db, buf_str(&stmt)) != DB_OK) {
			buf_printf(err, "%s: %s", path, db_error(db));
			rc = -1;
		}
		buf_reset(&stmt);
	}
	fclose(f);
	buf_free(&stmt);
	return rc;
}

/* The lock row's version; MAX(version) never sees it. */
#define MIGRATE_LOCK_VERSION -1
/* A lock row older than this was left by a migration that died. */
#define MIGRATE_LOCK_STALE "INTERVAL 30 MINUTE"
/* How often a migration waiting for another's lock row looks again. */
#define MIGRATE_POLL_MS 200
/* schema_version as sql/001_foundation.sql declares it (IF NOT EXISTS
 * there too). The lock row needs its table before the first migration:
 * made first, two hosts migrating an empty database meet at the lock row,
 * not at 001's CREATE TABLE ("table exists" for one of them). DDL: on
 * Galera replicated in total order, the second a no-op. */
#define MIGRATE_TABLE_SQL "CREATE TABLE IF NOT EXISTS schema_version (" \
	"version INT NOT NULL PRIMARY KEY, applied_at DATETIME(3) NOT NULL" \
	") ENGINE=InnoDB"

/* One try at the lock row (a stale one removed first): 1 taken, 0 held by
 * another migration, -1 an error (in err). */
static int
migrate_lock_try(struct db *db, struct buf *err)
{
	enum db_err rc;

	if (db_exec(db, "DELETE FROM schema_version WHERE version = ? AND "
	    "applied_at < UTC_TIMESTAMP(3) - " MIGRATE_LOCK_STALE,
	    DB_ARGS(DBP_INT(MIGRATE_LOCK_VERSION)), NULL) != DB_OK) {
		buf_printf(err, "migration lock: %s", db_error(db));
		return -1;
	}
	rc = db_exec(db, "INSERT INTO schema_version (version, applied_at) "
	    "VALUES (?, UTC_TIMESTAMP(3))",
	    DB_ARGS(DBP_INT(MIGRATE_LOCK_VERSION)), NULL);
	if (rc == DB_OK)
		return 1;
	/* a duplicate, or on Galera a certification failure: another
	 * node's host inserted it at the same moment */
	if (rc == DB_ERR_DUPLICATE || rc == DB_ERR_RETRY)
		return 0;
	buf_printf(err, "migration lock: %s", db_error(db));
	return -1;
}

/* Takes the cluster-wide migration lock, waiting up to wait_s seconds for
 * another migration to give it back: 0 taken, -1 still held after the
 * wait or an error (why in err). */
static int
migrate_lock(struct db *db, long wait_s, struct buf *err)
{
	int64_t end = timeutil_mono_ms() + (int64_t)wait_s * 1000;
	int said = 0, r;

	if (db_exec_plain(db, MIGRATE_TABLE_SQL) != DB_OK) {
		buf_printf(err, "creating schema_version: %s", db_error(db));
		return -1;
	}
	while ((r = migrate_lock_try(db, err)) == 0) {
		if (timeutil_mono_ms() >= end) {
			buf_printf(err, "another migration holds the lock "
			    "(waited %ld s); run svcadm db migrate again when "
			    "it is done", wait_s);
			return -1;
		}
		if (!said) {
			printf("waiting up to %ld s for another migration "
			    "to finish\n", wait_s);
			fflush(stdout);
			said = 1;
		}
		timeutil_nap_ms(MIGRATE_POLL_MS);
	}
	return r == 1 ? 0 : -1;
}

int
migrate_apply(struct db *db, const char *dir, long wait_s, struct buf *err)
{
	struct migration *m = NULL;
	long long current;
	char path[1024];
	size_t n, i;
	int rc = -1, applied = 0;

	if (migrate_lock(db, wait_s, err) == -1)
		return -1;
	if (migrate_version(db, &current) == -1) {
		buf_printf(err, "reading schema_version: %s", db_error(db));
		goto out;
	}
	if (migrate_list(dir, &m, &n, err) == -1)
		goto out;
	for (i = 0; i < n; i++) {
		if (m[i].version <= current)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, m[i].name);
		if (migrate_file(db, path, err) == -1)
			goto out;
		if (db_exec(db, "INSERT INTO schema_version (version, "
		    "applied_at) VALUES (?, UTC_TIMESTAMP(3))",
		    DB_ARGS(DBP_INT(m[i].version)), NULL) != DB_OK) {
			buf_printf(err, "recording version %ld: %s",
			    m[i].version, db_error(db));
			goto out;
		}
		printf("applied %s\n", m[i].name);
		applied++;
	}
	if (migrate_version(db, &current) == -1)
		goto out;
	if (current < DB_SCHEMA_VERSION) {
		buf_printf(err, "schema is at %lld after migrating %s, this "
		    "build needs %d", current, dir, DB_SCHEMA_VERSION);
		goto out;
	}
	printf("schema at version %lld (%d applied)\n", current, applied);
	rc = 0;
out:
	db_exec(db, "DELETE FROM schema_version WHERE version = ?",
	    DB_ARGS(DBP_INT(MIGRATE_LOCK_VERSION)), NULL);
	free(m);
	return rc;
}
