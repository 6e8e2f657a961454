/* lists.c: loads the disposable, free, role, provider and typo-trap lists
 * into hash sets (open addressing, linear probing, strings in one pool) and
 * answers membership and did-you-mean questions. See lists.h for the file
 * format and the matching rules. */
#include "engine/lists.h"
#include "engine/addr.h"
#include "engine/providers.h"
#include "engine/smtp_rules.h"
#include "util/khash.h"
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *const lists_kind_names[LISTS_KIND__MAX] = {
	"disposable", "free", "role", "provider", "typo_trap",
};

const char *const lists_kind_files[LISTS_KIND__MAX] = {
	"disposable_domains.txt", "free_domains.txt", "role_local_parts.txt",
	"provider_domains.txt", "typo_trap_domains.txt",
};

const char *const lists_err_names[LISTS_ERR__MAX] = {
	"ok", "nomem", "io", "arg",
};

#define LISTS_ENTRY_MAX		ADDR_ASCII_DOMAIN_MAX	/* longest entry */
#define LISTS_WARN_MAX		20	/* warning lines kept per load */

/*
 * A set of strings. The strings live back to back, NUL-terminated, in
 * pool, in the order they were first added (lists_suggest walks the
 * provider list in that order). slots is a power-of-two table of
 * {offset + 1, hash}; offset 0 marks an empty slot. The table is kept at
 * most half full, so a miss ends after a few probes.
 */
struct lists_slot {
	uint32_t	 off;		/* pool offset + 1; 0: empty */
	uint32_t	 hash;
};

struct lists_set {
	char			*pool;
	size_t			 pool_len, pool_cap;
	struct lists_slot	*slots;
	size_t			 nslots;	/* 0 or a power of two */
	size_t			 count;
};

struct lists {
	struct lists_set	 set[LISTS_KIND__MAX];
	struct lists_set	 removed[LISTS_KIND__MAX];	/* local "!x" */
	size_t			 skipped;	/* invalid lines, all files */
	long			 load_ms;
};

/* State of one load: where warnings go and how many were written. */
struct lists_ctx {
	struct lists	*l;
	struct buf	*msg;
	size_t		 warnings;
};

static void lists_warn(struct lists_ctx *, const char *, ...)
    __attribute__((format(printf, 2, 3)));

static void
lists_warn(struct lists_ctx *c, const char *fmt, ...)
{
	va_list ap;

	c->warnings++;
	if (c->msg == NULL || c->warnings > LISTS_WARN_MAX)
		return;
	va_start(ap, fmt);
	buf_vprintf(c->msg, fmt, ap);
	va_end(ap);
	buf_putc(c->msg, '\n');
}

/* The keyed hash, 32 bits of it (what a slot keeps). */
static uint32_t
lists_hash(const char *s, size_t n)
{
	return (uint32_t)khash(s, n);
}

/* Slot of s: the one holding it, or the empty one where it would go. */
static struct lists_slot *
lists_set_find(const struct lists_set *st, const char *s, size_t n,
    uint32_t h)
{
	size_t i, mask = st->nslots - 1;
	struct lists_slot *sl;

	for (i = h & mask;; i = (i + 1) & mask) {
		sl = &st->slots[i];
		if (sl->off == 0)
			return sl;
		if (sl->hash == h && strncmp(st->pool + sl->off - 1, s, n) == 0 &&
		    st->pool[sl->off - 1 + n] == '\0')
			return sl;
	}
}

static int
lists_set_has(const struct lists_set *st, const char *s, size_t n)
{
	if (st->count == 0)
		return 0;
	return lists_set_find(st, s, n, lists_hash(s, n))->off != 0;
}

static enum lists_err
lists_set_grow(struct lists_set *st)
{
	struct lists_slot *old = st->slots, *sl;
	size_t i, oldn = st->nslots, n = oldn ? oldn * 2 : 64;

	if (n > SIZE_MAX / sizeof(*st->slots) || n > UINT32_MAX)
		return LISTS_ERR_NOMEM;
	if ((st->slots = calloc(n, sizeof(*st->slots))) == NULL) {
		st->slots = old;
		return LISTS_ERR_NOMEM;
	}
	st->nslots = n;
	for (i = 0; i < oldn; i++) {
		if (old[i].off == 0)
			continue;
		for (sl = &st->slots[old[i].hash & (n - 1)]; sl->off != 0;
		    sl = sl + 1 == st->slots + n ? st->slots : sl + 1)
			continue;
		*sl = old[i];
	}
	free(old);
	return LISTS_OK;
}

/* Adds s (n bytes, no NUL inside); an entry already there is kept. */
static enum lists_err
lists_set_add(struct lists_set *st, const char *s, size_t n)
{
	struct lists_slot *sl;
	uint32_t h = lists_hash(s, n);
	size_t cap;
	char *p;
	enum lists_err e;

	if ((st->count + 1) * 2 > st->nslots &&
	    (e = lists_set_grow(st)) != LISTS_OK)
		return e;
	sl = lists_set_find(st, s, n, h);
	if (sl->off != 0)
		return LISTS_OK;
	if (st->pool_len + n + 1 > st->pool_cap) {
		cap = st->pool_cap ? st->pool_cap : 4096;
		while (cap < st->pool_len + n + 1) {
			if (cap > UINT32_MAX / 2)
				return LISTS_ERR_NOMEM;
			cap *= 2;
		}
		if ((p = realloc(st->pool, cap)) == NULL)
			return LISTS_ERR_NOMEM;
		st->pool = p;
		st->pool_cap = cap;
	}
	memcpy(st->pool + st->pool_len, s, n);
	st->pool[st->pool_len + n] = '\0';
	sl->off = (uint32_t)st->pool_len + 1;
	sl->hash = h;
	st->pool_len += n + 1;
	st->count++;
	return LISTS_OK;
}

static void
lists_set_free(struct lists_set *st)
{
	free(st->pool);
	free(st->slots);
	memset(st, 0, sizeof(*st));
}

static size_t
lists_set_bytes(const struct lists_set *st)
{
	return st->pool_cap + st->nslots * sizeof(*st->slots);
}

static int
lists_is_domain_kind(enum lists_kind k)
{
	return k != LISTS_ROLE;
}

/*
 * An ASCII host name, lower-cased in place: letter-digit-hyphen labels of
 * 1 to 63 octets not starting or ending with '-', at least two labels, a
 * last label that is not all digits, one root dot dropped. A-labels are
 * taken as they are, without IDNA checks: the lists hold some (emoji
 * domains) that IDNA2008 refuses, harmless since lookups never see them.
 * Returns the length, or 0 when s is not such a name.
 */
static size_t
lists_ascii_domain(char *s, size_t n)
{
	size_t i, label = 0, labels = 1;
	int digits = 1;

	if (n > 0 && s[n - 1] == '.')
		n--;
	if (n == 0 || n > ADDR_ASCII_DOMAIN_MAX)
		return 0;
	for (i = 0; i < n; i++) {
		char ch = s[i];

		if (ch >= 'A' && ch <= 'Z')
			s[i] = ch = (char)(ch - 'A' + 'a');
		if (ch == '.') {
			if (label == 0 || s[i - 1] == '-')
				return 0;
			label = 0;
			labels++;
			digits = 1;
			continue;
		}
		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
		    ch == '-'))
			return 0;
		if (ch == '-' && label == 0)
			return 0;
		if (!(ch >= '0' && ch <= '9'))
			digits = 0;
		if (++label > ADDR_LABEL_MAX)
			return 0;
	}
	if (label == 0 || s[n - 1] == '-' || labels < 2 || digits)
		return 0;
	s[n] = '\0';
	return n;
}

/*
 * Checks and normalises one entry in place (it is already trimmed and not
 * empty). A domain is stored in the form lookups use: lower-case A-labels,
 * no root dot; one with U-labels goes through addr_domain_parse; a domain
 * of one label is refused (it would make a whole TLD disposable). A local part
 * is ASCII-lower-cased and may not hold spaces, control characters, '@'
 * or '"'. Returns the new length, or 0 when the entry is not valid.
 */
static size_t
lists_entry_clean(enum lists_kind k, char *s, size_t n)
{
	struct addr_domain d;
	size_t i, m;

	if (lists_is_domain_kind(k)) {
		if (n > ADDR_DOMAIN_MAX)
			return 0;
		if ((m = lists_ascii_domain(s, n)) > 0)
			return m;
		for (i = 0; i < n; i++)
			if ((unsigned char)s[i] >= 0x80)
				break;
		if (i == n || addr_domain_parsen(s, n, &d) != ADDR_OK)
			return 0;
		m = strlen(d.ascii);
		memcpy(s, d.ascii, m + 1);
		return m;
	}
	if (n > ADDR_LOCAL_MAX)
		return 0;
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch <= ' ' || ch == 0x7f || ch == '@' || ch == '"')
			return 0;
		if (ch >= 'A' && ch <= 'Z')
			s[i] = (char)(ch - 'A' + 'a');
	}
	return n;
}

/* Cuts a comment: '#' at the start of the line or after white space. */
static size_t
lists_cut_comment(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] == '#' && (i == 0 || s[i - 1] == ' ' ||
		    s[i - 1] == '\t'))
			return i;
	return n;
}

/*
 * Reads one file into kind k. local: the operator's file, where "!x"
 * removes x. A missing file is reported through *found = 0 and is no
 * error. Lines that are not valid entries are skipped with a warning.
 */
static enum lists_err
lists_read_file(struct lists_ctx *c, enum lists_kind k, const char *path,
    const char *shown, int local, int *found)
{
	FILE *f;
	char *line = NULL, *s;
	size_t cap = 0, n, lineno = 0;
	ssize_t len;
	int removal;
	enum lists_err e = LISTS_OK;

	*found = 0;
	if ((f = fopen(path, "re")) == NULL) {
		if (errno == ENOENT)
			return LISTS_OK;
		if (c->msg != NULL) {
			buf_reset(c->msg);
			buf_printf(c->msg, "%s: %s", path, strerror(errno));
		}
		return LISTS_ERR_IO;
	}
	*found = 1;
	while ((len = getline(&line, &cap, f)) != -1) {
		lineno++;
		n = lists_cut_comment(line, (size_t)len);
		s = line;
		while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' ||
		    s[n - 1] == '\r' || s[n - 1] == '\n'))
			n--;
		while (n > 0 && (*s == ' ' || *s == '\t')) {
			s++;
			n--;
		}
		if (n == 0)
			continue;
		removal = 0;
		if (*s == '!' && local) {
			removal = 1;
			s++;
			n--;
		}
		if (n == 0 || memchr(s, '\0', n) != NULL ||
		    (n = lists_entry_clean(k, s, n)) == 0) {
			c->l->skipped++;
			lists_warn(c, "%s:%zu: not a valid %s entry, skipped",
			    shown, lineno, k == LISTS_ROLE ? "local-part" :
			    "domain");
			continue;
		}
		e = lists_set_add(removal ? &c->l->removed[k] : &c->l->set[k],
		    s, n);
		if (e != LISTS_OK)
			break;
	}
	if (e == LISTS_OK && ferror(f)) {
		if (c->msg != NULL) {
			buf_reset(c->msg);
			buf_printf(c->msg, "%s: read error", path);
		}
		e = LISTS_ERR_IO;
	} else if (e == LISTS_ERR_NOMEM && c->msg != NULL) {
		buf_reset(c->msg);
		buf_printf(c->msg, "%s: out of memory", path);
	}
	free(line);
	fclose(f);
	return e;
}

/* Warns about files in local/ that no list reads (a misspelt name would
 * otherwise be silently ignored). */
static void
lists_check_local_dir(struct lists_ctx *c, const char *localdir)
{
	DIR *d;
	struct dirent *de;
	int k;

	if ((d = opendir(localdir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		for (k = 0; k < LISTS_KIND__MAX; k++)
			if (strcmp(de->d_name, lists_kind_files[k]) == 0)
				break;
		/* Read by another loader of the folder. */
		if (k == LISTS_KIND__MAX &&
		    strcmp(de->d_name, PROVIDERS_FILE) != 0 &&
		    strcmp(de->d_name, SMTP_RULES_FILE) != 0)
			lists_warn(c, "local/%s: not a list file name, "
			    "ignored", de->d_name);
	}
	closedir(d);
}

static long
lists_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

enum lists_err
lists_load(const char *dir, struct lists **out, struct buf *msg)
{
	struct lists_ctx c;
	struct buf path, shown;
	long t0 = lists_now_ms();
	enum lists_err e = LISTS_OK;
	int k, found;

	*out = NULL;
	if (msg != NULL)
		buf_reset(msg);
	if (dir == NULL || *dir == '\0') {
		if (msg != NULL)
			buf_puts(msg, "no lists folder given");
		return LISTS_ERR_ARG;
	}
	memset(&c, 0, sizeof(c));
	c.msg = msg;
	if ((c.l = calloc(1, sizeof(*c.l))) == NULL)
		return LISTS_ERR_NOMEM;
	buf_init(&path, 4096);
	buf_init(&shown, 256);
	for (k = 0; k < LISTS_KIND__MAX && e == LISTS_OK; k++) {
		buf_reset(&path);
		if (buf_printf(&path, "%s/%s", dir, lists_kind_files[k]) < 0) {
			e = LISTS_ERR_ARG;
			break;
		}
		e = lists_read_file(&c, k, buf_str(&path), lists_kind_files[k],
		    0, &found);
		if (e != LISTS_OK)
			break;
		if (!found)
			lists_warn(&c, "%s: missing, the %s list is empty",
			    lists_kind_files[k], lists_kind_names[k]);
		else if (c.l->set[k].count == 0)
			lists_warn(&c, "%s: no entries, the %s list is empty",
			    lists_kind_files[k], lists_kind_names[k]);

		buf_reset(&path);
		buf_reset(&shown);
		if (buf_printf(&path, "%s/local/%s", dir,
		    lists_kind_files[k]) < 0 || buf_printf(&shown,
		    "local/%s", lists_kind_files[k]) < 0) {
			e = LISTS_ERR_ARG;
			break;
		}
		e = lists_read_file(&c, k, buf_str(&path), buf_str(&shown), 1,
		    &found);
	}
	if (e == LISTS_ERR_ARG && msg != NULL) {
		buf_reset(msg);
		buf_puts(msg, "lists folder path too long");
	}
	if (e == LISTS_OK) {
		buf_reset(&path);
		if (buf_printf(&path, "%s/local", dir) >= 0)
			lists_check_local_dir(&c, buf_str(&path));
		if (c.warnings > LISTS_WARN_MAX && msg != NULL)
			buf_printf(msg, "(%zu more warnings)\n",
			    c.warnings - LISTS_WARN_MAX);
	}
	buf_free(&path);
	buf_free(&shown);
	if (e != LISTS_OK) {
		lists_free(c.l);
		return e;
	}
	c.l->load_ms = lists_now_ms() - t0;
	*out = c.l;
	return LISTS_OK;
}

void
lists_free(struct lists *l)
{
	int k;

	if (l == NULL)
		return;
	for (k = 0; k < LISTS_KIND__MAX; k++) {
		lists_set_free(&l->set[k]);
		lists_set_free(&l->removed[k]);
	}
	free(l);
}

/* Copies a domain for lookup: lower case, no root dot. 0 if unusable. */
static size_t
lists_domain_key(const char *domain, char key[LISTS_ENTRY_MAX + 2])
{
	size_t i, n;

	if (domain == NULL)
		return 0;
	n = strnlen(domain, LISTS_ENTRY_MAX + 2);
	if (n > 0 && domain[n - 1] == '.')
		n--;
	if (n == 0 || n > LISTS_ENTRY_MAX)
		return 0;
	for (i = 0; i < n; i++) {
		char ch = domain[i];

		key[i] = ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch;
	}
	key[n] = '\0';
	return n;
}

/* Member of kind k, exactly, and not removed by the operator. */
static int
lists_exact(const struct lists *l, enum lists_kind k, const char *s,
    size_t n)
{
	return !lists_set_has(&l->removed[k], s, n) &&
	    lists_set_has(&l->set[k], s, n);
}

static int
lists_exact_domain(const struct lists *l, enum lists_kind k,
    const char *domain)
{
	char key[LISTS_ENTRY_MAX + 2];
	size_t n;

	if (l == NULL || (n = lists_domain_key(domain, key)) == 0)
		return 0;
	return lists_exact(l, k, key, n);
}

int
lists_is_disposable(const struct lists *l, const char *domain)
{
	char key[LISTS_ENTRY_MAX + 2];
	const struct lists_set *set, *rm;
	size_t n, i;

	if (l == NULL || (n = lists_domain_key(domain, key)) == 0)
		return 0;
	set = &l->set[LISTS_DISPOSABLE];
	rm = &l->removed[LISTS_DISPOSABLE];
	/* From the full name towards the TLD: the closest listed name
	 * decides, a removal ("!x") being listed as "not disposable". */
	for (i = 0; i < n;) {
		if (lists_set_has(rm, key + i, n - i))
			return 0;
		if (lists_set_has(set, key + i, n - i))
			return 1;
		while (i < n && key[i] != '.')
			i++;
		i++;
	}
	return 0;
}

int
lists_is_free(const struct lists *l, const char *domain)
{
	return lists_exact_domain(l, LISTS_FREE, domain);
}

int
lists_is_provider(const struct lists *l, const char *domain)
{
	return lists_exact_domain(l, LISTS_PROVIDER, domain);
}

int
lists_is_typo_trap(const struct lists *l, const char *domain)
{
	return lists_exact_domain(l, LISTS_TYPO_TRAP, domain);
}

int
lists_is_role(const struct lists *l, const char *local)
{
	char key[ADDR_LOCAL_MAX + 1];
	const char *plus;
	size_t i, n;

	if (l == NULL || local == NULL)
		return 0;
	n = strnlen(local, ADDR_LOCAL_MAX + 3);
	if (n >= 2 && local[0] == '"' && local[n - 1] == '"') {
		local++;
		n -= 2;
	}
	if (n == 0 || n > ADDR_LOCAL_MAX)
		return 0;
	for (i = 0; i < n; i++) {
		char ch = local[i];

		key[i] = ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch;
	}
	key[n] = '\0';
	if (lists_exact(l, LISTS_ROLE, key, n))
		return 1;
	if ((plus = memchr(key, '+', n)) != NULL && plus > key)
		return lists_exact(l, LISTS_ROLE, key, (size_t)(plus - key));
	return 0;
}

/*
 * Optimal string alignment distance (Levenshtein plus the swap of two
 * neighbours, each substring edited once) between a and b, or max + 1 as
 * soon as every cell of a row exceeds max. Three rows of the dynamic
 * programming table are enough.
 */
static size_t
lists_osa(const char *a, size_t na, const char *b, size_t nb, size_t max)
{
	size_t rows[3][LISTS_ENTRY_MAX + 2];
	size_t *pp, *p, *cur, i, j, best, v, cost;

	if (na > LISTS_ENTRY_MAX || nb > LISTS_ENTRY_MAX)
		return max + 1;
	for (j = 0; j <= nb; j++)
		rows[1][j] = j;
	pp = rows[0];
	p = rows[1];
	cur = rows[2];
	for (i = 1; i <= na; i++) {
		cur[0] = i;
		best = i;
		for (j = 1; j <= nb; j++) {
			cost = a[i - 1] == b[j - 1] ? 0 : 1;
			v = p[j - 1] + cost;
			if (p[j] + 1 < v)
				v = p[j] + 1;
			if (cur[j - 1] + 1 < v)
				v = cur[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && pp[j - 2] + 1 < v)
				v = pp[j - 2] + 1;
			cur[j] = v;
			if (v < best)
				best = v;
		}
		if (best > max)
			return max + 1;
		/* rotate: pp <- p <- cur <- pp */
		{
			size_t *t = pp;

			pp = p;
			p = cur;
			cur = t;
		}
	}
	return p[nb];
}

int
lists_suggest(const struct lists *l, const char *domain,
    char out[LISTS_SUGGEST_MAX])
{
	char key[LISTS_ENTRY_MAX + 2];
	const struct lists_set *set;
	const char *cand, *best = NULL;
	size_t n, cn, off, d, bestd = LISTS_SUGGEST_DIST + 1;

	out[0] = '\0';
	if (l == NULL || (n = lists_domain_key(domain, key)) == 0 ||
	    n < LISTS_SUGGEST_MINLEN)
		return 0;
	if (lists_exact(l, LISTS_PROVIDER, key, n))
		return 0;
	set = &l->set[LISTS_PROVIDER];
	/* The pool holds the providers in file order: on equal distance
	 * the first one, the more popular, stays the best. */
	for (off = 0; off < set->pool_len; off += cn + 1) {
		cand = set->pool + off;
		cn = strlen(cand);
		if ((cn > n ? cn - n : n - cn) > LISTS_SUGGEST_DIST)
			continue;
		if (lists_set_has(&l->removed[LISTS_PROVIDER], cand, cn))
			continue;
		d = lists_osa(key, n, cand, cn, bestd - 1);
		if (d < bestd && d > 0) {
			bestd = d;
			best = cand;
			if (d == 1)
				break;
		}
	}
	if (best == NULL)
		return 0;
	cn = strlen(best);
	if (cn >= LISTS_SUGGEST_MAX)
		return 0;
	memcpy(out, best, cn + 1);
	return 1;
}

size_t
lists_count(const struct lists *l, enum lists_kind k)
{
	if (l == NULL || k >= LISTS_KIND__MAX)
		return 0;
	return l->set[k].count;
}

size_t
lists_removed(const struct lists *l, enum lists_kind k)
{
	if (l == NULL || k >= LISTS_KIND__MAX)
		return 0;
	return l->removed[k].count;
}

int
lists_summary(const struct lists *l, struct buf *b)
{
	size_t bytes = sizeof(*l), removed = 0;
	int k;

	for (k = 0; k < LISTS_KIND__MAX; k++) {
		if (buf_printf(b, "%s%s=%zu", k ? " " : "",
		    lists_kind_names[k], l->set[k].count) < 0)
			return -1;
		removed += l->removed[k].count;
		bytes += lists_set_bytes(&l->set[k]) +
		    lists_set_bytes(&l->removed[k]);
	}
	return buf_printf(b, " removed=%zu skipped=%zu bytes=%zu load_ms=%ld",
	    removed, l->skipped, bytes, l->load_ms) < 0 ? -1 : 0;
}
