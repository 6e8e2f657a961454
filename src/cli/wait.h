/* wait.h: --wait: following a job until it ends (or its preview is
 * ready), with a live bar on a terminal and plain lines otherwise. Ctrl-C
 * stops the waiting only: the job is never cancelled. */
#ifndef SVC_CLI_WAIT_H
#define SVC_CLI_WAIT_H
#include "cli/cli.h"

#define WAIT_STATUS_MAX 32

/* From now on Ctrl-C sets c->stop instead of ending svc. */
void	 wait_catch(struct cli *);
/* The pause between two polls: SVC_WAIT_INTERVAL seconds (1-3600),
 * default 5. 0, or -1 when Ctrl-C came first (told). */
int	 wait_pause(struct cli *, const char *job_id);
/* Shows one line of waiting (in place on a terminal; "done" ends it). */
void	 wait_show(const char *line, int done);
/* Says that the waiting stopped and the job goes on: the exit status. */
int	 wait_stopped(const char *job_id);
/* Polls GET /v1/jobs/{id}/progress until the job ends (completed, failed,
 * cancelled), or with until_ingested until it is no longer ingesting.
 * 0 with status set, or the exit status (told). */
int	 wait_job(struct cli *, const char *job_id, int until_ingested,
	    char status[WAIT_STATUS_MAX]);
#endif
