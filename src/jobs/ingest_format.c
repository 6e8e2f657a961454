/* ingest_format.c: the formats of uploaded files and their names, and the
 * format a file name says by its extension or a Content-Type by its media
 * type. */
#include "jobs/ingest_read.h"
#include <strings.h>
#include <string.h>

const char *const ingest_format_names[INGEST_FORMAT__MAX] = {
	"csv", "tsv", "txt", "xlsx"
};

int
ingest_format_of_name(const char *filename)
{
	const char *dot;
	int f;

	if (filename == NULL || (dot = strrchr(filename, '.')) == NULL)
		return -1;
	for (f = 0; f < INGEST_FORMAT__MAX; f++)
		if (strcasecmp(dot + 1, ingest_format_names[f]) == 0)
			return f;
	return -1;
}

int
ingest_format_of_media_type(const char *ct)
{
	static const struct {
		const char	*type;
		int		 format;
	} types[] = {
		{ "text/csv", INGEST_CSV },
		{ "application/csv", INGEST_CSV },
		{ "text/tab-separated-values", INGEST_TSV },
		{ "application/vnd.openxmlformats-officedocument."
		    "spreadsheetml.sheet", INGEST_XLSX },
	};
	size_t i, n;

	if (ct == NULL)
		return -1;
	ct += strspn(ct, " \t");
	/* the media type ends at its parameters or white space */
	n = strcspn(ct, "; \t");
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strlen(types[i].type) == n &&
		    strncasecmp(ct, types[i].type, n) == 0)
			return types[i].format;
	return -1;
}
