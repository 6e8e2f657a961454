/* lists_update.c: "svcadm lists update" refreshes the rule tables from
 * lists_rules_url (lists_rules.c), runs the installed fetch-lists into
 * lists_dir (each file written beside its final name and renamed, so
 * running services never read half a list), then loads the folder as
 * svc-api and svc-worker would (the lists, the pacing defaults, the reply
 * rules and the MX provider table) and prints the counts. Running
 * processes keep what they loaded at start until they are restarted. */
#include "admin/lists_update.h"
#include "engine/lists.h"
#include "engine/pacing_defaults.h"
#include "engine/providers.h"
#include "engine/smtp_rules.h"
#include <errno.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PKGDATADIR
#define PKGDATADIR "/usr/share/svc"
#endif

extern char **environ;

const char *const lists_update_err_names[LISTS_UPDATE_ERR__MAX] = {
	"ok", "fetch", "load", "empty", "rules",
};

const char *
lists_update_script(void)
{
	const char *s = getenv("SVC_FETCH_LISTS");

	return s != NULL && *s != '\0' ? s : PKGDATADIR "/fetch-lists";
}

/* Prints each line of msg as "warning: LINE". */
static void
lists_update_warnings(const struct buf *msg, FILE *out)
{
	const char *p, *nl;

	for (p = buf_str(msg); *p != '\0'; p = *nl ? nl + 1 : nl) {
		if ((nl = strchr(p, '\n')) == NULL)
			nl = p + strlen(p);
		fprintf(out, "warning: %.*s\n", (int)(nl - p), p);
	}
}

/* The MX provider table as the engine reads it: its warnings and count. */
static void
lists_update_providers(const char *dir, FILE *out)
{
	struct providers *p;
	struct buf msg;

	buf_init(&msg, 1 << 16);
	if (providers_load(dir, &p, &msg) != PROVIDERS_OK) {
		fprintf(out, "warning: %s: %s\n", PROVIDERS_FILE,
		    buf_str(&msg));
		buf_free(&msg);
		return;
	}
	lists_update_warnings(&msg, out);
	fprintf(out, "providers: patterns=%zu skipped=%zu file=%s/%s\n",
	    providers_count(p), providers_skipped(p), dir, PROVIDERS_FILE);
	providers_free(p);
	buf_free(&msg);
}

/* The reading rules of SMTP replies in the same folder: their warnings and
 * counts. */
static enum lists_update_err
lists_update_rules(const char *dir, FILE *out, struct buf *err)
{
	struct smtp_rules *r;
	struct buf msg;
	enum smtp_rules_err e;
	size_t i, local = 0;

	buf_init(&msg, 64 * 1024);
	if ((e = smtp_rules_load(dir, &r, &msg)) != SMTP_RULES_OK) {
		buf_reset(err);
		buf_printf(err, "%s %s: %s (%s)", SMTP_RULES_FILE, dir,
		    buf_str(&msg), smtp_rules_err_names[e]);
		buf_free(&msg);
		return LISTS_UPDATE_LOAD;
	}
	lists_update_warnings(&msg, out);
	for (i = 0; i < r->n; i++)
		local += r->rule[i].local != 0;
	fprintf(out, "smtp_reply_rules: rules=%zu local=%zu accept_all=%zu "
	    "skipped=%zu\n", r->n, local, r->naccept_all, r->skipped);
	smtp_rules_free(r);
	buf_free(&msg);
	return LISTS_UPDATE_OK;
}

enum lists_update_err
lists_update_check(const char *dir, FILE *out, struct buf *err)
{
	struct pacing_defaults pd;
	struct lists *l;
	struct buf msg, sum;
	enum lists_err e;
	enum lists_update_err rc = LISTS_UPDATE_OK;

	buf_init(&msg, 1 << 20);
	buf_init(&sum, 1024);
	if ((e = lists_load(dir, &l, &msg)) != LISTS_OK) {
		buf_reset(err);
		buf_printf(err, "lists %s: %s (%s)", dir, buf_str(&msg),
		    lists_err_names[e]);
		rc = LISTS_UPDATE_LOAD;
		goto out;
	}
	lists_update_warnings(&msg, out);
	lists_summary(l, &sum);
	fprintf(out, "lists: %s dir=%s\n", buf_str(&sum), dir);
	/* the pacing defaults beside them (engine/pacing_defaults.h) */
	memset(&pd, 0, sizeof(pd));
	buf_reset(&msg);
	if (pacing_defaults_load(&pd, dir, &msg) == -1)
		fprintf(out, "warning: pacing defaults: %s", buf_str(&msg));
	else {
		lists_update_warnings(&msg, out);
		fprintf(out, "pacing defaults: %zu entries\n", pd.n);
	}
	pacing_defaults_free(&pd);
	if ((rc = lists_update_rules(dir, out, err)) != LISTS_UPDATE_OK) {
		lists_free(l);
		goto out;
	}
	if (lists_count(l, LISTS_DISPOSABLE) == 0 ||
	    lists_count(l, LISTS_FREE) == 0) {
		buf_reset(err);
		buf_printf(err, "lists %s: the %s list is empty (run "
		    "\"svcadm lists update\")", dir,
		    lists_count(l, LISTS_DISPOSABLE) == 0 ? "disposable" :
		    "free");
		rc = LISTS_UPDATE_EMPTY;
	}
	lists_free(l);
	lists_update_providers(dir, out);
out:
	buf_free(&msg);
	buf_free(&sum);
	return rc;
}

enum lists_update_err
lists_update_run(const char *dir, const char *script,
    const struct lists_rules_source *rules, FILE *out, struct buf *err)
{
	char *argv[4];
	pid_t pid;
	int status, rc;
	enum lists_update_err e;

	/* the rule tables first: their server is the operator's, and a failed
	 * npm download must not keep them old */
	if (lists_rules_update(dir, rules, out, err) != LISTS_RULES_OK)
		return LISTS_UPDATE_RULES;
	if (access(script, R_OK) != 0) {
		buf_reset(err);
		buf_printf(err, "%s: %s", script, strerror(errno));
		return LISTS_UPDATE_FETCH;
	}
	argv[0] = (char *)"sh";
	argv[1] = (char *)script;
	argv[2] = (char *)dir;
	argv[3] = NULL;
	fflush(out);
	fflush(stderr);
	if ((rc = posix_spawn(&pid, "/bin/sh", NULL, NULL, argv,
	    environ)) != 0) {
		buf_reset(err);
		buf_printf(err, "cannot run %s: %s", script, strerror(rc));
		return LISTS_UPDATE_FETCH;
	}
	while (waitpid(pid, &status, 0) == -1) {
		if (errno != EINTR) {
			buf_reset(err);
			buf_printf(err, "waiting for %s: %s", script,
			    strerror(errno));
			return LISTS_UPDATE_FETCH;
		}
	}
	if (WIFSIGNALED(status)) {
		buf_reset(err);
		buf_printf(err, "%s killed by signal %d; %s unchanged", script,
		    WTERMSIG(status), dir);
		return LISTS_UPDATE_FETCH;
	}
	if (WEXITSTATUS(status) != 0) {
		buf_reset(err);
		buf_printf(err, "%s failed (exit %d); the lists in %s are "
		    "unchanged", script, WEXITSTATUS(status), dir);
		return LISTS_UPDATE_FETCH;
	}
	if ((e = lists_update_check(dir, out, err)) != LISTS_UPDATE_OK)
		return e;
	fprintf(out, "note: running svc-api and svc-worker processes keep "
	    "the lists and tables they loaded: send the svc-worker daemon "
	    "and svc-api's master SIGHUP, or restart them (svc-worker --once "
	    "reads them at its next run)\n");
	return LISTS_UPDATE_OK;
}
