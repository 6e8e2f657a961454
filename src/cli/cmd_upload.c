/* cmd_upload.c: svc bulk upload <path|https://...>: a file sent as
 * multipart/form-data (field "file", streamed from disk by
 * curl_mime_filedata, with a Content-Length) or an https:// URL sent as
 * JSON source_url, to POST /v1/verify/bulk/upload, with the options
 * email_column, column_mapping, name, callback_url and preview and an
 * automatic Idempotency-Key. The callback secret is shown once, as the
 * API gives it once. */
#include "cli/cmds.h"
#include "cli/out.h"
#include "cli/wait.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

struct cmd_upload_opts {
	const char	*email_column;
	const char	*column_mapping;
	const char	*name;
	const char	*callback_url;
	const char	*preview;
	const char	*wait;
	const char	*key;
	json_t		*mapping;	/* column_mapping parsed */
};

/* The MIME type of an upload by its extension. */
static const char *
cmd_upload_type(const char *path)
{
	static const struct { const char *ext, *type; } types[] = {
		{ ".csv", "text/csv" },
		{ ".tsv", "text/tab-separated-values" },
		{ ".txt", "text/plain" },
		{ ".xlsx", "application/vnd.openxmlformats-officedocument."
		    "spreadsheetml.sheet" },
	};
	const char *dot = strrchr(path, '.');
	size_t i;

	for (i = 0; dot && i < sizeof(types) / sizeof(types[0]); i++)
		if (strcasecmp(dot, types[i].ext) == 0)
			return types[i].type;
	return "application/octet-stream";
}

/* Adds a text field to the multipart body: 0 or -1. */
static int
cmd_upload_field(curl_mime *m, const char *name, const char *value)
{
	curl_mimepart *part;

	if (value == NULL)
		return 0;
	if ((part = curl_mime_addpart(m)) == NULL ||
	    curl_mime_name(part, name) != CURLE_OK ||
	    curl_mime_data(part, value, CURL_ZERO_TERMINATED) != CURLE_OK)
		return -1;
	return 0;
}

/* The multipart body of a file upload. */
static int
cmd_upload_mime(struct cli *c, const char *path,
    const struct cmd_upload_opts *o, curl_mime **out)
{
	curl_mimepart *part;
	curl_mime *m;
	char *map = NULL;
	int rc = -1;

	if ((m = client_mime(c->client)) == NULL ||
	    (part = curl_mime_addpart(m)) == NULL ||
	    curl_mime_name(part, "file") != CURLE_OK ||
	    curl_mime_filedata(part, path) != CURLE_OK ||
	    curl_mime_type(part, cmd_upload_type(path)) != CURLE_OK)
		goto out;
	if (o->mapping != NULL &&
	    (map = json_dumps(o->mapping, JSON_COMPACT)) == NULL)
		goto out;
	if (cmd_upload_field(m, "name", o->name) == -1 ||
	    cmd_upload_field(m, "email_column", o->email_column) == -1 ||
	    cmd_upload_field(m, "column_mapping", map) == -1 ||
	    cmd_upload_field(m, "callback_url", o->callback_url) == -1 ||
	    cmd_upload_field(m, "preview", o->preview ? "true" : NULL) == -1)
		goto out;
	*out = m;
	rc = 0;
out:
	free(map);
	return rc;
}

/* The JSON body of a source_url upload. */
static char *
cmd_upload_json(const char *url, const struct cmd_upload_opts *o)
{
	json_t *b;
	char *s = NULL;
	long idx;
	char *end;

	if ((b = json_pack("{s:s}", "source_url", url)) == NULL)
		return NULL;
	if (o->name && json_object_set_new(b, "name", json_string(o->name)))
		goto out;
	if (o->email_column) {
		/* a number is a 0-based index, anything else a header */
		errno = 0;
		idx = strtol(o->email_column, &end, 10);
		if (o->email_column[0] >= '0' && o->email_column[0] <= '9' &&
		    *end == '\0' && errno == 0 ?
		    json_object_set_new(b, "email_column", json_integer(idx)) :
		    json_object_set_new(b, "email_column",
		    json_string(o->email_column)))
			goto out;
	}
	if (o->mapping && json_object_set(b, "column_mapping", o->mapping))
		goto out;
	if (o->callback_url && json_object_set_new(b, "callback_url",
	    json_string(o->callback_url)))
		goto out;
	if (o->preview && json_object_set_new(b, "preview", json_true()))
		goto out;
	s = json_dumps(b, JSON_COMPACT);
out:
	json_decref(b);
	return s;
}

int
cmd_upload(struct cli *c, int argc, char **argv)
{
	struct cmd_upload_opts o = { 0 };
	const struct cli_opt opts[] = {
		{ "email-column", required_argument, &o.email_column },
		{ "column-mapping", required_argument, &o.column_mapping },
		{ "name", required_argument, &o.name },
		{ "callback-url", required_argument, &o.callback_url },
		{ "preview", no_argument, &o.preview },
		{ "wait", no_argument, &o.wait },
		{ "idempotency-key", required_argument, &o.key },
		{ NULL, 0, NULL }
	};
	struct client_req req = { "POST", "/v1/verify/bulk/upload", NULL,
	    NULL, NULL, NULL };
	char *pos[1], *body = NULL, idem[64], job[OUT_VAL_MAX],
	    st[WAIT_STATUS_MAX];
	json_t *r = NULL;
	json_error_t jerr;
	struct stat sb;
	int rc, url;

	if (cli_parse(c, argc, argv, opts, 1, 1, pos, &rc) == -1)
		return rc;
	url = strstr(pos[0], "://") != NULL;
	if (url && strncmp(pos[0], "https://", 8) != 0)
		return cli_usage(c, "%s: only https:// URLs can be fetched by "
		    "the API", pos[0]);
	if (o.key != NULL && (o.key[0] == '\0' || strlen(o.key) > 255))
		return cli_usage(c, "--idempotency-key: 1 to 255 characters");
	if (o.email_column && o.column_mapping)
		return cli_usage(c, "--email-column and --column-mapping: "
		    "one or the other");
	/* (json_is_object evaluates its argument twice) */
	if (o.column_mapping)
		o.mapping = json_loads(o.column_mapping, 0, &jerr);
	if (o.column_mapping && !json_is_object(o.mapping)) {
		rc = cli_fail(c, APIERR_EXIT_USAGE, "invalid_column_mapping",
		    "--column-mapping is not a JSON object such as "
		    "'{\"email\":\"Work Mail\"}'");
		goto out;
	}
	if (!url && stat(pos[0], &sb) == -1) {
		rc = cli_fail(c, APIERR_EXIT_ERROR, "file", "%s: %s", pos[0],
		    strerror(errno));
		goto out;
	}
	if (!url && !S_ISREG(sb.st_mode)) {
		rc = cli_fail(c, APIERR_EXIT_ERROR, "file", "%s: not a "
		    "regular file", pos[0]);
		goto out;
	}
	if ((rc = cli_connect(c)) != APIERR_EXIT_OK)
		goto out;
	if (o.key == NULL) {
		if (cli_idempotency_key(idem) == -1) {
			rc = cli_fail(c, APIERR_EXIT_ERROR, "error",
			    "no random numbers");
			goto out;
		}
		o.key = idem;
	}
	req.idempotency_key = o.key;
	if (url ? (req.json = body = cmd_upload_json(pos[0], &o)) == NULL :
	    cmd_upload_mime(c, pos[0], &o, &req.mime) == -1) {
		rc = cli_fail(c, APIERR_EXIT_ERROR, "error", "an option is not "
		    "UTF-8 text, or out of memory");
		goto out;
	}
	if ((rc = cli_call(c, &req, &r)) != APIERR_EXIT_OK) {
		if (rc == APIERR_EXIT_NETWORK || rc == APIERR_EXIT_SERVER)
			fprintf(stderr, "svc: the upload may have been taken: "
			    "run the same command with --idempotency-key %s "
			    "to retry it safely\n", o.key);
		goto out;
	}
	/* with --json and --wait: one document, the job (or its preview) at
	 * the end with this answer (its callback_secret) as "created" */
	if (c->json && o.wait != NULL)
		cli_hold_created(c, r);
	else if (c->json)
		cli_print_body(c);
	else {
		out_kv_field("job", r, "job_id", 1);
		out_kv_field("status", r, "status", 1);
		out_kv_field("preview", r, "preview", 1);
		out_kv_field("status-url", r, "status_url", 0);
		out_kv_field("progress-url", r, "progress_url", 0);
		if (json_is_string(out_get(r, "callback_secret"))) {
			out_kv_field("callback-secret", r, "callback_secret",
			    1);
			out_kv("", "%s", "(shown once: keep it to check the "
			    "signature of the job's callbacks)");
		}
	}
	if (o.wait == NULL)
		goto out;
	if (!c->json)
		putchar('\n');
	fflush(stdout);
	out_field(job, r, "job_id");
	if (o.preview)
		rc = cmd_preview_show(c, job, 1, 0);
	else if ((rc = wait_job(c, job, 0, st)) == APIERR_EXIT_OK)
		rc = cmd_bulk_finish(c, job);
out:
	json_decref(o.mapping);
	json_decref(r);
	free(body);
	return rc;
}
