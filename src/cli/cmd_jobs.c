/* cmd_jobs.c: svc jobs list (GET /v1/jobs, filtered by status or type),
 * svc jobs progress <job_id> [--wait] (GET /v1/jobs/{id}/progress) and
 * svc jobs cancel <job_id> (DELETE /v1/jobs/{id}, which refunds the
 * unprocessed addresses; nothing else in svc ever cancels a job). */
#include "cli/cmds.h"
#include "cli/bar.h"
#include "cli/out.h"
#include "cli/wait.h"
#include "util/strparse.h"
#include <stdio.h>
#include <string.h>

int
cmd_jobs_list(struct cli *c, int argc, char **argv)
{
	static const char *const statuses[] = { "ingesting",
	    "awaiting_confirmation", "pending", "processing", "completed",
	    "failed", "cancelled", NULL };
	static const char *const types[] = { "bulk", "upload", "batch", NULL };
	static const char *const head[] = { "JOB", "TYPE", "STATUS", "TOTAL",
	    "PROCESSED", "CREATED", "NAME" };
	static const char *const fields[] = { "job_id", "type", "status",
	    "total_emails", "processed_emails", "created_at", "name" };
	const char *status = NULL, *type = NULL, *page = NULL, *limit = NULL;
	const struct cli_opt opts[] = {
		{ "status", required_argument, &status },
		{ "type", required_argument, &type },
		{ "page", required_argument, &page },
		{ "limit", required_argument, &limit },
		{ NULL, 0, NULL }
	};
	struct client_req req = { "GET", NULL, NULL, NULL, NULL, NULL };
	struct buf path;
	json_t *r = NULL;
	long lim = 20, pg = 1;
	int rc;

	if (cli_parse(c, argc, argv, opts, 0, 0, NULL, &rc) == -1)
		return rc;
	if (!cli_one_of(status, statuses))
		return cli_usage(c, "--status %s: ingesting, "
		    "awaiting_confirmation, pending, processing, completed, "
		    "failed or cancelled", status);
	if (!cli_one_of(type, types))
		return cli_usage(c, "--type %s: bulk, upload or batch", type);
	if (limit && strparse_long(limit, 1, 100, &lim) == -1)
		return cli_usage(c, "--limit %s: a number from 1 to 100", limit);
	if (page && strparse_long(page, 1, 1000000, &pg) == -1)
		return cli_usage(c, "--page %s: a number from 1", page);
	if ((rc = cli_connect(c)) != APIERR_EXIT_OK)
		return rc;
	buf_init(&path, 1024);
	buf_printf(&path, "/v1/jobs?page=%ld&limit=%ld", pg, lim);
	if (status)
		buf_printf(&path, "&status=%s", status);
	if (type)
		buf_printf(&path, "&type=%s", type);
	req.path = buf_str(&path);
	if ((rc = cli_call(c, &req, &r)) != APIERR_EXIT_OK)
		goto out;
	if (c->json) {
		cli_print_body(c);
		goto out;
	}
	if (out_table_json(stdout, 7, head, json_object_get(r, "data"),
	    fields) == -1) {
		rc = cli_fail(c, APIERR_EXIT_ERROR, "error", "out of memory");
		goto out;
	}
	printf("\npage %ld (%lld jobs in all, %ld a page)\n", pg,
	    out_int(r, "total"), lim);
out:
	json_decref(r);
	buf_free(&path);
	return rc;
}

/* GET /v1/jobs/{id}/progress, shown: 0, or the exit status; *failed when
 * the job failed or was cancelled. */
static int
cmd_jobs_show_progress(struct cli *c, const char *job_id, int *failed)
{
	struct client_req req = { "GET", NULL, NULL, NULL, NULL, NULL };
	char b[OUT_VAL_MAX], eta[24];
	struct buf path;
	json_t *p = NULL, *e;
	int rc;

	buf_init(&path, 4096);
	if (cli_path(&path, "/v1/jobs/", job_id, "/progress") == -1) {
		rc = cli_usage(c, "job id too long");
		goto out;
	}
	req.path = buf_str(&path);
	if ((rc = cli_call(c, &req, &p)) != APIERR_EXIT_OK)
		goto out;
	out_field(b, p, "status");
	*failed = strcmp(b, "failed") == 0 || strcmp(b, "cancelled") == 0;
	if (c->json) {
		cli_print_body(c);
		goto out;
	}
	out_kv_field("job", p, "job_id", 1);
	out_kv_field("status", p, "status", 1);
	out_kv("progress", "%lld%% (%lld/%lld)", out_int(p, "percent"),
	    out_int(p, "processed_emails"), out_int(p, "total_emails"));
	if (json_is_object(out_get(p, "ingestion")))
		out_kv("ingestion", "%lld%% (%lld rows, %lld of %lld bytes "
		    "read)", out_int(p, "ingestion.percent"),
		    out_int(p, "ingestion.rows_read"),
		    out_int(p, "ingestion.bytes_read"),
		    out_int(p, "ingestion.bytes_total"));
	out_kv("by status", "deliverable %lld, undeliverable %lld, risky "
	    "%lld, unknown %lld",
	    out_int(p, "counts_by_status.deliverable"),
	    out_int(p, "counts_by_status.undeliverable"),
	    out_int(p, "counts_by_status.risky"),
	    out_int(p, "counts_by_status.unknown"));
	out_kv("rate", "%lld/min", out_int(p, "rate_per_minute"));
	e = out_get(p, "eta_seconds");
	bar_eta(eta, json_is_integer(e) ? (long)json_integer_value(e) : -1);
	out_kv("eta", "%s", eta);
out:
	json_decref(p);
	buf_free(&path);
	return rc;
}

int
cmd_jobs_progress(struct cli *c, int argc, char **argv)
{
	const char *wait = NULL;
	const struct cli_opt opts[] = {
		{ "wait", no_argument, &wait },
		{ NULL, 0, NULL }
	};
	char *pos[1], st[WAIT_STATUS_MAX];
	int rc, failed = 0;

	if (cli_parse(c, argc, argv, opts, 1, 1, pos, &rc) == -1)
		return rc;
	if ((rc = cli_connect(c)) != APIERR_EXIT_OK)
		return rc;
	if (wait && (rc = wait_job(c, pos[0], 0, st)) != APIERR_EXIT_OK)
		return rc;
	if ((rc = cmd_jobs_show_progress(c, pos[0], &failed)) !=
	    APIERR_EXIT_OK)
		return rc;
	if (wait && failed) {
		fprintf(stderr, "svc: job_%s: job %s %s (svc bulk status %s)\n",
		    st, pos[0], strcmp(st, "failed") == 0 ? "failed" :
		    "was cancelled", pos[0]);
		return APIERR_EXIT_ERROR;
	}
	return APIERR_EXIT_OK;
}

int
cmd_jobs_cancel(struct cli *c, int argc, char **argv)
{
	struct client_req req = { "DELETE", NULL, NULL, NULL, NULL, NULL };
	char *pos[1];
	struct buf path;
	json_t *r = NULL;
	int rc;

	if (cli_parse(c, argc, argv, NULL, 1, 1, pos, &rc) == -1)
		return rc;
	if ((rc = cli_connect(c)) != APIERR_EXIT_OK)
		return rc;
	buf_init(&path, 4096);
	if (cli_path(&path, "/v1/jobs/", pos[0], "") == -1) {
		rc = cli_usage(c, "job id too long");
		goto out;
	}
	req.path = buf_str(&path);
	if ((rc = cli_call(c, &req, &r)) != APIERR_EXIT_OK)
		goto out;
	if (c->json)
		cli_print_body(c);
	else {
		out_kv_field("job", r, "job_id", 1);
		out_kv_field("status", r, "status", 1);
		out_kv("credits", "%lld refunded",
		    out_int(r, "credits_refunded"));
	}
out:
	json_decref(r);
	buf_free(&path);
	return rc;
}
