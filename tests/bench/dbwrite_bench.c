/* dbwrite_bench.c: the server's cost of svc-worker's result writes in
 * isolation (tests/bench/README, bench-farm, "The results write and the
 * verdict cache measured alone"). Against a scratch MariaDB (a socket
 * given; root by the socket), it creates job_emails as sql/ defines it
 * (every column and both secondary keys) and verdict_cache, inserts a
 * 20,000-address job as the POST does (1,000 rows a statement), then
 * writes the results as svc-worker does (a chunk of 200 rows in four
 * transactions of 50: the done rows read, one multi-row statement in
 * groups of 32 + 16 + 2, COMMIT) in the form named, and 20,000 verdict
 * cache entries (50 a statement, 32 + 16 + 2) in the form named, then the
 * same keys again ("warm"). Prepared statements, as db.c runs them
 * (prepared once per text, executed many times). Prints mariadbd's CPU
 * (from /proc, its pid given) and the wall time of each phase. Not built
 * by make:
 *   cc -O2 -o dbwrite_bench tests/bench/dbwrite_bench.c \
 *     $(mariadb_config --cflags --libs)
 *   ./dbwrite_bench SOCKET MARIADBD_PID FORM [CACHEFORM]
 * FORM: union (main's UPDATE ... JOIN (SELECT ... UNION ALL ...)), odku
 * (INSERT ... ON DUPLICATE KEY UPDATE with the done-row guards), values
 * (UPDATE ... JOIN (WITH v(...) AS (VALUES ...) ...), its first row cast),
 * sep (an experiment, not svc's schema: the results INSERTed into a table
 * of their own, job_results, keyed (job_id, seq) with a chunk and a
 * classification key, the job's rows never updated; the done rows read
 * from it by chunk), none. CACHEFORM: replace (REPLACE of a 510-byte object), odku (INSERT
 * ... ON DUPLICATE KEY UPDATE of it), compact (REPLACE of a ~150-byte
 * value), none. Experiments, by environment: PAD=1 one 64-row statement a
 * write (union: rows of seq NULL; odku: the last row again); G48=1 the
 * write's sizes in multiples of 16 (48 + 2, dbsql_group_steps); SINGLE=1 a
 * statement a row; SKIPW=1 no write (the transaction's other statements
 * only); NOIDX=1 neither secondary key, NOIDX=2 only the chunk key;
 * PREFILL=1 every result column filled (same lengths) before the writes;
 * PREPOP=N the cache table first filled with N x 20,000 other entries of
 * the 510-byte object. */
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ROWS 20000
#define DOMAINS 200
#define CHUNK 200
#define WRITE 50
#define COLS 15

static MYSQL *my;
static int server_pid;

static void
die(const char *what)
{
	fprintf(stderr, "%s: %s\n", what, mysql_error(my));
	exit(1);
}

static void
q(const char *sql)
{
	if (mysql_query(my, sql) != 0)
		die(sql);
	mysql_free_result(mysql_store_result(my));
}

static double
server_cpu(void)
{
	char path[64], buf[1024], *p;
	unsigned long ut, st;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", server_pid);
	if ((f = fopen(path, "r")) == NULL || fgets(buf, sizeof(buf), f) ==
	    NULL)
		exit(1);
	fclose(f);
	p = strrchr(buf, ')') + 2;
	for (i = 0; i < 11; i++)
		p = strchr(p, ' ') + 1;
	sscanf(p, "%lu %lu", &ut, &st);
	return (double)(ut + st) / sysconf(_SC_CLK_TCK);
}

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* Prepared statements by text, as db.c keeps them. */
struct stmt {
	char		*sql;
	MYSQL_STMT	*st;
};
static struct stmt cache[64];

static MYSQL_STMT *
prepare(const char *sql)
{
	int i;

	for (i = 0; i < 64 && cache[i].sql; i++)
		if (strcmp(cache[i].sql, sql) == 0)
			return cache[i].st;
	if (i == 64)
		exit(1);
	cache[i].sql = strdup(sql);
	cache[i].st = mysql_stmt_init(my);
	if (mysql_stmt_prepare(cache[i].st, sql, strlen(sql)) != 0) {
		fprintf(stderr, "prepare: %s\n%s\n",
		    mysql_stmt_error(cache[i].st), sql);
		exit(1);
	}
	return cache[i].st;
}

/* Parameters: strings, or NULL for SQL NULL; ints given as strings. */
static double now(void);
static double tsel, tupd, tcommit;
static unsigned long long
run0(const char *sql, char **p, int n);
static unsigned long long
run(const char *sql, char **p, int n)
{
	double t0 = now();
	unsigned long long a = run0(sql, p, n);
	if (strncmp(sql, "SELECT", 6) == 0) tsel += now() - t0; else tupd += now() - t0;
	return a;
}
static unsigned long long
run0(const char *sql, char **p, int n)
{
	MYSQL_STMT *st = prepare(sql);
	MYSQL_BIND *b = calloc(n + 1, sizeof(*b));
	unsigned long *len = calloc(n + 1, sizeof(*len));
	unsigned long long a;
	int i;

	for (i = 0; i < n; i++) {
		if (p[i] == NULL) {
			b[i].buffer_type = MYSQL_TYPE_NULL;
			continue;
		}
		len[i] = strlen(p[i]);
		b[i].buffer_type = MYSQL_TYPE_STRING;
		b[i].buffer = p[i];
		b[i].buffer_length = len[i];
		b[i].length = &len[i];
	}
	if ((n && mysql_stmt_bind_param(st, b) != 0) ||
	    mysql_stmt_execute(st) != 0) {
		fprintf(stderr, "execute: %s\n", mysql_stmt_error(st));
		exit(1);
	}
	a = mysql_stmt_affected_rows(st);
	mysql_stmt_store_result(st);
	mysql_stmt_free_result(st);
	free(b);
	free(len);
	return a;
}

static void
repeat(char *out, size_t cap, const char *head, const char *item,
    const char *sep, int n, const char *tail)
{
	int i;

	snprintf(out, cap, "%s", head);
	for (i = 0; i < n; i++) {
		if (i)
			strncat(out, sep, cap - strlen(out) - 1);
		strncat(out, item, cap - strlen(out) - 1);
	}
	strncat(out, tail, cap - strlen(out) - 1);
}

static const char *job = "job_0123456789abcdef0123456789abcd";

static void
setup(void)
{
	int noidx = getenv("NOIDX") ? atoi(getenv("NOIDX")) : 0;
	q("DROP TABLE IF EXISTS job_emails");
	q("DROP TABLE IF EXISTS job_results");
	q("CREATE TABLE job_results ("
	    "job_id VARCHAR(40) NOT NULL, seq INT NOT NULL, chunk INT NOT NULL,"
	    "classification ENUM('valid','invalid','risky','catch_all',"
	    "'disposable','unknown') NOT NULL, status ENUM('deliverable',"
	    "'undeliverable','risky','unknown') NOT NULL, reason VARCHAR(32) NULL,"
	    "sub_status VARCHAR(32) NULL, score TINYINT UNSIGNED NULL,"
	    "free TINYINT NULL, role TINYINT NULL, disposable TINYINT NULL,"
	    "accept_all TINYINT NULL, catch_all_verdict VARCHAR(24) NULL,"
	    "verified_at DATETIME(3) NULL, provider VARCHAR(253) NULL,"
	    "score_basis VARCHAR(10) NULL, mx_host VARCHAR(253) NULL,"
	    "PRIMARY KEY (job_id, seq), KEY job_results_chunk (job_id, chunk),"
	    "KEY job_results_class (job_id, classification, seq)"
	    ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin");
	q("DROP TABLE IF EXISTS verdict_cache");
	char t[4096];
	snprintf(t, sizeof(t), "CREATE TABLE job_emails ("
	    "job_id VARCHAR(40) NOT NULL, seq INT NOT NULL, chunk INT NOT NULL,"
	    "email VARCHAR(320) NOT NULL, domain VARCHAR(253) NOT NULL,"
	    "state ENUM('pending','retry','done') NOT NULL DEFAULT 'pending',"
	    "retry_at DATETIME(3) NULL, attempts TINYINT NOT NULL DEFAULT 0,"
	    "classification ENUM('valid','invalid','risky','catch_all',"
	    "'disposable','unknown') NULL, status ENUM('deliverable',"
	    "'undeliverable','risky','unknown') NULL, reason VARCHAR(32) NULL,"
	    "sub_status VARCHAR(32) NULL, score TINYINT UNSIGNED NULL,"
	    "free TINYINT NULL, role TINYINT NULL, disposable TINYINT NULL,"
	    "accept_all TINYINT NULL, catch_all_verdict VARCHAR(24) NULL,"
	    "verified_at DATETIME(3) NULL,"
	    "PRIMARY KEY (job_id, seq)%s"
	    ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin", noidx == 2 ? ", KEY job_emails_chunk (job_id, chunk, state)" : noidx ? "" : ", KEY job_emails_chunk (job_id, chunk, state), KEY job_emails_class (job_id, classification, seq)");
	q(t);
	q("ALTER TABLE job_emails ADD COLUMN charged TINYINT NOT NULL "
	    "DEFAULT 1");
	q("ALTER TABLE job_emails ADD COLUMN original MEDIUMTEXT NULL, "
	    "ADD COLUMN suppressed TINYINT NOT NULL DEFAULT 0");
	q("ALTER TABLE job_emails ADD COLUMN provider VARCHAR(253) NULL");
	q("ALTER TABLE job_emails ADD COLUMN score_basis VARCHAR(10) NULL");
	q("ALTER TABLE job_emails ADD COLUMN mx_host VARCHAR(253) NULL");
	q("CREATE TABLE verdict_cache ("
	    "address_hash CHAR(32) CHARACTER SET ascii COLLATE ascii_bin "
	    "NOT NULL PRIMARY KEY, result MEDIUMTEXT NOT NULL,"
	    "expires_at DATETIME(3) NOT NULL,"
	    "KEY verdict_cache_expires (expires_at)"
	    ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin");
}

static char *sql;
#define SQLMAX (1 << 20)

/* The POST: 20 statements of 1,000 rows, one transaction. */
static void
post(void)
{
	static char *p[1000 * 8];
	static char s[1000 * 8][80];
	int i, k;

	q("BEGIN");
	repeat(sql, SQLMAX, "INSERT INTO job_emails (job_id, seq, chunk, "
	    "email, domain, charged, suppressed, original) VALUES ",
	    "(?,?,?,?,?,?,?,?)", ",", 1000, "");
	for (i = 0; i < ROWS; i += 1000) {
		for (k = 0; k < 1000; k++) {
			int seq = i + k, d = seq % DOMAINS;
			char **r = p + 8 * k;

			r[0] = (char *)job;
			snprintf(s[8 * k + 1], 80, "%d", seq);
			r[1] = s[8 * k + 1];
			snprintf(s[8 * k + 2], 80, "%d", d / 2);
			r[2] = s[8 * k + 2];
			snprintf(s[8 * k + 3], 80, "user%d@d%03d.bench.test",
			    seq / DOMAINS, d);
			r[3] = s[8 * k + 3];
			r[4] = s[8 * k + 3] + strlen(s[8 * k + 3]) - 14;
			r[5] = "1";
			r[6] = "0";
			r[7] = NULL;
		}
		run(sql, p, 8000);
	}
	q("COMMIT");
	if (getenv("PREFILL"))
		q("UPDATE job_emails SET reason = 'xxxxxxxxxxxxxx', sub_status = 'xxxxxxxxxxxxxxxxx', score = 1, free = 1, role = 1, disposable = 1, accept_all = 1, catch_all_verdict = 'xxxxxxxxxxxxxx', verified_at = '2020-01-01', provider = 'xxxxxxxxxxxxxxx', score_basis = 'xxxxx', mx_host = 'xxxxxxxxxxxxxxxxxx'");
	if (getenv("PREFILL"))
		q("OPTIMIZE TABLE job_emails");
}

static int form_odku, form_values, form_sep;

static void
result_params(char **r, char (*s)[64], int seq)
{
	int d = seq % DOMAINS, valid = (seq / DOMAINS) % 2 == 0 ||
	    d % 10 == 0;

	snprintf(s[0], 64, "%d", seq);
	r[0] = s[0];
	r[1] = valid ? (d % 10 == 0 ? "catch_all" : "valid") : "invalid";
	r[2] = valid ? (d % 10 == 0 ? "risky" : "deliverable") :
	    "undeliverable";
	r[3] = valid ? (d % 10 == 0 ? "accept_all" : "accepted_email") :
	    "rejected_email";
	r[4] = valid ? NULL : "mailbox_not_found";
	r[5] = valid ? "95" : "0";
	r[6] = "0";
	r[7] = "0";
	r[8] = "0";
	r[9] = d % 10 == 0 ? "1" : "0";
	r[10] = d % 10 == 0 ? "accept_all" : "not_accept_all";
	r[11] = "1795600000";
	snprintf(s[1], 64, "d%03d.bench.test", d);
	r[12] = s[1];
	r[13] = "rules";
	snprintf(s[2], 64, "mx-d%03d.bench.test", d);
	r[14] = s[2];
}

static const char *odku_head =
    "INSERT INTO job_emails (job_id, chunk, email, domain, seq, "
    "classification, status, reason, sub_status, score, free, role, "
    "disposable, accept_all, catch_all_verdict, verified_at, provider, "
    "score_basis, mx_host) VALUES ";
static const char *odku_item =
    "(?, ?, '', '', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, FROM_UNIXTIME(?), ?, "
    "?, ?)";
/* state last: the assignments before it see the row's old state */
#define KEEP(c) c " = IF(state = 'done', " c ", VALUES(" c ")), "
static const char *odku_tail =
    " ON DUPLICATE KEY UPDATE "
    KEEP("retry_at") KEEP("classification") KEEP("status") KEEP("reason")
    KEEP("sub_status") KEEP("score") KEEP("free") KEEP("role")
    KEEP("disposable") KEEP("accept_all") KEEP("catch_all_verdict")
    KEEP("verified_at") KEEP("provider") KEEP("score_basis") KEEP("mx_host")
    "state = 'done'";

/* sep: a table of results beside the job's rows, written once per row
 * (the job's rows are never updated) */
static const char *sep_head =
    "INSERT INTO job_results (job_id, chunk, seq, "
    "classification, status, reason, sub_status, score, free, role, "
    "disposable, accept_all, catch_all_verdict, verified_at, provider, "
    "score_basis, mx_host) VALUES ";
static const char *sep_item =
    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, FROM_UNIXTIME(?), ?, ?, ?)";

static const char *union_item =
    "SELECT ? AS seq, ? AS classification, ? AS status, ? AS reason, "
    "? AS sub_status, ? AS score, ? AS free, ? AS role, "
    "? AS disposable, ? AS accept_all, ? AS catch_all_verdict, "
    "? AS verified_at, ? AS provider, ? AS score_basis, ? AS mx_host";
static const char *union_tail =
    ") v ON e.seq = v.seq "
    "SET e.state = 'done', e.retry_at = NULL, e.classification = "
    "v.classification, e.status = v.status, e.reason = v.reason, "
    "e.sub_status = v.sub_status, e.score = v.score, e.free = v.free, "
    "e.role = v.role, e.disposable = v.disposable, e.accept_all = "
    "v.accept_all, e.catch_all_verdict = v.catch_all_verdict, "
    "e.verified_at = FROM_UNIXTIME(v.verified_at), "
    "e.provider = v.provider, e.score_basis = v.score_basis, "
    "e.mx_host = v.mx_host "
    "WHERE e.job_id = ? AND e.state <> 'done'";
static const char *values_tail =
    ") v ON e.seq = v.seq "
    "SET e.state = 'done', e.retry_at = NULL, e.classification = "
    "v.c, e.status = v.st, e.reason = v.r, "
    "e.sub_status = v.ss, e.score = v.sc, e.free = v.f, "
    "e.role = v.ro, e.disposable = v.di, e.accept_all = "
    "v.aa, e.catch_all_verdict = v.cv, "
    "e.verified_at = FROM_UNIXTIME(v.va), "
    "e.provider = v.p, e.score_basis = v.sb, "
    "e.mx_host = v.mx "
    "WHERE e.job_id = ? AND e.state <> 'done'";

static unsigned long long
write_group(const int *seqs, int n)
{
	int real = n;
	if (getenv("PAD")) n = 64;
	static char *p[64 * 20 + 1];
	static char s[64][3][64];
	char *r[COLS];
	char chunk[16];
	int i, k;

	if (form_odku || form_sep) {
		if (form_sep)
			repeat(sql, SQLMAX, sep_head, sep_item, ",", n, "");
		else
			repeat(sql, SQLMAX, odku_head, odku_item, ",", n,
			    odku_tail);
		for (i = 0; i < n; i++) {
			result_params(r, s[i], seqs[i < real ? i : real - 1]);
			snprintf(chunk, sizeof(chunk), "%d",
			    (seqs[i] % DOMAINS) / 2);
			p[17 * i] = (char *)job;
			p[17 * i + 1] = strdup(chunk);
			for (k = 0; k < COLS; k++)
				p[17 * i + 2 + k] = r[k];
		}
		return run(sql, p, 17 * n);
	}
	if (form_values)
		repeat(sql, SQLMAX, "UPDATE job_emails e JOIN (WITH v(seq, c, st, r, ss, sc, f, ro, di, aa, cv, va, p, sb, mx) AS (VALUES (CAST(? AS SIGNED), CAST(? AS CHAR(16)), CAST(? AS CHAR(16)), CAST(? AS CHAR(32)), CAST(? AS CHAR(32)), CAST(? AS SIGNED), CAST(? AS SIGNED), CAST(? AS SIGNED), CAST(? AS SIGNED), CAST(? AS SIGNED), CAST(? AS CHAR(24)), CAST(? AS SIGNED), CAST(? AS CHAR(253)), CAST(? AS CHAR(10)), CAST(? AS CHAR(253)))", "", "", 1, "");
	if (form_values && n > 1) { strcat(sql, ","); repeat(sql + strlen(sql), SQLMAX / 2, "", "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
		    "?, ?, ?, ?, ?)", ",", n - 1, ""); }
	if (form_values) strcat(sql, ") SELECT * FROM v");
	if (form_values) strcat(sql, values_tail);
	else
		repeat(sql, SQLMAX, "UPDATE job_emails e JOIN (", union_item,
		    " UNION ALL ", n, union_tail);
	for (i = 0; i < n; i++) {
		result_params(r, s[i], seqs[i < real ? i : real - 1]);
		if (i >= real) r[0] = NULL;
		for (k = 0; k < COLS; k++)
			p[COLS * i + k] = r[k];
	}
	p[COLS * n] = (char *)job;
	return run(sql, p, COLS * n + 1);
}

/* Results: for each chunk (two domains), four writes of 50 rows. */
static void
results(void)
{
	int c, w, i, seqs[WRITE], off, g;
	char cs[16];
	char *p[2];
	unsigned long long changed;

	for (c = 0; c < ROWS / CHUNK; c++)
		for (w = 0; w < CHUNK / WRITE; w++) {
			/* the chunk's rows: domains 2c and 2c+1, seq = d +
			 * 200 u; this write: 50 of them */
			for (i = 0; i < WRITE; i++) {
				int k = w * WRITE + i;
				seqs[i] = (2 * c + k % 2) + DOMAINS * (k / 2);
			}
			q("BEGIN");
			snprintf(cs, sizeof(cs), "%d", c);
			p[0] = (char *)job;
			p[1] = cs;
			if (form_sep) {
				run("SELECT seq FROM job_results WHERE "
				    "job_id = ? AND chunk = ?", p, 2);
				run("SELECT seq FROM job_emails WHERE "
				    "job_id = ? AND chunk = ? AND charged = 0",
				    p, 2);
			} else
				run("SELECT seq, state = 'done', charged FROM "
				    "job_emails WHERE job_id = ? AND chunk = ? AND "
				    "(state = 'done' OR charged = 0)", p, 2);
			changed = 0;
			for (off = 0; off < WRITE; off += g) {
				for (g = 64; g > WRITE - off; g /= 2)
					;
				if (getenv("SKIPW")) { changed = form_odku ? 2 * WRITE : WRITE; break; }
				if (getenv("SINGLE")) { int z; for (z = 0; z < WRITE; z++) changed += write_group(seqs + z, 1); break; }
				if (getenv("PAD")) { changed += write_group(seqs, WRITE); break; }
				if (getenv("G48") != NULL) { g = WRITE - off >= 48 ? 48 : WRITE - off >= 32 ? 32 : WRITE - off >= 16 ? 16 : WRITE - off >= 8 ? 8 : WRITE - off >= 4 ? 4 : WRITE - off >= 2 ? 2 : 1; changed += write_group(seqs + off, g); continue; }
				changed += write_group(seqs + off, g);
			}
			if (changed != (form_odku ? 2 * WRITE : WRITE)) {
				fprintf(stderr, "changed %llu\n", changed);
				exit(1);
			}
			{ double t0 = now(); q("COMMIT"); tcommit += now() - t0; }
		}
	printf("select %.0f ms, write %.0f ms, commit %.0f ms\n", tsel * 1000, tupd * 1000, tcommit * 1000);
}

static int cache_odku, cache_compact;
static const char *full_value =
    "{\"status\":\"deliverable\",\"reason\":\"accepted_email\",\"sub_status\""
    ":null,\"score\":95,\"score_basis\":\"rules\",\"spam_trap\":\"no\",\"role"
    "\":\"no\",\"catch_all_verdict\":\"not_accept_all\",\"domain\":{\"name\":"
    "\"d017.bench.test\",\"acceptAll\":\"no\",\"disposable\":\"no\",\"free\":"
    "\"no\"},\"mx\":[{\"priority\":10,\"host\":\"mx-d017.bench.test\"}],\"pro"
    "vider\":\"bench.test\",\"smtp\":{\"code\":250,\"enhanced_code\":\"2.1.5"
    "\",\"message\":\"2.1.5 Recipient {address} OK, mailbox exists and accep"
    "ts mail\",\"tls\":true},\"verified_at\":\"2026-11-29T15:30:00.123Z\",\"c"
    "ached\":false,\"kind\":\"mailbox\",\"trap\":0,\"did_you_mean_domain\":"
    "\"d017.bench.test\",\"pad\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}";
static const char *compact_value =
    "2|deliverable|accepted_email||95|rules|0|0|not_accept_all|0|0|0|"
    "10 mx-d017.bench.test|bench.test|250|2.1.5|2.1.5 Recipient {address} OK"
    "|1|1795600000|mailbox|0";

static int keybase;
static void
cache_write(int pass)
{
	static char *p[64 * 3];
	static char keys[ROWS][33];
	int i, k, off, g;

	for (i = 0; i < ROWS; i++)
		snprintf(keys[i], 33, "%08x%08x%08x%08x", (unsigned)((i + keybase) *
		    2654435761u), (unsigned)(i * 40503u + 7), (unsigned)i ^
		    0x5bd1e995u, (unsigned)(i * 97u));
	for (i = 0; i < ROWS; i += WRITE)
		for (off = 0; off < WRITE; off += g) {
			for (g = 64; g > WRITE - off; g /= 2)
				;
			repeat(sql, SQLMAX, cache_odku ? "INSERT INTO "
			    "verdict_cache (address_hash, result, expires_at) "
			    "VALUES " : "REPLACE INTO verdict_cache "
			    "(address_hash, result, expires_at) VALUES ",
			    "(?, ?, UTC_TIMESTAMP(3) + INTERVAL ? SECOND)", ",",
			    g, cache_odku ? " ON DUPLICATE KEY UPDATE result = "
			    "VALUES(result), expires_at = VALUES(expires_at)" :
			    "");
			for (k = 0; k < g; k++) {
				p[3 * k] = keys[i + off + k];
				p[3 * k + 1] = (char *)(cache_compact ?
				    compact_value : full_value);
				p[3 * k + 2] = pass ? "2592001" : "2592000";
			}
			run(sql, p, 3 * g);
		}
}

static void
phase(const char *name, void (*fn)(void))
{
	double c0 = server_cpu(), t0 = now();

	fn();
	printf("%-24s server CPU %6.0f ms (%5.1f ms / 1,000)  wall %6.0f ms\n",
	    name, (server_cpu() - c0) * 1000, (server_cpu() - c0) * 1000 /
	    (ROWS / 1000.0), (now() - t0) * 1000);
	fflush(stdout);
}

static void cache_cold(void) { cache_write(0); }
static void cache_warm(void) { cache_write(1); }

int
main(int argc, char **argv)
{
	const char *form, *cform;
	char name[64];

	if (argc < 4)
		return 2;
	server_pid = atoi(argv[2]);
	form = argv[3];
	cform = argc > 4 ? argv[4] : "none";
	form_odku = strcmp(form, "odku") == 0;
	form_values = strcmp(form, "values") == 0;
	form_sep = strcmp(form, "sep") == 0;
	cache_odku = strcmp(cform, "odku") == 0;
	cache_compact = strcmp(cform, "compact") == 0;
	sql = malloc(SQLMAX);
	my = mysql_init(NULL);
	if (!mysql_real_connect(my, NULL, "root", NULL, "svc", 0, argv[1], 0))
		die("connect");
	q("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
	setup();
	sleep(1);
	if (getenv("PREPOP")) {
		int save_c = cache_compact, save_o = cache_odku, k, n = atoi(getenv("PREPOP"));
		cache_compact = 0; cache_odku = 0;
		for (k = 1; k <= n; k++) { keybase = k * 1000003; cache_write(0); }
		keybase = 0; cache_compact = save_c; cache_odku = save_o;
		sleep(2);
	}
	phase("post insert", post);
	if (strcmp(form, "none") != 0) {
		snprintf(name, sizeof(name), "results %s", form);
		phase(name, results);
	}
	if (strcmp(cform, "none") != 0) {
		snprintf(name, sizeof(name), "cache %s cold", cform);
		phase(name, cache_cold);
		snprintf(name, sizeof(name), "cache %s warm", cform);
		phase(name, cache_warm);
	}
	mysql_close(my);
	return 0;
}
