/* cmd_confirm.c: svc bulk confirm <job_id>: POST /v1/verify/bulk/{id}/
 * confirm charges the preview's credits_needed and queues the job. It
 * carries an Idempotency-Key like every creation; the API never charges a
 * job twice anyway. */
#include "cli/cmds.h"
#include "cli/out.h"

int
cmd_confirm(struct cli *c, int argc, char **argv)
{
	struct client_req req = { "POST", NULL, NULL, NULL, NULL, NULL };
	char *pos[1], idem[64];
	struct buf path;
	json_t *r = NULL;
	int rc;

	if (cli_parse(c, argc, argv, NULL, 1, 1, pos, &rc) == -1)
		return rc;
	if ((rc = cli_connect(c)) != APIERR_EXIT_OK)
		return rc;
	buf_init(&path, 4096);
	if (cli_path(&path, "/v1/verify/bulk/", pos[0], "/confirm") == -1) {
		rc = cli_usage(c, "job id too long");
		goto out;
	}
	if (cli_idempotency_key(idem) == -1) {
		rc = cli_fail(c, APIERR_EXIT_ERROR, "error", "no random numbers");
		goto out;
	}
	req.path = buf_str(&path);
	req.idempotency_key = idem;
	if ((rc = cli_call(c, &req, &r)) != APIERR_EXIT_OK)
		goto out;
	if (c->json)
		cli_print_body(c);
	else {
		out_kv_field("job", r, "job_id", 1);
		out_kv_field("status", r, "status", 1);
		out_kv("credits", "%lld charged, %lld left",
		    out_int(r, "credits_charged"),
		    out_int(r, "credits_remaining"));
	}
out:
	json_decref(r);
	buf_free(&path);
	return rc;
}
