/* ingest_columns.h: which row of an uploaded file is its header and which
 * column holds the addresses, by the spec's column selection rules, decided
 * from the first rows of the file:
 *  1. an explicit email_column (header name, case-insensitive, or 0-based
 *     index) or column_mapping.email wins;
 *  2. otherwise a header that names an email column (Email, E-mail, Email
 *     Address, Mail ...), and failing that the column whose sampled cells
 *     most often look like addresses;
 *  3. the header row is detected: the first row is a header when none of
 *     its cells is an address while a later row has one, or when it names
 *     the chosen column; a one-column file of addresses has none. */
#ifndef SVC_INGEST_COLUMNS_H
#define SVC_INGEST_COLUMNS_H
#include <stddef.h>

#define INGEST_COLUMNS_SAMPLE 50	/* rows looked at before choosing */

/* How the email column is named by the request. */
enum ingest_rule {
	INGEST_RULE_AUTO,
	INGEST_RULE_EMAIL_COLUMN,	/* email_column: a name or an index */
	INGEST_RULE_MAPPING,		/* column_mapping.email: a name */
	INGEST_RULE__MAX
};
extern const char *const ingest_rule_names[INGEST_RULE__MAX];

enum ingest_choice {
	INGEST_CHOICE_FOUND,
	INGEST_CHOICE_NOT_FOUND,	/* email_column_not_found */
	INGEST_CHOICE_BAD_MAPPING,	/* invalid_column_mapping */
	INGEST_CHOICE__MAX
};

/* One sampled row: n cells of UTF-8 text. */
struct ingest_columns_row {
	const char	*const *cells;
	size_t		 n;
};

struct ingest_columns {
	int		 header;	/* the first sampled row is the header */
	size_t		 column;	/* the email column's index */
};

/* Chooses from rows[0..nrows) (the file's first non-empty rows) by rule
 * and name (the request's email_column or mapping; NULL for AUTO). */
enum ingest_choice ingest_columns_choose(const struct ingest_columns_row *,
	    size_t nrows, enum ingest_rule, const char *name,
	    struct ingest_columns *);
/* Does a cell look like an address (trimmed, addr_parse accepts it)? */
int	 ingest_columns_is_address(const char *cell);
#endif
