/* version.h: the version of svc, the command-line tool (spec: 1.1.0),
 * which is its own and not the server's. */
#ifndef SVC_CLI_VERSION_H
#define SVC_CLI_VERSION_H
#define SVC_CLI_VERSION "1.1.0"
#endif
