/* deliveries.c: svc-worker's sender of event deliveries (deliveries.h).
 * One turn: when a claim is due, the outbox's new events become
 * deliveries (events_fan_out) and due ones are claimed into the free
 * places (events_claim: at most webhook_concurrency in flight, at most
 * webhook_host_concurrency to one host, at most webhook_account_concurrency
 * of one account's: its share of the slots, so that one account's slow
 * webhooks, however many, leave the other slots to the other accounts;
 * the claim looks at each account's longest-waiting deliveries only, so
 * another account's are seen behind a long queue of one); each is signed and started as a
 * POST on the multi handle; libcurl runs them all; each that ends is
 * recorded (events_record), which schedules its retry or gives it up.
 * The lease of a claim covers two attempt timeouts and some: a worker
 * killed mid-delivery leaves it to another worker after that, which sends
 * the same event again. The daemon runs the turns in a thread of its own,
 * so slow receivers never hold up verification and the other way round;
 * --once runs them in the caller until nothing due is left. */
#include "worker/deliveries.h"
#include "jobs/events.h"
#include "jobs/fetch.h"
#include "jobs/sign.h"
#include "util/log.h"
#include "util/strparse.h"
#include "util/timeutil.h"
#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DELIVERIES_BODY_MAX	(64 * 1024)	/* response body read */
#define DELIVERIES_FAN_OUT	200		/* events per turn */
#define DELIVERIES_WAIT_MS	1000		/* longest wait of a turn */
#define DELIVERIES_DB_RETRY_MS	5000		/* after a database failure */

struct deliveries_xfer {
	struct fetch		 f;
	struct events_delivery	 d;
	struct curl_slist	*headers;
	int64_t			 started;
	struct deliveries_xfer	*next;
};

struct deliveries {
	const struct conf	*conf;
	char			 owner[128];
	long			 schedule[CONF_DURATIONS_MAX];
	size_t			 nschedule;
	long			 lease;
	size_t			 concurrency, host_cap, account_cap;
	int64_t			 poll_ms;
	struct fetch_opts	 opts;
	CURLM			*multi;
	struct deliveries_xfer	*xfers;
	size_t			 nxfers;
	struct db		*db;
	int64_t			 next_claim;
	int			 last_full;	/* the last claim filled every place */
	size_t			 last_found;	/* events and deliveries it found */
	int			 db_failed;

	pthread_t		 thread;
	atomic_int		 stopping;
};

static struct deliveries *
deliveries_new(const struct conf *c, struct buf *err)
{
	struct deliveries *d;
	char host[64];
	long timeout_ms = conf_int(c, CONF_WEBHOOK_TIMEOUT_MS);

	if ((d = calloc(1, sizeof(*d))) == NULL) {
		buf_puts(err, "out of memory");
		return NULL;
	}
	d->conf = c;
	if (gethostname(host, sizeof(host)) == -1)
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	snprintf(d->owner, sizeof(d->owner), "%s:%ld", host, (long)getpid());
	if (strparse_durations(conf_str(c, CONF_WEBHOOK_RETRY_SCHEDULE),
	    d->schedule, CONF_DURATIONS_MAX, &d->nschedule) == -1) {
		buf_puts(err, "webhook_retry_schedule is not a list of "
		    "durations");
		free(d);
		return NULL;
	}
	d->lease = 2 * (timeout_ms + 999) / 1000 + 10;
	d->concurrency = (size_t)conf_int(c, CONF_WEBHOOK_CONCURRENCY);
	d->host_cap = (size_t)conf_int(c, CONF_WEBHOOK_HOST_CONCURRENCY);
	d->account_cap = (size_t)conf_int(c, CONF_WEBHOOK_ACCOUNT_CONCURRENCY);
	d->poll_ms = conf_int(c, CONF_WORKER_POLL_INTERVAL) * 1000;
	fetch_opts_from_conf(&d->opts, c, timeout_ms, DELIVERIES_BODY_MAX);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
	    (d->multi = curl_multi_init()) == NULL) {
		buf_puts(err, "libcurl cannot start");
		free(d);
		return NULL;
	}
	return d;
}

static void
deliveries_free(struct deliveries *d)
{
	curl_multi_cleanup(d->multi);
	curl_global_cleanup();
	free(d);
}

/* Takes the transfer off the multi handle and frees it. */
static void
deliveries_xfer_free(struct deliveries *d, struct deliveries_xfer *x)
{
	struct deliveries_xfer **pp;

	for (pp = &d->xfers; *pp != NULL; pp = &(*pp)->next)
		if (*pp == x) {
			*pp = x->next;
			d->nxfers--;
			break;
		}
	if (x->f.easy != NULL)
		curl_multi_remove_handle(d->multi, x->f.easy);
	fetch_free(&x->f);
	curl_slist_free_all(x->headers);
	events_delivery_clear(&x->d);
	free(x);
}

/* Records how the attempt went and frees the transfer. */
static void
deliveries_finish(struct deliveries *d, struct deliveries_xfer *x,
    const struct events_attempt *a)
{
	enum events_state became = EVENTS_PENDING;
	enum db_err e;
	struct buf q;

	e = events_record(d->db, &x->d, d->owner, a, d->schedule, d->nschedule,
	    &became);
	/* the error may hold the receiver's or libcurl's text: cleaned */
	buf_init(&q, 1024);
	log_quote(&q, a->error ? a->error : "", 512);
	if (e == DB_OK)
		log_info("event=delivery_attempt delivery=%s event_id=%s "
		    "kind=%s receiver=%s attempt=%d status=%ld outcome=%s "
		    "duration_ms=%ld error=%s", x->d.id, x->d.event_id,
		    x->d.event, x->d.receiver, x->d.attempt, a->status,
		    events_state_names[became], a->duration_ms, buf_str(&q));
	else if (e == DB_ABORT)
		log_warn("event=delivery_lease_lost delivery=%s attempt=%d",
		    x->d.id, x->d.attempt);
	else {
		log_error("event=delivery_record_failed delivery=%s "
		    "error=\"%s\"", x->d.id, db_error(d->db));
		d->db_failed = 1;
	}
	buf_free(&q);
	deliveries_xfer_free(d, x);
}

/* An attempt that never went out: recorded as failed (permanent: never
 * to be tried again). */
static void
deliveries_fail_now(struct deliveries *d, struct deliveries_xfer *x,
    const char *error, int permanent)
{
	struct events_attempt a;

	memset(&a, 0, sizeof(a));
	a.error = error;
	a.permanent = permanent;
	deliveries_finish(d, x, &a);
}

/* Signs the claimed delivery and starts its POST. */
static void
deliveries_begin(struct deliveries *d, struct deliveries_xfer *x)
{
	const char *const *secrets = (const char *const *)x->d.secrets;
	struct curl_slist *h;
	struct buf v;
	char why[256];
	int bad = 0;

	x->started = timeutil_mono_ms();
	if (x->d.nsecrets == 0) {
		deliveries_fail_now(d, x, "no secret to sign with", 1);
		return;
	}
	if (fetch_init(&x->f, &d->opts) == -1) {
		deliveries_fail_now(d, x, "out of memory", 0);
		return;
	}
	if (fetch_url(&x->f, x->d.url) != FETCH_OK) {
		snprintf(why, sizeof(why), "url_refused: %s",
		    fetch_error_text(&x->f, FETCH_URL_REFUSED));
		deliveries_fail_now(d, x, why, 1);
		return;
	}
	buf_init(&v, BUF_NOMAX);
	bad |= buf_puts(&v, "X-Service-Signature: ") == -1;
	bad |= sign_header(secrets, x->d.nsecrets, time(NULL), x->d.payload,
	    x->d.len, &v) == -1;
	if (!bad && (h = curl_slist_append(NULL, buf_str(&v))) != NULL) {
		x->headers = h;
		buf_reset(&v);
		buf_printf(&v, "X-Webhook-ID: %s", x->d.receiver);
		bad |= curl_slist_append(h, buf_str(&v)) == NULL;
		bad |= curl_slist_append(h, "Content-Type: application/json") ==
		    NULL;
		/* the body goes at once, without waiting for 100 Continue */
		bad |= curl_slist_append(h, "Expect:") == NULL;
	} else
		bad = 1;
	buf_free(&v);
	bad |= curl_easy_setopt(x->f.easy, CURLOPT_HTTPHEADER, x->headers) !=
	    CURLE_OK;
	bad |= curl_easy_setopt(x->f.easy, CURLOPT_POSTFIELDSIZE_LARGE,
	    (curl_off_t)x->d.len) != CURLE_OK;
	bad |= curl_easy_setopt(x->f.easy, CURLOPT_POSTFIELDS, x->d.payload) !=
	    CURLE_OK;
	bad |= curl_easy_setopt(x->f.easy, CURLOPT_PRIVATE, x) != CURLE_OK;
	if (bad || curl_multi_add_handle(d->multi, x->f.easy) != CURLM_OK) {
		deliveries_fail_now(d, x, "cannot start the request", 0);
		return;
	}
	log_debug("event=delivery_started delivery=%s receiver=%s attempt=%d "
	    "host=%s", x->d.id, x->d.receiver, x->d.attempt, x->d.host);
}

/* events_claim's room: in flight to host, plus claimed, below the host
 * cap, and in flight of the account, plus claimed, below its share. */
static int
deliveries_room(void *arg, const char *host, size_t host_claimed,
    const char *account, size_t account_claimed)
{
	struct deliveries *d = arg;
	struct deliveries_xfer *x;
	size_t h = host_claimed, a = account_claimed;

	for (x = d->xfers; x != NULL; x = x->next) {
		h += strcmp(x->d.host, host) == 0;
		a += strcmp(x->d.account, account) == 0;
	}
	return h < d->host_cap && a < d->account_cap;
}

/* Fan-out, then a claim into the free places; -1 when the database
 * failed. */
static int
deliveries_claim(struct deliveries *d, int64_t now)
{
	struct events_delivery *got;
	struct deliveries_xfer *x;
	size_t want = d->concurrency - d->nxfers, n = 0, i;
	long long fanned;

	if ((fanned = events_fan_out(d->db, DELIVERIES_FAN_OUT)) < 0)
		return -1;
	if ((got = calloc(want, sizeof(*got))) == NULL)
		return 0;
	if (events_claim(d->db, d->owner, d->lease, want, d->account_cap,
	    deliveries_room, d, got, &n) != DB_OK) {
		log_error("event=delivery_claim_failed error=\"%s\"",
		    db_error(d->db));
		free(got);
		return -1;
	}
	d->last_full = n == want;
	d->last_found = (size_t)fanned + n;
	d->next_claim = d->last_full ? now : now + d->poll_ms;
	for (i = 0; i < n; i++) {
		if ((x = calloc(1, sizeof(*x))) == NULL) {
			/* left to its lease */
			events_delivery_clear(&got[i]);
			continue;
		}
		x->d = got[i];
		x->next = d->xfers;
		d->xfers = x;
		d->nxfers++;
		deliveries_begin(d, x);
	}
	free(got);
	return 0;
}

/* Records the transfers libcurl says are done. */
static void
deliveries_collect(struct deliveries *d)
{
	struct deliveries_xfer *x;
	struct events_attempt a;
	enum fetch_err fe;
	char why[300], *priv;
	CURLMsg *m;
	int left;

	while ((m = curl_multi_info_read(d->multi, &left)) != NULL) {
		if (m->msg != CURLMSG_DONE || curl_easy_getinfo(m->easy_handle,
		    CURLINFO_PRIVATE, &priv) != CURLE_OK || priv == NULL)
			continue;
		x = (struct deliveries_xfer *)(void *)priv;
		memset(&a, 0, sizeof(a));
		fe = fetch_result(&x->f, m->data.result, &a.status);
		a.duration_ms = (long)(timeutil_mono_ms() - x->started);
		if (fe != FETCH_OK && fe != FETCH_TOO_LARGE) {
			snprintf(why, sizeof(why), "%s: %s", fetch_err_names[fe],
			    fetch_error_text(&x->f, fe));
			a.error = why;
		}
		deliveries_finish(d, x, &a);
		if (d->last_full || d->nxfers == 0)
			d->next_claim = 0;
	}
}

/* One turn, waiting at most wait_ms for the transfers: 0, or -1 when the
 * database failed. */
static int
deliveries_turn(struct deliveries *d, int wait_ms)
{
	int64_t now = timeutil_mono_ms(), until;
	int running = 0;

	if (now >= d->next_claim && d->nxfers < d->concurrency &&
	    deliveries_claim(d, now) == -1)
		return -1;
	curl_multi_perform(d->multi, &running);
	deliveries_collect(d);
	if (d->db_failed)
		return -1;
	until = d->next_claim - timeutil_mono_ms();
	if (until < wait_ms)
		wait_ms = until < 0 ? 0 : (int)until;
	if (wait_ms > 0)
		curl_multi_poll(d->multi, NULL, 0, wait_ms, NULL);
	return 0;
}

/* Drops every transfer in flight; give_back: each delivery due again at
 * once (the database is there), else left to its lease. */
static void
deliveries_drop_all(struct deliveries *d, int give_back)
{
	struct deliveries_xfer *x;

	while ((x = d->xfers) != NULL) {
		if (give_back && events_release(d->db, &x->d, d->owner) ==
		    DB_OK)
			log_info("event=delivery_released delivery=%s "
			    "attempt=%d", x->d.id, x->d.attempt);
		deliveries_xfer_free(d, x);
	}
}

int
deliveries_once(const struct conf *c, struct db *db,
    volatile sig_atomic_t *stop)
{
	struct deliveries *d;
	struct buf err;
	int rc = 0;

	buf_init(&err, 256);
	if ((d = deliveries_new(c, &err)) == NULL) {
		log_error("event=deliveries_unavailable error=\"%s\"",
		    buf_str(&err));
		buf_free(&err);
		return 0;
	}
	buf_free(&err);
	d->db = db;
	/* a claim whenever every transfer has ended, until one finds
	 * nothing */
	d->poll_ms = INT64_MAX / 4;
	while (!*stop) {
		/* the turn does not wait: a run with nothing (more) to
		 * deliver ends at once, instead of after a last poll of
		 * DELIVERIES_WAIT_MS on no transfer at all */
		if (deliveries_turn(d, 0) == -1) {
			rc = -1;
			break;
		}
		if (d->nxfers == 0 && d->last_found == 0)
			break;
		if (d->nxfers == 0) {
			d->next_claim = 0;
			continue;
		}
		curl_multi_poll(d->multi, NULL, 0, DELIVERIES_WAIT_MS, NULL);
	}
	deliveries_drop_all(d, rc == 0);
	deliveries_free(d);
	return rc;
}

static void *
deliveries_main(void *arg)
{
	struct deliveries *d = arg;
	struct buf err;
	int64_t retry_at = 0;

	buf_init(&err, 1024);
	while (!atomic_load(&d->stopping)) {
		if (d->db == NULL) {
			if (timeutil_mono_ms() < retry_at) {
				curl_multi_poll(d->multi, NULL, 0,
				    DELIVERIES_WAIT_MS, NULL);
				continue;
			}
			buf_reset(&err);
			if (db_open(d->conf, 1, &d->db, &err) != DB_OK) {
				log_error("event=deliveries_db_unavailable "
				    "error=\"%s\"", buf_str(&err));
				retry_at = timeutil_mono_ms() +
				    DELIVERIES_DB_RETRY_MS;
				continue;
			}
			d->db_failed = 0;
			d->next_claim = 0;
		}
		if (deliveries_turn(d, DELIVERIES_WAIT_MS) == -1) {
			deliveries_drop_all(d, 0);
			db_close(d->db);
			d->db = NULL;
			retry_at = timeutil_mono_ms() + DELIVERIES_DB_RETRY_MS;
		}
	}
	if (d->db != NULL)
		deliveries_drop_all(d, 1);
	db_close(d->db);
	d->db = NULL;
	buf_free(&err);
	return NULL;
}

struct deliveries *
deliveries_start(const struct conf *c, struct buf *err)
{
	struct deliveries *d;

	if ((d = deliveries_new(c, err)) == NULL)
		return NULL;
	if (pthread_create(&d->thread, NULL, deliveries_main, d) != 0) {
		buf_puts(err, "cannot start the deliveries thread");
		deliveries_free(d);
		return NULL;
	}
	log_info("event=deliveries_ready owner=%s concurrency=%zu "
	    "host_concurrency=%zu account_concurrency=%zu retries=%zu "
	    "lease=%ld", d->owner, d->concurrency, d->host_cap,
	    d->account_cap, d->nschedule, d->lease);
	return d;
}

void
deliveries_stop(struct deliveries *d)
{
	if (d == NULL)
		return;
	atomic_store(&d->stopping, 1);
	curl_multi_wakeup(d->multi);
	pthread_join(d->thread, NULL);
	deliveries_free(d);
}
