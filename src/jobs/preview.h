/* preview.h: the numbers of the free List Health Preview (the spec's
 * preview object): what the free checks found on every unique address,
 * what an SMTP sample found, and the estimate for the whole list drawn
 * from both. How the rows are checked and the sample probed is svc-worker's
 * (ingester.c); this is the arithmetic, kept apart so that it is tested on
 * its own. */
#ifndef SVC_PREVIEW_H
#define SVC_PREVIEW_H
#include <jansson.h>
#include <stddef.h>
#include <time.h>

#define PREVIEW_SAMPLE_MAX 200		/* min(200, 2% of SMTP-bound rows) */
#define PREVIEW_SAMPLE_PERCENT 2
/* The sample's counts are published in steps of this many rows: a class
 * that fewer rows of the sample fell in shows 0 (k-anonymity, k = 5). */
#define PREVIEW_SAMPLE_CELL 5

/* The bulk classifications, in jobs_count_names' order. */
enum preview_class {
	PREVIEW_VALID,
	PREVIEW_INVALID,
	PREVIEW_RISKY,
	PREVIEW_CATCH_ALL,
	PREVIEW_DISPOSABLE,
	PREVIEW_UNKNOWN,
	PREVIEW_CLASS__MAX
};

/* One stratum of the SMTP sample: the SMTP-bound rows whose mail is run
 * by one provider or mail host (or, when there are more of them than the
 * sample has rows, the smallest ones together). */
struct preview_stratum {
	long long	 rows;			/* SMTP-bound rows */
	long long	 sample;		/* of them in the sample */
	long long	 counts[PREVIEW_CLASS__MAX];	/* the sample's classes */
};

/* z of a two-sided 95% interval. */
#define PREVIEW_Z95 1.959963984540054
/* confidence from the widest of the three intervals (shares of the whole
 * list): high up to this width, medium up to the next, else low; low
 * too when rows need SMTP and none was sampled. */
#define PREVIEW_CONFIDENCE_HIGH_WIDTH 0.15
#define PREVIEW_CONFIDENCE_MEDIUM_WIDTH 0.35

struct preview_tally {
	long long	 total;		/* unique addresses */
	/* the rows charged at confirmation: total less the entries not
	 * shaped like an address (credits_needed) */
	long long	 credits;
	long long	 duplicates;	/* rows dropped by de-duplication */
	/* the free checks (a row may count in several) */
	long long	 syntax_invalid, no_mx, disposable, role_based,
			 suppressed, free_provider;
	/* every row is one of the two */
	long long	 resolved_without_smtp, needs_smtp;
	/* classes of the rows resolved without SMTP (suppressed ones count
	 * as invalid: undeliverable for this account) */
	long long	 resolved[PREVIEW_CLASS__MAX];
	/* the SMTP sample: its size and the classes it found */
	long long	 sample_size;
	long long	 sample[PREVIEW_CLASS__MAX];
	/* the strata the sample was drawn from (none: one stratum, the
	 * sample above); preview_weigh fills sample[] from them */
	const struct preview_stratum *strata;
	size_t		 nstrata;
};

/* How many of k sample rows each of n strata of rows[i] rows gets:
 * proportional to its rows (largest deficit first), at least one each
 * when k >= n, never more than its rows. */
void	 preview_allocate(const long long *rows, size_t n, long long k,
	    long long *alloc);
/* The sample's class counts weighted back from the strata (each
 * stratum's shares times its rows' weight, as counts of sample_size that
 * add up); nothing without strata. */
void	 preview_weigh(struct preview_tally *);
/* Wilson's score interval of a proportion p observed in n trials at z:
 * [*lo, *hi] within [0, 1] (n <= 0: [0, 1]). */
void	 preview_wilson(double p, double n, double z, double *lo, double *hi);
/* The 95% interval of the share of the whole list that falls in the
 * classes of mask (1 << class), drawn from the (coarsened) sample, with
 * the strata's design effect and room for what the coarsening took, and
 * the rows resolved without SMTP. */
void	 preview_interval(const struct preview_tally *, unsigned mask,
	    double *lo, double *hi);

/* The sample's size for this many SMTP-bound rows: 2% of them rounded
 * up, at most 200; 0 for fewer than min_rows (preview_smtp_min_rows: a
 * short list's sample would be its few addresses' verdicts, free). */
long long preview_sample_size(long long needs_smtp, long long min_rows);
/* The sample's counts coarsened before anything is drawn from them: each
 * classification's count rounded down to a multiple of
 * PREVIEW_SAMPLE_CELL, what that took away counted as unknown (the size
 * and the sum stay), so that no published figure is one row's verdict. */
void	 preview_coarsen(struct preview_tally *);
/* The estimate: the resolved rows as they are, the SMTP-bound rows split
 * by the sample's shares (largest remainder, so the counts add up; all
 * unknown without a sample). */
void	 preview_estimate(const struct preview_tally *,
	    long long est[PREVIEW_CLASS__MAX]);
/* The spec's preview object, computed at when. */
json_t	*preview_json(const struct preview_tally *, time_t when);
/* How the sample is drawn and extrapolated (smtp_sample.method). */
extern const char preview_method[];
#endif
