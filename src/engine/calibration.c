/* calibration.c: the calibrated score and the table of counts
 * (calibration.h has the maths). Integer arithmetic: 100 r = a / b with
 *   a = 100 D_p (N_c + K) + K (100 D_c + K s)
 *   b = (N_c + K) (N_p + K)
 * and 100 q = num / den with
 *   num = 100 D_h b + K a
 *   den = b (N_h + K)
 *   score = floor((2 num + den) / (2 den))     (100 q, half up)
 * in 128-bit integers. Counts above CALIBRATION_COUNT_MAX are halved
 * together (delivered with its total) until they fit, so no product
 * overflows (num < 100 * 10^8 * 10^16 * 2 < 2^126). */
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

__extension__ typedef __int128 calibration_wide;

int
calibration_score(int rules_score, const struct calibration_counts *host,
    const struct calibration_counts *provider,
    const struct calibration_counts *all)
{
	const long long k = CALIBRATION_PRIOR_WEIGHT;
	long long dh, nh, dp, np, dc, nc, s, a, b;
	calibration_wide num, den, q;

	s = rules_score < 0 ? 0 : rules_score > 100 ? 100 : rules_score;
	calibration_norm(host, &dh, &nh);
	calibration_norm(provider, &dp, &np);
	calibration_norm(all, &dc, &nc);
	a = 100 * dp * (nc + k) + k * (100 * dc + k * s);
	b = (nc + k) * (np + k);
	num = (calibration_wide)100 * dh * b + (calibration_wide)k * a;
	den = (calibration_wide)b * (nh + k);
	q = (2 * num + den) / (2 * den);
	return q < 0 ? 0 : q > 100 ? 100 : (int)q;
}

int
calibration_apply(int rules_score, const struct calibration_counts *host,
    const struct calibration_counts *provider,
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
	return calibration_score(rules_score, host, provider, all);
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

/* Adds a row to rows (n of them). */
static int
calibration_rows_add(struct calibration_row **rows, size_t *n,
    const char *provider, enum verdict_class cls, long long delivered,
    long long bounced)
{
	struct calibration_row *r;

	if ((r = realloc(*rows, (*n + 1) * sizeof(*r))) == NULL)
		return -1;
	*rows = r;
	r = &r[(*n)++];
	memset(r, 0, sizeof(*r));
	strparse_copy(r->provider, sizeof(r->provider), provider);
	r->cls = cls;
	r->n.delivered = delivered > 0 ? delivered : 0;
	r->n.bounced = bounced > 0 ? bounced : 0;
	return 0;
}

int
calibration_table_add(struct calibration_table *t, const char *provider,
    enum verdict_class cls, long long delivered, long long bounced)
{
	return calibration_rows_add(&t->rows, &t->n, provider, cls, delivered,
	    bounced);
}

int
calibration_table_add_host(struct calibration_table *t, const char *host,
    enum verdict_class cls, long long delivered, long long bounced)
{
	return calibration_rows_add(&t->hosts, &t->nhosts, host, cls,
	    delivered, bounced);
}

/* Sorts rows and merges the duplicates: the rows left. */
static size_t
calibration_rows_merge(struct calibration_row *rows, size_t n)
{
	size_t i, j;

	if (n > 1)
		qsort(rows, n, sizeof(*rows), calibration_row_cmp);
	for (i = 0, j = 0; i < n; i++) {
		if (j > 0 && calibration_row_cmp(&rows[j - 1], &rows[i]) == 0) {
			rows[j - 1].n.delivered += rows[i].n.delivered;
			rows[j - 1].n.bounced += rows[i].n.bounced;
		} else
			rows[j++] = rows[i];
	}
	return j;
}

void
calibration_table_done(struct calibration_table *t)
{
	size_t i;

	t->n = calibration_rows_merge(t->rows, t->n);
	t->nhosts = calibration_rows_merge(t->hosts, t->nhosts);
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
calibration_table_find_host(const struct calibration_table *t,
    const char *host, enum verdict_class cls, struct calibration_counts *out)
{
	struct calibration_row key, *r;

	memset(out, 0, sizeof(*out));
	if (t->nhosts == 0 || host == NULL || (unsigned)cls >=
	    VERDICT_CLASS__MAX)
		return;
	memset(&key, 0, sizeof(key));
	strparse_copy(key.provider, sizeof(key.provider), host);
	key.cls = cls;
	if ((r = bsearch(&key, t->hosts, t->nhosts, sizeof(*t->hosts),
	    calibration_row_cmp)) != NULL)
		*out = r->n;
}

void
calibration_table_free(struct calibration_table *t)
{
	free(t->rows);
	free(t->hosts);
	memset(t, 0, sizeof(*t));
}
