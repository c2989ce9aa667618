/* testutil.c - helpers shared by the cmocka unit tests. */
#include "testutil.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *tu_mkdtemp(void)
{
	const char *t = getenv("TMPDIR");
	char buf[4096];
	snprintf(buf, sizeof buf, "%s/owtest.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(buf))
		return NULL;
	return strdup(buf);
}

void tu_fmt(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(buf, n, fmt, ap);
	va_end(ap);
	if (k < 0 || (size_t)k >= n)
		fail_msg("tu_fmt: %d bytes do not fit in %zu (format \"%s\")", k, n, fmt);
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

void tu_rmtree(const char *path)
{
	if (path)
		nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

char *tu_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf) {
		buf[n] = '\0';
		if (len)
			*len = (size_t)n;
	}
	return buf;
}

int tu_write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	size_t w = fwrite(data, 1, len, f);
	return (fclose(f) == 0 && w == len) ? 0 : -1;
}

char *tu_fixture(const char *rel)
{
	const char *base = getenv("OW_FIXTURES");
	char buf[4096];
	snprintf(buf, sizeof buf, "%s/%s", base ? base : "tests/fixtures", rel);
	return strdup(buf);
}
