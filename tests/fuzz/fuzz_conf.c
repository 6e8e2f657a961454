/* fuzz_conf.c: libFuzzer target for the svc.conf reader (conf_load_stream
 * through fmemopen). Invariants: no crash or leak; a refused file always
 * comes with a message that fits the 1024-byte buffer the programs use; an
 * accepted file has every number within its declared range, and what
 * conf_dump prints reads back to the same settings. Inputs that name
 * db_password_file are skipped: they would make the reader open arbitrary
 * paths (/dev/stdin would hang the fuzzer). */
#include "util/conf.h"
#include "util/strparse.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_conf: %s failed " \
	"(line %d)\n", #c, __LINE__); abort(); } } while (0)

static int
load(struct conf *c, const char *data, size_t size, struct buf *err)
{
	FILE *f;
	int rc;

	buf_init(err, 1024);
	if ((f = fmemopen((void *)data, size, "r")) == NULL)
		return -2;
	rc = conf_load_stream(c, f, "fuzz.conf", err);
	fclose(f);
	return rc;
}

static void
check_values(const struct conf *c)
{
	long v, d[CONF_DURATIONS_MAX];
	size_t nd;
	int i, b;

	for (i = 0; i < CONF__MAX; i++) {
		const struct conf_setting *s = &conf_settings[i];
		const char *str = conf_str(c, (enum conf_key)i);

		CHECK(str != NULL);
		CHECK(strchr(str, '\n') == NULL);
		if (s->type == CONF_TYPE_INT) {
			CHECK(strparse_long(str, s->min, s->max, &v) == 0);
			CHECK(conf_int(c, (enum conf_key)i) == v);
		} else if (s->type == CONF_TYPE_BOOL) {
			CHECK(strparse_bool(str, &b) == 0);
			CHECK(conf_int(c, (enum conf_key)i) == b);
		} else if (s->type == CONF_TYPE_DURATIONS) {
			CHECK(strparse_durations(str, d, CONF_DURATIONS_MAX,
			    &nd) == 0);
			CHECK(conf_int(c, (enum conf_key)i) == (long)nd);
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char skip[] = "db_password_file";
	struct conf c, again;
	struct buf err, err2;
	char *copy, *dump = NULL;
	size_t dumplen = 0;
	FILE *out;
	int rc, i;

	if (size > 65536 || memmem(data, size, skip, sizeof(skip) - 1))
		return 0;
	if ((copy = malloc(size + 1)) == NULL)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	rc = load(&c, copy, size, &err);
	if (rc == -2)
		goto out_copy;
	if (rc == -1) {
		CHECK(err.len > 0);
		CHECK(strncmp(buf_str(&err), "fuzz.conf:", 10) == 0);
		goto out;
	}
	CHECK(rc == 0);
	CHECK(err.len == 0);
	check_values(&c);
	/* Dump, read back, compare (the password is printed as hidden). */
	if ((out = open_memstream(&dump, &dumplen)) == NULL)
		goto out;
	conf_dump(&c, out);
	fclose(out);
	rc = load(&again, dump, dumplen, &err2);
	if (rc == -1)
		fprintf(stderr, "fuzz_conf: dump does not read back: %s\n",
		    buf_str(&err2));
	CHECK(rc == 0);
	for (i = 0; i < CONF__MAX; i++) {
		if (conf_settings[i].secret)
			continue;
		CHECK(strcmp(conf_str(&c, (enum conf_key)i),
		    conf_str(&again, (enum conf_key)i)) == 0);
		CHECK(conf_int(&c, (enum conf_key)i) ==
		    conf_int(&again, (enum conf_key)i));
	}
	conf_free(&again);
	buf_free(&err2);
	free(dump);
out:
	conf_free(&c);
	buf_free(&err);
out_copy:
	free(copy);
	return 0;
}
