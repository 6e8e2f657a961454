/* ingest_xlsx.c: the XLSX reader (ingest_xlsx.h): the file's bytes are
 * collected (at most limits.file_max), then opened as a zip archive with
 * libzip from memory and read as an Open Packaging package: the package
 * relationships (_rels/.rels) name the workbook (xl/workbook.xml when they
 * do not), the workbook's relationships the parts of its sheets and its
 * shared strings; the first <sheet> of the workbook that is a worksheet is
 * the one read (ingest_xlsx_sheet.c). */
#include "jobs/ingest_xlsx.h"
#include "jobs/ingest_xlsx_sheet.h"
#include "jobs/ingest_xlsx_xml.h"
#include "util/grow.h"
#include <stdlib.h>
#include <string.h>

#define INGEST_XLSX_PATH_MAX 1024

enum ingest_xlsx_rel_kind {
	INGEST_XLSX_REL_OTHER,
	INGEST_XLSX_REL_DOCUMENT,	/* .../officeDocument */
	INGEST_XLSX_REL_WORKSHEET,	/* .../worksheet */
	INGEST_XLSX_REL_STRINGS		/* .../sharedStrings */
};

struct ingest_xlsx_rel {
	enum ingest_xlsx_rel_kind kind;
	char		*id;
	char		*target;	/* the part's name in the archive */
};

/* The relationships of one part being read. */
struct ingest_xlsx_rels {
	struct ingest_xlsx *x;
	const char	*dir;		/* targets are relative to it */
	struct ingest_xlsx_rel *v;
	size_t		 n, cap;
};

struct ingest_xlsx {
	struct ingest_row *row;
	const struct ingest_limits *limits;
	struct buf	 file;
	struct ingest_xlsx_xml *xml;	/* while the file is read */
	/* the workbook's <sheet> chosen */
	const struct ingest_xlsx_rels *book_rels;
	const struct ingest_xlsx_rel *sheet;
};

struct ingest_xlsx *
ingest_xlsx_new(struct ingest_row *row, const struct ingest_limits *limits)
{
	struct ingest_xlsx *x;

	if ((x = calloc(1, sizeof(*x))) == NULL)
		return NULL;
	x->row = row;
	x->limits = limits;
	buf_init(&x->file, BUF_NOMAX);
	return x;
}

enum ingest_read_err
ingest_xlsx_feed(struct ingest_xlsx *x, const char *p, size_t n)
{
	if (n > x->limits->file_max - x->file.len)
		return ingest_row_invalid(x->row, "larger than %zu bytes",
		    x->limits->file_max);
	if (buf_append(&x->file, p, n) == -1)
		return INGEST_READ_NOMEM;
	return INGEST_READ_OK;
}

/* target (from a part in dir, "" for the root) as a part name: a leading
 * '/' starts from the root, "." and ".." segments are resolved. -1 when
 * it is too long. */
static int
ingest_xlsx_path(struct buf *out, const char *dir, const char *target)
{
	const char *seg, *end;
	size_t len;
	char *slash;

	buf_reset(out);
	if (*target == '/')
		target++;
	else if (buf_puts(out, dir) == -1)
		return -1;
	for (seg = target; *seg != '\0'; seg = *end ? end + 1 : end) {
		end = strchr(seg, '/');
		if (end == NULL)
			end = seg + strlen(seg);
		len = (size_t)(end - seg);
		if (len == 0 || (len == 1 && seg[0] == '.'))
			continue;
		if (len == 2 && seg[0] == '.' && seg[1] == '.') {
			/* drop the last segment of out ("a/b/" to "a/") */
			if (out->len > 0) {
				slash = memrchr(out->data, '/', out->len - 1);
				out->len = slash ? (size_t)(slash - out->data) +
				    1 : 0;
				out->data[out->len] = '\0';
			}
			continue;
		}
		if (buf_append(out, seg, len) == -1 ||
		    (*end == '/' && buf_putc(out, '/') == -1))
			return -1;
	}
	return 0;
}

static enum ingest_read_err
ingest_xlsx_rels_start(void *ctx, const char *name, const char **attrs)
{
	static const struct {
		const char	*suffix;
		enum ingest_xlsx_rel_kind kind;
	} kinds[] = {
		{ "/officeDocument", INGEST_XLSX_REL_DOCUMENT },
		{ "/worksheet", INGEST_XLSX_REL_WORKSHEET },
		{ "/sharedStrings", INGEST_XLSX_REL_STRINGS },
	};
	struct ingest_xlsx_rels *rels = ctx;
	const char *id, *type, *target, *mode;
	struct ingest_xlsx_rel *rel;
	struct buf path;
	size_t i, tl, sl;

	if (strcmp(name, "Relationship") != 0)
		return INGEST_READ_OK;
	id = ingest_xlsx_xml_attr(attrs, "Id", 0);
	type = ingest_xlsx_xml_attr(attrs, "Type", 0);
	target = ingest_xlsx_xml_attr(attrs, "Target", 0);
	mode = ingest_xlsx_xml_attr(attrs, "TargetMode", 0);
	if (id == NULL || type == NULL || target == NULL ||
	    (mode != NULL && strcmp(mode, "External") == 0))
		return INGEST_READ_OK;
	if (rels->n == rels->cap && grow(&rels->v, rels->n, &rels->cap,
	    sizeof(*rels->v), 16) == -1)
		return INGEST_READ_NOMEM;
	rel = &rels->v[rels->n];
	memset(rel, 0, sizeof(*rel));
	tl = strlen(type);
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		sl = strlen(kinds[i].suffix);
		if (tl >= sl && strcmp(type + tl - sl, kinds[i].suffix) == 0)
			rel->kind = kinds[i].kind;
	}
	buf_init(&path, INGEST_XLSX_PATH_MAX);
	if (ingest_xlsx_path(&path, rels->dir, target) == -1) {
		buf_free(&path);
		return INGEST_READ_OK;	/* names no part of the archive */
	}
	rel->target = buf_steal(&path);
	if (rel->target == NULL || (rel->id = strdup(id)) == NULL) {
		free(rel->target);
		return INGEST_READ_NOMEM;
	}
	rels->n++;
	return INGEST_READ_OK;
}

static void
ingest_xlsx_rels_free(struct ingest_xlsx_rels *rels)
{
	size_t i;

	for (i = 0; i < rels->n; i++) {
		free(rels->v[i].id);
		free(rels->v[i].target);
	}
	free(rels->v);
	rels->v = NULL;
	rels->n = rels->cap = 0;
}

/* The relationships of the part in dir named base, read into rels (dir
 * and x set by the caller); none when the part is absent. */
static enum ingest_read_err
ingest_xlsx_rels_read(struct ingest_xlsx *x, struct ingest_xlsx_rels *rels,
    const char *base)
{
	struct ingest_xlsx_xml_handlers h = {
		rels, ingest_xlsx_rels_start, NULL, NULL
	};
	enum ingest_read_err rc;
	struct buf name;

	buf_init(&name, INGEST_XLSX_PATH_MAX * 2);
	if (buf_printf(&name, "%s_rels/%s.rels", rels->dir, base) == -1)
		rc = INGEST_READ_NOMEM;
	else if (!ingest_xlsx_xml_has(x->xml, buf_str(&name)))
		rc = INGEST_READ_OK;
	else
		rc = ingest_xlsx_xml_parse(x->xml, buf_str(&name),
		    x->limits->part_max, &h);
	buf_free(&name);
	return rc;
}

static const struct ingest_xlsx_rel *
ingest_xlsx_rel_find(const struct ingest_xlsx_rels *rels,
    enum ingest_xlsx_rel_kind kind, const char *id)
{
	size_t i;

	for (i = 0; i < rels->n; i++)
		if (rels->v[i].kind == kind &&
		    (id == NULL || strcmp(rels->v[i].id, id) == 0))
			return &rels->v[i];
	return NULL;
}

/* The workbook's <sheet> elements in order: the first worksheet. */
static enum ingest_read_err
ingest_xlsx_book_start(void *ctx, const char *name, const char **attrs)
{
	struct ingest_xlsx *x = ctx;
	const char *id;

	if (strcmp(name, "sheet") != 0 ||
	    (id = ingest_xlsx_xml_attr(attrs, "id", 1)) == NULL)
		return INGEST_READ_OK;
	x->sheet = ingest_xlsx_rel_find(x->book_rels,
	    INGEST_XLSX_REL_WORKSHEET, id);
	return x->sheet ? INGEST_XLSX_XML_DONE : INGEST_READ_OK;
}

/* The package, opened: its first worksheet's rows. */
static enum ingest_read_err
ingest_xlsx_package(struct ingest_xlsx *x)
{
	struct ingest_xlsx_rels root = { x, "", NULL, 0, 0 };
	struct ingest_xlsx_rels book = { x, "", NULL, 0, 0 };
	struct ingest_xlsx_xml_handlers h = {
		x, ingest_xlsx_book_start, NULL, NULL
	};
	struct ingest_xlsx_strings strings;
	const struct ingest_xlsx_rel *doc, *sst;
	const char *workbook = "xl/workbook.xml", *slash;
	enum ingest_read_err rc;
	struct buf dir, sstname;
	char part[128];

	memset(&strings, 0, sizeof(strings));
	buf_init(&dir, INGEST_XLSX_PATH_MAX);
	buf_init(&sstname, INGEST_XLSX_PATH_MAX);
	if ((rc = ingest_xlsx_rels_read(x, &root, "")) != INGEST_READ_OK)
		goto out;
	if ((doc = ingest_xlsx_rel_find(&root, INGEST_XLSX_REL_DOCUMENT,
	    NULL)) != NULL)
		workbook = doc->target;
	if (!ingest_xlsx_xml_has(x->xml, workbook)) {
		rc = ingest_row_invalid(x->row, "not an XLSX file: no workbook "
		    "(%s)", ingest_xlsx_xml_name(workbook, part, sizeof(part)));
		goto out;
	}
	slash = strrchr(workbook, '/');
	if (buf_append(&dir, workbook, slash ? (size_t)(slash - workbook) + 1 :
	    0) == -1) {
		rc = INGEST_READ_NOMEM;
		goto out;
	}
	book.dir = buf_str(&dir);
	if ((rc = ingest_xlsx_rels_read(x, &book, slash ? slash + 1 :
	    workbook)) != INGEST_READ_OK)
		goto out;
	x->book_rels = &book;
	if ((rc = ingest_xlsx_xml_parse(x->xml, workbook, x->limits->part_max,
	    &h)) != INGEST_READ_OK)
		goto out;
	if (x->sheet == NULL) {
		rc = ingest_row_invalid(x->row, "the workbook has no worksheet");
		goto out;
	}
	/* shared strings: by relationship, else where Excel puts them */
	if ((sst = ingest_xlsx_rel_find(&book, INGEST_XLSX_REL_STRINGS,
	    NULL)) != NULL) {
		if (buf_puts(&sstname, sst->target) == -1)
			rc = INGEST_READ_NOMEM;
	} else if (buf_printf(&sstname, "%ssharedStrings.xml", book.dir) == -1)
		rc = INGEST_READ_NOMEM;
	if (rc == INGEST_READ_OK && ingest_xlsx_xml_has(x->xml,
	    buf_str(&sstname)))
		rc = ingest_xlsx_sheet_strings(x->xml, buf_str(&sstname),
		    &strings);
	if (rc == INGEST_READ_OK)
		rc = ingest_xlsx_sheet_rows(x->xml, x->sheet->target, &strings);
out:
	x->sheet = NULL;
	x->book_rels = NULL;
	ingest_xlsx_sheet_strings_free(&strings);
	ingest_xlsx_rels_free(&root);
	ingest_xlsx_rels_free(&book);
	buf_free(&dir);
	buf_free(&sstname);
	return rc;
}

enum ingest_read_err
ingest_xlsx_end(struct ingest_xlsx *x)
{
	static const char ole[] = "\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1";
	enum ingest_read_err rc = INGEST_READ_NOMEM;
	zip_source_t *src = NULL;
	zip_error_t ze;

	if (x->file.len >= sizeof(ole) - 1 &&
	    memcmp(x->file.data, ole, sizeof(ole) - 1) == 0)
		return ingest_row_invalid(x->row, "not an XLSX file: an "
		    "encrypted workbook or an old .xls file (an OLE document)");
	zip_error_init(&ze);
	if ((x->xml = calloc(1, sizeof(*x->xml))) == NULL ||
	    (src = zip_source_buffer_create(x->file.data, x->file.len, 0,
	    &ze)) == NULL)
		goto out;
	x->xml->limits = x->limits;
	x->xml->row = x->row;
	if ((x->xml->zip = zip_open_from_source(src, ZIP_RDONLY, &ze)) ==
	    NULL) {
		zip_source_free(src);
		if (zip_error_code_zip(&ze) != ZIP_ER_MEMORY)
			rc = ingest_row_invalid(x->row, "not an XLSX file: not "
			    "a zip archive (%s)", zip_error_strerror(&ze));
		goto out;
	}
	rc = ingest_xlsx_package(x);
	zip_discard(x->xml->zip);
out:
	zip_error_fini(&ze);
	free(x->xml);
	x->xml = NULL;
	buf_free(&x->file);
	return rc;
}

void
ingest_xlsx_free(struct ingest_xlsx *x)
{
	if (x == NULL)
		return;
	buf_free(&x->file);
	free(x);
}
