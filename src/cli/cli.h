/* cli.h: what the commands of svc share: the run (options common to every
 * command, the key and base URL in force, the HTTP client), the parsing of
 * a command's options, and the way answers and errors are reported. */
#ifndef SVC_CLI_CLI_H
#define SVC_CLI_CLI_H
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include "cli/apierr.h"
#include "cli/client.h"

#define CLI_DEFAULT_BASE_URL "http://127.0.0.1:8080"
#define CLI_ENV_KEY "ROCKETVERIFIER_API_KEY"
#define CLI_ENV_BASE_URL "SVC_BASE_URL"

/* Where a setting came from. */
enum cli_src {
	CLI_SRC_NONE,
	CLI_SRC_OPTION,
	CLI_SRC_ENV,
	CLI_SRC_CONFIG,
	CLI_SRC_DEFAULT,
	CLI_SRC__MAX
};
extern const char *const cli_src_names[CLI_SRC__MAX];

struct cli {
	const char		*opt_key;	/* --api-key */
	const char		*opt_base;	/* --base-url */
	int			 json;		/* --json */
	const char		*cmd;		/* "bulk create", for messages */
	struct client		*client;
	struct client_resp	 resp;		/* the last answer */
	volatile sig_atomic_t	 stop;		/* Ctrl-C while waiting */
	/* --json --wait: the creation's answer, held back to go into the one
	 * document printed at the end (as "created") */
	json_t			*created;
};

/* The key and base URL in force and where each came from. */
struct cli_settings {
	char		*key;
	enum cli_src	 key_src;
	char		*base;
	enum cli_src	 base_src;
	char		 config_path[4096];
	int		 config_rc;	/* enum config_rc, -1 when not read */
	char		 config_err[1024];
};

/* A command's option: its long name, whether it takes an argument, and
 * where the argument goes ("" for an option without one). */
struct cli_opt {
	const char	*name;
	int		 has_arg;	/* no_argument, required_argument */
	const char	**val;
};

void	 cli_init(struct cli *);
void	 cli_free(struct cli *);
/* Parses argv (argv[0] the command's last word) with opts and the common
 * options; between min and max positional arguments go to pos[]. Returns
 * their number, or -1 when the command ends here with the status in *rc
 * (help shown: 0; a usage error, told: APIERR_EXIT_USAGE). */
int	 cli_parse(struct cli *, int argc, char **argv,
	    const struct cli_opt *opts, int min, int max, char **pos, int *rc);
/* Is v (an option's value, NULL when not given) one of the NULL-ended
 * set? A value not given is. */
int	 cli_one_of(const char *v, const char *const *set);
/* Says what is wrong with the command line; APIERR_EXIT_USAGE. */
int	 cli_usage(struct cli *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* A local refusal with an API-style code ("invalid_input"): one line on
 * stderr, with --json the error object on stdout too; returns rc. */
int	 cli_fail(struct cli *, enum apierr_exit rc, const char *code,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Resolves the settings: 0, or the exit status with err told. Frees with
 * cli_settings_free. */
int	 cli_settings(struct cli *, struct cli_settings *);
void	 cli_settings_free(struct cli_settings *);
/* Makes the client with the settings in force: 0 or the exit status. */
int	 cli_connect(struct cli *);
/* Sends req. 0 with *out (when out is not NULL) the JSON object of a 2xx
 * answer; else the exit status, the error told (with --json the API's
 * error body on stdout). */
int	 cli_call(struct cli *, const struct client_req *, json_t **out);
/* Prints the last answer's body as it came (--json); with a creation's
 * answer held (cli_hold_created), the body with it as "created". */
void	 cli_print_body(struct cli *);
/* --json --wait: keeps the creation's answer r (a reference is taken)
 * instead of printing it, so that the command prints one JSON document:
 * the final answer, or the error that ended the waiting, with r under
 * "created". */
void	 cli_hold_created(struct cli *, json_t *r);
/* At the end of a command: a creation's answer still held (the waiting
 * stopped by Ctrl-C) is printed as {"error": ..., "created": ...}, so
 * that nothing it said (a callback_secret shown once) is lost. */
void	 cli_flush_created(struct cli *, int rc);
/* Prints a JSON value on stdout (--json output svc makes itself). */
void	 cli_print_json(json_t *);
/* A new Idempotency-Key ("svc-cli-" and 32 random characters): 0 or -1. */
int	 cli_idempotency_key(char out[64]);
/* b = before, id escaped, after ("/v1/jobs/", id, "/progress"). */
int	 cli_path(struct buf *b, const char *before, const char *id,
	    const char *after);
/* Escapes s for a URL path segment or query value into b. */
int	 cli_urlenc(struct buf *b, const char *s);
#endif
