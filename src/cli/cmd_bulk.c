/* cmd_bulk.c: svc bulk create (POST /v1/verify/bulk, with an automatic
 * Idempotency-Key, addresses from the arguments or a .csv/.txt file, the
 * ones not shaped like an email left out as invalid_input), svc bulk
 * status (GET /v1/jobs/{id}) and the job shown once --wait has ended. */
#include "cli/cmds.h"
#include "cli/addrs.h"
#include "cli/out.h"
#include "cli/wait.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The job record of GET /v1/jobs/{id}, for a person. */
static void
cmd_bulk_show(json_t *j)
{
	static const char *const counts[] = { "valid", "invalid", "risky",
	    "catch_all", "disposable", "unknown" };
	char b[OUT_VAL_MAX], e[OUT_VAL_MAX], path[32];
	struct buf line;
	size_t i;

	out_kv_field("job", j, "job_id", 1);
	out_kv_field("type", j, "type", 1);
	out_kv_field("name", j, "name", 1);
	out_kv_field("status", j, "status", 1);
	out_kv("addresses", "%lld (%lld duplicates removed)",
	    out_int(j, "total_emails"), out_int(j, "duplicates_removed"));
	out_kv_field("processed", j, "processed_emails", 1);
	buf_init(&line, 1024);
	for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		snprintf(path, sizeof(path), "counts.%s", counts[i]);
		buf_printf(&line, "%s%s %lld", i ? ", " : "", counts[i],
		    out_int(j, path));
	}
	out_kv("counts", "%s", buf_str(&line));
	buf_free(&line);
	out_kv("credits", "%lld charged, %lld refunded",
	    out_int(j, "credits_charged"), out_int(j, "credits_refunded"));
	out_kv_field("created-at", j, "created_at", 1);
	out_kv_field("started-at", j, "started_at", 0);
	out_kv_field("completed-at", j, "completed_at", 0);
	if (json_is_object(out_get(j, "error")))
		out_kv("error", "%s: %s", out_field(b, j, "error.code"),
		    out_field(e, j, "error.message"));
	out_kv_field("download", j, "download_url", 0);
}

/* GET /v1/jobs/{id}, shown (its JSON with --json): 0 with *j, or the
 * exit status. */
static int
cmd_bulk_fetch(struct cli *c, const char *job_id, json_t **j)
{
	struct client_req req = { "GET", NULL, NULL, NULL, NULL, NULL };
	struct buf path;
	int rc;

	*j = NULL;
	buf_init(&path, 4096);
	if (cli_path(&path, "/v1/jobs/", job_id, "") == -1) {
		rc = cli_usage(c, "job id too long");
		goto out;
	}
	req.path = buf_str(&path);
	if ((rc = cli_call(c, &req, j)) != APIERR_EXIT_OK)
		goto out;
	if (c->json)
		cli_print_body(c);
	else
		cmd_bulk_show(*j);
out:
	buf_free(&path);
	return rc;
}

int
cmd_bulk_finish(struct cli *c, const char *job_id)
{
	char st[OUT_VAL_MAX], b[OUT_VAL_MAX], e[OUT_VAL_MAX];
	json_t *j;
	int rc;

	if ((rc = cmd_bulk_fetch(c, job_id, &j)) != APIERR_EXIT_OK)
		return rc;
	out_field(st, j, "status");
	if (strcmp(st, "failed") == 0) {
		fprintf(stderr, "svc: job_failed: job %s failed: %s: %s\n",
		    job_id, out_field(b, j, "error.code"),
		    out_field(e, j, "error.message"));
		rc = APIERR_EXIT_ERROR;
	} else if (strcmp(st, "cancelled") == 0) {
		fprintf(stderr, "svc: job_cancelled: job %s was cancelled\n",
		    job_id);
		rc = APIERR_EXIT_ERROR;
	}
	json_decref(j);
	return rc;
}

int
cmd_bulk_status(struct cli *c, int argc, char **argv)
{
	char *pos[1];
	json_t *j;
	int rc;

	if (cli_parse(c, argc, argv, NULL, 1, 1, pos, &rc) == -1)
		return rc;
	if ((rc = cli_connect(c)) != APIERR_EXIT_OK)
		return rc;
	rc = cmd_bulk_fetch(c, pos[0], &j);
	json_decref(j);
	return rc;
}

/* Tells the values left out as invalid_input. */
static void
cmd_bulk_invalid(const struct addrs *a)
{
	size_t i;

	if (a->invalid == 0)
		return;
	fprintf(stderr, "svc: invalid_input: %zu value%s not shaped like an "
	    "email left out (not sent, nothing charged):", a->invalid,
	    a->invalid == 1 ? "" : "s");
	for (i = 0; i < ADDRS_SAMPLES && i < a->invalid; i++)
		fprintf(stderr, "%s '%s'", i ? "," : "", a->sample[i]);
	fprintf(stderr, "%s\n", a->invalid > ADDRS_SAMPLES ? ", ..." : "");
}

/* The creation answer, for a person. */
static void
cmd_bulk_created(struct cli *c, json_t *r)
{
	out_kv_field("job", r, "job_id", 1);
	out_kv_field("status", r, "status", 1);
	out_kv_field("name", r, "name", 0);
	out_kv("addresses", "%lld (%lld duplicates removed)",
	    out_int(r, "total_emails"), out_int(r, "duplicates_removed"));
	out_kv("credits", "%lld charged, %lld left",
	    out_int(r, "credits_charged"), out_int(r, "credits_remaining"));
	if (c->resp.replayed)
		out_kv("note", "%s", "this job was created earlier with the "
		    "same Idempotency-Key: nothing was charged again");
}

int
cmd_bulk_create(struct cli *c, int argc, char **argv)
{
	const char *file = NULL, *name = NULL, *wait = NULL, *key = NULL;
	const struct cli_opt opts[] = {
		{ "file", required_argument, &file },
		{ "name", required_argument, &name },
		{ "wait", no_argument, &wait },
		{ "idempotency-key", required_argument, &key },
		{ NULL, 0, NULL }
	};
	struct client_req req = { "POST", "/v1/verify/bulk", NULL, NULL, NULL,
	    NULL };
	char idem[64], job[OUT_VAL_MAX], st[WAIT_STATUS_MAX];
	char **pos = NULL, *body = NULL;
	struct addrs a;
	struct buf err;
	json_t *o = NULL, *r = NULL;
	int rc, n, i;

	addrs_init(&a);
	buf_init(&err, 4096);
	if ((pos = calloc((size_t)argc + 1, sizeof(*pos))) == NULL) {
		rc = cli_fail(c, APIERR_EXIT_ERROR, "error", "out of memory");
		goto out;
	}
	if ((n = cli_parse(c, argc, argv, opts, 0, argc, pos, &rc)) == -1)
		goto out;
	if (key != NULL && (key[0] == '\0' || strlen(key) > 255)) {
		rc = cli_usage(c, "--idempotency-key: 1 to 255 characters");
		goto out;
	}
	for (i = 0; i < n; i++)
		if (addrs_add(&a, pos[i], strlen(pos[i])) == -1) {
			rc = cli_fail(c, APIERR_EXIT_ERROR, "error",
			    "out of memory");
			goto out;
		}
	if (file != NULL && addrs_read_file(&a, file, &err) == -1) {
		rc = cli_fail(c, strstr(buf_str(&err), ".csv or .txt") ?
		    APIERR_EXIT_USAGE : APIERR_EXIT_ERROR, "file", "%s",
		    buf_str(&err));
		goto out;
	}
	cmd_bulk_invalid(&a);
	if (json_array_size(a.emails) == 0) {
		if (a.invalid > 0)
			rc = cli_fail(c, APIERR_EXIT_USAGE, "invalid_input",
			    "no address shaped like an email: nothing sent");
		else
			rc = cli_usage(c, "no addresses: give them as "
			    "arguments or with --file");
		goto out;
	}
	if ((rc = cli_connect(c)) != APIERR_EXIT_OK)
		goto out;
	if (key == NULL) {
		if (cli_idempotency_key(idem) == -1) {
			rc = cli_fail(c, APIERR_EXIT_ERROR, "error",
			    "no random numbers");
			goto out;
		}
		key = idem;
	}
	if ((o = json_pack("{s:O}", "emails", a.emails)) == NULL ||
	    (name != NULL && json_object_set_new(o, "name",
	    json_string(name)) == -1) ||
	    (body = json_dumps(o, JSON_COMPACT)) == NULL) {
		rc = cli_fail(c, APIERR_EXIT_ERROR, "error", name ? "--name "
		    "is not UTF-8 text, or out of memory" : "out of memory");
		goto out;
	}
	req.json = body;
	req.idempotency_key = key;
	if ((rc = cli_call(c, &req, &r)) != APIERR_EXIT_OK) {
		if (rc == APIERR_EXIT_NETWORK || rc == APIERR_EXIT_SERVER)
			fprintf(stderr, "svc: the job may have been created: "
			    "run the same command with --idempotency-key %s "
			    "to retry without paying twice\n", key);
		goto out;
	}
	/* with --json and --wait: one document, the job at its end with
	 * this answer as "created" */
	if (c->json && wait != NULL)
		cli_hold_created(c, r);
	else if (c->json)
		cli_print_body(c);
	else
		cmd_bulk_created(c, r);
	if (wait == NULL)
		goto out;
	if (!c->json)
		putchar('\n');
	fflush(stdout);
	out_field(job, r, "job_id");
	if ((rc = wait_job(c, job, 0, st)) == APIERR_EXIT_OK)
		rc = cmd_bulk_finish(c, job);
out:
	json_decref(o);
	json_decref(r);
	free(body);
	free(pos);
	buf_free(&err);
	addrs_free(&a);
	return rc;
}
