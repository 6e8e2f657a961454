/* lists_rules_get.h: the download of one rule table for "svcadm lists
 * update" (lists_rules.h): an https:// URL only (redirects followed to
 * https:// only, 5 at most), the server's certificate checked against
 * ca_file or the system's CAs, 60 seconds in all, a 200 answer's body of
 * LISTS_RULES_GET_MAX bytes at most. The operator names the URL
 * (lists_rules_url), so loopback and private addresses are allowed. */
#ifndef SVC_LISTS_RULES_GET_H
#define SVC_LISTS_RULES_GET_H
#include "util/buf.h"

#define LISTS_RULES_GET_MAX	(4u << 20)	/* bytes of one table */
#define LISTS_RULES_GET_TIMEOUT_MS 60000L

/* Fetches url into body (emptied first; its max should be
 * LISTS_RULES_GET_MAX or more). 0, or -1 with err saying why (the URL
 * not https, no connection, TLS, a status other than 200, too large). */
int	 lists_rules_get(const char *url, const char *ca_file,
	    struct buf *body, struct buf *err);
#endif
