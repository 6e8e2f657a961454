/* config.c: reads and writes svc's config file. The file holds an API
 * key, so it is written the way a secret is: a new file created 0600 next
 * to the old one, written, synced and renamed over it (a reader sees the
 * old file or the new one, never half of one), and refused when reading
 * if anyone but its owner may read or write it. */
#include "cli/config.h"
#include "util/strparse.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CONFIG_VALUE_MAX 4096

static int
config_find(struct config *c, struct buf *err)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	int n;

	if (xdg != NULL && xdg[0] == '/')
		n = snprintf(c->path, sizeof(c->path), "%s/svc/config", xdg);
	else if (home != NULL && home[0] != '\0')
		n = snprintf(c->path, sizeof(c->path), "%s/.config/svc/config",
		    home);
	else {
		buf_puts(err, "neither XDG_CONFIG_HOME nor HOME is set: "
		    "no place for the config file");
		return -1;
	}
	if (n < 0 || (size_t)n >= sizeof(c->path)) {
		buf_puts(err, "the config file's path is too long");
		return -1;
	}
	return 0;
}

/* One "name = value" line (comments and blank lines skipped). */
static int
config_line(struct config *c, char *line, unsigned long n, struct buf *err)
{
	char *eq, *name, *value, **slot;

	line = strparse_trim(line);
	if (line[0] == '\0' || line[0] == '#')
		return 0;
	if ((eq = strchr(line, '=')) == NULL) {
		buf_printf(err, "%s:%lu: not a name = value line", c->path, n);
		return -1;
	}
	*eq = '\0';
	name = strparse_trim(line);
	value = strparse_trim(eq + 1);
	if (strcmp(name, "api_key") == 0)
		slot = &c->api_key;
	else if (strcmp(name, "base_url") == 0)
		slot = &c->base_url;
	else
		return 0;	/* a setting of a later version */
	free(*slot);
	*slot = NULL;
	if (value[0] != '\0' && (*slot = strdup(value)) == NULL) {
		buf_puts(err, "out of memory");
		return -1;
	}
	return 0;
}

enum config_rc
config_load(struct config *c, int check_mode, struct buf *err)
{
	struct stat st;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	unsigned long n = 0;
	enum config_rc rc = CONFIG_ERROR;
	FILE *f;
	int fd;

	memset(c, 0, sizeof(*c));
	if (config_find(c, err) == -1)
		return CONFIG_ERROR;
	if ((fd = open(c->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1) {
		if (errno == ENOENT)
			return CONFIG_MISSING;
		buf_printf(err, "%s: %s", c->path, strerror(errno));
		return CONFIG_ERROR;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		buf_printf(err, "%s: not a regular file", c->path);
		close(fd);
		return CONFIG_ERROR;
	}
	c->mode = st.st_mode & 07777;
	if (check_mode && (st.st_mode & (S_IRWXG | S_IRWXO))) {
		buf_printf(err, "%s holds an API key and others may read it "
		    "(mode %04o): refused; run chmod 600 %s", c->path,
		    (unsigned)c->mode, c->path);
		close(fd);
		return CONFIG_EXPOSED;
	}
	if (check_mode && st.st_uid != geteuid()) {
		buf_printf(err, "%s belongs to user %lu, not to you: refused",
		    c->path, (unsigned long)st.st_uid);
		close(fd);
		return CONFIG_EXPOSED;
	}
	if ((f = fdopen(fd, "r")) == NULL) {
		buf_printf(err, "%s: %s", c->path, strerror(errno));
		close(fd);
		return CONFIG_ERROR;
	}
	while ((len = getline(&line, &cap, f)) != -1) {
		n++;
		if (len > CONFIG_VALUE_MAX) {
			buf_printf(err, "%s:%lu: line too long", c->path, n);
			goto out;
		}
		if (config_line(c, line, n, err) == -1)
			goto out;
	}
	if (ferror(f)) {
		buf_printf(err, "%s: read error", c->path);
		goto out;
	}
	rc = CONFIG_OK;
out:
	free(line);
	fclose(f);
	return rc;
}

/* Makes the folder of the file (and its parent), owner-only. */
static int
config_mkdir(const char *path, struct buf *err)
{
	char dir[PATH_MAX], *slash;

	strparse_copy(dir, sizeof(dir), path);
	if ((slash = strrchr(dir, '/')) == NULL)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0700) == 0 || errno == EEXIST)
		return 0;
	if (errno == ENOENT && (slash = strrchr(dir, '/')) != NULL) {
		*slash = '\0';
		if ((mkdir(dir, 0700) == 0 || errno == EEXIST)) {
			*slash = '/';
			if (mkdir(dir, 0700) == 0 || errno == EEXIST)
				return 0;
		}
		*slash = '/';
	}
	buf_printf(err, "%s: %s", dir, strerror(errno));
	return -1;
}

int
config_save(const struct config *c, struct buf *err)
{
	char tmp[PATH_MAX + 16];
	struct buf text;
	int fd = -1, rc = -1;

	buf_init(&text, 4 * CONFIG_VALUE_MAX);
	if (buf_puts(&text, "# svc(1) configuration, written by svc config; "
	    "it holds your API key: keep it 0600\n") == -1 ||
	    (c->api_key && buf_printf(&text, "api_key = %s\n",
	    c->api_key) == -1) ||
	    (c->base_url && buf_printf(&text, "base_url = %s\n",
	    c->base_url) == -1)) {
		buf_puts(err, "value too long");
		goto out;
	}
	if (config_mkdir(c->path, err) == -1)
		goto out;
	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", c->path) >=
	    (int)sizeof(tmp)) {
		buf_puts(err, "the config file's path is too long");
		goto out;
	}
	/* mkstemp creates the file 0600 */
	if ((fd = mkstemp(tmp)) == -1) {
		buf_printf(err, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	if (fchmod(fd, 0600) == -1 ||
	    write(fd, text.data, text.len) != (ssize_t)text.len ||
	    fsync(fd) == -1) {
		buf_printf(err, "%s: %s", tmp, strerror(errno));
		goto fail;
	}
	if (close(fd) == -1) {
		fd = -1;
		buf_printf(err, "%s: %s", tmp, strerror(errno));
		goto fail;
	}
	fd = -1;
	if (rename(tmp, c->path) == -1) {
		buf_printf(err, "%s: %s", c->path, strerror(errno));
		goto fail;
	}
	rc = 0;
	goto out;
fail:
	if (fd != -1)
		close(fd);
	unlink(tmp);
out:
	buf_free(&text);
	return rc;
}

void
config_free(struct config *c)
{
	free(c->api_key);
	free(c->base_url);
	c->api_key = c->base_url = NULL;
}
