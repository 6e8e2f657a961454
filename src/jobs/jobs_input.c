/* jobs_input.c: the unique entries of a bulk or batch job (jobs.h), built
 * one entry at a time while the request body is read (jobs_body.c), so
 * that the list never exists twice.
 *
 * A unique entry is stored once, in an arena of blocks: its text as given
 * (trimmed, cut to fit job_emails.email), then its A-label domain unless
 * that is how the text ends. One strset of entry numbers finds repeats in
 * two ways: by the lower-cased text among the kept spellings (a repeated
 * spelling costs no address parse), then by the normal form (another
 * spelling of a kept address: case, Unicode forms of the domain, U-label
 * or A-label), which is not stored: when it is not simply the lower-cased
 * text, a candidate is compared with it by parsing the kept text again. */
#include "jobs/jobs.h"
#include "engine/addr.h"
#include "util/grow.h"
#include "util/strset.h"
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Longest entry kept of one input line, NUL included: job_emails.email is
 * VARCHAR(320), and a longer value fails the whole INSERT in strict mode.
 * Longer entries are cut at a character boundary and trimmed again (they
 * are then not addresses: an address is at most 254 octets). */
#define JOBS_INPUT_LINE_MAX 321
#define JOBS_INPUT_BLOCK_FIRST 4096
#define JOBS_INPUT_BLOCK_MAX (1024 * 1024)

/* Member kinds, the low two bits of a strset id (the entry's index is the
 * rest): its lower-cased text, its normal form, or both when they are the
 * same string (always so for an entry that is not an address). */
#define JOBS_INPUT_SPELLING 1u
#define JOBS_INPUT_FORM 2u
#define JOBS_INPUT_KINDS 3u
#define JOBS_INPUT_INDEX_MAX (UINT32_MAX >> 2)

struct jobs_input_block {
	struct jobs_input_block *next;
	size_t		 used, cap;
	char		 data[];
};

struct jobs_input_store {
	struct jobs_input_block *blocks;
	struct strset	*seen;		/* NULL after jobs_input_end */
	const char	*sandbox;
	size_t		 max, ecap, dcap;
	size_t		 arena;		/* bytes of the blocks */
	size_t		 memory_max;	/* jobs_input_bytes may not pass it */
};

struct jobs_input_probe {
	const struct jobs_input *in;
	unsigned	 kind;
};

static char jobs_input_none[1];	/* the domain of an entry that is no address */

int
jobs_input_init(struct jobs_input *in, size_t max, const char *sandbox)
{
	memset(in, 0, sizeof(*in));
	if ((in->store = calloc(1, sizeof(*in->store))) == NULL)
		return -1;
	if ((in->store->seen = strset_new(0)) == NULL) {
		free(in->store);
		in->store = NULL;
		return -1;
	}
	in->store->max = max < JOBS_INPUT_INDEX_MAX ? max :
	    JOBS_INPUT_INDEX_MAX;
	in->store->sandbox = sandbox;
	in->store->memory_max = SIZE_MAX;
	return 0;
}

void
jobs_input_set_memory_max(struct jobs_input *in, size_t bytes)
{
	if (in->store != NULL)
		in->store->memory_max = bytes;
}

void
jobs_input_free(struct jobs_input *in)
{
	struct jobs_input_block *b, *next;

	if (in->store != NULL) {
		for (b = in->store->blocks; b != NULL; b = next) {
			next = b->next;
			free(b);
		}
		strset_free(in->store->seen);
		free(in->store);
	}
	free(in->emails);
	free(in->domains);
	memset(in, 0, sizeof(*in));
}

/* The size of the block that n more bytes need, 0 when they fit. */
static size_t
jobs_input_block_size(const struct jobs_input_store *st, size_t n)
{
	const struct jobs_input_block *b = st->blocks;
	size_t cap;

	if (b != NULL && b->cap - b->used >= n)
		return 0;
	cap = b == NULL ? JOBS_INPUT_BLOCK_FIRST : b->cap * 2;
	if (cap > JOBS_INPUT_BLOCK_MAX)
		cap = JOBS_INPUT_BLOCK_MAX;
	return cap < n ? n : cap;
}

static char *
jobs_input_alloc(struct jobs_input_store *st, size_t n)
{
	struct jobs_input_block *b = st->blocks;
	size_t cap;

	if ((cap = jobs_input_block_size(st, n)) > 0) {
		if ((b = malloc(sizeof(*b) + cap)) == NULL)
			return NULL;
		st->arena += sizeof(*b) + cap;
		b->next = st->blocks;
		b->used = 0;
		b->cap = cap;
		st->blocks = b;
	}
	b->used += n;
	return b->data + b->used - n;
}

/* strset_same_fn: is member id, looked up as probe->kind, the string s? */
static int
jobs_input_same(void *arg, uint32_t id, const char *s, size_t n)
{
	const struct jobs_input_probe *p = arg;
	struct addr a;
	const char *e;
	size_t len, i;

	if ((id & p->kind) == 0)
		return 0;
	e = p->in->emails[id >> 2];
	if ((id & JOBS_INPUT_KINDS) == JOBS_INPUT_FORM)	/* an address */
		return addr_parse(e, &a) == ADDR_OK &&
		    strlen(a.normalised) == n && memcmp(a.normalised, s, n) == 0;
	len = strlen(e);
	if (len != n)
		return 0;
	for (i = 0; i < n; i++)
		if (tolower((unsigned char)e[i]) != (unsigned char)s[i])
			return 0;
	return 1;
}

/* Trims s[0..len) and cuts it to fit job_emails.email; *b, *e delimit the
 * entry (empty when blank). */
static void
jobs_input_trim(const char *s, size_t len, size_t *b, size_t *e)
{
	for (*b = 0; *b < len && isspace((unsigned char)s[*b]); (*b)++)
		;
	for (*e = len; *e > *b && isspace((unsigned char)s[*e - 1]); (*e)--)
		;
	if (*e - *b < JOBS_INPUT_LINE_MAX)
		return;
	/* Not inside a UTF-8 sequence, no space at the end (s[*b] is
	 * neither a continuation byte nor a space). */
	*e = *b + JOBS_INPUT_LINE_MAX - 1;
	while (*e > *b + 1 && ((unsigned char)s[*e] & 0xC0) == 0x80)
		(*e)--;
	while (*e > *b + 1 && isspace((unsigned char)s[*e - 1]))
		(*e)--;
}

enum jobs_err
jobs_input_add(struct jobs_input *in, const char *s, size_t len)
{
	struct jobs_input_store *st = in->store;
	struct jobs_input_probe probe = { in, JOBS_INPUT_SPELLING };
	char text[JOBS_INPUT_LINE_MAX], low[JOBS_INPUT_LINE_MAX];
	const char *form, *at, *nul;
	size_t b, e, i, tlen, flen, need;
	uint32_t hlow, hform, id;
	unsigned kinds;
	struct addr a;
	int isaddr;
	char *p;

	if ((nul = memchr(s, '\0', len)) != NULL)
		len = (size_t)(nul - s);
	jobs_input_trim(s, len, &b, &e);
	if (e == b)
		return JOBS_OK;	/* blank entries are not addresses */
	tlen = e - b;
	memcpy(text, s + b, tlen);
	text[tlen] = '\0';
	for (i = 0; i <= tlen; i++)
		low[i] = (char)tolower((unsigned char)text[i]);
	hlow = strset_hash(low, tlen);
	if (strset_find(st->seen, hlow, low, tlen, jobs_input_same, &probe,
	    &id)) {
		in->duplicates++;
		return JOBS_OK;
	}
	isaddr = addr_parse(text, &a) == ADDR_OK;
	form = isaddr ? a.normalised : low;
	flen = strlen(form);
	kinds = JOBS_INPUT_KINDS;
	hform = hlow;
	if (flen != tlen || memcmp(form, low, tlen) != 0) {
		kinds = JOBS_INPUT_SPELLING;
		hform = strset_hash(form, flen);
	}
	probe.kind = JOBS_INPUT_FORM;
	if (strset_find(st->seen, hform, form, flen, jobs_input_same, &probe,
	    &id)) {
		in->duplicates++;
		return JOBS_OK;
	}
	if (in->n >= st->max)
		return JOBS_TOO_MANY;
	/* The domain is how the text ends when it is written in lower-case
	 * A-labels already, as in most lists. */
	at = isaddr ? strrchr(text, '@') : NULL;
	if (at != NULL && strcmp(at + 1, a.ascii_domain) != 0)
		at = NULL;
	need = tlen + 1 + (isaddr && at == NULL ? strlen(a.ascii_domain) + 1 :
	    0);
	if (jobs_input_bytes(in) + jobs_input_block_size(st, need) +
	    strset_grow_bytes(st->seen, kinds == JOBS_INPUT_KINDS ? 1 : 2) +
	    (in->n == st->ecap ? 4 * (st->ecap ? st->ecap : 64) *
	    sizeof(char *) : 0) > st->memory_max)
		return JOBS_TOO_BIG;
	if (grow(&in->emails, in->n, &st->ecap, sizeof(*in->emails), 64) ==
	    -1 || grow(&in->domains, in->n, &st->dcap, sizeof(*in->domains),
	    64) == -1)
		return JOBS_NOMEM;
	if ((p = jobs_input_alloc(st, need)) == NULL)
		return JOBS_NOMEM;
	memcpy(p, text, tlen + 1);
	in->emails[in->n] = p;
	in->domains[in->n] = jobs_input_none;
	p += tlen + 1;
	if (at != NULL)
		in->domains[in->n] = in->emails[in->n] + (at + 1 - text);
	else if (isaddr) {
		memcpy(p, a.ascii_domain, strlen(a.ascii_domain) + 1);
		in->domains[in->n] = p;
	}
	id = (uint32_t)in->n << 2;
	if (strset_insert(st->seen, hlow, id | kinds) == -1 ||
	    (kinds != JOBS_INPUT_KINDS &&
	    strset_insert(st->seen, hform, id | JOBS_INPUT_FORM) == -1))
		return JOBS_NOMEM;
	if (isaddr && strcmp(a.ascii_domain, st->sandbox) == 0)
		in->sandbox++;
	if (!isaddr)
		in->invalid++;
	in->n++;
	return JOBS_OK;
}

long long
jobs_input_cost(const struct jobs_input *in, int sandbox_free)
{
	return (long long)(in->n - in->invalid - (sandbox_free ? in->sandbox :
	    0));
}

size_t
jobs_input_bytes(const struct jobs_input *in)
{
	const struct jobs_input_store *st = in->store;

	if (st == NULL)
		return 0;
	return sizeof(*st) + st->arena + (st->ecap + st->dcap) *
	    sizeof(char *) + (st->seen ? strset_bytes(st->seen) : 0);
}

enum jobs_err
jobs_input_end(struct jobs_input *in)
{
	if (in->n == 0) {
		jobs_input_free(in);
		return JOBS_EMPTY;
	}
	strset_free(in->store->seen);
	in->store->seen = NULL;
	return JOBS_OK;
}
