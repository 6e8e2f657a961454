/* preview_coverage.c: how often the preview's 95% intervals hold the
 * truth. Many simulated lists of known truth: the SMTP-bound rows of each
 * spread over mail providers (one big, a few medium, many small; each
 * provider with its own shares of valid, invalid, catch-all and unknown
 * rows, some of them bad), plus rows the free checks resolve. Each list is
 * sampled as svc-worker's previewer does (jobs/preview.h: the sample size,
 * the strata, the k - 1 largest kept and the rest merged, the allocation,
 * a random draw without replacement in each, the strata weighed back, the
 * counts coarsened), and the intervals of the bounce rate, the catch-all
 * share and the unknown share are checked against the list's true shares.
 * Prints the share of intervals that held the truth, per list size.
 *
 * usage: preview_coverage [lists per size [seed]] */
#include "jobs/preview.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROVIDERS 40

static unsigned long long rng_state;

static double
rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (double)((rng_state * 2685821657736338717ULL) >> 11) /
	    9007199254740992.0;
}

static int
by_rows(const void *x, const void *y)
{
	const long long *a = x, *b = y;

	return (a[0] < b[0]) - (a[0] > b[0]);
}

/* One list of n SMTP-bound rows: 1 when each interval held the truth. */
static void
one_list(long long n, int held[3], double width[3])
{
	static const unsigned masks[3] = { 1u << PREVIEW_INVALID,
	    1u << PREVIEW_CATCH_ALL, 1u << PREVIEW_UNKNOWN |
	    1u << PREVIEW_CATCH_ALL };
	/* per provider: rows, then its rows' classes in a pool */
	long long rows[PROVIDERS][2], alloc[PROVIDERS], srows[PROVIDERS];
	double share[PROVIDERS], prob[PROVIDERS][PREVIEW_CLASS__MAX], u, acc;
	struct preview_stratum st[PROVIDERS];
	struct preview_tally t;
	unsigned char *cls, **pool;
	long long truth[PREVIEW_CLASS__MAX], k, i, j, off;
	int h, c, m, map[PROVIDERS];
	double lo, hi, tr;

	memset(&t, 0, sizeof(t));
	memset(st, 0, sizeof(st));
	memset(truth, 0, sizeof(truth));
	/* provider sizes: one big (about half), 4 medium, the rest small */
	for (h = 0, acc = 0; h < PROVIDERS; h++) {
		share[h] = h == 0 ? 8 + 8 * rnd() : h < 5 ? 1 + 2 * rnd() :
		    0.05 + 0.3 * rnd();
		acc += share[h];
	}
	/* classes: most providers good, one in five bad */
	for (h = 0; h < PROVIDERS; h++) {
		double inv = rnd() < 0.2 ? 0.2 + 0.4 * rnd() : 0.01 + 0.06 *
		    rnd(), ca = rnd() < 0.3 ? 0.3 * rnd() : 0, un = 0.02 +
		    0.1 * rnd();

		prob[h][PREVIEW_INVALID] = inv;
		prob[h][PREVIEW_CATCH_ALL] = ca;
		prob[h][PREVIEW_UNKNOWN] = un;
		prob[h][PREVIEW_VALID] = 1 - inv - ca - un > 0 ? 1 - inv - ca -
		    un : 0;
	}
	cls = malloc((size_t)n);
	pool = calloc(PROVIDERS, sizeof(*pool));
	for (h = 0, off = 0; h < PROVIDERS; h++) {
		rows[h][0] = h == PROVIDERS - 1 ? n - off :
		    (long long)(n * share[h] / acc);
		if (rows[h][0] < 1)
			rows[h][0] = 1;
		if (off + rows[h][0] > n)
			rows[h][0] = n - off;
		rows[h][1] = h;
		pool[h] = cls + off;
		for (i = 0; i < rows[h][0]; i++) {
			u = rnd();
			for (c = 0, acc = 0; c < PREVIEW_CLASS__MAX - 1; c++)
				if (u < (acc += prob[h][c]))
					break;
			pool[h][i] = (unsigned char)c;
			truth[c]++;
		}
		off += rows[h][0];
	}
	/* the free checks resolved 10% more rows, invalid */
	t.needs_smtp = n;
	t.resolved[PREVIEW_INVALID] = n / 10;
	t.total = n + n / 10;
	truth[PREVIEW_INVALID] += n / 10;
	/* the previewer's strata: the k - 1 largest and the rest merged */
	k = preview_sample_size(n, 100);
	qsort(rows, PROVIDERS, sizeof(rows[0]), by_rows);
	m = PROVIDERS > k ? (int)k : PROVIDERS;
	memset(srows, 0, sizeof(srows));
	for (h = 0; h < PROVIDERS; h++) {
		map[h] = h < m ? h : m - 1;
		srows[map[h]] += rows[h][0];
	}
	preview_allocate(srows, (size_t)m, k, alloc);
	for (h = 0; h < m; h++) {
		st[h].rows = srows[h];
		/* draw alloc[h] of the stratum's rows without replacement:
		 * the j-th row of the stratum, across its providers */
		long long left = srows[h], need = alloc[h];
		int g;

		for (g = 0; g < PROVIDERS; g++) {
			if (map[g] != h)
				continue;
			for (i = 0; i < rows[g][0]; i++) {
				if (rnd() * (double)left < (double)need) {
					st[h].counts[pool[rows[g][1]][i]]++;
					need--;
				}
				left--;
			}
		}
		st[h].sample = alloc[h];
	}
	t.strata = st;
	t.nstrata = (size_t)m;
	preview_weigh(&t);
	preview_coarsen(&t);
	for (j = 0; j < 3; j++) {
		long long part = 0;

		for (c = 0; c < PREVIEW_CLASS__MAX; c++)
			if (masks[j] & 1u << c)
				part += truth[c];
		tr = (double)part / (double)t.total;
		preview_interval(&t, masks[j], &lo, &hi);
		held[j] = lo <= tr && tr <= hi;
		width[j] = hi - lo;
	}
	free(cls);
	free(pool);
}

int
main(int argc, char **argv)
{
	static const long long sizes[] = { 5000, 10000, 50000, 200000 };
	static const char *const names[3] = { "bounce rate", "catch-all",
	    "unknown" };
	long lists = argc > 1 ? strtol(argv[1], NULL, 10) : 2000, l;
	int held[3], sum[3], all[3] = { 0, 0, 0 }, j;
	double w[3], wsum[3];
	size_t s;

	rng_state = argc > 2 ? strtoull(argv[2], NULL, 10) : 20261128;
	if (lists <= 0)
		lists = 2000;
	printf("%ld simulated lists per size, 40 providers each\n", lists);
	printf("%-10s %-6s %-22s %-22s %-22s\n", "rows", "sample",
	    names[0], names[1], names[2]);
	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		memset(sum, 0, sizeof(sum));
		memset(wsum, 0, sizeof(wsum));
		for (l = 0; l < lists; l++) {
			one_list(sizes[s], held, w);
			for (j = 0; j < 3; j++) {
				sum[j] += held[j];
				wsum[j] += w[j];
			}
		}
		printf("%-10lld %-6lld", sizes[s],
		    preview_sample_size(sizes[s], 100));
		for (j = 0; j < 3; j++) {
			all[j] += sum[j];
			printf(" %5.1f%% (width %.3f)  ", 100.0 * sum[j] / lists,
			    wsum[j] / lists);
		}
		putchar('\n');
	}
	printf("all sizes:");
	for (j = 0; j < 3; j++)
		printf("  %s %.1f%%", names[j], 100.0 * all[j] / (lists *
		    (double)(sizeof(sizes) / sizeof(sizes[0]))));
	putchar('\n');
	return 0;
}
