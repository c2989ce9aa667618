/* fsbeneath.c - openat-relative files that never follow a link. */
#include "fsbeneath.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef __linux__
#include <linux/openat2.h>
#endif

#include "digest.h"
#include "offwheel/error.h"

#define REL_MAX 4096

static int errno_code(int e)
{
	return e == ENOENT ? OW_ENOENT : e == ENOSPC || e == EDQUOT ? OW_ENOSPC
	       : e == ENOMEM ? OW_ENOMEM : OW_EIO;
}

const char *ow_file_kind(mode_t m)
{
	return S_ISLNK(m) ? "a symbolic link" : S_ISFIFO(m) ? "a FIFO" : S_ISDIR(m) ? "a directory"
	       : S_ISSOCK(m) ? "a socket" : S_ISCHR(m) || S_ISBLK(m) ? "a device" : "a file";
}

static int rel_ok(const char *rel)
{
	size_t n = strlen(rel);
	if (n == 0 || n >= REL_MAX || rel[0] == '/' || rel[n - 1] == '/')
		return 0;
	for (const char *c = rel; *c;) {
		size_t k = strcspn(c, "/");
		if (k == 0 || k > NAME_MAX || (k == 1 && c[0] == '.') ||
		    (k == 2 && c[0] == '.' && c[1] == '.'))
			return 0;
		c += k + (c[k] == '/');
	}
	return 1;
}

/* Why opening `name` in dirfd failed with errno e: a link or a wrong type
 * is named as such (O_NOFOLLOW gives ELOOP, or ENOTDIR with O_DIRECTORY). */
static int open_failed(int dirfd, const char *name, const char *shown, int e, int want_dir)
{
	struct stat st;
	if ((e == ELOOP || e == ENOTDIR || e == ENXIO || e == EISDIR) &&
	    fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(st.st_mode))
			return ow_err(OW_EPOLICY, "%s: is a symbolic link — refusing to follow it (remove "
			                          "the link)", shown);
		if (want_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
			return ow_err(OW_EPOLICY, "%s: is %s, not a %s", shown, ow_file_kind(st.st_mode),
			              want_dir ? "directory" : "regular file");
	}
	return ow_err(errno_code(e), "%s: cannot open: %s", shown, strerror(e));
}

#if defined(__linux__) && defined(SYS_openat2)
static int try_openat2(int dirfd, const char *rel, int flags, mode_t mode)
{
	struct open_how how = {.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC),
	                       .mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0,
	                       .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
	                                  RESOLVE_NO_MAGICLINKS};
	return (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof how);
}
#else
static int try_openat2(int dirfd, const char *rel, int flags, mode_t mode)
{
	(void)dirfd, (void)rel, (void)flags, (void)mode;
	errno = ENOSYS;
	return -1;
}
#endif

/* One openat(O_NOFOLLOW) per component: portable, and it names the
 * component that is a link. */
static int walk_open(int dirfd, const char *rel, int flags, mode_t mode, int *fd_out)
{
	char buf[REL_MAX];
	snprintf(buf, sizeof buf, "%s", rel);
	int cur = dirfd;
	char *c = buf;
	for (char *sl; (sl = strchr(c, '/')); c = sl + 1) {
		*sl = '\0';
		int nfd = openat(cur, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno, rc = nfd < 0 ? open_failed(cur, c, buf, e, 1) : 0;
		if (cur != dirfd)
			close(cur);
		if (rc)
			return rc;
		*sl = '/';
		cur = nfd;
	}
	int fd = openat(cur, c, flags | O_NOFOLLOW | O_CLOEXEC, mode);
	int rc = fd < 0 ? open_failed(cur, c, rel, errno, (flags & O_DIRECTORY) != 0) : 0;
	if (cur != dirfd)
		close(cur);
	*fd_out = fd;
	return rc;
}

int ow_open_beneath(int dirfd, const char *rel, int flags, mode_t mode, int *fd_out)
{
	*fd_out = -1;
	if (!rel_ok(rel))
		return ow_err(OW_EINVAL, "%s: not a relative path inside the directory", rel);
	int fd = try_openat2(dirfd, rel, flags, mode);
	if (fd >= 0) {
		*fd_out = fd;
		return 0;
	}
	/* no openat2 here, or it refused: the walk says which component and why */
	return walk_open(dirfd, rel, flags, mode, fd_out);
}

int ow_mkdir_beneath(int dirfd, const char *rel, mode_t mode, int *fd_out)
{
	*fd_out = -1;
	if (!*rel) {
		int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			return ow_err(errno_code(errno), "cannot reopen the directory: %s", strerror(errno));
		*fd_out = fd;
		return 0;
	}
	if (!rel_ok(rel))
		return ow_err(OW_EINVAL, "%s: not a relative path inside the directory", rel);
	char buf[REL_MAX];
	snprintf(buf, sizeof buf, "%s", rel);
	int cur = dirfd, rc = 0;
	for (char *c = buf, *sl; !rc; c = sl + 1) {
		sl = strchr(c, '/');
		if (sl)
			*sl = '\0';
		if (mkdirat(cur, c, mode) != 0 && errno != EEXIST)
			rc = ow_err(errno_code(errno), "%s: cannot create the directory: %s", buf,
			            strerror(errno));
		int nfd = rc ? -1 : openat(cur, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (!rc && nfd < 0)
			rc = open_failed(cur, c, buf, errno, 1);
		if (cur != dirfd)
			close(cur);
		cur = nfd;
		if (!sl)
			break;
		*sl = '/';
	}
	if (rc)
		return rc;
	*fd_out = cur;
	return 0;
}

int ow_open_regular_beneath(int dirfd, const char *rel, int *fd_out, struct stat *st)
{
	int fd, rc = ow_open_beneath(dirfd, rel, O_RDONLY | O_NONBLOCK, 0, &fd);
	if (rc)
		return rc;
	memset(st, 0, sizeof *st);
	if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
		int e = errno;
		rc = S_ISREG(st->st_mode) ? ow_err(OW_EIO, "%s: fstat: %s", rel, strerror(e))
		                          : ow_err(OW_EPOLICY, "%s: is %s, not a regular file — never "
		                                               "read", rel, ow_file_kind(st->st_mode));
		close(fd);
		return rc;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	*fd_out = fd;
	return 0;
}

int ow_open_regular(const char *path, int *fd_out, struct stat *st)
{
	*fd_out = -1;
	memset(st, 0, sizeof *st);
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return ow_err(errno == ENOENT ? OW_ENOENT : OW_EIO, "%s: %s", path, strerror(errno));
	if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
		int rc = ow_err(OW_EPOLICY, "%s is %s, not a regular file", path,
		                ow_file_kind(st->st_mode));
		close(fd);
		return rc;
	}
	*fd_out = fd;
	return 0;
}

int ow_read_fd_small(int fd, const char *what, size_t max, char **buf, size_t *len)
{
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return ow_err(OW_EPOLICY, "%s: not a regular file — never read", what);
	if ((uint64_t)st.st_size > max)
		return ow_err(OW_ETOOBIG, "%s: larger than %zu bytes", what, max);
	size_t want = (size_t)st.st_size, got = 0;
	char *b = malloc(want + 1);
	if (!b)
		return ow_err(OW_ENOMEM, "%s: out of memory", what);
	while (got < want) {
		ssize_t r = pread(fd, b + got, want - got, (off_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			int e = errno;
			free(b);
			return ow_err(OW_EIO, "%s: %s", what, r < 0 ? strerror(e) : "shrank while read");
		}
		got += (size_t)r;
	}
	b[got] = '\0';
	*buf = b;
	*len = got;
	return 0;
}

int ow_read_beneath(int dirfd, const char *rel, size_t max, char **buf, size_t *len)
{
	struct stat st;
	int fd = -1, rc = ow_open_regular_beneath(dirfd, rel, &fd, &st);
	if (rc)
		return rc;
	rc = ow_read_fd_small(fd, rel, max, buf, len);
	close(fd);
	return rc;
}

int ow_tmpat_create(int dirfd, const char *prefix, struct ow_tmpat *t)
{
	t->dirfd = dirfd;
	t->fd = -1;
	t->name[0] = '\0';
	if (strlen(prefix) > 32)
		return ow_err(OW_EINVAL, "%s: temp prefix too long", prefix);
	for (int tries = 0; tries < 16; tries++) {
		uint8_t r[6];
		char hex[13];
		int rc = ow_random_bytes(r, sizeof r);
		if (rc)
			return rc;
		ow_hex(r, sizeof r, hex);
		snprintf(t->name, sizeof t->name, "%s%s", prefix, hex);
		t->fd = openat(dirfd, t->name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (t->fd >= 0)
			return 0;
		if (errno != EEXIST)
			break;
	}
	int e = errno;
	t->name[0] = '\0';
	return ow_err(errno_code(e), "cannot create a temp file: %s", strerror(e));
}

void ow_tmpat_discard(struct ow_tmpat *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	if (t->name[0])
		unlinkat(t->dirfd, t->name, 0);
	t->name[0] = '\0';
}

int ow_tmpat_publish(struct ow_tmpat *t, const char *name)
{
	int rc = 0;
	if (fsync(t->fd) != 0)
		rc = ow_err(errno_code(errno), "%s: fsync failed (%s); the file was discarded", name,
		            strerror(errno));
	else if (renameat(t->dirfd, t->name, t->dirfd, name) != 0)
		rc = ow_err(errno_code(errno), "%s: rename failed: %s", name, strerror(errno));
	if (rc) {
		ow_tmpat_discard(t);
		return rc;
	}
	close(t->fd);
	t->fd = -1;
	t->name[0] = '\0';
	if (fsync(t->dirfd) != 0 && errno != EINVAL)
		return ow_err(OW_EIO, "%s: fsync of the directory failed: %s", name, strerror(errno));
	return 0;
}
