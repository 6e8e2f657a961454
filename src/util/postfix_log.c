/* postfix_log.c: a Postfix log line read as a delivery attempt
 * (postfix_log.h). The line is read left to right: the timestamp, the
 * host, the program tag ("postfix.../agent[pid]:"), the queue id, then
 * "to=<...>" and the dsn= and status= fields that follow it. */
#include "util/postfix_log.h"
#include "util/strparse.h"
#include <string.h>

const char *const postfix_log_status_names[POSTFIX_LOG_STATUS__MAX] = {
	"sent", "bounced", "deferred"
};

/* Longer lines are read as their first this many bytes (the fields come
 * first; only the reply text can be that long). */
#define POSTFIX_LOG_LINE_MAX	16384

static const char *const postfix_log_months[12] = {
	"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct",
	"Nov", "Dec"
};

/* n decimal digits at s into *v: 0, or -1. */
static int
postfix_log_digits(const char *s, size_t n, int *v)
{
	size_t i;

	*v = 0;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		*v = *v * 10 + (s[i] - '0');
	}
	return 0;
}

/* "HH:MM:SS" at s into tm: 0, or -1. */
static int
postfix_log_clock(const char *s, struct tm *tm)
{
	if (s[2] != ':' || s[5] != ':' ||
	    postfix_log_digits(s, 2, &tm->tm_hour) == -1 ||
	    postfix_log_digits(s + 3, 2, &tm->tm_min) == -1 ||
	    postfix_log_digits(s + 6, 2, &tm->tm_sec) == -1 ||
	    tm->tm_hour > 23 || tm->tm_min > 59 || tm->tm_sec > 60)
		return -1;
	return 0;
}

/* "2026-11-28T12:00:01[.123456](Z|+01:00)" at s: the text after it, or
 * NULL when s does not start with such a time. */
static const char *
postfix_log_rfc3339(const char *s, time_t *t)
{
	struct tm tm;
	int oh, om, sign;

	memset(&tm, 0, sizeof(tm));
	if (s[4] != '-' || s[7] != '-' || s[10] != 'T' ||
	    postfix_log_digits(s, 4, &tm.tm_year) == -1 ||
	    postfix_log_digits(s + 5, 2, &tm.tm_mon) == -1 ||
	    postfix_log_digits(s + 8, 2, &tm.tm_mday) == -1 ||
	    postfix_log_clock(s + 11, &tm) == -1 || tm.tm_mon < 1 ||
	    tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31)
		return NULL;
	s += 19;
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++)
			continue;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	*t = timegm(&tm);
	if (*s == 'Z')
		return s + 1;
	if ((*s != '+' && *s != '-') || s[3] != ':' ||
	    postfix_log_digits(s + 1, 2, &oh) == -1 ||
	    postfix_log_digits(s + 4, 2, &om) == -1 || oh > 23 || om > 59)
		return NULL;
	sign = *s == '-' ? -1 : 1;
	*t -= sign * (oh * 3600 + om * 60);
	return s + 6;
}

/* "Nov 28 12:00:01" (the day may be " 8") at s, local time, in the year
 * that puts it at most a day after now: the text after it, or NULL. */
static const char *
postfix_log_classic(const char *s, time_t now, time_t *t)
{
	struct tm tm, today;
	int m;

	memset(&tm, 0, sizeof(tm));
	for (m = 0; m < 12; m++)
		if (strncmp(s, postfix_log_months[m], 3) == 0)
			break;
	if (m == 12 || s[3] != ' ')
		return NULL;
	if (s[4] == ' ' ? postfix_log_digits(s + 5, 1, &tm.tm_mday) :
	    postfix_log_digits(s + 4, 2, &tm.tm_mday))
		return NULL;
	if (tm.tm_mday < 1 || tm.tm_mday > 31 || s[6] != ' ' ||
	    postfix_log_clock(s + 7, &tm) == -1)
		return NULL;
	if (localtime_r(&now, &today) == NULL)
		return NULL;
	tm.tm_mon = m;
	tm.tm_year = today.tm_year;
	tm.tm_isdst = -1;
	*t = mktime(&tm);
	if (*t != (time_t)-1 && *t > now + 86400) {
		tm.tm_year--;
		tm.tm_isdst = -1;
		*t = mktime(&tm);
	}
	return *t == (time_t)-1 ? NULL : s + 15;
}

/* The remote server's reply code in the status text: after "said: ", or
 * the text's own start ("250 2.0.0 Ok: queued as ..."); 0 when none. */
static int
postfix_log_reply_code(const char *text)
{
	const char *p = strstr(text, " said: ");

	return strparse_reply_code(p != NULL ? p + 7 : text);
}

/* Copies the value of "name=" in fields (up to the next ',' or ' ') into
 * out: 0, or -1 when it is absent or too long. */
static int
postfix_log_field(const char *fields, const char *name, char *out,
    size_t outsz)
{
	const char *p = fields, *v;
	size_t nl = strlen(name), n;

	for (;;) {
		if ((p = strstr(p, name)) == NULL)
			return -1;
		if (p[nl] == '=' && (p == fields || p[-1] == ' '))
			break;
		p += nl;
	}
	v = p + nl + 1;
	n = strcspn(v, ", ");
	if (n == 0 || n >= outsz)
		return -1;
	memcpy(out, v, n);
	out[n] = '\0';
	return 0;
}

/* The tag "postfix[-NAME]/agent[pid]:" at s: the text after it and its
 * space, or NULL when it is another program's. */
static const char *
postfix_log_tag(const char *s)
{
	size_t n = strcspn(s, " ");

	if (strncmp(s, "postfix", 7) != 0 || n < 10 || s[n - 1] != ':' ||
	    memchr(s, '/', n) == NULL || s[n] != ' ')
		return NULL;
	return s + n + 1;
}

enum postfix_log_err
postfix_log_parse(const char *line, size_t len, time_t now,
    struct postfix_log_delivery *d)
{
	char buf[POSTFIX_LOG_LINE_MAX + 1], status[16], *text;
	const char *s, *tag, *t, *to, *end;
	size_t n;
	int st;

	memset(d, 0, sizeof(*d));
	n = len < POSTFIX_LOG_LINE_MAX ? len : POSTFIX_LOG_LINE_MAX;
	memcpy(buf, line, n);
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	/* the tag, the queue id and "to=<": else another line */
	if ((tag = strstr(buf, " postfix")) == NULL ||
	    (s = postfix_log_tag(tag + 1)) == NULL)
		return POSTFIX_LOG_OTHER;
	n = strspn(s, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz");
	if (n < 5 || n > POSTFIX_LOG_QUEUE_ID_MAX || s[n] != ':' ||
	    s[n + 1] != ' ' || strncmp(s + n + 2, "to=<", 4) != 0)
		return POSTFIX_LOG_OTHER;
	memcpy(d->queue_id, s, n);
	d->queue_id[n] = '\0';
	/* the status says whether it is a delivery attempt (address
	 * verification probes say deliverable/undeliverable: not one) */
	to = s + n + 6;
	if ((end = strstr(to, ">, ")) == NULL ||
	    postfix_log_field(end + 3, "status", status, sizeof(status)) == -1)
		return POSTFIX_LOG_OTHER;
	for (st = 0; st < POSTFIX_LOG_STATUS__MAX; st++)
		if (strcmp(status, postfix_log_status_names[st]) == 0)
			break;
	if (st == POSTFIX_LOG_STATUS__MAX)
		return POSTFIX_LOG_OTHER;
	d->status = (enum postfix_log_status)st;
	/* before the tag: the time and one host name */
	t = buf[0] >= '0' && buf[0] <= '9' ? postfix_log_rfc3339(buf, &d->at) :
	    postfix_log_classic(buf, now, &d->at);
	if (t == NULL || *t != ' ' || t + 1 >= tag || strchr(t + 1, ' ') != tag)
		return POSTFIX_LOG_BAD_TIME;
	n = (size_t)(end - to);
	if (n == 0 || n > POSTFIX_LOG_ADDR_MAX || memchr(to, ' ', n) != NULL)
		return POSTFIX_LOG_BAD;
	memcpy(d->to, to, n);
	d->to[n] = '\0';
	if (postfix_log_field(end + 3, "dsn", d->dsn, sizeof(d->dsn)) == -1 ||
	    (n = strparse_enhanced_len(d->dsn)) == 0 || d->dsn[n] != '\0')
		d->dsn[0] = '\0';
	if ((text = strstr(end, " status=")) != NULL &&
	    (text = strchr(text, '(')) != NULL)
		d->smtp_code = postfix_log_reply_code(text + 1);
	return POSTFIX_LOG_OK;
}
