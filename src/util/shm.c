/* shm.c: shared memory and its mutexes' attributes (see shm.h). */
#include "util/shm.h"
#include <errno.h>
#include <sys/mman.h>

void *
shm_alloc(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void
shm_free(void *p, size_t size)
{
	if (p != NULL)
		munmap(p, size);
}

int
shm_mutexattr(pthread_mutexattr_t *a)
{
	if (pthread_mutexattr_init(a) != 0)
		return -1;
	if (pthread_mutexattr_setpshared(a, PTHREAD_PROCESS_SHARED) != 0 ||
	    pthread_mutexattr_setrobust(a, PTHREAD_MUTEX_ROBUST) != 0) {
		pthread_mutexattr_destroy(a);
		return -1;
	}
	return 0;
}

int
shm_mutex_lock(pthread_mutex_t *m, int try)
{
	int r = try ? pthread_mutex_trylock(m) : pthread_mutex_lock(m);

	if (r == EOWNERDEAD) {
		pthread_mutex_consistent(m);
		return 1;
	}
	return r == 0 ? 0 : -1;
}
