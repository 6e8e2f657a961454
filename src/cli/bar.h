/* bar.h: the lines --wait shows while a job runs: a progress bar redrawn
 * in place on a terminal, plain lines otherwise. */
#ifndef SVC_CLI_BAR_H
#define SVC_CLI_BAR_H
#include "util/buf.h"

struct bar_state {
	const char	*job_id;
	const char	*status;
	long long	 total;
	long long	 processed;
	int		 percent;	/* 0-100 */
	long		 rate;		/* addresses a minute, 0 unknown */
	long		 eta;		/* seconds, -1 unknown */
	int		 ingesting;	/* an upload being read: percent is of
					 * its bytes, rows_read what is read */
	long long	 rows_read;
};

/* "job_x  processing  [#######-------]  45%  450/1000  1200/min  ETA 0:25"
 * in at most width columns (the bar shrinks; at least 10 of it). */
int	 bar_line(struct buf *, const struct bar_state *, int width);
/* "job_x: processing 45% (450/1000), 1200/min, ETA 0:25"; while an
 * upload is read, "job_x: ingesting 40% (1234 rows read)" (and the bar's
 * tail is "1234 rows read" too). */
int	 bar_plain(struct buf *, const struct bar_state *);
/* "0:25", "12:05", "1:02:03"; "--" when unknown (negative). */
void	 bar_eta(char out[24], long seconds);
#endif
