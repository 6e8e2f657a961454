/* svcadm.c: the operator's tool: its command line, and for each command
 * the call into the file that does the work: schema migrations and their
 * key files (migrate.c, keyfiles.c), accounts, tiers and subscriptions,
 * retention and erasure (retentionadm.c), dashboard passwords and
 * invitations (webadm.c), organizations, credits, API keys, the
 * known-complainer list (complainersadm.c), the verdict cache (cacheadm.c),
 * delivery feedback (feedbackadm.c), the calibration counts
 * (calibrationadm.c), the effective configuration, the service's health
 * (status.c) and a verifier host's checks (doctor.c).
 * Output is plain: ids and keys alone on stdout so scripts can capture
 * them; errors on stderr with a non-zero exit. It is long because it
 * holds every command's usage line, option table and dispatch, each a
 * short function that hands the work to one of those files. */
#include "admin/cacheadm.h"
#include "admin/complainersadm.h"
#include "admin/calibrationadm.h"
#include "admin/feedbackadm.h"
#include "admin/keyfiles.h"
#include "admin/lists_rules_get.h"
#include "admin/lists_update.h"
#include "admin/doctor.h"
#include "admin/migrate.h"
#include "admin/retentionadm.h"
#include "admin/status.h"
#include "admin/webadm.h"
#include "core/accounts.h"
#include "core/auth.h"
#include "core/authcache.h"
#include "engine/mxprofile.h"
#include "engine/pacing_defaults.h"
#include "core/db.h"
#include "core/keys.h"
#include "core/ledger.h"
#include "jobs/suppressions.h"
#include "util/conf.h"
#include "util/startup.h"
#include "util/strparse.h"
#include <errno.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PKGDATADIR
#define PKGDATADIR "/usr/share/svc"
#endif

static struct conf conf;

static void
svcadm_usage(void)
{
	fputs("usage: svcadm [-c svc.conf] COMMAND ...\n"
	    "  db migrate [--sql-dir DIR] [--wait SECONDS]\n"
	    "  db version\n"
	    "  cache rotate-key  (a new key in cache_hash_key_file; the cache is "
	    "emptied)\n"
	    "  cache hash ADDRESS...|-  (the verdict cache's keys of addresses)\n"
	    "  account create --email E --tier free|trial|pro|admin [--credits N]\n"
	    "  account tier ACCOUNT TIER\n"
	    "  account subscription ACCOUNT active|inactive [--type NAME]\n"
	    "  account retention ACCOUNT DAYS|default\n"
	    "  account set-password ACCOUNT   (the password on standard input)\n"
	    "  account invite ACCOUNT   (prints a one-time link to set the password)\n"
	    "  account erase ACCOUNT   (every job's data, suppressions, stored\n"
	    "                           answers; the ledger and job counts stay)\n"
	    "  audit [--account ID] [--limit N]   (erase receipts)\n"
	    "  org create --name NAME [--rate-limit N] [--credits N]\n"
	    "  org add ORG ACCOUNT\n"
	    "  credits grant ACCOUNT|ORG N [--note TEXT]\n"
	    "  credits show ACCOUNT|ORG\n"
	    "  credits check ACCOUNT|ORG\n"
	    "  key create --account ID --scopes LIST [--name N] [--sandbox]\n"
	    "             [--rate-limit N] [--ip-allow CIDR]... [--org ORG]\n"
	    "             [--expires ISO8601]\n"
	    "  key list --account ID\n"
	    "  key set KEY_ID --rate-limit N|none\n"
	    "  key revoke KEY_ID\n"
	    "  complainers import FILE|- [--source NAME]\n"
	    "  suppressions import --account ID FILE|-\n"
	    "  suppressions list --account ID\n"
	    "  feedback set ACCOUNT [--suppress-hard-bounces on|off]\n"
	    "               [--mailgun-signing-key KEY] [--postmark-auth USER:PASS]\n"
	    "               [--sendgrid-public-key KEY] [--ses-topic-arns ARN,...]\n"
	    "  feedback import --account ID FILE|-   (a Postfix mail log)\n"
	    "  report accuracy [--account ID] [--since ISO] [--until ISO] [--json]\n"
	    "  calibration update   (count outcomes per provider and class now)\n"
	    "  calibration show\n"
	    "  mx show HOST    (what the workers learned of a mail host)\n"
	    "  lists update    (fetch the rule tables from lists_rules_url and\n"
	    "                   the disposable and free lists into lists_dir)\n"
	    "  lists check     (load lists_dir and print the counts)\n"
	    "  status [--json] [--min-workers N] [--worker-window S]\n"
	    "         [--max-job-age S] [--max-queue N] [--max-outbox-age S]\n"
	    "  doctor [--json] [--skip ptr,fcrdns,port25,dnsbl] [--address IP]\n"
	    "  config\n", stderr);
	exit(2);
}

static void svcadm_die(const char *, ...)
    __attribute__((format(printf, 1, 2), noreturn));

static void
svcadm_die(const char *fmt, ...)
{
	va_list ap;

	fputs("svcadm: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static struct db *
svcadm_open_db(int check_schema)
{
	struct db *db;
	struct buf err;

	buf_init(&err, 1024);
	if (db_open(&conf, check_schema, &db, &err) != DB_OK)
		svcadm_die("%s", buf_str(&err));
	buf_free(&err);
	return db;
}

static long
svcadm_number(const char *s, const char *what, long min, long max)
{
	long v;

	if (strparse_long(s, min, max, &v) == -1)
		svcadm_die("%s: not a number in range", what);
	return v;
}

/* Parses "--name value" options of a sub-command into vals[]. */
struct opt {
	const char	*name;
	int		 has_arg;
	const char	*val;
	int		 seen;
};

static int
svcadm_parse_opts(int argc, char **argv, struct opt *o, size_t n, char **pos,
    int maxpos)
{
	int i, np = 0;
	size_t k;

	for (i = 0; i < argc; i++) {
		if (strncmp(argv[i], "--", 2) != 0) {
			if (np == maxpos)
				svcadm_usage();
			pos[np++] = argv[i];
			continue;
		}
		for (k = 0; k < n; k++)
			if (strcmp(argv[i] + 2, o[k].name) == 0)
				break;
		if (k == n)
			svcadm_die("unknown option %s", argv[i]);
		o[k].seen++;
		if (o[k].has_arg) {
			if (i + 1 >= argc)
				svcadm_die("%s needs a value", argv[i]);
			o[k].val = argv[++i];
		}
	}
	return np;
}

static void
svcadm_grant(struct db *db, const char *pool, long long n, const char *note)
{
	if (ledger_grant_tx(db, pool, pool, n, note) != LEDGER_OK)
		svcadm_die("granting credits failed: %s", db_error(db));
}

/*
 * The start of a sub-command "NOUN VERB [ARG]... [--option ...]": argv[0]
 * is the verb; its options go into o[], its arguments into pos[] (at most
 * maxpos, at least minpos, else svcadm_usage()); then the database is opened.
 */
static struct db *
svcadm_subcommand(int argc, char **argv, struct opt *o, size_t n, char **pos,
    int minpos, int maxpos, int *np)
{
	if (argc < 1)
		svcadm_usage();
	*np = svcadm_parse_opts(argc - 1, argv + 1, o, n, pos, maxpos);
	if (*np < minpos)
		svcadm_usage();
	return svcadm_open_db(1);
}

/*
 * The end of "account create" and "org create": dies when the create
 * failed, else grants the --credits given (if any) and prints the new id.
 */
static void
svcadm_created(struct db *db, enum accounts_err rc, const struct buf *why,
    const char *id, const char *credits)
{
	if (rc != ACCOUNTS_OK)
		svcadm_die("%s", rc == ACCOUNTS_DB ? db_error(db) :
		    buf_str(why));
	if (credits)
		svcadm_grant(db, id, svcadm_number(credits, "--credits", 0,
		    1000000000000L), "initial credits");
	puts(id);
}

/* After a change to a key or an account: returns once no svc-api process
 * still trusts a row it cached before the change (authcache.h), so that
 * what this command reports is in force when it exits. */
static void
svcadm_settle(void)
{
	authcache_settle(conf_int(&conf, CONF_AUTH_CACHE_MS));
}

static int
svcadm_pool_exists(struct db *db, const char *id)
{
	long long v;
	int found = 0;

	if (db_query_int(db, "SELECT 1 FROM credit_pools WHERE owner_id = ?",
	    DB_ARGS(DBP_STR(id)), &v, &found) != DB_OK)
		svcadm_die("%s", db_error(db));
	return found;
}

static int
svcadm_cmd_db(int argc, char **argv)
{
	struct opt o[] = { { "sql-dir", 1, PKGDATADIR "/sql", 0 },
	    { "wait", 1, "60", 0 } };
	char *pos[1];
	struct buf err;
	struct db *db;
	long long v;

	if (argc < 1)
		svcadm_usage();
	if (strcmp(argv[0], "migrate") == 0) {
		svcadm_parse_opts(argc - 1, argv + 1, o, 2, pos, 0);
		db = svcadm_open_db(0);
		buf_init(&err, 1024);
		if (migrate_apply(db, o[0].val, svcadm_number(o[1].val,
		    "--wait", 0, 86400), &err) == -1)
			svcadm_die("migrate: %s", buf_str(&err));
		buf_reset(&err);
		if (keyfiles_ensure(&conf, &err) == -1)
			svcadm_die("%s", buf_str(&err));
		buf_reset(&err);
		if (complainersadm_hash_clear(db, &conf, stdout, &err) == -1)
			svcadm_die("%s", buf_str(&err));
		buf_free(&err);
	} else if (strcmp(argv[0], "version") == 0) {
		db = svcadm_open_db(0);
		if (migrate_version(db, &v) == -1)
			svcadm_die("%s", db_error(db));
		printf("%lld (this build needs %d)\n", v, DB_SCHEMA_VERSION);
	} else
		svcadm_usage();
	db_close(db);
	return 0;
}

/* Who runs svcadm, for the erase receipts: the Unix user (the one sudo
 * ran it for, if any). */
static const char *
svcadm_operator(void)
{
	const char *s = getenv("SUDO_USER");
	struct passwd *pw;

	if (s != NULL && *s)
		return s;
	pw = getpwuid(getuid());
	return pw != NULL ? pw->pw_name : "operator";
}

/* audit [--account ID] [--limit N]: the erase receipts, newest first. */
static int
svcadm_cmd_audit(int argc, char **argv)
{
	struct opt o[] = { { "account", 1, NULL, 0 }, { "limit", 1, NULL, 0 } };
	char *pos[1];
	struct buf err;
	struct db *db;
	int np;

	np = svcadm_parse_opts(argc, argv, o, 2, pos, 0);
	(void)np;
	db = svcadm_open_db(1);
	buf_init(&err, 256);
	if (retentionadm_audit(db, o[0].val, o[1].val ? svcadm_number(o[1].val,
	    "--limit", 1, 1000000) : 100, stdout, &err) == -1)
		svcadm_die("%s", buf_str(&err));
	buf_free(&err);
	db_close(db);
	return 0;
}

static int
svcadm_cmd_cache(int argc, char **argv)
{
	unsigned long long n;
	struct buf err;
	struct db *db;

	buf_init(&err, 1024);
	if (argc == 1 && strcmp(argv[0], "rotate-key") == 0) {
		db = svcadm_open_db(1);
		if (cacheadm_rotate(db, &conf, &n, &err) == -1)
			svcadm_die("cache rotate-key: %s", buf_str(&err));
		printf("new key in %s; %llu cached verdicts deleted\n",
		    conf_str(&conf, CONF_CACHE_HASH_KEY_FILE), n);
		db_close(db);
	} else if (argc >= 2 && strcmp(argv[0], "hash") == 0) {
		if (cacheadm_hash(&conf, argv + 1, (size_t)argc - 1, stdout,
		    &err) == -1)
			svcadm_die("cache hash: %s", buf_str(&err));
	} else
		svcadm_usage();
	buf_free(&err);
	return 0;
}

static int
svcadm_cmd_account(int argc, char **argv)
{
	struct opt o[] = { { "email", 1, NULL, 0 }, { "tier", 1, NULL, 0 },
	    { "credits", 1, NULL, 0 }, { "type", 1, NULL, 0 } };
	char *pos[3], id[IDS_MAX];
	enum auth_tier tier;
	struct buf why;
	struct db *db;
	enum accounts_err rc;
	int np;

	db = svcadm_subcommand(argc, argv, o, 4, pos, 0, 3, &np);
	buf_init(&why, 512);
	if (strcmp(argv[0], "create") == 0) {
		if (!o[0].val || !o[1].val)
			svcadm_usage();
		if (auth_tier_parse(o[1].val, &tier) == -1)
			svcadm_die("--tier %s: free, trial, pro or admin",
			    o[1].val);
		rc = accounts_create(db, o[0].val, tier, id, &why);
		svcadm_created(db, rc, &why, id, o[2].val);
	} else if (strcmp(argv[0], "tier") == 0 && np == 2) {
		if (auth_tier_parse(pos[1], &tier) == -1)
			svcadm_die("%s: free, trial, pro or admin", pos[1]);
		if ((rc = accounts_set_tier(db, pos[0], tier)) != ACCOUNTS_OK)
			svcadm_die("no account %s", pos[0]);
		svcadm_settle();
	} else if (strcmp(argv[0], "subscription") == 0 && np == 2) {
		int active;
		if (strcmp(pos[1], "active") == 0)
			active = 1;
		else if (strcmp(pos[1], "inactive") == 0)
			active = 0;
		else
			svcadm_usage();
		if (accounts_set_subscription(db, pos[0], active, o[3].val) !=
		    ACCOUNTS_OK)
			svcadm_die("no account %s", pos[0]);
		svcadm_settle();
	} else if (strcmp(argv[0], "retention") == 0 && np == 2) {
		long max = conf_int(&conf, CONF_RETENTION_DAYS_MAX);
		long days = strcmp(pos[1], "default") == 0 ? 0 :
		    svcadm_number(pos[1], "DAYS", 1, max);

		if (accounts_set_retention(db, pos[0], days) != ACCOUNTS_OK)
			svcadm_die("no account %s", pos[0]);
	} else if (strcmp(argv[0], "erase") == 0 && np == 1) {
		if (retentionadm_erase(db, pos[0], svcadm_operator(), stdout,
		    &why) == -1)
			svcadm_die("%s", buf_str(&why));
	} else if (strcmp(argv[0], "set-password") == 0 && np == 1) {
		if (webadm_set_password(db, pos[0], stdin, &why) == -1)
			svcadm_die("%s", buf_str(&why));
	} else if (strcmp(argv[0], "invite") == 0 && np == 1) {
		if (webadm_invite(db, &conf, pos[0], stdout, &why) == -1)
			svcadm_die("%s", buf_str(&why));
	} else
		svcadm_usage();
	buf_free(&why);
	db_close(db);
	return 0;
}

static int
svcadm_cmd_org(int argc, char **argv)
{
	struct opt o[] = { { "name", 1, NULL, 0 }, { "rate-limit", 1, NULL, 0 },
	    { "credits", 1, NULL, 0 } };
	char *pos[2], id[IDS_MAX];
	struct buf why;
	struct db *db;
	enum accounts_err rc;
	int np;

	db = svcadm_subcommand(argc, argv, o, 3, pos, 0, 2, &np);
	buf_init(&why, 512);
	if (strcmp(argv[0], "create") == 0) {
		if (!o[0].val)
			svcadm_usage();
		rc = accounts_org_create(db, o[0].val, o[1].val ?
		    svcadm_number(o[1].val, "--rate-limit", 1, 100000) : -1, id,
		    &why);
		svcadm_created(db, rc, &why, id, o[2].val);
	} else if (strcmp(argv[0], "add") == 0 && np == 2) {
		if ((rc = accounts_join_org(db, pos[1], pos[0])) != ACCOUNTS_OK)
			svcadm_die("%s", rc == ACCOUNTS_NOT_FOUND ?
			    "no such organization or account" : db_error(db));
		svcadm_settle();
	} else
		svcadm_usage();
	buf_free(&why);
	db_close(db);
	return 0;
}

static int
svcadm_cmd_credits(int argc, char **argv)
{
	struct opt o[] = { { "note", 1, "operator grant", 0 } };
	struct ledger_totals t;
	char *pos[2];
	struct db *db;
	int np, equal;

	db = svcadm_subcommand(argc, argv, o, 1, pos, 1, 2, &np);
	if (!svcadm_pool_exists(db, pos[0]))
		svcadm_die("no account or organization %s", pos[0]);
	if (strcmp(argv[0], "grant") == 0 && np == 2) {
		svcadm_grant(db, pos[0], svcadm_number(pos[1], "credits", 1,
		    1000000000000L), o[0].val);
		svcadm_settle();	/* cached balances (authcache.h) */
		if (ledger_totals(db, pos[0], &t) != LEDGER_OK)
			svcadm_die("%s", db_error(db));
		printf("%lld\n", t.balance);
	} else if (strcmp(argv[0], "show") == 0 && np == 1) {
		if (ledger_totals(db, pos[0], &t) != LEDGER_OK)
			svcadm_die("%s", db_error(db));
		printf("balance %lld\nused %lld\nrefunded %lld\ngranted %lld\n",
		    t.balance, t.used, t.refunded, t.granted);
	} else if (strcmp(argv[0], "check") == 0 && np == 1) {
		if (ledger_verify(db, pos[0], &equal) != LEDGER_OK)
			svcadm_die("%s", db_error(db));
		if (!equal)
			svcadm_die("%s: totals differ from the ledger", pos[0]);
		puts("ok");
	} else
		svcadm_usage();
	db_close(db);
	return 0;
}

static int
svcadm_print_key(void *arg, const struct keys_info *k)
{
	(void)arg;
	printf("%s\t%s\t%s\t%s\t%s\t%s\n", k->id, k->hint, k->scopes,
	    k->sandbox ? "sandbox" : "live", k->revoked_at ? "revoked" :
	    "active", k->name ? k->name : "");
	return 0;
}

static int
svcadm_cmd_key(int argc, char **argv)
{
	struct opt o[] = { { "account", 1, NULL, 0 }, { "scopes", 1, NULL, 0 },
	    { "name", 1, NULL, 0 }, { "sandbox", 0, NULL, 0 },
	    { "rate-limit", 1, NULL, 0 }, { "org", 1, NULL, 0 },
	    { "expires", 1, NULL, 0 }, { "ip-allow", 1, NULL, 0 } };
	char *pos[1], id[IDS_MAX], key[AUTH_KEY_MAX];
	struct keys_spec s;
	struct buf why, allow;
	struct db *db;
	enum keys_err rc;
	int i, np;

	buf_init(&allow, 4000);
	/* --ip-allow may repeat: collect every value before parsing. */
	for (i = 1; i < argc - 1; i++)
		if (strcmp(argv[i], "--ip-allow") == 0) {
			if (allow.len)
				buf_putc(&allow, ',');
			buf_puts(&allow, argv[i + 1]);
		}
	db = svcadm_subcommand(argc, argv, o, 8, pos, 0, 1, &np);
	buf_init(&why, 512);
	if (strcmp(argv[0], "create") == 0) {
		if (!o[0].val || !o[1].val)
			svcadm_usage();
		memset(&s, 0, sizeof(s));
		s.account_id = o[0].val;
		if (auth_scope_parse_list(o[1].val, &s.scopes) == -1)
			svcadm_die("--scopes %s: comma-separated scopes out of "
			    "verify:single, verify:bulk, jobs:read, jobs:write, "
			    "webhooks:manage, credits:read, feedback:write, *",
			    o[1].val);
		s.name = o[2].val;
		s.sandbox = o[3].seen > 0;
		s.rate_limit = o[4].val ? svcadm_number(o[4].val,
		    "--rate-limit", 1, KEYS_RATE_LIMIT_MAX) : -1;
		s.org_id = o[5].val;
		s.expires_at = o[6].val;
		s.ip_allowlist = buf_str(&allow);
		rc = keys_create(db, &s, id, key, &why);
		if (rc != KEYS_OK)
			svcadm_die("%s", rc == KEYS_DB ? db_error(db) :
			    buf_str(&why));
		puts(key);
		fprintf(stderr, "key id %s (the key is shown only once)\n", id);
	} else if (strcmp(argv[0], "list") == 0 && o[0].val) {
		if (keys_list(db, o[0].val, svcadm_print_key, NULL) != KEYS_OK)
			svcadm_die("%s", db_error(db));
	} else if (strcmp(argv[0], "set") == 0 && np == 1 && o[4].val) {
		/* The operator may set any limit, above the tier's too. */
		rc = keys_set_rate_limit(db, pos[0], strcmp(o[4].val, "none") ==
		    0 ? -1 : svcadm_number(o[4].val, "--rate-limit", 1,
		    KEYS_RATE_LIMIT_MAX));
		if (rc == KEYS_NOT_FOUND)
			svcadm_die("no key %s", pos[0]);
		if (rc != KEYS_OK)
			svcadm_die("%s", db_error(db));
		svcadm_settle();
	} else if (strcmp(argv[0], "revoke") == 0 && np == 1) {
		rc = keys_revoke(db, NULL, pos[0]);
		if (rc == KEYS_NOT_FOUND)
			svcadm_die("no active key %s (unknown, or revoked "
			    "already)", pos[0]);
		if (rc != KEYS_OK)
			svcadm_die("%s", db_error(db));
		svcadm_settle();
	} else
		svcadm_usage();
	buf_free(&why);
	buf_free(&allow);
	db_close(db);
	return 0;
}

static int
svcadm_cmd_complainers(int argc, char **argv)
{
	struct opt o[] = { { "source", 1, NULL, 0 } };
	struct complainers_counts c;
	char *pos[1];
	struct buf err;
	struct db *db;
	FILE *in;

	if (argc < 1 || strcmp(argv[0], "import") != 0 ||
	    svcadm_parse_opts(argc - 1, argv + 1, o, 1, pos, 1) != 1)
		svcadm_usage();
	if (strcmp(pos[0], "-") == 0)
		in = stdin;
	else if ((in = fopen(pos[0], "r")) == NULL)
		svcadm_die("%s: cannot open", pos[0]);
	db = svcadm_open_db(1);
	buf_init(&err, 256);
	if (complainersadm_import(db, &conf, in, o[0].val ? o[0].val : pos[0],
	    &c, &err) == -1)
		svcadm_die("%s", buf_str(&err));
	printf("added %lu\nexisting %lu\ninvalid %lu\n", c.added, c.existing,
	    c.invalid);
	if (in != stdin)
		fclose(in);
	buf_free(&err);
	db_close(db);
	return 0;
}

static int
svcadm_print_suppression(void *arg, const char *entry, const char *created)
{
	(void)arg;
	printf("%s\t%s\n", entry, created);
	return 0;
}

static int
svcadm_cmd_suppressions(int argc, char **argv)
{
	struct opt o[] = { { "account", 1, NULL, 0 } };
	struct suppressions_counts c;
	long long total = 0;
	char *pos[1];
	struct db *db;
	FILE *in;
	int np;

	db = svcadm_subcommand(argc, argv, o, 1, pos, 0, 1, &np);
	if (o[0].val == NULL)
		svcadm_usage();
	if (strcmp(argv[0], "list") == 0 && np == 0) {
		if (suppressions_list(db, o[0].val, NULL, 1, INT32_MAX, &total,
		    svcadm_print_suppression, NULL) != SUPPRESSIONS_OK)
			svcadm_die("%s", db_error(db));
	} else if (strcmp(argv[0], "import") == 0 && np == 1) {
		if (strcmp(pos[0], "-") == 0)
			in = stdin;
		else if ((in = fopen(pos[0], "r")) == NULL)
			svcadm_die("%s: cannot open", pos[0]);
		if (suppressions_import(db, o[0].val, in, &c) !=
		    SUPPRESSIONS_OK)
			svcadm_die("%s", db_error(db));
		printf("added %lu\nexisting %lu\ninvalid %lu\n", c.added,
		    c.existing, c.invalid);
		if (in != stdin)
			fclose(in);
	} else
		svcadm_usage();
	db_close(db);
	return 0;
}

static int
svcadm_cmd_feedback(int argc, char **argv)
{
	struct opt o[] = { { "suppress-hard-bounces", 1, NULL, 0 },
	    { "mailgun-signing-key", 1, NULL, 0 },
	    { "postmark-auth", 1, NULL, 0 }, { "account", 1, NULL, 0 },
	    { "sendgrid-public-key", 1, NULL, 0 },
	    { "ses-topic-arns", 1, NULL, 0 } };
	char *pos[1];
	struct buf err;
	struct db *db;
	FILE *in = stdin;
	int np, suppress = -1;

	db = svcadm_subcommand(argc, argv, o, 6, pos, 1, 1, &np);
	buf_init(&err, 1024);
	if (strcmp(argv[0], "import") == 0) {
		if (o[3].val == NULL)
			svcadm_die("feedback import: --account ACCOUNT is needed");
		if (strcmp(pos[0], "-") != 0 && (in = fopen(pos[0], "re")) ==
		    NULL)
			svcadm_die("%s: %s", pos[0], strerror(errno));
		if (feedbackadm_import(db, &conf, o[3].val, in, stdout, &err) ==
		    -1)
			svcadm_die("feedback import: %s", buf_str(&err));
		if (in != stdin)
			fclose(in);
		buf_free(&err);
		db_close(db);
		return 0;
	}
	if (strcmp(argv[0], "set") != 0)
		svcadm_usage();
	if (o[0].val != NULL && strparse_bool(o[0].val, &suppress) == -1)
		svcadm_die("--suppress-hard-bounces: on or off");
	if (feedbackadm_set(db, pos[0], suppress, o[1].val, o[2].val,
	    o[4].val, o[5].val, &err) == -1)
		svcadm_die("%s", buf_str(&err));
	buf_free(&err);
	db_close(db);
	return 0;
}

static int
svcadm_cmd_report(int argc, char **argv)
{
	struct opt o[] = { { "account", 1, NULL, 0 }, { "since", 1, NULL, 0 },
	    { "until", 1, NULL, 0 }, { "json", 0, NULL, 0 } };
	char *pos[1];
	struct buf err;
	struct db *db;
	int np;

	db = svcadm_subcommand(argc, argv, o, 4, pos, 0, 0, &np);
	if (strcmp(argv[0], "accuracy") != 0)
		svcadm_usage();
	buf_init(&err, 1024);
	if (feedbackadm_report(db, &conf, o[0].val, o[1].val, o[2].val,
	    o[3].seen > 0, stdout, &err) == -1)
		svcadm_die("%s", buf_str(&err));
	buf_free(&err);
	db_close(db);
	return 0;
}

static int
svcadm_cmd_calibration(int argc, char **argv)
{
	struct buf err;
	struct db *db;
	int np, rc = 0;

	db = svcadm_subcommand(argc, argv, NULL, 0, NULL, 0, 0, &np);
	buf_init(&err, 1024);
	if (strcmp(argv[0], "update") == 0)
		rc = calibrationadm_update(db, &conf, stdout, &err);
	else if (strcmp(argv[0], "show") == 0)
		rc = calibrationadm_show(db, stdout, &err);
	else
		svcadm_usage();
	if (rc == -1)
		svcadm_die("calibration %s: %s", argv[0], buf_str(&err));
	buf_free(&err);
	db_close(db);
	return 0;
}

static int
svcadm_cmd_lists(int argc, char **argv)
{
	const char *dir = conf_str(&conf, CONF_LISTS_DIR);
	struct lists_rules_source rules = {
		conf_str(&conf, CONF_LISTS_RULES_URL),
		conf_str(&conf, CONF_CA_FILE), lists_rules_get,
	};
	enum lists_update_err rc;
	struct buf err;

	if (argc != 1)
		svcadm_usage();
	buf_init(&err, 1024);
	if (strcmp(argv[0], "update") == 0)
		rc = lists_update_run(dir, lists_update_script(), &rules,
		    stdout, &err);
	else if (strcmp(argv[0], "check") == 0)
		rc = lists_update_check(dir, stdout, &err);
	else
		svcadm_usage();
	if (rc != LISTS_UPDATE_OK)
		svcadm_die("lists %s: %s", argv[0], buf_str(&err));
	buf_free(&err);
	return 0;
}

/* Sets a setting from a command-line option, with the file's checks. */
static void
svcadm_override(const char *setting, const char *value)
{
	struct buf err;

	buf_init(&err, 512);
	if (conf_set(&conf, setting, value, &err) == -1)
		svcadm_die("%s", buf_str(&err));
	buf_free(&err);
}

/* "status": 0 healthy, 1 unhealthy or the database out of reach (for
 * monitoring, what cannot be told is not healthy). */
static int
svcadm_cmd_status(int argc, char **argv)
{
	struct opt o[] = { { "json", 0, NULL, 0 },
	    { "min-workers", 1, NULL, 0 }, { "worker-window", 1, NULL, 0 },
	    { "max-job-age", 1, NULL, 0 }, { "max-queue", 1, NULL, 0 },
	    { "max-outbox-age", 1, NULL, 0 } };
	static const char *const settings[] = { NULL, "status_min_workers",
	    "status_worker_window", "status_max_job_age", "status_max_queue",
	    "status_max_outbox_age" };
	char *pos[1];
	struct buf err;
	struct db *db = NULL;
	size_t k;
	int rc, json;

	svcadm_parse_opts(argc, argv, o, 6, pos, 0);
	for (k = 1; k < 6; k++)
		if (o[k].val != NULL)
			svcadm_override(settings[k], o[k].val);
	json = o[0].seen > 0;
	buf_init(&err, 1024);
	if (db_open(&conf, 0, &db, &err) == DB_OK)
		rc = status_run(db, &conf, json, stdout, &err);
	else
		rc = -1;
	if (rc == -1) {
		status_print_failure(buf_str(&err), json, stdout);
		fprintf(stderr, "svcadm: status: %s\n", buf_str(&err));
		rc = 1;
	}
	buf_free(&err);
	db_close(db);
	return rc;
}

/* "mx show HOST": the host's learned profile and its pacing pairs; 1 when
 * nothing is known of it. */
static int
svcadm_cmd_mx(int argc, char **argv)
{
	const struct pacing_default *pd;
	struct pacing_defaults defs;
	struct mxprofile prof;
	struct db_res *r = NULL;
	struct buf err, out;
	struct db *db = NULL;
	int found = 0;

	if (argc != 2 || strcmp(argv[0], "show") != 0)
		svcadm_usage();
	buf_init(&err, 1024);
	if (db_open(&conf, 1, &db, &err) != DB_OK)
		svcadm_die("%s", buf_str(&err));
	if (mxprofile_get(db, argv[1], &prof, &found) != DB_OK)
		svcadm_die("mx show: %s", db_error(db));
	buf_init(&out, 64 * 1024);
	if (found)
		mxprofile_print(&prof, &out);
	else
		buf_printf(&out, "host %s: nothing learned yet\n", prof.host);
	/* its pair: the shipped default's pattern that matches it, or the
	 * host itself */
	memset(&defs, 0, sizeof(defs));
	(void)pacing_defaults_load(&defs, conf_str(&conf, CONF_LISTS_DIR),
	    NULL);
	pd = pacing_defaults_match(&defs, prof.provider, prof.host);
	if (pd != NULL)
		buf_printf(&out, "%-18s %s (starts at %ld/min, penalty %ld s)\n",
		    "pacing_default", pd->pattern, pd->start_rate, pd->penalty_s);
	if (db_query(db, "SELECT pair, egress, base_rate, "
	    "COALESCE(learned_rate, 0), strikes, "
	    "COALESCE(CAST(paused_until AS CHAR), '-'), "
	    "COALESCE(CAST(penalty_until AS CHAR), '-'), COALESCE(reason, '') "
	    "FROM pacing_pairs WHERE pair IN (?, ?) ORDER BY pair, egress",
	    DB_ARGS(DBP_STR(prof.host), DBP_STR(pd ? pd->pattern : prof.host)),
	    &r) != DB_OK)
		svcadm_die("mx show: %s", db_error(db));
	while (db_res_next(r) == 1) {
		found = 1;
		buf_printf(&out, "pacing %s from %s: base_rate %lld/min, "
		    "learned_rate %lld/min, strikes %lld, penalty_until %s, "
		    "paused_until %s, reason %s\n", db_res_str(r, 0),
		    db_res_str(r, 1), db_res_int(r, 2), db_res_int(r, 3),
		    db_res_int(r, 4), db_res_str(r, 6), db_res_str(r, 5),
		    db_res_str(r, 7)[0] ? db_res_str(r, 7) : "-");
	}
	db_res_free(r);
	fputs(buf_str(&out), stdout);
	pacing_defaults_free(&defs);
	buf_free(&out);
	buf_free(&err);
	db_close(db);
	return found ? 0 : 1;
}

/* "doctor": 0 when every check passed or was skipped, 1 otherwise. */
static int
svcadm_cmd_doctor(int argc, char **argv)
{
	struct opt o[] = { { "json", 0, NULL, 0 }, { "skip", 1, NULL, 0 },
	    { "address", 1, NULL, 0 } };
	char *pos[1];
	struct buf err, dberr;
	struct db *db = NULL;
	int rc;

	svcadm_parse_opts(argc, argv, o, 3, pos, 0);
	buf_init(&err, 1024);
	buf_init(&dberr, 1024);
	/* port25_seen reads the database; the other checks do without */
	if (db_open(&conf, 0, &db, &dberr) != DB_OK)
		db = NULL;
	if ((rc = doctor_run(&conf, db, buf_str(&dberr), o[1].val, o[2].val,
	    o[0].seen > 0, stdout, &err)) == -1)
		svcadm_die("doctor: %s", buf_str(&err));
	db_close(db);
	buf_free(&dberr);
	buf_free(&err);
	return rc;
}

int
main(int argc, char **argv)
{
	const char *path = NULL;
	struct buf err;
	int i = 1;

	if (argc > 2 && strcmp(argv[1], "-c") == 0) {
		path = argv[2];
		i = 3;
	}
	if (i >= argc)
		svcadm_usage();
	buf_init(&err, 1024);
	if (startup(&conf, path, NULL, &err) == -1)
		svcadm_die("%s", buf_str(&err));
	buf_free(&err);
	argc -= i + 1;
	if (strcmp(argv[i], "db") == 0)
		return svcadm_cmd_db(argc, argv + i + 1);
	if (strcmp(argv[i], "account") == 0)
		return svcadm_cmd_account(argc, argv + i + 1);
	if (strcmp(argv[i], "audit") == 0)
		return svcadm_cmd_audit(argc, argv + i + 1);
	if (strcmp(argv[i], "org") == 0)
		return svcadm_cmd_org(argc, argv + i + 1);
	if (strcmp(argv[i], "credits") == 0)
		return svcadm_cmd_credits(argc, argv + i + 1);
	if (strcmp(argv[i], "key") == 0)
		return svcadm_cmd_key(argc, argv + i + 1);
	if (strcmp(argv[i], "lists") == 0)
		return svcadm_cmd_lists(argc, argv + i + 1);
	if (strcmp(argv[i], "complainers") == 0)
		return svcadm_cmd_complainers(argc, argv + i + 1);
	if (strcmp(argv[i], "suppressions") == 0)
		return svcadm_cmd_suppressions(argc, argv + i + 1);
	if (strcmp(argv[i], "cache") == 0)
		return svcadm_cmd_cache(argc, argv + i + 1);
	if (strcmp(argv[i], "feedback") == 0)
		return svcadm_cmd_feedback(argc, argv + i + 1);
	if (strcmp(argv[i], "report") == 0)
		return svcadm_cmd_report(argc, argv + i + 1);
	if (strcmp(argv[i], "calibration") == 0)
		return svcadm_cmd_calibration(argc, argv + i + 1);
	if (strcmp(argv[i], "mx") == 0)
		return svcadm_cmd_mx(argc, argv + i + 1);
	if (strcmp(argv[i], "doctor") == 0)
		return svcadm_cmd_doctor(argc, argv + i + 1);
	if (strcmp(argv[i], "status") == 0)
		return svcadm_cmd_status(argc, argv + i + 1);
	if (strcmp(argv[i], "config") == 0) {
		conf_dump(&conf, stdout);
		return 0;
	}
	svcadm_usage();
	return 2;
}
