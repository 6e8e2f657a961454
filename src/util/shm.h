/* shm.h: memory shared by a process and the children it forks (svc-api's
 * master makes it before the responders), and the attributes of the
 * mutexes that guard it: shared between processes, and robust (a process
 * that dies holding one leaves it to the next locker, EOWNERDEAD). */
#ifndef SVC_SHM_H
#define SVC_SHM_H
#include <pthread.h>
#include <stddef.h>

/* size bytes of zeroed shared memory; NULL when it cannot be made. */
void	*shm_alloc(size_t size);
void	 shm_free(void *, size_t size);
/* Initialises a with the process-shared and robust attributes: 0, or -1
 * (a left destroyed). */
int	 shm_mutexattr(pthread_mutexattr_t *a);
/* Locks m (blocking, or with try only when free): 0 locked, 1 locked from
 * a process that died holding it (made consistent: what it guards is as
 * that process left it), -1 not locked. */
int	 shm_mutex_lock(pthread_mutex_t *m, int try);
#endif
