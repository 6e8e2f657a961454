/* postfix_log.h: one line of a Postfix mail log read as a delivery
 * attempt: the lines a delivery agent (postfix/smtp, lmtp, local, virtual,
 * pipe, error, ...; "postfix-NAME/..." of a second instance too) writes per
 * recipient, "QUEUEID: to=<ADDRESS>, ..., dsn=X.Y.Z, status=sent|bounced|
 * deferred (TEXT)". Both timestamps syslog writes: RFC 3339 with its
 * offset ("2026-11-28T12:00:01.123456+01:00"), and the classic
 * "Nov 28 12:00:01", read in the local time zone (TZ) with the year that
 * puts it at most a day after now. Knows nothing of svc. */
#ifndef SVC_POSTFIX_LOG_H
#define SVC_POSTFIX_LOG_H
#include <stddef.h>
#include <time.h>

#define POSTFIX_LOG_QUEUE_ID_MAX	32
#define POSTFIX_LOG_ADDR_MAX		512
#define POSTFIX_LOG_DSN_MAX		15

enum postfix_log_status {
	POSTFIX_LOG_SENT,
	POSTFIX_LOG_BOUNCED,
	POSTFIX_LOG_DEFERRED,
	POSTFIX_LOG_STATUS__MAX
};
extern const char *const postfix_log_status_names[POSTFIX_LOG_STATUS__MAX];

enum postfix_log_err {
	POSTFIX_LOG_OK,
	POSTFIX_LOG_OTHER,	/* not a delivery line (another program, qmgr) */
	POSTFIX_LOG_BAD_TIME,	/* a delivery line whose time is not readable */
	POSTFIX_LOG_BAD		/* a delivery line otherwise not readable */
};

struct postfix_log_delivery {
	time_t			 at;
	char			 queue_id[POSTFIX_LOG_QUEUE_ID_MAX + 1];
	char			 to[POSTFIX_LOG_ADDR_MAX + 1];
	char			 dsn[POSTFIX_LOG_DSN_MAX + 1];	/* "": none */
	int			 smtp_code;	/* the remote reply's; 0: none */
	enum postfix_log_status	 status;
};

/* Reads line (len bytes, no newline needed; NUL bytes make it BAD) into d;
 * now: for the year of a classic timestamp. */
enum postfix_log_err postfix_log_parse(const char *line, size_t len,
	    time_t now, struct postfix_log_delivery *d);
#endif
