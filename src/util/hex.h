/* hex.h - hex text of digests, apart from digest.c so that code which only
 * reads and writes digests as text (the index page parser) does not pull in
 * OpenSSL. digest.h includes this header. */
#ifndef OW_HEX_H
#define OW_HEX_H

#include <stddef.h>
#include <stdint.h>

#define OW_SHA256_LEN 32

/* Lowercase hex of a digest into `hex` (65 bytes). */
void ow_hex(const uint8_t *d, size_t len, char *hex);
/* Parse exactly 64 hex digits (either case) into 32 bytes; OW_EPARSE else. */
int ow_sha256_from_hex(const char *hex, uint8_t out[OW_SHA256_LEN]);
/* True when `s` is exactly 64 lowercase hex digits. */
int ow_is_sha256_hex(const char *s);

#endif
