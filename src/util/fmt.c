/* fmt.c - the checked formatter (fmt.h). */
#include "fmt.h"

#include <stdarg.h>
#include <stdio.h>

int ow_fmt(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int w = vsnprintf(buf, n, fmt, ap);
	va_end(ap);
	if (w >= 0 && (size_t)w < n)
		return 0;
	if (n > 0)
		buf[0] = '\0';
	if (w < 0)
		return ow_err(OW_EINTERNAL, "format \"%s\": output error", fmt);
	return ow_err(OW_ETOOBIG, "format \"%s\": the text needs %lld bytes, its buffer has %zu",
	              fmt, (long long)w + 1, n);
}

int ow_fmt_append(char *buf, size_t n, size_t *at, const char *fmt, ...)
{
	if (*at >= n)
		return OW_ETOOBIG;
	va_list ap;
	va_start(ap, fmt);
	int w = vsnprintf(buf + *at, n - *at, fmt, ap);
	va_end(ap);
	if (w >= 0 && (size_t)w < n - *at) {
		*at += (size_t)w;
		return 0;
	}
	buf[*at] = '\0'; /* what was there stays; the piece is not cut in */
	return w < 0 ? OW_EINTERNAL : OW_ETOOBIG;
}
