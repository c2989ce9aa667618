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
