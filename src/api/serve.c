/* serve.c: the FastCGI loop of one responder process. It adapts libfcgi's
 * request to struct http_req, lets the router answer, writes the response
 * and logs one line per request. SIGTERM while idle exits at once; during a
 * request it exits after the response has been written. */
#include "api/serve.h"
#include "api/router.h"
#include "util/ids.h"
#include "util/log.h"
#include "util/strparse.h"
#include "util/timeutil.h"
#include <fcgiapp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static volatile sig_atomic_t serve_busy;
static volatile sig_atomic_t serve_stop;

/* One request's FastCGI exchange and the time its body must be in by. */
struct serve_io {
	FCGX_Request	*fr;
	int64_t		 deadline;	/* timeutil_mono_ms */
};

static void
serve_on_term(int sig)
{
	(void)sig;
	if (!serve_busy)
		_exit(0);
	serve_stop = 1;
}

static const char *
serve_param(void *io, const char *name)
{
	return FCGX_GetParam(name, ((struct serve_io *)io)->fr->envp);
}

/* Body reads stop at the request's deadline. What libfcgi has buffered
 * is taken at once; when nothing is, one byte is asked for, which makes
 * libfcgi read the socket (once per FastCGI record) with SO_RCVTIMEO set to
 * the time left: so the deadline is checked between records, and a peer
 * trickling its body holds this responder for api_body_timeout_ms at most.
 * (A larger request would let libfcgi loop on the socket for as long as
 * bytes keep coming, however slowly.) */
static long
serve_read(void *io, char *p, size_t n)
{
	struct serve_io *sio = io;
	FCGX_Stream *in = sio->fr->in;
	int64_t left = sio->deadline - timeutil_mono_ms();
	size_t avail = (size_t)(in->stop - in->rdNext);
	struct timeval tv;
	int got;

	if (left <= 0)
		return HTTP_READ_TIMEOUT;
	if (avail == 0) {
		tv.tv_sec = (time_t)(left / 1000);
		tv.tv_usec = (suseconds_t)(left % 1000 * 1000);
		setsockopt(sio->fr->ipcFd, SOL_SOCKET, SO_RCVTIMEO, &tv,
		    sizeof(tv));
		n = 1;
	} else if (n > avail)
		n = avail;
	got = FCGX_GetStr(p, (int)n, in);
	if (got < 0 || FCGX_GetError(in) != 0)
		return timeutil_mono_ms() >= sio->deadline ? HTTP_READ_TIMEOUT :
		    -1;
	return got;
}

static int
serve_write(void *io, const char *p, size_t n)
{
	struct serve_io *sio = io;

	return FCGX_PutStr(p, (int)n, sio->fr->out) == (int)n ? 0 : -1;
}

static enum http_method
serve_method(const char *m)
{
	int i;

	for (i = 0; i < HTTP_OTHER; i++)
		if (strcmp(m, http_method_names[i]) == 0)
			return (enum http_method)i;
	return HTTP_OTHER;
}

/* A client's X-Request-Id is kept when it is short and plain. */
static void
serve_request_id(struct http_req *req)
{
	const char *given = http_header_in(req, "X-Request-Id");
	size_t i, n;

	if (given && (n = strlen(given)) > 0 && n <= 64) {
		for (i = 0; i < n; i++) {
			char ch = given[i];
			if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')
			    || (ch >= '0' && ch <= '9') || ch == '-' ||
			    ch == '_' || ch == '.'))
				break;
		}
		if (i == n) {
			memcpy(req->request_id, given, n + 1);
			return;
		}
	}
	if (ids_new("req", req->request_id) == -1)
		snprintf(req->request_id, sizeof(req->request_id), "req_%ld",
		    (long)getpid());
}

static void
serve_fill(struct serve_io *fr, struct http_req *req)
{
	const char *uri, *m, *cl, *q;
	long v;
	size_t n;

	memset(req, 0, sizeof(*req));
	req->param = serve_param;
	req->read = serve_read;
	req->io = fr;
	m = serve_param(fr, "REQUEST_METHOD");
	req->method_text = m ? m : "GET";
	req->method = serve_method(req->method_text);
	/* REQUEST_URI is the path as the client sent it, whatever
	 * SCRIPT_NAME/PATH_INFO split the web server made. */
	uri = serve_param(fr, "REQUEST_URI");
	if (uri == NULL)
		uri = "/";
	n = strcspn(uri, "?");
	if (n >= sizeof(req->path))
		n = sizeof(req->path) - 1;
	memcpy(req->path, uri, n);
	req->path[n] = '\0';
	q = serve_param(fr, "QUERY_STRING");
	req->query = q ? q : "";
	cl = serve_param(fr, "CONTENT_LENGTH");
	req->content_length = -1;
	if (cl && *cl && strparse_long(cl, 0, 0x7fffffffL, &v) == 0)
		req->content_length = v;
	req->remote_addr = serve_param(fr, "REMOTE_ADDR");
	serve_request_id(req);
}

static void
serve_one(struct api_ctx *ctx, FCGX_Request *req_fr)
{
	struct http_req req;
	struct http_resp resp;
	struct buf head, line;
	char account[IDS_MAX];
	int64_t t0 = timeutil_mono_ms();
	struct serve_io io = { req_fr, t0 + conf_int(ctx->conf,
	    CONF_API_BODY_TIMEOUT_MS) };
	struct serve_io *fr = &io;

	serve_fill(fr, &req);
	http_resp_init(&resp);
	router_dispatch(ctx, &req, &resp, account);
	http_set_header(&resp, "X-Request-Id", req.request_id);
	buf_init(&head, 64 * 1024);
	http_format_head(&resp, &head);
	FCGX_PutStr(head.data, (int)head.len, fr->fr->out);
	if (req.method != HTTP_HEAD && resp.stream != NULL &&
	    resp.stream(resp.stream_arg, serve_write, fr) == -1)
		log_warn("event=stream_failed req=%s", req.request_id);
	else if (req.method != HTTP_HEAD && resp.body.len)
		FCGX_PutStr(resp.body.data, (int)resp.body.len, fr->fr->out);
	/* The connection's next reads (if the web server keeps it) have no
	 * deadline until the next request sets one. */
	setsockopt(fr->fr->ipcFd, SOL_SOCKET, SO_RCVTIMEO,
	    &(struct timeval){ 0, 0 }, sizeof(struct timeval));
	buf_init(&line, 4096);
	log_quote(&line, req.path, 200);
	log_info("event=request req=%s method=%s path=%s status=%d ms=%lld "
	    "ip=%s account=%s%s%s", req.request_id, req.method_text,
	    buf_str(&line), resp.status, (long long)(timeutil_mono_ms() - t0),
	    req.client_ip[0] ? req.client_ip : "-",
	    account[0] ? account : "-",
	    resp.error_code ? " error=" : "",
	    resp.error_code ? resp.error_code : "");
	buf_free(&line);
	buf_free(&head);
	buf_free(&req.body);
	http_resp_free(&resp);
}

int
serve_loop(const struct conf *c, int listen_fd, unsigned long max_requests,
    const struct api_shared *sh)
{
	struct api_ctx ctx;
	struct sigaction sa;
	FCGX_Request fr;
	struct buf err;
	unsigned long served = 0;

	buf_init(&err, 512);
	if (router_ctx_init(&ctx, c, sh, &err) == -1) {
		log_error("event=start_failed error=\"%s\"", buf_str(&err));
		buf_free(&err);
		return 1;
	}
	buf_free(&err);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = serve_on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (FCGX_Init() != 0 || FCGX_InitRequest(&fr, listen_fd, 0) != 0) {
		log_error("event=start_failed error=\"FastCGI init\"");
		return 1;
	}
	while (!serve_stop) {
		if (FCGX_Accept_r(&fr) < 0)
			break;
		serve_busy = 1;
		serve_one(&ctx, &fr);
		FCGX_Finish_r(&fr);
		/* the answer has left: entries left to abandon go now if the
		 * database answered this request */
		if (ctx.db != NULL && !db_unreachable(ctx.db))
			api_idempotency_flush(&ctx);
		serve_busy = 0;
		if (max_requests && ++served >= max_requests)
			break;
	}
	router_ctx_free(&ctx);
	return 0;
}
