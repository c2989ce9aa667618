/* rangemeta.h - a wheel's METADATA from a few byte ranges of it, for
 * indexes that publish no PEP 658 .metadata files (PyPI as some mirrors
 * serve it, and every PEP 503 root that never adopted PEP 658).
 *
 * A ZIP keeps its table of contents at the end, so three reads of a remote
 * wheel are enough, whatever its size: the tail (the end record, and the
 * central directory when it fits there), the central directory when it did
 * not, and the one member, `{name}-{version}.dist-info/METADATA`.  The
 * caller does the reads (HTTP Range requests); this module says which bytes
 * to ask for and checks what came back.  The member is then re-packed with
 * its central-directory entry into a one-member ZIP in memory and read
 * through the same path as a downloaded wheel (zipcheck.h, then wheel.h),
 * so the same strict checks apply and the CRC is verified while inflating.
 *
 * Usage:
 *   struct ow_rangemeta rm;
 *   ow_rangemeta_init(&rm, filename, size);       -> rm.want_off/want_len
 *   loop: read [want_off, want_off + want_len) and call
 *         ow_rangemeta_feed(&rm, bytes, n)        -> OW_RM_WANT_MORE
 *                                                    (rm.want_*), or OW_RM_HAVE_TEXT
 *   ow_rangemeta_text(&rm, &text, &len)           the METADATA (malloc'd)
 *   ow_rangemeta_clear(&rm) */
#ifndef OW_RANGEMETA_H
#define OW_RANGEMETA_H

#include <stddef.h>
#include <stdint.h>

/* The first read: the last 64 KiB (an end record with the longest comment
 * is 65,557 bytes from the end; a wheel's central directory usually fits in
 * what remains). */
#define OW_RANGEMETA_TAIL ((uint64_t)64 << 10)

enum ow_rangemeta_stage { OW_RM_TAIL, OW_RM_CD, OW_RM_MEMBER, OW_RM_DONE };

/* What a feed came to, beside a negative error. */
enum ow_rangemeta_fed {
	OW_RM_HAVE_TEXT = 0, /* the METADATA is in rm->text */
	OW_RM_WANT_MORE = 1, /* another read is wanted: rm->want_off/want_len */
};

struct ow_rangemeta {
	char filename[256];
	char distinfo[300]; /* "name-version.dist-info/METADATA" as the wheel names it */
	uint64_t size;      /* of the whole wheel */
	enum ow_rangemeta_stage stage;
	uint64_t want_off, want_len; /* the next read */
	uint64_t bytes_read;         /* all reads so far */
	/* from the end record */
	uint64_t cd_off, cd_size, entries;
	/* the METADATA member, from its central-directory entry */
	uint8_t cd_entry[46];
	char *name;
	size_t name_len;
	uint64_t csize, usize, local_off;
	/* the result */
	char *text;
	size_t text_len;
};

/* Start for `filename` (a .whl name) of `size` bytes; the first read is in
 * rm->want_off/want_len. */
int ow_rangemeta_init(struct ow_rangemeta *rm, const char *filename, uint64_t size);

/* The bytes of the read asked for (n may be less only at the end of the
 * file): an enum ow_rangemeta_fed, or < 0 an error naming the wheel and
 * what is wrong with it. */
int ow_rangemeta_feed(struct ow_rangemeta *rm, const uint8_t *buf, size_t n);

/* The same with a first read of at most `tail_max` bytes (at least an end
 * record's 22): tests and the fuzzer move the end of the first read across
 * every byte of a small wheel. */
int ow_rangemeta_init_tail(struct ow_rangemeta *rm, const char *filename, uint64_t size,
                           uint64_t tail_max);

void ow_rangemeta_clear(struct ow_rangemeta *rm);
/* The whole walk over a wheel in `fd` (`size` bytes) with pread: a few kB,
 * whatever the wheel's size.  0 (OW_RM_HAVE_TEXT) with rm->text set, or an error
 * (the caller clears rm either way). */
int ow_rangemeta_read_fd(int fd, const char *filename, uint64_t size, struct ow_rangemeta *rm);

#endif
