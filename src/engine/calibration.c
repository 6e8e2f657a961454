/* calibration.c: the calibrated score and the table of counts
 * (calibration.h has the maths). Integer arithmetic: the score is
 *   num = 100 D_p (N_c + K) + K (100 D_c + K s)
 *   den = (N_c + K) (N_p + K)
 *   score = floor((2 num + den) / (2 den))     (100 r, half up)
 * Counts above CALIBRATION_COUNT_MAX are halved together (delivered with
 * its total) until they fit, so no product overflows. */
#include "engine/calibration.h"
#include "util/strparse.h"
#include <stdlib.h>
#include <string.h>

#define CALIBRATION_COUNT_MAX 100000000LL	/* 100 N^2 < 2^62 */

const char *const calibration_basis_names[CALIBRATION_BASIS__MAX] = {
	"rules", "calibrated"
};

/* delivered and total, each at least 0, delivered at most total, total
 * at most CALIBRATION_COUNT_MAX. */
static void
calibration_norm(const struct calibration_counts *c, long long *d,
    long long *n)
{
	long long b;

	*d = c != NULL && c->delivered > 0 ? c->delivered : 0;
	b = c != NULL && c->bounced > 0 ? c->bounced : 0;
	while (*d > CALIBRATION_COUNT_MAX || b > CALIBRATION_COUNT_MAX ||
	    *d + b > CALIBRATION_COUNT_MAX) {
		*d /= 2;
		b /= 2;
	}
	*n = *d + b;
}

int
calibration_score(int rules_score, const struct calibration_counts *provider,
    const struct calibration_counts *all)
{
	const long long k = CALIBRATION_PRIOR_WEIGHT;
	long long dp, np, dc, nc, s, num, den, q;

	s = rules_score < 0 ? 0 : rules_score > 100 ? 100 : rules_score;
	calibration_norm(provider, &dp, &np);
	calibration_norm(all, &dc, &nc);
	num = 100 * dp * (nc + k) + k * (100 * dc + k * s);
	den = (nc + k) * (np + k);
	q = (2 * num + den) / (2 * den);
	return q < 0 ? 0 : q > 100 ? 100 : (int)q;
}

int
calibration_apply(int rules_score, const struct calibration_counts *provider,
    const struct calibration_counts *all, long long min_outcomes,
    enum calibration_basis *basis)
{
	long long n = provider == NULL ? 0 : (provider->delivered > 0 ?
	    provider->delivered : 0) + (provider->bounced > 0 ?
	    provider->bounced : 0);

	if (min_outcomes < 1)
		min_outcomes = 1;
	if (n < min_outcomes) {
		*basis = CALIBRATION_RULES;
		return rules_score;
	}
	*basis = CALIBRATION_CALIBRATED;
	return calibration_score(rules_score, provider, all);
}

enum verdict_catch_all
calibration_catch_all(enum verdict_catch_all rules, int score, int safe_min,
    int avoid_below)
{
	if (rules == VERDICT_CA_NONE || rules == VERDICT_CA_AVOID)
		return rules;
	if (score < avoid_below)
		return VERDICT_CA_AVOID;
	if (score >= safe_min)
		return VERDICT_CA_SEND_SAFE;
	return VERDICT_CA_SEND_WITH_CAUTION;
}

int
calibration_basis_parse(const char *s, enum calibration_basis *out)
{
	int i;

	*out = CALIBRATION_RULES;
	for (i = 0; s != NULL && i < CALIBRATION_BASIS__MAX; i++)
		if (strcmp(s, calibration_basis_names[i]) == 0) {
			*out = (enum calibration_basis)i;
			return 0;
		}
	return -1;
}

static int
calibration_row_cmp(const void *x, const void *y)
{
	const struct calibration_row *a = x, *b = y;
	int c = strcmp(a->provider, b->provider);

	return c ? c : (a->cls > b->cls) - (a->cls < b->cls);
}

int
calibration_table_add(struct calibration_table *t, const char *provider,
    enum verdict_class cls, long long delivered, long long bounced)
{
	struct calibration_row *r;

	if ((r = realloc(t->rows, (t->n + 1) * sizeof(*r))) == NULL)
		return -1;
	t->rows = r;
	r = &t->rows[t->n++];
	memset(r, 0, sizeof(*r));
	strparse_copy(r->provider, sizeof(r->provider), provider);
	r->cls = cls;
	r->n.delivered = delivered > 0 ? delivered : 0;
	r->n.bounced = bounced > 0 ? bounced : 0;
	return 0;
}

void
calibration_table_done(struct calibration_table *t)
{
	size_t i, j;

	if (t->n > 1)
		qsort(t->rows, t->n, sizeof(*t->rows), calibration_row_cmp);
	for (i = 0, j = 0; i < t->n; i++) {
		if (j > 0 && calibration_row_cmp(&t->rows[j - 1],
		    &t->rows[i]) == 0) {
			t->rows[j - 1].n.delivered += t->rows[i].n.delivered;
			t->rows[j - 1].n.bounced += t->rows[i].n.bounced;
		} else
			t->rows[j++] = t->rows[i];
	}
	t->n = j;
	memset(t->all, 0, sizeof(t->all));
	for (i = 0; i < t->n; i++) {
		t->all[t->rows[i].cls].delivered += t->rows[i].n.delivered;
		t->all[t->rows[i].cls].bounced += t->rows[i].n.bounced;
	}
}

void
calibration_table_find(const struct calibration_table *t,
    const char *provider, enum verdict_class cls,
    struct calibration_counts *prov, struct calibration_counts *all)
{
	struct calibration_row key, *r;

	memset(prov, 0, sizeof(*prov));
	memset(all, 0, sizeof(*all));
	if ((unsigned)cls >= VERDICT_CLASS__MAX)
		return;
	*all = t->all[cls];
	if (t->n == 0 || provider == NULL)
		return;
	memset(&key, 0, sizeof(key));
	strparse_copy(key.provider, sizeof(key.provider), provider);
	key.cls = cls;
	if ((r = bsearch(&key, t->rows, t->n, sizeof(*t->rows),
	    calibration_row_cmp)) != NULL)
		*prov = r->n;
}

void
calibration_table_free(struct calibration_table *t)
{
	free(t->rows);
	memset(t, 0, sizeof(*t));
}
