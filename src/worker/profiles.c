/* profiles.c: the learned profiles of svc-worker's mail hosts
 * (engine/mxprofile.h) read and written in batches (sched.h), off the
 * verification loop's round trips: a host met for the first time is read
 * together with the others its pass over MX answers met (one SELECT for up
 * to DBSQL_IN_MAX of them), before any of their sessions starts; what
 * sessions teach is merged per host and written once a second (or every
 * PROFILES_NOTES_MAX hosts), in one statement for many hosts, and when
 * the loop returns. One statement a host each way was 400
 * round trips as bench-worker's 200-host job started. */
#include "engine/mxprofile.h"
#include "util/grow.h"
#include "util/log.h"
#include "worker/sched.h"
#include <stdlib.h>
#include <string.h>

#define PROFILES_WRITE_MS	1000	/* notes kept at most this long */
#define PROFILES_NOTES_MAX	256	/* or this many */

/* The host's profile is now known: the RCPTs a session takes limit its
 * sessions, and the sessions at once it took its window. */
static void
profiles_apply(struct process_host *h, const struct mxprofile *prof,
    int found)
{
	int most = mxprofile_sessions_max(prof);

	h->prof = *prof;
	if (found && h->prof.rcpts_per_session > 0)
		h->session_limit = h->prof.rcpts_per_session;
	if (found && most > 0 && most < h->window_cap) {
		h->window_cap = most;
		if (h->window > most)
			h->window = most;
		log_debug("event=smtp_window_profile host=%s window=%d cap=%d",
		    h->name, h->window, h->window_cap);
	}
}

/* One host alone (no memory to wait with the others). */
static void
profiles_read_one(struct process *p, struct process_host *h)
{
	struct mxprofile prof;
	int found = 0;

	if (mxprofile_get(p->db, h->name, &prof, &found) != DB_OK) {
		log_error("event=mx_profile_read host=%s error=\"%s\"", h->name,
		    db_error(p->db));
		return;
	}
	profiles_apply(h, &prof, found);
}

void
profiles_want(struct process *p, struct process_host *h)
{
	if (grow(&p->prof_want, p->nprof_want, &p->capprof_want,
	    sizeof(*p->prof_want), 64) == -1) {
		profiles_read_one(p, h);
		return;
	}
	p->prof_want[p->nprof_want++] = h;
}

void
profiles_read(struct process *p)
{
	struct mxprofile *prof;
	int *found;
	size_t i, n = p->nprof_want;

	if (n == 0)
		return;
	p->nprof_want = 0;
	prof = calloc(n, sizeof(*prof));
	found = calloc(n, sizeof(*found));
	if (prof == NULL || found == NULL) {
		for (i = 0; i < n; i++)
			profiles_read_one(p, p->prof_want[i]);
		goto out;
	}
	for (i = 0; i < n; i++)
		mxprofile_init(&prof[i], p->prof_want[i]->name);
	if (mxprofile_get_many(p->db, prof, found, n) != DB_OK) {
		log_error("event=mx_profile_read hosts=%zu error=\"%s\"", n,
		    db_error(p->db));
		goto out;
	}
	for (i = 0; i < n; i++)
		profiles_apply(p->prof_want[i], &prof[i], found[i]);
out:
	free(prof);
	free(found);
}

void
profiles_note(struct process *p, const struct mxprofile *n)
{
	size_t i;

	for (i = 0; i < p->nprof_notes; i++)
		if (strcmp(p->prof_notes[i].host, n->host) == 0) {
			mxprofile_merge(&p->prof_notes[i], n);
			return;
		}
	if (grow(&p->prof_notes, p->nprof_notes, &p->capprof_notes,
	    sizeof(*p->prof_notes), 64) == -1) {
		if (mxprofile_note(p->db, n) != DB_OK)
			log_error("event=mx_profile_note host=%s error=\"%s\"",
			    n->host, db_error(p->db));
		return;
	}
	p->prof_notes[p->nprof_notes++] = *n;
}

static int
profiles_by_host(const void *a, const void *b)
{
	return strcmp(((const struct mxprofile *)a)->host,
	    ((const struct mxprofile *)b)->host);
}

void
profiles_write(struct process *p, int64_t now, int all)
{
	if (p->nprof_notes == 0 || (!all && p->nprof_notes <
	    PROFILES_NOTES_MAX && now - p->prof_written < PROFILES_WRITE_MS))
		return;
	p->prof_written = now;
	/* a host once each (profiles_note merges), in the order of the
	 * names: other workers' statements take the rows in the same order */
	qsort(p->prof_notes, p->nprof_notes, sizeof(*p->prof_notes),
	    profiles_by_host);
	if (mxprofile_note_many(p->db, p->prof_notes, p->nprof_notes) != DB_OK)
		log_error("event=mx_profile_note hosts=%zu error=\"%s\"",
		    p->nprof_notes, db_error(p->db));
	p->nprof_notes = 0;
}

void
profiles_free(struct process *p)
{
	free(p->prof_want);
	free(p->prof_notes);
	p->prof_want = NULL;
	p->prof_notes = NULL;
	p->nprof_want = p->capprof_want = 0;
	p->nprof_notes = p->capprof_notes = 0;
}
