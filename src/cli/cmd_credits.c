/* cmd_credits.c: svc credits: the balance and usage (GET /v1/credits),
 * and the organization's pool for a member of one. */
#include "cli/cmds.h"
#include "cli/out.h"

int
cmd_credits(struct cli *c, int argc, char **argv)
{
	struct client_req req = { "GET", "/v1/credits", NULL, NULL, NULL,
	    NULL };
	char b[OUT_VAL_MAX];
	json_t *r = NULL;
	int rc;

	if (cli_parse(c, argc, argv, NULL, 0, 0, NULL, &rc) == -1)
		return rc;
	if ((rc = cli_connect(c)) != APIERR_EXIT_OK)
		return rc;
	if ((rc = cli_call(c, &req, &r)) != APIERR_EXIT_OK)
		goto out;
	if (c->json) {
		cli_print_body(c);
		goto out;
	}
	out_kv_field("balance", r, "balance", 1);
	out_kv_field("used", r, "used", 1);
	out_kv_field("refunded", r, "refunded", 1);
	if (json_is_object(out_get(r, "organization")))
		out_kv("organization", "%s: balance %lld",
		    out_field(b, r, "organization.id"),
		    out_int(r, "organization.balance"));
out:
	json_decref(r);
	return rc;
}
