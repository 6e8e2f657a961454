/* test_addrhash.c: src/util/addrhash.c, the stored keyed hash: BLAKE2b's
 * keyed answer (checked against libsodium's own one-shot call with the
 * same key), the same text giving the same hash, another key or another
 * text another hash, and keys read only from exactly 64 hex digits. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <sodium.h>
#include <string.h>

#include "util/addrhash.h"
#include "util/hex.h"

static const char key_hex[] =
    "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

static void
test_key_parse(void **state)
{
	struct addrhash_key k;
	char bad[sizeof(key_hex)];

	(void)state;
	assert_int_equal(addrhash_key_from_hex(&k, key_hex), 0);
	assert_int_equal(k.k[0], 0x00);
	assert_int_equal(k.k[31], 0x1f);
	assert_int_equal(addrhash_key_from_hex(&k, "  000102030405060708090A0B0C0D0E0F"
	    "101112131415161718191A1B1C1D1E1F\n"), 0);
	assert_int_equal(k.k[10], 0x0a);
	/* too short, too long, a non-digit: refused, key left zeroed */
	assert_int_equal(addrhash_key_from_hex(&k, "0001"), -1);
	assert_int_equal(k.k[0] | k.k[31], 0);
	assert_int_equal(addrhash_key_from_hex(&k, "00"), -1);
	memcpy(bad, key_hex, sizeof(bad));
	bad[40] = 'g';
	assert_int_equal(addrhash_key_from_hex(&k, bad), -1);
	assert_int_equal(k.k[1], 0);
	assert_int_equal(addrhash_key_from_hex(&k, ""), -1);
	{
		char longer[sizeof(key_hex) + 2];

		memcpy(longer, key_hex, sizeof(key_hex) - 1);
		memcpy(longer + sizeof(key_hex) - 1, "00", 3);
		assert_int_equal(addrhash_key_from_hex(&k, longer), -1);
	}
}

static void
test_hash(void **state)
{
	struct addrhash_key k, k2;
	char a[ADDRHASH_HEX_LEN + 1], b[ADDRHASH_HEX_LEN + 1];
	unsigned char ref[ADDRHASH_LEN];
	char ref_hex[ADDRHASH_HEX_LEN + 1];
	const char *addr = "user@example.com";

	(void)state;
	assert_int_equal(addrhash_key_from_hex(&k, key_hex), 0);
	addrhash_hex(&k, addr, strlen(addr), a);
	assert_int_equal(strlen(a), ADDRHASH_HEX_LEN);
	crypto_generichash(ref, sizeof(ref), (const unsigned char *)addr,
	    strlen(addr), k.k, sizeof(k.k));
	hex_encode(ref, sizeof(ref), ref_hex);
	assert_string_equal(a, ref_hex);
	/* nothing of the text shows */
	assert_null(strstr(a, "user"));
	addrhash_hex(&k, addr, strlen(addr), b);
	assert_string_equal(a, b);
	addrhash_hex(&k, "User@example.com", 16, b);
	assert_string_not_equal(a, b);
	/* another key, another hash */
	k2 = k;
	k2.k[31] ^= 1;
	addrhash_hex(&k2, addr, strlen(addr), b);
	assert_string_not_equal(a, b);
}

static void
test_generate(void **state)
{
	char g1[ADDRHASH_KEY_HEX_LEN + 1], g2[ADDRHASH_KEY_HEX_LEN + 1];
	struct addrhash_key k;

	(void)state;
	addrhash_key_generate(g1);
	addrhash_key_generate(g2);
	assert_int_equal(strlen(g1), ADDRHASH_KEY_HEX_LEN);
	assert_string_not_equal(g1, g2);
	assert_int_equal(addrhash_key_from_hex(&k, g1), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_parse),
		cmocka_unit_test(test_hash),
		cmocka_unit_test(test_generate),
	};

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
