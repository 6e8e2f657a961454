/* permits.c: rate-limit permits leased in batches (permits.h). A slot of
 * the shared table holds one bucket's lease on this host: its permits
 * left and a tag of its seq in one 64-bit word that requests decrement
 * without a lock, the rest of the lease beside it, and a robust mutex that
 * the round trips to MariaDB (ratelimit_lease, sql/010_rate_permits.sql)
 * hold. A slot is for one bucket at a time, given under the table's claim
 * lock, so a host never holds two leases of one bucket.
 *
 * Why the limit holds exactly
 * ---------------------------
 * Time here is the database's clock, which ratelimit_lease reads once it
 * holds the bucket row's lock; second s is [s, s + 1) of it, W the window.
 * A grant of k permits (k = 1: a request counted on its own) adds k to
 * the bucket's counter of the second s it is made in, and is made only
 * when the counters of every second after s - W (later ones included) add
 * up to u < limit, with k <= max(1, (limit - u) / 2), so u + k <= limit.
 * Nothing else adds to a counter; giving permits back and voiding leases
 * only subtract.
 *
 * (1) The counters of any window add up to at most limit. Take the seconds
 * (x - W, x] and the last grant g of the bucket made in one of them, at
 * s_g <= x. Grants hold the bucket's lock and read the clock under it, so
 * every other grant counted in (x - W, x] came before g (it is in
 * (x - W, s_g]), and g's sum took in every second after s_g - W, which is
 * all of them: at most limit - k_g before g, at most limit with it. Later
 * grants are in later seconds, and the rest only subtracts.
 *
 * (2) The requests let through in any second are at most that second's
 * counter. A request counted by the procedure is decided in the second it
 * is counted in. A permit of a lease granted in second s is taken from
 * shared memory only while the database's clock is surely still in s: the
 * host reads its monotonic clock (m0) before it sends the call, the
 * database reads its clock (t, in ms) after that, so when the host's clock
 * reads m the database's is below t + 2 + (m - m0), and the host takes
 * permits only while that is below s + 1 (less PERMITS_MARGIN_MS for the
 * rates of the two clocks). A lease is closed before its unused permits go
 * back: the permits left are swapped to 0 in one atomic step on the word
 * requests decrement, so each permit is either used or given back, never
 * both, and rate_leases makes a give-back count once however often it is
 * sent. A round trip that does not come back (its process died, the
 * connection broke, a deadlock) may still have been granted, but nobody
 * used that grant: a lease is published in shared memory only after the
 * reply, and the caller answers its own request after that. So the slot's
 * next round trip (by any responder, or the keeper) voids it: gives back
 * all its permits, and leaves a mark that refuses it should it come late.
 *
 * So no window of W seconds lets through more than limit requests, with
 * any number of responders and hosts, whatever the hosts' clocks say (the
 * database's must not step back).
 *
 * What it costs, and what can leak
 * --------------------------------
 * Permits leased but not yet used count until they are given back, so
 * another host may find the window full while fewer requests were made.
 * A lease ends with its second, and its unused permits go back with the
 * bucket's next round trip or from the keeper PERMITS_GRACE_MS after the
 * second ends; a refused request whose bucket other hosts held leases of
 * in this second or the last waits for them (PERMITS_WAIT_MAX_MS at most)
 * and asks again. Near the limit, leases shrink to one permit (half of
 * what is left). Lost for good, that is counted but never used until its
 * second leaves the window: the unused permits of the leases a host holds
 * when it is killed outright or its keeper cannot reach MariaDB (at most
 * rate_permits_max per bucket, a second's worth of its requests); one
 * permit per responder killed after its request took one (the request was
 * let through). Nothing is lost when a responder dies in a round trip.
 * A host stopped with SIGTERM gives its leases back (its keeper does). */
#include "core/permits.h"
#include "util/ids.h"
#include "util/khash.h"
#include "util/log.h"
#include "util/shm.h"
#include "util/timeutil.h"
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PERMITS_PROBES		4	/* slots a bucket may take */
#define PERMITS_BUCKET_MAX	96
#define PERMITS_MARGIN_MS	5	/* a lease ends this much early here */
#define PERMITS_WAIT_GRACE_MS	300	/* after the others' leases end */
#define PERMITS_WAIT_STEP_MS	100	/* then again while they are there */
#define PERMITS_RATE_MAX	1000000	/* permits a second */
#define PERMITS_LEFT_MASK	UINT64_C(0xffffffff)
#define PERMITS_TAG(seq)	((uint64_t)(uint32_t)(seq) << 32)

struct permits_slot {
	pthread_mutex_t	 lock;		/* round trips, and the bucket */
	uint64_t	 state;		/* lease tag << 32 | permits left */
	uint32_t	 version;	/* odd while a round trip is under way */
	char		 bucket[PERMITS_BUCKET_MAX];	/* "": free */
	/* The lease state publishes, written before it under the lock. */
	uint64_t	 seq;		/* 0: none */
	int64_t		 until;		/* monotonic ms it may be used before */
	int64_t		 sec_ms;	/* its second, by the database's clock */
	long		 limit, granted, used;
	int64_t		 oldest_ms;
	/* The round trip under way, finished by whoever locks the slot next
	 * when it does not come back. */
	int		 op;		/* op_ret is not given back yet */
	uint64_t	 op_ret, op_new;
	long		 op_unused;
	uint64_t	 void_to;	/* grants up to this seq never used */
	/* Demand: the last round trip, and permits a second until then. */
	int64_t		 rt_mono;
	long		 rate;
};

struct permits {
	pthread_mutex_t	 claim;		/* gives slots to buckets */
	char		 holder[PERMITS_HOLDER_MAX];
	long		 max;
	uint64_t	 next_seq;
	uint32_t	 released;	/* slots given to another bucket */
	struct permits_slot slot[PERMITS_SLOTS];
};

#define LOAD(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define STORE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

struct permits *
permits_shared(long max)
{
	pthread_mutexattr_t a;
	struct permits *p;
	char host[32], rnd[16];
	size_t i;
	int ok;

	/* slots are found by the keyed hash: the key is the master's */
	if (khash_init() == -1)
		return NULL;
	if ((p = shm_alloc(sizeof(*p))) == NULL)
		return NULL;
	if (shm_mutexattr(&a) == -1) {
		shm_free(p, sizeof(*p));
		return NULL;
	}
	ok = pthread_mutex_init(&p->claim, &a) == 0;
	for (i = 0; ok && i < PERMITS_SLOTS; i++)
		ok = pthread_mutex_init(&p->slot[i].lock, &a) == 0;
	pthread_mutexattr_destroy(&a);
	if (!ok || ids_random_text("", 10, rnd, sizeof(rnd)) == -1) {
		shm_free(p, sizeof(*p));
		return NULL;
	}
	if (gethostname(host, sizeof(host)) == -1)
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	snprintf(p->holder, sizeof(p->holder), "%s:%d:%s", host,
	    (int)getpid(), rnd);
	p->max = max < 1 ? 1 : max;
	p->next_seq = 1;
	return p;
}

void
permits_set_max(struct permits *p, long max)
{
	__atomic_store_n(&p->max, max < 1 ? 1 : max, __ATOMIC_RELAXED);
}

/* Holds nothing in MariaDB: may be given to another bucket. */
static int
permits_idle(const struct permits_slot *s)
{
	return s->seq == 0 && !s->op && s->void_to == 0;
}

/* Marks the slot's round trip under way (busy) or over: the version is
 * odd exactly while one is (permits_unused). A round trip that begins
 * where one failed (odd already) takes a new odd version too, so that a
 * mark taken while the failed one was pending does not match it. */
static void
permits_busy(struct permits_slot *s, int busy)
{
	uint32_t odd = __atomic_load_n(&s->version, __ATOMIC_SEQ_CST) & 1;

	if (odd != (uint32_t)busy)
		__atomic_add_fetch(&s->version, 1, __ATOMIC_SEQ_CST);
	else if (busy)
		__atomic_add_fetch(&s->version, 2, __ATOMIC_SEQ_CST);
}

static int
permits_lock(struct permits *p, struct permits_slot *s, int try)
{
	/* (1: locked from a process that died holding it, which left the
	 * slot's unfinished round trip in its op fields) */
	int r = shm_mutex_lock(&s->lock, try);

	if (r != 1)
		return r;
	/* Its process died after the lease came back and was published
	 * (the state carries its tag): the round trip is over. Else the
	 * grant, if any, was never used and is voided next time. */
	if (s->op && s->op_new != 0 && s->seq == s->op_new &&
	    (LOAD(s->state) >> 32) == (uint32_t)s->op_new) {
		s->op = 0;
		s->void_to = 0;
	} else if (s->op && s->op_new > s->void_to)
		s->void_to = s->op_new;
	s->op_new = 0;
	permits_busy(s, s->op);
	log_warn("event=permits_recovered bucket=%s pending=%d", s->bucket,
	    s->op);
	/* It may have died giving the slot to a bucket, the name half
	 * written: a slot that holds nothing is simply free again. */
	if (permits_idle(s)) {
		__atomic_add_fetch(&p->released, 1, __ATOMIC_SEQ_CST);
		memset(s->bucket, 0, sizeof(s->bucket));
	}
	return 0;
}

static void
permits_unlock(struct permits_slot *s)
{
	pthread_mutex_unlock(&s->lock);
}

/* The bucket's slot, found without a lock (whoever uses it checks the
 * bucket again), or NULL. */
static struct permits_slot *
permits_find(struct permits *p, const char *bucket)
{
	size_t home = khash(bucket, strlen(bucket)) % PERMITS_SLOTS, i;
	struct permits_slot *s;

	for (i = 0; i < PERMITS_PROBES; i++) {
		s = &p->slot[(home + i) % PERMITS_SLOTS];
		if (strncmp(s->bucket, bucket, PERMITS_BUCKET_MAX) == 0)
			return s;
	}
	return NULL;
}

/* The bucket's slot, locked: its own, or a free one of its probes given
 * to it; NULL when they are all busy with other buckets. */
static struct permits_slot *
permits_claim(struct permits *p, const char *bucket)
{
	size_t home = khash(bucket, strlen(bucket)) % PERMITS_SLOTS, i;
	struct permits_slot *s;
	int tries;

	for (tries = 0; tries < 3; tries++) {
		if ((s = permits_find(p, bucket)) != NULL) {
			if (permits_lock(p, s, 0) != 0)
				return NULL;
			if (strcmp(s->bucket, bucket) == 0)
				return s;
			permits_unlock(s);	/* given away meanwhile */
			continue;
		}
		if (shm_mutex_lock(&p->claim, 0) == -1)
			return NULL;
		if (permits_find(p, bucket) != NULL) {
			pthread_mutex_unlock(&p->claim);
			continue;
		}
		for (i = 0; i < PERMITS_PROBES; i++) {
			s = &p->slot[(home + i) % PERMITS_SLOTS];
			if (permits_lock(p, s, 1) != 0)
				continue;
			if (s->bucket[0] == '\0' || permits_idle(s))
				break;
			permits_unlock(s);
		}
		if (i == PERMITS_PROBES) {
			pthread_mutex_unlock(&p->claim);
			return NULL;
		}
		if (s->bucket[0] != '\0')
			__atomic_add_fetch(&p->released, 1, __ATOMIC_SEQ_CST);
		memset(s->bucket, 0, sizeof(s->bucket));
		memcpy(s->bucket, bucket, strlen(bucket));
		s->rt_mono = 0;
		s->rate = 0;
		pthread_mutex_unlock(&p->claim);
		return s;
	}
	return NULL;
}

/* A permit of the slot's lease for a request of bucket under limit,
 * without a lock: 1 and st filled, or 0 (no lease, none left, it ended, or
 * it was granted under a higher limit than this request's). */
static int
permits_take_local(struct permits_slot *s, const char *bucket, long limit,
    struct ratelimit_status *st)
{
	uint64_t cur = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
	long granted, used, lim;
	int64_t until, oldest, sec;
	uint32_t left;

	for (;;) {
		if ((left = (uint32_t)(cur & PERMITS_LEFT_MASK)) == 0 ||
		    strncmp(s->bucket, bucket, PERMITS_BUCKET_MAX) != 0)
			return 0;
		/* The lease the tag names: changing it changes the tag, so
		 * the exchange below fails if these were being rewritten. */
		until = LOAD(s->until);
		lim = LOAD(s->limit);
		granted = LOAD(s->granted);
		used = LOAD(s->used);
		oldest = LOAD(s->oldest_ms);
		sec = LOAD(s->sec_ms);
		if (timeutil_mono_ms() >= until || limit < lim)
			return 0;
		if (__atomic_compare_exchange_n(&s->state, &cur, cur - 1, 0,
		    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			break;
	}
	ratelimit_status_lease(limit, used, oldest, sec,
	    granted - (long)left + 1, st);
	return 1;
}

/* One round trip of the locked slot s: gives back its lease (or finishes
 * the round trip left unfinished), and with limit > 0 asks for a new one,
 * published with its first permit taken for the caller. DB_OK with *res,
 * or the error (the slot's next round trip finishes this one). */
static enum db_err
permits_round_trip(struct permits *p, struct permits_slot *s,
    struct db *db, long limit, struct ratelimit_lease_res *res)
{
	struct ratelimit_lease_req q;
	uint64_t old, closed;
	int64_t t0 = timeutil_mono_ms(), meas;
	long consumed = limit > 0;	/* the caller's permit */
	enum db_err e;

	if (!s->op) {
		/* Closed before anything goes back: from here on no request
		 * takes a permit of it. In this order, so that a process
		 * dying anywhere in it leaves a round trip to finish that
		 * gives back at most what was not used. */
		permits_busy(s, 1);
		__atomic_store_n(&s->op_ret, s->seq, __ATOMIC_SEQ_CST);
		__atomic_store_n(&s->op_unused, 0, __ATOMIC_SEQ_CST);
		__atomic_store_n(&s->op, 1, __ATOMIC_SEQ_CST);
		closed = __atomic_load_n(&s->state, __ATOMIC_SEQ_CST) &
		    ~PERMITS_LEFT_MASK;
		old = __atomic_exchange_n(&s->state, closed, __ATOMIC_SEQ_CST);
		if (s->seq) {
			__atomic_store_n(&s->op_unused,
			    (long)(old & PERMITS_LEFT_MASK), __ATOMIC_SEQ_CST);
			consumed += s->granted - s->op_unused;
		}
		s->seq = 0;
	} else
		permits_busy(s, 1);	/* finishing a failed one */
	if (s->rt_mono > 0) {
		meas = (int64_t)consumed * 1000 / (t0 > s->rt_mono ?
		    t0 - s->rt_mono : 1);
		s->rate = (long)((s->rate + (meas > PERMITS_RATE_MAX ?
		    PERMITS_RATE_MAX : meas)) / 2);
	}
	s->rt_mono = t0;
	s->op_new = limit > 0 ? __atomic_fetch_add(&p->next_seq, 1,
	    __ATOMIC_SEQ_CST) : 0;
	memset(&q, 0, sizeof(q));
	q.bucket = s->bucket;
	q.holder = p->holder;
	q.ret_seq = s->op_ret;
	q.ret_unused = s->op_unused;
	q.void_seq = s->void_to;
	q.new_seq = s->op_new;
	q.limit = limit;
	q.rate = s->rate;
	q.max = LOAD(p->max);
	t0 = timeutil_mono_ms();
	if ((e = ratelimit_lease(db, &q, res)) != DB_OK) {
		if (s->op_new > s->void_to)
			s->void_to = s->op_new;
		s->op_new = 0;
		return e;
	}
	log_debug("event=permits_lease bucket=%s returned=%ld voided_to=%llu "
	    "granted=%ld used=%ld ms=%lld", s->bucket, s->op_unused,
	    (unsigned long long)s->void_to, res->granted, res->used,
	    (long long)(timeutil_mono_ms() - t0));
	s->void_to = 0;
	if (res->granted > 0) {
		STORE(s->sec_ms, res->db_now_ms / 1000 * 1000);
		STORE(s->until, t0 + (s->sec_ms + 1000 - res->db_now_ms) - 2 -
		    PERMITS_MARGIN_MS);
		STORE(s->limit, limit);
		STORE(s->granted, res->granted);
		STORE(s->used, res->used);
		STORE(s->oldest_ms, res->oldest_ms);
		s->seq = s->op_new;
		__atomic_store_n(&s->state, PERMITS_TAG(s->seq) |
		    (uint64_t)(res->granted - 1), __ATOMIC_RELEASE);
	}
	s->op = 0;
	s->op_new = 0;
	permits_busy(s, 0);
	return DB_OK;
}


enum db_err
permits_take(struct permits *p, struct db *db, const char *bucket,
    long limit, struct ratelimit_status *st, int *changed)
{
	struct ratelimit_lease_res res;
	struct permits_slot *s;
	int64_t waited = 0, wait;
	enum db_err e;
	int tries = 0;

	*changed = 0;
	if (LOAD(p->max) <= 1 || strlen(bucket) >= PERMITS_BUCKET_MAX) {
		*changed = 1;
		return ratelimit_check(db, bucket, limit, 1,
		    timeutil_now_ms(), st);
	}
	if ((s = permits_find(p, bucket)) != NULL &&
	    permits_take_local(s, bucket, limit, st))
		return DB_OK;
	for (;;) {
		if ((s = permits_claim(p, bucket)) == NULL) {
			*changed = 1;
			return ratelimit_check(db, bucket, limit, 1,
			    timeutil_now_ms(), st);
		}
		/* another responder's round trip may have come back */
		if (permits_take_local(s, bucket, limit, st)) {
			permits_unlock(s);
			return DB_OK;
		}
		e = permits_round_trip(p, s, db, limit, &res);
		permits_unlock(s);
		if (e == DB_OK) {
			*changed = 1;
			ratelimit_status_of(limit, &res, timeutil_now_ms(), st);
		}
		if (e == DB_ERR_RETRY && ++tries < DB_TX_TRIES)
			continue;
		if (e != DB_OK || res.granted > 0)
			return e;
		/* Full. Permits other hosts leased of this second or the
		 * last may still come back: they end with their second, and
		 * their keepers give them back soon after (a keeper that is
		 * late is waited for, a step at a time). */
		if (res.others == 0)
			break;
		wait = (res.others_sec + 1) * 1000 + PERMITS_WAIT_GRACE_MS -
		    res.db_now_ms;
		if (wait < PERMITS_WAIT_STEP_MS)
			wait = PERMITS_WAIT_STEP_MS;
		if (wait > PERMITS_WAIT_MAX_MS - waited)
			wait = PERMITS_WAIT_MAX_MS - waited;
		if (wait <= 0)
			break;
		log_debug("event=permits_wait bucket=%s others=%ld ms=%lld",
		    bucket, res.others, (long long)wait);
		timeutil_sleep_ms(wait);
		waited += wait;
	}
	return DB_OK;		/* refused: st says so */
}

/* A slot's mark: its place and version; a bucket without a slot's: how
 * many slots were given to other buckets (so that a bucket that had a slot
 * and lost it has another mark). */
#define PERMITS_MARK(p, s, v) \
	((uint64_t)((s) - (p)->slot + 1) << 32 | (uint32_t)(v))

uint64_t
permits_mark(struct permits *p, const char *bucket)
{
	struct permits_slot *s;
	uint32_t v;
	int tries;

	for (tries = 0; tries < 3; tries++) {
		if ((s = permits_find(p, bucket)) == NULL)
			return __atomic_load_n(&p->released, __ATOMIC_SEQ_CST);
		v = __atomic_load_n(&s->version, __ATOMIC_SEQ_CST);
		/* A round trip under way: its end is waited for (the slot's
		 * lock is held through it), and the version read under the
		 * lock, where no round trip runs: odd there only for one that
		 * failed. Read after the unlock, it could be the next round
		 * trip's, under way, taken for a failed one. */
		if (v & 1) {
			if (permits_lock(p, s, 0) != 0)
				return PERMITS_MARK_STALE;
			v = __atomic_load_n(&s->version, __ATOMIC_SEQ_CST);
			permits_unlock(s);
		}
		if (strncmp(s->bucket, bucket, PERMITS_BUCKET_MAX) == 0)
			return PERMITS_MARK(p, s, v);
	}
	return PERMITS_MARK_STALE;
}

long
permits_unused(struct permits *p, const char *bucket, int64_t now_ms,
    uint64_t mark)
{
	struct permits_slot *s = permits_find(p, bucket);
	uint32_t v;
	uint64_t cur, seq;
	int64_t sec;

	if (s == NULL)
		return mark == __atomic_load_n(&p->released,
		    __ATOMIC_SEQ_CST) ? 0 : -1;
	v = __atomic_load_n(&s->version, __ATOMIC_SEQ_CST);
	if (PERMITS_MARK(p, s, v) != mark)
		return -1;
	/* A round trip that failed is not finished: whether the read
	 * counts its lease is not known. Reported as read (at most the
	 * lease's permits too many). */
	if (v & 1)
		return 0;
	cur = __atomic_load_n(&s->state, __ATOMIC_SEQ_CST);
	seq = LOAD(s->seq);
	sec = LOAD(s->sec_ms);
	if (strncmp(s->bucket, bucket, PERMITS_BUCKET_MAX) != 0 ||
	    __atomic_load_n(&s->version, __ATOMIC_SEQ_CST) != v)
		return -1;
	if (seq == 0 || (cur >> 32) != (uint32_t)seq ||
	    sec / 1000 <= ratelimit_window_start(now_ms))
		return 0;
	return (long)(cur & PERMITS_LEFT_MASK);
}

long
permits_sweep(struct permits *p, struct db *db, int all,
    void (*changed)(const char *, void *), void *arg)
{
	struct ratelimit_lease_res res;
	struct permits_slot *s;
	int64_t now = timeutil_mono_ms(), next = now + 1000, due;
	size_t i;
	int failed = 0;

	for (i = 0; i < PERMITS_SLOTS && !failed; i++) {
		s = &p->slot[i];
		if (!LOAD(s->op) && LOAD(s->seq) == 0)
			continue;
		due = LOAD(s->until) + PERMITS_GRACE_MS;
		if (!all && !LOAD(s->op) && now < due) {
			if (due < next)
				next = due;
			continue;
		}
		/* a responder holding it is doing a round trip already */
		if (permits_lock(p, s, 1) != 0)
			continue;
		if (s->op || (s->seq != 0 && (all || now >= s->until +
		    PERMITS_GRACE_MS))) {
			if (permits_round_trip(p, s, db, 0, &res) != DB_OK)
				failed = 1;
			else if (changed != NULL)
				changed(s->bucket, arg);
		}
		permits_unlock(s);
	}
	if (failed)
		return -1;
	now = timeutil_mono_ms();
	return next > now ? (long)(next - now) : 0;
}
