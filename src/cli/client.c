/* client.c: the one place svc talks HTTP (libcurl). A request carries the
 * key as "Authorization: Bearer", a JSON or multipart body (the multipart
 * one streamed from disk by curl_mime_filedata, with its Content-Length)
 * and, for creations, the caller's Idempotency-Key. A 429 is retried up to
 * CLIENT_RETRIES times after the wait its Retry-After header (else the
 * reset_at of either 429 body shape) asks for. A request that got no
 * answer is retried as often when sending it again cannot do anything
 * twice: when it never reached the server, when it is a GET or a DELETE,
 * or when it carries an Idempotency-Key (the server replays the first
 * answer). Redirects are not followed (the key would go along). */
#include "cli/client.h"
#include "cli/apierr.h"
#include "cli/version.h"
#include "util/strparse.h"
#include "util/timeutil.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define CLIENT_BODY_MAX (32 * 1024 * 1024)	/* an answer kept in memory */
#define CLIENT_MIMES 4

struct client {
	CURL			*curl;
	char			*base;
	char			*key;
	volatile sig_atomic_t	*stop;
	curl_mime		*mimes[CLIENT_MIMES];
	size_t			 nmimes;
};

/* One try of a request. */
struct client_try {
	struct client		*c;
	const struct client_req	*req;
	struct client_resp	*resp;
	char			 retry_after[32];
	int			 too_big;
	int			 sink_failed;
};

struct client *
client_new(const char *base_url, const char *api_key,
    volatile sig_atomic_t *stop)
{
	struct client *c;
	size_t n;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->stop = stop;
	if ((c->curl = curl_easy_init()) == NULL ||
	    (c->base = strdup(base_url)) == NULL ||
	    (api_key != NULL && (c->key = strdup(api_key)) == NULL)) {
		client_free(c);
		return NULL;
	}
	n = strlen(c->base);
	while (n > 0 && c->base[n - 1] == '/')
		c->base[--n] = '\0';
	return c;
}

void
client_free(struct client *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < c->nmimes; i++)
		curl_mime_free(c->mimes[i]);
	if (c->curl)
		curl_easy_cleanup(c->curl);
	free(c->base);
	if (c->key) {
		explicit_bzero(c->key, strlen(c->key));
		free(c->key);
	}
	free(c);
}

curl_mime *
client_mime(struct client *c)
{
	curl_mime *m;

	if (c->nmimes == CLIENT_MIMES || (m = curl_mime_init(c->curl)) == NULL)
		return NULL;
	c->mimes[c->nmimes++] = m;
	return m;
}

void
client_resp_init(struct client_resp *r)
{
	memset(r, 0, sizeof(*r));
	buf_init(&r->body, CLIENT_BODY_MAX);
}

void
client_resp_free(struct client_resp *r)
{
	buf_free(&r->body);
}

int
client_sleep(struct client *c, long ms)
{
	while (ms > 0) {
		if (c->stop && *c->stop)
			return -1;
		timeutil_nap_ms(ms > 100 ? 100 : ms);
		ms -= 100;
	}
	return c->stop && *c->stop ? -1 : 0;
}

static size_t
client_header(char *data, size_t size, size_t n, void *arg)
{
	struct client_try *t = arg;
	size_t len = size * n, k;
	char line[256], *colon, *value;

	if (len >= 5 && strncmp(data, "HTTP/", 5) == 0) {
		/* a new header block (after a 100 Continue, say) */
		t->retry_after[0] = '\0';
		t->resp->request_id[0] = '\0';
		t->resp->replayed = 0;
		return len;
	}
	k = len < sizeof(line) - 1 ? len : sizeof(line) - 1;
	memcpy(line, data, k);
	line[k] = '\0';
	if ((colon = strchr(line, ':')) == NULL)
		return len;
	*colon = '\0';
	value = strparse_trim(colon + 1);
	for (k = 0; value[k]; k++)
		if ((unsigned char)value[k] < 0x20)
			value[k] = '?';
	if (strcasecmp(line, "Retry-After") == 0)
		strparse_copy(t->retry_after, sizeof(t->retry_after), value);
	else if (strcasecmp(line, "X-Request-Id") == 0)
		strparse_copy(t->resp->request_id,
		    sizeof(t->resp->request_id), value);
	else if (strcasecmp(line, "Idempotent-Replayed") == 0)
		t->resp->replayed = strcasecmp(value, "true") == 0;
	return len;
}

static size_t
client_write(char *data, size_t size, size_t n, void *arg)
{
	struct client_try *t = arg;
	size_t len = size * n;
	long status = 0;

	curl_easy_getinfo(t->c->curl, CURLINFO_RESPONSE_CODE, &status);
	if (t->req->sink != NULL && status >= 200 && status < 300) {
		if (fwrite(data, 1, len, t->req->sink) != len) {
			t->sink_failed = errno ? errno : EIO;
			return 0;
		}
		t->resp->sunk += (long long)len;
		return len;
	}
	if (buf_append(&t->resp->body, data, len) == -1) {
		t->too_big = 1;
		return 0;
	}
	return len;
}

static int
client_progress(void *arg, curl_off_t a, curl_off_t b, curl_off_t c,
    curl_off_t d)
{
	struct client_try *t = arg;

	return t->c->stop && *t->c->stop ? 1 : 0;
}

/* Sets up the handle for one try; -1 when out of memory. */
static int
client_setup(struct client_try *t, struct curl_slist **hdrs)
{
	struct client *c = t->c;
	const struct client_req *req = t->req;
	struct buf url, h;
	int rc = -1;

	buf_init(&url, 64 * 1024);
	buf_init(&h, 64 * 1024);
	/* A new request starts from libcurl's defaults. A retry sets the
	 * same options again without a reset: after curl_easy_reset libcurl
	 * (7.88) sends a multipart body already read as empty, under its
	 * Content-Length, and the retry hangs. Kept, the body is rewound and
	 * sent again as it was (the same boundary, so the same
	 * Idempotency-Key body). */
	if (t->resp->tries == 1)
		curl_easy_reset(c->curl);
	if (buf_printf(&url, "%s%s", c->base, req->path) == -1)
		goto out;
	*hdrs = curl_slist_append(*hdrs, "Accept: application/json");
	if (c->key != NULL) {
		if (buf_printf(&h, "Authorization: Bearer %s", c->key) == -1)
			goto out;
		*hdrs = curl_slist_append(*hdrs, buf_str(&h));
		explicit_bzero(h.data, h.len);
		buf_reset(&h);
	}
	if (req->idempotency_key != NULL) {
		if (buf_printf(&h, "Idempotency-Key: %s",
		    req->idempotency_key) == -1)
			goto out;
		*hdrs = curl_slist_append(*hdrs, buf_str(&h));
	}
	if (req->json != NULL)
		*hdrs = curl_slist_append(*hdrs,
		    "Content-Type: application/json");
	if (*hdrs == NULL)
		goto out;
	curl_easy_setopt(c->curl, CURLOPT_URL, buf_str(&url));
	curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, *hdrs);
	curl_easy_setopt(c->curl, CURLOPT_USERAGENT, "svc/" SVC_CLI_VERSION);
	curl_easy_setopt(c->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT, 15L);
	if (req->mime != NULL || req->sink != NULL) {
		/* big transfers: give up only when nothing moves */
		curl_easy_setopt(c->curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
		curl_easy_setopt(c->curl, CURLOPT_LOW_SPEED_TIME, 120L);
	} else
		curl_easy_setopt(c->curl, CURLOPT_TIMEOUT, 300L);
	curl_easy_setopt(c->curl, CURLOPT_HEADERFUNCTION, client_header);
	curl_easy_setopt(c->curl, CURLOPT_HEADERDATA, t);
	curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, client_write);
	curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, t);
	curl_easy_setopt(c->curl, CURLOPT_XFERINFOFUNCTION, client_progress);
	curl_easy_setopt(c->curl, CURLOPT_XFERINFODATA, t);
	curl_easy_setopt(c->curl, CURLOPT_NOPROGRESS, 0L);
	if (strcmp(req->method, "POST") == 0) {
		if (req->mime != NULL)
			curl_easy_setopt(c->curl, CURLOPT_MIMEPOST, req->mime);
		else {
			curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS,
			    req->json ? req->json : "");
			curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE,
			    (curl_off_t)(req->json ? strlen(req->json) : 0));
		}
	} else if (strcmp(req->method, "GET") != 0)
		curl_easy_setopt(c->curl, CURLOPT_CUSTOMREQUEST, req->method);
	rc = 0;
out:
	buf_free(&url);
	buf_free(&h);
	return rc;
}

/* May a request that got no answer be sent again? */
static int
client_resendable(const struct client_req *req, CURLcode res)
{
	if (res == CURLE_COULDNT_CONNECT || res == CURLE_COULDNT_RESOLVE_HOST ||
	    res == CURLE_COULDNT_RESOLVE_PROXY)
		return 1;	/* it never reached the server */
	return strcmp(req->method, "GET") == 0 ||
	    strcmp(req->method, "DELETE") == 0 || req->idempotency_key != NULL;
}

/* Empties the sink for another try: -1 when it cannot be (a pipe). */
static int
client_sink_rewind(const struct client_req *req, struct client_resp *resp)
{
	if (req->sink == NULL || resp->sunk == 0)
		return 0;
	if (fflush(req->sink) != 0 || fseeko(req->sink, 0, SEEK_SET) == -1 ||
	    ftruncate(fileno(req->sink), 0) == -1)
		return -1;
	resp->sunk = 0;
	return 0;
}

enum client_rc
client_do(struct client *c, const struct client_req *req,
    struct client_resp *resp)
{
	struct curl_slist *hdrs;
	struct client_try t;
	struct apierr e;
	CURLcode res;
	long wait;

	for (resp->tries = 1;; resp->tries++) {
		memset(&t, 0, sizeof(t));
		t.c = c;
		t.req = req;
		t.resp = resp;
		hdrs = NULL;
		resp->status = 0;
		resp->error[0] = '\0';
		buf_reset(&resp->body);
		if (client_setup(&t, &hdrs) == -1) {
			curl_slist_free_all(hdrs);
			snprintf(resp->error, sizeof(resp->error),
			    "out of memory");
			return CLIENT_NETWORK;
		}
		res = curl_easy_perform(c->curl);
		curl_slist_free_all(hdrs);
		if (c->stop && *c->stop)
			return CLIENT_INTERRUPTED;
		if (res != CURLE_OK) {
			if (t.too_big)
				snprintf(resp->error, sizeof(resp->error),
				    "the answer is larger than %d MiB",
				    CLIENT_BODY_MAX >> 20);
			else if (t.sink_failed)
				snprintf(resp->error, sizeof(resp->error),
				    "writing the answer: %s",
				    strerror(t.sink_failed));
			else
				snprintf(resp->error, sizeof(resp->error),
				    "%s", curl_easy_strerror(res));
			if (t.too_big || t.sink_failed ||
			    resp->tries > CLIENT_RETRIES ||
			    !client_resendable(req, res) ||
			    client_sink_rewind(req, resp) == -1)
				return CLIENT_NETWORK;
			fprintf(stderr, "svc: no answer from the API (%s); "
			    "trying again in 1 s (retry %d of %d)\n",
			    resp->error, resp->tries, CLIENT_RETRIES);
			if (client_sleep(c, 1000) == -1)
				return CLIENT_INTERRUPTED;
			continue;
		}
		curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE,
		    &resp->status);
		if (resp->status != 429 || resp->tries > CLIENT_RETRIES)
			return CLIENT_OK;
		apierr_parse(resp->body.data, resp->body.len, &e);
		if ((wait = apierr_retry_wait(t.retry_after, &e,
		    time(NULL))) < 0)
			wait = 1;
		if (wait > CLIENT_WAIT_MAX)
			return CLIENT_OK;	/* too long to wait here */
		fprintf(stderr, "svc: rate limited (429); trying again in "
		    "%ld s (retry %d of %d)\n", wait, resp->tries,
		    CLIENT_RETRIES);
		if (client_sleep(c, wait * 1000) == -1)
			return CLIENT_INTERRUPTED;
	}
}
