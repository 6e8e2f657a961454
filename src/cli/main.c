/* main.c: svc, the command-line tool of the email verification service
 * (1.1.0). Reads the common options that come before the command, finds
 * the command ("verify", "bulk create" ...) and runs it; "svc help" and
 * "--version" are answered here. */
#include "cli/cmds.h"
#include "cli/help.h"
#include "cli/version.h"
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

static const struct main_cmd {
	const char	*group;
	const char	*name;		/* NULL: the group is the command */
	const char	*full;
	cmds_fn		 fn;
} main_cmds[] = {
	{ "verify", NULL, "verify", cmd_verify },
	{ "bulk", "create", "bulk create", cmd_bulk_create },
	{ "bulk", "upload", "bulk upload", cmd_upload },
	{ "bulk", "preview", "bulk preview", cmd_preview },
	{ "bulk", "confirm", "bulk confirm", cmd_confirm },
	{ "bulk", "status", "bulk status", cmd_bulk_status },
	{ "bulk", "results", "bulk results", cmd_results },
	{ "bulk", "download", "bulk download", cmd_download },
	{ "jobs", "list", "jobs list", cmd_jobs_list },
	{ "jobs", "progress", "jobs progress", cmd_jobs_progress },
	{ "jobs", "cancel", "jobs cancel", cmd_jobs_cancel },
	{ "credits", NULL, "credits", cmd_credits },
	{ "report", "accuracy", "report accuracy", cmd_report },
	{ "config", "set-key", "config set-key", cmd_config_set_key },
	{ "config", "set-base-url", "config set-base-url",
	    cmd_config_set_base_url },
	{ "config", "show", "config show", cmd_config_show },
};
#define MAIN_NCMDS (sizeof(main_cmds) / sizeof(main_cmds[0]))

/* The command named by argv[0] (and argv[1] for a group); *words: 1 or 2. */
static const struct main_cmd *
main_find(int argc, char **argv, int *words, int *group)
{
	size_t i;

	*group = 0;
	for (i = 0; i < MAIN_NCMDS; i++) {
		if (strcmp(main_cmds[i].group, argv[0]) != 0)
			continue;
		*group = 1;
		if (main_cmds[i].name == NULL) {
			*words = 1;
			return &main_cmds[i];
		}
		if (argc > 1 && strcmp(main_cmds[i].name, argv[1]) == 0) {
			*words = 2;
			return &main_cmds[i];
		}
	}
	return NULL;
}

/* svc help [command words]: 0, or 2 for an unknown command. */
static int
main_help(int argc, char **argv)
{
	char name[128];

	if (argc == 0) {
		help_overview(stdout);
		return 0;
	}
	snprintf(name, sizeof(name), "%s%s%s", argv[0], argc > 1 ? " " : "",
	    argc > 1 ? argv[1] : "");
	if (help_command(stdout, name) == 0)
		return 0;
	fprintf(stderr, "svc: help: no command '%s'\nTry 'svc help'.\n", name);
	return APIERR_EXIT_USAGE;
}

int
main(int argc, char **argv)
{
	const struct main_cmd *cmd;
	struct cli c;
	int i = 1, rc, words, group;

	cli_init(&c);
	/* the common options may come before the command too */
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--version") == 0) {
			printf("svc %s\n", SVC_CLI_VERSION);
			return 0;
		} else if (strcmp(argv[i], "--help") == 0 ||
		    strcmp(argv[i], "-h") == 0) {
			help_overview(stdout);
			return 0;
		} else if (strcmp(argv[i], "--json") == 0)
			c.json = 1;
		else if (strcmp(argv[i], "--api-key") == 0 && i + 1 < argc)
			c.opt_key = argv[++i];
		else if (strncmp(argv[i], "--api-key=", 10) == 0)
			c.opt_key = argv[i] + 10;
		else if (strcmp(argv[i], "--base-url") == 0 && i + 1 < argc)
			c.opt_base = argv[++i];
		else if (strncmp(argv[i], "--base-url=", 11) == 0)
			c.opt_base = argv[i] + 11;
		else {
			fprintf(stderr, "svc: unknown option %s\nTry 'svc "
			    "help'.\n", argv[i]);
			return APIERR_EXIT_USAGE;
		}
	}
	if (i == argc) {
		help_overview(stderr);
		return APIERR_EXIT_USAGE;
	}
	if (strcmp(argv[i], "help") == 0)
		return main_help(argc - i - 1, argv + i + 1);
	if ((cmd = main_find(argc - i, argv + i, &words, &group)) == NULL) {
		if (group)
			fprintf(stderr, "svc: %s: %s%s\nTry 'svc help'.\n",
			    argv[i], i + 1 < argc ? "no subcommand " :
			    "which subcommand?", i + 1 < argc ? argv[i + 1] :
			    "");
		else
			fprintf(stderr, "svc: no command '%s'\nTry 'svc "
			    "help'.\n", argv[i]);
		return APIERR_EXIT_USAGE;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		fprintf(stderr, "svc: libcurl could not start\n");
		return APIERR_EXIT_ERROR;
	}
	c.cmd = cmd->full;
	i += words - 1;
	rc = cmd->fn(&c, argc - i, argv + i);
	cli_flush_created(&c, rc);
	cli_free(&c);
	curl_global_cleanup();
	return rc;
}
