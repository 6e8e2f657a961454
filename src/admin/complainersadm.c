/* complainersadm.c: svcadm's side of the known-complainer list
 * (complainersadm.h): the key read from the configuration, the list's
 * own work in engine/complainers.c. */
#include "admin/complainersadm.h"
#include <sodium.h>

int
complainersadm_hash_clear(struct db *db, struct conf *c, FILE *out,
    struct buf *err)
{
	struct addrhash_key key;
	unsigned long n = 0;
	enum db_err e;

	/* the key file may have been written a moment ago by db migrate */
	if (conf_reread_feedback_key(c, err) == -1)
		return -1;
	if (addrhash_key_from_conf(c, CONF_FEEDBACK_HASH_KEY, &key) == -1) {
		fprintf(stderr, "svcadm: warning: feedback_hash_key is not "
		    "set: complainer rows in clear are not hashed yet\n");
		return 0;
	}
	e = complainers_hash_clear(db, &key, &n);
	sodium_memzero(&key, sizeof(key));
	if (e != DB_OK) {
		buf_printf(err, "complainers: %s", db_error(db));
		return -1;
	}
	if (n > 0)
		fprintf(out, "complainers: %lu addresses in clear replaced by "
		    "their hashes\n", n);
	return 0;
}

int
complainersadm_import(struct db *db, const struct conf *c, FILE *in,
    const char *source, struct complainers_counts *counts, struct buf *err)
{
	struct addrhash_key key;
	enum db_err e;

	if (addrhash_key_from_conf(c, CONF_FEEDBACK_HASH_KEY, &key) == -1) {
		buf_puts(err, "feedback_hash_key is not set (svcadm db migrate "
		    "writes feedback_hash_key_file)");
		return -1;
	}
	e = complainers_import(db, &key, in, source, counts);
	sodium_memzero(&key, sizeof(key));
	if (e != DB_OK) {
		buf_puts(err, db_error(db));
		return -1;
	}
	return 0;
}
