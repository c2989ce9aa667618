/* fsutil.h - durable file publishing, the workspace lock, safe names.
 *
 * The one way a file reaches its final path: write a temp file in the same
 * file system, fsync it, rename it over the final name, fsync the directory.
 * A failed fsync is never retried (a second one can report success for
 * pages the kernel already dropped): the temp file is discarded. */
#ifndef OW_FSUTIL_H
#define OW_FSUTIL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ow_tmp {
	int fd;
	char path[PATH_MAX];
};

/* mkdir -p with `mode` for every missing component. */
int ow_mkdir_p(const char *path, mode_t mode);
/* The same; `made` gets the topmost directory it created ("" when all were
 * there), so that a caller that fails can take them away again. */
int ow_mkdir_p_made(const char *path, mode_t mode, char *made, size_t madelen);
/* Remove the empty directories from `path` up to and including `top` (the
 * `made` of ow_mkdir_p_made): what a failed command created, nothing else. */
void ow_rmdir_made(const char *path, const char *top);
/* fsync a directory so a rename or unlink in it is durable. */
int ow_fsync_dir(const char *dir);
/* Join two path parts into buf; OW_ERANGE if it does not fit. */
int ow_path_join(char *buf, size_t n, const char *a, const char *b);
/* The directory part of `path` into buf ("." when there is none). */
int ow_dirname(char *buf, size_t n, const char *path);

/* Create dir/<prefix>XXXXXX, opened O_RDWR|O_CLOEXEC, mode 0644. */
int ow_tmp_create(const char *dir, const char *prefix, struct ow_tmp *t);
/* fsync, rename to `final_path`, fsync its directory.  On any failure the
 * temp file is removed (never left half-published) and an error returned.
 * The fd is closed either way. */
int ow_tmp_publish(struct ow_tmp *t, const char *final_path);
/* Close and unlink; safe to call twice or on a zeroed struct (fd -1). */
void ow_tmp_discard(struct ow_tmp *t);

/* write(2) until done, retrying EINTR; OW_ENOSPC / OW_EIO with detail. */
int ow_write_all(int fd, const void *buf, size_t len);
/* pread(2) exactly `len` bytes at `off`; OW_EIO on short read. */
int ow_pread_all(int fd, void *buf, size_t len, uint64_t off);

/* Exclusive lock on `path` (created if missing).  Waits up to timeout_s
 * seconds (0 = don't wait), emitting one "waiting for ..." log event that
 * names the holder's pid and command; OW_ELOCKED on timeout. */
int ow_lock_acquire(const char *path, const char *what, int timeout_s, int *fd_out);
void ow_lock_release(int fd);

/* A name that is safe as one path component on every file system we write
 * to (ext4, FAT32, exFAT, NTFS): no '/', '\\', ':', control chars, not "."
 * or "..", at most 255 bytes. */
int ow_safe_component(const char *name);

/* Disk space.  ow_fs_avail: the bytes an unprivileged writer may still put
 * on the filesystem holding `dir` (statvfs: f_bavail x f_frsize).
 * ow_space_short: whether `need` more bytes, with `reserved` promised to
 * downloads already under way, do NOT fit in `avail` with a margin (a
 * twentieth of need, at least 1 MiB, for the database and metadata that
 * come with them); *want gets what would be needed in all. */
int ow_fs_avail(const char *dir, uint64_t *avail);
bool ow_space_short(uint64_t need, uint64_t reserved, uint64_t avail, uint64_t *want);

#endif
