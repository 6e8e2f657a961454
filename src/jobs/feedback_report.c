/* feedback_report.c: the accuracy report (feedback_report.h): results of
 * the window and the account's outcomes are read, the results' addresses
 * hashed with the feedback key (the single verifications' are kept
 * hashed), and each result matched to the latest outcome of its address
 * at or after its verification (sorted arrays and
 * binary search: no address leaves this process). */
#include "jobs/feedback_report.h"
#include "util/strparse.h"
#include "util/strset.h"
#include "util/timeutil.h"
#include <stdlib.h>
#include <string.h>

struct feedback_report_out {	/* one stored outcome */
	char		 account[41];
	char		 hash[ADDRHASH_HEX_LEN + 1];
	long long	 at;
	int		 outcome;
};

struct feedback_report_seen {	/* one result row, for stability and
				 * the calibration's counts */
	char		 account[41];
	char		 hash[ADDRHASH_HEX_LEN + 1];
	int		 cls;
	int		 outcome;	/* -1: none */
	long long	 at;		/* verified_at */
	size_t		 prov;		/* index in the report's prov */
	long		 host;		/* index in the report's hosts, -1 */
};

static int
feedback_report_key_cmp(const char *a1, const char *h1, const char *a2,
    const char *h2)
{
	int c = strcmp(a1, a2);

	return c ? c : strcmp(h1, h2);
}

static int
feedback_report_out_cmp(const void *x, const void *y)
{
	const struct feedback_report_out *a = x, *b = y;
	int c = feedback_report_key_cmp(a->account, a->hash, b->account,
	    b->hash);

	if (c)
		return c;
	return a->at < b->at ? -1 : a->at > b->at;
}

static int
feedback_report_seen_cmp(const void *x, const void *y)
{
	const struct feedback_report_seen *a = x, *b = y;

	return feedback_report_key_cmp(a->account, a->hash, b->account,
	    b->hash);
}

static int
feedback_report_prov_cmp(const void *x, const void *y)
{
	const struct feedback_provider_tally *a = x, *b = y;

	return strcmp(a->provider, b->provider);
}

/* The latest outcome of (account, hash) at or after at, or -1. */
static int
feedback_report_match(const struct feedback_report_out *o, size_t n,
    const char *account, const char *hash, long long at)
{
	size_t lo = 0, hi = n, mid;
	int c;

	/* the first element after every one of this key */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = feedback_report_key_cmp(o[mid].account, o[mid].hash,
		    account, hash);
		if (c <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -1;
	lo--;
	if (feedback_report_key_cmp(o[lo].account, o[lo].hash, account,
	    hash) != 0 || o[lo].at < at)
		return -1;
	return o[lo].outcome;
}

static void
feedback_report_add(struct feedback_tally *t, int outcome)
{
	t->verified++;
	if (outcome < 0)
		t->no_outcome++;
	else
		t->outcome[outcome]++;
}

static struct feedback_provider_tally *
feedback_report_prov(struct feedback_report *r, const char *name)
{
	struct feedback_provider_tally *p;
	size_t i;

	for (i = 0; i < r->nprov; i++)
		if (strcmp(r->prov[i].provider, name) == 0)
			return &r->prov[i];
	if ((p = realloc(r->prov, (r->nprov + 1) * sizeof(*p))) == NULL)
		return NULL;
	r->prov = p;
	memset(&p[r->nprov], 0, sizeof(*p));
	strparse_copy(p[r->nprov].provider, sizeof(p[r->nprov].provider),
	    name);
	return &p[r->nprov++];
}

static enum db_err
feedback_report_outcomes(struct db *db, const char *account,
    struct feedback_report_out **out, size_t *n)
{
	struct feedback_report_out *o = NULL, *g;
	const struct db_param p[] = { DBP_STR(account ? account : "") };
	size_t cap = 0;
	struct db_res *r;
	const char *s;
	enum db_err e;
	int row, k;

	*n = 0;
	if ((e = db_query(db, account ? "SELECT account_id, addr_hash, "
	    "outcome, UNIX_TIMESTAMP(occurred_at) FROM feedback_outcomes "
	    "WHERE account_id = ?" : "SELECT account_id, addr_hash, outcome, "
	    "UNIX_TIMESTAMP(occurred_at) FROM feedback_outcomes",
	    p, account ? 1 : 0, &r)) != DB_OK)
		return e;
	while ((row = db_res_next(r)) == 1) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 256;
			if ((g = realloc(o, cap * sizeof(*o))) == NULL) {
				row = -1;
				break;
			}
			o = g;
		}
		g = &o[*n];
		strparse_copy(g->account, sizeof(g->account), db_res_str(r, 0));
		strparse_copy(g->hash, sizeof(g->hash), db_res_str(r, 1));
		g->at = db_res_int(r, 3);
		s = db_res_str(r, 2);
		g->outcome = -1;
		for (k = 0; k < FEEDBACK_OUTCOME__MAX; k++)
			if (s != NULL && strcmp(s, feedback_outcome_names[k]) == 0)
				g->outcome = k;
		if (g->outcome >= 0)
			(*n)++;
	}
	db_res_free(r);
	if (row == -1) {
		free(o);
		*n = 0;
		return DB_ERR_QUERY;
	}
	if (*n > 1)
		qsort(o, *n, sizeof(*o), feedback_report_out_cmp);
	*out = o;
	return DB_OK;
}

/* What building a report keeps besides the report. */
struct feedback_report_build {
	struct feedback_report		*rep;
	struct feedback_report_out	*outs;
	size_t				 nout;
	struct feedback_report_seen	*seen;
	size_t				 nseen, cap;
	struct strset			*hostset;	/* ids: rep->hosts */
};

static int
feedback_report_host_same(void *arg, uint32_t id, const char *s, size_t n)
{
	const struct feedback_report *rep = arg;

	return strlen(rep->hosts[id].host) == n &&
	    memcmp(rep->hosts[id].host, s, n) == 0;
}

/* The index of host's tally (added when new), or -1 out of memory. */
static long
feedback_report_host(struct feedback_report_build *b, const char *host,
    const char *provider)
{
	struct feedback_report *rep = b->rep;
	struct feedback_host_tally *h;
	size_t n = strlen(host);
	uint32_t hash = strset_hash(host, n), id;

	if (strset_find(b->hostset, hash, host, n, feedback_report_host_same,
	    rep, &id))
		return (long)id;
	if ((h = realloc(rep->hosts, (rep->nhosts + 1) * sizeof(*h))) == NULL)
		return -1;
	rep->hosts = h;
	h = &rep->hosts[rep->nhosts];
	memset(h, 0, sizeof(*h));
	strparse_copy(h->host, sizeof(h->host), host);
	strparse_copy(h->provider, sizeof(h->provider), provider);
	if (strset_insert(b->hostset, hash, (uint32_t)rep->nhosts) == -1)
		return -1;
	return (long)rep->nhosts++;
}

/* One result: counted, and kept for stability and the calibration. 0, or
 * -1 out of memory. */
static int
feedback_report_result(struct feedback_report_build *b, const char *account,
    const char *hash, const char *cls, const char *prov, const char *host,
    long long at)
{
	struct feedback_report *rep = b->rep;
	struct feedback_provider_tally *pt;
	struct feedback_report_seen *sg;
	int k, outcome;
	long hi = -1;

	for (k = 0; k < VERDICT_CLASS__MAX; k++)
		if (cls != NULL && strcmp(cls, verdict_class_names[k]) == 0)
			break;
	if (k == VERDICT_CLASS__MAX)
		return 0;
	if (b->nseen == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 256;
		if ((sg = realloc(b->seen, b->cap * sizeof(*sg))) == NULL)
			return -1;
		b->seen = sg;
	}
	outcome = hash[0] ? feedback_report_match(b->outs, b->nout, account,
	    hash, at) : -1;
	feedback_report_add(&rep->all, outcome);
	feedback_report_add(&rep->by_class[k], outcome);
	if ((pt = feedback_report_prov(rep, prov && *prov ? prov : "none")) ==
	    NULL)
		return -1;
	feedback_report_add(&pt->t, outcome);
	if (prov && *prov && host && *host && (hi = feedback_report_host(b,
	    host, prov)) == -1)
		return -1;
	if (!hash[0])
		return 0;
	sg = &b->seen[b->nseen++];
	strparse_copy(sg->account, sizeof(sg->account), account);
	strparse_copy(sg->hash, sizeof(sg->hash), hash);
	sg->cls = k;
	sg->outcome = outcome;
	sg->at = at;
	sg->prov = (size_t)(pt - rep->prov);
	sg->host = hi;
	return 0;
}

/* The bulk results of the window: their addresses hashed here. */
static enum db_err
feedback_report_jobs(struct db *db, const struct addrhash_key *key,
    const char *account, struct feedback_report_build *b)
{
	const struct db_param p[] = { DBP_INT(b->rep->since),
	    DBP_INT(b->rep->until), DBP_STR(account ? account : "") };
	char hash[ADDRHASH_HEX_LEN + 1];
	struct db_res *r;
	struct addr a;
	enum db_err e;
	int row;

	if ((e = db_query(db, account ? "SELECT j.account_id, e.email, "
	    "e.classification, e.provider, UNIX_TIMESTAMP(e.verified_at), "
	    "e.mx_host FROM job_emails e JOIN jobs j ON j.id = e.job_id WHERE "
	    "e.state = 'done' AND e.classification IS NOT NULL AND "
	    "e.verified_at >= FROM_UNIXTIME(?) AND e.verified_at < "
	    "FROM_UNIXTIME(?) AND j.account_id = ?" : "SELECT j.account_id, "
	    "e.email, e.classification, e.provider, "
	    "UNIX_TIMESTAMP(e.verified_at), e.mx_host FROM job_emails e JOIN "
	    "jobs j ON j.id = e.job_id WHERE e.state = 'done' AND "
	    "e.classification IS NOT NULL AND e.verified_at >= "
	    "FROM_UNIXTIME(?) AND e.verified_at < FROM_UNIXTIME(?)",
	    p, account ? 3 : 2, &r)) != DB_OK)
		return e;
	while ((row = db_res_next(r)) == 1) {
		hash[0] = '\0';
		if (db_res_str(r, 1) != NULL && addr_parse(db_res_str(r, 1),
		    &a) == ADDR_OK)
			addrhash_hex(key, a.normalised, strlen(a.normalised),
			    hash);
		if (feedback_report_result(b, db_res_str(r, 0), hash,
		    db_res_str(r, 2), db_res_str(r, 3), db_res_str(r, 5),
		    db_res_int(r, 4)) == -1) {
			row = -1;
			break;
		}
	}
	db_res_free(r);
	return row == -1 ? DB_ERR_QUERY : DB_OK;
}

/* The single verifications of the window (kept as hashes already). */
static enum db_err
feedback_report_singles(struct db *db, const char *account,
    struct feedback_report_build *b)
{
	const struct db_param p[] = { DBP_INT(b->rep->since),
	    DBP_INT(b->rep->until), DBP_STR(account ? account : "") };
	struct db_res *r;
	enum db_err e;
	const char *h;
	int row;

	if ((e = db_query(db, account ? "SELECT account_id, addr_hash, "
	    "classification, provider, UNIX_TIMESTAMP(verified_at), mx_host "
	    "FROM single_results WHERE verified_at >= FROM_UNIXTIME(?) AND "
	    "verified_at < FROM_UNIXTIME(?) AND account_id = ?" : "SELECT "
	    "account_id, addr_hash, classification, provider, "
	    "UNIX_TIMESTAMP(verified_at), mx_host FROM single_results WHERE "
	    "verified_at >= FROM_UNIXTIME(?) AND verified_at < "
	    "FROM_UNIXTIME(?)", p, account ? 3 : 2, &r)) != DB_OK)
		return e;
	while ((row = db_res_next(r)) == 1) {
		if ((h = db_res_str(r, 1)) == NULL ||
		    strlen(h) != ADDRHASH_HEX_LEN)
			continue;
		b->rep->singles++;
		if (feedback_report_result(b, db_res_str(r, 0), h,
		    db_res_str(r, 2), db_res_str(r, 3), db_res_str(r, 5),
		    db_res_int(r, 4)) == -1) {
			row = -1;
			break;
		}
	}
	db_res_free(r);
	return row == -1 ? DB_ERR_QUERY : DB_OK;
}

/* Stability, and the calibration's counts: each address once. */
static void
feedback_report_addresses(struct feedback_report_build *b)
{
	struct feedback_report *rep = b->rep;
	struct feedback_report_seen *seen = b->seen, *last;
	size_t i, j;
	int same;

	if (b->nseen > 1)
		qsort(seen, b->nseen, sizeof(*seen), feedback_report_seen_cmp);
	for (i = 0; i < b->nseen; i = j) {
		same = 1;
		last = seen[i].outcome >= 0 ? &seen[i] : NULL;
		for (j = i + 1; j < b->nseen && feedback_report_seen_cmp(
		    &seen[i], &seen[j]) == 0; j++) {
			if (seen[j].cls != seen[i].cls)
				same = 0;
			if (seen[j].outcome >= 0 && (last == NULL ||
			    seen[j].at > last->at))
				last = &seen[j];
		}
		if (j - i > 1) {
			rep->repeated++;
			rep->repeated_same += same;
		}
		/* the address once: its latest result that has an outcome */
		if (last == NULL)
			continue;
		feedback_report_add(&rep->prov[last->prov].by_class[last->cls],
		    last->outcome);
		if (last->host >= 0)
			feedback_report_add(&rep->hosts[last->host].by_class[
			    last->cls], last->outcome);
	}
}

enum db_err
feedback_report_build(struct db *db, const struct addrhash_key *key,
    const char *account, time_t since, time_t until,
    struct feedback_report *rep)
{
	struct feedback_report_build b;
	enum db_err e;

	memset(rep, 0, sizeof(*rep));
	memset(&b, 0, sizeof(b));
	rep->since = since;
	rep->until = until;
	b.rep = rep;
	if ((b.hostset = strset_new(64)) == NULL)
		return DB_ERR_QUERY;
	if ((e = feedback_report_outcomes(db, account, &b.outs, &b.nout)) !=
	    DB_OK || (e = feedback_report_jobs(db, key, account, &b)) != DB_OK ||
	    (e = feedback_report_singles(db, account, &b)) != DB_OK)
		goto out;
	feedback_report_addresses(&b);
	if (rep->nprov > 1)
		qsort(rep->prov, rep->nprov, sizeof(*rep->prov),
		    feedback_report_prov_cmp);
	e = DB_OK;
out:
	strset_free(b.hostset);
	free(b.outs);
	free(b.seen);
	if (e != DB_OK)
		feedback_report_free(rep);
	return e;
}

static json_t *
feedback_report_tally_json(const struct feedback_tally *t)
{
	json_t *o = json_pack("{s:I,s:I}", "verified", (json_int_t)t->verified,
	    "no_outcome", (json_int_t)t->no_outcome);
	int k;

	for (k = 0; k < FEEDBACK_OUTCOME__MAX; k++)
		json_object_set_new(o, feedback_outcome_names[k],
		    json_integer(t->outcome[k]));
	return o;
}

json_t *
feedback_report_json(const struct feedback_report *r)
{
	char since[TIMEUTIL_ISO_LEN], until[TIMEUTIL_ISO_LEN];
	json_t *cls = json_object(), *prov = json_object();
	size_t i;
	int k;

	timeutil_iso8601(r->since, since);
	timeutil_iso8601(r->until, until);
	for (k = 0; k < VERDICT_CLASS__MAX; k++)
		json_object_set_new(cls, verdict_class_names[k],
		    feedback_report_tally_json(&r->by_class[k]));
	for (i = 0; i < r->nprov; i++)
		json_object_set_new(prov, r->prov[i].provider,
		    feedback_report_tally_json(&r->prov[i].t));
	return json_pack("{s:s,s:s,s:o,s:o,s:o,s:f,s:{s:I,s:I,s:f}}",
	    "since", since, "until", until,
	    "total", feedback_report_tally_json(&r->all),
	    "by_classification", cls, "by_provider", prov,
	    "unknown_share", r->all.verified ?
	    (double)r->by_class[VERDICT_C_UNKNOWN].verified /
	    (double)r->all.verified : 0.0,
	    "stability", "addresses_verified_twice", (json_int_t)r->repeated,
	    "same_classification", (json_int_t)r->repeated_same,
	    "share_same", r->repeated ? (double)r->repeated_same /
	    (double)r->repeated : 0.0);
}

void
feedback_report_free(struct feedback_report *r)
{
	free(r->prov);
	free(r->hosts);
	r->prov = NULL;
	r->hosts = NULL;
	r->nprov = r->nhosts = 0;
}
