/* decompress.h - the LZ4 and zstd payloads of CUDA fatbin entries.
 *
 * The only module that includes liblz4 and libzstd.  A fatbin entry flagged
 * LZ4 (0x2000) holds one raw LZ4 block; one flagged zstd (0x8000) holds a
 * zstd frame.  Output is bounded by the caller's buffer: a hostile payload
 * cannot make either decoder write or allocate more than `cap` bytes. */
#ifndef OW_DECOMPRESS_H
#define OW_DECOMPRESS_H

#include <stddef.h>

enum ow_decompress_method { OW_DECOMP_LZ4 = 1, OW_DECOMP_ZSTD = 2 };

/* Decompress `src` (srclen bytes), whose whole output is `full` bytes, into
 * dst, stopping after `want` bytes (want <= full; dst holds want bytes).
 * want < full decodes a prefix only, which is cheaper, and may be asked for
 * from a src cut short: then *got may be less than want.  *got gets the
 * bytes written.  Errors: OW_EPARSE (not a valid stream of that method, or
 * longer than `full`), OW_EINVAL (unknown method), OW_ENOMEM. */
int ow_decompress(int method, const void *src, size_t srclen, void *dst, size_t full,
		  size_t want, size_t *got);

#endif
