/* unit_server.c: loopback ports and the re-run through a test's server
 * script, for the unit tests that bring servers of their own
 * (unit_server.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "unit_server.h"
#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int
unit_server_loopback(int type, int keep, unsigned *port)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, type, 0);

	assert_true(fd >= 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	*port = ntohs(sin.sin_port);
	if (!keep) {
		close(fd);
		return -1;
	}
	if (type == SOCK_STREAM)
		assert_int_equal(listen(fd, 8), 0);
	return fd;
}

void
unit_server_reexec(const char *name, char **argv)
{
	const char *srcdir = getenv("top_srcdir");
	char path[1024], noexec[64];
	size_t i, n;

	/* Called from main, outside any test: no cmocka assertions. */
	n = (size_t)snprintf(noexec, sizeof(noexec), "SVC_TEST_%s_NOEXEC",
	    name);
	if (n >= sizeof(noexec))
		return;
	for (i = 0; i < n; i++)
		noexec[i] = (char)toupper((unsigned char)noexec[i]);
	if (getenv(noexec) != NULL)
		return;
	if (srcdir == NULL)
		srcdir = getenv("srcdir");
	snprintf(path, sizeof(path), "%s/tests/integration/test_%s.sh",
	    srcdir != NULL ? srcdir : ".", name);
	if (access(path, R_OK) != 0)
		return;
	setenv(noexec, "1", 1);
	fflush(NULL);
	execl("/bin/sh", "sh", path, argv[0], (char *)NULL);
}
