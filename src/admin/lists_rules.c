/* lists_rules.c: "svcadm lists update" refreshing the rule tables of
 * lists_dir from lists_rules_url: download, check with the engine's own
 * parsers, then write beside and rename into place (see lists_rules.h). */
#include "admin/lists_rules.h"
#include "admin/lists_rules_get.h"
#include "engine/pacing_defaults.h"
#include "engine/providers.h"
#include "engine/smtp_rules.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *const lists_rules_err_names[LISTS_RULES_ERR__MAX] = {
	"ok", "url", "fetch", "check", "write",
};

/* The shipped tables hold about 50, 40 and 35 entries (2026-11): a table
 * served with fewer than these is taken for a broken one. */
const struct lists_rules_table lists_rules_tables[LISTS_RULES_N] = {
	{ PROVIDERS_FILE, "patterns", 10 },
	{ SMTP_RULES_FILE, "rules", 10 },
	{ PACING_DEFAULTS_FILE, "entries", 5 },
};

/* The first line of msg (a parser's first warning). */
static void
lists_rules_first_line(const struct buf *msg, struct buf *err)
{
	const char *s = buf_str(msg);

	buf_printf(err, "%.*s", (int)strcspn(s, "\n"), s);
}

int
lists_rules_check(size_t t, const char *text, size_t len, size_t *count,
    struct buf *err)
{
	const struct lists_rules_table *tb = &lists_rules_tables[t];
	struct providers *p = NULL;
	struct smtp_rules *r = NULL;
	struct pacing_defaults pd;
	struct buf msg;
	size_t skipped = 0;
	int rc = -1, nomem = 0;

	*count = 0;
	if (len == 0) {
		buf_printf(err, "%s is empty", tb->name);
		return -1;
	}
	buf_init(&msg, 64 * 1024);
	memset(&pd, 0, sizeof(pd));
	switch (t) {
	case 0:
		if ((p = providers_new()) == NULL || providers_parse(p, text,
		    len, tb->name, 0, &msg) != PROVIDERS_OK)
			nomem = 1;
		else {
			*count = providers_count(p);
			skipped = providers_skipped(p);
		}
		break;
	case 1:
		if ((r = smtp_rules_new()) == NULL || smtp_rules_parse(r, text,
		    len, tb->name, 0, &msg) != SMTP_RULES_OK)
			nomem = 1;
		else {
			*count = r->n;
			skipped = r->skipped;
		}
		break;
	default:
		if (pacing_defaults_parse(&pd, tb->name, text, len, &msg) == -1)
			nomem = 1;
		else
			*count = pd.n;
		break;
	}
	if (nomem)
		buf_printf(err, "%s: out of memory", tb->name);
	else if (skipped > 0 || msg.len > 0) {
		/* a line this svc cannot read: a broken file, or one written
		 * for a newer svc; either way not one to run with */
		buf_printf(err, "%s does not parse: ", tb->name);
		lists_rules_first_line(&msg, err);
		if (skipped > 1)
			buf_printf(err, " (and %zu more bad lines)",
			    skipped - 1);
	} else if (*count < tb->min)
		buf_printf(err, "%s has %zu %s, fewer than %zu: not a whole "
		    "table", tb->name, *count, tb->entries, tb->min);
	else
		rc = 0;
	if (p != NULL)
		providers_free(p);
	if (r != NULL)
		smtp_rules_free(r);
	pacing_defaults_free(&pd);
	buf_free(&msg);
	return rc;
}

/* Writes len bytes of data into path (made, or emptied first: a leftover
 * of a killed run of this pid; never through a symbolic link planted
 * there; mode 0644 whatever the umask, as the services read it under
 * their own user), synced. */
static int
lists_rules_write_file(const char *path, const char *data, size_t len,
    struct buf *err)
{
	ssize_t n;
	int fd;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
	    O_NOFOLLOW, 0644)) == -1) {
		buf_printf(err, "cannot create %s: %s", path, strerror(errno));
		return -1;
	}
	if (fchmod(fd, 0644) == -1)
		goto fail;
	while (len > 0) {
		if ((n = write(fd, data, len)) == -1) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		data += n;
		len -= (size_t)n;
	}
	if (fsync(fd) == -1)
		goto fail;
	if (close(fd) == -1) {
		fd = -1;
		goto fail;
	}
	return 0;
fail:
	buf_printf(err, "cannot write %s: %s", path, strerror(errno));
	if (fd != -1)
		close(fd);
	return -1;
}

void
lists_rules_url_shown(const char *url, char *out, size_t size)
{
	const char *host = strstr(url, "://"), *at, *slash;

	if (host == NULL) {
		snprintf(out, size, "%s", url);
		return;
	}
	host += 3;
	slash = host + strcspn(host, "/");
	/* the last '@' before the path: a password may hold one */
	at = memrchr(host, '@', (size_t)(slash - host));
	if (at == NULL)
		snprintf(out, size, "%s", url);
	else
		snprintf(out, size, "%.*s%s", (int)(host - url), url, at + 1);
}

/* The folder's entries (the renames) on disk too, as far as it allows. */
static void
lists_rules_sync_dir(const char *dir)
{
	int fd;

	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return;
	(void)fsync(fd);
	close(fd);
}

/* RULES_SOURCES: where each table came from, and when. */
static int
lists_rules_sources(struct buf *b, const char *const url[LISTS_RULES_N],
    const size_t count[LISTS_RULES_N], const struct buf body[LISTS_RULES_N])
{
	char when[32], shown[1024];
	struct tm tm;
	time_t now = time(NULL);
	size_t t;
	int bad = 0;

	if (gmtime_r(&now, &tm) == NULL || strftime(when, sizeof(when),
	    "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(when, sizeof(when), "%lld", (long long)now);
	bad |= buf_printf(b, "# Rule tables fetched by svcadm lists update "
	    "at %s\n", when);
	for (t = 0; t < LISTS_RULES_N; t++) {
		lists_rules_url_shown(url[t], shown, sizeof(shown));
		bad |= buf_printf(b, "%s %s %zu %s %zu bytes\n",
		    lists_rules_tables[t].name, shown, count[t],
		    lists_rules_tables[t].entries, body[t].len);
	}
	return bad ? -1 : 0;
}

enum lists_rules_err
lists_rules_install(const char *dir, const struct buf body[LISTS_RULES_N],
    const char *const url[LISTS_RULES_N], const size_t count[LISTS_RULES_N],
    struct buf *err)
{
	const char *name[LISTS_RULES_N + 1];
	char staged[LISTS_RULES_N + 1][1024], final[LISTS_RULES_N + 1][1024];
	struct buf src;
	size_t i, n = LISTS_RULES_N + 1, written = 0, renamed = 0;
	int creating = 0;
	enum lists_rules_err rc = LISTS_RULES_WRITE;

	buf_init(&src, 64 * 1024);
	for (i = 0; i < LISTS_RULES_N; i++)
		name[i] = lists_rules_tables[i].name;
	name[LISTS_RULES_N] = LISTS_RULES_SOURCES;
	if (lists_rules_sources(&src, url, count, body) == -1) {
		buf_puts(err, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		if ((size_t)snprintf(staged[i], sizeof(staged[i]),
		    "%s/.%s.new.%ld", dir, name[i], (long)getpid()) >=
		    sizeof(staged[i]) || (size_t)snprintf(final[i],
		    sizeof(final[i]), "%s/%s", dir, name[i]) >=
		    sizeof(final[i])) {
			buf_printf(err, "%s: path too long", dir);
			goto out;
		}
	}
	/* every file written beside its final name (the same file system)
	 * before any is renamed */
	for (written = 0; written < n; written++) {
		const struct buf *b = written < LISTS_RULES_N ? &body[written] :
		    &src;

		creating = 1;
		if (lists_rules_write_file(staged[written], buf_str(b), b->len,
		    err) == -1)
			goto out;
		creating = 0;
	}
	for (renamed = 0; renamed < n; renamed++) {
		if (rename(staged[renamed], final[renamed]) == -1) {
			buf_printf(err, "cannot rename %s to %s: %s",
			    staged[renamed], final[renamed], strerror(errno));
			if (renamed > 0)
				buf_printf(err, "; the files before it in %s "
				    "were replaced", dir);
			goto out;
		}
	}
	lists_rules_sync_dir(dir);
	rc = LISTS_RULES_OK;
out:
	for (i = renamed; i < written; i++)
		unlink(staged[i]);
	if (creating)
		unlink(staged[written]);	/* a file half written */
	if (rc != LISTS_RULES_OK && renamed == 0)
		buf_printf(err, "; the rule tables in %s are unchanged", dir);
	buf_free(&src);
	return rc;
}

enum lists_rules_err
lists_rules_update(const char *dir, const struct lists_rules_source *src,
    FILE *out, struct buf *err)
{
	struct buf body[LISTS_RULES_N];
	char *url[LISTS_RULES_N];
	size_t count[LISTS_RULES_N], t, blen;
	enum lists_rules_err rc = LISTS_RULES_OK;
	const char *sep;

	if (src->url == NULL || src->url[0] == '\0') {
		fprintf(out, "rule tables: lists_rules_url is not set; the "
		    "installed %s, %s and %s are kept (set lists_rules_url "
		    "in svc.conf to an https:// folder that serves them to "
		    "refresh them)\n", lists_rules_tables[0].name,
		    lists_rules_tables[1].name, lists_rules_tables[2].name);
		return LISTS_RULES_OK;
	}
	buf_reset(err);
	if (strncasecmp(src->url, "https://", 8) != 0) {
		char shown[1024];

		lists_rules_url_shown(src->url, shown, sizeof(shown));
		buf_printf(err, "lists_rules_url %s is not an https:// URL; "
		    "the rule tables are unchanged", shown);
		return LISTS_RULES_URL;
	}
	blen = strlen(src->url);
	sep = src->url[blen - 1] == '/' ? "" : "/";
	for (t = 0; t < LISTS_RULES_N; t++) {
		buf_init(&body[t], LISTS_RULES_GET_MAX);
		url[t] = NULL;
	}
	for (t = 0; t < LISTS_RULES_N && rc == LISTS_RULES_OK; t++) {
		size_t ulen = blen + strlen(sep) +
		    strlen(lists_rules_tables[t].name) + 1;
		char shown[1024];

		if ((url[t] = malloc(ulen)) == NULL) {
			buf_puts(err, "out of memory");
			rc = LISTS_RULES_FETCH;
			break;
		}
		snprintf(url[t], ulen, "%s%s%s", src->url, sep,
		    lists_rules_tables[t].name);
		if (src->get(url[t], src->ca_file, &body[t], err) == -1)
			rc = LISTS_RULES_FETCH;
		else if (lists_rules_check(t, buf_str(&body[t]), body[t].len,
		    &count[t], err) == -1) {
			lists_rules_url_shown(url[t], shown, sizeof(shown));
			buf_printf(err, " (served at %s)", shown);
			rc = LISTS_RULES_CHECK;
		}
	}
	if (rc == LISTS_RULES_OK)
		rc = lists_rules_install(dir, body, (const char *const *)url,
		    count, err);
	if (rc == LISTS_RULES_FETCH || rc == LISTS_RULES_CHECK)
		buf_printf(err, "; the rule tables in %s are unchanged", dir);
	else if (rc == LISTS_RULES_OK)
		for (t = 0; t < LISTS_RULES_N; t++) {
			char shown[1024];

			lists_rules_url_shown(url[t], shown, sizeof(shown));
			fprintf(out, "rule tables: %s: %zu %s, %zu bytes from "
			    "%s\n", lists_rules_tables[t].name, count[t],
			    lists_rules_tables[t].entries, body[t].len, shown);
		}
	for (t = 0; t < LISTS_RULES_N; t++) {
		buf_free(&body[t]);
		free(url[t]);
	}
	return rc;
}
