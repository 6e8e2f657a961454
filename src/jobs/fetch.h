/* fetch.h: outbound requests to URLs that customers give (webhook and
 * callback deliveries, the download of an upload's source_url): a
 * libcurl easy handle set up so that it reaches only what the SSRF guard
 * (util/urlguard.h) allows. The URL must pass urlguard_check (https, and
 * http only with allow_private_urls and without https_only); every
 * address libcurl resolves is checked when its socket is opened, so a
 * name that resolves to a loopback, private or reserved address is
 * refused whatever the URL said (unless it is in
 * allow_private_url_networks); redirects are never followed (a caller
 * that follows them does so by hand, calling fetch_url for each hop,
 * which checks it again); no proxy from the environment; one time limit
 * for the whole transfer; optionally a minimum transfer rate (libcurl's
 * CURLOPT_LOW_SPEED_LIMIT and _TIME: a server that trickles is dropped
 * after min_rate_seconds, not kept for the whole time limit); at most
 * body_max bytes of the response body are read (into f->body, or handed
 * to a sink piece by piece with fetch_stream). The caller adds what its
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
	const char	*networks;	/* allow_private_url_networks */
	const char	*ports;		/* allow_url_ports */
	long		 timeout_ms;	/* the whole transfer */
	size_t		 body_max;	/* response body bytes read at most */
	int		 https_only;	/* no http even with allow_private */
	long		 min_rate;	/* bytes/s at least (0: no minimum) */
	long		 min_rate_seconds; /* ... averaged over this long */
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
	FETCH_STOPPED,		/* the sink or a progress callback stopped it */
	FETCH_TOO_SLOW,		/* slower than min_rate for min_rate_seconds */
	FETCH_ERR__MAX
};
extern const char *const fetch_err_names[FETCH_ERR__MAX];

/* A sink of a streamed body (fetch_stream): 0 to go on, -1 to stop. */
typedef int (*fetch_sink_fn)(void *arg, const void *data, size_t len);

struct fetch {
	CURL			*easy;
	struct buf		 body;		/* the body read, body_max at most */
	int			 allow_private;
	struct ipnet		*networks;	/* private ones allowed */
	size_t			 nnetworks;
	int			 https_only;
	char			*ports;		/* allow_url_ports (a copy) */
	int			 refused;	/* an address was refused */
	int			 too_large;
	fetch_sink_fn		 sink;		/* NULL: the body goes to body */
	void			*sink_arg;
	size_t			 body_max;
	long long		 streamed;	/* bytes handed to the sink */
	long long		 skipped;	/* bytes of a body not 2xx */
	int			 skip_stop;	/* stopped past FETCH_SKIP_MAX */
	int			 stopped;	/* the sink said -1 */
	long			 min_rate;	/* fetch_opts' */
	long			 min_rate_seconds;
	char			 refused_addr[64];
	enum urlguard_reason	 url_reason;	/* after FETCH_URL_REFUSED */
	char			 errbuf[CURL_ERROR_SIZE];
};

/* The options from svc.conf: allow_private_urls,
 * allow_private_url_networks, allow_url_ports, ca_file. */
void	 fetch_opts_from_conf(struct fetch_opts *, const struct conf *,
	    long timeout_ms, size_t body_max);
/* Whether allow_private_url_networks is a list of addresses or CIDR
 * networks (or empty), and allow_url_ports a list of ports. */
int	 fetch_networks_valid(const struct conf *);
/* Whether url may be given as an outbound URL (urlguard_check with the
 * setting allow_private_urls, and urlguard_check_port with
 * allow_url_ports); *why says what is wrong ("" when it may). */
int	 fetch_url_allowed(const struct conf *, const char *url,
	    const char **why);
/* The host of url as libcurl reads it, lower-cased, into out (n bytes):
 * 0, or -1 when there is none or it does not fit. */
int	 fetch_host_of(const char *url, char *out, size_t n);

/* Makes the easy handle (f->easy) with the options every request shares:
 * 0, or -1 when out of memory or o->networks is not a list of networks
 * (svc-worker checks it at start: fetch_networks_valid). libcurl keeps
 * f's address for its callbacks: f must not move until fetch_free. */
int	 fetch_init(struct fetch *, const struct fetch_opts *);
/* Hands the body of a 2xx response to sink as it comes (nothing is kept
 * in f->body), body_max bytes in all: a body announced or found larger
 * stops the transfer (FETCH_TOO_LARGE). The body of any other response
 * is read and dropped, FETCH_SKIP_MAX bytes at most: past that the
 * transfer stops, and fetch_result still gives FETCH_OK with its status
 * (a redirect's target is CURLINFO_REDIRECT_URL once the transfer has
 * ended well, so a redirect with a longer body has none). */
#define FETCH_SKIP_MAX (64 * 1024)
void	 fetch_stream(struct fetch *, fetch_sink_fn, void *arg);
/* Sets the URL once urlguard_check allows it (FETCH_OK), else
 * FETCH_URL_REFUSED with f->url_reason (URLGUARD_BAD_SCHEME for http
 * with https_only); the body read so far and the flags start again (a
 * redirect followed by hand calls this per hop; the bytes streamed are
 * the caller's to count). */
enum fetch_err fetch_url(struct fetch *, const char *url);
/* What a finished transfer came to, from libcurl's result rc; *status is
 * the response status (0 when no response came). FETCH_STOPPED when the
 * sink returned -1 or a CURLOPT_XFERINFOFUNCTION the caller set stopped
 * it. */
enum fetch_err fetch_result(struct fetch *, CURLcode rc, long *status);
/* A short text for logs and attempt records: libcurl's message, or what
 * the guard refused. A refused address is "refused address", never the
 * address itself (the customer sees this text; the address is in the
 * operator's log, event=url_address_refused). */
const char *fetch_error_text(const struct fetch *, enum fetch_err);
void	 fetch_free(struct fetch *);
#endif
