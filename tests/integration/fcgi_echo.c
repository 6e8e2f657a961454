/* fcgi_echo.c: a tiny FastCGI responder for the integration tests of the web
 * server snippets and contrib/stack.sh. It answers every request with
 * text/plain lines "NAME=value" for the CGI variables the API depends on,
 * plus "BODY_BYTES=n" (the request body it read) and "PID=n". Started with
 * a listening socket on fd 0 (lighttpd bin-path, mod_fcgid). SVC_CONF is
 * the process environment given by the web server (FCGI_Accept replaces
 * environ with each request's variables, so it is read before the loop). */
#include <fcgi_stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *const names[] = {
	"REQUEST_METHOD", "REQUEST_URI", "SCRIPT_NAME", "PATH_INFO",
	"QUERY_STRING", "CONTENT_TYPE", "CONTENT_LENGTH", "REMOTE_ADDR",
	"HTTP_AUTHORIZATION", "HTTP_IDEMPOTENCY_KEY", NULL
};

int
main(void)
{
	char chunk[65536];
	/* the original environment's strings stay valid after FCGI_Accept */
	const char *svc_conf = getenv("SVC_CONF");
	size_t n, total;
	int i;

	while (FCGI_Accept() >= 0) {
		total = 0;
		while ((n = fread(chunk, 1, sizeof(chunk), stdin)) > 0)
			total += n;
		printf("Status: 200 OK\r\nContent-Type: text/plain\r\n"
		    "X-Request-Id: echo-%ld\r\n\r\n", (long)getpid());
		for (i = 0; names[i] != NULL; i++) {
			const char *v = getenv(names[i]);

			printf("%s=%s\n", names[i], v ? v : "");
		}
		printf("SVC_CONF=%s\nBODY_BYTES=%lu\nPID=%ld\n",
		    svc_conf ? svc_conf : "", (unsigned long)total,
		    (long)getpid());
	}
	return 0;
}
