/* log.c: one line per event: "<time> <prog>[pid] level=<l> <key=value ...>".
 * Lines go out with a single write so processes sharing a file do not interleave. */
#include "util/log.h"
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

const char *const log_level_names[LOG_LEVEL__MAX] = {
	"error", "warn", "info", "debug"
};

static char log_prog[32] = "svc";
static enum log_level log_max = LOG_LEVEL_INFO;
static int log_fd = 2;

void
log_init(const char *prog, enum log_level level, const char *file)
{
	int fd;

	snprintf(log_prog, sizeof(log_prog), "%s", prog);
	log_max = level;
	if (file != NULL && *file != '\0') {
		fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
		if (fd != -1) {
			if (log_fd > 2)
				close(log_fd);
			log_fd = fd;
		} else
			log_error("event=log_open_failed file=%s", file);
	}
}

int
log_level_parse(const char *s, enum log_level *out)
{
	int i;

	for (i = 0; i < LOG_LEVEL__MAX; i++)
		if (strcmp(s, log_level_names[i]) == 0) {
			*out = (enum log_level)i;
			return 0;
		}
	return -1;
}

void
log_msg(enum log_level level, const char *fmt, ...)
{
	char line[4096];
	struct timeval tv;
	struct tm tm;
	size_t n;
	int r;
	va_list ap;

	if (level > log_max)
		return;
	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	n = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S", &tm);
	r = snprintf(line + n, sizeof(line) - n, ".%03ldZ %s[%ld] level=%s ",
	    (long)(tv.tv_usec / 1000), log_prog, (long)getpid(),
	    log_level_names[level]);
	if (r > 0)
		n += (size_t)r;
	va_start(ap, fmt);
	r = vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	if (r > 0)
		n += (size_t)r < sizeof(line) - n - 1 ? (size_t)r :
		    sizeof(line) - n - 2;
	line[n++] = '\n';
	if (write(log_fd, line, n) < 0) {
		/* Nowhere left to report it. */
	}
}

int
log_quote(struct buf *b, const char *s, size_t maxlen)
{
	size_t i;
	unsigned char c;

	if (buf_putc(b, '"') == -1)
		return -1;
	for (i = 0; s[i] != '\0' && i < maxlen; i++) {
		c = (unsigned char)s[i];
		if (c == '"' || c == '\\') {
			if (buf_putc(b, '\\') == -1 || buf_putc(b, (char)c) == -1)
				return -1;
		} else if (c < 0x20 || c == 0x7f) {
			if (buf_printf(b, "\\x%02x", c) == -1)
				return -1;
		} else if (buf_putc(b, (char)c) == -1)
			return -1;
	}
	if (s[i] != '\0' && buf_puts(b, "...") == -1)
		return -1;
	return buf_putc(b, '"');
}
