/* cmd_download.c: svc bulk download <job_id> [--format csv] [--output
 * FILE] [--filter F] [--include-original]: the result file of a completed
 * job (GET /v1/jobs/{id}/download) written to disk as it arrives, into a
 * new file beside the target that is renamed over it only once the whole
 * answer is in (an error leaves no half file behind). */
#include "cli/cmds.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int
cmd_download(struct cli *c, int argc, char **argv)
{
	static const char *const filters[] = { "deliverable",
	    "undeliverable", "risky", "unknown", "send_safe", NULL };
	const char *format = NULL, *output = NULL, *filter = NULL,
	    *orig = NULL;
	const struct cli_opt opts[] = {
		{ "format", required_argument, &format },
		{ "output", required_argument, &output },
		{ "filter", required_argument, &filter },
		{ "include-original", no_argument, &orig },
		{ NULL, 0, NULL }
	};
	struct client_req req = { "GET", NULL, NULL, NULL, NULL, NULL };
	char *pos[1], tmp[4096 + 16] = "";
	struct buf path, target;
	json_t *o;
	FILE *sink = NULL;
	mode_t mask;
	int rc, fd;

	if (cli_parse(c, argc, argv, opts, 1, 1, pos, &rc) == -1)
		return rc;
	if (format && strcmp(format, "csv") != 0)
		return cli_usage(c, "--format %s: the format is csv", format);
	if (!cli_one_of(filter, filters))
		return cli_usage(c, "--filter %s: deliverable, undeliverable, "
		    "risky, unknown or send_safe", filter);
	buf_init(&target, 4096);
	buf_init(&path, 4096);
	if (output == NULL && (strchr(pos[0], '/') != NULL ||
	    pos[0][0] == '.')) {
		rc = cli_usage(c, "job id %s: give --output", pos[0]);
		goto out;
	}
	if (buf_puts(&target, output ? output : pos[0]) == -1 ||
	    (output == NULL && buf_puts(&target, ".csv") == -1) ||
	    cli_path(&path, "/v1/jobs/", pos[0], "/download?format=csv") ==
	    -1 || (filter && buf_printf(&path, "&filter=%s", filter) == -1) ||
	    (orig && buf_puts(&path, "&include_original=true") == -1)) {
		rc = cli_usage(c, "job id or --output too long");
		goto out;
	}
	if ((rc = cli_connect(c)) != APIERR_EXIT_OK)
		goto out;
	if (strcmp(buf_str(&target), "-") == 0)
		sink = stdout;
	else {
		snprintf(tmp, sizeof(tmp), "%s.XXXXXX", buf_str(&target));
		if ((fd = mkstemp(tmp)) == -1 ||
		    (sink = fdopen(fd, "w+")) == NULL) {
			rc = cli_fail(c, APIERR_EXIT_ERROR, "file", "%s: %s",
			    buf_str(&target), strerror(errno));
			tmp[0] = '\0';
			goto out;
		}
		/* the mode a file made by a shell redirection gets */
		mask = umask(0);
		umask(mask);
		fchmod(fd, 0666 & ~mask);
	}
	req.path = buf_str(&path);
	req.sink = sink;
	if ((rc = cli_call(c, &req, NULL)) != APIERR_EXIT_OK)
		goto out;
	if (sink != stdout) {
		if (fflush(sink) != 0 || fsync(fileno(sink)) == -1 ||
		    fclose(sink) != 0) {
			sink = NULL;
			rc = cli_fail(c, APIERR_EXIT_ERROR, "file", "%s: %s",
			    buf_str(&target), strerror(errno));
			goto out;
		}
		sink = NULL;
		if (rename(tmp, buf_str(&target)) == -1) {
			rc = cli_fail(c, APIERR_EXIT_ERROR, "file", "%s: %s",
			    buf_str(&target), strerror(errno));
			goto out;
		}
		tmp[0] = '\0';
	}
	if (c->json && sink != stdout) {
		o = json_pack("{s:s,s:s,s:I}", "job_id", pos[0], "output",
		    buf_str(&target), "bytes", (json_int_t)c->resp.sunk);
		cli_print_json(o);
		json_decref(o);
	} else if (sink != stdout)
		printf("wrote %lld bytes to %s\n", c->resp.sunk,
		    buf_str(&target));
out:
	if (sink != NULL && sink != stdout)
		fclose(sink);
	if (tmp[0])
		unlink(tmp);
	buf_free(&path);
	buf_free(&target);
	return rc;
}
