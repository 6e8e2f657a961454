/* ingest_csv.c: the streaming reader of text files: CSV, TSV and TXT
 * (rules in ingest_read.h). The bytes go through three stages: the head
 * (the first 8 bytes: a byte order mark, or the signature of a binary
 * format), the decoder (UTF-16 to UTF-8; UTF-8 and Windows-1252 pass as
 * they are, cells are checked when they end, ingest_row.c), and for CSV
 * the sniffer, which holds the first 64 KiB or 50 lines until it has
 * chosen the delimiter. Then a state machine splits records and fields,
 * looking up each byte's class in a table of its state and copying runs
 * of plain text at once. */
#include "jobs/ingest_csv.h"
#include "jobs/ingest_decode.h"
#include "jobs/ingest_sniff.h"
#include <stdlib.h>
#include <string.h>

#define INGEST_CSV_HEAD 8
#define INGEST_CSV_PIECE 16384		/* UTF-16 decoded at a time */

enum ingest_csv_stage {
	INGEST_CSV_STAGE_HEAD,
	INGEST_CSV_STAGE_SNIFF,
	INGEST_CSV_STAGE_PARSE
};

enum ingest_csv_state {
	INGEST_CSV_FIELD,	/* before a field (or a line end) */
	INGEST_CSV_UNQUOTED,
	INGEST_CSV_QUOTED,
	INGEST_CSV_QUOTE	/* a '"' in a quoted field: the end, or "" */
};

enum ingest_csv_class {
	INGEST_CSV_TEXT,
	INGEST_CSV_DELIM,
	INGEST_CSV_DQUOTE,
	INGEST_CSV_CR,
	INGEST_CSV_LF,
	INGEST_CSV_NUL
};

struct ingest_csv {
	struct ingest_row *row;
	enum ingest_format format;
	enum ingest_csv_stage stage;
	char		 head[INGEST_CSV_HEAD];
	size_t		 nhead;
	int		 utf16;
	struct ingest_decode_utf16 u16;
	struct buf	 sniff;
	unsigned	 sniff_lines;
	int		 sniff_cr;
	/* byte classes before a field, in an unquoted and a quoted one */
	unsigned char	 cls[256], ucls[256], qcls[256];
	enum ingest_csv_state state;
	int		 cr;		/* the last byte was a CR line end */
	int		 open;		/* the record has begun */
	unsigned long long line, qline;	/* 1-based; qline: of the open quote */
	char		 out[INGEST_DECODE_UTF16_ROOM(INGEST_CSV_PIECE)];
};

/* The byte classes for a delimiter (-1: none) and quoting. */
static void
ingest_csv_classes(struct ingest_csv *c, int delim, int quoting)
{
	int i;

	memset(c->cls, INGEST_CSV_TEXT, sizeof(c->cls));
	c->cls['\r'] = INGEST_CSV_CR;
	c->cls['\n'] = INGEST_CSV_LF;
	c->cls[0] = INGEST_CSV_NUL;
	if (quoting)
		c->cls['"'] = INGEST_CSV_DQUOTE;
	if (delim >= 0)
		c->cls[delim] = INGEST_CSV_DELIM;
	for (i = 0; i < 256; i++) {
		c->ucls[i] = c->cls[i] == INGEST_CSV_DQUOTE ? INGEST_CSV_TEXT :
		    c->cls[i];
		c->qcls[i] = c->cls[i] == INGEST_CSV_DELIM ? INGEST_CSV_TEXT :
		    c->cls[i];
	}
}

struct ingest_csv *
ingest_csv_new(enum ingest_format format, struct ingest_row *row)
{
	struct ingest_csv *c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->row = row;
	c->format = format;
	c->stage = INGEST_CSV_STAGE_HEAD;
	c->line = 1;
	buf_init(&c->sniff, INGEST_SNIFF_BYTES);
	ingest_csv_classes(c, format == INGEST_TSV ? '\t' : -1,
	    format != INGEST_TXT);
	return c;
}

static enum ingest_read_err
ingest_csv_nul(struct ingest_csv *c)
{
	return ingest_row_invalid(c->row, "line %llu: a NUL byte: not a text "
	    "file (a UTF-16 file needs a byte order mark)", c->line);
}

/* The end of a line outside quotes: the record ends. */
static enum ingest_read_err
ingest_csv_record(struct ingest_csv *c)
{
	enum ingest_read_err rc;

	c->line++;
	c->state = INGEST_CSV_FIELD;
	if (c->open && (rc = ingest_row_cell_end(c->row)) != INGEST_READ_OK)
		return rc;
	c->open = 0;
	return ingest_row_end(c->row);
}

/* UTF-8 text through the state machine. */
static enum ingest_read_err
ingest_csv_parse(struct ingest_csv *c, const char *text, size_t n)
{
	const unsigned char *s = (const unsigned char *)text, *e = s + n, *q;
	enum ingest_read_err rc = INGEST_READ_OK;

	while (s < e && rc == INGEST_READ_OK) {
		switch (c->state) {
		case INGEST_CSV_FIELD:
			switch (c->cls[*s]) {
			case INGEST_CSV_TEXT:
				c->state = INGEST_CSV_UNQUOTED;
				c->open = 1;
				c->cr = 0;
				break;
			case INGEST_CSV_DQUOTE:
				c->state = INGEST_CSV_QUOTED;
				c->qline = c->line;
				c->open = 1;
				c->cr = 0;
				s++;
				break;
			case INGEST_CSV_DELIM:
				c->open = 1;
				c->cr = 0;
				rc = ingest_row_cell_end(c->row);
				s++;
				break;
			case INGEST_CSV_CR:
				c->cr = 1;
				rc = ingest_csv_record(c);
				s++;
				break;
			case INGEST_CSV_LF:
				if (!c->cr)
					rc = ingest_csv_record(c);
				c->cr = 0;
				s++;
				break;
			default:
				return ingest_csv_nul(c);
			}
			break;
		case INGEST_CSV_UNQUOTED:
			for (q = s; q < e && c->ucls[*q] == INGEST_CSV_TEXT; q++)
				;
			if (q > s && (rc = ingest_row_put(c->row,
			    (const char *)s, (size_t)(q - s))) != INGEST_READ_OK)
				return rc;
			if ((s = q) == e)
				break;
			if (c->ucls[*s] == INGEST_CSV_NUL)
				return ingest_csv_nul(c);
			c->state = INGEST_CSV_FIELD;
			if (c->ucls[*s] == INGEST_CSV_DELIM) {
				rc = ingest_row_cell_end(c->row);
				s++;
			}
			break;
		case INGEST_CSV_QUOTED:
			for (q = s; q < e && c->qcls[*q] == INGEST_CSV_TEXT; q++)
				;
			if (q > s) {
				c->cr = 0;
				if ((rc = ingest_row_put(c->row, (const char *)s,
				    (size_t)(q - s))) != INGEST_READ_OK)
					return rc;
			}
			if ((s = q) == e)
				break;
			switch (c->qcls[*s]) {
			case INGEST_CSV_DQUOTE:
				c->state = INGEST_CSV_QUOTE;
				c->cr = 0;
				break;
			case INGEST_CSV_CR:
				c->line++;
				c->cr = 1;
				rc = ingest_row_put(c->row, "\r", 1);
				break;
			case INGEST_CSV_LF:
				if (!c->cr)
					c->line++;
				c->cr = 0;
				rc = ingest_row_put(c->row, "\n", 1);
				break;
			default:
				return ingest_csv_nul(c);
			}
			s++;
			break;
		case INGEST_CSV_QUOTE:
			switch (c->cls[*s]) {
			case INGEST_CSV_DQUOTE:
				c->state = INGEST_CSV_QUOTED;
				rc = ingest_row_put(c->row, "\"", 1);
				s++;
				break;
			case INGEST_CSV_DELIM:
				c->state = INGEST_CSV_FIELD;
				rc = ingest_row_cell_end(c->row);
				s++;
				break;
			case INGEST_CSV_CR:
			case INGEST_CSV_LF:
				c->state = INGEST_CSV_FIELD;
				break;
			case INGEST_CSV_NUL:
				return ingest_csv_nul(c);
			default:	/* "ab"c is abc */
				c->state = INGEST_CSV_UNQUOTED;
				break;
			}
			break;
		}
	}
	return rc;
}

/* The sniffer has seen enough (or the end): choose, then parse what it
 * held. */
static enum ingest_read_err
ingest_csv_sniffed(struct ingest_csv *c, int eof)
{
	enum ingest_read_err rc;

	ingest_csv_classes(c, ingest_sniff(buf_str(&c->sniff), c->sniff.len,
	    eof), 1);
	c->stage = INGEST_CSV_STAGE_PARSE;
	rc = ingest_csv_parse(c, buf_str(&c->sniff), c->sniff.len);
	buf_free(&c->sniff);
	return rc;
}

/* UTF-8 text on to the sniffer or the parser. */
static enum ingest_read_err
ingest_csv_text(struct ingest_csv *c, const char *p, size_t n)
{
	enum ingest_read_err rc;
	size_t i, room;

	if (c->stage == INGEST_CSV_STAGE_PARSE)
		return ingest_csv_parse(c, p, n);
	room = INGEST_SNIFF_BYTES - c->sniff.len;
	for (i = 0; i < n && i < room &&
	    c->sniff_lines < INGEST_SNIFF_LINES; i++) {
		if (p[i] == '\n' && !c->sniff_cr)
			c->sniff_lines++;
		else if (p[i] == '\r')
			c->sniff_lines++;
		c->sniff_cr = p[i] == '\r';
	}
	if (buf_append(&c->sniff, p, i) == -1)
		return INGEST_READ_NOMEM;
	if (c->sniff.len < INGEST_SNIFF_BYTES &&
	    c->sniff_lines < INGEST_SNIFF_LINES)
		return INGEST_READ_OK;
	if ((rc = ingest_csv_sniffed(c, 0)) != INGEST_READ_OK)
		return rc;
	return ingest_csv_parse(c, p + i, n - i);
}

/* Bytes after the head, decoded. */
static enum ingest_read_err
ingest_csv_decode(struct ingest_csv *c, const char *p, size_t n)
{
	enum ingest_read_err rc;
	size_t take;

	if (!c->utf16)
		return ingest_csv_text(c, p, n);
	for (; n > 0; p += take, n -= take) {
		take = n < INGEST_CSV_PIECE ? n : INGEST_CSV_PIECE;
		rc = ingest_csv_text(c, c->out,
		    ingest_decode_utf16(&c->u16, p, take, c->out));
		if (rc != INGEST_READ_OK)
			return rc;
	}
	return INGEST_READ_OK;
}

/* The head is complete (or the file ended): a byte order mark is taken
 * off, the signatures of binary files refused. */
static enum ingest_read_err
ingest_csv_head(struct ingest_csv *c)
{
	static const struct {
		const char	*magic;
		size_t		 len;
		const char	*what;
	} binary[] = {
		{ "%PDF-", 5, "a PDF document" },
		{ "PK\3\4", 4, "a zip archive (an XLSX file?)" },
		{ "PK\5\6", 4, "a zip archive" },
		{ "\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1", 8,
		    "an OLE document (an old .xls file?)" },
	};
	const unsigned char *h = (const unsigned char *)c->head;
	size_t i, skip = 0;

	for (i = 0; i < sizeof(binary) / sizeof(binary[0]); i++)
		if (c->nhead >= binary[i].len &&
		    memcmp(c->head, binary[i].magic, binary[i].len) == 0)
			return ingest_row_invalid(c->row, "%s, not a text "
			    "file", binary[i].what);
	if (c->nhead >= 3 && h[0] == 0xEF && h[1] == 0xBB && h[2] == 0xBF)
		skip = 3;
	else if (c->nhead >= 2 && ((h[0] == 0xFF && h[1] == 0xFE) ||
	    (h[0] == 0xFE && h[1] == 0xFF))) {
		skip = 2;
		c->utf16 = 1;
		c->u16.be = h[0] == 0xFE;
	}
	c->stage = c->format == INGEST_CSV ? INGEST_CSV_STAGE_SNIFF :
	    INGEST_CSV_STAGE_PARSE;
	return ingest_csv_decode(c, c->head + skip, c->nhead - skip);
}

enum ingest_read_err
ingest_csv_feed(struct ingest_csv *c, const char *p, size_t n)
{
	enum ingest_read_err rc;
	size_t take;

	if (c->stage == INGEST_CSV_STAGE_HEAD) {
		take = INGEST_CSV_HEAD - c->nhead < n ?
		    INGEST_CSV_HEAD - c->nhead : n;
		memcpy(c->head + c->nhead, p, take);
		c->nhead += take;
		p += take;
		n -= take;
		if (c->nhead < INGEST_CSV_HEAD)
			return INGEST_READ_OK;
		if ((rc = ingest_csv_head(c)) != INGEST_READ_OK)
			return rc;
	}
	return ingest_csv_decode(c, p, n);
}

enum ingest_read_err
ingest_csv_end(struct ingest_csv *c)
{
	enum ingest_read_err rc;
	int n;

	if (c->stage == INGEST_CSV_STAGE_HEAD &&
	    (rc = ingest_csv_head(c)) != INGEST_READ_OK)
		return rc;
	if (c->utf16) {
		if ((n = ingest_decode_utf16_end(&c->u16, c->out)) < 0)
			return ingest_row_invalid(c->row, "a UTF-16 file with "
			    "an odd number of bytes");
		if ((rc = ingest_csv_text(c, c->out, (size_t)n)) !=
		    INGEST_READ_OK)
			return rc;
	}
	if (c->stage == INGEST_CSV_STAGE_SNIFF &&
	    (rc = ingest_csv_sniffed(c, 1)) != INGEST_READ_OK)
		return rc;
	switch (c->state) {
	case INGEST_CSV_QUOTED:
		return ingest_row_invalid(c->row, "line %llu: a quoted field "
		    "is not closed by the end of the file", c->qline);
	case INGEST_CSV_FIELD:
		if (!c->open)
			return INGEST_READ_OK;
		/* FALLTHROUGH */
	default:
		if ((rc = ingest_row_cell_end(c->row)) != INGEST_READ_OK)
			return rc;
		c->open = 0;
		c->state = INGEST_CSV_FIELD;
		return ingest_row_end(c->row);
	}
}

void
ingest_csv_free(struct ingest_csv *c)
{
	if (c == NULL)
		return;
	buf_free(&c->sniff);
	free(c);
}
