/* http.h: the request and response of one FastCGI exchange, independent of
 * libfcgi so handlers and the router can be tested without a web server. */
#ifndef SVC_HTTP_H
#define SVC_HTTP_H
#include "util/buf.h"
#include <jansson.h>
#include <stddef.h>

enum http_method {
	HTTP_GET,
	HTTP_POST,
	HTTP_PUT,
	HTTP_PATCH,
	HTTP_DELETE,
	HTTP_HEAD,
	HTTP_OPTIONS,
	HTTP_OTHER,
	HTTP_METHOD__MAX
};
extern const char *const http_method_names[HTTP_METHOD__MAX];

struct http_header {
	char	*name;
	char	*value;
};

/* Reads one request variable (CGI/FastCGI name such as "HTTP_IDEMPOTENCY_KEY"). */
typedef const char *(*http_param_fn)(void *, const char *name);
/* Reads up to n body bytes; returns bytes read, 0 at the end, -1 on error,
 * HTTP_READ_TIMEOUT when the body did not come in time. */
typedef long (*http_read_fn)(void *, char *, size_t n);
#define HTTP_READ_TIMEOUT (-2)

struct http_req {
	enum http_method method;
	const char	*method_text;
	char		 path[2048];	/* decoded of nothing: the raw path */
	const char	*query;		/* raw query string, "" when none */
	long long	 content_length;	/* -1 when absent */
	const char	*remote_addr;
	char		 client_ip[64];	/* after trusted_proxies */
	char		 request_id[80];	/* IDS_MAX */
	struct buf	 body;
	int		 body_read;
	http_param_fn	 param;
	http_read_fn	 read;
	void		*io;
};

/* Writes body bytes to the client; returns 0, or -1 when it went away. */
typedef int (*http_write_fn)(void *io, const char *, size_t);

struct http_resp {
	int		 status;
	/* A body too large to hold (CSV downloads): written by stream after
	 * the head, without Content-Length. stream_free releases the arg. */
	int		(*stream)(void *arg, http_write_fn, void *io);
	void		(*stream_free)(void *arg);
	void		*stream_arg;
	struct http_header headers[24];
	size_t		 nheaders;
	struct buf	 body;
	const char	*error_code;	/* for the log line */
};

const char *http_param(const struct http_req *, const char *);
/* Value of a request header by its HTTP name ("Idempotency-Key"). */
const char *http_header_in(const struct http_req *, const char *);
/* Reads the whole body into req->body up to max bytes: 0, -1 if it is
 * longer or could not be read, HTTP_READ_TIMEOUT if it came too slowly. */
int	 http_read_body(struct http_req *, size_t max);
/* Answers a failed http_read_body (rc): 413 file_too_large (longer than
 * max) or 408 request_timeout. */
void	 http_body_error(struct http_resp *, int rc, size_t max);
/* A path segment (a route's {} parameter), %XX-decoded ('+' stays). */
int	 http_path_decode(const char *segment, struct buf *out);
/* Value of a query parameter, percent-decoded, into out; 0 found, -1 not. */
int	 http_query_get(const char *query, const char *name, struct buf *out);

void	 http_resp_init(struct http_resp *);
void	 http_resp_free(struct http_resp *);
int	 http_set_header(struct http_resp *, const char *, const char *);
const char *http_resp_header(const struct http_resp *, const char *);
const char *http_status_text(int);
/* Serialises status line and headers into out (for the FastCGI stream). */
void	 http_format_head(const struct http_resp *, struct buf *out);

/* JSON bodies. http_json takes ownership of the object. */
void	 http_json(struct http_resp *, int status, json_t *);
/* { "error": { "code", "message", "details" } }; details may be NULL and
 * is taken over. The message is printf-formatted. */
void	 http_error(struct http_resp *, int status, const char *code,
	    json_t *details, const char *fmt, ...)
	    __attribute__((format(printf, 5, 6)));
#endif
