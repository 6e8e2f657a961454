/* startup.h: the first steps of svc-api, svc-worker and svcadm, taken in
 * one order and failing with one set of messages: the keyed hash, svc.conf,
 * then the log. */
#ifndef SVC_STARTUP_H
#define SVC_STARTUP_H
#include "util/buf.h"
#include "util/conf.h"

/*
 * Sets up the keyed hash (khash_init: before any fork, khash.h), then loads
 * svc.conf from path (-c), else from $SVC_CONF, else from the default path
 * (conf_default_path), where a missing file means the defaults: a file
 * named by -c or $SVC_CONF must exist. With prog, it then reads log_level
 * and sends prog's log lines at that level to log_file (log_init); with
 * NULL it leaves the log alone (svcadm keeps writing to stderr).
 * Returns 0, or -1 with the reason in err ("cannot initialise libsodium",
 * the file's error, "log_level: error, warn, info or debug") and the
 * configuration freed: the program prints it after its name and exits.
 */
int	 startup(struct conf *, const char *path, const char *prog,
	    struct buf *err);
#endif
