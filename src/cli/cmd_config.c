/* cmd_config.c: svc config set-key, set-base-url and show: the config
 * file (config.c) written with one value changed, and the settings in
 * force with where they come from. The key is never printed whole: show
 * keeps its test/live prefix and its last four characters. */
#include "cli/cmds.h"
#include "cli/config.h"
#include "cli/out.h"
#include "util/strparse.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

/* "svc_live_…wxyz": the prefix up to its last '_' (12 characters at
 * most) and the last four; just "…" and the last two of a short key. */
static void
cmd_config_mask(char *out, size_t sz, const char *key)
{
	size_t n = strlen(key), pre = 0, i;

	for (i = 0; i < n && i < 12; i++)
		if (key[i] == '_')
			pre = i + 1;
	if (n >= pre + 12)
		snprintf(out, sz, "%.*s…%s", (int)pre, key, key + n - 4);
	else if (n >= 8)
		snprintf(out, sz, "…%s", key + n - 2);
	else
		snprintf(out, sz, "…");
}

/* Reads the file (its mode not checked: it is rewritten 0600), sets one
 * value, writes it back. */
static int
cmd_config_set(struct cli *c, const char *name, const char *value,
    const char *shown)
{
	struct config cf;
	struct buf err;
	json_t *o;
	char **slot;
	int rc = APIERR_EXIT_OK;

	buf_init(&err, 4096);
	switch (config_load(&cf, 0, &err)) {
	case CONFIG_OK:
	case CONFIG_MISSING:
		break;
	default:
		rc = cli_fail(c, APIERR_EXIT_ERROR, "config", "%s",
		    buf_str(&err));
		goto out;
	}
	slot = strcmp(name, "api_key") == 0 ? &cf.api_key : &cf.base_url;
	free(*slot);
	if ((*slot = strdup(value)) == NULL) {
		rc = cli_fail(c, APIERR_EXIT_ERROR, "error", "out of memory");
		goto out;
	}
	if (config_save(&cf, &err) == -1) {
		rc = cli_fail(c, APIERR_EXIT_ERROR, "config", "%s",
		    buf_str(&err));
		goto out;
	}
	if (c->json) {
		o = json_pack("{s:s,s:s,s:s}", "config_file", cf.path,
		    "saved", name, "value", shown);
		cli_print_json(o);
		json_decref(o);
	} else
		printf("saved %s = %s in %s (mode 0600)\n", name, shown,
		    cf.path);
out:
	config_free(&cf);
	buf_free(&err);
	return rc;
}

/* A key read from standard input (not echoed on a terminal). */
static char *
cmd_config_read_key(void)
{
	struct termios old, quiet;
	char *line = NULL;
	size_t cap = 0;
	int tty = isatty(STDIN_FILENO);

	if (tty) {
		fprintf(stderr, "API key: ");
		tcgetattr(STDIN_FILENO, &old);
		quiet = old;
		quiet.c_lflag &= ~(tcflag_t)ECHO;
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
	}
	if (getline(&line, &cap, stdin) == -1) {
		free(line);
		line = NULL;
	}
	if (tty) {
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
		fputc('\n', stderr);
	}
	return line;
}

int
cmd_config_set_key(struct cli *c, int argc, char **argv)
{
	char *pos[1] = { NULL }, *line = NULL, *key, shown[64];
	int rc, n;
	size_t i;

	if ((n = cli_parse(c, argc, argv, NULL, 0, 1, pos, &rc)) == -1)
		return rc;
	if (n == 0 || strcmp(pos[0], "-") == 0) {
		if ((line = cmd_config_read_key()) == NULL)
			return cli_usage(c, "no key on standard input");
		key = strparse_trim(line);
	} else
		key = pos[0];
	for (i = 0; key[i]; i++)
		if ((unsigned char)key[i] <= 0x20 || key[i] == 0x7f)
			break;
	if (key[0] == '\0' || key[i] != '\0' || i > 1024) {
		rc = cli_usage(c, "an API key is 1 to 1024 characters without "
		    "spaces");
		goto out;
	}
	cmd_config_mask(shown, sizeof(shown), key);
	rc = cmd_config_set(c, "api_key", key, shown);
out:
	if (line) {
		explicit_bzero(line, strlen(line));
		free(line);
	}
	return rc;
}

int
cmd_config_set_base_url(struct cli *c, int argc, char **argv)
{
	char *pos[1];
	size_t n;
	int rc;

	if (cli_parse(c, argc, argv, NULL, 1, 1, pos, &rc) == -1)
		return rc;
	if ((strncmp(pos[0], "http://", 7) != 0 &&
	    strncmp(pos[0], "https://", 8) != 0) ||
	    strpbrk(pos[0], " \t\r\n") != NULL || strlen(pos[0]) > 2048)
		return cli_usage(c, "%s: not an http:// or https:// URL",
		    pos[0]);
	n = strlen(pos[0]);
	while (n > 8 && pos[0][n - 1] == '/')
		pos[0][--n] = '\0';
	return cmd_config_set(c, "base_url", pos[0], pos[0]);
}

/* Where a setting came from, for a person. */
static const char *
cmd_config_src(enum cli_src src, int is_key)
{
	switch (src) {
	case CLI_SRC_OPTION:
		return is_key ? "--api-key" : "--base-url";
	case CLI_SRC_ENV:
		return is_key ? CLI_ENV_KEY : CLI_ENV_BASE_URL;
	case CLI_SRC_CONFIG:
		return "the config file";
	default:
		return "the default";
	}
}

int
cmd_config_show(struct cli *c, int argc, char **argv)
{
	struct cli_settings s;
	struct config cf;
	struct buf err;
	char key[64] = "", file[4200];
	json_t *o;
	int rc, crc;

	if (cli_parse(c, argc, argv, NULL, 0, 0, NULL, &rc) == -1)
		return rc;
	buf_init(&err, 4096);
	crc = config_load(&cf, 1, &err);
	if (crc == CONFIG_OK)
		snprintf(file, sizeof(file), "%s (mode %04o)", cf.path,
		    (unsigned)cf.mode);
	else if (crc == CONFIG_MISSING)
		snprintf(file, sizeof(file), "%s (not written yet)", cf.path);
	else
		snprintf(file, sizeof(file), "%s (refused: %s)", cf.path,
		    buf_str(&err));
	rc = cli_settings(c, &s);
	if (s.key)
		cmd_config_mask(key, sizeof(key), s.key);
	if (c->json) {
		o = json_pack("{s:s,s:s,s:o,s:s,s:s,s:s}", "config_file",
		    cf.path, "config_status", crc == CONFIG_OK ? "ok" :
		    crc == CONFIG_MISSING ? "missing" : crc == CONFIG_EXPOSED ?
		    "refused" : "error", "api_key", s.key ? json_string(key) :
		    json_null(), "api_key_source", cli_src_names[s.key_src],
		    "base_url", s.base ? s.base : "", "base_url_source",
		    cli_src_names[s.base_src]);
		cli_print_json(o);
		json_decref(o);
	} else {
		out_kv("config-file", "%s", file);
		if (s.key)
			out_kv("api-key", "%s (from %s)", key,
			    cmd_config_src(s.key_src, 1));
		else
			out_kv("api-key", "%s", "(none)");
		out_kv("base-url", "%s (from %s)", s.base ? s.base : "-",
		    cmd_config_src(s.base_src, 0));
	}
	if (rc != APIERR_EXIT_OK && s.config_err[0])
		fprintf(stderr, "svc: config: %s\n", s.config_err);
	cli_settings_free(&s);
	config_free(&cf);
	buf_free(&err);
	return rc;
}
