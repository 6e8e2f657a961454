/* smtp_rules.c: reads smtp_reply_rules.txt (format in smtp_rules.h) into a
 * list of rules kept in file order, the operator's file before the shipped
 * one, and the accept-all provider lines. Untrusted only in the sense that
 * an operator may write anything: every field is checked, a bad line is
 * skipped with a warning, and sizes are bounded. */
#include "engine/smtp_rules.h"
#include "util/strparse.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const smtp_rules_err_names[SMTP_RULES_ERR__MAX] = {
	"ok", "nomem", "io", "arg",
};

#define SMTP_RULES_WARN_MAX	20	/* warning lines written per load */
#define SMTP_RULES_FILE_MAX	(4 * 1024 * 1024)	/* octets read */

int
smtp_rules_is_word(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c >= 0x80;
}

struct smtp_rules *
smtp_rules_new(void)
{
	return calloc(1, sizeof(struct smtp_rules));
}

static void
smtp_rules_rule_free(struct smtp_rule *r)
{
	size_t i;

	for (i = 0; i < r->nphrases; i++)
		free(r->phrases[i].text);
	free(r->phrases);
	r->phrases = NULL;
	r->nphrases = 0;
}

void
smtp_rules_free(struct smtp_rules *r)
{
	size_t i;

	if (r == NULL)
		return;
	for (i = 0; i < r->n; i++)
		smtp_rules_rule_free(&r->rule[i]);
	free(r->rule);
	free(r);
}

/* ---------------------------------------------------------------- fields */

/* The next blank-separated field of *p (NUL-terminated in place), or NULL. */
static char *
smtp_rules_field(char **p)
{
	char *s = *p, *start;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '\0')
		return NULL;
	start = s;
	while (*s != '\0' && *s != ' ' && *s != '\t')
		s++;
	if (*s != '\0')
		*s++ = '\0';
	*p = s;
	return start;
}

static int
smtp_rules_provider(const char *s, char out[SMTP_RULES_PROVIDER_MAX],
    int star)
{
	size_t i;

	if (star && strcmp(s, "*") == 0) {
		out[0] = '\0';
		return 0;
	}
	for (i = 0; s[i] != '\0'; i++) {
		char c = s[i];

		if (i + 1 >= SMTP_RULES_PROVIDER_MAX)
			return -1;
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '.' || c == '-' || c == '_'))
			return -1;
		out[i] = c;
	}
	out[i] = '\0';
	return i > 0 ? 0 : -1;
}

static int
smtp_rules_code(const char *s, char out[3])
{
	int i;

	if (strlen(s) != 3 || s[0] < '1' || s[0] > '5')
		return -1;
	for (i = 0; i < 3; i++) {
		char c = s[i] == 'X' ? 'x' : s[i];

		if (!(c == 'x' && i > 0) && !(c >= '0' && c <= '9'))
			return -1;
		out[i] = c;
	}
	return 0;
}

/* "*", or three dot-separated parts, each "*" or 1-3 digits (class 2, 4,
 * 5 or "*"). */
static int
smtp_rules_enhanced(const char *s, int *has, int enh[3])
{
	int i;
	long v;

	*has = 0;
	enh[0] = enh[1] = enh[2] = -1;
	if (strcmp(s, "*") == 0)
		return 0;
	for (i = 0; i < 3; i++) {
		size_t n = 0;

		if (*s == '*') {
			s++;
		} else {
			for (v = 0; s[n] >= '0' && s[n] <= '9' && n < 3; n++)
				v = v * 10 + (s[n] - '0');
			if (n == 0 || (s[n] >= '0' && s[n] <= '9'))
				return -1;
			if (i == 0 && v != 2 && v != 4 && v != 5)
				return -1;
			enh[i] = (int)v;
			s += n;
		}
		if (i < 2 && *s++ != '.')
			return -1;
	}
	if (*s != '\0')
		return -1;
	*has = 1;
	return 0;
}

static int
smtp_rules_verdict(const char *s, enum smtp_verdict *v)
{
	int i;

	for (i = 0; i < SMTP_VERDICT__MAX; i++)
		if (strcmp(s, smtp_verdict_names[i]) == 0) {
			*v = (enum smtp_verdict)i;
			return 0;
		}
	return -1;
}

/* One phrase, trimmed, blanks folded to one space, lower-cased. 0, -1 bad,
 * -2 out of memory. */
static int
smtp_rules_phrase(const char *s, size_t n, struct smtp_rule_phrase *out)
{
	char buf[SMTP_RULES_PHRASE_MAX + 1];
	size_t i, k = 0;
	int space = 0;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == ' ' || c == '\t') {
			space = k > 0;
			continue;
		}
		if (c < 0x20 || c == 0x7f)
			return -1;
		if (space) {
			if (k >= SMTP_RULES_PHRASE_MAX)
				return -1;
			buf[k++] = ' ';
			space = 0;
		}
		if (k >= SMTP_RULES_PHRASE_MAX)
			return -1;
		buf[k++] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
	}
	out->prefix = k > 0 && buf[k - 1] == '*';
	if (out->prefix)
		k--;
	/* "quota *" is "quota*": the blank folded in before the '*' goes too */
	if (out->prefix && k > 0 && buf[k - 1] == ' ')
		k--;
	if (k == 0 || memchr(buf, '*', k) != NULL)
		return -1;
	buf[k] = '\0';
	if ((out->text = strdup(buf)) == NULL)
		return -2;
	out->len = k;
	return 0;
}

/* The phrases of the rest of a line. 0, -1 bad, -2 out of memory. */
static int
smtp_rules_phrases(const char *s, struct smtp_rule *r)
{
	const char *bar;
	size_t n;
	int rc;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '\0')
		return 0;
	for (;;) {
		bar = strchr(s, '|');
		n = bar ? (size_t)(bar - s) : strlen(s);
		if (r->nphrases >= SMTP_RULES_PHRASES_MAX)
			return -1;
		if (r->phrases == NULL && (r->phrases = calloc(
		    SMTP_RULES_PHRASES_MAX, sizeof(*r->phrases))) == NULL)
			return -2;
		if ((rc = smtp_rules_phrase(s, n, &r->phrases[r->nphrases])) !=
		    0)
			return rc;
		r->nphrases++;
		if (bar == NULL)
			return 0;
		s = bar + 1;
	}
}

/* ---------------------------------------------------------------- lines */

struct smtp_rules_ctx {
	struct smtp_rules	*r;
	struct buf		*msg;
	const char		*shown;
	unsigned		 warnings;
};

static void
smtp_rules_bad(struct smtp_rules_ctx *c, unsigned line, const char *why)
{
	c->r->skipped++;
	if (c->msg == NULL || ++c->warnings > SMTP_RULES_WARN_MAX)
		return;
	buf_printf(c->msg, "%s:%u: %s, line skipped\n", c->shown, line, why);
}

static int
smtp_rules_add(struct smtp_rules *r, struct smtp_rule *rule)
{
	struct smtp_rule *n;
	size_t cap;

	if (r->n == r->cap) {
		cap = r->cap ? r->cap * 2 : 64;
		if ((n = realloc(r->rule, cap * sizeof(*n))) == NULL)
			return -1;
		r->rule = n;
		r->cap = cap;
	}
	r->rule[r->n++] = *rule;
	return 0;
}

/* One line (NUL-terminated, writable). 0 or -2 out of memory. */
static int
smtp_rules_line(struct smtp_rules_ctx *c, char *s, unsigned line, int local)
{
	struct smtp_rule rule;
	char id[SMTP_RULES_PROVIDER_MAX];
	char *kw, *f[4];
	int i, rc;

	if ((kw = smtp_rules_field(&s)) == NULL || kw[0] == '#')
		return 0;
	if (strcmp(kw, "accept_all") == 0) {
		if ((f[0] = smtp_rules_field(&s)) == NULL) {
			smtp_rules_bad(c, line, "accept_all names no provider");
			return 0;
		}
		for (; f[0] != NULL; f[0] = smtp_rules_field(&s)) {
			if (smtp_rules_provider(f[0], id, 0) == -1) {
				smtp_rules_bad(c, line, "bad provider id");
				continue;
			}
			if (smtp_rules_accept_all(c->r, id))
				continue;
			if (c->r->naccept_all >= SMTP_RULES_ACCEPT_ALL_MAX) {
				smtp_rules_bad(c, line, "too many accept_all "
				    "providers");
				return 0;
			}
			memcpy(c->r->accept_all[c->r->naccept_all++], id,
			    sizeof(id));
		}
		return 0;
	}
	if (strcmp(kw, "reply") != 0) {
		smtp_rules_bad(c, line, "not \"reply\" nor \"accept_all\"");
		return 0;
	}
	for (i = 0; i < 4; i++)
		if ((f[i] = smtp_rules_field(&s)) == NULL) {
			smtp_rules_bad(c, line, "a reply rule needs PROVIDER "
			    "CODE ENHANCED VERDICT");
			return 0;
		}
	memset(&rule, 0, sizeof(rule));
	rule.line = line;
	rule.local = local;
	if (smtp_rules_provider(f[0], rule.provider, 1) == -1) {
		smtp_rules_bad(c, line, "bad provider id");
		return 0;
	}
	if (smtp_rules_code(f[1], rule.code) == -1) {
		smtp_rules_bad(c, line, "bad reply code (like 550, 45x, 5xx)");
		return 0;
	}
	if (smtp_rules_enhanced(f[2], &rule.has_enh, rule.enh) == -1) {
		smtp_rules_bad(c, line, "bad enhanced status code pattern "
		    "(like *, 5.1.1, 4.7.*)");
		return 0;
	}
	if (rule.has_enh && rule.enh[0] != -1 && rule.code[0] - '0' !=
	    rule.enh[0]) {
		smtp_rules_bad(c, line, "the enhanced code's class is not the "
		    "reply code's");
		return 0;
	}
	if (smtp_rules_verdict(f[3], &rule.verdict) == -1) {
		smtp_rules_bad(c, line, "unknown verdict");
		return 0;
	}
	if ((rc = smtp_rules_phrases(s, &rule)) != 0) {
		smtp_rules_rule_free(&rule);
		if (rc == -2)
			return -2;
		smtp_rules_bad(c, line, "bad phrase (empty, a \"*\" not at "
		    "its end, a control character, too long, too many)");
		return 0;
	}
	if (c->r->n >= SMTP_RULES_MAX) {
		smtp_rules_rule_free(&rule);
		smtp_rules_bad(c, line, "too many rules");
		return 0;
	}
	if (smtp_rules_add(c->r, &rule) == -1) {
		smtp_rules_rule_free(&rule);
		return -2;
	}
	return 0;
}

enum smtp_rules_err
smtp_rules_parse(struct smtp_rules *r, const char *text, size_t len,
    const char *shown, int local, struct buf *msg)
{
	struct smtp_rules_ctx c = { r, msg, shown ? shown : "rules", 0 };
	char line[SMTP_RULES_LINE_MAX + 1];
	const char *p = text, *end = text + len, *nl;
	unsigned lineno = 0;
	size_t n;

	while (p < end) {
		lineno++;
		nl = memchr(p, '\n', (size_t)(end - p));
		n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (n > 0 && p[n - 1] == '\r')
			n--;
		if (n > SMTP_RULES_LINE_MAX)
			smtp_rules_bad(&c, lineno, "line too long");
		else if (memchr(p, '\0', n) != NULL)
			smtp_rules_bad(&c, lineno, "NUL byte");
		else {
			memcpy(line, p, n);
			line[n] = '\0';
			if (smtp_rules_line(&c, line, lineno, local) == -2)
				return SMTP_RULES_ERR_NOMEM;
		}
		p = nl ? nl + 1 : end;
	}
	return SMTP_RULES_OK;
}

/* ---------------------------------------------------------------- files */

/* Reads and parses one file; *found tells whether it exists. */
static enum smtp_rules_err
smtp_rules_file(struct smtp_rules *r, const char *path, const char *shown,
    int local, int *found, struct buf *msg)
{
	FILE *f;
	char *text;
	size_t len;
	enum smtp_rules_err e;

	*found = 0;
	if ((f = fopen(path, "re")) == NULL) {
		if (errno == ENOENT)
			return SMTP_RULES_OK;
		if (msg != NULL)
			buf_printf(msg, "%s: %s\n", shown, strerror(errno));
		return SMTP_RULES_ERR_IO;
	}
	*found = 1;
	if ((text = malloc(SMTP_RULES_FILE_MAX)) == NULL) {
		fclose(f);
		return SMTP_RULES_ERR_NOMEM;
	}
	len = fread(text, 1, SMTP_RULES_FILE_MAX, f);
	if (ferror(f)) {
		if (msg != NULL)
			buf_printf(msg, "%s: read error\n", shown);
		e = SMTP_RULES_ERR_IO;
	} else {
		if (len == SMTP_RULES_FILE_MAX && msg != NULL)
			buf_printf(msg, "%s: longer than %d octets, the rest "
			    "is ignored\n", shown, SMTP_RULES_FILE_MAX);
		e = smtp_rules_parse(r, text, len, shown, local, msg);
	}
	free(text);
	fclose(f);
	return e;
}

enum smtp_rules_err
smtp_rules_load(const char *dir, struct smtp_rules **out, struct buf *msg)
{
	char path[4096];
	struct smtp_rules *r;
	enum smtp_rules_err e;
	int found, n;

	*out = NULL;
	if (msg != NULL)
		buf_reset(msg);
	if (dir == NULL || *dir == '\0')
		return SMTP_RULES_ERR_ARG;
	if ((r = smtp_rules_new()) == NULL)
		return SMTP_RULES_ERR_NOMEM;
	n = snprintf(path, sizeof(path), "%s/local/%s", dir, SMTP_RULES_FILE);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		smtp_rules_free(r);
		return SMTP_RULES_ERR_ARG;
	}
	if ((e = smtp_rules_file(r, path, "local/" SMTP_RULES_FILE, 1, &found,
	    msg)) != SMTP_RULES_OK)
		goto fail;
	snprintf(path, sizeof(path), "%s/%s", dir, SMTP_RULES_FILE);
	if ((e = smtp_rules_file(r, path, SMTP_RULES_FILE, 0, &found, msg)) !=
	    SMTP_RULES_OK)
		goto fail;
	if (!found && msg != NULL)
		buf_printf(msg, "%s: missing: SMTP replies are read by their "
		    "class only\n", SMTP_RULES_FILE);
	*out = r;
	return SMTP_RULES_OK;
fail:
	smtp_rules_free(r);
	return e;
}

int
smtp_rules_accept_all(const struct smtp_rules *r, const char *provider)
{
	size_t i;

	if (r == NULL || provider == NULL || *provider == '\0')
		return 0;
	for (i = 0; i < r->naccept_all; i++)
		if (strcmp(r->accept_all[i], provider) == 0)
			return 1;
	return 0;
}
