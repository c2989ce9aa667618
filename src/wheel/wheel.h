/* wheel.h - wheel archives: structural validation (zipcheck.h), then one pass
 * through libarchive's seekable zip reader (the only module that includes
 * libarchive; ARCHIVE_WARN is an error) that streams each member's bytes,
 * hashes them for RECORD and captures METADATA / RECORD / WHEEL; then the
 * wheel semantics: one .dist-info matching the filename, every member listed
 * in RECORD with the right sha256 and size, METADATA Name/Version equal to
 * the filename's. */
#ifndef OW_WHEEL_H
#define OW_WHEEL_H

#include <stddef.h>
#include <stdint.h>

#include "wheelmeta.h"
#include "zipcheck.h"

struct ow_wheel_limits {
	struct ow_zip_limits zip;
	size_t max_meta_size; /* METADATA, RECORD and WHEEL are read into memory */
};

/* ow_zip_limits_default plus 64 MiB for the .dist-info text files. */
void ow_wheel_limits_default(struct ow_wheel_limits *lim);

/* What a filter answers for a member, beside a negative error. */
enum ow_member_want {
	OW_MEMBER_SKIP = 0, /* its bytes are not wanted */
	OW_MEMBER_READ = 1, /* its bytes go to the data callback */
};
/* Before each file member: an enum ow_member_want (a plain predicate's 1 or
 * 0 will do), or a negative OW_E* code to stop the pass (returned as is). */
typedef int (*ow_wheel_filter_fn)(const char *name, uint64_t size, void *ud);
/* Decompressed bytes of a wanted member, in order; a final call with
 * data == NULL and len == 0 marks its end.  Negative return stops the pass. */
typedef int (*ow_wheel_data_fn)(const char *name, const void *data, size_t len, void *ud);

struct ow_wheel_consumer {
	ow_wheel_filter_fn filter;
	ow_wheel_data_fn data;
	void *ud;
};

typedef struct ow_wheel ow_wheel;

/* Run the structural validator on `fd` (read with pread; the fd offset is
 * not used) and prepare a pass.  `label` names the file in errors.  `lim`
 * may be NULL.  The fd must stay open until ow_wheel_close. */
int ow_wheel_open_fd(int fd, const char *label, const struct ow_wheel_limits *lim, ow_wheel **out);
/* The validated entry table (sorted by offset, the order of the pass). */
const struct ow_zip *ow_wheel_zip(const ow_wheel *w);
/* One pass over the file members (directories are skipped) through
 * libarchive; each byte count and name is checked against the validated
 * table.  May be called more than once. */
int ow_wheel_each_member(ow_wheel *w, ow_wheel_filter_fn filter, ow_wheel_data_fn data, void *ud);
/* Options of ow_wheel_each_member_opts. */
#define OW_WHEEL_SKIP_UNWANTED 0x1u /* members the filter declines are skipped
                                     * by seeking past them, never inflated
                                     * (so their CRC is not checked either) */
/* ow_wheel_each_member with options (0 = the same pass). */
int ow_wheel_each_member_opts(ow_wheel *w, unsigned opts, ow_wheel_filter_fn filter,
                              ow_wheel_data_fn data, void *ud);
/* Up to `jobs` passes at once, on threads, each with its own reader over the
 * same fd: the members `pick` selects (a pure test of name and size) are
 * shared out, largest first, so that the passes inflate about as many bytes
 * each; pass t calls filter and data with uds[t], for its members only
 * (members pick declines go to pass 0's filter, which may count them).
 * Callbacks run on several threads at once: what they share needs a lock.
 * The others skip a member by seeking past it.  A failure stops the other
 * passes; its error is returned.  jobs <= 1: one pass, as
 * ow_wheel_each_member_opts(OW_WHEEL_SKIP_UNWANTED) with uds[0]. */
typedef int (*ow_wheel_pick_fn)(const char *name, uint64_t size, void *ud);
int ow_wheel_each_member_jobs(ow_wheel *w, int jobs, ow_wheel_pick_fn pick, void *pick_ud,
                              ow_wheel_filter_fn filter, ow_wheel_data_fn data,
                              void *const *uds);
void ow_wheel_close(ow_wheel *w);

struct ow_wheel_info {
	char *dist_info;              /* "torch-2.7.0.dist-info" */
	struct ow_metadata *metadata; /* parsed METADATA */
	char *wheel_text;             /* WHEEL file, NUL-terminated */
	size_t n_members;             /* file members */
	uint64_t total_size;          /* uncompressed bytes */
};

/* Split a wheel filename (a path is allowed; its basename is used) into the
 * distribution name and version as written; OW_EINVAL when it is not
 * {name}-{version}(-{build})?-{python}-{abi}-{platform}.whl. */
int ow_wheel_filename_name_version(const char *filename, char *name, size_t namesz, char *version,
                                   size_t versionsz);

/* Full validation of the wheel open on `fd`: structure, one libarchive pass
 * (hashing every member, feeding `consumer` when not NULL), RECORD file by
 * file, .dist-info and METADATA name/version against `filename`.  OW_EZIP or
 * OW_ERECORD (or the consumer's code) with a detail naming the problem.
 * `out` may be NULL. */
int ow_wheel_verify_fd(int fd, const char *filename, const struct ow_wheel_limits *lim,
                       const struct ow_wheel_consumer *consumer, struct ow_wheel_info **out);
void ow_wheel_info_free(struct ow_wheel_info *info);

/* A source distribution (.tar.gz, .zip) read front to back through
 * libarchive's streaming readers: `filter` and `data` as for a wheel, for
 * regular-file members only.  A member whose name is absolute or has a ".."
 * component, more than max_members members or more than max_total bytes
 * unpacked, and any damage (ARCHIVE_WARN included) fail the pass. */
struct ow_archive_limits {
	size_t max_members;
	uint64_t max_total;
};
int ow_archive_each_member(int fd, const char *label, const struct ow_archive_limits *lim,
                           ow_wheel_filter_fn filter, ow_wheel_data_fn data, void *ud);

#endif
