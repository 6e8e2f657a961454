/* log.h: one line per event, "key=value" pairs, to stderr or a file. */
#ifndef SVC_LOG_H
#define SVC_LOG_H
#include "util/buf.h"

enum log_level {
	LOG_LEVEL_ERROR,
	LOG_LEVEL_WARN,
	LOG_LEVEL_INFO,
	LOG_LEVEL_DEBUG,
	LOG_LEVEL__MAX
};
extern const char *const log_level_names[LOG_LEVEL__MAX];

void	 log_init(const char *prog, enum log_level, const char *file);
int	 log_level_parse(const char *, enum log_level *);
void	 log_msg(enum log_level, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* Appends untrusted text as a double-quoted, escaped log value. */
int	 log_quote(struct buf *, const char *, size_t maxlen);

#define log_error(...)	log_msg(LOG_LEVEL_ERROR, __VA_ARGS__)
#define log_warn(...)	log_msg(LOG_LEVEL_WARN, __VA_ARGS__)
#define log_info(...)	log_msg(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_debug(...)	log_msg(LOG_LEVEL_DEBUG, __VA_ARGS__)
#endif
