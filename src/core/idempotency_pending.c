/* idempotency_pending.c: the Idempotency-Key entries left to abandon
 * (idempotency_pending.h). One robust process-shared mutex guards the
 * table; it is held only to copy or change entries, never across a
 * statement, so a flush with the database out of reach holds up nobody.
 * Two processes flushing the same entry both run its DELETE: the second
 * finds nothing, which is as good. */
#include "core/idempotency_pending.h"
#include "util/ids.h"
#include "util/log.h"
#include "util/shm.h"
#include "util/timeutil.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct idempotency_pending_entry {
	uint64_t	seq;		/* 0: a free place */
	int		sure;
	int64_t		since;		/* timeutil_mono_ms when kept */
	char		account[IDS_MAX];
	char		key[IDEMPOTENCY_KEY_MAX + 1];
	struct idempotency_claim claim;
};

struct idempotency_pending {
	pthread_mutex_t	lock;
	size_t		count;
	uint64_t	next_seq;
	struct idempotency_pending_entry e[IDEMPOTENCY_PENDING_MAX];
};

struct idempotency_pending *
idempotency_pending_create(void)
{
	pthread_mutexattr_t a;
	struct idempotency_pending *p;
	int ok;

	if ((p = shm_alloc(sizeof(*p))) == NULL)
		return NULL;
	if (shm_mutexattr(&a) == -1) {
		shm_free(p, sizeof(*p));
		return NULL;
	}
	ok = pthread_mutex_init(&p->lock, &a) == 0;
	pthread_mutexattr_destroy(&a);
	if (!ok) {
		shm_free(p, sizeof(*p));
		return NULL;
	}
	p->next_seq = 1;
	return p;
}

void
idempotency_pending_free(struct idempotency_pending *p)
{
	shm_free(p, sizeof(*p));
}

/* A process that died holding the lock left the table whole: each
 * change is one entry's, made before the count (a count one off is a
 * hint only). */
static void
idempotency_pending_lock(struct idempotency_pending *p)
{
	(void)shm_mutex_lock(&p->lock, 0);
}

int
idempotency_pending_add(struct idempotency_pending *p, const char *account,
    const char *key, const struct idempotency_claim *claim, int sure)
{
	struct idempotency_pending_entry *slot = NULL, *e;
	size_t i;

	if (p == NULL || strlen(account) >= sizeof(slot->account) ||
	    strlen(key) >= sizeof(slot->key))
		return -1;
	idempotency_pending_lock(p);
	for (i = 0; i < IDEMPOTENCY_PENDING_MAX && slot == NULL; i++)
		if (p->e[i].seq == 0)
			slot = &p->e[i];
	/* full: a sure entry takes the place of the oldest unsure one */
	for (i = 0; slot == NULL && sure && i < IDEMPOTENCY_PENDING_MAX;
	    i++) {
		e = &p->e[i];
		if (!e->sure && (slot == NULL || e->seq < slot->seq))
			slot = e;
	}
	if (slot == NULL) {
		pthread_mutex_unlock(&p->lock);
		return -1;
	}
	if (slot->seq == 0)
		__atomic_add_fetch(&p->count, 1, __ATOMIC_RELAXED);
	slot->sure = sure;
	slot->since = timeutil_mono_ms();
	memcpy(slot->account, account, strlen(account) + 1);
	memcpy(slot->key, key, strlen(key) + 1);
	slot->claim = *claim;
	slot->seq = p->next_seq++;
	pthread_mutex_unlock(&p->lock);
	return 0;
}

size_t
idempotency_pending_count(const struct idempotency_pending *p)
{
	return p == NULL ? 0 : __atomic_load_n(&p->count, __ATOMIC_RELAXED);
}

/* Forgets the entry copied as e, unless its place was given to another
 * since. */
static void
idempotency_pending_forget(struct idempotency_pending *p,
    const struct idempotency_pending_entry *e)
{
	size_t i;

	idempotency_pending_lock(p);
	for (i = 0; i < IDEMPOTENCY_PENDING_MAX; i++)
		if (p->e[i].seq == e->seq) {
			p->e[i].seq = 0;
			__atomic_sub_fetch(&p->count, 1, __ATOMIC_RELAXED);
			break;
		}
	pthread_mutex_unlock(&p->lock);
}

long
idempotency_pending_flush(struct idempotency_pending *p, struct db *db)
{
	struct idempotency_pending_entry *copy;
	size_t i, n = 0;
	long done = 0;
	enum db_err e;

	if (idempotency_pending_count(p) == 0)
		return 0;
	if ((copy = malloc(sizeof(p->e))) == NULL)
		return 0;
	idempotency_pending_lock(p);
	for (i = 0; i < IDEMPOTENCY_PENDING_MAX; i++)
		if (p->e[i].seq != 0)
			copy[n++] = p->e[i];
	pthread_mutex_unlock(&p->lock);
	for (i = 0; i < n; i++) {
		e = idempotency_abandon(db, copy[i].account, copy[i].key,
		    &copy[i].claim);
		if (e == DB_ERR_CONNECT) {
			done = -1;
			break;
		}
		if (e == DB_ERR_RETRY)
			continue;
		if (e == DB_OK)
			log_info("event=idempotency_abandoned account=%s "
			    "sure=%d late_ms=%lld", copy[i].account,
			    copy[i].sure,
			    (long long)(timeutil_mono_ms() - copy[i].since));
		else
			log_error("event=idempotency_abandon_failed account=%s "
			    "error=\"%s\"", copy[i].account, db_error(db));
		idempotency_pending_forget(p, &copy[i]);
		done += e == DB_OK;
	}
	free(copy);
	return done;
}
