/* hex.c - hex text of digests (hex.h): no OpenSSL here. */
#include "hex.h"

#include <string.h>

#include "bytes.h"
#include "offwheel/error.h"

void ow_hex(const uint8_t *d, size_t len, char *hex)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < len; i++) {
		hex[2 * i] = digits[d[i] >> 4];
		hex[2 * i + 1] = digits[d[i] & 15];
	}
	hex[2 * len] = '\0';
}

int ow_sha256_from_hex(const char *hex, uint8_t out[OW_SHA256_LEN])
{
	if (!hex || strlen(hex) != 2 * OW_SHA256_LEN)
		return ow_err(OW_EPARSE, "sha256 '%.80s': not 64 hex digits", hex ? hex : "(null)");
	for (size_t i = 0; i < OW_SHA256_LEN; i++) {
		int hi = ow_hexval((unsigned char)hex[2 * i]), lo = ow_hexval((unsigned char)hex[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return ow_err(OW_EPARSE, "sha256 '%.80s': not 64 hex digits", hex);
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

int ow_is_sha256_hex(const char *s)
{
	if (!s || strlen(s) != 64)
		return 0;
	for (size_t i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}
