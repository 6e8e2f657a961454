/* ingest_columns.c: the header row and the email column of an uploaded
 * file (ingest_columns.h). Header names are compared in a folded form
 * (ASCII letters and digits only, lower case: "E-mail Address" is
 * "emailaddress"); a name of the known list beats one that only contains
 * "mail", and among equals the column with more addresses in the sample,
 * then the leftmost, wins. */
#include "jobs/ingest_columns.h"
#include "engine/addr.h"
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *const ingest_rule_names[INGEST_RULE__MAX] = {
	"auto", "email_column", "column_mapping"
};

/* Folded header names that mean "the email address", best first. */
static const char *const ingest_columns_names[] = {
	"email", "emailaddress", "emailaddr", "emails", "mail",
	"mailaddress", "emailid", "eaddress", "correo", "correoelectronico",
	"courriel", "adressemail", "emailadresse", "mailadresse", "epost",
	NULL
};

#define INGEST_COLUMNS_FOLD 64

static void
ingest_columns_fold(const char *s, char out[INGEST_COLUMNS_FOLD])
{
	size_t o = 0;

	for (; *s && o + 1 < INGEST_COLUMNS_FOLD; s++)
		if (isalnum((unsigned char)*s) && !((unsigned char)*s & 0x80))
			out[o++] = (char)tolower((unsigned char)*s);
	out[o] = '\0';
}

/* How much a header cell says "email": the rank of a known name (higher
 * is better), 1 for a name containing "mail", 0 for none. */
static int
ingest_columns_name_score(const char *cell)
{
	char f[INGEST_COLUMNS_FOLD];
	int i, n;

	ingest_columns_fold(cell, f);
	for (n = 0; ingest_columns_names[n]; n++)
		;
	for (i = 0; ingest_columns_names[i]; i++)
		if (strcmp(f, ingest_columns_names[i]) == 0)
			return 1 + n - i;
	return strstr(f, "mail") != NULL ? 1 : 0;
}

int
ingest_columns_is_address(const char *cell)
{
	struct addr a;

	return strchr(cell, '@') != NULL && addr_parse(cell, &a) == ADDR_OK;
}

static int
ingest_columns_row_has_address(const struct ingest_columns_row *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (ingest_columns_is_address(r->cells[i]))
			return 1;
	return 0;
}

/* Addresses in column c of rows[from..nrows). */
static size_t
ingest_columns_addresses(const struct ingest_columns_row *rows,
    size_t nrows, size_t from, size_t c)
{
	size_t i, k = 0;

	for (i = from; i < nrows; i++)
		if (c < rows[i].n && ingest_columns_is_address(rows[i].cells[c]))
			k++;
	return k;
}

/* The index of a header cell equal to name (trimmed, case-insensitive),
 * or -1. */
static long
ingest_columns_named(const struct ingest_columns_row *r, const char *name)
{
	size_t i, nl, cl;
	const char *c;

	while (isspace((unsigned char)*name))
		name++;
	for (nl = strlen(name); nl > 0 && isspace((unsigned char)name[nl - 1]);
	    nl--)
		;
	for (i = 0; i < r->n; i++) {
		for (c = r->cells[i]; isspace((unsigned char)*c); c++)
			;
		for (cl = strlen(c); cl > 0 && isspace((unsigned char)c[cl - 1]);
		    cl--)
			;
		if (cl == nl && nl > 0 && strncasecmp(c, name, nl) == 0)
			return (long)i;
	}
	return -1;
}

/* An index given as text: "0" to "9999" (no sign, no spaces), or -1. */
static long
ingest_columns_index(const char *s)
{
	long v = 0;

	if (*s == '\0' || strlen(s) > 4)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
	}
	return v;
}

/* Rule 3 without a named column: the first row is a header when it has
 * no address and a later row has one, or (no addresses at all) when it
 * names an email column. */
static int
ingest_columns_header(const struct ingest_columns_row *rows, size_t nrows)
{
	size_t i;

	if (nrows == 0 || ingest_columns_row_has_address(&rows[0]))
		return 0;
	for (i = 1; i < nrows; i++)
		if (ingest_columns_row_has_address(&rows[i]))
			return 1;
	for (i = 0; i < rows[0].n; i++)
		if (ingest_columns_name_score(rows[0].cells[i]) > 0)
			return 1;
	return 0;
}

static size_t
ingest_columns_width(const struct ingest_columns_row *rows, size_t nrows)
{
	size_t i, w = 0;

	for (i = 0; i < nrows; i++)
		if (rows[i].n > w)
			w = rows[i].n;
	return w;
}

static enum ingest_choice
ingest_columns_auto(const struct ingest_columns_row *rows, size_t nrows,
    struct ingest_columns *out)
{
	size_t c, width = ingest_columns_width(rows, nrows), from, best_n = 0,
	    n;
	int score, best_score = 0;
	long best = -1;

	out->header = ingest_columns_header(rows, nrows);
	from = out->header ? 1 : 0;
	if (out->header) {
		for (c = 0; c < rows[0].n; c++) {
			if ((score = ingest_columns_name_score(rows[0].cells[c]))
			    == 0)
				continue;
			n = ingest_columns_addresses(rows, nrows, 1, c);
			if (score > best_score || (score == best_score &&
			    n > best_n)) {
				best = (long)c;
				best_score = score;
				best_n = n;
			}
		}
	}
	if (best < 0) {
		for (c = 0; c < width; c++) {
			n = ingest_columns_addresses(rows, nrows, from, c);
			if (n > best_n) {
				best = (long)c;
				best_n = n;
			}
		}
	}
	if (best < 0)
		return INGEST_CHOICE_NOT_FOUND;
	out->column = (size_t)best;
	return INGEST_CHOICE_FOUND;
}

enum ingest_choice
ingest_columns_choose(const struct ingest_columns_row *rows, size_t nrows,
    enum ingest_rule rule, const char *name, struct ingest_columns *out)
{
	enum ingest_choice missing = rule == INGEST_RULE_MAPPING ?
	    INGEST_CHOICE_BAD_MAPPING : INGEST_CHOICE_NOT_FOUND;
	long i;

	memset(out, 0, sizeof(*out));
	if (rule == INGEST_RULE_AUTO || name == NULL)
		return ingest_columns_auto(rows, nrows, out);
	if (nrows == 0)
		return missing;
	/* A name of the first row is the header's; an index is only an
	 * index (with or without a header, by rule 3). */
	if ((i = ingest_columns_named(&rows[0], name)) >= 0) {
		out->header = 1;
		out->column = (size_t)i;
		return INGEST_CHOICE_FOUND;
	}
	if (rule == INGEST_RULE_EMAIL_COLUMN &&
	    (i = ingest_columns_index(name)) >= 0 &&
	    (size_t)i < ingest_columns_width(rows, nrows)) {
		out->header = ingest_columns_header(rows, nrows);
		out->column = (size_t)i;
		return INGEST_CHOICE_FOUND;
	}
	return missing;
}
