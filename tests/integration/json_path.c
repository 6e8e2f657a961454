/* json_path.c: "jq -r FILTER" for the simplest filters, for the test
 * scripts' expect_json and json (tests/integration/lib.sh), without jq's
 * start-up: jq 1.6 compiles its library of builtins at every start, about
 * 22 ms of CPU, and the suite runs it thousands of times.
 *
 *   json_path FILTER < JSON
 *
 * FILTER is a path (".", then ".name", "[N]" or "[\"key\"]" chained, a
 * leading ".[N]" or ".[\"key\"]"; N may be negative as in jq) optionally followed by " | length". The output
 * is what jq -r prints: strings raw, integers, true, false, null, lengths.
 * Anything else (another filter, a real number, an object or array as the
 * answer, input that is not one JSON value, a type error jq would report)
 * exits 3 without output: the caller then asks jq itself, so an answer is
 * either jq's own or one computed the same way. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSON_PATH_ASK_JQ 3
/* integers above this lose precision in jq (doubles): let jq print them */
#define JSON_PATH_EXACT_MAX 9007199254740992LL

static void
json_path_ask_jq(void)
{
	exit(JSON_PATH_ASK_JQ);
}

/* The whole of standard input; exits through json_path_ask_jq on error. */
static char *
json_path_read_stdin(size_t *len)
{
	size_t cap = 8192, n = 0, got;
	char *buf = malloc(cap);

	if (buf == NULL)
		json_path_ask_jq();
	while ((got = fread(buf + n, 1, cap - n, stdin)) > 0) {
		n += got;
		if (n == cap) {
			char *bigger = realloc(buf, cap * 2);

			if (bigger == NULL)
				json_path_ask_jq();
			buf = bigger;
			cap *= 2;
		}
	}
	if (ferror(stdin))
		json_path_ask_jq();
	*len = n;
	return buf;
}

/* An array index "[N]" at *p (p at '['): the value, *p moved past ']'. */
static long
json_path_index(const char **p)
{
	const char *s = *p + 1;
	char *end;
	long i;

	if (*s != '-' && (*s < '0' || *s > '9'))
		json_path_ask_jq();
	i = strtol(s, &end, 10);
	if (*end != ']' || end - s > 9)
		json_path_ask_jq();
	*p = end + 1;
	return i;
}

/* A quoted key "[\"key\"]" at *p (p at '['): copied into key. Only plain
 * characters: an escape in the key is jq's to read. */
static void
json_path_quoted_key(const char **p, char *key, size_t keysz)
{
	const char *s = *p + 2, *q = strchr(s, '"');

	if (q == NULL || q[1] != ']' || (size_t)(q - s) >= keysz ||
	    memchr(s, '\\', (size_t)(q - s)) != NULL)
		json_path_ask_jq();
	memcpy(key, s, (size_t)(q - s));
	key[q - s] = '\0';
	*p = q + 2;
}

/* One step of the path on v: a member or an element, null when absent (as
 * jq: .a of null is null, [5] past the end is null); a type error exits. */
static json_t *
json_path_member(json_t *v, const char *key)
{
	if (json_is_null(v))
		return v;
	if (!json_is_object(v))
		json_path_ask_jq();
	return json_object_get(v, key);
}

static json_t *
json_path_element(json_t *v, long i)
{
	long n;

	if (json_is_null(v))
		return v;
	if (!json_is_array(v))
		json_path_ask_jq();
	n = (long)json_array_size(v);
	if (i < 0)
		i += n;
	if (i < 0 || i >= n)
		return NULL;
	return json_array_get(v, (size_t)i);
}

/* Follows the path in filter from root; *rest is what follows the path. */
static json_t *
json_path_follow(json_t *root, const char *filter, const char **rest)
{
	const char *p = filter;
	json_t *v = root;
	char key[256];
	size_t n;

	if (*p != '.')
		json_path_ask_jq();
	if (p[1] == '\0' || p[1] == ' ') {
		*rest = p + 1;
		return v;
	}
	while (*p == '.' || *p == '[') {
		if (v == NULL)
			v = json_null();
		/* ".[" only opens a filter: jq 1.6 refuses ".a.[0]" */
		if (p == filter && p[1] == '[')
			p++;
		else if (p[0] == '.' && p[1] == '[')
			json_path_ask_jq();
		if (*p == '[' && p[1] == '"') {
			json_path_quoted_key(&p, key, sizeof key);
			v = json_path_member(v, key);
		} else if (*p == '[') {
			v = json_path_element(v, json_path_index(&p));
		} else {
			p++;
			n = strspn(p, "abcdefghijklmnopqrstuvwxyz"
			    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
			if (n == 0 || n >= sizeof key || (*p >= '0' && *p <= '9'))
				json_path_ask_jq();
			memcpy(key, p, n);
			key[n] = '\0';
			p += n;
			v = json_path_member(v, key);
		}
	}
	*rest = p;
	return v == NULL ? json_null() : v;
}

/* Characters of a UTF-8 string (jansson has checked it is valid). */
static size_t
json_path_utf8_length(const char *s, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xC0) != 0x80)
			n++;
	return n;
}

static void
json_path_print_length(json_t *v)
{
	if (json_is_null(v))
		printf("0\n");
	else if (json_is_array(v))
		printf("%zu\n", json_array_size(v));
	else if (json_is_object(v))
		printf("%zu\n", json_object_size(v));
	else if (json_is_string(v))
		printf("%zu\n", json_path_utf8_length(json_string_value(v),
		    json_string_length(v)));
	else
		json_path_ask_jq();
}

static void
json_path_print(json_t *v)
{
	json_int_t i;

	if (json_is_string(v)) {
		fwrite(json_string_value(v), 1, json_string_length(v), stdout);
		putchar('\n');
	} else if (json_is_integer(v)) {
		i = json_integer_value(v);
		if (i > JSON_PATH_EXACT_MAX || i < -JSON_PATH_EXACT_MAX)
			json_path_ask_jq();
		printf("%" JSON_INTEGER_FORMAT "\n", i);
	} else if (json_is_true(v)) {
		printf("true\n");
	} else if (json_is_false(v)) {
		printf("false\n");
	} else if (json_is_null(v)) {
		printf("null\n");
	} else {
		json_path_ask_jq();
	}
}

int
main(int argc, char **argv)
{
	const char *rest;
	json_error_t err;
	json_t *root, *v;
	size_t len;
	char *in;

	if (argc != 2)
		json_path_ask_jq();
	in = json_path_read_stdin(&len);
	root = json_loadb(in, len, JSON_DECODE_ANY, &err);
	if (root == NULL)
		json_path_ask_jq();
	v = json_path_follow(root, argv[1], &rest);
	if (strcmp(rest, " | length") == 0)
		json_path_print_length(v);
	else if (*rest == '\0')
		json_path_print(v);
	else
		json_path_ask_jq();
	if (fflush(stdout) != 0)
		return 1;
	json_decref(root);
	free(in);
	return 0;
}
