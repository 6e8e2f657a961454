/* out.h: svc's human output: aligned "label  value" lines and tables,
 * values read from the API's JSON made printable. */
#ifndef SVC_CLI_OUT_H
#define SVC_CLI_OUT_H
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

/* a value shown (longer ones are cut): the preview's sample method is
 * a paragraph */
#define OUT_VAL_MAX 2048

/* The value at a dotted path of an object ("domain.acceptAll"), or NULL. */
json_t	*out_get(json_t *, const char *path);
/* A value as text: strings cleaned of control characters, integers,
 * numbers, true/false as yes/no; "-" for null or missing. */
const char *out_text(char buf[OUT_VAL_MAX], json_t *);
/* Shorthand: out_text of out_get. */
const char *out_field(char buf[OUT_VAL_MAX], json_t *, const char *path);
/* The integer at path (0 when missing). */
long long out_int(json_t *, const char *path);
/* "label       value" (labels aligned in one column). */
void	 out_kv(const char *label, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* The kv line of a field, when present and not null (always with force). */
void	 out_kv_field(const char *label, json_t *, const char *path,
	    int force);

/* A table of the objects of a JSON array printed to f: the head row, then
 * a row for each object, its cells the values at the dotted paths of
 * fields (one a column), aligned two spaces apart. 0, or -1 out of
 * memory. */
int	 out_table_json(FILE *f, size_t ncol, const char *const *head,
	    json_t *array, const char *const *fields);
#endif
