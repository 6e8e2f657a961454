/* fcgi_hello.c: the bare libfcgi responder that tests/bench/bench.sh
 * compares svc-api with. It has svc-api's process model and nothing else:
 * started by the web server with a listening socket on fd 0, a master forks
 * api_workers children (read from the svc.conf named by SVC_CONF, or -n N),
 * and each child runs FCGX_Accept_r/FCGX_Finish_r on the shared socket and
 * answers every request with a fixed small JSON body. No database, no
 * routing, no logging. The master only forwards SIGTERM and waits. */
#include <fcgiapp.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define HELLO_MAX_WORKERS 512

static volatile sig_atomic_t got_term;

static void
hello_on_term(int sig)
{
	(void)sig;
	got_term = 1;
}

/* "api_workers = N" from the svc.conf file, 4 (svc-api's default) if the
 * file or the setting is missing. */
static long
hello_workers_from_conf(const char *path)
{
	char line[512], *p, *end;
	long n = 4, v;
	FILE *f;

	if (path == NULL || (f = fopen(path, "r")) == NULL)
		return n;
	while (fgets(line, sizeof(line), f) != NULL) {
		p = line + strspn(line, " \t");
		if (strncmp(p, "api_workers", 11) != 0)
			continue;
		p += 11;
		p += strspn(p, " \t");
		if (*p++ != '=')
			continue;
		errno = 0;
		v = strtol(p, &end, 10);
		if (errno == 0 && end != p && v >= 1 && v <= HELLO_MAX_WORKERS)
			n = v;
	}
	fclose(f);
	return n;
}

static void
hello_serve(void)
{
	static const char resp[] =
	    "Status: 200 OK\r\n"
	    "Content-Type: application/json; charset=utf-8\r\n"
	    "\r\n"
	    "{\"success\":true,\"hello\":\"world\"}\n";
	FCGX_Request fr;

	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	if (FCGX_Init() != 0 || FCGX_InitRequest(&fr, 0, 0) != 0)
		_exit(1);
	while (FCGX_Accept_r(&fr) >= 0) {
		FCGX_PutStr(resp, (int)sizeof(resp) - 1, fr.out);
		FCGX_Finish_r(&fr);
	}
	_exit(0);
}

int
main(int argc, char **argv)
{
	pid_t pids[HELLO_MAX_WORKERS], pid;
	struct sigaction sa;
	long n = 0;
	int i, status, left;

	if (argc == 3 && strcmp(argv[1], "-n") == 0)
		n = strtol(argv[2], NULL, 10);
	if (n < 1 || n > HELLO_MAX_WORKERS)
		n = hello_workers_from_conf(getenv("SVC_CONF"));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = hello_on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	for (i = 0; i < n; i++) {
		if ((pid = fork()) == 0) {
			prctl(PR_SET_PDEATHSIG, SIGTERM);
			if (getppid() == 1)
				_exit(0);
			hello_serve();
		}
		pids[i] = pid;
	}
	while (!got_term) {
		pid = wait(&status);
		if (pid == -1 && errno == ECHILD)
			return 1;	/* all children gone */
	}
	for (i = 0; i < n; i++)
		if (pids[i] > 0)
			kill(pids[i], SIGTERM);
	for (left = (int)n; left > 0; left--)
		if (wait(&status) == -1 && errno == ECHILD)
			break;
	return 0;
}
