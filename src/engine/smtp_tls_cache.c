/* smtp_tls_cache.c: TLS session data kept for resumption, per host name,
 * port and egress route (smtp_tls_cache.h): a hash table of chained
 * entries and a list from the most to the least recently used; a full
 * cache drops its least recently used entry, a look-up drops an expired
 * one. */
#include "engine/smtp_tls_cache.h"
#include "util/khash.h"
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SMTP_TLS_CACHE_KEY_MAX	600	/* host (253), port, route (<= 300) */

struct smtp_tls_entry {
	struct smtp_tls_entry *chain;		/* same bucket */
	struct smtp_tls_entry *newer, *older;	/* use order */
	uint64_t	 hash;
	char		*key;
	unsigned char	*data;
	size_t		 len;
	int		 verified;
	int64_t		 expires;
};

struct smtp_tls_cache {
	pthread_mutex_t	 lock;
	struct smtp_tls_entry **bucket;	/* made at the first put */
	size_t		 nbucket;	/* a power of two */
	struct smtp_tls_entry *newest, *oldest;
	size_t		 n, max;
};

struct smtp_tls_cache *
smtp_tls_cache_new(size_t max)
{
	struct smtp_tls_cache *c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->max = max ? max : SMTP_TLS_CACHE_MAX;
	for (c->nbucket = 16; c->nbucket < c->max; c->nbucket <<= 1)
		;
	pthread_mutex_init(&c->lock, NULL);
	return c;
}

static void
smtp_tls_cache_entry_free(struct smtp_tls_entry *e)
{
	free(e->key);
	free(e->data);
	free(e);
}

void
smtp_tls_cache_free(struct smtp_tls_cache *c)
{
	struct smtp_tls_entry *e, *next;

	if (c == NULL)
		return;
	for (e = c->newest; e != NULL; e = next) {
		next = e->older;
		smtp_tls_cache_entry_free(e);
	}
	free(c->bucket);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* "host port route", the host name in lower case. -1 when it does not
 * fit or an argument is missing. */
static int
smtp_tls_cache_key(char *k, size_t size, const char *host, unsigned port,
    const char *route, uint64_t *hash)
{
	size_t i;
	int n;

	if (host == NULL || *host == '\0')
		return -1;
	n = snprintf(k, size, "%s %u %s", host, port,
	    route != NULL ? route : "direct");
	if (n < 0 || (size_t)n >= size)
		return -1;
	for (i = 0; k[i] != ' '; i++)
		k[i] = (char)tolower((unsigned char)k[i]);
	/* the keyed hash: host names come from DNS, anyone's to choose */
	*hash = khash(k, (size_t)n);
	return 0;
}

static struct smtp_tls_entry **
smtp_tls_cache_slot(struct smtp_tls_cache *c, const char *k, uint64_t hash)
{
	struct smtp_tls_entry **p;

	if (c->bucket == NULL)
		return NULL;
	for (p = &c->bucket[hash & (c->nbucket - 1)]; *p != NULL;
	    p = &(*p)->chain)
		if ((*p)->hash == hash && strcmp((*p)->key, k) == 0)
			return p;
	return NULL;
}

static void
smtp_tls_cache_unlink(struct smtp_tls_cache *c, struct smtp_tls_entry *e)
{
	if (e->newer != NULL)
		e->newer->older = e->older;
	else
		c->newest = e->older;
	if (e->older != NULL)
		e->older->newer = e->newer;
	else
		c->oldest = e->newer;
	e->newer = e->older = NULL;
}

static void
smtp_tls_cache_push(struct smtp_tls_cache *c, struct smtp_tls_entry *e)
{
	e->older = c->newest;
	e->newer = NULL;
	if (c->newest != NULL)
		c->newest->newer = e;
	c->newest = e;
	if (c->oldest == NULL)
		c->oldest = e;
}

/* Takes the entry at *slot out of the table and frees it. */
static void
smtp_tls_cache_remove(struct smtp_tls_cache *c, struct smtp_tls_entry **slot)
{
	struct smtp_tls_entry *e = *slot;

	*slot = e->chain;
	smtp_tls_cache_unlink(c, e);
	smtp_tls_cache_entry_free(e);
	c->n--;
}

static void
smtp_tls_cache_remove_entry(struct smtp_tls_cache *c,
    struct smtp_tls_entry *e)
{
	struct smtp_tls_entry **p;

	for (p = &c->bucket[e->hash & (c->nbucket - 1)]; *p != e;
	    p = &(*p)->chain)
		;
	smtp_tls_cache_remove(c, p);
}

int
smtp_tls_cache_put(struct smtp_tls_cache *c, const char *host, unsigned port,
    const char *route, const void *data, size_t len, int verified,
    int64_t expires_ms, int64_t now_ms)
{
	char k[SMTP_TLS_CACHE_KEY_MAX];
	struct smtp_tls_entry **slot, *e;
	uint64_t hash;
	unsigned char *copy;

	if (c == NULL || data == NULL || len == 0 ||
	    len > SMTP_TLS_CACHE_DATA_MAX || expires_ms <= now_ms ||
	    smtp_tls_cache_key(k, sizeof(k), host, port, route, &hash) == -1)
		return -1;
	if (expires_ms > now_ms + SMTP_TLS_CACHE_TTL_MS)
		expires_ms = now_ms + SMTP_TLS_CACHE_TTL_MS;
	if ((copy = malloc(len)) == NULL)
		return -1;
	memcpy(copy, data, len);
	pthread_mutex_lock(&c->lock);
	if (c->bucket == NULL && (c->bucket = calloc(c->nbucket,
	    sizeof(*c->bucket))) == NULL)
		goto fail;
	if ((slot = smtp_tls_cache_slot(c, k, hash)) != NULL) {
		e = *slot;
		free(e->data);
		smtp_tls_cache_unlink(c, e);
	} else {
		if (c->n >= c->max)
			smtp_tls_cache_remove_entry(c, c->oldest);
		if ((e = calloc(1, sizeof(*e))) == NULL)
			goto fail;
		if ((e->key = strdup(k)) == NULL) {
			free(e);
			goto fail;
		}
		e->hash = hash;
		e->chain = c->bucket[hash & (c->nbucket - 1)];
		c->bucket[hash & (c->nbucket - 1)] = e;
		c->n++;
	}
	e->data = copy;
	e->len = len;
	e->verified = verified != 0;
	e->expires = expires_ms;
	smtp_tls_cache_push(c, e);
	pthread_mutex_unlock(&c->lock);
	return 0;
fail:
	pthread_mutex_unlock(&c->lock);
	free(copy);
	return -1;
}

int
smtp_tls_cache_get(struct smtp_tls_cache *c, const char *host, unsigned port,
    const char *route, int64_t now_ms, void **data, size_t *len,
    int *verified)
{
	char k[SMTP_TLS_CACHE_KEY_MAX];
	struct smtp_tls_entry **slot, *e;
	uint64_t hash;
	int r = 0;

	*data = NULL;
	*len = 0;
	*verified = 0;
	if (c == NULL ||
	    smtp_tls_cache_key(k, sizeof(k), host, port, route, &hash) == -1)
		return 0;
	pthread_mutex_lock(&c->lock);
	if ((slot = smtp_tls_cache_slot(c, k, hash)) != NULL) {
		e = *slot;
		if (e->expires <= now_ms)
			smtp_tls_cache_remove(c, slot);
		else if ((*data = malloc(e->len)) == NULL)
			r = -1;
		else {
			memcpy(*data, e->data, e->len);
			*len = e->len;
			*verified = e->verified;
			smtp_tls_cache_unlink(c, e);
			smtp_tls_cache_push(c, e);
			r = 1;
		}
	}
	pthread_mutex_unlock(&c->lock);
	return r;
}

void
smtp_tls_cache_drop(struct smtp_tls_cache *c, const char *host,
    unsigned port, const char *route)
{
	char k[SMTP_TLS_CACHE_KEY_MAX];
	struct smtp_tls_entry **slot;
	uint64_t hash;

	if (c == NULL ||
	    smtp_tls_cache_key(k, sizeof(k), host, port, route, &hash) == -1)
		return;
	pthread_mutex_lock(&c->lock);
	if ((slot = smtp_tls_cache_slot(c, k, hash)) != NULL)
		smtp_tls_cache_remove(c, slot);
	pthread_mutex_unlock(&c->lock);
}

size_t
smtp_tls_cache_count(struct smtp_tls_cache *c)
{
	size_t n;

	if (c == NULL)
		return 0;
	pthread_mutex_lock(&c->lock);
	n = c->n;
	pthread_mutex_unlock(&c->lock);
	return n;
}
