/* multipart.h: a streaming parser of multipart/form-data bodies (RFC 7578,
 * RFC 2046 section 5.1). It keeps the delimiter's length of lookahead and
 * the current part's headers, never a part's body: memory is bounded and
 * does not depend on the body's size.
 *
 * What it accepts:
 * - the delimiter "--boundary" at the start of the body or after CRLF, then
 *   optional spaces and tabs and CRLF; "--boundary--" closes the body. A
 *   line that starts with "--boundary" but goes on with anything else is
 *   MALFORMED (RFC 2046: the boundary need only start a line to match).
 *   Preamble and epilogue are ignored; a body that closes without any part
 *   ("--boundary--") is well formed and has no parts.
 * - CRLF line ends only: a bare CR or LF in a delimiter line or in a part's
 *   headers is MALFORMED (browsers and curl send CRLF). Header names are
 *   case-insensitive, folded header lines (CRLF then space or tab) are
 *   unfolded, a byte below 0x20 other than tab (or 0x7f) in the headers is
 *   MALFORMED, bytes from 0x80 up are passed on as they are (not checked as
 *   UTF-8). Content-Disposition and Content-Type may appear once each; other
 *   headers are ignored.
 * - Content-Disposition: form-data, parameters in any order, values as
 *   tokens or quoted strings with backslash escapes; name and filename at
 *   most once each; unknown parameters ignored. filename*=charset'lang'value
 *   (RFC 8187, UTF-8 or ISO-8859-1, the latter turned into UTF-8) wins over
 *   filename; with another charset it is ignored. Of a filename only the
 *   last path component is kept (after the last '/' or '\'), "." and ".."
 *   become "". A quoted filename that starts with "X:\" or "\\" is a whole
 *   Windows path as old browsers sent it: its backslashes are separators,
 *   not escapes. A filename is not percent-decoded (browsers write a quote
 *   in it as %22), only filename* is.
 * A part's body is every byte between the CRLF that ends its headers and the
 * CRLF that starts the next delimiter. */
#ifndef SVC_MULTIPART_H
#define SVC_MULTIPART_H
#include <stddef.h>

#define MULTIPART_BOUNDARY_MAX	 70	/* RFC 2046 */
#define MULTIPART_HEADER_MAX	 8192	/* bytes of one part's headers */
#define MULTIPART_HEADERS_MAX	 32	/* header fields of one part */
#define MULTIPART_PARTS_MAX	 64

enum multipart_err {
	MULTIPART_OK,
	MULTIPART_MALFORMED,	/* not a well-formed body: multipart_error() says why */
	MULTIPART_LIMIT,	/* a part's headers too long, too many parts or headers */
	MULTIPART_STOPPED,	/* a callback returned -1 */
	MULTIPART_NOMEM,
	MULTIPART_ERR__MAX
};
extern const char *const multipart_err_names[MULTIPART_ERR__MAX];

/* The part about to start, from its headers. Strings are valid until
 * part_end; none holds a control character other than tab. */
struct multipart_part {
	const char	*name;		/* Content-Disposition: form-data; name="..." ("" when absent) */
	const char	*filename;	/* filename="..." or filename*=UTF-8''... decoded; NULL when absent */
	const char	*content_type;	/* the part's Content-Type, NULL when absent */
};

/* Each callback may be NULL and returns 0 to go on or -1 to stop the parser
 * (MULTIPART_STOPPED). part_data is never called with len 0, so an empty part
 * is part_begin then part_end; the pieces of a part's body may have any size
 * (as small as the pieces fed in). After an error no callback runs again:
 * part_end is not called for the part in progress. */
struct multipart_cb {
	int	(*part_begin)(void *arg, const struct multipart_part *);
	int	(*part_data)(void *arg, const char *data, size_t len);	/* the part's body, in pieces */
	int	(*part_end)(void *arg);
};

/* The boundary parameter of a Content-Type header value
 * ("multipart/form-data; boundary=..." quoted or not, case-insensitive type
 * and parameter name, RFC 2046 length 1-70): 0 and the boundary in out, or
 * -1 when the value is not multipart/form-data with a valid boundary (or it
 * does not fit outsz with its NUL). */
int	 multipart_boundary(const char *content_type, char *out, size_t outsz);

/* NULL when memory runs out or the boundary is not 1-70 characters. */
struct multipart *multipart_new(const char *boundary,
	    const struct multipart_cb *, void *arg);
/* Body bytes in order, in pieces of any size (1 byte to megabytes).
 * Callbacks run from inside. Once it returned an error, it returns that
 * error again without reading. */
enum multipart_err multipart_feed(struct multipart *, const char *data,
	    size_t len);
/* After the last byte: MULTIPART_OK only if the closing delimiter
 * ("--boundary--") was seen; else MALFORMED (truncated body), or the error
 * multipart_feed returned. */
enum multipart_err multipart_finish(struct multipart *);
/* Why the last error happened ("" while there is none). */
const char *multipart_error(const struct multipart *);
void	 multipart_free(struct multipart *);
#endif
