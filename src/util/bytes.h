/* bytes.h - little-endian readers and writers for the binary formats we
 * parse (ZIP, fatbin), and a string hash: one copy of them for every module. */
#ifndef OW_BYTES_H
#define OW_BYTES_H

#include <stdint.h>

static inline uint16_t ow_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t ow_le32(const uint8_t *p)
{
	return (uint32_t)ow_le16(p) | (uint32_t)ow_le16(p + 2) << 16;
}

static inline uint64_t ow_le64(const uint8_t *p)
{
	return (uint64_t)ow_le32(p) | (uint64_t)ow_le32(p + 4) << 32;
}

static inline void ow_put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void ow_put_le32(uint8_t *p, uint32_t v)
{
	ow_put_le16(p, (uint16_t)v);
	ow_put_le16(p + 2, (uint16_t)(v >> 16));
}

/* Does [off, off + len) end at or before `limit`?  The sum is checked for
 * wrapping: offsets and sizes come from hostile archives, and a value near
 * 2^64 would otherwise wrap to a small end and pass. */
static inline int ow_span_within(uint64_t off, uint64_t len, uint64_t limit)
{
	uint64_t end;
	return !__builtin_add_overflow(off, len, &end) && end <= limit;
}

/* 0..15 for a hex digit (either case), -1 otherwise. */
static inline int ow_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* FNV-1a, 64 bits, of a NUL-terminated string: a quick hash for tables of
 * URLs (not for anything an attacker could aim at). */
static inline uint64_t ow_fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3u;
	return h;
}

#endif
