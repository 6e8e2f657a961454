/* pacing_defaults.c: the parser and lookup of pacing_defaults.txt
 * (pacing_defaults.h). The file is small (tens of lines): entries are a
 * flat array, a lookup walks it. Patterns are checked as data: a provider
 * id, a host name, or "*." and a host name; anything else is skipped with
 * a warning, never guessed at. */
#include "engine/pacing_defaults.h"
#include "util/strparse.h"
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PACING_LINE_MAX	1024
#define PACING_FILE_MAX	(1024 * 1024)

/* A provider id, a host name or "*." and a host name: letters, digits,
 * '-', '_' and '.' (no empty label, no leading or trailing dot). */
static int
pacing_defaults_pattern_ok(const char *s)
{
	size_t i, label = 0;

	if (strncmp(s, "*.", 2) == 0)
		s += 2;
	if (*s == '\0' || strlen(s) >= PACING_PATTERN_MAX - 2)
		return 0;
	for (i = 0; s[i] != '\0'; i++) {
		if (s[i] == '.') {
			if (label == 0)
				return 0;
			label = 0;
			continue;
		}
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_')
			return 0;
		label++;
	}
	return label > 0;
}

static struct pacing_default *
pacing_defaults_find(struct pacing_defaults *d, const char *pattern)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		if (strcasecmp(d->v[i].pattern, pattern) == 0)
			return &d->v[i];
	return NULL;
}

static int
pacing_defaults_put(struct pacing_defaults *d, const struct pacing_default *e)
{
	struct pacing_default *slot, *nv;
	size_t cap;

	if ((slot = pacing_defaults_find(d, e->pattern)) != NULL) {
		*slot = *e;
		return 0;
	}
	if (d->n == d->cap) {
		cap = d->cap ? d->cap * 2 : 32;
		if ((nv = realloc(d->v, cap * sizeof(*nv))) == NULL)
			return -1;
		d->v = nv;
		d->cap = cap;
	}
	d->v[d->n++] = *e;
	return 0;
}

static void
pacing_defaults_remove(struct pacing_defaults *d, const char *pattern)
{
	struct pacing_default *e = pacing_defaults_find(d, pattern);

	if (e == NULL)
		return;
	*e = d->v[--d->n];
}

static void
pacing_defaults_warn(struct buf *msg, const char *name, size_t line,
    const char *why)
{
	if (msg != NULL)
		buf_printf(msg, "%s:%zu: %s\n", name, line, why);
}

/* One line (NUL-terminated, comment already cut): 0 skipped or taken,
 * -1 out of memory. */
static int
pacing_defaults_line(struct pacing_defaults *d, const char *name,
    size_t lineno, char *line, struct buf *msg)
{
	struct pacing_default e;
	char *f[4], *save = NULL, *t;
	size_t n = 0, i;

	for (t = strtok_r(line, " \t\r\v\f", &save); t != NULL;
	    t = strtok_r(NULL, " \t\r\v\f", &save)) {
		if (n == 4)
			break;
		f[n++] = t;
	}
	if (n == 0)
		return 0;
	if (f[0][0] == '!') {
		if (n != 1 || !pacing_defaults_pattern_ok(f[0] + 1)) {
			pacing_defaults_warn(msg, name, lineno,
			    "a removal is \"!PATTERN\" alone");
			return 0;
		}
		pacing_defaults_remove(d, f[0] + 1);
		return 0;
	}
	if (n != 3) {
		pacing_defaults_warn(msg, name, lineno,
		    "want PATTERN START_RATE PENALTY_SECONDS");
		return 0;
	}
	memset(&e, 0, sizeof(e));
	if (!pacing_defaults_pattern_ok(f[0])) {
		pacing_defaults_warn(msg, name, lineno, "bad pattern");
		return 0;
	}
	if (strparse_long(f[1], 1, PACING_RATE_MAX, &e.start_rate) != 0 ||
	    strparse_long(f[2], 1, PACING_PENALTY_MAX, &e.penalty_s) != 0) {
		pacing_defaults_warn(msg, name, lineno,
		    "rate or penalty out of range");
		return 0;
	}
	strparse_copy(e.pattern, sizeof(e.pattern), f[0]);
	for (i = 0; e.pattern[i] != '\0'; i++)
		e.pattern[i] = (char)tolower((unsigned char)e.pattern[i]);
	return pacing_defaults_put(d, &e);
}

int
pacing_defaults_parse(struct pacing_defaults *d, const char *name,
    const char *text, size_t len, struct buf *msg)
{
	char line[PACING_LINE_MAX], *hash;
	size_t i = 0, k, lineno = 0;
	int toolong;

	while (i < len) {
		lineno++;
		k = 0;
		toolong = 0;
		for (; i < len && text[i] != '\n'; i++) {
			if (k + 1 < sizeof(line))
				line[k++] = text[i] == '\0' ? ' ' : text[i];
			else
				toolong = 1;
		}
		if (i < len)
			i++;	/* the newline */
		line[k] = '\0';
		if (toolong) {
			pacing_defaults_warn(msg, name, lineno,
			    "line too long");
			continue;
		}
		if ((hash = strchr(line, '#')) != NULL)
			*hash = '\0';
		if (pacing_defaults_line(d, name, lineno, line, msg) == -1)
			return -1;
	}
	return 0;
}

/* One file into d; a missing file is a warning when required, else
 * nothing. */
static int
pacing_defaults_file(struct pacing_defaults *d, const char *path,
    int required, struct buf *msg)
{
	struct buf text;
	char chunk[4096];
	size_t n;
	FILE *f;
	int rc = 0;

	if ((f = fopen(path, "re")) == NULL) {
		if (errno == ENOENT) {
			if (required && msg != NULL)
				buf_printf(msg, "%s: missing: no pacing "
				    "defaults\n", path);
			return 0;
		}
		if (msg != NULL)
			buf_printf(msg, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	buf_init(&text, PACING_FILE_MAX);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if (buf_append(&text, chunk, n) == -1) {
			if (msg != NULL)
				buf_printf(msg, "%s: too big\n", path);
			rc = -1;
			break;
		}
	if (ferror(f)) {
		if (msg != NULL)
			buf_printf(msg, "%s: read error\n", path);
		rc = -1;
	}
	fclose(f);
	if (rc == 0)
		rc = pacing_defaults_parse(d, path, buf_str(&text),
		    strlen(buf_str(&text)), msg);
	buf_free(&text);
	return rc;
}

int
pacing_defaults_load(struct pacing_defaults *d, const char *dir,
    struct buf *msg)
{
	char path[4096];

	if (snprintf(path, sizeof(path), "%s/%s", dir,
	    PACING_DEFAULTS_FILE) >= (int)sizeof(path))
		return -1;
	if (pacing_defaults_file(d, path, 1, msg) == -1)
		return -1;
	if (snprintf(path, sizeof(path), "%s/local/%s", dir,
	    PACING_DEFAULTS_FILE) >= (int)sizeof(path))
		return -1;
	return pacing_defaults_file(d, path, 0, msg);
}

void
pacing_defaults_free(struct pacing_defaults *d)
{
	free(d->v);
	memset(d, 0, sizeof(*d));
}

const struct pacing_default *
pacing_defaults_match(const struct pacing_defaults *d, const char *provider,
    const char *mx_host)
{
	const struct pacing_default *best = NULL;
	size_t i, hl, sl, bestlen = 0;
	const char *suffix;

	if (d == NULL)
		return NULL;
	if (provider != NULL && provider[0] != '\0')
		for (i = 0; i < d->n; i++)
			if (strchr(d->v[i].pattern, '.') == NULL &&
			    strcasecmp(d->v[i].pattern, provider) == 0)
				return &d->v[i];
	if (mx_host == NULL || mx_host[0] == '\0')
		return NULL;
	hl = strlen(mx_host);
	for (i = 0; i < d->n; i++) {
		if (strncmp(d->v[i].pattern, "*.", 2) != 0) {
			if (strcasecmp(d->v[i].pattern, mx_host) == 0)
				return &d->v[i];
			continue;
		}
		suffix = d->v[i].pattern + 1;	/* ".google.com" */
		sl = strlen(suffix);
		if (hl > sl && strcasecmp(mx_host + hl - sl, suffix) == 0 &&
		    sl > bestlen) {
			best = &d->v[i];
			bestlen = sl;
		}
	}
	return best;
}
