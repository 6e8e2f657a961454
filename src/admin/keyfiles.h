/* keyfiles.h: the keyed-hash keys "svcadm db migrate" writes when their
 * files are missing: the verdict cache's (admin/cacheadm.h) and the
 * delivery feedback's (admin/feedbackadm.h). */
#ifndef SVC_KEYFILES_H
#define SVC_KEYFILES_H
#include "util/buf.h"
#include "util/conf.h"

/* Writes what is missing and says so on stdout. Without its key the
 * verdict cache is only off (a warning on stderr); a feedback key that
 * cannot be written is an error: -1 with err. Else 0. */
int	 keyfiles_ensure(const struct conf *, struct buf *err);
#endif
