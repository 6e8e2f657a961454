/* dbhosts.h: the db_hosts setting, a list of MariaDB endpoints
 * ("host:port", "[v6addr]:port", or "host" for port 3306) separated by
 * spaces or commas; one Galera node each. */
#ifndef SVC_DBHOSTS_H
#define SVC_DBHOSTS_H
#include "util/buf.h"
#include <stddef.h>

#define DBHOSTS_MAX		16
#define DBHOSTS_HOST_MAX	255
#define DBHOSTS_DEFAULT_PORT	3306

struct dbhost {
	char		host[DBHOSTS_HOST_MAX + 1];
	unsigned	port;
};

/* Parses s into out[0..*n). An empty list gives *n = 0. Returns 0, or -1
 * with a message in err (nothing in out is to be used then). Duplicate
 * endpoints are refused. */
int	dbhosts_parse(const char *s, struct dbhost *out, size_t max,
	    size_t *n, struct buf *err);
/* "host:port" ("[host]:port" when host has a ':') into dst. */
void	dbhosts_format(const struct dbhost *, char *dst, size_t len);
#endif
