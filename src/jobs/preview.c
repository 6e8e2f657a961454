/* preview.c: the preview's arithmetic (preview.h). */
#include "jobs/preview.h"
#include "jobs/jobs.h"
#include "util/timeutil.h"
#include <math.h>
#include <string.h>

const char preview_method[] =
    "random sample without replacement of min(200, 2% rounded up) of the "
    "rows that need an SMTP check (suppressed rows and rows the free "
    "checks resolve are left out; no sample when fewer rows than "
    "preview_smtp_min_rows need one), stratified by who runs the mail "
    "(provider or mail host; the smallest merged when there are more than "
    "the sample's rows): each stratum gets rows in proportion to its size "
    "and at least one; each row verified by the engine (catch-all probe "
    "included, no greylisting retry); the strata's shares weighted back by "
    "their sizes, rounded down to multiples of 5 (the rest counted as "
    "unknown) and applied to all SMTP-bound rows (largest remainder); "
    "rows resolved by the free checks are counted as they are; the "
    "intervals are Wilson's 95% score intervals on the stratified "
    "design's effective sample size, from both ends of what the rounding "
    "to multiples of 5 may have taken";

long long
preview_sample_size(long long needs_smtp, long long min_rows)
{
	long long n;

	if (needs_smtp <= 0 || needs_smtp < min_rows)
		return 0;
	n = (needs_smtp * PREVIEW_SAMPLE_PERCENT + 99) / 100;
	return n < PREVIEW_SAMPLE_MAX ? n : PREVIEW_SAMPLE_MAX;
}

void
preview_coarsen(struct preview_tally *t)
{
	long long keep;
	int c;

	for (c = 0; c < PREVIEW_CLASS__MAX; c++) {
		if (c == PREVIEW_UNKNOWN)
			continue;
		keep = t->sample[c] / PREVIEW_SAMPLE_CELL * PREVIEW_SAMPLE_CELL;
		t->sample[PREVIEW_UNKNOWN] += t->sample[c] - keep;
		t->sample[c] = keep;
	}
}

void
preview_estimate(const struct preview_tally *t,
    long long est[PREVIEW_CLASS__MAX])
{
	long long share[PREVIEW_CLASS__MAX], rest[PREVIEW_CLASS__MAX], left;
	int c, best;

	memcpy(est, t->resolved, sizeof(t->resolved));
	if (t->needs_smtp <= 0)
		return;
	if (t->sample_size <= 0) {
		est[PREVIEW_UNKNOWN] += t->needs_smtp;
		return;
	}
	left = t->needs_smtp;
	for (c = 0; c < PREVIEW_CLASS__MAX; c++) {
		share[c] = t->needs_smtp * t->sample[c] / t->sample_size;
		rest[c] = t->needs_smtp * t->sample[c] % t->sample_size;
		left -= share[c];
	}
	/* What rounding down left over goes to the largest remainders. */
	while (left > 0) {
		best = 0;
		for (c = 1; c < PREVIEW_CLASS__MAX; c++)
			if (rest[c] > rest[best])
				best = c;
		share[best]++;
		rest[best] = -1;
		left--;
	}
	for (c = 0; c < PREVIEW_CLASS__MAX; c++)
		est[c] += share[c];
}

void
preview_allocate(const long long *rows, size_t n, long long k,
    long long *alloc)
{
	long long total = 0, left = k;
	double gap, best_gap;
	size_t i, best;

	for (i = 0; i < n; i++) {
		alloc[i] = 0;
		total += rows[i] > 0 ? rows[i] : 0;
	}
	if (k <= 0 || total <= 0)
		return;
	if (k >= total) {
		for (i = 0; i < n; i++)
			alloc[i] = rows[i] > 0 ? rows[i] : 0;
		return;
	}
	/* at least one each, when the sample has room for all */
	if ((long long)n <= k)
		for (i = 0; i < n; i++)
			if (rows[i] > 0) {
				alloc[i] = 1;
				left--;
			}
	/* the rest one by one where the share is furthest below its
	 * proportional one */
	while (left > 0) {
		best = n;
		best_gap = 0;
		for (i = 0; i < n; i++) {
			if (alloc[i] >= rows[i])
				continue;
			gap = (double)k * (double)rows[i] / (double)total -
			    (double)alloc[i];
			if (best == n || gap > best_gap) {
				best = i;
				best_gap = gap;
			}
		}
		if (best == n)
			break;
		alloc[best]++;
		left--;
	}
}

/* The strata's rows with a sample (the weights' denominator). */
static long long
preview_sampled_rows(const struct preview_tally *t)
{
	long long n = 0;
	size_t h;

	for (h = 0; h < t->nstrata; h++)
		if (t->strata[h].sample > 0)
			n += t->strata[h].rows;
	return n;
}

static long long
preview_masked(const long long *counts, unsigned mask)
{
	long long n = 0;
	int c;

	for (c = 0; c < PREVIEW_CLASS__MAX; c++)
		if (mask & 1u << c)
			n += counts[c];
	return n;
}

void
preview_weigh(struct preview_tally *t)
{
	long long rows = preview_sampled_rows(t), left;
	double share[PREVIEW_CLASS__MAX], rest[PREVIEW_CLASS__MAX], w;
	const struct preview_stratum *s;
	size_t h;
	int c, best;

	if (t->nstrata == 0)
		return;
	t->sample_size = 0;
	memset(share, 0, sizeof(share));
	for (h = 0; h < t->nstrata; h++) {
		s = &t->strata[h];
		t->sample_size += s->sample;
		if (s->sample <= 0)
			continue;
		w = (double)s->rows / (double)rows;
		for (c = 0; c < PREVIEW_CLASS__MAX; c++)
			share[c] += w * (double)s->counts[c] / (double)s->sample;
	}
	/* counts of sample_size in those shares that add up */
	left = t->sample_size;
	for (c = 0; c < PREVIEW_CLASS__MAX; c++) {
		t->sample[c] = (long long)floor(share[c] *
		    (double)t->sample_size + 1e-9);
		rest[c] = share[c] * (double)t->sample_size -
		    (double)t->sample[c];
		left -= t->sample[c];
	}
	while (left > 0) {
		best = 0;
		for (c = 1; c < PREVIEW_CLASS__MAX; c++)
			if (rest[c] > rest[best])
				best = c;
		t->sample[best]++;
		rest[best] = -1;
		left--;
	}
}

void
preview_wilson(double p, double n, double z, double *lo, double *hi)
{
	double z2 = z * z, d, mid, half;

	if (!(n > 0)) {
		*lo = 0;
		*hi = 1;
		return;
	}
	if (p < 0)
		p = 0;
	if (p > 1)
		p = 1;
	d = 1 + z2 / n;
	mid = (p + z2 / (2 * n)) / d;
	half = z * sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / d;
	*lo = mid - half < 0 ? 0 : mid - half;
	*hi = mid + half > 1 ? 1 : mid + half;
	/* (the interval holds p; rounding may miss it by an ulp) */
	if (*lo > p)
		*lo = p;
	if (*hi < p)
		*hi = p;
}

/* The effective sample size of the share of the classes in mask: the
 * sample's size over the design effect (the strata's variance against a
 * uniform sample's), with the finite population correction; 0 when the
 * whole pool was sampled (the share is then exact). */
static double
preview_effective_n(const struct preview_tally *t, unsigned mask)
{
	double p = 0, var = 0, w, ph, f;
	long long rows = preview_sampled_rows(t);
	const struct preview_stratum *s;
	int exact = 1;
	size_t h;

	if (t->nstrata == 0) {
		if (t->sample_size >= t->needs_smtp)
			return 0;
		/* without replacement: n / (1 - n/N) */
		return (double)t->sample_size / (1 - (double)t->sample_size /
		    (double)t->needs_smtp);
	}
	for (h = 0; h < t->nstrata; h++) {
		s = &t->strata[h];
		if (s->sample <= 0)
			continue;
		w = (double)s->rows / (double)rows;
		ph = (double)preview_masked(s->counts, mask) / (double)s->sample;
		f = 1 - (double)s->sample / (double)s->rows;
		if (f > 0)
			exact = 0;
		p += w * ph;
		var += w * w * ph * (1 - ph) / (double)s->sample * f;
	}
	if (exact && rows == t->needs_smtp)
		return 0;
	if (var > 0 && p > 0 && p < 1)
		return p * (1 - p) / var;
	return (double)t->sample_size;
}

/* How far the true sample count of the classes in mask may be from the
 * coarsened one: [*dlo, *dhi] rows. */
static void
preview_coarse_range(unsigned mask, double *dlo, double *dhi)
{
	int c, in = 0, out = 0;

	for (c = 0; c < PREVIEW_CLASS__MAX; c++)
		if (c != PREVIEW_UNKNOWN && (mask & 1u << c))
			in++;
		else if (c != PREVIEW_UNKNOWN)
			out++;
	*dlo = *dhi = 0;
	if (mask & 1u << PREVIEW_UNKNOWN)
		*dlo = -(double)(out * (PREVIEW_SAMPLE_CELL - 1));
	else
		*dhi = (double)(in * (PREVIEW_SAMPLE_CELL - 1));
}

void
preview_interval(const struct preview_tally *t, unsigned mask, double *lo,
    double *hi)
{
	double res, need = (double)t->needs_smtp, total = (double)t->total,
	    p, n, l, h, x, plo, phi, dlo, dhi;

	*lo = *hi = 0;
	if (t->total <= 0)
		return;
	res = (double)preview_masked(t->resolved, mask);
	if (t->needs_smtp <= 0) {
		l = h = 0;
	} else if (t->sample_size <= 0) {
		/* nothing probed: none to all of them */
		l = 0;
		h = 1;
	} else {
		/* The published counts are coarsened (preview_coarsen): each
		 * class but unknown lost 0 to PREVIEW_SAMPLE_CELL - 1 rows to
		 * unknown. The sample's true count of the classes in mask
		 * was up to that much above (mask without unknown) or below
		 * (with it): the interval spans Wilson's from both ends. */
		p = (double)preview_masked(t->sample, mask) /
		    (double)t->sample_size;
		preview_coarse_range(mask, &dlo, &dhi);
		plo = p + dlo / (double)t->sample_size;
		phi = p + dhi / (double)t->sample_size;
		plo = plo < 0 ? 0 : plo;
		phi = phi > 1 ? 1 : phi;
		if ((n = preview_effective_n(t, mask)) == 0) {
			l = plo;
			h = phi;
		} else {
			preview_wilson(plo, n, PREVIEW_Z95, &l, &x);
			preview_wilson(phi, n, PREVIEW_Z95, &x, &h);
		}
	}
	*lo = (res + need * l) / total;
	*hi = (res + need * h) / total;
	if (*hi > 1)
		*hi = 1;
}

static double
preview_share(long long part, long long total)
{
	return total > 0 ? (double)part / (double)total : 0.0;
}

/* The shares given with an interval, in preview_json's order. */
#define PREVIEW_SHARES 3
static const struct {
	unsigned	 mask;
} preview_shares[PREVIEW_SHARES] = {
	{ 1u << PREVIEW_INVALID },			/* bounce rate */
	{ 1u << PREVIEW_CATCH_ALL },
	{ 1u << PREVIEW_UNKNOWN | 1u << PREVIEW_CATCH_ALL },	/* unknown */
};

json_t *
preview_json(const struct preview_tally *t, time_t when)
{
	long long est[PREVIEW_CLASS__MAX], undeliverable, unknown, after;
	double lo[PREVIEW_SHARES], hi[PREVIEW_SHARES], width, point;
	char at[TIMEUTIL_ISO_LEN];
	json_t *counts, *sample;
	const char *confidence;
	int c;

	preview_estimate(t, est);
	/* unknown results are refunded; the free rows are invalid_syntax,
	 * never unknown, so every estimated unknown is a charged row */
	after = t->credits - est[PREVIEW_UNKNOWN];
	if (after < 0)
		after = 0;
	timeutil_iso8601(when, at);
	counts = json_object();
	sample = json_object();
	for (c = 0; c < PREVIEW_CLASS__MAX; c++) {
		json_object_set_new(counts, jobs_count_names[c],
		    json_integer(est[c]));
		json_object_set_new(sample, jobs_count_names[c],
		    json_integer(t->sample[c]));
	}
	undeliverable = est[PREVIEW_INVALID] + est[PREVIEW_DISPOSABLE];
	unknown = est[PREVIEW_UNKNOWN] + est[PREVIEW_CATCH_ALL];
	width = 0;
	for (c = 0; c < PREVIEW_SHARES; c++) {
		preview_interval(t, preview_shares[c].mask, &lo[c], &hi[c]);
		/* (the estimate is in its interval: the counts' rounding
		 * cannot take it out) */
		point = preview_share(preview_masked(est, preview_shares[c].mask),
		    t->total);
		if (point < lo[c])
			lo[c] = point;
		if (point > hi[c])
			hi[c] = point;
		if (hi[c] - lo[c] > width)
			width = hi[c] - lo[c];
	}
	if (t->needs_smtp > 0 && t->sample_size <= 0)
		confidence = "low";
	else if (width <= PREVIEW_CONFIDENCE_HIGH_WIDTH)
		confidence = "high";
	else if (width <= PREVIEW_CONFIDENCE_MEDIUM_WIDTH)
		confidence = "medium";
	else
		confidence = "low";
	return json_pack("{s:s,s:I,s:I,s:{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I},"
	    "s:{s:I,s:o,s:s},s:o,s:{s:I,s:I,s:I,s:I},s:f,s:[ff],s:f,s:f,s:f,"
	    "s:[ff],s:f,s:[ff],s:I,s:I,s:s}",
	    "computed_at", at, "total_emails", (json_int_t)t->total,
	    "duplicates_removed", (json_int_t)t->duplicates,
	    "free_checks",
	    "syntax_invalid", (json_int_t)t->syntax_invalid,
	    "no_mx", (json_int_t)t->no_mx,
	    "disposable", (json_int_t)t->disposable,
	    "role_based", (json_int_t)t->role_based,
	    "suppressed", (json_int_t)t->suppressed,
	    "free_provider", (json_int_t)t->free_provider,
	    "resolved_without_smtp", (json_int_t)t->resolved_without_smtp,
	    "needs_smtp", (json_int_t)t->needs_smtp,
	    "smtp_sample", "size", (json_int_t)t->sample_size,
	    "counts", sample, "method", preview_method,
	    "estimated_counts", counts,
	    "estimated_by_status",
	    "deliverable", (json_int_t)est[PREVIEW_VALID],
	    "undeliverable", (json_int_t)undeliverable,
	    "risky", (json_int_t)est[PREVIEW_RISKY],
	    "unknown", (json_int_t)unknown,
	    "estimated_bounce_rate", preview_share(est[PREVIEW_INVALID],
	    t->total),
	    "estimated_bounce_rate_interval", lo[0], hi[0],
	    "undeliverable_share", preview_share(undeliverable, t->total),
	    "risky_share", preview_share(est[PREVIEW_RISKY], t->total),
	    "catch_all_share", preview_share(est[PREVIEW_CATCH_ALL], t->total),
	    "catch_all_share_interval", lo[1], hi[1],
	    "unknown_share", preview_share(unknown, t->total),
	    "unknown_share_interval", lo[2], hi[2],
	    "credits_needed", (json_int_t)t->credits,
	    "estimated_credits_after_refunds", (json_int_t)after,
	    "confidence", confidence);
}
