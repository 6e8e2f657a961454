/* egress_down.h: dead-proxy memory. A socks5:// route whose proxy refused
 * the connection, closed it or failed the SOCKS5 exchange is marked down
 * in MariaDB (table egress_down) for a back-off that doubles with each
 * failure in a row (EGRESS_DOWN_BASE_MS, then twice that, ... at most
 * EGRESS_DOWN_MAX_MS). Every worker reads the marks (struct egress
 * down_until) and opens no session by a route that is down while another
 * one is up; the first session by it after the back-off is the health
 * check: through the proxy, the mark is cleared; failed, it grows. */
#ifndef SVC_EGRESS_DOWN_H
#define SVC_EGRESS_DOWN_H
#include "core/db.h"
#include "engine/egress.h"
#include "engine/smtp.h"
#include <stdint.h>

#define EGRESS_DOWN_BASE_MS	30000
#define EGRESS_DOWN_MAX_MS	600000

/* One more failure of route (its name): down for the back-off. */
enum db_err egress_down_mark(struct db *, const char *route, const char *why);
/* The route works again. */
enum db_err egress_down_clear(struct db *, const char *route);
/* The marks of every route of e, into e->down_until (local clock at now;
 * a mark whose back-off passed: 1, so that the next session by it is
 * known as the check). */
enum db_err egress_down_read(struct db *, struct egress *, int64_t now);
/* After a session: the proxies that failed in it are marked down (here at
 * once, in MariaDB for the others), and a route marked down that it got
 * through is up again. */
void	 egress_down_note(struct db *, struct egress *,
	    const struct smtp_session_info *, int64_t now);
#endif
