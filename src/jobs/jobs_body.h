/* jobs_body.h: the JSON body of POST /v1/verify/bulk and /batch, read as a
 * stream (yajl) and never held as a tree: the strings of "emails" go
 * straight into a jobs_input, "name", "retention_days", "webhook_url" and
 * "callback_data" are kept small (callback_data as a jansson object within the limits
 * below), everything else is only checked. Valid JSON here is what
 * jansson's json_loadb accepts with JSON_REJECT_DUPLICATES (depth 2048, no
 * \u0000, well-formed UTF-8 and surrogate pairs, numbers that fit), which
 * the fuzz target checks, so the API answers as it did with a tree.
 * Memory besides the body: the input, yajl's buffer for a string with
 * escapes (about the longest such string), 8 bytes per key of the objects
 * still open, and callback_data (a few MiB at most). The first three
 * together stay under the memory_max given to jobs_body_init: past it the
 * input is dropped and too_big set, so whatever the body a request costs
 * at most its body, memory_max and small change. */
#ifndef SVC_JOBS_BODY_H
#define SVC_JOBS_BODY_H
#include "jobs/jobs.h"
#include "util/urlguard.h"
#include <jansson.h>

/* More elements than this in "emails" is too_many_emails at once. */
#define JOBS_BODY_ELEMENTS(max)	(4 * (size_t)(max))
/* Octets of webhook_url kept: one more than a URL may have (urlguard.h),
 * so that a longer one, cut, is still too long. */
#define JOBS_BODY_URL_KEEP	(URLGUARD_MAX_LEN + 1)
/* callback_data: octets as sent (braces included), nesting levels (the
 * object itself is level 1), values (the object itself included). */
#define JOBS_BODY_CB_BYTES	65536
#define JOBS_BODY_CB_DEPTH	32
#define JOBS_BODY_CB_VALUES	4096
/* retention_days: read from 1 to this (then bounded by the operator's
 * retention_days_max); other values are JOBS_BODY_WRONG. */
#define JOBS_BODY_RETENTION_MAX	36500

enum jobs_body_err {
	JOBS_BODY_OK,
	JOBS_BODY_INVALID_JSON,	/* error says what and where */
	JOBS_BODY_NOT_OBJECT,	/* valid JSON, not an object */
	JOBS_BODY_NOMEM,
	JOBS_BODY_ERR__MAX
};

/* What a top-level field was found to be. */
enum jobs_body_field {
	JOBS_BODY_ABSENT,	/* not there, or null */
	JOBS_BODY_SET,		/* the right type, within the limits */
	JOBS_BODY_WRONG,	/* another type, or (name) a string too long */
	JOBS_BODY_TOO_BIG,	/* callback_data: over the limits */
	JOBS_BODY_FIELD__MAX
};

struct jobs_body_parse;

struct jobs_body {
	enum jobs_body_field name_state;	/* at most JOBS_NAME_MAX octets */
	enum jobs_body_field url_state;		/* batch only, any length */
	enum jobs_body_field cb_state;		/* batch only */
	enum jobs_body_field emails_state;	/* SET: an array */
	enum jobs_body_field retention_state;	/* a whole number of days */
	long		 retention_days;	/* retention_state SET */
	char		 name[JOBS_NAME_MAX + 1];
	char		 webhook_url[JOBS_BODY_URL_KEEP + 1];
	json_t		*callback_data;		/* cb_state SET */
	size_t		 count;			/* elements of emails */
	/* When count is at most JOBS_BODY_ELEMENTS(max): JOBS_OK (in holds
	 * the entries), JOBS_EMPTY, JOBS_TOO_MANY or JOBS_BAD_ITEM (the
	 * first element that is not a string is bad_index), as
	 * jobs_input_add and jobs_input_end decided them. */
	enum jobs_err	 emails_rc;
	size_t		 bad_index;
	int		 too_big;		/* the input passed memory_max */
	struct jobs_input in;
	char		 error[160];		/* JOBS_BODY_INVALID_JSON */
	struct jobs_body_parse *parse;
};

/* batch: webhook_url and callback_data are read (else ignored); max and
 * sandbox_domain go to jobs_input_init; memory_max in bytes (above). 0,
 * or -1 when out of memory. */
int	 jobs_body_init(struct jobs_body *, int batch, size_t max,
	    const char *sandbox_domain, size_t memory_max);
/* The body in pieces of any size, then jobs_body_end. Once a call has
 * returned an error, the following ones return it too. */
enum jobs_body_err jobs_body_feed(struct jobs_body *, const char *, size_t);
enum jobs_body_err jobs_body_end(struct jobs_body *);
void	 jobs_body_free(struct jobs_body *);
#endif
