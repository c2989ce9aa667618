/* decompress.c - LZ4 blocks and zstd frames of fatbin payloads, bounded by
 * the caller's buffer (see decompress.h).  The one includer of lz4.h and
 * zstd.h. */
#include "decompress.h"

#include <lz4.h>
#include <limits.h>
#include <stdlib.h>
#include <zstd.h>

#include "offwheel/error.h"

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
struct ow_decomp {
	ZSTD_DCtx *z;
};

ow_decomp *ow_decomp_new(void)
{
	ow_decomp *d = calloc(1, sizeof *d);
	if (d && !(d->z = ZSTD_createDCtx())) {
		free(d);
		d = NULL;
	}
	return d;
}

void ow_decomp_free(ow_decomp *d)
{
	if (!d)
		return;
	ZSTD_freeDCtx(d->z);
	free(d);
}

static int zstd_frame(ZSTD_DCtx *z, const void *src, size_t srclen, void *dst, size_t full,
		      size_t want, size_t *got)
{
	ZSTD_DCtx_reset(z, ZSTD_reset_session_and_parameters);
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
	return rc;
}

int ow_decompress_with(ow_decomp *d, const struct ow_decomp_job *j, size_t *got)
{
	*got = 0;
	if (!d || !j->src || !j->dst || j->want > j->full)
		return ow_err(OW_EINVAL, "ow_decompress: bad arguments");
	if (j->method == OW_DECOMP_LZ4)
		return lz4_block(j->src, j->srclen, j->dst, j->want, got);
	if (j->method == OW_DECOMP_ZSTD)
		return zstd_frame(d->z, j->src, j->srclen, j->dst, j->full, j->want, got);
	return ow_err(OW_EINVAL, "ow_decompress: unknown method %d", j->method);
}

int ow_zstd_prefix(ow_decomp *d, ow_decomp_read_fn read, void *ud,
		   unsigned long long stored, void *dst, size_t want, size_t *got)
{
	*got = 0;
	if (!d || !read || !dst)
		return ow_err(OW_EINVAL, "ow_zstd_prefix: bad arguments");
	ZSTD_DCtx_reset(d->z, ZSTD_reset_session_and_parameters);
	size_t r = ZSTD_DCtx_setParameter(d->z, ZSTD_d_windowLogMax, ZSTD_WINDOW_LOG_MAX);
	ZSTD_outBuffer out = {dst, want, 0};
	unsigned long long pos = 0;
	size_t chunk = 4096;
	while (!ZSTD_isError(r) && out.pos < out.size && pos < stored) {
		size_t n = stored - pos < chunk ? (size_t)(stored - pos) : chunk;
		const unsigned char *p;
		int rc = read(ud, pos, n, &p);
		if (rc)
			return rc;
		ZSTD_inBuffer in = {p, n, 0};
		while (out.pos < out.size && in.pos < in.size) {
			r = ZSTD_decompressStream(d->z, &out, &in);
			if (ZSTD_isError(r) || r == 0)
				break;
		}
		pos += in.pos;
		if (!ZSTD_isError(r) && r == 0)
			break; /* the end of the frame */
		if (in.pos == 0 && out.pos < out.size)
			return ow_err(OW_EPARSE, "zstd payload: the decoder made no progress — the file "
			                         "is damaged");
		chunk = chunk < (64u << 10) ? chunk * 2 : chunk;
	}
	if (ZSTD_isError(r))
		return ow_err(OW_EPARSE, "zstd payload: %s — the file is damaged", ZSTD_getErrorName(r));
	*got = out.pos;
	return 0;
}
