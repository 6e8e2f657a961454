/* bench_multipart.c: throughput of the streaming multipart/form-data parser
 * (util/multipart.c) on a 50 MB file part, fed in 64 KiB pieces (about what
 * a FastCGI responder reads at a time) to a part_data that copies into a
 * 1 MiB chunk the way the upload handler fills its rows. Three files: CSV
 * text with CRLF lines (a CR every ~50 bytes), random binary (a CR every
 * 256 bytes), and a worst case where every line starts with the delimiter
 * less its last byte. Prints MB/s per file (the best of the rounds); exits
 * 1 if a part's bytes do not all come out. Usage: bench_multipart [rounds]. */
#include "util/multipart.h"
#include "util/timeutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_FILE	(50 * 1000 * 1000)
#define BENCH_PIECE	(64 * 1024)
#define BENCH_CHUNK	(1024 * 1024)
#define BENCH_B		"------------------------3a17825e7534c03d"

struct bench_sink {
	char	*chunk;
	size_t	 used, total;
};

static int
bench_multipart_data(void *arg, const char *data, size_t len)
{
	struct bench_sink *s = arg;
	size_t n;

	s->total += len;
	while (len > 0) {
		n = BENCH_CHUNK - s->used < len ? BENCH_CHUNK - s->used : len;
		memcpy(s->chunk + s->used, data, n);
		s->used += n;
		data += n;
		len -= n;
		if (s->used == BENCH_CHUNK)
			s->used = 0;	/* a row written */
	}
	return 0;
}

static void
bench_multipart_fill(char *file, int kind)
{
	static const char near[] = "\r\n--" BENCH_B;
	size_t i, n;
	unsigned int x = 1;
	int w;

	for (i = 0; i < BENCH_FILE; i += (size_t)w) {
		char line[128];

		if (kind == 0)
			w = snprintf(line, sizeof(line), "user%zu@example%zu.com,"
			    "Firstname Lastname,%zu\r\n", i, i % 977, i % 1000);
		else if (kind == 1) {
			x = x * 1103515245u + 12345u;
			line[0] = (char)(x >> 16);
			w = 1;
		} else {
			memcpy(line, near, sizeof(near) - 2);
			memcpy(line + sizeof(near) - 2, "x,a@b.c", 7);
			w = (int)sizeof(near) - 2 + 7;
		}
		n = BENCH_FILE - i < (size_t)w ? BENCH_FILE - i : (size_t)w;
		memcpy(file + i, line, n);
	}
}

int
main(int argc, char **argv)
{
	static const char *kinds[] = { "csv-crlf", "binary", "near-miss" };
	static const char head[] = "--" BENCH_B "\r\nContent-Disposition: "
	    "form-data; name=\"file\"; filename=\"list.csv\"\r\n"
	    "Content-Type: text/csv\r\n\r\n";
	static const char tail[] = "\r\n--" BENCH_B "--\r\n";
	struct multipart_cb cb = { NULL, bench_multipart_data, NULL };
	struct bench_sink sink;
	struct multipart *m;
	size_t total = sizeof(head) - 1 + BENCH_FILE + sizeof(tail) - 1, off, n;
	int rounds = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 5, k, r;
	int64_t t0, best;
	char *body;

	if (rounds < 1 || (body = malloc(total)) == NULL ||
	    (sink.chunk = malloc(BENCH_CHUNK)) == NULL)
		return 1;
	memcpy(body, head, sizeof(head) - 1);
	memcpy(body + total - (sizeof(tail) - 1), tail, sizeof(tail) - 1);
	for (k = 0; k < 3; k++) {
		bench_multipart_fill(body + sizeof(head) - 1, k);
		best = -1;
		for (r = 0; r < rounds; r++) {
			sink.used = sink.total = 0;
			if ((m = multipart_new(BENCH_B, &cb, &sink)) == NULL)
				return 1;
			t0 = timeutil_mono_ms();
			for (off = 0; off < total; off += n) {
				n = total - off < BENCH_PIECE ? total - off :
				    BENCH_PIECE;
				if (multipart_feed(m, body + off, n) != MULTIPART_OK)
					return 1;
			}
			if (multipart_finish(m) != MULTIPART_OK ||
			    sink.total != BENCH_FILE) {
				fprintf(stderr, "bench_multipart: %s: %zu bytes "
				    "out of %d\n", kinds[k], sink.total, BENCH_FILE);
				return 1;
			}
			multipart_free(m);
			t0 = timeutil_mono_ms() - t0;
			if (best < 0 || t0 < best)
				best = t0;
		}
		printf("%-10s %d MB in %lld ms: %.0f MB/s\n", kinds[k],
		    BENCH_FILE / 1000000, (long long)best,
		    best > 0 ? BENCH_FILE / 1e3 / (double)best : 0.0);
	}
	free(sink.chunk);
	free(body);
	return 0;
}
