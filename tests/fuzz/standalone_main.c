/* standalone_main.c: a main() for fuzz targets built without libFuzzer. It
 * feeds each file named on the command line to LLVMFuzzerTestOneInput once,
 * so the seed corpus runs as a regression test under the sanitizers. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
main(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		uint8_t *data = NULL;
		size_t len = 0, cap = 0, n;

		if (f == NULL) {
			perror(argv[i]);
			return 1;
		}
		for (;;) {
			if (len == cap) {
				cap = cap ? cap * 2 : 4096;
				if ((data = realloc(data, cap)) == NULL)
					return 1;
			}
			if ((n = fread(data + len, 1, cap - len, f)) == 0)
				break;
			len += n;
		}
		fclose(f);
		LLVMFuzzerTestOneInput(data, len);
		free(data);
	}
	printf("%d inputs replayed\n", argc - 1);
	return 0;
}
