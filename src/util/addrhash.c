/* addrhash.c: the stored keyed hash of an address (addrhash.h). */
#include "util/addrhash.h"
#include "util/hex.h"
#include <sodium.h>
#include <string.h>

int
addrhash_key_from_hex(struct addrhash_key *key, const char *hex)
{
	size_t i, n;

	memset(key, 0, sizeof(*key));
	while (*hex == ' ' || *hex == '\t' || *hex == '\n' || *hex == '\r')
		hex++;
	n = strlen(hex);
	while (n > 0 && (hex[n - 1] == ' ' || hex[n - 1] == '\t' ||
	    hex[n - 1] == '\n' || hex[n - 1] == '\r'))
		n--;
	if (n != ADDRHASH_KEY_HEX_LEN)
		return -1;
	for (i = 0; i < ADDRHASH_KEY_LEN; i++) {
		int hi = hex_value((unsigned char)hex[2 * i]);
		int lo = hex_value((unsigned char)hex[2 * i + 1]);

		if (hi < 0 || lo < 0) {
			sodium_memzero(key, sizeof(*key));
			return -1;
		}
		key->k[i] = (unsigned char)(hi << 4 | lo);
	}
	return 0;
}

int
addrhash_key_from_conf(const struct conf *c, enum conf_key k,
    struct addrhash_key *key)
{
	const char *hex = conf_str(c, k);

	if (hex == NULL || *hex == '\0')
		return -1;
	return addrhash_key_from_hex(key, hex);
}

void
addrhash_key_generate(char out[ADDRHASH_KEY_HEX_LEN + 1])
{
	unsigned char k[ADDRHASH_KEY_LEN];

	/* randombytes needs no sodium_init() since libsodium 1.0.12, but a
	 * program calls it at start-up anyway (startup.c). */
	randombytes_buf(k, sizeof(k));
	hex_encode(k, sizeof(k), out);
	sodium_memzero(k, sizeof(k));
}

void
addrhash_hex(const struct addrhash_key *key, const char *s, size_t n,
    char out[ADDRHASH_HEX_LEN + 1])
{
	unsigned char h[ADDRHASH_LEN];

	crypto_generichash(h, sizeof(h), (const unsigned char *)s, n,
	    key->k, sizeof(key->k));
	hex_encode(h, sizeof(h), out);
}
