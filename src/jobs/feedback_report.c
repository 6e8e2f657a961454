/* feedback_report.c: the accuracy report (feedback_report.h): results of
 * the window and the account's outcomes are read, the results' addresses
 * hashed with the feedback key, and each result matched to the latest
 * outcome of its address at or after its verification (sorted arrays and
 * binary search: no address leaves this process). */
#include "jobs/feedback_report.h"
#include "util/strparse.h"
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

enum db_err
feedback_report_build(struct db *db, const struct addrhash_key *key,
    const char *account, time_t since, time_t until,
    struct feedback_report *rep)
{
	struct feedback_report_out *outs = NULL;
	struct feedback_report_seen *seen = NULL, *sg, *last;
	struct feedback_provider_tally *pt;
	struct addr a;
	const struct db_param p[] = { DBP_INT(since), DBP_INT(until),
	    DBP_STR(account ? account : "") };
	struct db_res *r = NULL;
	size_t nout = 0, nseen = 0, cap = 0, i, j;
	const char *cls, *prov;
	enum db_err e;
	int row, k, outcome, same;

	memset(rep, 0, sizeof(*rep));
	rep->since = since;
	rep->until = until;
	if ((e = feedback_report_outcomes(db, account, &outs, &nout)) != DB_OK)
		return e;
	e = db_query(db, account ? "SELECT j.account_id, e.email, "
	    "e.classification, e.provider, UNIX_TIMESTAMP(e.verified_at) "
	    "FROM job_emails e JOIN jobs j ON j.id = e.job_id WHERE "
	    "e.state = 'done' AND e.classification IS NOT NULL AND "
	    "e.verified_at >= FROM_UNIXTIME(?) AND e.verified_at < "
	    "FROM_UNIXTIME(?) AND j.account_id = ?" : "SELECT j.account_id, "
	    "e.email, e.classification, e.provider, "
	    "UNIX_TIMESTAMP(e.verified_at) FROM job_emails e JOIN jobs j ON "
	    "j.id = e.job_id WHERE e.state = 'done' AND e.classification IS "
	    "NOT NULL AND e.verified_at >= FROM_UNIXTIME(?) AND "
	    "e.verified_at < FROM_UNIXTIME(?)",
	    p, account ? 3 : 2, &r);
	if (e != DB_OK)
		goto out;
	while ((row = db_res_next(r)) == 1) {
		cls = db_res_str(r, 2);
		for (k = 0; k < VERDICT_CLASS__MAX; k++)
			if (strcmp(cls, verdict_class_names[k]) == 0)
				break;
		if (k == VERDICT_CLASS__MAX)
			continue;
		if (nseen == cap) {
			cap = cap ? cap * 2 : 256;
			if ((sg = realloc(seen, cap * sizeof(*seen))) == NULL) {
				row = -1;
				break;
			}
			seen = sg;
		}
		sg = &seen[nseen];
		strparse_copy(sg->account, sizeof(sg->account),
		    db_res_str(r, 0));
		sg->cls = k;
		if (addr_parse(db_res_str(r, 1), &a) == ADDR_OK)
			addrhash_hex(key, a.normalised, strlen(a.normalised),
			    sg->hash);
		else
			sg->hash[0] = '\0';
		outcome = sg->hash[0] ? feedback_report_match(outs, nout,
		    sg->account, sg->hash, db_res_int(r, 4)) : -1;
		feedback_report_add(&rep->all, outcome);
		feedback_report_add(&rep->by_class[k], outcome);
		prov = db_res_str(r, 3);
		if ((pt = feedback_report_prov(rep, prov && *prov ? prov :
		    "none")) == NULL) {
			row = -1;
			break;
		}
		feedback_report_add(&pt->t, outcome);
		sg->outcome = outcome;
		sg->at = db_res_int(r, 4);
		sg->prov = (size_t)(pt - rep->prov);
		if (sg->hash[0])
			nseen++;
	}
	if (row == -1) {
		e = DB_ERR_QUERY;
		goto out;
	}
	if (nseen > 1)
		qsort(seen, nseen, sizeof(*seen), feedback_report_seen_cmp);
	for (i = 0; i < nseen; i = j) {
		same = 1;
		last = seen[i].outcome >= 0 ? &seen[i] : NULL;
		for (j = i + 1; j < nseen && feedback_report_seen_cmp(&seen[i],
		    &seen[j]) == 0; j++) {
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
		if (last != NULL)
			feedback_report_add(&rep->prov[last->prov].by_class[
			    last->cls], last->outcome);
	}
	if (rep->nprov > 1)
		qsort(rep->prov, rep->nprov, sizeof(*rep->prov),
		    feedback_report_prov_cmp);
	e = DB_OK;
out:
	if (r != NULL)
		db_res_free(r);
	free(outs);
	free(seen);
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
	r->prov = NULL;
	r->nprov = 0;
}
