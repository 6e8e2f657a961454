/* timeutil.h: clock readings and ISO 8601 UTC formatting. */
#ifndef SVC_TIMEUTIL_H
#define SVC_TIMEUTIL_H
#include <stdint.h>
#include <time.h>

#define TIMEUTIL_ISO_LEN 32

int64_t	 timeutil_now_ms(void);
int64_t	 timeutil_mono_ms(void);
/* The monotonic clock to a tick (a few ms), for "has a second passed"
 * checks on hot paths: about 3 ns a reading against 28 for the exact one. */
int64_t	 timeutil_mono_coarse_ms(void);
/* Sleeps ms milliseconds, all of them (a signal's interruption resumes). */
void	 timeutil_sleep_ms(int64_t ms);
/* Sleeps ms milliseconds at most: a signal ends it early (so that a
 * program told to stop does not wait the rest). */
void	 timeutil_nap_ms(int64_t ms);
/* "2026-11-22T10:00:00Z" */
void	 timeutil_iso8601(time_t, char out[TIMEUTIL_ISO_LEN]);
/* Accepts "YYYY-MM-DDTHH:MM:SSZ" (and a fraction or +00:00). */
int	 timeutil_parse_iso8601(const char *, time_t *);
#endif
