/* client.h: svc's HTTP client (libcurl): one request to the API with the
 * key, JSON or multipart bodies, answers collected or streamed to a file,
 * 429 answers retried up to twice after Retry-After, and requests that got
 * no answer retried when that is safe. */
#ifndef SVC_CLI_CLIENT_H
#define SVC_CLI_CLIENT_H
#include <curl/curl.h>
#include <signal.h>
#include <stdio.h>
#include "util/buf.h"

#define CLIENT_RETRIES 2		/* after the first try */
#define CLIENT_WAIT_MAX 120		/* seconds a retry may wait */

enum client_rc {
	CLIENT_OK,		/* an HTTP answer, whatever its status */
	CLIENT_NETWORK,		/* no answer: resp.error says why */
	CLIENT_INTERRUPTED,	/* *stop was set while it ran */
	CLIENT__MAX
};

struct client_req {
	const char	*method;	/* GET, POST, DELETE */
	const char	*path;		/* "/v1/..." with its query */
	const char	*json;		/* a JSON body, or NULL */
	curl_mime	*mime;		/* a multipart body (client_mime), or NULL */
	const char	*idempotency_key;
	FILE		*sink;		/* a 2xx body is written here, not kept */
};

struct client_resp {
	long		 status;
	struct buf	 body;		/* the body (of a non-2xx one with a sink) */
	char		 request_id[96];
	int		 replayed;	/* Idempotent-Replayed: true */
	int		 tries;
	long long	 sunk;		/* octets written to the sink */
	char		 error[CURL_ERROR_SIZE + 96];
};

struct client;

/* stop: set (by a signal handler) to abandon a request or a wait. */
struct client *client_new(const char *base_url, const char *api_key,
	    volatile sig_atomic_t *stop);
void	 client_free(struct client *);
/* A multipart body for client_req.mime (freed by client_free). */
curl_mime *client_mime(struct client *);
void	 client_resp_init(struct client_resp *);
void	 client_resp_free(struct client_resp *);
enum client_rc client_do(struct client *, const struct client_req *,
	    struct client_resp *);
/* Sleeps ms milliseconds unless *stop is set first: 0, or -1 stopped. */
int	 client_sleep(struct client *, long ms);
#endif
