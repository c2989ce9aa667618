/* exportcopy.c - the files of an export: copy store objects while hashing
 * them, write generated text, remove what no longer belongs, file lists. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "error.h"
#include "exportint.h"
#include "event.h"
#include "fsutil.h"

#define COPY_CHUNK (4u << 20)

int ow_xfiles_add(struct ow_xfiles *f, const char *path, uint64_t size, const char *sha256)
{
	struct ow_xfile *g = realloc(f->v, (f->n + 1) * sizeof *g);
	if (!g)
		return ow_err(OW_ENOMEM, "file list: out of memory");
	f->v = g;
	struct ow_xfile *e = &f->v[f->n];
	if (!(e->path = strdup(path)))
		return ow_err(OW_ENOMEM, "file list: out of memory");
	e->size = size;
	snprintf(e->sha256, sizeof e->sha256, "%s", sha256 ? sha256 : "");
	f->n++;
	return 0;
}

void ow_xfiles_free(struct ow_xfiles *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->v[i].path);
	free(f->v);
	f->v = NULL;
	f->n = 0;
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp(((const struct ow_xfile *)a)->path, ((const struct ow_xfile *)b)->path);
}

static int cmp_case(const void *a, const void *b)
{
	return strcasecmp(*(char *const *)a, *(char *const *)b);
}

void ow_xfiles_sort(struct ow_xfiles *f)
{
	if (f->n)
		qsort(f->v, f->n, sizeof *f->v, cmp_path);
}

const struct ow_xfile *ow_xfiles_find(const struct ow_xfiles *f, const char *path)
{
	struct ow_xfile key = {.path = (char *)(uintptr_t)path};
	return f->n ? bsearch(&key, f->v, f->n, sizeof *f->v, cmp_path) : NULL;
}

const char *ow_xfiles_case_clash(const struct ow_xfiles *f, const char **other)
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

const char *ow_xpath_problem(const char *path)
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

int ow_xhash_file(const char *path, uint64_t *size, char hex[OW_SHA256_HEX])
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return ow_err(errno == ENOENT ? OW_ENOENT : OW_EIO, "%s: %s", path, strerror(errno));
	uint8_t d[OW_SHA256_LEN];
	int rc = ow_sha256_fd(fd, d, size);
	close(fd);
	if (rc)
		return ow_err_prefix(rc, "%s: ", path);
	ow_hex(d, sizeof d, hex);
	return 0;
}

/* Is dir/name already the right bytes? 1 yes, 0 no. */
static int already_there(const char *path, const char *hex, uint64_t size)
{
	struct stat st;
	char got[OW_SHA256_HEX];
	uint64_t n;
	if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != size)
		return 0;
	return ow_xhash_file(path, &n, got) == 0 && n == size && !strcmp(got, hex);
}

/* Stream src into t, hashing; the store's pin must match at the end. */
static int copy_hashing(int src, struct ow_tmp *t, const char *hex, uint64_t size)
{
	ow_sha256 *h;
	uint8_t *buf = malloc(COPY_CHUNK), d[OW_SHA256_LEN];
	int rc = buf ? ow_sha256_new(&h) : ow_err(OW_ENOMEM, "copy: out of memory");
	if (rc) {
		free(buf);
		return rc;
	}
	uint64_t total = 0;
	for (;;) {
		ssize_t n = read(src, buf, COPY_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? ow_err(OW_EIO, "read: %s", strerror(errno)) : ow_sha256_final(h, d);
			break;
		}
		total += (uint64_t)n;
		if ((rc = ow_sha256_update(h, buf, (size_t)n)) ||
		    (rc = ow_write_all(t->fd, buf, (size_t)n)))
			break;
	}
	ow_sha256_free(h);
	free(buf);
	if (rc)
		return rc;
	char got[OW_SHA256_HEX];
	ow_hex(d, sizeof d, got);
	if (total != size || strcmp(got, hex))
		return ow_err(OW_EHASH, "store object %s reads back as %s (%llu bytes): the store is "
		                        "damaged — nothing was copied; run 'offwheel verify'",
		              hex, got, (unsigned long long)total);
	return 0;
}

int ow_xcopy_object(ow_store *s, const char *hex, uint64_t size, const char *dir,
                    const char *name, int *copied)
{
	char path[PATH_MAX];
	int rc = ow_path_join(path, sizeof path, dir, name), src = -1;
	*copied = 0;
	if (rc || already_there(path, hex, size))
		return rc;
	struct ow_tmp t = {.fd = -1};
	if ((rc = ow_store_open_object(s, hex, &src)) ||
	    (rc = ow_tmp_create(dir, OW_EXPORT_TMP_PREFIX, &t))) {
		if (src >= 0)
			close(src);
		return rc;
	}
	posix_fadvise(src, 0, 0, POSIX_FADV_SEQUENTIAL);
	rc = copy_hashing(src, &t, hex, size);
	close(src);
	if (rc) {
		ow_tmp_discard(&t);
		return ow_err_prefix(rc, "%s: ", name);
	}
	*copied = 1;
	return ow_tmp_publish(&t, path);
}

int ow_xwrite_text(const char *root, const char *rel, const struct ow_sbuf *b,
                   struct ow_xfiles *rec)
{
	char path[PATH_MAX], dir[PATH_MAX], hex[OW_SHA256_HEX], old[OW_SHA256_HEX];
	uint8_t d[OW_SHA256_LEN];
	uint64_t n;
	int rc = ow_path_join(path, sizeof path, root, rel);
	if (rc || (rc = ow_dirname(dir, sizeof dir, path)) || (rc = ow_mkdir_p(dir, 0755)) ||
	    (rc = ow_sha256_buf(b->p, b->n, d)))
		return rc;
	ow_hex(d, sizeof d, hex);
	if ((rc = ow_xfiles_add(rec, rel, b->n, hex)))
		return rc;
	struct stat st;
	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && ow_xhash_file(path, &n, old) == 0 &&
	    n == b->n && !strcmp(old, hex))
		return 0;
	struct ow_tmp t;
	if ((rc = ow_tmp_create(dir, OW_EXPORT_TMP_PREFIX, &t)))
		return rc;
	if ((rc = ow_write_all(t.fd, b->p, b->n))) {
		ow_tmp_discard(&t);
		return rc;
	}
	return ow_tmp_publish(&t, path);
}

static int is_top_export_file(const char *rel)
{
	return !strcmp(rel, OW_EXPORT_SUMS) || !strcmp(rel, OW_EXPORT_SIG) ||
	       !strcmp(rel, OW_EXPORT_MANIFEST);
}

static int clean_entry(const char *path, const char *rel, int is_dir, const struct ow_xfiles *keep,
                       size_t *removed);

static int clean_dir(const char *path, const char *rel, const struct ow_xfiles *keep,
                     size_t *removed)
{
	DIR *d = opendir(path);
	if (!d)
		return ow_err(OW_EIO, "%s: cannot list: %s", path, strerror(errno));
	struct dirent *e;
	int rc = 0;
	while (!rc && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char p[PATH_MAX], r[PATH_MAX];
		struct stat st;
		if ((rc = ow_path_join(p, sizeof p, path, e->d_name)))
			break;
		snprintf(r, sizeof r, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
		if (lstat(p, &st) != 0)
			continue;
		rc = clean_entry(p, r, S_ISDIR(st.st_mode), keep, removed);
	}
	closedir(d);
	return rc;
}

static int clean_entry(const char *path, const char *rel, int is_dir, const struct ow_xfiles *keep,
                       size_t *removed)
{
	if (is_dir) {
		int rc = clean_dir(path, rel, keep, removed);
		if (!rc && rmdir(path) == 0)
			ow_log(OW_LOG_DEBUG, "removed empty directory %s", rel);
		return rc;
	}
	if ((ow_xfiles_find(keep, rel) && !strstr(rel, OW_EXPORT_TMP_PREFIX)) ||
	    is_top_export_file(rel))
		return 0;
	if (unlink(path) != 0)
		return ow_err(OW_EIO, "%s: cannot remove a stale file: %s", path, strerror(errno));
	(*removed)++;
	char dir[PATH_MAX];
	return ow_dirname(dir, sizeof dir, path) ? 0 : ow_fsync_dir(dir);
}

int ow_xclean(const char *root, const struct ow_xfiles *keep, size_t *removed)
{
	*removed = 0;
	return clean_dir(root, "", keep, removed);
}

void ow_xfs_kind(const char *dir, char *kind, size_t n)
{
	struct statfs sf;
	const char *k = "";
	if (statfs(dir, &sf) == 0) {
		unsigned long t = (unsigned long)sf.f_type;
		k = t == 0x4d44 ? "fat32" : t == 0x2011BAB0 ? "exfat" : t == 0x65735546 ? "fuse" : "";
	}
	snprintf(kind, n, "%s", k);
}
