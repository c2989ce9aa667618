/* decompress.c - LZ4 blocks and zstd frames of fatbin payloads, bounded by
 * the caller's buffer (see decompress.h).  The one includer of lz4.h and
 * zstd.h. */
#include "decompress.h"

#include <lz4.h>
#include <limits.h>
#include <zstd.h>

#include "error.h"

/* zstd's window: a frame asking for more than 2^27 bytes of history (the
 * library's default cap, 128 MiB) is refused rather than allocated. */
#define ZSTD_WINDOW_LOG_MAX 27

static int lz4_block(const void *src, size_t srclen, void *dst, size_t want, size_t *got)
{
	if (srclen > INT_MAX || want > INT_MAX)
		return ow_err(OW_ETOOBIG, "lz4 payload: %zu bytes, more than one block holds", srclen);
	int n = LZ4_decompress_safe_partial(src, dst, (int)srclen, (int)want, (int)want);
	if (n < 0)
		return ow_err(OW_EPARSE, "lz4 payload: corrupt block (at byte %d) — the file is damaged",
			      -n);
	*got = (size_t)n;
	return 0;
}

/* Full frames straight into dst; prefixes through the streaming decoder,
 * which stops once `want` bytes are out. */
static int zstd_frame(const void *src, size_t srclen, void *dst, size_t full, size_t want,
		      size_t *got)
{
	ZSTD_DCtx *z = ZSTD_createDCtx();
	if (!z)
		return ow_err(OW_ENOMEM, "zstd: out of memory");
	size_t r = ZSTD_DCtx_setParameter(z, ZSTD_d_windowLogMax, ZSTD_WINDOW_LOG_MAX);
	int rc = 0;
	if (!ZSTD_isError(r) && want == full) {
		r = ZSTD_decompressDCtx(z, dst, full, src, srclen);
		if (!ZSTD_isError(r))
			*got = r;
	} else if (!ZSTD_isError(r)) {
		ZSTD_inBuffer in = {src, srclen, 0};
		ZSTD_outBuffer out = {dst, want, 0};
		while (out.pos < out.size && in.pos < in.size) {
			r = ZSTD_decompressStream(z, &out, &in);
			if (ZSTD_isError(r) || r == 0)
				break;
		}
		if (!ZSTD_isError(r))
			*got = out.pos;
	}
	if (ZSTD_isError(r))
		rc = ow_err(OW_EPARSE, "zstd payload: %s — the file is damaged", ZSTD_getErrorName(r));
	ZSTD_freeDCtx(z);
	return rc;
}

int ow_decompress(int method, const void *src, size_t srclen, void *dst, size_t full,
		  size_t want, size_t *got)
{
	*got = 0;
	if (!src || !dst || want > full)
		return ow_err(OW_EINVAL, "ow_decompress: bad arguments");
	if (method == OW_DECOMP_LZ4)
		return lz4_block(src, srclen, dst, want, got);
	if (method == OW_DECOMP_ZSTD)
		return zstd_frame(src, srclen, dst, full, want, got);
	return ow_err(OW_EINVAL, "ow_decompress: unknown method %d", method);
}
