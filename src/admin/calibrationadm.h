/* calibrationadm.h: svcadm calibration update (rewrite the calibration
 * counts now) and svcadm calibration show (print them). */
#ifndef SVC_CALIBRATIONADM_H
#define SVC_CALIBRATIONADM_H
#include "core/db.h"
#include "util/buf.h"
#include "util/conf.h"
#include <stdio.h>

/* 0, or -1 with err set. */
int	 calibrationadm_update(struct db *, const struct conf *, FILE *out,
	    struct buf *err);
int	 calibrationadm_show(struct db *, FILE *out, struct buf *err);
#endif
