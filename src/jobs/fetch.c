/* fetch.c: the libcurl set-up of outbound requests to customers' URLs
 * (fetch.h). The connection guard is an open-socket callback: libcurl asks
 * it for every socket it would connect, with the resolved address, and a
 * refused address gets no socket, so nothing is ever sent to it (libcurl
 * then tries the host's other addresses). */
#include "jobs/fetch.h"
#include "util/ipnet.h"
#include "util/log.h"
#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

const char *const fetch_err_names[FETCH_ERR__MAX] = {
	[FETCH_OK] = "ok",
	[FETCH_URL_REFUSED] = "url_refused",
	[FETCH_ADDRESS_REFUSED] = "address_refused",
	[FETCH_TOO_LARGE] = "too_large",
	[FETCH_TIMEOUT] = "timeout",
	[FETCH_RESOLVE] = "resolve_failed",
	[FETCH_CONNECT] = "connect_failed",
	[FETCH_TLS] = "tls_failed",
	[FETCH_FAILED] = "transfer_failed",
	[FETCH_NOMEM] = "out_of_memory",
	[FETCH_STOPPED] = "stopped",
	[FETCH_TOO_SLOW] = "too_slow",
};

/* What libcurl's speed check writes into the error buffer when it stops
 * a transfer (lib/speedcheck.c, the same since curl 7.x); it returns the
 * same CURLE_OPERATION_TIMEDOUT as the time limit, so the text is what
 * tells the two apart. */
#define FETCH_SLOW_TEXT "Operation too slow"


void
fetch_opts_from_conf(struct fetch_opts *o, const struct conf *c,
    long timeout_ms, size_t body_max)
{
	memset(o, 0, sizeof(*o));
	o->allow_private = conf_int(c, CONF_ALLOW_PRIVATE_URLS) != 0;
	o->ca_file = conf_str(c, CONF_CA_FILE);
	o->networks = conf_str(c, CONF_ALLOW_PRIVATE_URL_NETWORKS);
	o->ports = conf_str(c, CONF_ALLOW_URL_PORTS);
	o->timeout_ms = timeout_ms;
	o->body_max = body_max;
}

int
fetch_networks_valid(const struct conf *c)
{
	struct ipnet *nets = NULL;
	size_t n = 0;
	int rc;

	rc = ipnet_parse_list(conf_str(c, CONF_ALLOW_PRIVATE_URL_NETWORKS),
	    &nets, &n);
	free(nets);
	return rc == 0 && urlguard_ports_valid(conf_str(c,
	    CONF_ALLOW_URL_PORTS));
}

int
fetch_url_allowed(const struct conf *c, const char *url, const char **why)
{
	int allow = conf_int(c, CONF_ALLOW_PRIVATE_URLS) != 0;
	enum urlguard_reason r = urlguard_check(url, allow);

	if (r == URLGUARD_OK)
		r = urlguard_check_port(url, conf_str(c, CONF_ALLOW_URL_PORTS));
	*why = urlguard_message(r, allow);
	return r == URLGUARD_OK;
}

int
fetch_host_of(const char *url, char *out, size_t n)
{
	CURLU *u;
	char *host = NULL;
	size_t i, len;
	int rc = -1;

	if ((u = curl_url()) == NULL)
		return -1;
	if (curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
	    (len = strlen(host)) > 0 && len < n) {
		for (i = 0; i <= len; i++)
			out[i] = (char)tolower((unsigned char)host[i]);
		rc = 0;
	}
	curl_free(host);
	curl_url_cleanup(u);
	return rc;
}

/* The address libcurl is about to connect to, as an ipnet; -1 for a
 * family other than IPv4 and IPv6. */
static int
fetch_sockaddr(const struct curl_sockaddr *a, struct ipnet *ip, char *text,
    size_t n)
{
	const struct sockaddr_in *v4;
	const struct sockaddr_in6 *v6;

	if (a->family == AF_INET && a->addrlen >= sizeof(*v4)) {
		v4 = (const struct sockaddr_in *)&a->addr;
		if (inet_ntop(AF_INET, &v4->sin_addr, text, (socklen_t)n) ==
		    NULL)
			return -1;
	} else if (a->family == AF_INET6 && a->addrlen >= sizeof(*v6)) {
		v6 = (const struct sockaddr_in6 *)&a->addr;
		if (inet_ntop(AF_INET6, &v6->sin6_addr, text, (socklen_t)n) ==
		    NULL)
			return -1;
	} else
		return -1;
	return ipnet_parse_addr(text, ip);
}

/* CURLOPT_OPENSOCKETFUNCTION: a socket only for an allowed address. */
static curl_socket_t
fetch_open_socket(void *arg, curlsocktype purpose, struct curl_sockaddr *a)
{
	struct fetch *f = arg;
	struct ipnet ip;
	char text[INET6_ADDRSTRLEN];

	text[0] = '\0';
	if (purpose != CURLSOCKTYPE_IPCXN ||
	    fetch_sockaddr(a, &ip, text, sizeof(text)) == -1 ||
	    (!urlguard_addr_allowed(&ip, f->allow_private) &&
	    !ipnet_list_contains(f->networks, f->nnetworks, &ip))) {
		f->refused = 1;
		snprintf(f->refused_addr, sizeof(f->refused_addr), "%s",
		    text[0] ? text : "(not an IP address)");
		/* the operator's record (inet_ntop's text: clean) */
		log_warn("event=url_address_refused address=%s",
		    f->refused_addr);
		return CURL_SOCKET_BAD;
	}
	return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

/* A piece of a streamed body: only a 2xx response's, body_max bytes in
 * all (the length announced is checked at the first piece); another
 * response's is dropped. */
static size_t
fetch_write_sink(struct fetch *f, const char *p, size_t n)
{
	curl_off_t announced = -1;
	long status = 0;

	if (f->skipped > 0) {
		f->skipped += (long long)n;
		f->skip_stop = f->skipped > FETCH_SKIP_MAX;
		return f->skip_stop ? 0 : n;
	}
	if (f->streamed == 0) {
		if (curl_easy_getinfo(f->easy, CURLINFO_RESPONSE_CODE,
		    &status) != CURLE_OK || status < 200 || status > 299) {
			f->skipped = (long long)n;
			f->skip_stop = f->skipped > FETCH_SKIP_MAX;
			return f->skip_stop ? 0 : n;
		}
		if (curl_easy_getinfo(f->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T,
		    &announced) == CURLE_OK && announced > (curl_off_t)
		    f->body_max) {
			f->too_large = 1;
			return 0;
		}
	}
	if ((unsigned long long)f->streamed + n > f->body_max) {
		f->too_large = 1;
		return 0;
	}
	f->streamed += (long long)n;
	if (f->sink(f->sink_arg, p, n) == -1) {
		f->stopped = 1;
		return 0;
	}
	return n;
}

/* CURLOPT_WRITEFUNCTION: keeps body_max bytes, then stops the transfer. */
static size_t
fetch_write(char *p, size_t size, size_t nmemb, void *arg)
{
	struct fetch *f = arg;
	size_t n = size * nmemb;

	if (f->sink != NULL)
		return n == 0 ? 0 : fetch_write_sink(f, p, n);
	if (buf_append(&f->body, p, n) == -1) {
		f->too_large = 1;
		return 0;	/* CURLE_WRITE_ERROR */
	}
	return n;
}

int
fetch_init(struct fetch *f, const struct fetch_opts *o)
{
	const char *protocols = o->allow_private && !o->https_only ?
	    "https,http" : "https";
	CURL *h;
	int bad = 0;

	memset(f, 0, sizeof(*f));
	buf_init(&f->body, o->body_max);
	f->allow_private = o->allow_private;
	f->https_only = o->https_only;
	f->body_max = o->body_max;
	f->min_rate = o->min_rate;
	f->min_rate_seconds = o->min_rate_seconds;
	if (o->networks != NULL && ipnet_parse_list(o->networks, &f->networks,
	    &f->nnetworks) == -1)
		return -1;
	if ((f->ports = strdup(o->ports != NULL ? o->ports : "")) == NULL) {
		fetch_free(f);
		return -1;
	}
	if ((h = f->easy = curl_easy_init()) == NULL) {
		fetch_free(f);
		return -1;
	}
	bad |= curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, protocols) !=
	    CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, protocols) !=
	    CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK;
	/* an empty proxy: none, whatever the environment says */
	bad |= curl_easy_setopt(h, CURLOPT_PROXY, "") != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, o->timeout_ms) !=
	    CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, o->timeout_ms) !=
	    CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION,
	    fetch_open_socket) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, f) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, fetch_write) !=
	    CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_WRITEDATA, f) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_ERRORBUFFER, f->errbuf) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_USERAGENT, "svc/" PACKAGE_VERSION) !=
	    CURLE_OK;
	if (o->min_rate > 0 && o->min_rate_seconds > 0) {
		bad |= curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT,
		    o->min_rate) != CURLE_OK;
		bad |= curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME,
		    o->min_rate_seconds) != CURLE_OK;
	}
	if (o->ca_file != NULL && o->ca_file[0] != '\0')
		bad |= curl_easy_setopt(h, CURLOPT_CAINFO, o->ca_file) !=
		    CURLE_OK;
	if (bad) {
		fetch_free(f);
		return -1;
	}
	return 0;
}

void
fetch_stream(struct fetch *f, fetch_sink_fn sink, void *arg)
{
	f->sink = sink;
	f->sink_arg = arg;
}

enum fetch_err
fetch_url(struct fetch *f, const char *url)
{
	buf_reset(&f->body);
	f->refused = f->too_large = f->skip_stop = f->stopped = 0;
	f->streamed = f->skipped = 0;
	f->refused_addr[0] = f->errbuf[0] = '\0';
	f->url_reason = urlguard_check(url, f->allow_private);
	/* the guard let http or https through: the scheme is one of them */
	if (f->url_reason == URLGUARD_OK && f->https_only &&
	    strncasecmp(url, "https:", 6) != 0)
		f->url_reason = URLGUARD_BAD_SCHEME;
	if (f->url_reason == URLGUARD_OK)
		f->url_reason = urlguard_check_port(url, f->ports);
	if (f->url_reason != URLGUARD_OK)
		return f->url_reason == URLGUARD_NOMEM ? FETCH_NOMEM :
		    FETCH_URL_REFUSED;
	if (curl_easy_setopt(f->easy, CURLOPT_URL, url) != CURLE_OK)
		return FETCH_NOMEM;
	return FETCH_OK;
}

enum fetch_err
fetch_result(struct fetch *f, CURLcode rc, long *status)
{
	*status = 0;
	if (curl_easy_getinfo(f->easy, CURLINFO_RESPONSE_CODE, status) !=
	    CURLE_OK)
		*status = 0;
	if (rc == CURLE_OK)
		return FETCH_OK;
	if (rc == CURLE_WRITE_ERROR && f->too_large)
		return FETCH_TOO_LARGE;
	if (rc == CURLE_WRITE_ERROR && f->skip_stop)
		return FETCH_OK;	/* a response whose body is not wanted */
	*status = 0;
	if ((rc == CURLE_WRITE_ERROR && f->stopped) ||
	    rc == CURLE_ABORTED_BY_CALLBACK)
		return FETCH_STOPPED;
	if (f->refused && (rc == CURLE_COULDNT_CONNECT ||
	    rc == CURLE_OPERATION_TIMEDOUT))
		return FETCH_ADDRESS_REFUSED;
	switch (rc) {
	case CURLE_OPERATION_TIMEDOUT:
		return strncmp(f->errbuf, FETCH_SLOW_TEXT,
		    strlen(FETCH_SLOW_TEXT)) == 0 ? FETCH_TOO_SLOW :
		    FETCH_TIMEOUT;
	case CURLE_COULDNT_RESOLVE_HOST:
		return FETCH_RESOLVE;
	case CURLE_COULDNT_CONNECT:
		return FETCH_CONNECT;
	case CURLE_OUT_OF_MEMORY:
		return FETCH_NOMEM;
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_ISSUER_ERROR:
	case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
	case CURLE_SSL_INVALIDCERTSTATUS:
		return FETCH_TLS;
	default:
		return FETCH_FAILED;
	}
}

const char *
fetch_error_text(const struct fetch *f, enum fetch_err e)
{
	if (e == FETCH_URL_REFUSED)
		return urlguard_message(f->url_reason, f->allow_private &&
		    !f->https_only);
	if (e == FETCH_ADDRESS_REFUSED)
		return "refused address";
	if (f->errbuf[0] != '\0')
		return f->errbuf;
	return e < FETCH_ERR__MAX ? fetch_err_names[e] : "";
}

void
fetch_free(struct fetch *f)
{
	if (f->easy != NULL)
		curl_easy_cleanup(f->easy);
	f->easy = NULL;
	free(f->networks);
	f->networks = NULL;
	free(f->ports);
	f->ports = NULL;
	f->nnetworks = 0;
	buf_free(&f->body);
}
