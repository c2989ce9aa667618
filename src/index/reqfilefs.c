/* reqfilefs.c - requirement files read from the file system, for
 * reqfile.c's parser: includes relative to the including file's folder,
 * one name per file (lexically normalized) so the parser's loop check works. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsbeneath.h"
#include "offwheel/error.h"
#include "offwheel/str.h"
#include "reqfile.h"

/* "a/b/../c/./d" -> "a/c/d" (os.path.normpath's rule, without touching the
 * file system); the result is malloc'd. */
static int normpath(const char *p, char **out)
{
	enum { SEGS = 256 };
	const char *seg[SEGS];
	size_t len[SEGS], n = 0;
	bool abs = *p == '/';
	for (const char *s = p; *s;) {
		while (*s == '/')
			s++;
		size_t l = strcspn(s, "/");
		bool dotdot = l == 2 && !strncmp(s, "..", 2);
		if (!l || (l == 1 && *s == '.'))
			; /* "" or "." */
		else if (dotdot && n && !(len[n - 1] == 2 && !strncmp(seg[n - 1], "..", 2)))
			n--;
		else if (!(dotdot && abs && !n) && n < SEGS)
			seg[n] = s, len[n++] = l;
		s += l;
	}
	struct ow_str b = {0};
	for (size_t i = 0; i < n; i++) {
		ow_str_puts(&b, i || abs ? "/" : "");
		ow_str_put(&b, seg[i], len[i]);
	}
	if (!n)
		ow_str_puts(&b, abs ? "/" : ".");
	return ow_str_take(&b, out);
}

/* A FIFO, a device or a directory is refused at once (opened
 * non-blocking, never waited on), as everywhere a user names a file. */
static int read_all(const char *path, char **text, size_t *len)
{
	struct stat st;
	int fd, rc = ow_open_regular(path, &fd, &st);
	if (rc == OW_EPOLICY) {
		char *why = ow_aprintf("%s — name a requirements file (never read: FIFOs, devices, "
		                       "directories)", ow_err_detail());
		rc = ow_err(OW_EINVAL, "%s", why ? why : "not a regular file");
		free(why);
		return rc;
	}
	if (rc)
		return rc;
	FILE *f = fdopen(fd, "rb");
	if (!f) {
		close(fd);
		return ow_err(OW_EIO, "%s: %s", path, strerror(errno));
	}
	struct ow_str b = {0};
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0 && b.n <= OW_REQFILE_SIZE_MAX)
		ow_str_put(&b, buf, n);
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		ow_str_dispose(&b);
		return ow_err(OW_EIO, "%s: read error", path);
	}
	*len = b.n;
	ow_str_put(&b, "", 0);
	return ow_str_take(&b, text);
}

int ow_reqfile_read_fs(void *ud, const char *from, const char *ref, char **path, char **text,
                       size_t *len)
{
	(void)ud;
	struct ow_str p = {0};
	const char *slash = from && ref[0] != '/' ? strrchr(from, '/') : NULL;
	if (slash)
		ow_str_put(&p, from, (size_t)(slash - from + 1));
	ow_str_puts(&p, ref);
	char *joined = NULL;
	int rc = ow_str_take(&p, &joined);
	if (rc == 0)
		rc = normpath(joined, path);
	free(joined);
	if (rc == 0 && (rc = read_all(*path, text, len)) < 0) {
		free(*path);
		*path = NULL;
	}
	return rc;
}

const char *ow_reqfile_getenv(void *ud, const char *name)
{
	(void)ud;
	return getenv(name);
}
