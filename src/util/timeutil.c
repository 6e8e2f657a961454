/* timeutil.c: wall and monotonic clocks in milliseconds, ISO 8601 UTC. */
#include "util/timeutil.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>

int64_t
timeutil_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
timeutil_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
timeutil_mono_coarse_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct timespec
timeutil_ts(int64_t ms)
{
	struct timespec ts;

	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	return ts;
}

void
timeutil_sleep_ms(int64_t ms)
{
	struct timespec ts;

	if (ms <= 0)
		return;
	ts = timeutil_ts(ms);
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		continue;
}

void
timeutil_nap_ms(int64_t ms)
{
	struct timespec ts;

	if (ms <= 0)
		return;
	ts = timeutil_ts(ms);
	nanosleep(&ts, NULL);
}

void
timeutil_iso8601(time_t t, char out[TIMEUTIL_ISO_LEN])
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, TIMEUTIL_ISO_LEN, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int
timeutil_parse_iso8601(const char *s, time_t *out)
{
	struct tm tm;
	const char *p;

	memset(&tm, 0, sizeof(tm));
	p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (p == NULL)
		return -1;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -1;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (strcmp(p, "Z") != 0 && strcmp(p, "+00:00") != 0)
		return -1;
	*out = timegm(&tm);
	return 0;
}
