/* verify.c: the verification engine. One address goes through, in the
 * precedence order of API.md: syntax, sandbox, cache, DNS (NXDOMAIN, no MX,
 * DNS failure), disposable list, SMTP (one session: RCPT for the address and
 * for a random address of the domain, to detect catch-all; a greylisted
 * answer is retried after greylist_retry_ms while the time budget lasts),
 * then mailbox verdict > spam trap > known complainer > catch-all > role.
 * DNS and SMTP trouble become "unknown" verdicts, never "undeliverable". */
#include "engine/verify.h"
#include "engine/egress_pins.h"
#include "engine/egress_refresh.h"
#include "engine/egress_resolve.h"
#include "engine/pacing_route.h"
#include "engine/verify_batch.h"
#include "engine/addr.h"
#include "engine/cachekey.h"
#include "engine/calibration_db.h"
#include "engine/verify_cache.h"
#include "engine/verify_json.h"
#include "engine/complainers.h"
#include "engine/providers.h"
#include "engine/smtp.h"
#include "engine/smtp_rules.h"
#include "engine/vcache.h"
#include "util/log.h"
#include "util/timeutil.h"
#include "util/strparse.h"
#include <ctype.h>
#include <stdio.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What is known of a domain (domain_facts) is kept this long. */
#define VERIFY_FACTS_SECONDS 86400
/* An SMTP session is not started with less of the budget left. */
#define VERIFY_SMTP_MIN_MS 200

struct verify_engine {
	const struct conf	*conf;
	struct dns_resolver	*dns;
	struct lists		*lists;
	struct providers	*providers;	/* mx_providers.txt */
	struct smtp_rules	*rules;		/* smtp_reply_rules.txt */
	struct smtp_tls		*tls;
	struct smtp_opts	 smtp;
	struct egress		*egress;
	struct egress_refresh	*refresh;	/* verify_engine_refresh_routes */
	struct egress_pins	 pins;		/* smtp_provider_routes_file */
	struct smtp_opts	*pin_opts;	/* a session's, per pin */
	struct pacing_conf	 pconf;		/* pacing_* */
	struct pacing_defaults	 pdefaults;	/* pacing_defaults.txt */
	char			 sandbox[300];
	struct cachekey		 ck;		/* the verdict cache's key */
	struct addrhash_key	 lk;		/* the complainer list's */
	int			 have_lk;
	struct calibration_table cal;		/* calibration_db_load */
	time_t			 cal_at;	/* when it was read */
	int			 cal_read;	/* read (or tried) once */
};

struct verify_engine *
verify_engine_new(const struct conf *c, struct buf *err)
{
	struct verify_engine *e;
	struct buf warn;

	if ((e = calloc(1, sizeof(*e))) == NULL) {
		buf_puts(err, "out of memory");
		return NULL;
	}
	e->conf = c;
	cachekey_init(&e->ck, c);
	e->have_lk = addrhash_key_from_conf(c, CONF_FEEDBACK_HASH_KEY,
	    &e->lk) == 0;
	if (!e->have_lk)
		log_warn("event=complainers_key_missing known_complainers=off");
	buf_init(&warn, 64 * 1024);
	if ((e->dns = dns_resolver_new(c, err)) == NULL ||
	    lists_load(conf_str(c, CONF_LISTS_DIR), &e->lists, &warn) !=
	    LISTS_OK || (e->tls = smtp_io_tls_new(conf_str(c, CONF_CA_FILE),
	    err)) == NULL || (e->egress = egress_from_conf(c, err)) == NULL) {
		if (e->dns != NULL && e->lists == NULL)
			buf_printf(err, "lists: %s", buf_str(&warn));
		buf_free(&warn);
		verify_engine_free(e);
		return NULL;
	}
	if (warn.len)
		log_warn("event=lists_warning dir=%s text=\"%.200s\"",
		    conf_str(c, CONF_LISTS_DIR), buf_str(&warn));
	buf_reset(&warn);
	if (providers_load(conf_str(c, CONF_LISTS_DIR), &e->providers,
	    &warn) != PROVIDERS_OK) {
		buf_printf(err, "%s: %s", PROVIDERS_FILE, buf_str(&warn));
		buf_free(&warn);
		verify_engine_free(e);
		return NULL;
	}
	if (warn.len)
		log_warn("event=providers_warning dir=%s patterns=%zu "
		    "text=\"%.300s\"", conf_str(c, CONF_LISTS_DIR),
		    providers_count(e->providers), buf_str(&warn));
	buf_reset(&warn);
	if (smtp_rules_load(conf_str(c, CONF_LISTS_DIR), &e->rules, &warn) !=
	    SMTP_RULES_OK) {
		buf_printf(err, "%s: %s", SMTP_RULES_FILE, buf_str(&warn));
		buf_free(&warn);
		verify_engine_free(e);
		return NULL;
	}
	if (warn.len)
		log_warn("event=smtp_rules_warning dir=%s rules=%zu "
		    "text=\"%.300s\"", conf_str(c, CONF_LISTS_DIR),
		    e->rules->n, buf_str(&warn));
	buf_reset(&warn);
	/* sessions opened here (single verification, domain check, preview
	 * sample) are paced under the worker's pairs (pacing_route.h) */
	pacing_conf_read(&e->pconf, c);
	if (pacing_defaults_load(&e->pdefaults, conf_str(c, CONF_LISTS_DIR),
	    &warn) == -1)
		log_error("event=pacing_defaults error=\"%.300s\"",
		    buf_str(&warn));
	buf_free(&warn);
	smtp_opts_from_conf(&e->smtp, c);
	e->smtp.tls = e->tls;
	e->smtp.rules = e->rules;
	e->smtp.egress = e->egress;
	e->smtp.dns = e->dns;	/* proxies' host names (egress_resolve.h) */
	/* smtp_provider_routes_file: the pins and their sessions' options */
	if (egress_pins_load(conf_str(c, CONF_SMTP_PROVIDER_ROUTES_FILE),
	    e->egress, &e->pins, err) == -1 || (e->pins.n > 0 &&
	    (e->pin_opts = egress_pins_opts(&e->pins, &e->smtp)) == NULL)) {
		buf_puts(err, e->pins.n > 0 ? "out of memory" : "");
		verify_engine_free(e);
		return NULL;
	}
	snprintf(e->sandbox, sizeof(e->sandbox), "sandbox.%s",
	    conf_str(c, CONF_SERVICE_DOMAIN));
	return e;
}

void
verify_engine_free(struct verify_engine *e)
{
	if (e == NULL)
		return;
	egress_refresh_stop(e->refresh);	/* before the egress it reads */
	dns_resolver_free(e->dns);
	lists_free(e->lists);
	providers_free(e->providers);
	smtp_rules_free(e->rules);
	smtp_io_tls_free(e->tls);
	free(e->egress);
	free(e->pin_opts);
	egress_pins_free(&e->pins);
	pacing_defaults_free(&e->pdefaults);
	calibration_table_free(&e->cal);
	free(e);
}

int
verify_engine_refresh_routes(struct verify_engine *e, struct buf *err)
{
	size_t i;

	if (e->refresh != NULL || !egress_resolve_needed(e->egress))
		return 0;
	if ((e->refresh = egress_refresh_start(e->egress, e->conf, err)) ==
	    NULL)
		return -1;
	/* sessions no longer look names up (egress_resolve.h) */
	e->smtp.dns = NULL;
	for (i = 0; i < e->pins.n; i++)
		e->pin_opts[i].dns = NULL;
	return 0;
}

int
verify_engine_route(struct verify_engine *e, struct db *db,
    const char *mx_host, long want, size_t *route, char *why, size_t whysz)
{
	char provider[PROVIDERS_NAME_MAX];
	uint32_t routes = verify_engine_smtp_host(e, mx_host)->routes;

	verify_engine_host_provider(e, mx_host, provider);
	return pacing_route_pick(db, &e->pconf, &e->pdefaults, provider,
	    mx_host, e->egress, routes, egress_pick_in(e->egress, routes),
	    want, timeutil_mono_ms(), route, why, whysz);
}

void
verify_engine_learn(struct verify_engine *e, struct db *db,
    const struct verify_batch *b, const struct smtp_session *s)
{
	char provider[PROVIDERS_NAME_MAX];
	const char *host;

	if (b->mx.status != DNS_OK || b->mx.nhosts == 0)
		return;
	host = b->mx.hosts[0].name;
	verify_engine_host_provider(e, host, provider);
	pacing_route_learn(db, &e->pconf, &e->pdefaults, provider, host,
	    e->egress, smtp_session_info(s)->route_index,
	    verify_engine_smtp(e)->rules, s, timeutil_mono_ms());
}

const struct smtp_opts *
verify_engine_smtp_host(const struct verify_engine *e, const char *mx_host)
{
	char provider[PROVIDERS_NAME_MAX];
	const struct egress_pin *pin;

	if (e->pins.n == 0 || mx_host == NULL ||
	    providers_of_mx(e->providers, mx_host, provider) == -1 ||
	    (pin = egress_pins_find(&e->pins, provider)) == NULL)
		return &e->smtp;
	return &e->pin_opts[pin - e->pins.v];
}

const char *
verify_sandbox_domain(const struct verify_engine *e)
{
	return e->sandbox;
}

const struct smtp_opts *
verify_engine_smtp(const struct verify_engine *e)
{
	return &e->smtp;
}

void
verify_engine_lookup_mx(struct verify_engine *e, const char *domain,
    struct dns_mx_result *m)
{
	dns_lookup_mx(e->dns, domain, m);
}

const struct addrhash_key *
verify_engine_complainers_key(const struct verify_engine *e)
{
	return e->have_lk ? &e->lk : NULL;
}

void
verify_engine_provider(const struct verify_engine *e,
    const struct dns_mx_result *m, char out[PROVIDERS_NAME_MAX])
{
	out[0] = '\0';
	if (m->status == DNS_OK && m->nhosts > 0)
		(void)providers_of_mx(e->providers, m->hosts[0].name, out);
}

void
verify_engine_host_provider(const struct verify_engine *e, const char *host,
    char out[PROVIDERS_NAME_MAX])
{
	const char *id = providers_lookup(e->providers, host);

	snprintf(out, PROVIDERS_NAME_MAX, "%s", id != NULL ? id : "");
}

void
verify_engine_deadline(struct verify_engine *e, int64_t deadline)
{
	dns_resolver_set_deadline(e->dns, deadline);
}

/* ---------------------------------------------------------------- DNS */

/* Whether the domain has a web site, from domain_facts or DNS. A lookup
 * that fails (or runs out of time) tells nothing: the domain counts as
 * present (not pristine) for this request, and nothing is kept. */
static int
verify_web_presence(struct verify_engine *e, struct db *db,
    const char *domain)
{
	struct vcache_facts f = { -1, -1 };
	int present = 0;

	/* (f stays unknown, -1, when nothing is kept) */
	if (db && vcache_facts_get_many(db, &domain, 1, &f) == DB_OK &&
	    f.web_presence >= 0)
		return f.web_presence;
	if (dns_web_presence(e->dns, domain, &present) != DNS_OK)
		return 1;
	if (db) {
		f.web_presence = present;
		vcache_facts_put(db, domain, &f, VERIFY_FACTS_SECONDS);
	}
	return present;
}

/* ---------------------------------------------------------------- SMTP */

static enum verdict_kind
verify_kind_of_outcome(enum smtp_outcome o)
{
	switch (o) {
	case SMTP_OUTCOME_REFUSED_AT_BANNER:
	case SMTP_OUTCOME_BLOCKED:
	case SMTP_OUTCOME_TLS_REQUIRED:
		return VERDICT_K_BLOCKED;
	default:
		return VERDICT_K_UNREACHABLE;
	}
}

static enum verdict_kind
verify_kind_of_rcpt(enum smtp_verdict v)
{
	switch (v) {
	case SMTP_VERDICT_ACCEPTED:
		return VERDICT_K_ACCEPTED;
	case SMTP_VERDICT_MAILBOX_NOT_FOUND:
		return VERDICT_K_REJECTED;
	case SMTP_VERDICT_DISABLED:
		return VERDICT_K_DISABLED;
	case SMTP_VERDICT_MAILBOX_FULL:
		return VERDICT_K_FULL;
	case SMTP_VERDICT_GREYLISTED:
	case SMTP_VERDICT_TEMPORARY:
	case SMTP_VERDICT_RATE_LIMITED:	/* retried as any 4xx is */
		return VERDICT_K_GREYLISTED;
	case SMTP_VERDICT_BLOCKED:
	case SMTP_VERDICT_BLOCKED_CLIENT:
	case SMTP_VERDICT_SENDER_REJECTED:
		return VERDICT_K_BLOCKED;
	default:
		return VERDICT_K_UNDETERMINED;
	}
}

static void
verify_note_smtp(struct verify_result *r, const struct smtp_session_info *si,
    const struct smtp_rcpt_result *rr)
{
	r->has_smtp = 1;
	r->smtp_tls = si->tls;
	if (rr != NULL && rr->code) {
		r->smtp_code = rr->code;
		strparse_copy(r->smtp_enhanced, sizeof(r->smtp_enhanced),
		    rr->enhanced);
		strparse_copy(r->smtp_message, sizeof(r->smtp_message),
		    rr->text ? rr->text : "");
	} else {
		r->smtp_code = si->code;
		strparse_copy(r->smtp_enhanced, sizeof(r->smtp_enhanced),
		    si->enhanced);
		strparse_copy(r->smtp_message, sizeof(r->smtp_message),
		    si->text ? si->text : "");
	}
}

/* The mailbox kind of a session's answer for one address (the session
 * read the reply by its provider's rules first, verify_batch.c). */
static enum verdict_kind
verify_mailbox_kind(const struct smtp_session_info *si,
    const struct smtp_rcpt_result *rr)
{
	if (rr != NULL && rr->code)
		return verify_kind_of_rcpt(rr->verdict);
	return si ? verify_kind_of_outcome(si->outcome) :
	    VERDICT_K_UNREACHABLE;
}

/* ---------------------------------------------------------------- results */

static void
verify_finish(struct verify_result *r, enum verdict_kind k, int typo,
    const char *local)
{
	struct verdict_facts f;

	r->v = verdict_of(k, typo);
	memset(&f, 0, sizeof(f));
	f.free_provider = r->free_provider;
	f.role = r->role;
	f.tls = r->smtp_tls;
	f.possible_typo = typo;
	f.local = local;
	/* The catch-all send verdict is given for catch-all domains only;
	 * web presence was looked up already (pristine_catch_all). */
	r->score = verdict_score(&r->v, r->catch_all, &f);
	r->verified_at = time(NULL);
}

/* The sandbox: the local part names the reason (or sub_status) returned. */
static void
verify_sandbox(struct verify_result *r, const struct addr *a)
{
	enum verdict_kind k = verdict_sandbox_kind(a->local);

	r->sandbox = 1;
	r->accept_all = k == VERDICT_K_CATCH_ALL;
	r->disposable = k == VERDICT_K_DISPOSABLE;
	r->role = k == VERDICT_K_ROLE;
	r->smtp_tls = 1;
	if (k == VERDICT_K_CATCH_ALL)
		r->catch_all = VERDICT_CA_SEND_WITH_CAUTION;
	if (k == VERDICT_K_SPAM_TRAP)
		r->trap = VERDICT_TRAP_LOCAL_PATTERN;
	verify_finish(r, k, 0, a->local);
}

/* A suggestion for an address whose domain does not receive mail. */
static int
verify_suggest(struct verify_engine *e, const char *local, const char *domain,
    struct verify_result *r)
{
	char s[LISTS_SUGGEST_MAX];

	if (!lists_suggest(e->lists, domain, s))
		return 0;
	snprintf(r->did_you_mean, sizeof(r->did_you_mean), "%s@%s", local, s);
	return 1;
}

/* The input is not an address: suggest only when a provider's name is
 * hiding in the domain part ("jane@gmail,com"). */
static void
verify_syntax_failed(struct verify_engine *e, const char *in,
    struct verify_result *r)
{
	const char *at = strrchr(in, '@');
	char local[ADDR_LOCAL_MAX + 1], domain[256];
	size_t ln, i;
	int typo = 0;

	if (at != NULL && at != in && strlen(at + 1) < sizeof(domain) &&
	    (ln = (size_t)(at - in)) <= ADDR_LOCAL_MAX &&
	    strchr(in, '@') == at) {
		memcpy(local, in, ln);
		local[ln] = '\0';
		for (i = 0; at[1 + i]; i++)
			domain[i] = (char)tolower((unsigned char)at[1 + i]);
		domain[i] = '\0';
		typo = verify_suggest(e, local, domain, r);
	}
	verify_finish(r, VERDICT_K_INVALID_SYNTAX, typo, NULL);
}

static void
verify_set_mx(struct verify_result *r, const struct dns_mx_result *m)
{
	size_t i;

	for (i = 0; i < m->nhosts && i < DNS_MAX_MX; i++) {
		r->mx[i].priority = m->hosts[i].preference;
		strparse_copy(r->mx[i].host, sizeof(r->mx[i].host),
		    m->hosts[i].name);
	}
	r->nmx = i;
}

/* Everything after the mailbox verdict, in API.md's precedence order.
 * The known complainers are the operator's list and the verifying
 * account's own (NULL: none), looked up already or asked here. */
static enum verify_err
verify_after_accept(struct verify_engine *e, struct db *db,
    const char *account, const struct addr *a, struct verify_result *r,
    enum verdict_kind *k)
{
	int web, found = 0;

	if (r->accept_all) {
		web = r->web_presence >= 0 ? r->web_presence :
		    verify_web_presence(e, db, a->ascii_domain);
		r->web_presence = web;
		struct verdict_facts f = { .web_presence = web,
		    .role = r->role, .local = a->local };
		r->catch_all = verdict_catch_all_of(&f);
		if (!web)
			r->trap = VERDICT_TRAP_PRISTINE_CATCH_ALL;
	}
	if (lists_is_typo_trap(e->lists, a->ascii_domain))
		r->trap = VERDICT_TRAP_TYPO_DOMAIN;
	else if (verdict_trap_local(a->local))
		r->trap = VERDICT_TRAP_LOCAL_PATTERN;
	if (r->trap != VERDICT_TRAP_NONE) {
		*k = VERDICT_K_SPAM_TRAP;
		return VERIFY_OK;
	}
	if (r->complainer >= 0)
		found = r->complainer;
	else if (db && complainers_contains(db,
	    verify_engine_complainers_key(e), a->normalised, &found) !=
	    DB_OK)
		return VERIFY_ERR_DB;
	if (!found) {
		if (r->account_complainer >= 0)
			found = r->account_complainer;
		else if (db && complainers_account_contains(db,
		    verify_engine_complainers_key(e), account, a->normalised,
		    &found) != DB_OK)
			return VERIFY_ERR_DB;
		r->account_complainer = found;
	}
	if (found)
		*k = VERDICT_K_COMPLAINER;
	else if (r->accept_all)
		*k = VERDICT_K_CATCH_ALL;
	else if (r->role)
		*k = VERDICT_K_ROLE;
	else
		*k = VERDICT_K_ACCEPTED;
	return VERIFY_OK;
}


static void
verify_set_names(struct verify_result *r, const struct addr *a)
{
	strparse_copy(r->email, sizeof(r->email), a->address);
	strparse_copy(r->normalised, sizeof(r->normalised), a->normalised);
	strparse_copy(r->domain, sizeof(r->domain), a->domain);
	strparse_copy(r->ascii_domain, sizeof(r->ascii_domain), a->ascii_domain);
}

int
verify_from_cache(struct verify_result *r, const struct addr *a,
    json_t *cached)
{
	struct verify_result c;

	memset(&c, 0, sizeof(c));
	if (verify_cache_read(cached, &c) == -1)
		return -1;
	*r = c;
	verify_set_names(r, a);
	verify_cache_restore(r, a, &c);
	r->cached = 1;
	return 0;
}

enum verify_step
verify_begin(struct verify_engine *e, const char *email,
    struct verify_result *r, struct addr *a)
{
	memset(r, 0, sizeof(*r));
	strparse_copy(r->email, sizeof(r->email), email);
	if (addr_parse(email, a) != ADDR_OK) {
		verify_syntax_failed(e, r->email, r);
		return VERIFY_STEP_DONE;
	}
	verify_set_names(r, a);
	if (strcmp(a->ascii_domain, e->sandbox) == 0) {
		verify_sandbox(r, a);
		return VERIFY_STEP_DONE;
	}
	(void)cachekey_hash(&e->ck, a->normalised, r->cache_key);
	r->free_provider = lists_is_free(e->lists, a->ascii_domain);
	r->disposable = lists_is_disposable(e->lists, a->ascii_domain);
	r->role = lists_is_role(e->lists, a->local);
	r->complainer = -1;
	r->account_complainer = -1;
	r->web_presence = -1;
	return VERIFY_STEP_NEXT;
}

enum verify_step
verify_with_mx(struct verify_engine *e, struct verify_result *r,
    const struct addr *a, const struct dns_mx_result *mx)
{
	int typo;

	switch (mx->status) {
	case DNS_OK:
		break;
	case DNS_NXDOMAIN:
	case DNS_INVALID_NAME:
		typo = verify_suggest(e, a->local, a->ascii_domain, r);
		verify_finish(r, VERDICT_K_INVALID_DOMAIN, typo, a->local);
		return VERIFY_STEP_DONE;
	case DNS_NO_MX:
	case DNS_NO_ADDR:
		verify_suggest(e, a->local, a->ascii_domain, r);
		verify_finish(r, VERDICT_K_NO_MX, 0, a->local);
		return VERIFY_STEP_DONE;
	default:
		verify_finish(r, VERDICT_K_DNS_ERROR, 0, a->local);
		return VERIFY_STEP_DONE;
	}
	verify_set_mx(r, mx);
	if (r->disposable) {
		verify_finish(r, VERDICT_K_DISPOSABLE, 0, a->local);
		return VERIFY_STEP_DONE;
	}
	return VERIFY_STEP_NEXT;
}

/* A verdict the mail host's answer concluded: its score follows the
 * outcomes counted for its provider and classification once there are
 * calibration_min_outcomes of them (calibration.h), those of its mail
 * host (the first MX host) shrunk towards them, and so does its
 * catch-all send verdict (calibration_catch_all); else the rules' stand.
 * The counts are read again every calibration_reload_seconds; a failed
 * read keeps the last ones (none: rules) until then. */
static void
verify_calibrate(struct verify_engine *e, struct db *db,
    struct verify_result *r)
{
	struct calibration_counts h, p, all;
	enum verdict_catch_all ca;
	time_t now = time(NULL);
	int rules = r->score;

	r->score_basis = CALIBRATION_RULES;
	if (db == NULL || r->sandbox || r->provider[0] == '\0')
		return;
	if (!e->cal_read || now - e->cal_at >= conf_int(e->conf,
	    CONF_CALIBRATION_RELOAD_SECONDS) || now < e->cal_at) {
		if (calibration_db_load(db, conf_int(e->conf,
		    CONF_CALIBRATION_MIN_OUTCOMES), &e->cal) != DB_OK)
			log_warn("event=calibration_read_failed error=\"%s\"",
			    db_error(db));
		e->cal_read = 1;
		e->cal_at = now;
	}
	calibration_table_find(&e->cal, r->provider, r->v.classification, &p,
	    &all);
	calibration_table_find_host(&e->cal, r->nmx > 0 ? r->mx[0].host : NULL,
	    r->v.classification, &h);
	r->score = calibration_apply(rules, &h, &p, &all, conf_int(e->conf,
	    CONF_CALIBRATION_MIN_OUTCOMES), &r->score_basis);
	if (r->score_basis != CALIBRATION_CALIBRATED)
		return;
	ca = r->catch_all;
	r->catch_all = calibration_catch_all(ca, r->score,
	    (int)conf_int(e->conf, CONF_CALIBRATION_SEND_SAFE_MIN),
	    (int)conf_int(e->conf, CONF_CALIBRATION_AVOID_BELOW));
	log_debug("event=score_calibrated provider=%s class=%s "
	    "delivered=%lld bounced=%lld mx_host=%s host_delivered=%lld "
	    "host_bounced=%lld rules=%d score=%d send=%s->%s",
	    r->provider, verdict_class_names[r->v.classification],
	    p.delivered, p.bounced, r->nmx > 0 ? r->mx[0].host : "-",
	    h.delivered, h.bounced, rules, r->score,
	    verdict_catch_all_names[ca] ? verdict_catch_all_names[ca] : "-",
	    verdict_catch_all_names[r->catch_all] ?
	    verdict_catch_all_names[r->catch_all] : "-");
}

void
verify_account_complainer(struct verify_engine *e, struct db *db,
    struct verify_result *hit, const struct addr *a)
{
	time_t at = hit->verified_at;

	if (hit->account_complainer != 1 || (hit->v.kind != VERDICT_K_ACCEPTED
	    && hit->v.kind != VERDICT_K_CATCH_ALL &&
	    hit->v.kind != VERDICT_K_ROLE))
		return;
	verify_finish(hit, VERDICT_K_COMPLAINER, 0, a->local);
	verify_calibrate(e, db, hit);
	hit->verified_at = at;
}

enum verify_err
verify_conclude(struct verify_engine *e, struct db *db, const char *account,
    struct verify_result *r, const struct addr *a, const char *provider,
    const struct smtp_session_info *si, const struct smtp_rcpt_result *rr,
    int accept_all)
{
	enum verdict_kind k = verify_mailbox_kind(si, rr);
	enum verify_err rc;

	log_debug("event=verify_conclude domain=%s provider=%s code=%d "
	    "kind=%s", a->ascii_domain, provider && *provider ? provider :
	    "-", rr ? rr->code : 0, verdict_kind_names[k]);

	if (si != NULL)
		verify_note_smtp(r, si, rr);
	if (k == VERDICT_K_ACCEPTED) {
		r->accept_all = accept_all;
		if ((rc = verify_after_accept(e, db, account, a, r, &k)) !=
		    VERIFY_OK)
			return rc;
	}
	verify_finish(r, k, 0, a->local);
	verify_calibrate(e, db, r);
	return VERIFY_OK;
}

void
verify_store(struct db *db, const struct verify_result *r)
{
	struct vcache_entry ce;

	if (db == NULL || verify_cache_entry(r, &ce) == -1)
		return;
	(void)vcache_put_many(db, VCACHE_VERDICT, &ce, 1);
	vcache_entries_clear(&ce, 1);
}

/* The gate, asked once before the first use of the network: 0 to go on. */
static int
verify_gate_pass(struct verify_gate *g)
{
	if (g == NULL || g->asked)
		return 0;
	g->asked = 1;
	return g->admit(g->arg);
}

/* The batch's MX answer from the DNS cache, else (once the gate lets it)
 * from DNS within the resolver's deadline: 0, or -1 when the gate refused. */
static int
verify_resolve(struct verify_engine *e, struct db *db, struct verify_batch *b,
    struct verify_gate *g)
{
	struct dns_mx_result mx;

	if (verify_batch_mx_cached(db, b))
		return 0;
	if (verify_gate_pass(g) == -1)
		return -1;
	verify_engine_lookup_mx(e, b->domain, &mx);
	verify_batch_mx_answer(db, b, &mx);
	return 0;
}

/* Single verification's SMTP part: a session of the batch face for the
 * one item (then the catch-all probe while the domain's answer is not
 * known); a greylisted answer is tried again after greylist_retry_ms while
 * the budget lasts. The last session is handed back (the caller concludes
 * from it and frees it), *rcpt the item's RCPT in it; NULL if none ran. */
static struct smtp_session *
verify_single_smtp(struct verify_engine *e, struct db *db,
    struct verify_batch *b, struct verify_item *it, int64_t deadline,
    size_t *rcpt)
{
	struct smtp_session *s = NULL, *next;
	int64_t left;
	int tries, probe;

	for (tries = 0; ; tries++) {
		left = deadline - timeutil_mono_ms();
		if (left < VERIFY_SMTP_MIN_MS)
			break;
		/* a retry that pacing keeps back (the first answer said "slow
		 * down"): the answer of the session before stands */
		if ((next = verify_batch_session(e, db, b, &it, 1, left,
		    &probe)) == NULL)
			break;
		smtp_session_free(s);
		s = next;
		smtp_session_run(s);
		verify_engine_learn(e, db, b, s);
		if (probe)
			verify_batch_probe_done(db, b, s);
		*rcpt = 0;	/* the probe, if any, is the last RCPT */
		log_debug("event=smtp_probe domain=%s outcome=%s host=%s "
		    "code=%d tls=%d", b->domain,
		    smtp_outcome_names[smtp_session_info(s)->outcome],
		    smtp_session_info(s)->host ? smtp_session_info(s)->host :
		    "-", smtp_session_rcpt(s, *rcpt) ?
		    smtp_session_rcpt(s, *rcpt)->code : 0,
		    smtp_session_info(s)->tls);
		if (verify_mailbox_kind(smtp_session_info(s),
		    smtp_session_rcpt(s, *rcpt)) != VERDICT_K_GREYLISTED ||
		    tries >= 2)
			break;
		/* Greylisting: try again once the server's delay may be
		 * over, if the budget allows a wait and another session. */
		left = deadline - timeutil_mono_ms();
		if (left < conf_int(e->conf, CONF_GREYLIST_RETRY_MS) + 1000)
			break;
		usleep((useconds_t)conf_int(e->conf, CONF_GREYLIST_RETRY_MS) *
		    1000);
	}
	return s;
}

enum verify_err
verify_address(struct verify_engine *e, struct db *db, const char *account,
    const char *email, struct verify_gate *gate, struct verify_result *r)
{
	struct verify_item it, *one = &it;
	struct verify_batch b;
	struct smtp_session *s;
	enum verify_err rc = VERIFY_OK;
	int64_t deadline = timeutil_mono_ms() +
	    conf_int(e->conf, CONF_VERIFY_TIME_BUDGET_MS);
	size_t rcpt = 0;

	/* A batch of one, through the same face as the worker's jobs. */
	if (verify_batch_item_begin(e, email, &it) == VERIFY_STEP_DONE) {
		*r = it.r;
		return VERIFY_OK;
	}
	verify_batch_lookup(e, db, account, &one, 1);
	if (it.r.cached) {
		*r = it.r;
		return VERIFY_OK;
	}
	verify_batch_init(&b, it.a.ascii_domain);
	/* The budget covers the DNS lookups too (MX, the hosts' addresses,
	 * web presence), not only the SMTP part. */
	dns_resolver_set_deadline(e->dns, deadline);
	if (verify_resolve(e, db, &b, gate) == -1) {
		rc = VERIFY_ERR_REFUSED;
		goto out;
	}
	if (verify_batch_item_with_mx(e, &b, &it) == VERIFY_STEP_NEXT) {
		if (verify_gate_pass(gate) == -1) {
			rc = VERIFY_ERR_REFUSED;
			goto out;
		}
		s = verify_single_smtp(e, db, &b, &it, deadline, &rcpt);
		if (s == NULL && b.paced_out)
			rc = verify_batch_item_conclude_paused(e, db, &b, &it);
		else
			rc = verify_batch_item_conclude(e, db, &b, &it, s,
			    rcpt);
		smtp_session_free(s);
	}
	if (rc == VERIFY_OK) {
		/* not asked (pacing): nothing learned worth caching */
		if (!b.paced_out)
			verify_store(db, &it.r);
		*r = it.r;
	}
out:
	dns_resolver_set_deadline(e->dns, 0);
	verify_batch_free(&b);
	return rc;
}

/* ---------------------------------------------------------------- domains */

enum verify_err
verify_domain(struct verify_engine *e, struct db *db, const char *ascii,
    const char *display, struct verify_gate *gate,
    struct verify_domain_result *d)
{
	struct verify_batch b;
	struct smtp_session *s;
	enum verify_err rc = VERIFY_OK;
	size_t i;
	int64_t left, deadline = timeutil_mono_ms() +
	    conf_int(e->conf, CONF_VERIFY_TIME_BUDGET_MS);
	int probe;

	memset(d, 0, sizeof(*d));
	strparse_copy(d->domain, sizeof(d->domain), display);
	d->accept_all = -1;
	d->disposable = lists_is_disposable(e->lists, ascii);
	/* One budget for the MX lookup and the catch-all probe, through the
	 * batch face with no address (only the probe). */
	verify_batch_init(&b, ascii);
	dns_resolver_set_deadline(e->dns, deadline);
	if (verify_resolve(e, db, &b, gate) == -1)
		rc = VERIFY_ERR_REFUSED;
	dns_resolver_set_deadline(e->dns, 0);
	if (rc != VERIFY_OK)
		goto out;
	d->dns = b.mx.status;
	for (i = 0; i < b.mx.nhosts && i < DNS_MAX_MX; i++) {
		d->mx[i].priority = b.mx.hosts[i].preference;
		strparse_copy(d->mx[i].host, sizeof(d->mx[i].host),
		    b.mx.hosts[i].name);
		if (b.mx.hosts[i].addrs.n > 0)
			d->has_valid_mx = 1;
	}
	d->nmx = i;
	strparse_copy(d->provider, sizeof(d->provider),
	    verify_batch_provider_of(e, &b));
	if (d->dns != DNS_OK || !d->has_valid_mx)
		goto out;
	if (b.probe != VERIFY_PROBE_KNOWN) {
		if (verify_gate_pass(gate) == -1) {
			rc = VERIFY_ERR_REFUSED;
			goto out;
		}
		left = deadline - timeutil_mono_ms();
		if (left < VERIFY_SMTP_MIN_MS || (s = verify_batch_session(e,
		    db, &b, NULL, 0, left, &probe)) == NULL)
			goto out;
		smtp_session_run(s);
		verify_engine_learn(e, db, &b, s);
		verify_batch_probe_done(db, &b, s);
		smtp_session_free(s);
	}
	if (b.probe == VERIFY_PROBE_KNOWN)
		d->accept_all = b.accept_all;
out:
	verify_batch_free(&b);
	return rc;
}
