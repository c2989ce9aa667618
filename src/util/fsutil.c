/* fsutil.c - durable publishing, locks and names. */
#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "offwheel/error.h"
#include "event.h"

static int errno_code(int e)
{
	if (e == ENOSPC || e == EDQUOT)
		return OW_ENOSPC;
	if (e == ENOENT)
		return OW_ENOENT;
	if (e == ENOMEM)
		return OW_ENOMEM;
	return OW_EIO;
}

int ow_mkdir_p(const char *path, mode_t mode)
{
	return ow_mkdir_p_made(path, mode, NULL, 0);
}

int ow_mkdir_p_made(const char *path, mode_t mode, char *made, size_t madelen)
{
	char buf[PATH_MAX];
	if (made && madelen)
		*made = '\0';
	size_t n = strlen(path);
	if (n == 0 || n >= sizeof buf)
		return ow_err(OW_ERANGE, "%s: path too long", path);
	/* made gets a prefix of path: refused before anything is made when path
	 * would not fit, since a cut `made` would name another directory */
	if (made && madelen && n >= madelen)
		return ow_err(OW_ERANGE, "%s: path too long (at most %zu bytes)", path, madelen - 1);
	memcpy(buf, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		char c = buf[i];
		buf[i] = '\0';
		if (mkdir(buf, mode) == 0) {
			if (made && madelen && !*made)
				memcpy(made, buf, i + 1); /* buf[i] is its NUL; i <= n < madelen */
		} else if (errno != EEXIST) {
			return ow_err(errno_code(errno), "%s: cannot create directory: %s", buf,
			              strerror(errno));
		}
		buf[i] = c;
	}
	return 0;
}

void ow_rmdir_made(const char *path, const char *top)
{
	char buf[PATH_MAX];
	size_t tn = strlen(top), n;
	if (!tn || snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
		return;
	while ((n = strlen(buf)) > 1 && buf[n - 1] == '/')
		buf[n - 1] = '\0';
	/* buf is top or below it; rmdir refuses a directory that is not empty */
	while (!strncmp(buf, top, tn) && (buf[tn] == '\0' || buf[tn] == '/') && rmdir(buf) == 0) {
		char *sl = strrchr(buf, '/');
		if (!sl || sl == buf || (size_t)(sl - buf) < tn)
			return;
		*sl = '\0';
	}
}

int ow_fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return ow_err(errno_code(errno), "%s: cannot open directory: %s", dir, strerror(errno));
	int rc = 0;
	if (fsync(fd) != 0 && errno != EINVAL)
		rc = ow_err(OW_EIO, "%s: fsync of the directory failed: %s", dir, strerror(errno));
	close(fd);
	return rc;
}

int ow_path_join(char *buf, size_t n, const char *a, const char *b)
{
	int w = snprintf(buf, n, "%s/%s", a, b);
	if (w < 0 || (size_t)w >= n)
		return ow_err(OW_ERANGE, "%s/%s: path too long", a, b);
	return 0;
}

int ow_dirname(char *buf, size_t n, const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t len = slash ? (size_t)(slash - path) : 1;
	if (slash == path)
		len = 1;
	if (len >= n)
		return ow_err(OW_ERANGE, "%s: path too long", path);
	memcpy(buf, slash ? path : ".", len);
	buf[len] = '\0';
	return 0;
}

int ow_tmp_create(const char *dir, const char *prefix, struct ow_tmp *t)
{
	t->fd = -1;
	int w = snprintf(t->path, sizeof t->path, "%s/%sXXXXXX", dir, prefix);
	if (w < 0 || (size_t)w >= sizeof t->path)
		return ow_err(OW_ERANGE, "%s: temp path too long", dir);
	t->fd = mkostemp(t->path, O_CLOEXEC);
	if (t->fd < 0)
		return ow_err(errno_code(errno), "%s: cannot create a temp file: %s", dir,
		              strerror(errno));
	fchmod(t->fd, 0644);
	return 0;
}

void ow_tmp_discard(struct ow_tmp *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	if (t->path[0])
		unlink(t->path);
	t->path[0] = '\0';
}

int ow_tmp_publish(struct ow_tmp *t, const char *final_path)
{
	char dir[PATH_MAX];
	int rc;
	if (fsync(t->fd) != 0) {
		rc = ow_err(errno_code(errno), "%s: fsync failed (%s); the file was discarded",
		            final_path, strerror(errno));
		ow_tmp_discard(t);
		return rc;
	}
	close(t->fd);
	t->fd = -1;
	if (rename(t->path, final_path) != 0) {
		rc = ow_err(errno_code(errno), "%s: rename from %s failed: %s", final_path, t->path,
		            strerror(errno));
		ow_tmp_discard(t);
		return rc;
	}
	t->path[0] = '\0';
	if ((rc = ow_dirname(dir, sizeof dir, final_path)))
		return rc;
	return ow_fsync_dir(dir);
}

int ow_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return ow_err(errno_code(errno), "write failed: %s", strerror(errno));
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int ow_pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	char *p = buf;
	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return ow_err(OW_EIO, "read failed: %s", strerror(errno));
		if (n == 0)
			return ow_err(OW_EIO, "unexpected end of file at offset %llu",
			              (unsigned long long)off);
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

static void read_holder(int fd, char *buf, size_t n)
{
	ssize_t got = pread(fd, buf, n - 1, 0);
	buf[got > 0 ? got : 0] = '\0';
	char *nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	if (!buf[0])
		snprintf(buf, n, "another process");
}

static void write_holder(int fd, const char *what)
{
	char line[256];
	int w = snprintf(line, sizeof line, "pid %ld (%s)\n", (long)getpid(), what ? what : "offwheel");
	if (ftruncate(fd, 0) == 0 && w > 0)
		(void)!pwrite(fd, line, (size_t)w, 0);
}

int ow_lock_acquire(const char *path, const char *what, int timeout_s, int *fd_out)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return ow_err(errno_code(errno), "%s: cannot open the lock file: %s", path,
		              strerror(errno));
	struct timespec start, now, nap = {0, 100 * 1000 * 1000};
	clock_gettime(CLOCK_MONOTONIC, &start);
	int said = 0;
	while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		char holder[200];
		if (errno != EWOULDBLOCK && errno != EINTR) {
			close(fd);
			return ow_err(OW_EIO, "%s: lock failed: %s", path, strerror(errno));
		}
		read_holder(fd, holder, sizeof holder);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec >= timeout_s) {
			close(fd);
			return ow_err(OW_ELOCKED,
			              "%s: the workspace is in use by %s; waited %d s — wait for it "
			              "to finish, or use another --home",
			              path, holder, timeout_s);
		}
		if (!said++)
			ow_log(OW_LOG_WARN, "waiting for the workspace lock %s held by %s ...", path,
			       holder);
		nanosleep(&nap, NULL);
	}
	write_holder(fd, what);
	*fd_out = fd;
	return 0;
}

void ow_lock_release(int fd)
{
	if (fd < 0)
		return;
	if (ftruncate(fd, 0) != 0) {
		/* only informational content; the flock is what matters */
	}
	flock(fd, LOCK_UN);
	close(fd);
}

int ow_safe_component(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > 255 || !strcmp(name, ".") || !strcmp(name, ".."))
		return 0;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		if (*p < 0x20 || *p == 0x7f || strchr("/\\:*?\"<>|", *p))
			return 0;
	return 1;
}

int ow_fs_avail(const char *dir, uint64_t *avail)
{
	struct statvfs sv;
	if (statvfs(dir, &sv) != 0)
		return ow_err(OW_EIO, "%s: cannot read the free space: %s", dir, strerror(errno));
	*avail = (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize;
	return 0;
}

bool ow_space_short(uint64_t need, uint64_t reserved, uint64_t avail, uint64_t *want)
{
	uint64_t margin = need / 20 > (1u << 20) ? need / 20 : (1u << 20);
	uint64_t w = need;
	bool over = __builtin_add_overflow(w, reserved, &w) || __builtin_add_overflow(w, margin, &w);
	*want = over ? UINT64_MAX : w;
	return over || w > avail; /* more than a 64-bit count: it cannot fit */
}
