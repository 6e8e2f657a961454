/* bench_ingest.c: the speed of the text reader (ingest_csv.c) on a CSV
 * file made in memory: an address and a few columns a row, CRLF, fed in
 * pieces of 1 MiB (the size of the chunks an upload is stored in), to a
 * callback that only counts. Prints the best of a few runs in MB/s (10^6
 * bytes) for a plain file and for one whose every row has a quoted field
 * with a comma and a doubled quote, by the wall clock and by the CPU time
 * of the process (steadier on a shared machine). Usage: bench_ingest [MB [runs]]
 * (default 100 MB, 3 runs). Run on purpose (make bench-ingest), never by
 * make check; figures in tests/bench/README. */
#include "jobs/ingest_read.h"
#include "util/buf.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define BENCH_INGEST_PIECE (1 << 20)

static int
bench_ingest_row(void *arg, const struct ingest_cell *cells, size_t n)
{
	(*(unsigned long long *)arg) += n;
	return 0;
}

static double
bench_ingest_now(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One run over the file: its seconds (wall clock, and CPU into cpu), or
 * -1. */
static double
bench_ingest_run(const struct buf *file, unsigned long long *rows,
    unsigned long long *cells, double *cpu)
{
	struct ingest_reader *r;
	double t0, c0;
	size_t at, n;
	enum ingest_read_err rc = INGEST_READ_OK;

	*cells = 0;
	if ((r = ingest_reader_new(INGEST_CSV, bench_ingest_row, cells)) ==
	    NULL)
		return -1;
	t0 = bench_ingest_now(CLOCK_MONOTONIC);
	c0 = bench_ingest_now(CLOCK_PROCESS_CPUTIME_ID);
	for (at = 0; at < file->len && rc == INGEST_READ_OK; at += n) {
		n = file->len - at < BENCH_INGEST_PIECE ? file->len - at :
		    BENCH_INGEST_PIECE;
		rc = ingest_reader_feed(r, file->data + at, n);
	}
	if (rc == INGEST_READ_OK)
		rc = ingest_reader_end(r);
	t0 = bench_ingest_now(CLOCK_MONOTONIC) - t0;
	*cpu = bench_ingest_now(CLOCK_PROCESS_CPUTIME_ID) - c0;
	*rows = ingest_reader_rows(r);
	ingest_reader_free(r);
	return rc == INGEST_READ_OK ? t0 : -1;
}

int
main(int argc, char **argv)
{
	unsigned long mb = argc > 1 ? strtoul(argv[1], NULL, 10) : 100;
	unsigned long runs = argc > 2 ? strtoul(argv[2], NULL, 10) : 3;
	unsigned long long rows, cells;
	double best, best_cpu, t, cpu;
	struct buf file;
	unsigned i, quoted, k;

	if (mb == 0 || runs == 0) {
		fprintf(stderr, "usage: bench_ingest [MB [runs]]\n");
		return 2;
	}
	for (quoted = 0; quoted < 2; quoted++) {
		buf_init(&file, BUF_NOMAX);
		if (buf_puts(&file, "email,first_name,last_name,signup,"
		    "company\r\n") == -1)
			return 1;
		for (i = 0; file.len < mb * 1000000; i++)
			if (buf_printf(&file, quoted ? "user%u@example%u.com,"
			    "First%u,Last%u,2024-%02u-%02u,\"Acme, \"\"No. "
			    "%u\"\" Ltd\"\r\n" : "user%u@example%u.com,First%u,"
			    "Last%u,2024-%02u-%02u,Acme %u Ltd\r\n", i, i % 997,
			    i % 5003, i % 7919, 1 + i % 12, 1 + i % 28,
			    i % 100) == -1)
				return 1;
		for (best = best_cpu = -1, k = 0; k < runs; k++) {
			if ((t = bench_ingest_run(&file, &rows, &cells,
			    &cpu)) < 0) {
				fprintf(stderr, "bench_ingest: the reader "
				    "failed\n");
				return 1;
			}
			if (best < 0 || t < best)
				best = t;
			if (best_cpu < 0 || cpu < best_cpu)
				best_cpu = cpu;
		}
		printf("%s: %zu bytes, %llu rows, %llu cells, best of %lu: "
		    "%.3f s, %.0f MB/s; CPU %.3f s, %.0f MB/s\n",
		    quoted ? "quoted" : "plain", file.len, rows, cells, runs,
		    best, (double)file.len / 1e6 / best, best_cpu,
		    (double)file.len / 1e6 / best_cpu);
		buf_free(&file);
	}
	return 0;
}
