/* ingest_read.h: readers of uploaded files (CSV, TSV, TXT, XLSX) into rows of cells.
 *
 * A reader is pushed the file's bytes in pieces of any size and hands over
 * each row as soon as it has ended (the same rows whatever the pieces).
 *
 * CSV, TSV and TXT (ingest_csv.c) stream: memory is bounded by one row
 * (INGEST_COLUMNS_MAX cells of INGEST_CELL_MAX bytes) and 64 KiB.
 * - Encodings: UTF-8 with or without a BOM; UTF-16 LE or BE with a BOM,
 *   converted to UTF-8; a cell that is not valid UTF-8 is read as
 *   Windows-1252 (WHATWG's table) and converted.
 * - Line ends: CRLF, LF or a lone CR, mixed in one file.
 * - CSV: the delimiter is sniffed from the first 64 KiB or 50 lines,
 *   outside quotes, among ',' ';' tab '|': the one that splits the most
 *   lines into the same number (> 1) of fields (ties in that order); none
 *   such: one column. RFC 4180 quoting: a field that starts with '"' ends at
 *   the next lone '"' and may hold delimiters, line ends and doubled quotes
 *   (""); text after its closing quote is added to it; a '"' inside an
 *   unquoted field is text. Rows may have any number of fields.
 *   TSV: the same with tab, never sniffed. TXT: one cell per line, no
 *   delimiter and no quoting.
 * - A blank line is a row with n = 0 (not skipped): the k-th row of a file
 *   without quoted line ends is its k-th line.
 * - INGEST_READ_INVALID: a quoted field still open at the end of the file
 *   (the message names its line); a NUL byte (after UTF-16 decoding: binary
 *   files and UTF-16 without a BOM have them); a file that starts like a
 *   PDF, a zip (XLSX) or an OLE document (.xls); a UTF-16 file with an odd
 *   number of bytes. Unpaired UTF-16 surrogates become U+FFFD.
 *
 * XLSX (ingest_xlsx.c, ingest_xlsx_sheet.c): feed collects the file (at
 * most limits.file_max bytes), end reads it with libzip and expat: the
 * first worksheet in the workbook's order (found through the package's
 * relationships), shared strings (rich text runs joined, phonetic runs
 * left out), inline strings, numbers as their text, booleans as TRUE or
 * FALSE, formula cells' cached values, error values as their text (#N/A).
 * The sheet is parsed while it is inflated and rows are handed over as
 * they end. Row numbers place rows: a missing row is handed over as an
 * empty row (n = 0), so the k-th row handed over is the sheet's row k; a
 * row ends at its last cell with a value (empty and style-only cells
 * before it are empty cells, after it nothing). Cells beyond column
 * INGEST_COLUMNS_MAX are dropped. INGEST_READ_INVALID: not a zip (an
 * encrypted workbook is an OLE file), an encrypted entry, a missing
 * workbook or worksheet, malformed XML, a DOCTYPE (no DTD, no entities),
 * XML nesting deeper than limits.xml_depth_max or a token longer than
 * limits.xml_token_max, more than limits.unzip_max bytes inflated in all
 * (or limits.part_max for the workbook and relationship parts), an entry
 * whose inflated bytes pass limits.ratio_max times its compressed size once
 * over 1 MiB (a zip bomb; checked while inflating), a shared-string table
 * over limits.strings_max bytes, a row number over 1048576, a shared
 * string index out of range. */
#ifndef SVC_INGEST_READ_H
#define SVC_INGEST_READ_H
#include <stddef.h>

enum ingest_format { INGEST_CSV, INGEST_TSV, INGEST_TXT, INGEST_XLSX, INGEST_FORMAT__MAX };
extern const char *const ingest_format_names[INGEST_FORMAT__MAX];   /* "csv", "tsv", "txt", "xlsx" */
/* The format of a file name by its extension (case-insensitive), or -1 when it is none of the four. */
int	 ingest_format_of_name(const char *filename);
/* The format a Content-Type names (text/csv or application/csv,
 * text/tab-separated-values, the XLSX type; parameters and case ignored),
 * or -1 (text/plain and the rest say nothing a reader could use). */
int	 ingest_format_of_media_type(const char *content_type);

#define INGEST_COLUMNS_MAX 200      /* cells handed over per row; later ones are dropped */
#define INGEST_CELL_MAX 32767       /* bytes of one cell's UTF-8 text kept; longer cells are cut at a character boundary */
struct ingest_cell { const char *s; size_t len; };   /* UTF-8, NUL-terminated at s[len] */
/* One row (n may be 0 for an empty line); return 0 to go on, -1 to stop the reader (INGEST_READ_STOPPED).
 * The cells live until the callback returns. */
typedef int (*ingest_row_fn)(void *arg, const struct ingest_cell *cells, size_t n);

enum ingest_read_err {
	INGEST_READ_OK,
	INGEST_READ_INVALID,	/* not a file of its format: ingest_reader_error() says why */
	INGEST_READ_STOPPED,	/* the row callback returned -1 */
	INGEST_READ_NOMEM,
	INGEST_READ_ERR__MAX
};
extern const char *const ingest_read_err_names[INGEST_READ_ERR__MAX];

/* The caps of the XLSX reader (CSV needs none); ingest_reader_new sets
 * these defaults, which a caller (tests, fuzzing) may lower before the
 * first feed through ingest_reader_limits(). */
struct ingest_limits {
	size_t	 file_max;	/* bytes fed: 50 MiB */
	size_t	 unzip_max;	/* bytes inflated, all entries together: 512 MiB */
	size_t	 part_max;	/* bytes inflated of a workbook or relationships part: 4 MiB */
	unsigned ratio_max;	/* inflated:compressed of an entry past 1 MiB inflated: 100 */
	size_t	 strings_max;	/* bytes of the shared-string table in memory, checked as each string ends: 128 MiB */
	unsigned xml_depth_max;	/* open XML elements: 64 */
	size_t	 xml_token_max;	/* bytes of XML without any event (a tag, an attribute): 16 MiB */
};

struct ingest_reader;
/* NULL when memory runs out. */
struct ingest_reader *ingest_reader_new(enum ingest_format, ingest_row_fn, void *arg);
/* The reader's caps, to lower before the first feed. */
struct ingest_limits *ingest_reader_limits(struct ingest_reader *);
/* The file's bytes in order, in pieces of any size. Once it has returned
 * an error, every later call returns the same error. */
enum ingest_read_err ingest_reader_feed(struct ingest_reader *, const void *data, size_t len);
/* After the last piece: the last rows, and the end-of-file checks. */
enum ingest_read_err ingest_reader_end(struct ingest_reader *);
/* A readable reason for INGEST_READ_INVALID (it goes into the job's error message), "" otherwise. */
const char *ingest_reader_error(const struct ingest_reader *);
/* Rows handed over so far (for progress). */
unsigned long long ingest_reader_rows(const struct ingest_reader *);
void	 ingest_reader_free(struct ingest_reader *);
#endif
