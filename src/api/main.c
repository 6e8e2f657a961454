/* main.c: svc-api, the FastCGI responder. Either it is given a socket
 * (-s unix:PATH, -s tcp:PORT on loopback, or -s tcp:HOST:PORT) and runs as a prefork master, or a web
 * server (lighttpd bin-path, mod_fcgid, spawn-fcgi) passes the listening
 * socket on standard input and it serves there. Either way it keeps -n (or
 * api_workers) processes on the socket. */
#include "api/api.h"
#include "api/prefork.h"
#include "api/serve.h"
#include "engine/egress.h"
#include "util/log.h"
#include "util/startup.h"
#include "util/strparse.h"
#include <errno.h>
#include <fcgiapp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static void
main_usage(void)
{
	fprintf(stderr, "usage: svc-api [-c svc.conf] [-s unix:PATH | "
	    "-s tcp:[HOST:]PORT] [-n workers]\n"
	    "Without -s, serves the FastCGI socket on standard input.\n");
	exit(2);
}

/* The socket of -s: unix:PATH is created with mode 0660 from the start
 * (the umask is set before the bind, so no moment exists where others
 * could connect); tcp:PORT (no host) listens on 127.0.0.1 only,
 * tcp:HOST:PORT on HOST (tcp:0.0.0.0:PORT for every interface). */
static int
main_open_listen(const char *spec)
{
	char path[512];
	mode_t old;
	int fd, saved;

	if (strncmp(spec, "unix:", 5) == 0) {
		snprintf(path, sizeof(path), "%s", spec + 5);
		unlink(path);
		old = umask(0117);
		fd = FCGX_OpenSocket(path, 128);
		saved = errno;
		umask(old);
		errno = saved;
	} else if (strncmp(spec, "tcp:", 4) == 0 && spec[4] != '\0') {
		if (strchr(spec + 4, ':') == NULL)
			snprintf(path, sizeof(path), "127.0.0.1:%s", spec + 4);
		else
			snprintf(path, sizeof(path), "%s", spec + 4);
		if (path[0] == ':') {
			fprintf(stderr, "svc-api: -s tcp::PORT: name the host "
			    "(tcp:PORT is 127.0.0.1, tcp:0.0.0.0:PORT every "
			    "interface)\n");
			exit(2);
		}
		fd = FCGX_OpenSocket(path, 128);
	} else {
		fprintf(stderr, "svc-api: -s wants unix:PATH, tcp:PORT or "
		    "tcp:HOST:PORT\n");
		exit(2);
	}
	if (fd < 0) {
		fprintf(stderr, "svc-api: cannot listen on %s: %s\n", spec,
		    strerror(errno));
		exit(1);
	}
	return fd;
}

static int
main_stdin_is_listening_socket(void)
{
	int v = 0;
	socklen_t l = sizeof(v);

	return getsockopt(0, SOL_SOCKET, SO_ACCEPTCONN, &v, &l) == 0 && v;
}

int
main(int argc, char **argv)
{
	const char *path = NULL, *listen = NULL;
	struct api_shared shared = { NULL, NULL, -1, 1, NULL };
	struct conf conf;
	struct buf err;
	long workers = 0;
	int ch, fd, rc;

	while ((ch = getopt(argc, argv, "c:s:n:h")) != -1) {
		switch (ch) {
		case 'c':
			path = optarg;
			break;
		case 's':
			listen = optarg;
			break;
		case 'n':
			if (strparse_long(optarg, 1, 512, &workers) == -1) {
				fprintf(stderr, "svc-api: -n wants 1..512\n");
				return 2;
			}
			break;
		default:
			main_usage();
		}
	}
	if (optind != argc)
		main_usage();
	/* Before any fork: the responders share the master's hash key. */
	buf_init(&err, 1024);
	if (startup(&conf, path, "svc-api", &err) == -1) {
		fprintf(stderr, "svc-api: %s\n", buf_str(&err));
		buf_free(&err);
		return 1;
	}
	if (egress_check(&conf, &err) == -1) {
		fprintf(stderr, "svc-api: %s\n", buf_str(&err));
		buf_free(&err);
		conf_free(&conf);
		return 1;
	}
	buf_free(&err);
	if (workers == 0)
		workers = conf_int(&conf, CONF_API_WORKERS);
	if (listen != NULL)
		fd = main_open_listen(listen);
	else {
		if (!main_stdin_is_listening_socket()) {
			fprintf(stderr, "svc-api: standard input is not a "
			    "listening socket; use -s, or start it from a "
			    "FastCGI web server\n");
			conf_free(&conf);
			return 2;
		}
		fd = 0;
	}
	/* The places for slow requests, shared by every responder of the
	 * host: made before any fork (slots.h). */
	buf_init(&err, 1024);
	if ((shared.slots_fd = slots_create(conf_str(&conf, CONF_RUN_DIR),
	    &err)) == -1) {
		fprintf(stderr, "svc-api: slots: %s\n", buf_str(&err));
		buf_free(&err);
		conf_free(&conf);
		return 1;
	}
	buf_free(&err);
	/* Started by a web server that runs copies of its own (mod_fcgid),
	 * each serving alone: without run_dir they cannot share places. */
	if (listen == NULL && workers == 1 &&
	    *conf_str(&conf, CONF_RUN_DIR) == '\0')
		log_warn("event=slots_unshared reason=\"run_dir is empty and "
		    "this process serves alone: its places for slow requests "
		    "are not shared with the host's other svc-api processes\"");
	/* One process needs no master (mod_fcgid runs "svc-api -n 1" and
	 * manages the processes itself). Such a process shares no key cache
	 * generations with its siblings, so it caches key rows only; the
	 * host's responders are api_workers (set it to mod_fcgid's limit), and
	 * it shares slots with them through run_dir. */
	if (workers == 1) {
		shared.responders = conf_int(&conf, CONF_API_WORKERS);
		/* its own entries left to abandon, flushed by itself */
		shared.pending = idempotency_pending_create();
		rc = serve_loop(&conf, fd, 0, &shared);
		idempotency_pending_free(shared.pending);
	} else
		rc = prefork_run(&conf, conf.path[0] ? conf.path : NULL, fd,
		    (int)workers, shared.slots_fd);
	conf_free(&conf);
	return rc;
}
