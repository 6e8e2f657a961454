/* fuzz_csv.c: libFuzzer target for the readers of text uploads (CSV with
 * its sniffed delimiter, TSV, TXT; ingest_csv.c): the input is a file,
 * read as each format whole, in two pieces split at a place taken from the
 * input, in pieces of 1 to 16 bytes, and (short inputs) byte by byte. Every
 * way gives the same rows, outcome and message; every cell is valid UTF-8,
 * NUL-terminated, at most INGEST_CELL_MAX bytes, at most
 * INGEST_COLUMNS_MAX a row; an invalid file has a message and no other
 * outcome but OK occurs. A model checks TXT where it is simple (UTF-8
 * without BOM, CR, NUL or a binary signature): one row per line, the line
 * cut at a character boundary. */
#include "fuzz_ingest.h"
#include "util/strparse.h"
#include <stdint.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Fed in pieces: first (0: none), then step bytes (0: the rest) or, with
 * a seed, 1 to 16 bytes at random. */
static void
read_file(enum ingest_format f, const uint8_t *data, size_t size,
    size_t first, size_t step, unsigned seed, struct fuzz_ingest *r)
{
	struct ingest_reader *rd = fuzz_ingest_new(f, r);
	size_t at = 0, n;

	while (at < size && r->rc == INGEST_READ_OK) {
		if (first)
			n = first;
		else if (seed) {
			seed = seed * 1103515245u + 12345u;
			n = 1 + (seed >> 16) % 16;
		} else
			n = step ? step : size - at;
		if (n > size - at)
			n = size - at;
		first = 0;
		r->rc = ingest_reader_feed(rd, data + at, n);
		at += n;
	}
	if (r->rc == INGEST_READ_OK)
		r->rc = ingest_reader_end(rd);
	fuzz_ingest_done(r, rd);
}

/* TXT of plain UTF-8 lines: each line one cell (or an empty row). */
static void
model_txt(const uint8_t *data, size_t size, const struct fuzz_ingest *got)
{
	static const char *const magic[] = {
		"%PDF-", "PK\3\4", "PK\5\6", "\xEF\xBB\xBF", "\xFF\xFE",
		"\xFE\xFF"
	};
	const char *s = (const char *)data, *e = s + size, *nl;
	struct buf want;
	size_t i, len;

	if (memchr(s, '\r', size) || memchr(s, '\0', size) ||
	    ingest_decode_utf8_valid(s, size) != size)
		return;
	for (i = 0; i < sizeof(magic) / sizeof(magic[0]); i++)
		if (size >= strlen(magic[i]) &&
		    memcmp(s, magic[i], strlen(magic[i])) == 0)
			return;
	buf_init(&want, BUF_NOMAX);
	while (s < e) {
		nl = memchr(s, '\n', (size_t)(e - s));
		len = (size_t)((nl ? nl : e) - s);
		if (len > 0) {
			len = strparse_utf8_cut(s, len, INGEST_CELL_MAX);
			CHECK(buf_printf(&want, "%zu:", len) == 0);
			CHECK(buf_append(&want, s, len) == 0);
		}
		CHECK(buf_putc(&want, '\n') == 0);
		s = nl ? nl + 1 : e;
	}
	CHECK(got->rc == INGEST_READ_OK);
	CHECK(got->rows.len == want.len &&
	    memcmp(buf_str(&got->rows), buf_str(&want), want.len) == 0);
	buf_free(&want);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum ingest_format formats[] = {
		INGEST_CSV, INGEST_TSV, INGEST_TXT
	};
	struct fuzz_ingest whole, other;
	size_t i, at;

	at = size ? ((size_t)data[size - 1] * 131 + size) % size : 0;
	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		read_file(formats[i], data, size, 0, 0, 0, &whole);
		if (formats[i] == INGEST_TXT)
			model_txt(data, size, &whole);
		read_file(formats[i], data, size, at, 0, 0, &other);
		fuzz_ingest_same(&whole, &other);
		fuzz_ingest_free(&other);
		read_file(formats[i], data, size, 0, 0, (unsigned)size + 1,
		    &other);
		fuzz_ingest_same(&whole, &other);
		fuzz_ingest_free(&other);
		if (size <= 4096) {
			read_file(formats[i], data, size, 0, 1, 0, &other);
			fuzz_ingest_same(&whole, &other);
			fuzz_ingest_free(&other);
		}
		fuzz_ingest_free(&whole);
	}
	return 0;
}
