/* ingest_format.c: the formats of uploaded files and their names, and the
 * format a file name says by its extension. */
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
