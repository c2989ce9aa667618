/* fuzz_rangemeta.c - the range reader of a wheel's METADATA (rangemeta.h)
 * over arbitrary bytes taken as the whole wheel, answered the way a server
 * answers Range requests.  The first read ends at every byte of a small
 * input (at evenly spread ones of a larger), so each stage meets its data
 * split everywhere: the end record and central directory inside the tail
 * or past it, the member inside it, partly, or not.  Every read lands in a
 * buffer of exactly its size, so a sanitizer sees a byte read outside it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rangemeta.h"

#define EVERY_BYTE_UP_TO 2048u
#define SPREAD_SPLITS 64u

static void run(const uint8_t *data, size_t size, uint64_t tail)
{
	struct ow_rangemeta rm;
	int rc = ow_rangemeta_init_tail(&rm, "demo-1.0-py3-none-any.whl", size, tail);
	for (int reads = 0; rc == 0 && rm.stage != OW_RM_DONE && reads < 8; reads++) {
		if (rm.want_off > size || rm.want_len > size - rm.want_off)
			abort(); /* asked for bytes outside the file */
		uint8_t *buf = malloc(rm.want_len ? (size_t)rm.want_len : 1);
		if (!buf)
			break;
		memcpy(buf, data + rm.want_off, (size_t)rm.want_len);
		rc = ow_rangemeta_feed(&rm, buf, (size_t)rm.want_len);
		free(buf);
		if (rc == OW_RM_WANT_MORE)
			rc = 0;
	}
	ow_rangemeta_clear(&rm);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size <= EVERY_BYTE_UP_TO) {
		for (uint64_t tail = 22; tail <= size; tail++)
			run(data, size, tail);
	} else {
		for (uint64_t k = 1; k <= SPREAD_SPLITS; k++)
			run(data, size, size * k / SPREAD_SPLITS);
	}
	run(data, size, OW_RANGEMETA_TAIL);
	return 0;
}
