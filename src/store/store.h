/* store.h (internal) - the object store's writers, readers and repairs,
 * for the subsystems above it; offwheel/store.h is what the CLI sees. */
#ifndef OW_STORE_H
#define OW_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "db.h"
#include "digest.h"
#include "offwheel/store.h"

/* Temp file prefixes in HOME/tmp: store writers (never resumable) and
 * partial downloads (resumable; kept by gc unless asked). */
#define OW_TMP_OBJECT_PREFIX "obj-"
#define OW_TMP_PARTIAL_PREFIX "part-"
/* A damaged object moved aside by a repair (fetch): garbage gc removes. */
#define OW_TMP_DAMAGED_PREFIX "damaged-"

typedef struct ow_obj_writer ow_obj_writer;

ow_db *ow_store_db(ow_store *s);
const char *ow_store_home(const ow_store *s);
const char *ow_store_tmpdir(const ow_store *s);
int ow_store_object_path(const ow_store *s, const char *hex, char *buf, size_t n);

/* Streaming publish: bytes are hashed as they are written to HOME/tmp.
 * `cap` (0 = none) limits the size while writing.  commit checks the hash
 * against `expect_hex` (NULL = accept whatever it is), publishes the object
 * and inserts its row; on any failure nothing is published.  Both commit
 * and abort free the writer. */
int ow_obj_begin(ow_store *s, uint64_t cap, ow_obj_writer **out);
int ow_obj_write(ow_obj_writer *w, const void *data, size_t len);
int ow_obj_commit(ow_obj_writer *w, const char *expect_hex, const char *kind,
                  char hex_out[OW_SHA256_HEX]);
void ow_obj_abort(ow_obj_writer *w);

/* Publish a buffer / the whole of an open fd, same rules. */
int ow_store_put_buf(ow_store *s, const void *data, size_t len, const char *expect_hex,
                     const char *kind, char hex_out[OW_SHA256_HEX]);
int ow_store_put_fd(ow_store *s, int fd, const char *expect_hex, const char *kind,
                    char hex_out[OW_SHA256_HEX]);
/* Publish a temp file in HOME/tmp whose hash the caller already computed
 * while writing it (a finished download).  fsyncs, renames, inserts the row.
 * fd and the temp file are consumed whatever happens: on success the file is
 * the object, on failure it is removed, and fd is closed either way. */
int ow_store_adopt(ow_store *s, int fd, const char *tmp_path, const char *hex, uint64_t size,
                   const char *kind);

/* Is there a row for this object? (1 yes, 0 no, < 0 error); size/kind optional. */
int ow_store_has(ow_store *s, const char *hex, uint64_t *size, char *kind, size_t kind_n);
/* Read a whole object into memory (at most `max` bytes) and verify its
 * hash before returning it; OW_EHASH when the bytes on disk are wrong. */
int ow_store_load(ow_store *s, const char *hex, size_t max, char **buf, size_t *len);
/* Open an object for reading (the caller streams it; use ow_store_verify to
 * check the bytes).  Never follows a link and never blocks: anything but a
 * regular file is damage (OW_EVERIFY, not opened for reading). */
int ow_store_open_object(ow_store *s, const char *hex, int *fd_out);
/* Re-hash one object: 0 ok, OW_EHASH wrong bytes, OW_ENOENT missing,
 * OW_EVERIFY not a regular file or not `expect_size` bytes (UINT64_MAX:
 * any size).  Reads stop at the expected size. */
int ow_store_verify(const ow_store *s, const char *hex, uint64_t expect_size);

/* Can the object be trusted without reading it?  1 yes; 0 no, with the
 * reason in `why` (missing, not a regular file, wrong size, or marked
 * damaged by verify/fsck); < 0 error.  `size` (optional) gets the row's. */
int ow_store_usable(ow_store *s, const char *hex, uint64_t *size, char *why, size_t why_n);
/* Record on the object's row that its bytes were found wrong (verify,
 * fsck); a later publish of the same object clears it.  Needs a writable
 * index. */
int ow_store_mark_damaged(ow_store *s, const char *hex, const char *detail);
/* Move whatever lies at the object's path (a damaged file, a link, a FIFO)
 * to HOME/tmp/damaged-<hex>-XXXXXX, so that nothing trusts it and a repair
 * can publish a good copy; the row is kept.  0 also when nothing is there.
 * `moved_to` (optional) gets the new path ("" when nothing moved).  Needs a
 * store opened for writing. */
int ow_store_move_aside(ow_store *s, const char *hex, char *moved_to, size_t n);
/* Drop the row, then the file (a row never points to a missing file). */
int ow_store_remove(ow_store *s, const char *hex);

/* Walk the object files on disk: cb(ud, hex_or_NULL, path) for each file
 * under objects/ (hex NULL when the name is not a well-formed object name
 * in the right fan-out directory). */
typedef int (*ow_disk_fn)(void *ud, const char *hex, const char *path);
int ow_store_scan_disk(const ow_store *s, ow_disk_fn cb, void *ud);

#endif
