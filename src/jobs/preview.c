/* preview.c: the preview's arithmetic (preview.h). */
#include "jobs/preview.h"
#include "jobs/jobs.h"
#include "util/timeutil.h"
#include <string.h>

const char preview_method[] =
    "uniform random sample without replacement of min(200, 2% rounded up) "
    "of the rows that need an SMTP check (suppressed rows and rows the "
    "free checks resolve are left out; no sample when fewer rows than "
    "preview_smtp_min_rows need one), each verified by the engine "
    "(catch-all probe included, no greylisting retry); the sample's counts "
    "are rounded down to multiples of 5, the rest counted as unknown; "
    "each classification's share of the sample is applied to all "
    "SMTP-bound rows (largest remainder), and rows resolved by the free "
    "checks are counted as they are";

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

static double
preview_share(long long part, long long total)
{
	return total > 0 ? (double)part / (double)total : 0.0;
}

json_t *
preview_json(const struct preview_tally *t, time_t when)
{
	long long est[PREVIEW_CLASS__MAX], undeliverable, unknown, after;
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
	if (t->needs_smtp == 0 || t->sample_size >= PREVIEW_HIGH_SAMPLE)
		confidence = "high";
	else if (t->sample_size > 0)
		confidence = "medium";
	else
		confidence = "low";
	return json_pack("{s:s,s:I,s:I,s:{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I},"
	    "s:{s:I,s:o,s:s},s:o,s:{s:I,s:I,s:I,s:I},s:f,s:f,s:f,s:f,s:I,s:I,"
	    "s:s}",
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
	    "undeliverable_share", preview_share(undeliverable, t->total),
	    "risky_share", preview_share(est[PREVIEW_RISKY], t->total),
	    "unknown_share", preview_share(unknown, t->total),
	    "credits_needed", (json_int_t)t->credits,
	    "estimated_credits_after_refunds", (json_int_t)after,
	    "confidence", confidence);
}
