/* wait.c: --wait. A job is followed through GET /v1/jobs/{id}/progress
 * every SVC_WAIT_INTERVAL seconds (5; each poll is one request against
 * the rate limit). On a terminal (stderr) one bar is redrawn in place;
 * otherwise a plain line is written per poll, for logs. While an upload
 * is read the bar is of its bytes, with the rows read. Ctrl-C ends the
 * waiting, never the job: no DELETE is ever sent from here. */
#include "cli/wait.h"
#include "cli/bar.h"
#include "cli/out.h"
#include "util/strparse.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static volatile sig_atomic_t *wait_flag;
static int wait_open_line;	/* a bar is drawn without its newline */

static void
wait_sigint(int sig)
{
	if (wait_flag)
		*wait_flag = 1;
}

void
wait_catch(struct cli *c)
{
	struct sigaction sa;

	wait_flag = &c->stop;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = wait_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
}

static int
wait_tty(void)
{
	return isatty(STDERR_FILENO);
}

static int
wait_width(void)
{
	struct winsize ws;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col - 1;
	return 79;
}

void
wait_show(const char *line, int done)
{
	if (wait_tty()) {
		fprintf(stderr, "\r%s\033[K%s", line, done ? "\n" : "");
		wait_open_line = !done;
	} else
		fprintf(stderr, "%s\n", line);
	fflush(stderr);
}

int
wait_stopped(const char *job_id)
{
	if (wait_open_line)
		fputc('\n', stderr);
	wait_open_line = 0;
	fprintf(stderr, "svc: stopped waiting; job %s goes on (svc jobs "
	    "progress %s --wait)\n", job_id, job_id);
	return APIERR_EXIT_INTERRUPTED;
}

int
wait_pause(struct cli *c, const char *job_id)
{
	const char *env = getenv("SVC_WAIT_INTERVAL");
	long s = 5;

	if (env != NULL && strparse_long(env, 1, 3600, &s) == -1)
		s = 5;
	if (client_sleep(c->client, s * 1000) == -1) {
		wait_stopped(job_id);
		return -1;
	}
	return 0;
}

/* The bar's state from a progress answer. */
static void
wait_state(json_t *p, const char *job_id, struct bar_state *st,
    char status[WAIT_STATUS_MAX])
{
	char b[OUT_VAL_MAX];
	json_t *eta = out_get(p, "eta_seconds");

	strparse_copy(status, WAIT_STATUS_MAX, out_field(b, p, "status"));
	st->job_id = job_id;
	st->status = status;
	st->total = out_int(p, "total_emails");
	st->processed = out_int(p, "processed_emails");
	st->percent = (int)out_int(p, "percent");
	st->rate = (long)out_int(p, "rate_per_minute");
	st->eta = json_is_integer(eta) ? (long)json_integer_value(eta) : -1;
	/* an upload being read: its bytes and rows so far */
	st->ingesting = json_is_object(out_get(p, "ingestion"));
	if (st->ingesting) {
		st->percent = (int)out_int(p, "ingestion.percent");
		st->rows_read = out_int(p, "ingestion.rows_read");
	}
}

int
wait_job(struct cli *c, const char *job_id, int until_ingested,
    char status[WAIT_STATUS_MAX])
{
	struct client_req req = { "GET", NULL, NULL, NULL, NULL, NULL };
	struct bar_state st;
	struct buf path, line;
	json_t *p = NULL;
	int rc, done;

	buf_init(&path, 4096);
	buf_init(&line, 1024);
	if (buf_puts(&path, "/v1/jobs/") == -1 ||
	    cli_urlenc(&path, job_id) == -1 ||
	    buf_puts(&path, "/progress") == -1) {
		rc = cli_usage(c, "job id too long");
		goto out;
	}
	req.path = buf_str(&path);
	wait_catch(c);
	for (;;) {
		if ((rc = cli_call(c, &req, &p)) != APIERR_EXIT_OK) {
			if (rc == APIERR_EXIT_INTERRUPTED)
				rc = wait_stopped(job_id);
			goto out;
		}
		wait_state(p, job_id, &st, status);
		done = strcmp(status, "completed") == 0 ||
		    strcmp(status, "failed") == 0 ||
		    strcmp(status, "cancelled") == 0 ||
		    (until_ingested && strcmp(status, "ingesting") != 0);
		buf_reset(&line);
		if (until_ingested && done && strcmp(status, "failed") != 0 &&
		    strcmp(status, "cancelled") != 0 ?
		    /* read: what was found, not 0 of it verified */
		    buf_printf(&line, "%s: %s: the file is read, %lld unique "
		    "addresses", job_id, status, st.total) == -1 :
		    wait_tty() ? bar_line(&line, &st, wait_width()) :
		    bar_plain(&line, &st)) {
			rc = cli_fail(c, APIERR_EXIT_ERROR, "error",
			    "out of memory");
			goto out;
		}
		wait_show(buf_str(&line), done);
		json_decref(p);
		p = NULL;
		if (done)
			break;
		if (wait_pause(c, job_id) == -1) {
			rc = APIERR_EXIT_INTERRUPTED;
			goto out;
		}
	}
	rc = APIERR_EXIT_OK;
out:
	json_decref(p);
	buf_free(&path);
	buf_free(&line);
	return rc;
}
