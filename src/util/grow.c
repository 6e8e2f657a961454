/* grow.c: room for one more element in a growing array (see grow.h). */
#include "util/grow.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int
grow(void *arrayp, size_t n, size_t *cap, size_t size, size_t first)
{
	void *v, *nv;
	size_t ncap;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : first;
	if (ncap < *cap || size == 0 || ncap > SIZE_MAX / size)
		return -1;
	/* arrayp is a T **: the pointer is read and written through memcpy,
	 * which is valid whatever T is. */
	memcpy(&v, arrayp, sizeof(v));
	if ((nv = realloc(v, ncap * size)) == NULL)
		return -1;
	memcpy(arrayp, &nv, sizeof(nv));
	*cap = ncap;
	return 0;
}
