/* help.c: the usage texts of svc, one entry a command, printed by "svc
 * help [command]" and "svc <command> --help"; svc(1) says the same at
 * length. */
#include "cli/help.h"
#include "cli/version.h"
#include <string.h>

static const struct help_entry {
	const char	*name;
	const char	*synopsis;
	const char	*text;
} help_entries[] = {
	{ "verify", "verify <email>",
	  "Verifies one address (POST /v1/verify) and shows its status, reason,\n"
	  "score, disposable, free, accept-all, role and verified-at, and when\n"
	  "present its sub-status, catch-all send verdict and did-you-mean.\n"
	  "An address not shaped like an email is refused here as invalid_input\n"
	  "(exit status 2) without calling the API: nothing is charged.\n" },
	{ "bulk create", "bulk create [<email>...] [--file FILE] [--name NAME] "
	  "[--wait]",
	  "Starts a bulk job (POST /v1/verify/bulk) with the addresses given as\n"
	  "arguments and/or read from --file (.csv: the email column is found by\n"
	  "its header or its contents; .txt: one address a line). Values not\n"
	  "shaped like an email are left out as invalid_input and never sent.\n"
	  "An Idempotency-Key goes with the request, so a retried create is\n"
	  "never charged twice (--idempotency-key KEY reuses one).\n"
	  "  --file FILE            addresses from a .csv or .txt file\n"
	  "  --name NAME            the job's name\n"
	  "  --wait                 wait for the job to end, showing its progress\n"
	  "  --idempotency-key KEY  the key of an earlier try, to retry it\n" },
	{ "bulk upload", "bulk upload <path|https://...> [--email-column COL] "
	  "[--column-mapping JSON] [--name NAME] [--callback-url URL] "
	  "[--preview] [--wait]",
	  "Uploads a .csv, .tsv, .txt or .xlsx file (multipart, streamed from\n"
	  "disk) or has the API fetch an https:// URL (source_url) to start a\n"
	  "job (POST /v1/verify/bulk/upload). Without --preview the job is\n"
	  "charged and started as soon as ingestion ends.\n"
	  "  --email-column COL     header name or 0-based index of the emails\n"
	  "  --column-mapping JSON  e.g. '{\"email\":\"Work Mail\"}'\n"
	  "  --name NAME            the job's name (200 characters at most)\n"
	  "  --callback-url URL     https:// URL told when the job ends; the\n"
	  "                         callback secret is shown once\n"
	  "  --preview              stop after ingestion with a free preview\n"
	  "  --wait                 wait for the preview (with --preview) or for\n"
	  "                         the job to end\n" },
	{ "bulk preview", "bulk preview <job_id> [--wait] [--refresh]",
	  "Shows the free List Health Preview of a job uploaded with --preview\n"
	  "(POST /v1/verify/bulk/{id}/preview): counts, shares and a chart of\n"
	  "the estimated statuses, credits needed and after refunds, confidence.\n"
	  "  --wait                 poll until the preview is ready\n"
	  "  --refresh              compute the preview again\n" },
	{ "bulk confirm", "bulk confirm <job_id>",
	  "Confirms a previewed job (POST /v1/verify/bulk/{id}/confirm): it is\n"
	  "charged the preview's credits_needed and queued. Safe to retry.\n" },
	{ "bulk status", "bulk status <job_id>",
	  "Shows a job (GET /v1/jobs/{id}): status, counts, credits, times and\n"
	  "the failure message of a failed job.\n" },
	{ "bulk results", "bulk results <job_id> [--classification C] "
	  "[--limit N] [--page N]",
	  "Lists a job's results in input order (GET /v1/jobs/{id}/results).\n"
	  "  --classification C     valid, invalid, risky, catch_all, disposable\n"
	  "                         or unknown\n"
	  "  --limit N              rows a page, 1-1000 (default 100)\n"
	  "  --page N               page number, from 1\n" },
	{ "bulk download", "bulk download <job_id> [--format csv] "
	  "[--output FILE] [--filter F] [--include-original]",
	  "Writes the result file of a completed job to disk as it arrives\n"
	  "(GET /v1/jobs/{id}/download).\n"
	  "  --format csv           the file's format (csv)\n"
	  "  --output FILE          where to write it (default <job_id>.csv;\n"
	  "                         - for standard output)\n"
	  "  --filter F             deliverable, undeliverable, risky, unknown or\n"
	  "                         send_safe\n"
	  "  --include-original     the uploaded file's columns too (upload jobs)\n" },
	{ "jobs list", "jobs list [--status S] [--type T] [--page N] [--limit N]",
	  "Lists your jobs, newest first (GET /v1/jobs).\n"
	  "  --status S             ingesting, awaiting_confirmation, pending,\n"
	  "                         processing, completed, failed or cancelled\n"
	  "  --type T               bulk, upload or batch\n"
	  "  --page N, --limit N    paging (limit 1-100, default 20)\n" },
	{ "jobs progress", "jobs progress <job_id> [--wait]",
	  "Shows a job's progress (GET /v1/jobs/{id}/progress): percent, counts\n"
	  "by status, rate and ETA.\n"
	  "  --wait                 follow it until the job ends\n" },
	{ "jobs cancel", "jobs cancel <job_id>",
	  "Cancels a job (DELETE /v1/jobs/{id}); its unprocessed addresses are\n"
	  "refunded.\n" },
	{ "credits", "credits",
	  "Shows the credit balance and usage (GET /v1/credits).\n" },
	{ "report accuracy", "report accuracy [--since ISO] [--until ISO]",
	  "How right the verdicts were (GET /v1/reports/accuracy): results\n"
	  "verified in the window (default the last 30 days) counted under the\n"
	  "delivery outcome reported for their address afterwards, per\n"
	  "classification and per provider; the share of unknown; how many\n"
	  "addresses verified twice kept their classification.\n"
	  "  --since, --until       ISO 8601 UTC times (2026-11-01T00:00:00Z)\n" },
	{ "config set-key", "config set-key [<key>|-]",
	  "Saves the API key in the config file (0600). Without an argument,\n"
	  "or with -, the key is read from standard input.\n" },
	{ "config set-base-url", "config set-base-url <url>",
	  "Saves the API's base URL in the config file.\n" },
	{ "config show", "config show",
	  "Shows the config file, the key in force (never whole) and the base\n"
	  "URL, and where each comes from.\n" },
	{ "help", "help [<command>]",
	  "Shows the commands, or one command's options.\n" },
};

void
help_overview(FILE *f)
{
	size_t i;

	fprintf(f, "svc %s: the command-line tool of the email verification "
	    "service\n\nUsage: svc [--json] [--api-key KEY] [--base-url URL] "
	    "<command> [options]\n\nCommands:\n", SVC_CLI_VERSION);
	for (i = 0; i < sizeof(help_entries) / sizeof(help_entries[0]); i++)
		fprintf(f, "  svc %s\n", help_entries[i].synopsis);
	fprintf(f, "\nOptions of every command:\n"
	    "  --json          print the API's JSON instead of text (one "
	    "document; with\n"
	    "                  --wait the final one, the creation's answer "
	    "under \"created\")\n"
	    "  --api-key KEY   the key (else $ROCKETVERIFIER_API_KEY, else the "
	    "config file)\n"
	    "  --base-url URL  the API (else $SVC_BASE_URL, else the config "
	    "file)\n"
	    "  --help          the command's options\n"
	    "  --version       svc's version\n"
	    "\nExit status: 0 ok, 1 other error (or the job failed), 2 usage "
	    "or invalid_input,\n3 authentication, 4 not found, 5 insufficient "
	    "credits, 6 rate limited,\n7 network, 8 server, 130 interrupted "
	    "while waiting (the job goes on).\nSee svc(1).\n");
}

int
help_command(FILE *f, const char *cmd)
{
	size_t i;

	if (cmd == NULL) {
		help_overview(f);
		return 0;
	}
	for (i = 0; i < sizeof(help_entries) / sizeof(help_entries[0]); i++) {
		if (strcmp(help_entries[i].name, cmd) != 0)
			continue;
		fprintf(f, "Usage: svc %s\n\n%s\nEvery command also takes "
		    "--json, --api-key KEY, --base-url URL (svc help).\n",
		    help_entries[i].synopsis, help_entries[i].text);
		return 0;
	}
	return -1;
}
