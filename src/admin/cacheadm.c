/* cacheadm.c: create, rotate and use the verdict cache's key (cacheadm.h). */
#include "admin/cacheadm.h"
#include "engine/addr.h"
#include "util/timeutil.h"
#include <sodium.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

int
cacheadm_ensure_key(const struct conf *c, struct buf *err)
{
	const char *path = conf_str(c, CONF_CACHE_HASH_KEY_FILE);
	struct stat st;

	if (*path == '\0' || stat(path, &st) == 0 || errno != ENOENT)
		return cachekey_check(c, err) == 0 ? 0 : -1;
	return cachekey_write_file(path, err) == 0 ? 1 : -1;
}

int
cacheadm_rotate(struct db *db, const struct conf *c,
    unsigned long long *deleted, struct buf *err)
{
	const char *path = conf_str(c, CONF_CACHE_HASH_KEY_FILE);
	*deleted = 0;
	if (*path == '\0') {
		buf_puts(err, "cache_hash_key_file is empty (the key is "
		    "cache_hash_key in svc.conf: change it there)");
		return -1;
	}
	if (cachekey_write_file(path, err) == -1)
		return -1;
	/* every running process looks at the file again within
	 * CACHEKEY_RECHECK_MS (a tick of its coarse clock more): rows it
	 * stores with the old key until then go with the rest */
	timeutil_sleep_ms(CACHEKEY_RECHECK_MS + 50);
	if (db_exec(db, "DELETE FROM verdict_cache", DB_NOARGS, deleted) !=
	    DB_OK) {
		buf_printf(err, "deleting the cache: %s", db_error(db));
		return -1;
	}
	return 0;
}

static void
cacheadm_hash_one(struct cachekey *k, const char *address, FILE *out)
{
	char h[ADDRHASH_HEX_LEN + 1];
	struct addr a;

	if (addr_parse(address, &a) != ADDR_OK || cachekey_hash(k, a.normalised,
	    h) == -1)
		h[0] = '\0';
	fprintf(out, "%s\n", h);
}

int
cacheadm_hash(const struct conf *c, char *const *addresses, size_t n,
    FILE *out, struct buf *err)
{
	struct cachekey k;
	char line[1024];
	size_t i;

	if (cachekey_check(c, err) == -1)
		return -1;
	cachekey_init(&k, c);
	for (i = 0; i < n; i++) {
		if (strcmp(addresses[i], "-") != 0) {
			cacheadm_hash_one(&k, addresses[i], out);
			continue;
		}
		while (fgets(line, sizeof(line), stdin) != NULL) {
			line[strcspn(line, "\r\n")] = '\0';
			cacheadm_hash_one(&k, line, out);
		}
	}
	sodium_memzero(&k, sizeof(k));
	return 0;
}
