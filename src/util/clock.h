/* clock.h - the two clocks the code reads: monotonic time for durations and
 * deadlines (never the wall clock, which jumps), and UTC for what is shown
 * or recorded.  One copy for every module. */
#ifndef OW_CLOCK_H
#define OW_CLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Monotonic seconds (for differences only). */
static inline double ow_mono_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Monotonic milliseconds (for differences only). */
static inline int64_t ow_mono_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Unix time t in UTC, "2026-12-03T12:04:48Z" ("" when it cannot be shown). */
static inline void ow_utc_iso(int64_t t, char *buf, size_t n)
{
	time_t tt = (time_t)t;
	struct tm tm;
	if (n && !(gmtime_r(&tt, &tm) && strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm)))
		buf[0] = '\0';
}

/* The same for people to read: "2026-12-03 12:04:48 UTC". */
static inline void ow_utc_text(int64_t t, char *buf, size_t n)
{
	time_t tt = (time_t)t;
	struct tm tm;
	if (n && !(gmtime_r(&tt, &tm) && strftime(buf, n, "%Y-%m-%d %H:%M:%S UTC", &tm)))
		buf[0] = '\0';
}

#endif
