/* ids.c: random opaque identifiers and secrets in base62, drawn from GnuTLS's
 * cryptographic RNG. Rejection sampling keeps every character uniform. */
#include "util/ids.h"
#include <gnutls/crypto.h>
#include <string.h>

static const char base62[] =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

int
ids_random_text(const char *prefix, size_t n, char *out, size_t outsz)
{
	unsigned char rnd[64];
	size_t plen = strlen(prefix), have = 0, used = sizeof(rnd);

	if (plen + n + 1 > outsz)
		return -1;
	memcpy(out, prefix, plen);
	while (have < n) {
		if (used == sizeof(rnd)) {
			if (gnutls_rnd(GNUTLS_RND_RANDOM, rnd, sizeof(rnd)) != 0)
				return -1;
			used = 0;
		}
		/* 248 = 4 * 62: bytes above it would bias the first letters. */
		if (rnd[used] < 248)
			out[plen + have++] = base62[rnd[used] % 62];
		used++;
	}
	out[plen + n] = '\0';
	return 0;
}

int
ids_new(const char *prefix, char out[IDS_MAX])
{
	char p[40];
	size_t l = strlen(prefix);

	if (l + 2 > sizeof(p))
		return -1;
	memcpy(p, prefix, l);
	p[l] = '_';
	p[l + 1] = '\0';
	return ids_random_text(p, 24, out, IDS_MAX);
}
