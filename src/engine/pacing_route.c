/* pacing_route.c: the egress route of a session opened outside svc-worker's
 * loop (POST /v1/verify, the domain check, the preview's SMTP sample),
 * under the same pacing pairs as the worker's (pacing.h): the host's pairs
 * are read from MariaDB, a route whose pair is paused or in a penalty is
 * not used, and a paced pair's RCPTs are taken from the same budget
 * (rate_counts), so that they count in the pair's window on every host.
 * What such a session hears ("slow down", a block) goes to the same pairs
 * and to the host's profile. */
#include "engine/pacing_route.h"
#include "engine/mxprofile.h"
#include "engine/pacing_signal.h"
#include "util/log.h"
#include <stdio.h>
#include <string.h>

struct pacing_route_rows {
	const char		*names[EGRESS_ROUTES_MAX];
	size_t			 n;
	struct pacing_pair	 pair[EGRESS_ROUTES_MAX];
	int			 found[EGRESS_ROUTES_MAX];
};

static void
pacing_route_row(void *arg, const struct pacing_pair *row)
{
	struct pacing_route_rows *rr = arg;
	size_t i;

	for (i = 0; i < rr->n; i++)
		if (strncmp(rr->names[i], row->egress, PACING_EGRESS_MAX - 1) ==
		    0 && !rr->found[i]) {
			rr->pair[i] = *row;
			rr->found[i] = 1;
		}
}

/* The pairs of the host's key (the default matching provider/host, the
 * provider, or the host), one per route of e, as stored (found) or not. */
static int
pacing_route_read(struct db *db, const struct pacing_defaults *defs,
    const char *provider, const char *host, const struct egress *e,
    int64_t now, struct pacing_route_rows *rr,
    const struct pacing_default **d, const char **key)
{
	size_t i;

	memset(rr, 0, sizeof(*rr));
	rr->n = e != NULL && e->n > 0 ? e->n : 1;
	for (i = 0; i < rr->n; i++)
		rr->names[i] = e != NULL && e->n > 0 ? e->r[i].name :
		    PACING_EGRESS_DIRECT;
	*d = pacing_defaults_match(defs, provider, host);
	*key = *d ? (*d)->pattern : provider && provider[0] ? provider : host;
	if (pacing_db_read(db, *key, now, pacing_route_row, rr) != DB_OK) {
		log_error("event=pacing_read pair=%s error=\"%s\"", *key,
		    db_error(db));
		return -1;
	}
	return 0;
}

int
pacing_route_pick(struct db *db, const struct pacing_conf *c,
    const struct pacing_defaults *defs, const char *provider,
    const char *host, const struct egress *e, uint32_t routes,
    size_t start, long want,
    int64_t now, size_t *route, char *why, size_t whysz)
{
	struct pacing_route_rows rr;
	const struct pacing_default *d;
	struct pacing_pair *pp;
	const char *key;
	long limit, granted;
	size_t i, r;

	*route = start;
	if (why != NULL && whysz > 0)
		why[0] = '\0';
	if (db == NULL || host == NULL || host[0] == '\0')
		return 1;
	if (pacing_route_read(db, defs, provider, host, e, now, &rr, &d,
	    &key) == -1)
		return -1;
	for (i = 0; i < rr.n; i++) {
		r = (start + i) % rr.n;
		if (!egress_in(routes, r))
			continue;	/* the provider is pinned to others */
		pp = &rr.pair[r];
		if (!rr.found[r])
			pacing_pair_init(pp, c, key, rr.names[r], d, now);
		if (!pacing_may_send(pp, now)) {
			if (why != NULL && why[0] == '\0')
				snprintf(why, whysz, "%s", pp->reason[0] ?
				    pp->reason : "paused by pacing");
			continue;
		}
		if (!pp->paced) {
			*route = r;
			return 1;
		}
		if (!rr.found[r] && pacing_db_store(db, pp, 1, now) != DB_OK)
			log_error("event=pacing_store pair=%s error=\"%s\"", key,
			    db_error(db));
		limit = pacing_window_limit(pp, c, now);
		granted = 0;
		if (pacing_db_take(db, pp, limit, want, c->window_ms,
		    &granted) != DB_OK) {
			log_error("event=pacing_take pair=%s error=\"%s\"", key,
			    db_error(db));
			return -1;
		}
		if (granted >= want) {
			*route = r;
			return 1;
		}
		if (why != NULL && why[0] == '\0')
			snprintf(why, whysz, "the rate budget of %s from %s is "
			    "spent", key, rr.names[r]);
	}
	log_info("event=pacing_not_contacted pair=%s host=%s why=\"%s\"", key,
	    host, why != NULL ? why : "");
	return 0;
}

int
pacing_route_learn(struct db *db, const struct pacing_conf *c,
    const struct pacing_defaults *defs, const char *provider,
    const char *host, const struct egress *e, size_t route,
    const struct smtp_rules *rules, const struct smtp_session *s,
    int64_t now)
{
	struct pacing_route_rows rr;
	const struct pacing_default *d;
	struct pacing_pair *pp;
	struct mxprofile n;
	const char *key;
	char why[PACING_REASON_MAX];
	int block;

	if (db == NULL || host == NULL || host[0] == '\0' ||
	    pacing_signal(rules, s, smtp_session_nrcpt(s), &block, why,
	    sizeof(why)) == NULL)
		return 0;
	if (pacing_route_read(db, defs, provider, host, e, now, &rr, &d,
	    &key) == -1)
		return -1;
	route %= rr.n;
	pp = &rr.pair[route];
	if (!rr.found[route])
		pacing_pair_init(pp, c, key, rr.names[route], d, now);
	if (block)
		pacing_block(pp, c, why, now);
	else if (pacing_slow_down_unmeasured(pp, c, why, now))
		block = 1;
	if (pacing_db_store(db, pp, 0, now) != DB_OK) {
		log_error("event=pacing_store pair=%s error=\"%s\"", key,
		    db_error(db));
		return -1;
	}
	log_info("event=%s pair=%s egress=%s host=%s rate=%ld learned=%ld "
	    "strikes=%d penalty_ms=%ld reply=\"%s\" seen_by=session",
	    block ? "pacing_pause" : "pacing_slow_down", key, pp->egress,
	    host, pacing_rate(pp, c, now), pp->learned_rate, pp->strikes,
	    block ? c->pause_ms : pp->penalty_ms, why);
	mxprofile_init(&n, host);
	if (block)
		snprintf(n.last_block, sizeof(n.last_block), "%s", why);
	else if (pp->learned_rate > 0)
		n.rate_421 = (int)pp->learned_rate;
	else
		return 1;
	if (mxprofile_note(db, &n) != DB_OK) {
		log_error("event=mx_profile_note host=%s error=\"%s\"", host,
		    db_error(db));
		return -1;
	}
	return 1;
}
