/* jsonw.h: JSON text written straight into a buf, byte for byte as
 * jansson's json_dumps(JSON_COMPACT) writes the same values in the same
 * order, without building a tree first; for the worker's per-address path
 * (the verdict cache entries). Strings must be valid UTF-8 (as json_string
 * wants): any other, a NULL string or running out of memory sets err, and
 * the text is then not to be used. */
#ifndef SVC_JSONW_H
#define SVC_JSONW_H
#include "util/buf.h"

struct jsonw {
	struct buf	*b;
	size_t		 start;	/* b's length when the writer began */
	int		 err;
};

void	 jsonw_init(struct jsonw *, struct buf *);
/* '{' or '[', and the matching '}' or ']'. */
void	 jsonw_open(struct jsonw *, char);
void	 jsonw_close(struct jsonw *, char);
/* An object's key (and the ':'); the value follows. */
void	 jsonw_key(struct jsonw *, const char *);
void	 jsonw_str(struct jsonw *, const char *);
void	 jsonw_int(struct jsonw *, long long);
void	 jsonw_bool(struct jsonw *, int);
void	 jsonw_null(struct jsonw *);
/* 1 if s is a string json_string accepts (strict UTF-8: no overlong
 * forms, no surrogates, nothing beyond U+10FFFF), else 0. */
int	 jsonw_utf8_ok(const char *s);
#endif
