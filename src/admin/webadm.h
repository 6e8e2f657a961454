/* webadm.h: svcadm's side of the dashboard's sign-in: an account's
 * password read from a stream, and one-time invitation links. Each returns
 * 0, or -1 with why in err. */
#ifndef SVC_WEBADM_H
#define SVC_WEBADM_H
#include "core/db.h"
#include "util/buf.h"
#include "util/conf.h"
#include <stdio.h>

/* "account set-password ACCOUNT": the password is the first line of in
 * (never an argument: ps would show it); the account's sessions end. */
int	 webadm_set_password(struct db *, const char *account, FILE *in,
	    struct buf *err);
/* "account invite ACCOUNT": prints base_url/app/invite#TOKEN to out, a
 * link that sets the password once, within invite_ttl_seconds. */
int	 webadm_invite(struct db *, const struct conf *, const char *account,
	    FILE *out, struct buf *err);
#endif
