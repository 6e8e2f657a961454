/* khash.c: the keyed hash described in khash.h, SipHash-2-4 through
 * libsodium with a random key set up once per process under pthread_once. */
#include "util/khash.h"
#include <pthread.h>
#include <sodium.h>
#include <string.h>

_Static_assert(crypto_shorthash_KEYBYTES == KHASH_KEY_LEN, "SipHash key");
_Static_assert(crypto_shorthash_BYTES == 8, "SipHash-2-4 is 64 bits");

static unsigned char khash_key[KHASH_KEY_LEN];
static pthread_once_t khash_once = PTHREAD_ONCE_INIT;
static int khash_rc;

static void
khash_setup(void)
{
	if (sodium_init() < 0) {
		khash_rc = -1;
		return;
	}
	randombytes_buf(khash_key, sizeof(khash_key));
}

int
khash_init(void)
{
	/* After the first call this is one load and compare (glibc). */
	pthread_once(&khash_once, khash_setup);
	return khash_rc;
}

uint64_t
khash(const void *p, size_t n)
{
	unsigned char out[crypto_shorthash_BYTES];
	uint64_t h = 0;
	int i;

	khash_init();
	crypto_shorthash(out, p, n, khash_key);
	for (i = 7; i >= 0; i--)
		h = h << 8 | out[i];
	return h;
}

void
khash_set_key(const uint8_t key[KHASH_KEY_LEN])
{
	khash_init();
	memcpy(khash_key, key, KHASH_KEY_LEN);
}
