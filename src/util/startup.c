/* startup.c: the first steps every program takes (startup.h): the keyed
 * hash, svc.conf, the log. */
#include "util/startup.h"
#include "util/khash.h"
#include "util/log.h"
#include <stdlib.h>
#include <string.h>

int
startup(struct conf *conf, const char *path, const char *prog,
    struct buf *err)
{
	enum log_level level;
	int must_exist, rc = -1;

	memset(conf, 0, sizeof(*conf));
	if (khash_init() == -1) {
		buf_puts(err, "cannot initialise libsodium");
		goto out;
	}
	must_exist = path != NULL || getenv("SVC_CONF") != NULL;
	if (path == NULL)
		path = conf_default_path();
	if (conf_load(conf, path, must_exist, err) == -1)
		goto out;
	if (prog != NULL) {
		if (log_level_parse(conf_str(conf, CONF_LOG_LEVEL), &level) ==
		    -1) {
			buf_puts(err, "log_level: error, warn, info or debug");
			goto out;
		}
		log_init(prog, level, conf_str(conf, CONF_LOG_FILE));
	}
	rc = 0;
out:
	if (rc == -1)
		conf_free(conf);
	return rc;
}
