/* unit_server.h: what the unit tests that bring servers of their own share
 * (test_dns, test_smtp): loopback ports where nothing answers, and running
 * the test program again through the script that starts its servers
 * (tests/integration/test_NAME.sh) when none was given. Compiled into each
 * of them (tests/unit/engine.inc); include it after cmocka.h. */
#ifndef SVC_TESTS_UNIT_SERVER_H
#define SVC_TESTS_UNIT_SERVER_H

/* A UDP or TCP port (type SOCK_DGRAM or SOCK_STREAM) of 127.0.0.1 in
 * *port. With keep, returns its socket, bound (and listening, for TCP) but
 * never read or accepted: a server that stays silent. Without, closes it
 * again and returns -1: a port where nothing answers, or a closed one. */
int	 unit_server_loopback(int type, int keep, unsigned *port);

/* Runs argv[0] again through tests/integration/test_NAME.sh (below
 * $top_srcdir, else $srcdir, else "."), which starts the servers and
 * names them in the environment, with SVC_TEST_<NAME>_NOEXEC=1 (NAME in
 * capitals) set so that this happens once. Returns when that variable is
 * set already, the script is missing or exec failed: the program then runs
 * without the servers, and their tests skip. */
void	 unit_server_reexec(const char *name, char **argv);
#endif
