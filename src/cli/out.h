/* out.h: svc's human output: aligned "label  value" lines and tables,
 * values read from the API's JSON made printable. */
#ifndef SVC_CLI_OUT_H
#define SVC_CLI_OUT_H
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#define OUT_VAL_MAX 512

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

struct out_table {
	size_t	 ncol;
	size_t	 nrow;		/* the header row included */
	size_t	 cap;
	char	**cells;	/* nrow * ncol */
};

int	 out_table_init(struct out_table *, size_t ncol, const char *const *head);
int	 out_table_add(struct out_table *, const char *const *row);
/* Columns aligned, two spaces apart, the last one not padded. */
void	 out_table_print(const struct out_table *, FILE *);
void	 out_table_free(struct out_table *);
#endif
