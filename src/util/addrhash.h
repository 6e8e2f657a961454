/* addrhash.h: the stored keyed hash of an address (or any short text), for
 * tables that must find a value again without keeping it in clear: the
 * shared verdict cache, delivery outcomes, lists kept as hashes.
 *
 * BLAKE2b (libsodium's crypto_generichash) keyed with a 32-byte secret that
 * the operator keeps in the configuration (64 hexadecimal digits), 16 bytes
 * out, written as 32 lower-case hex digits. Unlike khash.h's per-process
 * key, this key is the same in every process and on every host, because
 * the hashes are stored and shared; changing it makes every stored hash
 * unfindable, which is what rotating it is for. Callers hash the normalised
 * form (lower-case domain, as verify normalises it), so that one address
 * has one hash. */
#ifndef SVC_ADDRHASH_H
#define SVC_ADDRHASH_H
#include "util/conf.h"
#include <stddef.h>

#define ADDRHASH_KEY_LEN	32
#define ADDRHASH_LEN		16
#define ADDRHASH_HEX_LEN	(2 * ADDRHASH_LEN)
#define ADDRHASH_KEY_HEX_LEN	(2 * ADDRHASH_KEY_LEN)

struct addrhash_key {
	unsigned char	 k[ADDRHASH_KEY_LEN];
};

/* Reads a key written as exactly 64 hexadecimal digits (either case,
 * surrounding white space allowed): 0, or -1 for anything else (the key is
 * then left zeroed, never half set). */
int	 addrhash_key_from_hex(struct addrhash_key *key, const char *hex);
/* The key held by a setting (feedback_hash_key): 0, or -1 when it is unset
 * or not 64 hex digits. */
int	 addrhash_key_from_conf(const struct conf *, enum conf_key,
	    struct addrhash_key *key);
/* A new random key as 64 hex digits and a NUL (svcadm writes it into the
 * configuration). */
void	 addrhash_key_generate(char out[ADDRHASH_KEY_HEX_LEN + 1]);
/* The hash of the n bytes at s under key, as 32 hex digits and a NUL. */
void	 addrhash_hex(const struct addrhash_key *key, const char *s, size_t n,
	    char out[ADDRHASH_HEX_LEN + 1]);
#endif
