/* router.h: the route table and the pipeline every request goes through. */
#ifndef SVC_ROUTER_H
#define SVC_ROUTER_H
#include "api/api.h"

/* What the process shares with the host's other responders (api.h). */
int	 router_ctx_init(struct api_ctx *, const struct conf *,
	    const struct api_shared *, struct buf *err);
void	 router_ctx_free(struct api_ctx *);
/* Answers one request: routing, client address, authentication, rate
 * limit, subscription, scope, body limits, then the handler. */
void	 router_dispatch(struct api_ctx *, struct http_req *, struct http_resp *,
	    char account_for_log[IDS_MAX]);
#endif
