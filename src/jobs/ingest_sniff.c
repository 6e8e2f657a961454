/* ingest_sniff.c: the delimiter of a CSV file, guessed from its start
 * (ingest_sniff.h). Each candidate reads the start with the quoting rules
 * of ingest_csv.c and counts the fields of each record; its score is how
 * many records have the most common count above one. A record still
 * unfinished where the start ends counts only if no other has ended (a
 * first line longer than the start). */
#include "jobs/ingest_sniff.h"

static const char ingest_sniff_candidates[] = { ',', ';', '\t', '|' };

/* The fields of each record of s split by d, into counts; how many. */
static size_t
ingest_sniff_count(const char *s, size_t n, int eof, char d,
    unsigned counts[INGEST_SNIFF_LINES])
{
	enum { FIELD, UNQUOTED, QUOTED, QUOTE } st = FIELD;
	size_t i, nc = 0;
	unsigned fields = 1;
	int blank = 1, cr = 0;
	char c;

	for (i = 0; i < n && nc < INGEST_SNIFF_LINES; i++) {
		c = s[i];
		if (st == QUOTED) {
			if (c == '"')
				st = QUOTE;
			continue;
		}
		if (st == QUOTE && c == '"') {
			st = QUOTED;
			continue;
		}
		if (c == '\n' && cr) {
			cr = 0;
			continue;
		}
		cr = c == '\r';
		if (c == '\r' || c == '\n') {
			if (!blank)
				counts[nc++] = fields;
			fields = 1;
			blank = 1;
			st = FIELD;
		} else if (c == d) {
			fields++;
			blank = 0;
			st = FIELD;
		} else {
			st = c == '"' && st == FIELD ? QUOTED : UNQUOTED;
			blank = 0;
		}
	}
	/* the unfinished record: at the end, or when it is the only one */
	if ((eof || nc == 0) && i == n && !blank && st != QUOTED)
		counts[nc++] = fields;
	return nc;
}

int
ingest_sniff(const char *s, size_t n, int eof)
{
	unsigned counts[INGEST_SNIFF_LINES];
	size_t c, i, j, nc, best_score = 0, score;
	int best = -1;

	for (c = 0; c < sizeof(ingest_sniff_candidates); c++) {
		nc = ingest_sniff_count(s, n, eof, ingest_sniff_candidates[c],
		    counts);
		/* the most common count above one */
		for (i = 0; i < nc; i++) {
			if (counts[i] < 2)
				continue;
			for (score = 0, j = 0; j < nc; j++)
				score += counts[j] == counts[i];
			if (score > best_score) {
				best_score = score;
				best = ingest_sniff_candidates[c];
			}
		}
	}
	return best;
}
