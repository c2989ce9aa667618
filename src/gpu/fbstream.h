/* fbstream.h - a library listed while it inflates, in bounded memory (not a
 * public header; docs/fatbin.md, "Auditing a wheel in bounded memory").
 *
 * A wheel member cannot be read at random: it arrives front to back from the
 * inflater.  The listing (fatbin.h) needs only a few of its bytes — the ELF
 * or PE headers, the section header table and its name table, the 16-byte
 * container headers, the 64-byte entry headers and the payloads of small
 * uncompressed cubins — and the kernel count (fatbinkern.h) needs one
 * answer per container.  A stream keeps exactly those:
 *   - the first 64 KiB, and for an ELF the section header table with the
 *     1 MiB before it (where the linker puts .shstrtab);
 *   - every 8-aligned offset holding the fatbin magic, and for each one the
 *     bytes the listing would read to walk that container (its header, its
 *     entry headers, small cubin payloads, the 16 bytes after its end) —
 *     followed as far as the listing would follow them;
 *   - for each container of at most 64 MiB, held whole only while it passes,
 *     the kernel decision fatbinkern.h would make for it.
 * Afterwards the listing runs unchanged over these kept bytes (a sparse
 * input) and the kernel count takes the kept decisions.  A read of a byte
 * that was not kept (an unusual layout: the name table far from the
 * section headers, a decision for a bigger container) sets `missed`: the
 * caller lists that member again from memory, whole.  The result is the
 * same listing, byte for byte; only where it comes from differs. */
#ifndef OW_FBSTREAM_H
#define OW_FBSTREAM_H

#include <stddef.h>
#include <stdint.h>

#include "offwheel/fatbin.h"

/* Kept bytes: sorted, not overlapping, not adjacent. */
struct fb_piece {
	uint64_t off;
	uint64_t len;
	uint64_t at; /* in fb_sparse.bytes */
};

/* One container's kernel decision (fatbinkern.h's, made while it passed). */
struct fb_decision {
	uint64_t off;       /* the container header's offset */
	uint32_t count;     /* its entries */
	uint32_t first;     /* its entries' kernels in fb_sparse.kernels */
	uint8_t no_kernels;
	int rc;             /* the decision failed with rc (detail in err) */
	char *err;
};

struct fb_sparse {
	uint64_t size;      /* of the whole input */
	struct fb_piece *pieces;
	size_t n_pieces;
	uint8_t *bytes;
	uint64_t *magic;    /* 8-aligned offsets with the fatbin magic, ascending */
	size_t n_magic;
	struct fb_decision *dec; /* by offset */
	size_t n_dec;
	int32_t *kernels;
	int decided;        /* decisions were made (else none is asked for) */
	int missed;         /* a read wanted bytes that were not kept */
	uint64_t miss_off, miss_len; /* the first such read (miss_len 0: a kernel
	                              * decision that was not kept) */
};

/* The listing of a sparse input (as ow_fatbin_scan_buffer of the whole);
 * check sp->missed afterwards whatever it returned. */
int fb_scan_sparse(struct fb_sparse *sp, unsigned opts, struct ow_fatbin **out);

/* The oracle of ow_fatbin_count_kernels_oracle (ud: the fb_sparse): the
 * decision kept for module m, or a miss (sp->missed set). */
int fb_sparse_decision(void *ud, struct ow_fatbin *fb, struct ow_fatbin_module *m);

typedef struct fb_stream fb_stream;

/* A stream for an input of `size` bytes; `decide`: make the kernel
 * decisions (a verdict or -v needs them).  NULL when out of memory. */
fb_stream *fb_stream_new(uint64_t size, int decide);
/* Keep [off, off+len) too (before the first byte is fed; at most
 * FB_STREAM_WANTS ranges): a second pass over a member whose listing missed
 * a range (the section name table far from the section headers) keeps it. */
#define FB_STREAM_WANTS 8
int fb_stream_want(fb_stream *st, uint64_t off, uint64_t len);
/* The next bytes.  Errors: OW_ENOMEM, OW_EZIP (more than size bytes). */
int fb_stream_feed(fb_stream *st, const void *data, size_t len);
/* After the first bytes: 1 when this input is not for streaming (only host
 * ELF and PE files are; an archive, a cubin, PTX or a fatbin file is read
 * whole), 0 when it is, -1 not known yet.  Until it is known every byte is
 * kept, in order: fb_stream_head gives them. */
int fb_stream_whole(const fb_stream *st);
const uint8_t *fb_stream_head(const fb_stream *st, size_t *len);
/* All bytes fed: the kept bytes (owned by the stream). */
int fb_stream_finish(fb_stream *st, struct fb_sparse **out);
/* The most bytes the stream held at once. */
uint64_t fb_stream_peak(const fb_stream *st);
void fb_stream_free(fb_stream *st);

#endif
