/* verify_batch.c: a domain's worth of addresses through the engine
 * (verify_batch.h): the items' first steps and their lookups in a few
 * statements, the domain's MX answer through the DNS cache, its facts
 * (catch-all, web presence: domain_facts, a day), SMTP sessions with the
 * catch-all probe, the probe's answer by one rule, and conclusions. */
#include "engine/verify_batch.h"
#include "engine/complainers.h"
#include "engine/pacing.h"
#include "engine/vcache.h"
#include "core/dbsql.h"
#include "util/strparse.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* MX answers are cached for their TTL within these bounds. */
#define VERIFY_BATCH_DNS_TTL_MIN 60
#define VERIFY_BATCH_DNS_TTL_MAX 86400
#define VERIFY_BATCH_FACTS_SECONDS 86400

/* ---------------------------------------------------------------- items */

enum verify_step
verify_batch_item_begin(struct verify_engine *e, const char *email,
    struct verify_item *it)
{
	it->account = NULL;
	return verify_begin(e, email, &it->r, &it->a);
}

/* A verdict cache hit for item it: its result, still on the account's
 * complainer list if it was. */
static void
verify_batch_cached(struct verify_engine *e, struct db *db,
    struct verify_item *it, json_t *hit)
{
	int listed = it->r.account_complainer;

	if (verify_from_cache(&it->r, &it->a, hit) == -1)
		return;
	it->r.account_complainer = listed;
	verify_account_complainer(e, db, &it->r, &it->a);
}

void
verify_batch_lookup(struct verify_engine *e, struct db *db,
    const char *account, struct verify_item *const *v, size_t n)
{
	const char **keys;
	unsigned char *found;
	json_t **hits;
	size_t i, k;
	int listed = 0;

	for (i = 0; i < n; i++)
		v[i]->account = account;
	if (db == NULL || n == 0)
		return;
	keys = calloc(n + 1, sizeof(*keys));
	hits = calloc(n + 1, sizeof(*hits));
	found = calloc(n + 1, 1);
	if (keys == NULL || hits == NULL || found == NULL)
		goto out;
	/* The account's own complainer list for every item, cached or not.
	 * A cached verdict is the mail host's answer, shared by every
	 * account; the list turns an acceptance in it into the complainer
	 * verdict (verify_account_complainer) as a fresh verification would
	 * conclude: simpler than verifying the address again, with no SMTP
	 * session spent, and just as right. When the list cannot be read,
	 * the cache is not read either (a hit could not be turned): the
	 * verdicts are made afresh and ask the list as they conclude. */
	for (i = 0; i < n; i++)
		keys[i] = v[i]->a.normalised;
	if (complainers_account_contains_many(db,
	    verify_engine_complainers_key(e), account, keys, n, found) ==
	    DB_OK) {
		listed = 1;
		for (i = 0; i < n; i++)
			v[i]->r.account_complainer = found[i];
	}
	/* The verdict cache by the addresses' keyed hashes (none when the
	 * cache is off). */
	for (i = k = 0; listed && i < n; i++)
		if (v[i]->r.cache_key[0] != '\0')
			keys[k++] = v[i]->r.cache_key;
	if (k > 0 && vcache_get_many(db, VCACHE_VERDICT, keys, k, hits) ==
	    DB_OK)
		for (i = k = 0; i < n; i++)
			if (v[i]->r.cache_key[0] != '\0' && hits[k++] != NULL)
				verify_batch_cached(e, db, v[i], hits[k - 1]);
	for (i = k = 0; i < n; i++)
		if (!v[i]->r.cached)
			keys[k++] = v[i]->a.normalised;
	if (k > 0 && complainers_contains_many(db,
	    verify_engine_complainers_key(e), keys, k, found) == DB_OK)
		for (i = k = 0; i < n; i++)
			if (!v[i]->r.cached)
				v[i]->r.complainer = found[k++];
out:
	for (i = 0; hits != NULL && i < n; i++)
		json_decref(hits[i]);
	free(keys);
	free(hits);
	free(found);
}

const char *
verify_batch_provider_of(struct verify_engine *e, struct verify_batch *b)
{
	char id[PROVIDERS_NAME_MAX];

	if (!b->provider_known && b->resolved) {
		verify_engine_provider(e, &b->mx, id);
		verify_batch_provider(e, b, id);
		b->provider_known = 1;
	}
	return b->provider;
}

enum verify_step
verify_batch_item_with_mx(struct verify_engine *e, struct verify_batch *b,
    struct verify_item *it)
{
	enum verify_step st = verify_with_mx(e, &it->r, &it->a, &b->mx);

	if (it->r.nmx > 0)
		strparse_copy(it->r.provider, sizeof(it->r.provider),
		    verify_batch_provider_of(e, b));
	return st;
}

enum verify_err
verify_batch_item_conclude(struct verify_engine *e, struct db *db,
    struct verify_batch *b, struct verify_item *it,
    const struct smtp_session *s, size_t rcpt)
{
	const char *provider;
	enum verify_err rc;

	/* One web presence lookup per batch (catch-all verdicts). */
	it->r.web_presence = b->web_presence;
	/* (the provider first: it sets what verify_batch_accept_all reads) */
	provider = verify_batch_provider_of(e, b);
	rc = verify_conclude(e, db, it->account, &it->r, &it->a, provider,
	    s ? smtp_session_info(s) : NULL, s ? smtp_session_rcpt(s, rcpt) :
	    NULL, verify_batch_accept_all(b));
	if (it->r.web_presence >= 0)
		b->web_presence = it->r.web_presence;
	return rc;
}

enum verify_err
verify_batch_item_conclude_info(struct verify_engine *e, struct db *db,
    struct verify_batch *b, struct verify_item *it,
    const struct smtp_session_info *si)
{
	const char *provider = verify_batch_provider_of(e, b);

	it->r.web_presence = b->web_presence;
	return verify_conclude(e, db, it->account, &it->r, &it->a, provider,
	    si, NULL, verify_batch_accept_all(b));
}

enum verify_err
verify_batch_item_conclude_paused(struct verify_engine *e, struct db *db,
    struct verify_batch *b, struct verify_item *it)
{
	struct smtp_session_info si;
	char text[PACING_REASON_MAX + 20];

	memset(&si, 0, sizeof(si));
	si.outcome = SMTP_OUTCOME_BLOCKED;
	si.host = b->mx.nhosts > 0 ? b->mx.hosts[0].name : "";
	si.route = "";
	snprintf(text, sizeof(text), "paused by pacing: %s", b->paced_why[0] ?
	    b->paced_why : "every route paused");
	si.text = text;
	si.error = "paused by pacing";
	return verify_batch_item_conclude_info(e, db, b, it, &si);
}

/* ---------------------------------------------------------------- MX */

static json_t *
verify_batch_mx_to_json(const struct dns_mx_result *m)
{
	json_t *hosts = json_array(), *addrs;
	size_t i, j;

	for (i = 0; i < m->nhosts; i++) {
		addrs = json_array();
		for (j = 0; j < m->hosts[i].addrs.n; j++)
			json_array_append_new(addrs,
			    json_string(m->hosts[i].addrs.addr[j].text));
		json_array_append_new(hosts, json_pack("{s:s,s:i,s:o}",
		    "name", m->hosts[i].name, "pref",
		    (int)m->hosts[i].preference, "addrs", addrs));
	}
	return json_pack("{s:i,s:b,s:b,s:o}", "status", (int)m->status,
	    "implicit", m->implicit, "null_mx", m->null_mx, "hosts", hosts);
}

static int
verify_batch_mx_from_json(json_t *j, struct dns_mx_result *m)
{
	json_t *hosts = json_object_get(j, "hosts"), *h, *a;
	size_t i, k;

	memset(m, 0, sizeof(*m));
	if (!json_is_array(hosts) || json_array_size(hosts) > DNS_MAX_MX)
		return -1;
	m->status = (enum dns_status)json_integer_value(json_object_get(j,
	    "status"));
	if (m->status >= DNS__MAX)
		return -1;
	m->implicit = json_is_true(json_object_get(j, "implicit"));
	m->null_mx = json_is_true(json_object_get(j, "null_mx"));
	if (json_array_size(hosts) == 0)
		return 0;
	if ((m->hosts = calloc(json_array_size(hosts), sizeof(*m->hosts))) ==
	    NULL)
		return -1;
	json_array_foreach(hosts, i, h) {
		struct dns_mx_host *mh = &m->hosts[i];
		const char *name = json_string_value(json_object_get(h, "name"));
		json_t *addrs = json_object_get(h, "addrs");
		if (name == NULL || strlen(name) > DNS_NAME_MAX ||
		    !json_is_array(addrs))
			return -1;
		strparse_copy(mh->name, sizeof(mh->name), name);
		mh->preference = (unsigned)json_integer_value(json_object_get(h,
		    "pref"));
		mh->addrs.status = DNS_OK;
		json_array_foreach(addrs, k, a) {
			const char *t = json_string_value(a);
			if (k >= DNS_MAX_ADDRS || t == NULL ||
			    ipnet_parse_addr(t, &mh->addrs.addr[k].ip) == -1)
				return -1;
			strparse_copy(mh->addrs.addr[k].text, DNS_ADDR_TEXT, t);
			mh->addrs.n++;
		}
		if (mh->addrs.n == 0)
			mh->addrs.status = DNS_NO_ADDR;
		m->nhosts++;
	}
	return 0;
}

/* The domains' facts (domain_facts): what their catch-all probes and web
 * presence lookups found, kept for a day; for the batches whose MX answer
 * is usable, in a few statements. */
static void
verify_batch_facts(struct db *db, struct verify_batch *const *b, size_t n)
{
	struct vcache_facts f[DBSQL_IN_MAX];
	const char *key[DBSQL_IN_MAX];
	struct verify_batch *w[DBSQL_IN_MAX];
	size_t i = 0, k, j;

	while (db != NULL && i < n) {
		for (k = 0; i < n && k < DBSQL_IN_MAX; i++)
			if (b[i]->resolved && b[i]->mx.status == DNS_OK) {
				w[k] = b[i];
				key[k++] = b[i]->domain;
			}
		if (k == 0 || vcache_facts_get_many(db, key, k, f) != DB_OK)
			continue;
		for (j = 0; j < k; j++) {
			w[j]->web_presence = f[j].web_presence;
			if (f[j].accept_all >= 0 &&
			    w[j]->probe != VERIFY_PROBE_RUNNING) {
				w[j]->probe = VERIFY_PROBE_KNOWN;
				w[j]->accept_all = f[j].accept_all;
			}
		}
	}
}

void
verify_batch_mx_cached_many(struct db *db, struct verify_batch *const *b,
    size_t n)
{
	json_t *hit[DBSQL_IN_MAX];
	const char *key[DBSQL_IN_MAX];
	size_t i, k, j;

	for (i = 0; i < n; i++) {
		memset(&b[i]->mx, 0, sizeof(b[i]->mx));
		b[i]->provider_known = 0;
	}
	for (i = 0; db != NULL && i < n; i += k) {
		k = n - i < DBSQL_IN_MAX ? n - i : DBSQL_IN_MAX;
		for (j = 0; j < k; j++)
			key[j] = b[i + j]->domain;
		if (vcache_get_many(db, VCACHE_DNS, key, k, hit) != DB_OK)
			continue;
		for (j = 0; j < k; j++) {
			struct verify_batch *d = b[i + j];

			if (hit[j] == NULL)
				continue;
			if (verify_batch_mx_from_json(hit[j], &d->mx) == 0)
				d->resolved = 1;
			else {
				dns_mx_result_free(&d->mx);
				memset(&d->mx, 0, sizeof(d->mx));
			}
			json_decref(hit[j]);
		}
		verify_batch_facts(db, b + i, k);
	}
}

int
verify_batch_mx_cached(struct db *db, struct verify_batch *b)
{
	verify_batch_mx_cached_many(db, &b, 1);
	return b->resolved;
}

/* Failures and incomplete answers (a host not looked up: failed, or cut
 * off by the deadline) are never cached. */
void
verify_batch_mx_answer_many(struct db *db, struct verify_batch *const *b,
    struct dns_mx_result *m, size_t n)
{
	struct vcache_entry put[DBSQL_IN_MAX];
	const struct dns_mx_result *a;
	size_t i, k, j, np;
	json_t *js;

	for (i = 0; i < n; i++) {
		b[i]->mx = m[i];
		memset(&m[i], 0, sizeof(m[i]));
		b[i]->resolved = 1;
		b[i]->provider_known = 0;
	}
	for (i = 0; db != NULL && i < n; i += k) {
		k = n - i < DBSQL_IN_MAX ? n - i : DBSQL_IN_MAX;
		for (j = np = 0; j < k; j++) {
			a = &b[i + j]->mx;
			if (a->status == DNS_ERROR || a->incomplete)
				continue;
			js = verify_batch_mx_to_json(a);
			put[np].key = strdup(b[i + j]->domain);
			put[np].value = js ? json_dumps(js, JSON_COMPACT) : NULL;
			put[np++].seconds = a->ttl < VERIFY_BATCH_DNS_TTL_MIN ?
			    VERIFY_BATCH_DNS_TTL_MIN : a->ttl >
			    VERIFY_BATCH_DNS_TTL_MAX ?
			    VERIFY_BATCH_DNS_TTL_MAX : (long)a->ttl;
			json_decref(js);
		}
		/* (an entry without memory for its key or value is skipped) */
		vcache_put_many(db, VCACHE_DNS, put, np);
		vcache_entries_clear(put, np);
		verify_batch_facts(db, b + i, k);
	}
}

void
verify_batch_mx_answer(struct db *db, struct verify_batch *b,
    struct dns_mx_result *m)
{
	verify_batch_mx_answer_many(db, &b, m, 1);
}

void
verify_batch_init(struct verify_batch *b, const char *domain)
{
	memset(b, 0, sizeof(*b));
	strparse_copy(b->domain, sizeof(b->domain), domain);
	b->web_presence = -1;
}

void
verify_batch_free(struct verify_batch *b)
{
	if (b->resolved)
		dns_mx_result_free(&b->mx);
	b->resolved = 0;
}

/* ---------------------------------------------------------------- SMTP */

/* The recipients of a transaction for n items, then the catch-all probe
 * while the domain's answer is not known and no probe is out (*probe set;
 * probe_addr holds it). NULL when out of memory. */
static const char **
verify_batch_rcpts(struct verify_batch *b, struct verify_item *const *v,
    size_t n, char *probe_addr, size_t size, size_t *k, int *probe)
{
	char local[32];
	const char **rcpts;
	size_t i;

	*probe = 0;
	*k = 0;
	if ((rcpts = calloc(n + 2, sizeof(*rcpts))) == NULL)
		return NULL;
	/* The A-label form, SMTPUTF8 or not (struct addr's smtp_path). */
	for (i = 0; i < n; i++)
		rcpts[(*k)++] = v[i]->a.smtp_path;
	if (b->probe == VERIFY_PROBE_UNKNOWN &&
	    smtp_random_local(local, sizeof(local)) == 0) {
		snprintf(probe_addr, size, "%s@%s", local, b->domain);
		rcpts[(*k)++] = probe_addr;
		*probe = 1;
	}
	return rcpts;
}

/* The session reads its replies by the rules of the batch's provider
 * (the first MX host's, as the results' provider field). */
static struct smtp_session *
verify_batch_session_provider(struct verify_engine *e, struct verify_batch *b,
    struct smtp_session *s)
{
	if (s != NULL)
		smtp_session_set_provider(s, verify_batch_provider_of(e, b));
	return s;
}

struct smtp_session *
verify_batch_session(struct verify_engine *e, struct db *db,
    struct verify_batch *b, struct verify_item *const *v, size_t n,
    int64_t deadline_ms, int *probe)
{
	char probe_addr[ADDR_ASCII_DOMAIN_MAX + 40];
	const struct smtp_opts *opts = verify_batch_opts(e, b);
	struct smtp_session *s;
	const char **rcpts;
	size_t k, route = 0;

	b->paced_out = 0;
	if ((rcpts = verify_batch_rcpts(b, v, n, probe_addr,
	    sizeof(probe_addr), &k, probe)) == NULL)
		return NULL;
	/* the route: under the worker's pacing pairs for the first MX host */
	if (k > 0 && b->mx.status == DNS_OK && b->mx.nhosts > 0 &&
	    verify_engine_route(e, db, b->mx.hosts[0].name, (long)k, &route,
	    b->paced_why, sizeof(b->paced_why)) == 0) {
		b->paced_out = 1;
		*probe = 0;
		free(rcpts);
		return NULL;
	}
	if (deadline_ms > 0) {
		/* One session at a time has a deadline of its own (verify.c);
		 * the worker's sessions share the engine's options. */
		b->opts = *opts;
		b->opts.deadline_ms = (int)deadline_ms;
		opts = &b->opts;
	}
	s = k > 0 ? verify_batch_session_provider(e, b,
	    smtp_session_new_mx_route(opts, &b->mx, rcpts, k, route)) : NULL;
	free(rcpts);
	if (s == NULL)
		*probe = 0;
	else if (*probe)
		b->probe = VERIFY_PROBE_RUNNING;
	return s;
}

struct smtp_session *
verify_batch_open(struct verify_engine *e, struct verify_batch *b,
    size_t route)
{
	return verify_batch_session_provider(e, b,
	    smtp_session_open_mx_route(verify_batch_opts(e, b), &b->mx,
	    route));
}

const struct smtp_opts *
verify_batch_opts(const struct verify_engine *e, const struct verify_batch *b)
{
	return verify_engine_smtp_host(e, b->resolved && b->mx.status ==
	    DNS_OK && b->mx.nhosts > 0 ? b->mx.hosts[0].name : NULL);
}

int
verify_batch_next(struct verify_engine *e, struct verify_batch *b,
    struct smtp_session *s, struct verify_item *const *v, size_t n, int last,
    int64_t now_ms, int *probe)
{
	char probe_addr[ADDR_ASCII_DOMAIN_MAX + 40];
	const char **rcpts;
	size_t k;
	int rc;

	if ((rcpts = verify_batch_rcpts(b, v, n, probe_addr,
	    sizeof(probe_addr), &k, probe)) == NULL)
		return -1;
	rc = k > 0 ? smtp_session_next(s, rcpts, k, last, now_ms) : -1;
	if (rc == 0)	/* its replies come in later steps */
		(void)verify_batch_session_provider(e, b, s);
	free(rcpts);
	if (rc == -1)
		*probe = 0;
	else if (*probe)
		b->probe = VERIFY_PROBE_RUNNING;
	return rc;
}

int
verify_batch_probe_done(struct db *db, struct verify_batch *b,
    const struct smtp_session *s)
{
	size_t n = smtp_session_nrcpt(s);
	const struct smtp_rcpt_result *rr = n ? smtp_session_rcpt(s, n - 1) :
	    NULL;
	struct vcache_facts f;

	/* no answer, a 4xx, or a block (a 5.7.x naming us says nothing of
	 * the address): asked again in the next session */
	if (rr == NULL || (rr->code / 100 != 2 && rr->code / 100 != 5) ||
	    pacing_is_block(rr->code, rr->verdict)) {
		b->probe = VERIFY_PROBE_UNKNOWN;
		return 0;
	}
	b->probe = VERIFY_PROBE_KNOWN;
	b->accept_all = rr->code / 100 == 2;
	if (db != NULL) {
		/* The web presence the facts had when the batch read them (or
		 * found since): no round trip to read them again. */
		f.web_presence = b->web_presence;
		f.accept_all = b->accept_all;
		vcache_facts_put(db, b->domain, &f, VERIFY_BATCH_FACTS_SECONDS);
	}
	return b->accept_all;
}

int
verify_batch_accept_all(const struct verify_batch *b)
{
	if (b->probe == VERIFY_PROBE_KNOWN)
		return b->accept_all;
	return b->provider_accept_all;
}

void
verify_batch_provider(struct verify_engine *e, struct verify_batch *b,
    const char *provider)
{
	strparse_copy(b->provider, sizeof(b->provider), provider ? provider :
	    "");
	b->provider_accept_all = smtp_rules_accept_all(
	    verify_engine_smtp(e)->rules, b->provider);
}
