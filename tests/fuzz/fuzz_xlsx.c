/* fuzz_xlsx.c: libFuzzer target for the XLSX reader (ingest_xlsx*.c). An
 * input that starts with '<' is XML: the shared strings, a NUL byte, then
 * the worksheet (or only the worksheet, without a NUL), put by the target
 * into a package with a fixed workbook (libzip, written in memory), so
 * that mutations reach the XML handlers; any other input is the file
 * itself. The file is read whole and in two pieces split at a place taken
 * from the input, with the caps lowered (8 MiB inflated, 1 MiB of shared
 * strings) so that each run stays short; both give the same rows, outcome
 * and message, every cell is valid UTF-8, NUL-terminated, at most
 * INGEST_CELL_MAX bytes, at most INGEST_COLUMNS_MAX a row, an invalid file
 * has a message, and no row is handed over past row 1048576. */
#include "fuzz_ingest.h"
#include <stdint.h>
#include <zip.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define REL "http://schemas.openxmlformats.org/officeDocument/2006/relationships"

static const char workbook[] = "<workbook xmlns:r=\"" REL "\"><sheets>"
    "<sheet name=\"S\" sheetId=\"1\" r:id=\"rId1\"/></sheets></workbook>";
static const char rels[] = "<Relationships><Relationship Id=\"rId1\" "
    "Type=\"" REL "/worksheet\" Target=\"worksheets/sheet1.xml\"/>"
    "<Relationship Id=\"rId2\" Type=\"" REL "/sharedStrings\" "
    "Target=\"sharedStrings.xml\"/></Relationships>";

static void
read_file(const char *data, size_t size, size_t first, struct fuzz_ingest *r)
{
	struct ingest_reader *rd = fuzz_ingest_new(INGEST_XLSX, r);
	struct ingest_limits *l = ingest_reader_limits(rd);

	l->unzip_max = 8 << 20;
	l->strings_max = 1 << 20;
	r->rc = ingest_reader_feed(rd, data, first);
	if (r->rc == INGEST_READ_OK)
		r->rc = ingest_reader_feed(rd, data + first, size - first);
	if (r->rc == INGEST_READ_OK)
		r->rc = ingest_reader_end(rd);
	fuzz_ingest_done(r, rd);
	CHECK(r->n <= 1048576);
}

/* A part of the package from a copy of data (libzip reads it at close). */
static void
add(zip_t *za, const char *name, const void *data, size_t len)
{
	zip_source_t *s;
	void *copy = NULL;

	if (len > 0) {
		CHECK((copy = malloc(len)) != NULL);
		memcpy(copy, data, len);
	}
	CHECK((s = zip_source_buffer(za, copy, len, 1)) != NULL);
	CHECK(zip_file_add(za, name, s, ZIP_FL_OVERWRITE) >= 0);
}

/* The package around the XML of the input, into out. */
static void
wrap(const uint8_t *data, size_t size, struct buf *out)
{
	const uint8_t *nul = memchr(data, '\0', size);
	zip_source_t *src;
	zip_error_t ze;
	zip_stat_t st;
	zip_t *za;
	char piece[4096];
	zip_int64_t n;

	zip_error_init(&ze);
	CHECK((src = zip_source_buffer_create(NULL, 0, 0, &ze)) != NULL);
	zip_source_keep(src);
	CHECK((za = zip_open_from_source(src, ZIP_TRUNCATE, &ze)) != NULL);
	add(za, "xl/workbook.xml", workbook, strlen(workbook));
	add(za, "xl/_rels/workbook.xml.rels", rels, strlen(rels));
	if (nul) {
		add(za, "xl/sharedStrings.xml", data, (size_t)(nul - data));
		add(za, "xl/worksheets/sheet1.xml", nul + 1,
		    size - (size_t)(nul - data) - 1);
	} else
		add(za, "xl/worksheets/sheet1.xml", data, size);
	CHECK(zip_close(za) == 0);
	CHECK(zip_source_stat(src, &st) == 0);
	CHECK(zip_source_open(src) == 0);
	while ((n = zip_source_read(src, piece, sizeof(piece))) > 0)
		CHECK(buf_append(out, piece, (size_t)n) == 0);
	CHECK(n == 0);
	zip_source_close(src);
	zip_source_free(src);
	zip_error_fini(&ze);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_ingest whole, split;
	struct buf file;
	size_t at;

	buf_init(&file, BUF_NOMAX);
	if (size > 0 && data[0] == '<')
		wrap(data, size, &file);
	else
		CHECK(buf_append(&file, data, size) == 0);
	at = file.len ? ((size_t)(size ? data[size - 1] : 0) * 131 +
	    file.len) % file.len : 0;
	read_file(buf_str(&file), file.len, file.len, &whole);
	read_file(buf_str(&file), file.len, at, &split);
	fuzz_ingest_same(&whole, &split);
	fuzz_ingest_free(&whole);
	fuzz_ingest_free(&split);
	buf_free(&file);
	return 0;
}
