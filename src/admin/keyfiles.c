/* keyfiles.c: the keyed-hash keys svcadm db migrate writes (keyfiles.h). */
#include "admin/keyfiles.h"
#include "admin/cacheadm.h"
#include "admin/feedbackadm.h"
#include <stdio.h>

int
keyfiles_ensure(const struct conf *c, struct buf *err)
{
	int wrote;

	switch (cacheadm_ensure_key(c, err)) {
	case 1:
		printf("verdict cache key written to %s\n",
		    conf_str(c, CONF_CACHE_HASH_KEY_FILE));
		break;
	case -1:
		fprintf(stderr, "svcadm: warning: the verdict cache is off "
		    "until it has a key: %s\n", buf_str(err));
		break;
	}
	buf_reset(err);
	if (feedbackadm_key_init(c, &wrote, err) == -1)
		return -1;
	if (wrote)
		printf("wrote a new feedback_hash_key into %s\n",
		    conf_str(c, CONF_FEEDBACK_HASH_KEY_FILE));
	return 0;
}
