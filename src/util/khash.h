/* khash.h: the one keyed hash of svc (SipHash-2-4, libsodium's
 * crypto_shorthash) for every hash table and set whose keys can come from
 * outside (addresses of a job, domains, list entries, account ids), so that
 * nobody can choose inputs that all land in one bucket.
 *
 * The key is drawn at random once per process (libsodium's randombytes).
 * Programs call khash_init() first thing (startup.c does); khash() also
 * initialises on its first call (unit tests and fuzzers rely on that),
 * safely from any thread.
 *
 * The key is inherited across fork(), and that matters: svc-api's prefork
 * master maps authcache's account generation table before forking its
 * responders, and every responder must find an account at the same index
 * of it. So the key must be set before the fork, never first in a child:
 * svc-api's main calls startup(), which calls khash_init(), and
 * authcache_gens_shared() calls it too before it maps the table. A process
 * started with exec (another host, another master) has another key, which
 * is fine for everything that only lives in one process or in the
 * processes of one master. Never store a khash value or send it anywhere. */
#ifndef SVC_KHASH_H
#define SVC_KHASH_H
#include <stddef.h>
#include <stdint.h>

#define KHASH_KEY_LEN 16

/* Sets up libsodium and the key, once per process: 0, or -1 when libsodium
 * cannot be initialised (programs die; khash then hashes with an all-zero
 * key, still correct but no longer unpredictable). */
int	 khash_init(void);
/* SipHash-2-4 of the n bytes at p under the process's key, read as a
 * little-endian 64-bit number (the reference implementation's order). */
uint64_t khash(const void *p, size_t n);
/* Unit tests only: replaces the key with a fixed one, for deterministic
 * positions. Call it before other threads hash. */
void	 khash_set_key(const uint8_t key[KHASH_KEY_LEN]);
#endif
