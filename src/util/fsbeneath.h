/* fsbeneath.h - files opened relative to a directory fd, never through a
 * symbolic link and never outside that directory.
 *
 * A tree that someone else can write to (a USB stick, a directory handed
 * over by a user) is opened once, as a directory fd, and every path inside
 * it is resolved beneath that fd: openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS) where the kernel has it, else one openat(O_NOFOLLOW)
 * per component.  A link, a FIFO or a device where a file or directory
 * belongs is refused with OW_EPOLICY and a message naming the component;
 * nothing is ever read from a file that fstat did not confirm regular.
 *
 * `rel` is relative and '/'-separated: no leading '/', no empty, '.' or
 * '..' component (OW_EINVAL).  Messages name `rel` (or its failing prefix);
 * callers prefix the directory they opened. */
#ifndef OW_FSBENEATH_H
#define OW_FSBENEATH_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Open rel beneath dirfd with `flags` (O_NOFOLLOW and O_CLOEXEC added);
 * OW_ENOENT when a component is missing. */
int ow_open_beneath(int dirfd, const char *rel, int flags, mode_t mode, int *fd_out);
/* The directory rel beneath dirfd, made (mode) where missing, opened
 * O_RDONLY|O_DIRECTORY; "" opens dirfd itself again. */
int ow_mkdir_beneath(int dirfd, const char *rel, mode_t mode, int *fd_out);
/* A regular file for reading: opened O_NONBLOCK (a FIFO never blocks),
 * fstat'ed, OW_EPOLICY "not a regular file (a FIFO)" otherwise; *st filled. */
int ow_open_regular_beneath(int dirfd, const char *rel, int *fd_out, struct stat *st);
/* The whole of a regular file of at most `max` bytes, NUL-terminated. */
int ow_read_beneath(int dirfd, const char *rel, size_t max, char **buf, size_t *len);
/* Read exactly st_size bytes of an open regular file (at most max). */
int ow_read_fd_small(int fd, const char *what, size_t max, char **buf, size_t *len);

/* A path a user or an index names, for reading: opened O_NONBLOCK (a FIFO
 * never blocks; links are followed), fstat'ed; OW_EPOLICY "PATH is a FIFO,
 * not a regular file" otherwise, OW_ENOENT when it is missing; *st filled. */
int ow_open_regular(const char *path, int *fd_out, struct stat *st);

/* "a symbolic link", "a FIFO", "a directory", "a socket", "a device", "a file". */
const char *ow_file_kind(mode_t mode);

/* A temp file in a directory fd: <prefix><12 random hex>, O_EXCL|O_NOFOLLOW. */
struct ow_tmpat {
	int dirfd; /* borrowed */
	int fd;
	char name[64];
};
int ow_tmpat_create(int dirfd, const char *prefix, struct ow_tmpat *t);
/* fsync, renameat over `name` in the same directory, fsync the directory;
 * on failure the temp file is removed.  The fd is closed either way. */
int ow_tmpat_publish(struct ow_tmpat *t, const char *name);
void ow_tmpat_discard(struct ow_tmpat *t);

#endif
