/* cli.c: the run of one svc command: the common options (--json,
 * --api-key, --base-url, --help) beside each command's own, the key
 * (--api-key, else ROCKETVERIFIER_API_KEY, else the config file) and base
 * URL (--base-url, else SVC_BASE_URL, else the config file, else the
 * default) in force, and requests whose errors are told one way: a line
 * "svc: <code>: <message>" on stderr and an exit status by kind. */
#include "cli/cli.h"
#include "cli/config.h"
#include "cli/help.h"
#include "util/ids.h"
#include "util/strparse.h"
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const cli_src_names[CLI_SRC__MAX] = {
	"none", "option", "environment", "config", "default"
};

#define CLI_OPT_BASE 256

static void	 cli_print_doc(struct cli *, json_t *);

void
cli_init(struct cli *c)
{
	memset(c, 0, sizeof(*c));
	client_resp_init(&c->resp);
}

void
cli_free(struct cli *c)
{
	json_decref(c->created);
	c->created = NULL;
	client_free(c->client);
	client_resp_free(&c->resp);
	c->client = NULL;
}

int
cli_one_of(const char *v, const char *const *set)
{
	if (v == NULL)
		return 1;
	for (; *set; set++)
		if (strcmp(v, *set) == 0)
			return 1;
	return 0;
}

int
cli_usage(struct cli *c, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "svc: %s%s", c->cmd ? c->cmd : "", c->cmd ? ": " : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'svc help%s%s'.\n", c->cmd ? " " : "",
	    c->cmd ? c->cmd : "");
	return APIERR_EXIT_USAGE;
}

int
cli_fail(struct cli *c, enum apierr_exit rc, const char *code,
    const char *fmt, ...)
{
	struct buf msg;
	va_list ap;
	json_t *o;

	buf_init(&msg, 4096);
	va_start(ap, fmt);
	buf_vprintf(&msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "svc: %s: %s\n", code, buf_str(&msg));
	if (c->json) {
		o = json_pack("{s:{s:s,s:s,s:n}}", "error", "code", code,
		    "message", buf_str(&msg), "details");
		cli_print_doc(c, o);
		json_decref(o);
	}
	buf_free(&msg);
	return rc;
}

int
cli_parse(struct cli *c, int argc, char **argv, const struct cli_opt *opts,
    int min, int max, char **pos, int *rc)
{
	static const char flag[] = "";
	struct option *lo;
	const char *help = NULL, *json = NULL;
	size_t n = 0, i, k;
	int ch, npos;

	while (opts && opts[n].name)
		n++;
	if ((lo = calloc(n + 5, sizeof(*lo))) == NULL) {
		*rc = cli_fail(c, APIERR_EXIT_ERROR, "error", "out of memory");
		return -1;
	}
	for (i = 0; i < n; i++) {
		lo[i].name = opts[i].name;
		lo[i].has_arg = opts[i].has_arg;
		lo[i].val = CLI_OPT_BASE + (int)i;
	}
	lo[n] = (struct option){ "json", no_argument, NULL, 'j' };
	lo[n + 1] = (struct option){ "api-key", required_argument, NULL, 'k' };
	lo[n + 2] = (struct option){ "base-url", required_argument, NULL, 'b' };
	lo[n + 3] = (struct option){ "help", no_argument, NULL, 'h' };
	optind = 0;
	opterr = 0;
	*rc = APIERR_EXIT_USAGE;
	while ((ch = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		switch (ch) {
		case 'j':
			json = flag;
			break;
		case 'k':
			c->opt_key = optarg;
			break;
		case 'b':
			c->opt_base = optarg;
			break;
		case 'h':
			help = flag;
			break;
		case ':':
			cli_usage(c, "%s needs a value", argv[optind - 1]);
			goto fail;
		case '?':
			cli_usage(c, "unknown option %s", argv[optind - 1]);
			goto fail;
		default:
			k = (size_t)(ch - CLI_OPT_BASE);
			*opts[k].val = opts[k].has_arg ? optarg : flag;
			break;
		}
	}
	if (json)
		c->json = 1;
	if (help) {
		help_command(stdout, c->cmd);
		*rc = APIERR_EXIT_OK;
		goto fail;
	}
	npos = argc - optind;
	if (npos < min) {
		cli_usage(c, "missing %s", min - npos > 1 ? "arguments" :
		    "argument");
		goto fail;
	}
	if (npos > max) {
		cli_usage(c, "unexpected argument %s", argv[optind + max]);
		goto fail;
	}
	for (i = 0; i < (size_t)npos; i++)
		pos[i] = argv[optind + (int)i];
	free(lo);
	*rc = APIERR_EXIT_OK;
	return npos;
fail:
	free(lo);
	return -1;
}

void
cli_settings_free(struct cli_settings *s)
{
	if (s->key)
		explicit_bzero(s->key, strlen(s->key));
	free(s->key);
	free(s->base);
	s->key = s->base = NULL;
}

static char *
cli_env(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && v[0] != '\0' ? strdup(v) : NULL;
}

int
cli_settings(struct cli *c, struct cli_settings *s)
{
	struct config cf;
	struct buf err;
	int rc = APIERR_EXIT_OK;

	memset(s, 0, sizeof(*s));
	s->config_rc = -1;
	if (c->opt_key) {
		s->key = strdup(c->opt_key);
		s->key_src = CLI_SRC_OPTION;
	} else if ((s->key = cli_env(CLI_ENV_KEY)) != NULL)
		s->key_src = CLI_SRC_ENV;
	if (c->opt_base) {
		s->base = strdup(c->opt_base);
		s->base_src = CLI_SRC_OPTION;
	} else if ((s->base = cli_env(CLI_ENV_BASE_URL)) != NULL)
		s->base_src = CLI_SRC_ENV;
	if (s->key_src == CLI_SRC_NONE || s->base_src == CLI_SRC_NONE) {
		buf_init(&err, sizeof(s->config_err));
		s->config_rc = (int)config_load(&cf, 1, &err);
		strparse_copy(s->config_path, sizeof(s->config_path), cf.path);
		strparse_copy(s->config_err, sizeof(s->config_err),
		    buf_str(&err));
		buf_free(&err);
		if (s->config_rc == CONFIG_OK) {
			if (s->key_src == CLI_SRC_NONE && cf.api_key) {
				s->key = cf.api_key;
				cf.api_key = NULL;
				s->key_src = CLI_SRC_CONFIG;
			}
			if (s->base_src == CLI_SRC_NONE && cf.base_url) {
				s->base = cf.base_url;
				cf.base_url = NULL;
				s->base_src = CLI_SRC_CONFIG;
			}
		} else if (s->config_rc != CONFIG_MISSING)
			rc = APIERR_EXIT_AUTH;
		config_free(&cf);
	}
	if (s->base_src == CLI_SRC_NONE) {
		s->base = strdup(CLI_DEFAULT_BASE_URL);
		s->base_src = CLI_SRC_DEFAULT;
	}
	if (s->base == NULL || (s->key_src != CLI_SRC_NONE && s->key == NULL))
		return APIERR_EXIT_ERROR;
	return rc;
}

int
cli_connect(struct cli *c)
{
	struct cli_settings s;
	int rc;

	if ((rc = cli_settings(c, &s)) != APIERR_EXIT_OK) {
		if (s.config_err[0])
			cli_fail(c, rc, "config", "%s", s.config_err);
		else
			cli_fail(c, rc, "error", "out of memory");
		goto out;
	}
	if (s.key == NULL) {
		rc = cli_fail(c, APIERR_EXIT_AUTH, "no_api_key", "no API key: "
		    "give --api-key, set " CLI_ENV_KEY " or run 'svc config "
		    "set-key'");
		goto out;
	}
	if (strncmp(s.base, "http://", 7) != 0 &&
	    strncmp(s.base, "https://", 8) != 0) {
		rc = cli_usage(c, "base URL %s (from the %s): not an http:// or "
		    "https:// URL", s.base, cli_src_names[s.base_src]);
		goto out;
	}
	if ((c->client = client_new(s.base, s.key, &c->stop)) == NULL)
		rc = cli_fail(c, APIERR_EXIT_ERROR, "error", "out of memory");
out:
	cli_settings_free(&s);
	return rc;
}

/* Prints o, with the creation's answer held as "created" (then no longer
 * held). */
static void
cli_print_doc(struct cli *c, json_t *o)
{
	if (c->created != NULL && json_is_object(o)) {
		json_object_set(o, "created", c->created);
		json_decref(c->created);
		c->created = NULL;
	}
	cli_print_json(o);
}

void
cli_hold_created(struct cli *c, json_t *r)
{
	json_decref(c->created);
	c->created = json_incref(r);
}

void
cli_flush_created(struct cli *c, int rc)
{
	json_t *o;

	if (c->created == NULL)
		return;
	o = json_pack("{s:{s:s,s:s,s:n}}", "error", "code",
	    rc == APIERR_EXIT_INTERRUPTED ? "interrupted" : "error",
	    "message", rc == APIERR_EXIT_INTERRUPTED ? "stopped waiting; "
	    "the job goes on" : "the waiting ended early", "details");
	cli_print_doc(c, o);
	json_decref(o);
}

void
cli_print_body(struct cli *c)
{
	const struct buf *b = &c->resp.body;
	json_t *o;

	if (b->len == 0)
		return;
	if (c->created != NULL) {
		o = json_loadb(b->data, b->len, 0, NULL);
		if (json_is_object(o)) {
			cli_print_doc(c, o);
			json_decref(o);
			return;
		}
		json_decref(o);
	}
	fwrite(b->data, 1, b->len, stdout);
	if (b->data[b->len - 1] != '\n')
		putchar('\n');
}

void
cli_print_json(json_t *v)
{
	if (v == NULL)
		return;
	json_dumpf(v, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	putchar('\n');
}

/* Tells an API error answer; returns its exit status. */
static int
cli_api_error(struct cli *c)
{
	struct client_resp *r = &c->resp;
	struct apierr e;
	enum apierr_exit rc = apierr_exit(r->status);

	apierr_parse(r->body.data, r->body.len, &e);
	if (e.code[0] == '\0')
		strparse_copy(e.code, sizeof(e.code),
		    r->status == 429 ? "rate_limited" : "http_error");
	if (e.message[0] == '\0')
		snprintf(e.message, sizeof(e.message), "the API answered "
		    "HTTP %ld%s", r->status, r->body.len ? " with a body that "
		    "is not an API error" : "");
	fprintf(stderr, "svc: %s: %s (HTTP %ld%s%s)\n", e.code, e.message,
	    r->status, r->request_id[0] ? ", request " : "", r->request_id);
	if (c->json) {
		if (e.code[0] && r->body.len && r->body.data[0] == '{')
			cli_print_body(c);
		else {
			json_t *o = json_pack("{s:{s:s,s:s,s:n}}", "error",
			    "code", e.code, "message", e.message, "details");

			cli_print_doc(c, o);
			json_decref(o);
		}
	}
	return rc;
}

int
cli_call(struct cli *c, const struct client_req *req, json_t **out)
{
	json_error_t jerr;
	json_t *v;

	if (out)
		*out = NULL;
	switch (client_do(c->client, req, &c->resp)) {
	case CLIENT_OK:
		break;
	case CLIENT_INTERRUPTED:
		return APIERR_EXIT_INTERRUPTED;
	default:
		return cli_fail(c, APIERR_EXIT_NETWORK, "network",
		    "no answer from the API: %s", c->resp.error);
	}
	if (c->resp.status < 200 || c->resp.status >= 300)
		return cli_api_error(c);
	if (out == NULL)
		return APIERR_EXIT_OK;
	v = json_loadb(c->resp.body.data ? c->resp.body.data : "",
	    c->resp.body.len, 0, &jerr);
	if (!json_is_object(v)) {
		json_decref(v);
		return cli_fail(c, APIERR_EXIT_SERVER, "bad_answer", "the "
		    "API's answer (HTTP %ld) is not a JSON object",
		    c->resp.status);
	}
	*out = v;
	return APIERR_EXIT_OK;
}

int
cli_idempotency_key(char out[64])
{
	return ids_random_text("svc-cli-", 32, out, 64);
}

int
cli_path(struct buf *b, const char *before, const char *id,
    const char *after)
{
	buf_reset(b);
	if (buf_puts(b, before) == -1 || cli_urlenc(b, id) == -1 ||
	    buf_puts(b, after) == -1)
		return -1;
	return 0;
}

int
cli_urlenc(struct buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || strchr("-._~", ch)) {
			if (buf_putc(b, (char)ch) == -1)
				return -1;
		} else if (buf_printf(b, "%%%c%c", hex[ch >> 4],
		    hex[ch & 15]) == -1)
			return -1;
	}
	return 0;
}
