/* ingest_xlsx_sheet.h: the shared strings and the rows of an XLSX
 * worksheet, read by ingest_xlsx.c once it has found their parts. */
#ifndef SVC_INGEST_XLSX_SHEET_H
#define SVC_INGEST_XLSX_SHEET_H
#include "jobs/ingest_xlsx_xml.h"

#define INGEST_XLSX_SHEET_ROWS_MAX 1048576	/* Excel's last row */

/* The shared-string table: string i is text[off[i]] to text[off[i + 1]],
 * each cut to INGEST_CELL_MAX bytes. */
struct ingest_xlsx_strings {
	struct buf	 text;
	size_t		*off;
	size_t		 n, cap;	/* strings; off has n + 1 */
};

/* The table of part (xl/sharedStrings.xml) into t (zeroed first). */
enum ingest_read_err ingest_xlsx_sheet_strings(struct ingest_xlsx_xml *,
	    const char *part, struct ingest_xlsx_strings *t);
void	 ingest_xlsx_sheet_strings_free(struct ingest_xlsx_strings *);
/* The rows of the worksheet part to x's row callback as they end. */
enum ingest_read_err ingest_xlsx_sheet_rows(struct ingest_xlsx_xml *,
	    const char *part, const struct ingest_xlsx_strings *);
#endif
