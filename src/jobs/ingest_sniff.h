/* ingest_sniff.h: the delimiter of a CSV file, guessed from its start. */
#ifndef SVC_INGEST_SNIFF_H
#define SVC_INGEST_SNIFF_H
#include <stddef.h>

#define INGEST_SNIFF_BYTES (64 << 10)	/* the start looked at */
#define INGEST_SNIFF_LINES 50

/* Among ',' ';' tab '|', the one that splits the most records of s (n
 * bytes of UTF-8, at most INGEST_SNIFF_LINES records, blank lines not
 * counted; the last, unfinished one only when eof or when no record has
 * ended) into the same number
 * of fields, more than one, outside RFC 4180 quotes; ties go to the
 * earlier in that list. -1 when none splits any record. */
int	 ingest_sniff(const char *s, size_t n, int eof);
#endif
