/* httpretry.h - the backoff between the attempts of a request, one for the
 * transfer engine (http.c) and the single-request client (httpcall.c):
 * capped exponential, with jitter so that many clients failing together do
 * not come back together. */
#ifndef OW_HTTPRETRY_H
#define OW_HTTPRETRY_H

#include <stdint.h>

#include "offwheel/http.h"

/* A seed for ow_http_backoff_ms's generator, never 0: the clock, the
 * process and `salt` (the address of the engine or connection). */
uint64_t ow_http_rng_seed(const void *salt);
/* The wait in ms before the attempt after `attempts` ones: the delay
 * doubles from o->backoff_base_ms up to o->backoff_max_ms, half of it fixed
 * and half random (drawn from *rng, which moves on). */
long ow_http_backoff_ms(const struct ow_http_opts *o, unsigned attempts, uint64_t *rng);
/* Sleep `ms` milliseconds on this thread (a signal does not cut it short). */
void ow_http_sleep_ms(long ms);

#endif
