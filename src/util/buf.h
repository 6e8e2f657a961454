/* buf.h: growable, always NUL-terminated byte buffer with a hard size cap. */
#ifndef SVC_BUF_H
#define SVC_BUF_H
#include <stddef.h>
#include <stdarg.h>

struct buf {
	char	*data;	/* NUL-terminated, NULL until the first append */
	size_t	 len;
	size_t	 cap;
	size_t	 max;	/* appends that would pass this length fail */
};

#define BUF_NOMAX ((size_t)-1)

void	 buf_init(struct buf *, size_t max);
int	 buf_append(struct buf *, const void *, size_t);
/* Room for extra more bytes and the NUL after len, the content unchanged
 * (for a caller that writes into data itself, then sets len and the NUL):
 * 0, or -1 as an append of extra bytes would fail. */
int	 buf_reserve(struct buf *, size_t extra);
int	 buf_puts(struct buf *, const char *);
int	 buf_putc(struct buf *, char);
int	 buf_printf(struct buf *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
int	 buf_vprintf(struct buf *, const char *, va_list)
	    __attribute__((format(printf, 2, 0)));
const char *buf_str(const struct buf *);
void	 buf_reset(struct buf *);
void	 buf_free(struct buf *);
char	*buf_steal(struct buf *);
#endif
