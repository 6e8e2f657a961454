/* retentionadm.h: svcadm's side of erasure: an account's data erased with
 * what was erased printed, and the erase receipts printed. Each returns
 * 0, or -1 with why in err. */
#ifndef SVC_RETENTIONADM_H
#define SVC_RETENTIONADM_H
#include "core/db.h"
#include "util/buf.h"
#include <stdio.h>

/* "account erase ACCOUNT" by the operator actor: one "kind count" a line
 * on out. */
int	 retentionadm_erase(struct db *, const char *account, const char *actor,
	    FILE *out, struct buf *err);
/* "audit [--account ID] [--limit N]": the receipts, newest first, a line
 * each on out. */
int	 retentionadm_audit(struct db *, const char *account, long limit,
	    FILE *out, struct buf *err);
#endif
