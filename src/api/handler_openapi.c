/* handler_openapi.c: GET /v1/openapi.json, the API description embedded at
 * build time (openapi_doc.h). No key needed, not counted by the rate limit
 * (router.c): it is the same bytes for everyone, and tools fetch it often. */
#include "api/api.h"
#include "api/openapi_doc.h"

void
handler_openapi(struct api_call *c)
{
	c->resp->status = 200;
	buf_reset(&c->resp->body);
	http_set_header(c->resp, "Content-Type",
	    "application/json; charset=utf-8");
	if (buf_append(&c->resp->body, openapi_doc, openapi_doc_len) == -1)
		api_internal_error(c, "openapi");
}
