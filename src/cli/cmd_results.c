/* cmd_results.c: svc bulk results <job_id> [--classification C]
 * [--limit N] [--page N]: one page of a job's results in input order
 * (GET /v1/jobs/{id}/results) as a table with a sub_status column. The
 * options are checked here (limit at most 1000) before any request. */
#include "cli/cmds.h"
#include "cli/out.h"
#include "util/strparse.h"

int
cmd_results(struct cli *c, int argc, char **argv)
{
	static const char *const classes[] = { "valid", "invalid", "risky",
	    "catch_all", "disposable", "unknown", NULL };
	static const char *const head[] = { "EMAIL", "STATUS",
	    "CLASSIFICATION", "SUB_STATUS", "SCORE" };
	static const char *const fields[] = { "email", "status",
	    "classification", "sub_status", "score" };
	const char *cls = NULL, *limit = NULL, *page = NULL;
	const struct cli_opt opts[] = {
		{ "classification", required_argument, &cls },
		{ "limit", required_argument, &limit },
		{ "page", required_argument, &page },
		{ NULL, 0, NULL }
	};
	struct client_req req = { "GET", NULL, NULL, NULL, NULL, NULL };
	char *pos[1];
	struct buf path;
	json_t *r = NULL;
	long lim = 100, pg = 1;
	int rc, k;

	if (cli_parse(c, argc, argv, opts, 1, 1, pos, &rc) == -1)
		return rc;
	if (!cli_one_of(cls, classes))
		return cli_usage(c, "--classification %s: valid, invalid, "
		    "risky, catch_all, disposable or unknown", cls);
	if (limit && strparse_long(limit, 1, 1000, &lim) == -1)
		return cli_usage(c, "--limit %s: a number from 1 to 1000",
		    limit);
	if (page && strparse_long(page, 1, 100000000, &pg) == -1)
		return cli_usage(c, "--page %s: a number from 1", page);
	if ((rc = cli_connect(c)) != APIERR_EXIT_OK)
		return rc;
	buf_init(&path, 4096);
	if (cli_path(&path, "/v1/jobs/", pos[0], "/results") == -1 ||
	    buf_printf(&path, "?limit=%ld&page=%ld", lim, pg) == -1 ||
	    (cls && buf_printf(&path, "&classification=%s", cls) == -1)) {
		rc = cli_usage(c, "job id too long");
		goto out;
	}
	req.path = buf_str(&path);
	if ((rc = cli_call(c, &req, &r)) != APIERR_EXIT_OK)
		goto out;
	if (c->json) {
		cli_print_body(c);
		goto out;
	}
	if (out_table_json(stdout, 5, head, json_object_get(r, "results"),
	    fields) == -1) {
		rc = cli_fail(c, APIERR_EXIT_ERROR, "error", "out of memory");
		goto out;
	}
	k = (int)((out_int(r, "total") + lim - 1) / lim);
	printf("\npage %ld of %d (%lld results%s%s, %ld a page)\n", pg,
	    k ? k : 1, out_int(r, "total"), cls ? " classified " : "",
	    cls ? cls : "", lim);
out:
	json_decref(r);
	buf_free(&path);
	return rc;
}
