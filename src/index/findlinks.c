/* findlinks.c - a find-links source's URL, and a local directory as a page. */
#include "findlinks.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "array.h"
#include "offwheel/error.h"
#include "offwheel/str.h"
#include "url.h"

int ow_find_links_fetch_url(const char *root, char **out)
{
	const char *last = strrchr(root, '/');
	bool file = last && last > root && last[-1] != '/' && strchr(last, '.');
	*out = ow_aprintf("%s%s", root, file ? "" : "/");
	return *out ? 0 : ow_err(OW_ENOMEM, "find-links: out of memory");
}

static bool dist_name(const char *n)
{
	static const char *const ext[] = {".whl", ".tar.gz", ".zip"};
	size_t len = strlen(n);
	for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
		size_t k = strlen(ext[i]);
		if (len > k && !strcmp(n + len - k, ext[i]))
			return true;
	}
	return false;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The distribution files of the open directory `fd`: regular files by
 * lstat (a symlink is not followed out of the source), sorted. */
static int dir_names(int fd, char ***out, size_t *n)
{
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return ow_err(OW_EIO, "%s", strerror(errno));
	}
	struct dirent *e;
	int rc = 0;
	while (!rc && (e = readdir(d))) {
		struct stat st;
		if (!dist_name(e->d_name) || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode))
			continue;
		char **g = ow_array_more(*out, *n, sizeof *g);
		if (!g) {
			rc = ow_err(OW_ENOMEM, "find-links: out of memory");
			break;
		}
		*out = g;
		/* analyzer: kept in (*out)[*n], freed by dir_page */
		if (!(g[*n] = strdup(e->d_name)))
			rc = ow_err(OW_ENOMEM, "find-links: out of memory");
		*n += !rc;
	}
	closedir(d);
	if (!rc && *n)
		qsort(*out, *n, sizeof **out, cmp_names);
	return rc;
}

static void put_escaped(struct ow_str *b, const char *s, bool href)
{
	static const char hex[] = "0123456789ABCDEF";
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		bool plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		             (*p >= '0' && *p <= '9') || strchr("-._~!", *p);
		if (href && !plain) {
			char esc[3] = {'%', hex[*p >> 4], hex[*p & 15]};
			ow_str_put(b, esc, 3);
		} else if (!href && strchr("<>&\"", *p))
			ow_str_printf(b, "&#%d;", *p);
		else
			ow_str_put(b, (const char *)p, 1);
	}
}

static int dir_page(const char *path, int fd, char **page, size_t *len)
{
	char **names = NULL;
	size_t n = 0;
	struct ow_str b = {0};
	int rc = dir_names(fd, &names, &n);
	ow_str_puts(&b, "<!DOCTYPE html>\n<html><body><h1>Links for ");
	put_escaped(&b, path, false);
	ow_str_puts(&b, "</h1>\n");
	for (size_t i = 0; i < n; i++) {
		ow_str_puts(&b, "<a href=\"");
		put_escaped(&b, names[i], true);
		ow_str_puts(&b, "\">");
		put_escaped(&b, names[i], false);
		ow_str_puts(&b, "</a><br/>\n");
		free(names[i]);
	}
	free(names);
	ow_str_puts(&b, "</body></html>\n");
	*len = b.n;
	if (rc) {
		ow_str_dispose(&b);
		return rc;
	}
	return ow_str_take(&b, page);
}

static int read_page(int fd, size_t cap, char **page, size_t *len)
{
	struct ow_str b = {0};
	char buf[65536];
	ssize_t got;
	while ((got = read(fd, buf, sizeof buf)) > 0 && b.n <= cap)
		ow_str_put(&b, buf, (size_t)got);
	int rc = got < 0 ? ow_err(OW_EIO, "%s", strerror(errno))
	         : b.n > cap ? ow_err(OW_ETOOBIG, "larger than the %zu MiB a page may be", cap >> 20)
	                     : 0;
	close(fd);
	*len = b.n;
	if (rc) {
		ow_str_dispose(&b);
		return rc;
	}
	ow_str_puts(&b, ""); /* an empty file is still a string */
	return ow_str_take(&b, page);
}

/* Open the source: 1 a directory, 2 a regular file, with *fd open; else an
 * error (nothing open). */
static int open_source(const char *path, int *fd)
{
	struct stat st;
	*fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (*fd < 0)
		return ow_err(errno == ENOENT ? OW_ENOENT : OW_EIO,
		              "find-links %s: %s (give a directory of wheels or a page that links "
		              "them)", path, strerror(errno));
	int kind = fstat(*fd, &st) ? 0 : S_ISDIR(st.st_mode) ? 1 : S_ISREG(st.st_mode) ? 2 : 0;
	if (kind)
		return kind;
	close(*fd);
	return ow_err(OW_EINVAL, "find-links %s: neither a directory nor a regular file", path);
}

int ow_find_links_local(const char *url, size_t cap, char **page, size_t *len, char **base)
{
	char *path = NULL;
	int fd = -1;
	*page = *base = NULL;
	*len = 0;
	int rc = ow_url_file_path(url, &path);
	if (rc)
		return ow_err_prefix(rc, "find-links %s: ", url);
	int kind = rc = open_source(path, &fd);
	if (kind == 1)
		rc = dir_page(path, fd, page, len);
	else if (kind == 2)
		rc = read_page(fd, cap, page, len);
	if (kind > 0 && rc)
		rc = ow_err_prefix(rc, "find-links %s: ", path);
	if (!rc && !(*base = ow_aprintf("%s%s", url, kind == 1 ? "/" : "")))
		rc = ow_err(OW_ENOMEM, "find-links: out of memory");
	free(path);
	if (rc) {
		free(*page);
		*page = NULL;
	}
	return rc;
}
