/* bar.c: renders the progress of a job for --wait: the bar redrawn in
 * place on a terminal (percent, rate and ETA from GET /v1/jobs/{id}/
 * progress; while an upload is read, the share of its bytes and the rows
 * read) and the plain line written every few seconds otherwise. Pure:
 * the caller writes the text where it belongs. */
#include "cli/bar.h"
#include <stdio.h>
#include <string.h>

void
bar_eta(char out[24], long s)
{
	if (s < 0)
		snprintf(out, 24, "--");
	else if (s >= 3600)
		snprintf(out, 24, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60,
		    s % 60);
	else
		snprintf(out, 24, "%ld:%02ld", s / 60, s % 60);
}

/* "450/1000  1200/min  ETA 0:25", or "1234 rows read" while the upload
 * is read (the job has no addresses to count yet). */
static int
bar_tail(struct buf *b, const struct bar_state *st, const char *sep)
{
	char eta[24];

	if (st->ingesting)
		return buf_printf(b, "%lld rows read", st->rows_read);
	bar_eta(eta, st->eta);
	return buf_printf(b, "%lld/%lld%s%ld/min%sETA %s", st->processed,
	    st->total, sep, st->rate, sep, eta);
}

int
bar_line(struct buf *b, const struct bar_state *st, int width)
{
	struct buf tail;
	int pct = st->percent < 0 ? 0 : st->percent > 100 ? 100 :
	    st->percent, room, fill, i, rc = -1;

	buf_init(&tail, 256);
	if (bar_tail(&tail, st, "  ") == -1)
		goto out;
	/* "<id>  <status>  [" "]  100%  " <tail> */
	room = width - (int)strlen(st->job_id) - (int)strlen(st->status) -
	    (int)tail.len - 14;
	if (room < 10)
		room = 10;
	if (room > 50)
		room = 50;
	fill = room * pct / 100;
	if (buf_printf(b, "%s  %s  [", st->job_id, st->status) == -1)
		goto out;
	for (i = 0; i < room; i++)
		if (buf_putc(b, i < fill ? '#' : '-') == -1)
			goto out;
	if (buf_printf(b, "]  %3d%%  %s", pct, buf_str(&tail)) == -1)
		goto out;
	rc = 0;
out:
	buf_free(&tail);
	return rc;
}

int
bar_plain(struct buf *b, const struct bar_state *st)
{
	if (buf_printf(b, "%s: %s %d%% (", st->job_id, st->status,
	    st->percent) == -1 || bar_tail(b, st, ", ") == -1 ||
	    buf_putc(b, ')') == -1)
		return -1;
	return 0;
}
