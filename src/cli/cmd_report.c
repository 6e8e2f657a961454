/* cmd_report.c: svc report accuracy: how right the verdicts were, from
 * the delivery outcomes the account reported (GET /v1/reports/accuracy),
 * as two tables (per classification, per provider), the share of
 * unknown and the stability of verdicts verified twice. */
#include "cli/cmds.h"
#include "cli/out.h"
#include <string.h>

static const char *const cmd_report_cols[] = { "verified", "delivered",
    "hard_bounce", "soft_bounce", "complaint", "no_outcome" };
#define CMD_REPORT_NCOLS 6

static void
cmd_report_table(const char *first, json_t *o)
{
	const char *name;
	json_t *t;
	size_t i;

	printf("%-24s", first);
	for (i = 0; i < CMD_REPORT_NCOLS; i++)
		printf(" %11s", cmd_report_cols[i]);
	putchar('\n');
	json_object_foreach(o, name, t) {
		printf("%-24.64s", name);
		for (i = 0; i < CMD_REPORT_NCOLS; i++)
			printf(" %11lld", out_int(t, cmd_report_cols[i]));
		putchar('\n');
	}
}

/* An ISO 8601 time as a query value: digits and T Z : . + - only. */
static int
cmd_report_time_ok(const char *s)
{
	return s == NULL || (*s != '\0' && strspn(s, "0123456789TZ:.+-") ==
	    strlen(s) && strlen(s) < 40);
}

int
cmd_report(struct cli *c, int argc, char **argv)
{
	const char *since = NULL, *until = NULL;
	const struct cli_opt opts[] = {
		{ "since", required_argument, &since },
		{ "until", required_argument, &until },
		{ NULL, 0, NULL }
	};
	struct client_req req = { "GET", NULL, NULL, NULL, NULL, NULL };
	char a[OUT_VAL_MAX], b[OUT_VAL_MAX];
	struct buf path;
	json_t *r = NULL;
	size_t i;
	int rc;

	if (cli_parse(c, argc, argv, opts, 0, 0, NULL, &rc) == -1)
		return rc;
	if (!cmd_report_time_ok(since) || !cmd_report_time_ok(until))
		return cli_usage(c, "--since, --until: ISO 8601 UTC times "
		    "such as 2026-11-01T00:00:00Z");
	if ((rc = cli_connect(c)) != APIERR_EXIT_OK)
		return rc;
	buf_init(&path, 256);
	buf_puts(&path, "/v1/reports/accuracy?");
	if (since)
		buf_printf(&path, "since=%s&", since);
	if (until)
		buf_printf(&path, "until=%s", until);
	req.path = buf_str(&path);
	if ((rc = cli_call(c, &req, &r)) != APIERR_EXIT_OK)
		goto out;
	if (c->json) {
		cli_print_body(c);
		goto out;
	}
	printf("accuracy of results verified from %s to %s\n\n",
	    out_field(a, r, "since"), out_field(b, r, "until"));
	cmd_report_table("classification", out_get(r, "by_classification"));
	printf("%-24s", "total");
	for (i = 0; i < CMD_REPORT_NCOLS; i++)
		printf(" %11lld", out_int(out_get(r, "total"),
		    cmd_report_cols[i]));
	printf("\n\n");
	cmd_report_table("provider", out_get(r, "by_provider"));
	printf("\nunknown share %s\n", out_field(a, r, "unknown_share"));
	printf("addresses verified twice %lld, same classification every "
	    "time %lld\n", out_int(r, "stability.addresses_verified_twice"),
	    out_int(r, "stability.same_classification"));
out:
	json_decref(r);
	buf_free(&path);
	return rc;
}
