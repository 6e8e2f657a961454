/* grow.h: room for one more element in a growing array (capacity doubled
 * when full), for the arrays that collect results, cache entries and
 * outcomes as they come. */
#ifndef SVC_GROW_H
#define SVC_GROW_H
#include <stddef.h>

/* arrayp points to the array pointer (a T **); n elements are in use of
 * *cap allocated, each size bytes. When n == *cap the array is
 * reallocated to twice its capacity (first when it is empty). 0, or -1
 * when memory runs out (array and *cap unchanged). */
int	 grow(void *arrayp, size_t n, size_t *cap, size_t size, size_t first);
#endif
