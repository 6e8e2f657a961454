/* providers.c: the MX host pattern table (mx_providers.txt and the
 * operator's local/ copy) and the provider of an MX host: the table's most
 * specific pattern, else the host's registrable domain by libpsl. The
 * table is a sorted array of patterns searched by bisection, one search
 * per label of the host. See providers.h for the file format. */
#include "engine/providers.h"
#include <errno.h>
#include <libpsl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const providers_err_names[PROVIDERS_ERR__MAX] = {
	"ok", "nomem", "io", "arg",
};

#define PROVIDERS_HOST_MAX	253	/* longest host name */
#define PROVIDERS_LABEL_MAX	63
#define PROVIDERS_ENTRIES_MAX	4096	/* patterns kept at most */
#define PROVIDERS_WARN_MAX	20	/* warning lines per parse */
#define PROVIDERS_FILE_MAX	(1 << 20)	/* longest file read */

struct providers_entry {
	char		 name[PROVIDERS_HOST_MAX + 1];	/* without "*." */
	unsigned char	 wildcard;	/* "*.name": hosts below name */
	unsigned char	 local;		/* from local/ */
	unsigned char	 removed;	/* "!PATTERN" in local/ */
	char		 id[PROVIDERS_ID_MAX + 1];
};

struct providers {
	struct providers_entry	*v;	/* sorted by name, then wildcard */
	size_t			 n, cap;
	size_t			 skipped;
	psl_ctx_t		*psl;	/* NULL: libpsl's built-in list */
};

struct providers *
providers_new(void)
{
	return calloc(1, sizeof(struct providers));
}

void
providers_free(struct providers *p)
{
	if (p == NULL)
		return;
	free(p->v);
	psl_free(p->psl);
	free(p);
}

static void providers_warn(struct buf *, size_t *, const char *, ...)
    __attribute__((format(printf, 3, 4)));

static void
providers_warn(struct buf *msg, size_t *count, const char *fmt, ...)
{
	va_list ap;

	if (++*count > PROVIDERS_WARN_MAX || msg == NULL)
		return;
	va_start(ap, fmt);
	buf_vprintf(msg, fmt, ap);
	va_end(ap);
	buf_putc(msg, '\n');
}

/*
 * A host name of s (n bytes) into out, lower-cased, one root dot dropped:
 * labels of 1 to 63 letters, digits, '-' and '_', '-' neither first nor
 * last. Returns the length, or 0 when s is no such name.
 */
static size_t
providers_host(const char *s, size_t n, char out[PROVIDERS_HOST_MAX + 1])
{
	size_t i, label = 0;

	if (n > 0 && s[n - 1] == '.')
		n--;
	if (n == 0 || n > PROVIDERS_HOST_MAX)
		return 0;
	for (i = 0; i < n; i++) {
		char ch = s[i];

		if (ch >= 'A' && ch <= 'Z')
			ch = (char)(ch - 'A' + 'a');
		if (ch == '.') {
			if (label == 0 || out[i - 1] == '-')
				return 0;
			label = 0;
		} else if ((ch >= 'a' && ch <= 'z') || (ch >= '0' &&
		    ch <= '9') || ch == '_' || (ch == '-' && label > 0)) {
			if (++label > PROVIDERS_LABEL_MAX)
				return 0;
		} else
			return 0;
		out[i] = ch;
	}
	if (label == 0 || out[n - 1] == '-')
		return 0;
	out[n] = '\0';
	return n;
}

/* A provider id: 1 to PROVIDERS_ID_MAX of [a-z0-9_-], not starting with
 * '-' or '_'. */
static int
providers_id_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > PROVIDERS_ID_MAX || s[0] == '-' || s[0] == '_')
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' &&
		    s[i] <= '9') || s[i] == '-' || s[i] == '_'))
			return 0;
	return 1;
}

static int
providers_cmp(const char *name, int wildcard, const struct providers_entry *e)
{
	int c = strcmp(name, e->name);

	return c != 0 ? c : wildcard - (int)e->wildcard;
}

/* Index of (name, wildcard), or where it would go (*found 0). */
static size_t
providers_find(const struct providers *p, const char *name, int wildcard,
    int *found)
{
	size_t lo = 0, hi = p->n, mid;
	int c;

	*found = 0;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = providers_cmp(name, wildcard, &p->v[mid]);
		if (c == 0) {
			*found = 1;
			return mid;
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* One entry of a line, checked. Returns 0 when added or overridden, 1
 * when skipped (reason in *why), -1 when out of memory. */
static int
providers_add(struct providers *p, const char *pat, size_t pn,
    const char *id, size_t idn, int local, int removal, const char **why)
{
	char name[PROVIDERS_HOST_MAX + 1];
	struct providers_entry *e, *nv;
	size_t at, cap;
	int wildcard = 0, found;

	if (pn >= 2 && pat[0] == '*' && pat[1] == '.') {
		wildcard = 1;
		pat += 2;
		pn -= 2;
	}
	if (providers_host(pat, pn, name) == 0) {
		*why = "not a host name or *.domain pattern";
		return 1;
	}
	if (wildcard && strchr(name, '.') == NULL) {
		*why = "a wildcard needs two labels at least (*.example.com)";
		return 1;
	}
	if (!removal && !providers_id_ok(id, idn)) {
		*why = "not a provider id (a-z, 0-9, '-', '_', 32 at most)";
		return 1;
	}
	at = providers_find(p, name, wildcard, &found);
	if (found) {
		e = &p->v[at];
		if (e->local && !local)
			return 0;	/* the operator's entry stays */
	} else {
		if (p->n >= PROVIDERS_ENTRIES_MAX) {
			*why = "too many patterns";
			return 1;
		}
		if (p->n == p->cap) {
			cap = p->cap ? p->cap * 2 : 64;
			if ((nv = realloc(p->v, cap * sizeof(*nv))) == NULL)
				return -1;
			p->v = nv;
			p->cap = cap;
		}
		memmove(&p->v[at + 1], &p->v[at], (p->n - at) * sizeof(*p->v));
		p->n++;
		e = &p->v[at];
		memset(e, 0, sizeof(*e));
		memcpy(e->name, name, strlen(name) + 1);
		e->wildcard = (unsigned char)wildcard;
	}
	e->local = (unsigned char)local;
	e->removed = (unsigned char)removal;
	if (!removal) {
		memcpy(e->id, id, idn);
		e->id[idn] = '\0';
	}
	return 0;
}

static int
providers_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r';
}

enum providers_err
providers_parse(struct providers *p, const char *text, size_t len,
    const char *shown, int local, struct buf *msg)
{
	const char *s, *end, *nl, *f[3], *why;
	size_t fl[3], nf, lineno = 0, warnings = 0, i;
	int removal, rc;

	for (s = text; s < text + len; s = nl + 1) {
		lineno++;
		if ((nl = memchr(s, '\n', (size_t)(text + len - s))) == NULL)
			nl = text + len;
		/* Cut the comment: '#' first or after white space. */
		for (end = s; end < nl; end++)
			if (*end == '#' && (end == s || providers_space(end[-1])))
				break;
		nf = 0;
		for (i = 0; s + i < end && nf < 3;) {
			while (s + i < end && providers_space(s[i]))
				i++;
			if (s + i == end)
				break;
			f[nf] = s + i;
			while (s + i < end && !providers_space(s[i]))
				i++;
			fl[nf] = (size_t)(s + i - f[nf]);
			nf++;
		}
		if (nf == 0)
			continue;
		removal = local && fl[0] > 1 && f[0][0] == '!';
		why = NULL;
		if (memchr(s, '\0', (size_t)(end - s)) != NULL)
			why = "a NUL byte";
		else if (removal && nf != 1)
			why = "\"!PATTERN\" takes no id";
		else if (!removal && nf != 2)
			why = "expected \"PATTERN ID\"";
		if (why == NULL) {
			rc = removal ? providers_add(p, f[0] + 1, fl[0] - 1, NULL,
			    0, local, 1, &why) : providers_add(p, f[0], fl[0],
			    f[1], fl[1], local, 0, &why);
			if (rc == -1)
				return PROVIDERS_ERR_NOMEM;
			if (rc == 0)
				continue;
		}
		p->skipped++;
		providers_warn(msg, &warnings, "%s:%zu: %s, skipped", shown,
		    lineno, why);
	}
	if (warnings > PROVIDERS_WARN_MAX && msg != NULL)
		buf_printf(msg, "%s: (%zu more warnings)\n", shown,
		    warnings - PROVIDERS_WARN_MAX);
	return PROVIDERS_OK;
}

/* Reads one file (at most PROVIDERS_FILE_MAX bytes) into p. */
static enum providers_err
providers_read(struct providers *p, const char *path, const char *shown,
    int local, struct buf *msg)
{
	FILE *f;
	char *text;
	size_t n;
	enum providers_err e;

	if ((f = fopen(path, "re")) == NULL) {
		if (errno == ENOENT) {
			if (!local && msg != NULL)
				buf_printf(msg, "%s: missing, no provider "
				    "patterns\n", shown);
			return PROVIDERS_OK;
		}
		if (msg != NULL) {
			buf_reset(msg);
			buf_printf(msg, "%s: %s", path, strerror(errno));
		}
		return PROVIDERS_ERR_IO;
	}
	if ((text = malloc(PROVIDERS_FILE_MAX + 1)) == NULL) {
		fclose(f);
		return PROVIDERS_ERR_NOMEM;
	}
	n = fread(text, 1, PROVIDERS_FILE_MAX + 1, f);
	if (ferror(f)) {
		if (msg != NULL) {
			buf_reset(msg);
			buf_printf(msg, "%s: read error", path);
		}
		e = PROVIDERS_ERR_IO;
	} else {
		if (n > PROVIDERS_FILE_MAX) {
			n = PROVIDERS_FILE_MAX;
			if (msg != NULL)
				buf_printf(msg, "%s: longer than %d bytes, "
				    "the rest ignored\n", shown,
				    PROVIDERS_FILE_MAX);
		}
		e = providers_parse(p, text, n, shown, local, msg);
	}
	free(text);
	fclose(f);
	return e;
}

enum providers_err
providers_load(const char *dir, struct providers **out, struct buf *msg)
{
	struct providers *p;
	struct buf path;
	enum providers_err e;

	*out = NULL;
	if (msg != NULL)
		buf_reset(msg);
	if (dir == NULL || *dir == '\0') {
		if (msg != NULL)
			buf_puts(msg, "no lists folder given");
		return PROVIDERS_ERR_ARG;
	}
	if ((p = providers_new()) == NULL)
		return PROVIDERS_ERR_NOMEM;
	buf_init(&path, 4096);
	if (buf_printf(&path, "%s/" PROVIDERS_FILE, dir) < 0)
		e = PROVIDERS_ERR_ARG;
	else
		e = providers_read(p, buf_str(&path), PROVIDERS_FILE, 0, msg);
	buf_reset(&path);
	if (e == PROVIDERS_OK && buf_printf(&path, "%s/local/" PROVIDERS_FILE,
	    dir) < 0)
		e = PROVIDERS_ERR_ARG;
	else if (e == PROVIDERS_OK)
		e = providers_read(p, buf_str(&path), "local/" PROVIDERS_FILE,
		    1, msg);
	buf_free(&path);
	if (e == PROVIDERS_ERR_ARG && msg != NULL) {
		buf_reset(msg);
		buf_puts(msg, "lists folder path too long");
	}
	if (e != PROVIDERS_OK) {
		providers_free(p);
		return e;
	}
	/* The newer of the system's list (Debian's publicsuffix) and
	 * libpsl's built-in one; NULL leaves the built-in one. */
	p->psl = psl_latest(NULL);
	*out = p;
	return PROVIDERS_OK;
}

/* The id for a normalised host, or NULL. */
static const char *
providers_lookup_key(const struct providers *p, const char *key)
{
	const char *s;
	size_t at;
	int found;

	if (p == NULL || p->n == 0)
		return NULL;
	at = providers_find(p, key, 0, &found);
	if (found)
		return p->v[at].removed ? NULL : p->v[at].id;
	for (s = strchr(key, '.'); s != NULL; s = strchr(s + 1, '.')) {
		at = providers_find(p, s + 1, 1, &found);
		if (found)
			return p->v[at].removed ? NULL : p->v[at].id;
	}
	return NULL;
}

const char *
providers_lookup(const struct providers *p, const char *host)
{
	char key[PROVIDERS_HOST_MAX + 1];

	if (host == NULL || providers_host(host, strnlen(host,
	    PROVIDERS_HOST_MAX + 2), key) == 0)
		return NULL;
	return providers_lookup_key(p, key);
}

int
providers_of_mx(const struct providers *p, const char *host,
    char out[PROVIDERS_NAME_MAX])
{
	char key[PROVIDERS_HOST_MAX + 1];
	const psl_ctx_t *psl;
	const char *id, *reg;
	size_t n;

	out[0] = '\0';
	if (host == NULL || (n = providers_host(host, strnlen(host,
	    PROVIDERS_HOST_MAX + 2), key)) == 0)
		return -1;
	if ((id = providers_lookup_key(p, key)) != NULL) {
		memcpy(out, id, strlen(id) + 1);
		return 0;
	}
	psl = p != NULL && p->psl != NULL ? p->psl : psl_builtin();
	reg = psl != NULL ? psl_registrable_domain(psl, key) : NULL;
	if (reg == NULL)
		reg = key;	/* a public suffix itself, or no list */
	n = strlen(reg);
	memcpy(out, reg, n + 1);
	return 0;
}

size_t
providers_count(const struct providers *p)
{
	size_t i, n = 0;

	for (i = 0; p != NULL && i < p->n; i++)
		n += !p->v[i].removed;
	return n;
}

size_t
providers_skipped(const struct providers *p)
{
	return p != NULL ? p->skipped : 0;
}
