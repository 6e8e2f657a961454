/* ingest_row.h: the row being built by a reader of uploaded files, its
 * cells cut to their caps, and the reader's outcome (rows handed over,
 * the reason a file is invalid). Shared by ingest_csv.c and the XLSX
 * reader. */
#ifndef SVC_INGEST_ROW_H
#define SVC_INGEST_ROW_H
#include "jobs/ingest_read.h"
#include "util/buf.h"

struct ingest_row {
	ingest_row_fn	 fn;
	void		*arg;
	unsigned long long rows;	/* handed over */
	struct buf	 error;		/* why the file is invalid */
	int		 cp1252;	/* a cell that is not UTF-8 is Windows-1252 */
	/* the row in progress: its cells one after another in arena, each
	 * NUL-terminated; the cell in progress starts at start */
	struct buf	 arena;
	size_t		 start;
	size_t		 ncells;	/* cells ended, dropped ones too */
	size_t		 off[INGEST_COLUMNS_MAX];
	struct ingest_cell cells[INGEST_COLUMNS_MAX];
};

/* cp1252: read a cell that is not valid UTF-8 as Windows-1252 (text
 * files); without it a cell is only cut (its text is UTF-8 already). */
void	 ingest_row_init(struct ingest_row *, ingest_row_fn, void *arg,
	    int cp1252);
/* Bytes of the cell in progress; past the caps they are dropped. */
enum ingest_read_err ingest_row_put(struct ingest_row *, const char *, size_t);
/* The cell in progress ends (the next put starts a new one). */
enum ingest_read_err ingest_row_cell_end(struct ingest_row *);
/* The row ends (after its last cell_end; bytes put since are dropped): it
 * is handed over. */
enum ingest_read_err ingest_row_end(struct ingest_row *);
/* INGEST_READ_INVALID with a reason (the first one is kept). */
enum ingest_read_err ingest_row_invalid(struct ingest_row *, const char *fmt,
	    ...) __attribute__((format(printf, 2, 3)));
void	 ingest_row_free(struct ingest_row *);
#endif
