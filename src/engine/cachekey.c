/* cachekey.c: the verdict cache's key (cachekey.h). */
#include "engine/cachekey.h"
#include "util/log.h"
#include "util/strparse.h"
#include "util/timeutil.h"
#include <sodium.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Reads the file's first line as a key: 0, 1 when the file is missing, -1
 * when it does not hold a key. */
static int
cachekey_read(const char *path, struct addrhash_key *k, struct stat *st)
{
	char line[256];
	FILE *f;
	int rc;

	if ((f = fopen(path, "re")) == NULL)
		return errno == ENOENT ? 1 : -1;
	if (fstat(fileno(f), st) == -1 || fgets(line, sizeof(line), f) ==
	    NULL)
		line[0] = '\0';
	fclose(f);
	rc = addrhash_key_from_hex(k, line);
	sodium_memzero(line, sizeof(line));
	return rc;
}

static void
cachekey_load(struct cachekey *c)
{
	struct addrhash_key k;
	struct stat st;
	int rc;

	memset(&st, 0, sizeof(st));
	rc = cachekey_read(c->path, &k, &st);
	c->dev = st.st_dev;
	c->ino = st.st_ino;
	c->mtime = st.st_mtim;
	if (rc == 0) {
		if (!c->have)
			log_debug("event=cache_key_loaded file=%s", c->path);
		c->key = k;
		c->have = 1;
	} else {
		if (c->have || !c->loaded)
			log_warn("event=cache_key_missing file=%s error=\"%s\" "
			    "verdict_cache=off", c->path, rc == 1 ? "no such "
			    "file" : "not 64 hexadecimal digits");
		sodium_memzero(&c->key, sizeof(c->key));
		c->have = 0;
	}
	c->loaded = 1;
	sodium_memzero(&k, sizeof(k));
}

void
cachekey_init(struct cachekey *c, const struct conf *conf)
{
	const char *path = conf_str(conf, CONF_CACHE_HASH_KEY_FILE);

	memset(c, 0, sizeof(*c));
	c->recheck_ms = CACHEKEY_RECHECK_MS;
	strparse_copy(c->path, sizeof(c->path), path);
	if (*path == '\0') {
		c->have = addrhash_key_from_hex(&c->key, conf_str(conf,
		    CONF_CACHE_HASH_KEY)) == 0;
		if (!c->have)
			log_warn("event=cache_key_missing verdict_cache=off");
		return;
	}
	cachekey_load(c);
	c->checked_ms = timeutil_mono_coarse_ms();
}

/* The key file again when it was replaced (rotate-key renames a new file
 * into place), looked at when recheck_ms have passed since the last look:
 * an address hashed more than recheck_ms after the rename is hashed with
 * the new key, which is what rotate-key waits for. */
static void
cachekey_refresh(struct cachekey *c)
{
	int64_t now = timeutil_mono_coarse_ms();
	struct stat st;

	if (c->path[0] == '\0' || (c->loaded && now - c->checked_ms <
	    c->recheck_ms))
		return;
	c->checked_ms = now;
	if (stat(c->path, &st) == -1)
		memset(&st, 0, sizeof(st));
	if (st.st_dev == c->dev && st.st_ino == c->ino &&
	    st.st_mtim.tv_sec == c->mtime.tv_sec &&
	    st.st_mtim.tv_nsec == c->mtime.tv_nsec)
		return;
	cachekey_load(c);
}

int
cachekey_hash(struct cachekey *c, const char *normalised,
    char out[ADDRHASH_HEX_LEN + 1])
{
	cachekey_refresh(c);
	out[0] = '\0';
	if (!c->have)
		return -1;
	addrhash_hex(&c->key, normalised, strlen(normalised), out);
	return 0;
}

int
cachekey_write_file(const char *path, struct buf *err)
{
	char hex[ADDRHASH_KEY_HEX_LEN + 1], tmp[1100];
	struct stat old;
	int fd, have_old, rc = -1;

	if (snprintf(tmp, sizeof(tmp), "%s.new", path) >= (int)sizeof(tmp)) {
		buf_printf(err, "%s: path too long", path);
		return -1;
	}
	have_old = stat(path, &old) == 0;
	(void)unlink(tmp);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    have_old ? (old.st_mode & 07777) : 0640)) == -1) {
		buf_printf(err, "%s: %s", tmp, strerror(errno));
		return -1;
	}
	/* (fchmod: the umask does not decide the mode) */
	if ((have_old ? (fchown(fd, old.st_uid, old.st_gid) == -1 ||
	    fchmod(fd, old.st_mode & 07777) == -1) : fchmod(fd, 0640) == -1) &&
	    errno != EPERM) {
		buf_printf(err, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	addrhash_key_generate(hex);
	hex[ADDRHASH_KEY_HEX_LEN] = '\n';
	if (write(fd, hex, sizeof(hex)) != (ssize_t)sizeof(hex) ||
	    fsync(fd) == -1) {
		buf_printf(err, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	if (close(fd) == -1 || rename(tmp, path) == -1) {
		fd = -1;
		buf_printf(err, "%s: %s", path, strerror(errno));
		goto out;
	}
	fd = -1;
	rc = 0;
out:
	sodium_memzero(hex, sizeof(hex));
	if (fd != -1)
		close(fd);
	if (rc == -1)
		(void)unlink(tmp);
	return rc;
}

int
cachekey_check(const struct conf *conf, struct buf *err)
{
	const char *path = conf_str(conf, CONF_CACHE_HASH_KEY_FILE);
	struct addrhash_key k;
	struct stat st;
	int rc;

	if (*path == '\0') {
		rc = addrhash_key_from_hex(&k, conf_str(conf,
		    CONF_CACHE_HASH_KEY));
		if (rc == -1)
			buf_puts(err, "cache_hash_key is not 64 hexadecimal "
			    "digits and cache_hash_key_file is empty");
	} else {
		rc = cachekey_read(path, &k, &st);
		if (rc != 0)
			buf_printf(err, "%s: %s", path, rc == 1 ? "no such "
			    "file" : "not 64 hexadecimal digits");
	}
	sodium_memzero(&k, sizeof(k));
	return rc == 0 ? 0 : -1;
}
