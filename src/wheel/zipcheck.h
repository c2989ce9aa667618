/* zipcheck.h - an own structural ZIP validator that runs before libarchive.
 *
 * Works from a file descriptor with pread (never the whole file in memory):
 * finds the end record (and the ZIP64 locator/record), reads the central
 * directory, and checks every entry against its local header.  Anything a
 * wheel has no business containing is rejected with OW_EZIP and a detail that
 * names the member and the problem: data after the end record, entries
 * missing from the central directory, overlaps, duplicates (exact, case-folded,
 * file-vs-directory), hostile names, Unicode-path extra fields, symlinks and
 * devices, encryption, methods other than stored/deflate, and sizes or ratios
 * over the caps of struct ow_zip_limits. */
#ifndef OW_ZIPCHECK_H
#define OW_ZIPCHECK_H

#include <stddef.h>
#include <stdint.h>

struct ow_zip_limits {
	uint64_t max_entries;    /* members in the central directory */
	uint64_t max_total_size; /* sum of uncompressed sizes */
	uint64_t max_entry_size; /* one member, uncompressed */
	uint64_t max_ratio;      /* uncompressed:compressed of one member ... */
	uint64_t ratio_min_size; /* ... checked for members larger than this */
	uint64_t max_cd_size;    /* bytes of central directory */
};

/* 200000 entries, 16 GiB total, 8 GiB per member, 1000:1 above 1 MiB,
 * 64 MiB of central directory. */
void ow_zip_limits_default(struct ow_zip_limits *lim);

struct ow_zip_entry {
	char *name; /* NUL-terminated; validated (no NUL inside) */
	size_t name_len;
	uint16_t method; /* 0 stored, 8 deflate */
	uint16_t flags;
	uint32_t crc;
	uint64_t csize;     /* compressed */
	uint64_t usize;     /* uncompressed */
	uint64_t local_off; /* local header */
	uint64_t data_off;  /* first byte of compressed data */
	uint64_t end_off;   /* one past the data (and data descriptor) */
	int is_dir;         /* name ends in '/' */
};

struct ow_zip {
	struct ow_zip_entry *e; /* sorted by local_off (archive order) */
	size_t n;
	uint64_t file_size;
	uint64_t cd_off, cd_size;
	uint64_t total_usize;
	int zip64; /* a ZIP64 end record was present */
};

/* Validate the archive open on `fd` (size from fstat).  `label` names the
 * file in error details (NULL: "archive").  `lim` may be NULL (defaults).
 * On success *out gets the entry table (ow_zip_free). */
int ow_zip_check_fd(int fd, const char *label, const struct ow_zip_limits *lim,
                    struct ow_zip **out);
void ow_zip_free(struct ow_zip *z);

/* Check one member path as a wheel may contain it (also used for RECORD
 * paths): non-empty, <= 4096 bytes, segments <= 255, no NUL / control
 * characters / backslash / ':' / leading '/' / empty, '.' or '..' segments,
 * valid UTF-8.  `allow_dir` permits one trailing '/'.  On failure returns
 * OW_EZIP and *why gets a static text. */
int ow_zip_name_check(const char *name, size_t len, int allow_dir, const char **why);

/* Write `name` into `out` printable and quoted-safe (\xNN for bytes outside
 * printable ASCII), truncated with "..." past `outsz`. */
void ow_zip_name_show(const char *name, size_t len, char *out, size_t outsz);

#endif
