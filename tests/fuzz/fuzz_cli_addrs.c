/* fuzz_cli_addrs.c: libFuzzer target for the address lists of svc bulk
 * create (src/cli/addrs.c): the input is read as a .csv and as a .txt
 * file through fmemopen. Invariants: no crash or leak; a refused file
 * comes with a message; every address kept is shaped like an email and
 * valid UTF-8 (jansson took it), and kept plus left-out values never
 * outnumber the input's lines and fields. */
#include "cli/addrs.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_cli_addrs: %s " \
	"failed (line %d)\n", #c, __LINE__); abort(); } } while (0)

static void
one(const uint8_t *data, size_t size, int csv)
{
	struct addrs a;
	struct buf err;
	const char *s;
	size_t i, seps = 1;
	FILE *f;
	int rc;

	if ((f = fmemopen((void *)data, size, "r")) == NULL)
		return;
	addrs_init(&a);
	buf_init(&err, 4096);
	rc = csv ? addrs_read_csv(&a, f, &err) : addrs_read_txt(&a, f, &err);
	fclose(f);
	if (rc == -1)
		CHECK(err.len > 0);
	else
		CHECK(err.len == 0);
	for (i = 0; i < size; i++)
		if (data[i] == '\n' || data[i] == ',' || data[i] == '\r')
			seps++;
	CHECK(json_array_size(a.emails) + a.invalid <= seps);
	for (i = 0; i < json_array_size(a.emails); i++) {
		s = json_string_value(json_array_get(a.emails, i));
		CHECK(s != NULL);
		CHECK(addrs_shaped(s, strlen(s)));
	}
	buf_free(&err);
	addrs_free(&a);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 256 * 1024)
		return 0;
	one(data, size, 1);
	one(data, size, 0);
	return 0;
}
