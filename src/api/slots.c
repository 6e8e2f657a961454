/* slots.c: the responders' shared places for slow requests (slots.h), as
 * byte locks on one file.
 *
 * Layout of the (empty, sparse) file's byte offsets:
 *   [0, SLOTS_SLOW_MAX)                     the host's slow places
 *   then SLOTS_BUCKETS buckets of SLOTS_ACCOUNT_MAX bytes: probe places
 *   then SLOTS_BUCKETS bytes: one revocation place per bucket
 * An account's bucket comes from SHA-256 of its id: the same in every
 * process of the host, also those not forked from one master (mod_fcgid),
 * which a per-process keyed hash would not be. Account ids are made by the
 * service, not chosen by clients, so no one can aim at a bucket; two
 * accounts meeting in one of 2^20 buckets would only share a limit. */
#include "api/slots.h"
#include "util/log.h"
#include <errno.h>
#include <fcntl.h>
#include <gnutls/crypto.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SLOTS_BUCKETS (1L << 20)
#define SLOTS_PROBE_BASE ((off_t)SLOTS_SLOW_MAX)
#define SLOTS_REVOKE_BASE (SLOTS_PROBE_BASE + (off_t)SLOTS_BUCKETS * \
	SLOTS_ACCOUNT_MAX)

const char *const slots_kind_names[SLOTS_KIND__MAX] = {
	"slow", "probe", "revoke"
};

struct slots {
	int	 fd;
	int	 held;		/* places held now */
};

int
slots_create(const char *run_dir, struct buf *err)
{
	char path[1024];
	int fd;

	if (run_dir != NULL && *run_dir != '\0') {
		if ((size_t)snprintf(path, sizeof(path), "%s/svc-api.slots",
		    run_dir) >= sizeof(path)) {
			buf_puts(err, "run_dir: path too long");
			return -1;
		}
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
		    0600);
	} else {
		snprintf(path, sizeof(path), "memfd svc-api-slots");
		fd = memfd_create("svc-api-slots", MFD_CLOEXEC);
	}
	if (fd == -1)
		buf_printf(err, "%s: %s", path, strerror(errno));
	return fd;
}

struct slots *
slots_attach(int fd, struct buf *err)
{
	char path[64];
	struct slots *s;

	if ((s = calloc(1, sizeof(*s))) == NULL) {
		buf_puts(err, "out of memory");
		return NULL;
	}
	/* A new open file description of the same file: OFD locks belong to
	 * the description, and the one inherited from the master is shared
	 * with every sibling. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if ((s->fd = open(path, O_RDWR | O_CLOEXEC)) == -1) {
		buf_printf(err, "%s: %s", path, strerror(errno));
		free(s);
		return NULL;
	}
	return s;
}

void
slots_free(struct slots *s)
{
	if (s == NULL)
		return;
	close(s->fd);		/* lets go of every place held */
	free(s);
}

static off_t
slots_bucket(const char *account)
{
	uint8_t h[32];

	gnutls_hash_fast(GNUTLS_DIG_SHA256, account, strlen(account), h);
	return (off_t)(((uint32_t)h[0] << 16 | (uint32_t)h[1] << 8 | h[2]) %
	    SLOTS_BUCKETS);
}

static int
slots_lock(int fd, off_t at, short type)
{
	struct flock f;

	memset(&f, 0, sizeof(f));
	f.l_type = type;
	f.l_whence = SEEK_SET;
	f.l_start = at;
	f.l_len = type == F_UNLCK ? 0 : 1;	/* unlock: everything */
	return fcntl(fd, F_OFD_SETLK, &f);
}

int
slots_take(struct slots *s, enum slots_kind kind, const char *account,
    int capacity)
{
	off_t base;
	int i, max;

	switch (kind) {
	case SLOTS_SLOW:
		base = 0;
		max = SLOTS_SLOW_MAX;
		break;
	case SLOTS_PROBE:
		base = SLOTS_PROBE_BASE + slots_bucket(account) *
		    SLOTS_ACCOUNT_MAX;
		max = SLOTS_ACCOUNT_MAX;
		break;
	default:
		base = SLOTS_REVOKE_BASE + slots_bucket(account);
		max = 1;
		break;
	}
	if (capacity > max)
		capacity = max;
	for (i = 0; i < capacity; i++) {
		if (slots_lock(s->fd, base + i, F_WRLCK) == 0) {
			s->held++;
			return 1;
		}
		if (errno != EAGAIN && errno != EACCES) {
			log_error("event=slots_failed kind=%s error=\"%s\"",
			    slots_kind_names[kind], strerror(errno));
			return -1;
		}
	}
	return 0;
}

void
slots_release_all(struct slots *s)
{
	if (s == NULL || s->held == 0)
		return;
	if (slots_lock(s->fd, 0, F_UNLCK) == -1)
		log_error("event=slots_failed kind=release error=\"%s\"",
		    strerror(errno));
	s->held = 0;
}
