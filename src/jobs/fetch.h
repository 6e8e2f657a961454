/* fetch.h: outbound requests to URLs that customers give (webhook and
 * callback deliveries; later the download of an upload's source_url): a
 * libcurl easy handle set up so that it reaches only what the SSRF guard
 * (util/urlguard.h) allows. The URL must pass urlguard_check (https, and
 * http only with allow_private_urls); every address libcurl resolves is
 * checked when its socket is opened, so a name that resolves to a
 * loopback, private or reserved address is refused whatever the URL said;
 * redirects are never followed (a caller that follows them does so by
 * hand, calling fetch_url for each hop, which checks it again); no proxy
 * from the environment; one time limit for the whole transfer; at most
 * body_max bytes of the response body are read. The caller adds what its
 * request needs (method, body, headers) and runs the handle, alone or in
 * a multi handle. */
#ifndef SVC_FETCH_H
#define SVC_FETCH_H
#include "util/buf.h"
#include "util/conf.h"
#include "util/urlguard.h"
#include <curl/curl.h>
#include <stddef.h>

struct fetch_opts {
	int		 allow_private;	/* allow_private_urls */
	const char	*ca_file;	/* NULL or "": the system's CAs */
	long		 timeout_ms;	/* the whole transfer */
	size_t		 body_max;	/* response body bytes read at most */
};

enum fetch_err {
	FETCH_OK,		/* a response came, whatever its status */
	FETCH_URL_REFUSED,	/* urlguard_check refused the URL */
	FETCH_ADDRESS_REFUSED,	/* the host resolved to addresses not allowed */
	FETCH_TOO_LARGE,	/* the body passed body_max (the status is known) */
	FETCH_TIMEOUT,
	FETCH_RESOLVE,		/* the host name did not resolve */
	FETCH_CONNECT,
	FETCH_TLS,		/* handshake or certificate */
	FETCH_FAILED,		/* any other failure of the transfer */
	FETCH_NOMEM,
	FETCH_ERR__MAX
};
extern const char *const fetch_err_names[FETCH_ERR__MAX];

struct fetch {
	CURL			*easy;
	struct buf		 body;		/* the body read, body_max at most */
	int			 allow_private;
	int			 refused;	/* an address was refused */
	int			 too_large;
	char			 refused_addr[64];
	enum urlguard_reason	 url_reason;	/* after FETCH_URL_REFUSED */
	char			 errbuf[CURL_ERROR_SIZE];
};

/* The options from svc.conf: allow_private_urls, ca_file. */
void	 fetch_opts_from_conf(struct fetch_opts *, const struct conf *,
	    long timeout_ms, size_t body_max);
/* Whether url may be given as an outbound URL (urlguard_check with the
 * setting allow_private_urls); *why says what is wrong ("" when it may). */
int	 fetch_url_allowed(const struct conf *, const char *url,
	    const char **why);
/* The host of url as libcurl reads it, lower-cased, into out (n bytes):
 * 0, or -1 when there is none or it does not fit. */
int	 fetch_host_of(const char *url, char *out, size_t n);

/* Makes the easy handle (f->easy) with the options every request shares:
 * 0, or -1 when out of memory. libcurl keeps f's address for its
 * callbacks: f must not move until fetch_free. */
int	 fetch_init(struct fetch *, const struct fetch_opts *);
/* Sets the URL once urlguard_check allows it (FETCH_OK), else
 * FETCH_URL_REFUSED with f->url_reason; the body read so far and the
 * flags start again (a redirect followed by hand calls this per hop). */
enum fetch_err fetch_url(struct fetch *, const char *url);
/* What a finished transfer came to, from libcurl's result rc; *status is
 * the response status (0 when no response came). */
enum fetch_err fetch_result(struct fetch *, CURLcode rc, long *status);
/* A short text for logs and attempt records: libcurl's message, or what
 * the guard refused. */
const char *fetch_error_text(const struct fetch *, enum fetch_err);
void	 fetch_free(struct fetch *);
#endif
