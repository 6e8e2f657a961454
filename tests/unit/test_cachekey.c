/* test_cachekey.c: src/engine/cachekey.c, the verdict cache's key: read
 * from cache_hash_key_file (or cache_hash_key), no key (missing or
 * malformed file) turning the cache off, a key file written with mode
 * 0640 and replaced keeping its mode, and a running reader taking a
 * replaced file's key at its first address after recheck_ms (svcadm cache
 * rotate-key waits that long), not looking at the file before. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/cachekey.h"

static char dir[] = "/tmp/test_cachekey.XXXXXX";
static char path[128];

static void
conf_with(struct conf *c, const char *file, const char *key)
{
	struct buf err;

	buf_init(&err, 256);
	conf_defaults(c);
	assert_int_equal(conf_set(c, "cache_hash_key_file", file, &err), 0);
	assert_int_equal(conf_set(c, "cache_hash_key", key, &err), 0);
	buf_free(&err);
}

static void
test_cachekey_file_and_rotation(void **state)
{
	char h1[ADDRHASH_HEX_LEN + 1], h2[ADDRHASH_HEX_LEN + 1],
	    h3[ADDRHASH_HEX_LEN + 1];
	struct cachekey k;
	struct conf c;
	struct stat st;
	struct buf err;

	(void)state;
	buf_init(&err, 256);
	conf_with(&c, path, "");
	/* missing file: no key, the cache is off */
	cachekey_init(&k, &c);
	assert_int_equal(k.recheck_ms, CACHEKEY_RECHECK_MS);
	k.recheck_ms = 0;	/* looked at at every address */
	assert_int_equal(cachekey_hash(&k, "jane@example.com", h1), -1);
	assert_string_equal(h1, "");
	assert_int_equal(cachekey_check(&c, &err), -1);
	/* written (0640): the running reader takes it at its next address */
	assert_int_equal(cachekey_write_file(path, &err), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);
	assert_int_equal(cachekey_check(&c, &err), 0);
	assert_int_equal(cachekey_hash(&k, "jane@example.com", h1), 0);
	assert_int_equal(strlen(h1), ADDRHASH_HEX_LEN);
	assert_null(strstr(h1, "jane"));
	assert_int_equal(cachekey_hash(&k, "jane@example.com", h2), 0);
	assert_string_equal(h1, h2);
	/* rotated: a new key (the mode kept), another hash at once */
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(cachekey_write_file(path, &err), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(cachekey_hash(&k, "jane@example.com", h3), 0);
	assert_string_not_equal(h1, h3);
	/* looked at once a recheck_ms: a replaced key is not seen before the
	 * time has passed since the last look (moved back here instead of
	 * waited for), and is at the first address after */
	k.recheck_ms = 3600 * 1000;
	assert_int_equal(cachekey_hash(&k, "jane@example.com", h1), 0);
	assert_string_equal(h1, h3);
	assert_int_equal(cachekey_write_file(path, &err), 0);
	assert_int_equal(cachekey_hash(&k, "jane@example.com", h2), 0);
	assert_string_equal(h2, h3);
	k.checked_ms -= k.recheck_ms;
	assert_int_equal(cachekey_hash(&k, "jane@example.com", h2), 0);
	assert_string_not_equal(h2, h3);
	k.recheck_ms = 0;
	/* malformed: off again */
	{
		FILE *f = fopen(path, "w");

		assert_non_null(f);
		fputs("not a key\n", f);
		fclose(f);
	}
	assert_int_equal(cachekey_hash(&k, "jane@example.com", h3), -1);
	assert_int_equal(cachekey_check(&c, &err), -1);
	unlink(path);
	conf_free(&c);
	buf_free(&err);
}

static void
test_cachekey_setting(void **state)
{
	static const char hex[] = "000102030405060708090a0b0c0d0e0f"
	    "101112131415161718191a1b1c1d1e1f";
	char h[ADDRHASH_HEX_LEN + 1], want[ADDRHASH_HEX_LEN + 1];
	struct addrhash_key key;
	struct cachekey k;
	struct conf c;

	(void)state;
	conf_with(&c, "", hex);
	cachekey_init(&k, &c);
	assert_int_equal(cachekey_hash(&k, "jane@example.com", h), 0);
	assert_int_equal(addrhash_key_from_hex(&key, hex), 0);
	addrhash_hex(&key, "jane@example.com", 16, want);
	assert_string_equal(h, want);
	conf_free(&c);
	conf_with(&c, "", "abc");
	cachekey_init(&k, &c);
	assert_int_equal(cachekey_hash(&k, "jane@example.com", h), -1);
	conf_free(&c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cachekey_file_and_rotation),
		cmocka_unit_test(test_cachekey_setting),
	};
	int rc;

	if (mkdtemp(dir) == NULL)
		return 1;
	snprintf(path, sizeof(path), "%s/cache_hash_key", dir);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(path);
	rmdir(dir);
	return rc;
}
