/* cmd_preview.c: svc bulk preview <job_id> [--wait] [--refresh]: the free
 * List Health Preview of an upload (POST /v1/verify/bulk/{id}/preview) as
 * a report: the free checks, the SMTP sample, the estimated statuses with
 * their shares and a bar chart, credits needed and after refunds, and the
 * confidence. With --wait, a job still ingesting is followed on its
 * progress (the bar of wait.c) until read, and a preview being computed
 * again (--refresh, or anyone's refresh: the API's 202 refreshing, with
 * the old preview that is not shown) is asked for again until the new one
 * is there. */
#include "cli/cmds.h"
#include "cli/out.h"
#include "cli/wait.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMD_PREVIEW_BAR 30

/* "a 1, b 2, ..." of an object's integers, in the given order. */
static void
cmd_preview_list(const char *label, json_t *o, const char *const *names)
{
	struct buf line;
	size_t i;

	buf_init(&line, 2048);
	for (i = 0; names[i]; i++)
		buf_printf(&line, "%s%s %" JSON_INTEGER_FORMAT, i ? ", " : "",
		    names[i], json_integer_value(json_object_get(o,
		    names[i])));
	out_kv(label, "%s", buf_str(&line));
	buf_free(&line);
}

/* The 95% ranges of the shares, as figures and on a 0-100% scale:
 * "  bounce range      5.2%   3.1% to  8.4%  [..==|==........]" ('=' the
 * range, '|' the estimate). */
static void
cmd_preview_ranges(json_t *p)
{
	static const struct {
		const char	*label, *share, *range;
	} r[] = {
		{ "bounce range", "estimated_bounce_rate",
		    "estimated_bounce_rate_interval" },
		{ "catch-all range", "catch_all_share",
		    "catch_all_share_interval" },
		{ "unknown range", "unknown_share", "unknown_share_interval" },
	};
	double est, lo, hi;
	json_t *a;
	size_t i;
	int k, at;

	printf("\n95%% ranges (0-100%%: '=' range, '|' estimate)\n");
	for (i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		a = out_get(p, r[i].range);
		if (!json_is_array(a))
			continue;
		est = json_number_value(out_get(p, r[i].share));
		lo = json_number_value(json_array_get(a, 0));
		hi = json_number_value(json_array_get(a, 1));
		printf("  %-16s %5.1f%%  %5.1f%% to %5.1f%%  [", r[i].label,
		    100 * est, 100 * lo, 100 * hi);
		at = (int)(est * CMD_PREVIEW_BAR);
		if (at >= CMD_PREVIEW_BAR)
			at = CMD_PREVIEW_BAR - 1;
		for (k = 0; k < CMD_PREVIEW_BAR; k++)
			putchar(k == at ? '|' : (k + 1 > lo * CMD_PREVIEW_BAR &&
			    k < hi * CMD_PREVIEW_BAR) ? '=' : '.');
		printf("]\n");
	}
}

static void
cmd_preview_report(const char *job_id, json_t *p)
{
	static const char *const checks[] = { "syntax_invalid", "no_mx",
	    "disposable", "role_based", "suppressed", "free_provider",
	    "resolved_without_smtp", "needs_smtp", NULL };
	static const char *const sample[] = { "valid", "invalid",
	    "catch_all", "unknown", NULL };
	static const char *const counts[] = { "valid", "invalid", "risky",
	    "catch_all", "disposable", "unknown", NULL };
	static const char *const statuses[] = { "deliverable",
	    "undeliverable", "risky", "unknown", NULL };
	long long n[4], sum = 0;
	int i, k, bar;

	printf("List Health Preview of job %s\n\n", job_id);
	out_kv_field("computed-at", p, "computed_at", 1);
	out_kv("addresses", "%lld unique, %lld duplicates removed",
	    out_int(p, "total_emails"), out_int(p, "duplicates_removed"));
	cmd_preview_list("free checks", out_get(p, "free_checks"), checks);
	printf("%-18s  %lld probed: ", "smtp sample",
	    out_int(p, "smtp_sample.size"));
	for (i = 0; sample[i]; i++)
		printf("%s%s %lld", i ? ", " : "", sample[i],
		    out_int(out_get(p, "smtp_sample.counts"), sample[i]));
	putchar('\n');
	out_kv_field("sample method", p, "smtp_sample.method", 0);
	printf("\nEstimated status\n");
	for (i = 0; statuses[i]; i++)
		sum += n[i] = out_int(out_get(p, "estimated_by_status"),
		    statuses[i]);
	for (i = 0; statuses[i]; i++) {
		bar = sum > 0 ? (int)(n[i] * CMD_PREVIEW_BAR / sum) : 0;
		if (bar == 0 && n[i] > 0)
			bar = 1;
		printf("  %-16s %8lld  %5.1f%%  ", statuses[i], n[i],
		    sum > 0 ? 100.0 * (double)n[i] / (double)sum : 0.0);
		for (k = 0; k < bar; k++)
			putchar('#');
		putchar('\n');
	}
	putchar('\n');
	cmd_preview_list("estimated counts", out_get(p, "estimated_counts"),
	    counts);
	out_kv("bounce rate", "%.1f%%", 100.0 * json_number_value(
	    out_get(p, "estimated_bounce_rate")));
	out_kv("shares", "undeliverable %.1f%%, risky %.1f%%, unknown %.1f%%",
	    100.0 * json_number_value(out_get(p, "undeliverable_share")),
	    100.0 * json_number_value(out_get(p, "risky_share")),
	    100.0 * json_number_value(out_get(p, "unknown_share")));
	cmd_preview_ranges(p);
	out_kv("credits needed", "%lld", out_int(p, "credits_needed"));
	out_kv("after refunds", "%lld (estimated)",
	    out_int(p, "estimated_credits_after_refunds"));
	out_kv_field("confidence", p, "confidence", 1);
	printf("\nConfirm with: svc bulk confirm %s\n", job_id);
}

int
cmd_preview_show(struct cli *c, const char *job_id, int wait, int refresh)
{
	struct client_req req = { "POST", NULL, NULL, NULL, NULL, NULL };
	char st[OUT_VAL_MAX];
	struct buf path, line;
	json_t *r = NULL;
	int rc;

	buf_init(&path, 4096);
	buf_init(&line, 1024);
	if (wait)
		wait_catch(c);
	for (;;) {
		if (cli_path(&path, "/v1/verify/bulk/", job_id, refresh ?
		    "/preview?refresh=true" : "/preview") == -1) {
			rc = cli_usage(c, "job id too long");
			goto out;
		}
		req.path = buf_str(&path);
		json_decref(r);
		if ((rc = cli_call(c, &req, &r)) != APIERR_EXIT_OK) {
			if (rc == APIERR_EXIT_INTERRUPTED)
				rc = wait_stopped(job_id);
			goto out;
		}
		if (c->resp.status == 200 &&
		    json_is_object(json_object_get(r, "preview")) &&
		    !json_is_true(json_object_get(r, "refreshing")))
			break;
		/* 202: still ingesting, or computing again */
		refresh = 0;
		if (wait && strcmp(out_field(st, r, "status"),
		    "ingesting") == 0) {
			/* the reading of the file, with its bar; a job that
			 * failed there says why */
			if ((rc = wait_job(c, job_id, 1, st)) !=
			    APIERR_EXIT_OK)
				goto out;
			if (strcmp(st, "failed") == 0 ||
			    strcmp(st, "cancelled") == 0) {
				rc = cmd_bulk_finish(c, job_id);
				goto out;
			}
			continue;
		}
		buf_reset(&line);
		buf_printf(&line, "%s: %s", job_id,
		    json_is_true(json_object_get(r, "refreshing")) ?
		    "the preview is being computed again" :
		    "still ingesting: the preview is not ready yet");
		/* since when (the old preview, beside, is not shown) */
		if (wait && json_is_string(json_object_get(r,
		    "refresh_requested_at")))
			buf_printf(&line, ", asked at %s", json_string_value(
			    json_object_get(r, "refresh_requested_at")));
		if (!wait) {
			if (c->json)
				cli_print_body(c);
			else
				printf("%s (svc bulk preview %s --wait)\n",
				    buf_str(&line), job_id);
			goto out;
		}
		wait_show(buf_str(&line), 0);
		if (wait_pause(c, job_id) == -1) {
			rc = APIERR_EXIT_INTERRUPTED;
			goto out;
		}
	}
	if (wait)
		wait_show("preview ready", 1);
	if (c->json)
		cli_print_body(c);
	else
		cmd_preview_report(job_id, json_object_get(r, "preview"));
out:
	json_decref(r);
	buf_free(&path);
	buf_free(&line);
	return rc;
}

int
cmd_preview(struct cli *c, int argc, char **argv)
{
	const char *wait = NULL, *refresh = NULL;
	const struct cli_opt opts[] = {
		{ "wait", no_argument, &wait },
		{ "refresh", no_argument, &refresh },
		{ NULL, 0, NULL }
	};
	char *pos[1];
	int rc;

	if (cli_parse(c, argc, argv, opts, 1, 1, pos, &rc) == -1)
		return rc;
	if ((rc = cli_connect(c)) != APIERR_EXIT_OK)
		return rc;
	return cmd_preview_show(c, pos[0], wait != NULL, refresh != NULL);
}
