/* cmd_verify.c: svc verify <email>: one address through POST /v1/verify.
 * An address that is not shaped like an email is refused here as
 * invalid_input and never sent (spec, credit rule 2). */
#include "cli/cmds.h"
#include "cli/addrs.h"
#include "cli/out.h"
#include <stdlib.h>
#include <string.h>

int
cmd_verify(struct cli *c, int argc, char **argv)
{
	struct client_req req = { "POST", "/v1/verify", NULL, NULL, NULL,
	    NULL };
	char *pos[1], *body = NULL;
	json_t *r = NULL, *o;
	int rc;

	if (cli_parse(c, argc, argv, NULL, 1, 1, pos, &rc) == -1)
		return rc;
	if (!addrs_shaped(pos[0], strlen(pos[0])))
		return cli_fail(c, APIERR_EXIT_USAGE, "invalid_input", "'%s' is "
		    "not shaped like an email address (not sent, nothing "
		    "charged)", pos[0]);
	if ((rc = cli_connect(c)) != APIERR_EXIT_OK)
		return rc;
	if ((o = json_pack("{s:s}", "email", pos[0])) == NULL ||
	    (body = json_dumps(o, JSON_COMPACT)) == NULL) {
		json_decref(o);
		return cli_fail(c, APIERR_EXIT_ERROR, "error", "out of memory");
	}
	json_decref(o);
	req.json = body;
	if ((rc = cli_call(c, &req, &r)) != APIERR_EXIT_OK)
		goto out;
	if (c->json) {
		cli_print_body(c);
		goto out;
	}
	out_kv_field("email", r, "email", 1);
	out_kv_field("status", r, "status", 1);
	out_kv_field("reason", r, "reason", 1);
	out_kv_field("sub-status", r, "sub_status", 0);
	out_kv_field("score", r, "score", 1);
	out_kv_field("score-basis", r, "score_basis", 0);
	out_kv_field("disposable", r, "domain.disposable", 1);
	out_kv_field("free", r, "domain.free", 1);
	out_kv_field("accept-all", r, "domain.acceptAll", 1);
	out_kv_field("role", r, "role", 1);
	out_kv_field("catch-all verdict", r, "catch_all_verdict", 0);
	out_kv_field("did-you-mean", r, "did_you_mean", 0);
	out_kv_field("provider", r, "provider", 0);
	out_kv_field("verified-at", r, "verified_at", 1);
out:
	json_decref(r);
	free(body);
	return rc;
}
