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

/* A decoder, kept and reused across calls (making a zstd context costs more
 * than decoding a small cubin: it was a sixth of an audit of libcublasLt).
 * One per thread; ow_decomp_free(NULL) is fine. */
typedef struct ow_decomp ow_decomp;
ow_decomp *ow_decomp_new(void);
void ow_decomp_free(ow_decomp *d);
/* One payload to decompress: `src` (srclen bytes) of `method`, whose whole
 * output is `full` bytes, into dst, stopping after `want` bytes (want <=
 * full; dst holds want bytes). */
struct ow_decomp_job {
	int method; /* OW_DECOMP_LZ4 or OW_DECOMP_ZSTD */
	const void *src;
	size_t srclen;
	void *dst;
	size_t full, want;
};
/* Decompress a job.  want < full decodes a prefix only, which is cheaper, and
 * may be asked for from a src cut short: then *got may be less than want.
 * *got gets the bytes written.  Errors: OW_EPARSE (not a valid stream of that
 * method, or longer than `full`), OW_EINVAL (unknown method or no decoder),
 * OW_ENOMEM. */
int ow_decompress_with(ow_decomp *d, const struct ow_decomp_job *j, size_t *got);

/* The first `want` bytes of a zstd frame of `stored` bytes, read as it is
 * decoded: read(ud, off, n, &p) gives n bytes of the frame at off (p stays
 * valid until the next call).  Only the blocks that hold those bytes are
 * read and decoded, once each (asking for a prefix again from the start,
 * with more input, decoded the first block again every time: that was
 * most of an audit of libcublasLt).  *got may be less than want only at
 * the end of the frame. */
typedef int (*ow_decomp_read_fn)(void *ud, unsigned long long off, size_t n,
				 const unsigned char **p);
int ow_zstd_prefix(ow_decomp *d, ow_decomp_read_fn read, void *ud,
		   unsigned long long stored, void *dst, size_t want, size_t *got);

#endif
