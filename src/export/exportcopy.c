/* exportcopy.c - the files of an export: copy store objects while hashing
 * them (never past the recorded size), write generated text, file lists. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "array.h"
#include "offwheel/error.h"
#include "exportint.h"
#include "event.h"
#include "fsbeneath.h"
#include "fsutil.h"
#include "store.h"
#include "digest.h"

#define COPY_CHUNK (4u << 20)

int ex_files_add(struct ex_files *f, const char *path, uint64_t size, const char *sha256)
{
	struct ex_file *g = ow_array_more(f->v, f->n, sizeof *g);
	if (!g)
		return ow_err(OW_ENOMEM, "file list: out of memory");
	f->v = g;
	struct ex_file *e = &f->v[f->n];
	if (!(e->path = strdup(path)))
		return ow_err(OW_ENOMEM, "file list: out of memory");
	e->size = size;
	snprintf(e->sha256, sizeof e->sha256, "%s", sha256 ? sha256 : "");
	f->n++;
	return 0;
}

void ex_files_dispose(struct ex_files *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->v[i].path);
	free(f->v);
	f->v = NULL;
	f->n = 0;
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp(((const struct ex_file *)a)->path, ((const struct ex_file *)b)->path);
}

static int cmp_case(const void *a, const void *b)
{
	return strcasecmp(*(char *const *)a, *(char *const *)b);
}

void ex_files_sort(struct ex_files *f)
{
	if (f->n)
		qsort(f->v, f->n, sizeof *f->v, cmp_path);
}

const struct ex_file *ex_files_find(const struct ex_files *f, const char *path)
{
	struct ex_file key = {.path = (char *)(uintptr_t)path};
	return f->n ? bsearch(&key, f->v, f->n, sizeof *f->v, cmp_path) : NULL;
}

const char *ex_files_case_clash(const struct ex_files *f, const char **other)
{
	const char **v = f->n ? malloc(f->n * sizeof *v) : NULL;
	const char *hit = NULL;
	if (!v)
		return NULL;
	for (size_t i = 0; i < f->n; i++)
		v[i] = f->v[i].path;
	qsort(v, f->n, sizeof *v, cmp_case);
	for (size_t i = 1; i < f->n && !hit; i++)
		if (!strcasecmp(v[i], v[i - 1])) {
			hit = v[i];
			*other = v[i - 1];
		}
	free(v);
	return hit;
}

const char *ex_path_problem(const char *path)
{
	if (!*path || *path == '/')
		return "absolute or empty path";
	if (path[strlen(path) - 1] == '/')
		return "'.', '..' or empty component in path";
	if (strchr(path, '\\'))
		return "backslash in path";
	if (strlen(path) > 1024)
		return "path too long";
	for (const char *c = path; *c;) {
		const char *e = strchr(c, '/');
		size_t n = e ? (size_t)(e - c) : strlen(c);
		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return "'.', '..' or empty component in path";
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)c[i] < 0x20 || c[i] == ':' || c[i] == 0x7f)
				return "control character or ':' in path";
		c += n + (e ? 1 : 0);
	}
	return NULL;
}

int ex_is_tmp_name(const char *name)
{
	size_t pl = strlen(OW_EXPORT_TMP_PREFIX), n = strlen(name);
	if (strncmp(name, OW_EXPORT_TMP_PREFIX, pl) || n < pl + 6 || n > pl + 12)
		return 0;
	for (const char *c = name + pl; *c; c++)
		if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z')))
			return 0;
	return 1;
}

static int hash_fd(int fd, uint64_t size, uint64_t *total, char hex[OW_SHA256_HEX])
{
	uint8_t d[OW_SHA256_LEN];
	ow_sha256 *h;
	uint8_t *buf = malloc(COPY_CHUNK);
	int rc = buf ? ow_sha256_new(&h) : ow_err(OW_ENOMEM, "hash: out of memory");
	if (rc) {
		free(buf);
		return rc;
	}
	*total = 0;
	while (!rc && *total < size) {
		uint64_t left = size - *total;
		ssize_t n = read(fd, buf, left < COPY_CHUNK ? (size_t)left : COPY_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		*total += (uint64_t)n;
		rc = ow_sha256_update(h, buf, (size_t)n);
	}
	if (!rc)
		rc = ow_sha256_final(h, d);
	ow_sha256_free(h);
	free(buf);
	if (!rc)
		ow_hex(d, sizeof d, hex);
	return rc;
}

int ex_hash_at(int dirfd, const char *rel, uint64_t *size, char hex[OW_SHA256_HEX])
{
	struct stat st;
	int fd, rc = ow_open_regular_beneath(dirfd, rel, &fd, &st);
	if (rc)
		return rc;
	rc = hash_fd(fd, (uint64_t)st.st_size, size, hex);
	close(fd);
	return rc;
}

/* Is dirfd/name already the right bytes? 1 yes, 0 no. */
static int already_there(int dirfd, const char *name, const char *hex, uint64_t size)
{
	struct stat st;
	char got[OW_SHA256_HEX];
	uint64_t n;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size != size)
		return 0;
	return ex_hash_at(dirfd, name, &n, got) == 0 && n == size && !strcmp(got, hex);
}

static int object_damaged(const char *hex, const char *why)
{
	return ow_err(OW_EHASH, "store object %s: %s — the store is damaged, nothing of it was "
	                        "copied", hex, why);
}

/* "NAME: <detail>", and for damage the exact command that repairs it: the
 * object's row is marked damaged, so fetch moves the copy aside and
 * downloads the file again. */
static int damaged_hint(ow_store *s, const char *hex, int rc, const char *name)
{
	size_t n = strlen(name), ml = strlen(".metadata");
	int meta = n > ml && !strcmp(name + n - ml, ".metadata");
	if (rc != OW_EHASH && rc != OW_ENOENT)
		return ow_err_prefix(rc, "%s: ", name);
	char *d = strdup(ow_err_detail());
	if (rc == OW_EHASH)
		ow_store_mark_damaged(s, hex, d ? d : "damaged");
	rc = ow_err(rc, "%s: %s; 'offwheel fetch %s%.*s' fetches it again, then export again",
	            name, d ? d : "damaged", meta ? "--metadata " : "", (int)(meta ? n - ml : n),
	            name);
	free(d);
	return rc;
}

int ex_open_object(ow_store *s, const char *hex, uint64_t size, int *fd_out)
{
	char path[PATH_MAX], why[128];
	struct stat st;
	memset(&st, 0, sizeof st);
	int rc = ow_store_object_path(s, hex, path, sizeof path);
	if (rc)
		return rc;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		if (e == ELOOP || e == ENXIO)
			return object_damaged(hex, e == ELOOP ? "is a symbolic link" : "is not a file");
		return ow_err(e == ENOENT ? OW_ENOENT : OW_EIO, "store object %s: cannot open %s: %s — "
		              "run 'offwheel verify'", hex, path, strerror(e));
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != size) {
		if (S_ISREG(st.st_mode))
			snprintf(why, sizeof why, "%llu bytes on disk, the index records %llu",
			         (unsigned long long)st.st_size, (unsigned long long)size);
		else
			snprintf(why, sizeof why, "is %s, not a regular file", ow_file_kind(st.st_mode));
		close(fd);
		return object_damaged(hex, why);
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	*fd_out = fd;
	return 0;
}

int ex_load_object(ow_store *s, const char *hex, uint64_t size, size_t max, char **buf,
                    size_t *len)
{
	int fd, rc;
	*buf = NULL;
	if (size > max)
		return ow_err(OW_ETOOBIG, "store object %s: larger than %zu bytes", hex, max);
	if ((rc = ex_open_object(s, hex, size, &fd)))
		return rc;
	rc = ow_read_fd_small(fd, hex, max, buf, len);
	close(fd);
	uint8_t d[OW_SHA256_LEN];
	char got[OW_SHA256_HEX];
	if (!rc && !(rc = ow_sha256_buf(*buf, *len, d))) {
		ow_hex(d, sizeof d, got);
		if (strcmp(got, hex))
			rc = object_damaged(hex, "its bytes hash to another value");
	}
	if (rc && *buf) {
		free(*buf);
		*buf = NULL;
	}
	return rc;
}

/* Stream src into t, hashing, never past `size`; the pin must match. */
static int copy_hashing(int src, int dst, const char *hex, uint64_t size)
{
	ow_sha256 *h;
	uint8_t *buf = malloc(COPY_CHUNK), d[OW_SHA256_LEN];
	int rc = buf ? ow_sha256_new(&h) : ow_err(OW_ENOMEM, "copy: out of memory");
	if (rc) {
		free(buf);
		return rc;
	}
	uint64_t total = 0;
	while (total < size) {
		uint64_t left = size - total;
		ssize_t n = read(src, buf, left < COPY_CHUNK ? (size_t)left : COPY_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? ow_err(OW_EIO, "read: %s", strerror(errno)) : 0;
			break;
		}
		total += (uint64_t)n;
		if ((rc = ow_sha256_update(h, buf, (size_t)n)) || (rc = ow_write_all(dst, buf, (size_t)n)))
			break;
	}
	if (!rc)
		rc = ow_sha256_final(h, d);
	ow_sha256_free(h);
	free(buf);
	if (rc)
		return rc;
	char got[OW_SHA256_HEX];
	ow_hex(d, sizeof d, got);
	if (total != size || strcmp(got, hex))
		return ow_err(OW_EHASH, "store object %s reads back as %s (%llu bytes): the store is "
		                        "damaged — nothing was copied",
		              hex, got, (unsigned long long)total);
	return 0;
}

int ex_copy_object(ow_store *s, const char *hex, uint64_t size, int dirfd, const char *name,
                    int *copied)
{
	int rc, src = -1;
	*copied = 0;
	if (already_there(dirfd, name, hex, size))
		return 0;
	struct ow_tmpat t = {.fd = -1};
	if ((rc = ex_open_object(s, hex, size, &src)) ||
	    (rc = ow_tmpat_create(dirfd, OW_EXPORT_TMP_PREFIX, &t))) {
		if (src >= 0)
			close(src);
		return damaged_hint(s, hex, rc, name);
	}
	posix_fadvise(src, 0, 0, POSIX_FADV_SEQUENTIAL);
	rc = copy_hashing(src, t.fd, hex, size);
	close(src);
	if (rc) {
		ow_tmpat_discard(&t);
		return damaged_hint(s, hex, rc, name);
	}
	*copied = 1;
	return ow_tmpat_publish(&t, name);
}

/* The directory part and the name of rel ("" when at the top). */
static int split_rel(const char *rel, char *dir, size_t n, const char **base)
{
	const char *sl = strrchr(rel, '/');
	size_t len = sl ? (size_t)(sl - rel) : 0;
	if (len >= n)
		return ow_err(OW_ERANGE, "%s: path too long", rel);
	memcpy(dir, rel, len);
	dir[len] = '\0';
	*base = sl ? sl + 1 : rel;
	return 0;
}

static int same_text(int dfd, const char *name, const struct ow_str *b, const char *hex)
{
	struct stat st;
	char old[OW_SHA256_HEX];
	uint64_t n;
	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
	       (uint64_t)st.st_size == b->n && ex_hash_at(dfd, name, &n, old) == 0 && n == b->n &&
	       !strcmp(old, hex);
}

int ex_write_text(int root, const char *rel, const struct ow_str *b, struct ex_files *rec)
{
	char dir[PATH_MAX], hex[OW_SHA256_HEX];
	const char *name = rel;
	uint8_t d[OW_SHA256_LEN];
	int dfd = -1, rc = split_rel(rel, dir, sizeof dir, &name);
	if (rc || (rc = ow_mkdir_beneath(root, dir, 0755, &dfd)) || (rc = ow_sha256_buf(b->p, b->n, d)))
		goto out;
	ow_hex(d, sizeof d, hex);
	if ((rc = ex_files_add(rec, rel, b->n, hex)) || same_text(dfd, name, b, hex))
		goto out;
	struct ow_tmpat t;
	if ((rc = ow_tmpat_create(dfd, OW_EXPORT_TMP_PREFIX, &t)))
		goto out;
	if ((rc = ow_write_all(t.fd, b->p, b->n)))
		ow_tmpat_discard(&t);
	else
		rc = ow_tmpat_publish(&t, name);
out:
	if (dfd >= 0)
		close(dfd);
	return rc;
}

void ex_fs_kind(int fd, char *kind, size_t n)
{
	struct statfs sf;
	const char *k = "";
	if (fstatfs(fd, &sf) == 0) {
		unsigned long t = (unsigned long)sf.f_type;
		k = t == 0x4d44 ? "fat32" : t == 0x2011BAB0 ? "exfat" : t == 0x65735546 ? "fuse" : "";
	}
	snprintf(kind, n, "%s", k);
}
