/* sign.h: the signature of an event delivery (API.md, "Webhooks and
 * callbacks"): "t=<unix time>,v1=<hex HMAC-SHA256>" with one v1 per
 * secret, each over "<t>.<raw body>" keyed with the secret's bytes. */
#ifndef SVC_SIGN_H
#define SVC_SIGN_H
#include "util/buf.h"
#include <stddef.h>
#include <time.h>

/* Hex digits of one v1 value. */
#define SIGN_V1_LEN 64

/* Appends the signature value for body at time t to out; secrets in the
 * order given (the newest first). 0, or -1 when n is 0, a secret is
 * empty, or memory or the MAC failed (out then holds nothing new). */
int	 sign_header(const char *const *secrets, size_t n, time_t t,
	    const void *body, size_t len, struct buf *out);
#endif
