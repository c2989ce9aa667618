/* httpretry.c - backoff between attempts (httpretry.h). */
#include "httpretry.h"

#include <errno.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

uint64_t ow_http_rng_seed(const void *salt)
{
	uint64_t s = (uint64_t)ow_mono_ms() * 2654435761u ^ (uint64_t)getpid() ^ (uintptr_t)salt;
	return s | 1;
}

long ow_http_backoff_ms(const struct ow_http_opts *o, unsigned attempts, uint64_t *rng)
{
	unsigned n = attempts ? attempts - 1 : 0;
	long d = o->backoff_base_ms;
	while (n-- && d < o->backoff_max_ms)
		d *= 2;
	if (d > o->backoff_max_ms)
		d = o->backoff_max_ms;
	return d / 2 + (long)(xorshift(rng) % (uint64_t)(d / 2 + 1));
}

void ow_http_sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}
