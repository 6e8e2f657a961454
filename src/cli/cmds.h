/* cmds.h: svc's commands. Each takes the run and its own argv (argv[0]
 * is the command's last word) and returns svc's exit status. */
#ifndef SVC_CLI_CMDS_H
#define SVC_CLI_CMDS_H
#include "cli/cli.h"

typedef int (*cmds_fn)(struct cli *, int argc, char **argv);

int	 cmd_verify(struct cli *, int, char **);
int	 cmd_bulk_create(struct cli *, int, char **);
int	 cmd_bulk_status(struct cli *, int, char **);
int	 cmd_upload(struct cli *, int, char **);
int	 cmd_preview(struct cli *, int, char **);
int	 cmd_confirm(struct cli *, int, char **);
int	 cmd_results(struct cli *, int, char **);
int	 cmd_download(struct cli *, int, char **);
int	 cmd_jobs_list(struct cli *, int, char **);
int	 cmd_jobs_progress(struct cli *, int, char **);
int	 cmd_jobs_cancel(struct cli *, int, char **);
int	 cmd_credits(struct cli *, int, char **);
int	 cmd_report(struct cli *, int, char **);
int	 cmd_config_set_key(struct cli *, int, char **);
int	 cmd_config_set_base_url(struct cli *, int, char **);
int	 cmd_config_show(struct cli *, int, char **);

/* After --wait: shows the job (GET /v1/jobs/{id}; with --json its JSON)
 * and returns 0 when it completed, 1 (told) when it failed or was
 * cancelled. */
int	 cmd_bulk_finish(struct cli *, const char *job_id);
/* Asks for a job's preview (POST /v1/verify/bulk/{id}/preview, with
 * refresh=true when asked) and shows it as a report (its JSON with
 * --json); with wait, asks again until it is ready. The exit status. */
int	 cmd_preview_show(struct cli *, const char *job_id, int wait,
	    int refresh);
#endif
