/* fuzz_fbstream.c - the streamed listing (fbstream.h) against the listing
 * of the same bytes held whole: arbitrary bytes are fed to a stream in
 * chunks whose sizes come from the bytes themselves, then listed from what
 * the stream kept and their kernels counted from the decisions it kept.
 * Unless the stream says it missed a byte (the caller then lists the input
 * whole), both ways must agree exactly: the same error code, or the same
 * modules and entries field for field, for a listing (cc 0), a device audit
 * (cc 12.0) and a data-section scan. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fatbinkern.h"
#include "fbstream.h"
#include "offwheel/error.h"
#include "offwheel/fatbin.h"

static int whole(const uint8_t *data, size_t size, unsigned opts, int cc, struct ow_fatbin **fb)
{
	int rc = ow_fatbin_scan_buffer(data, size, opts, fb);
	if (!rc)
		rc = ow_fatbin_count_kernels(*fb, size ? data : (const uint8_t *)"", size, -1,
					     &(struct ow_kern_ask){cc, 0, 0}, NULL);
	return rc;
}

/* 1 when the stream took the input (an ELF or PE), with rc its result. */
static int streamed(const uint8_t *data, size_t size, unsigned opts, int cc, struct ow_fatbin **fb,
		    int *rc, int *missed)
{
	fb_stream *st = fb_stream_new(size, 1);
	if (!st)
		abort();
	uint32_t seed = size ? data[size - 1] * 2654435761u : 1;
	for (size_t at = 0; at < size && fb_stream_whole(st) != 1;) {
		seed = seed * 1103515245u + 12345u;
		size_t n = 1 + (seed >> 8) % 4099; /* 1 .. 4099 bytes: every split */
		n = n < size - at ? n : size - at;
		if (fb_stream_feed(st, data + at, n))
			abort(); /* only ENOMEM or a size mismatch can fail a feed */
		at += n;
	}
	if (!size && fb_stream_feed(st, "", 0))
		abort();
	if (fb_stream_whole(st) != 0) {
		fb_stream_free(st);
		return 0;
	}
	struct fb_sparse *sp;
	if (fb_stream_finish(st, &sp))
		abort();
	*rc = fb_scan_sparse(sp, opts, fb);
	if (!*rc)
		*rc = ow_fatbin_count_kernels_oracle(*fb, &(struct ow_kern_ask){cc, 0, 0},
						     fb_sparse_decision, sp);
	*missed = sp->missed;
	fb_stream_free(st);
	return 1;
}

static void same(const struct ow_fatbin *a, const struct ow_fatbin *b)
{
	if (a->format != b->format || a->n_modules != b->n_modules ||
	    a->n_entries != b->n_entries || a->n_false_magic != b->n_false_magic ||
	    a->no_section_headers != b->no_section_headers)
		abort();
	if (a->n_modules && memcmp(a->modules, b->modules, a->n_modules * sizeof *a->modules))
		abort();
	if (a->n_entries && memcmp(a->entries, b->entries, a->n_entries * sizeof *a->entries))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct { unsigned opts; int cc; } runs[] = {
		{0, 0}, {0, 120}, {OW_FATBIN_SCAN_DATA, 90},
	};
	for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
		struct ow_fatbin *w = NULL, *s = NULL;
		int wrc = whole(data, size, runs[r].opts, runs[r].cc, &w), src = 0, missed = 0;
		int took = streamed(data, size, runs[r].opts, runs[r].cc, &s, &src, &missed);
		if (took && !missed) {
			if (wrc != src)
				abort(); /* one way listed it, the other refused it */
			if (!wrc)
				same(w, s);
		}
		ow_err_clear();
		ow_fatbin_free(w);
		ow_fatbin_free(s);
	}
	return 0;
}
