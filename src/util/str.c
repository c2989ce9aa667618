/* str.c - the growable string (str.h). */
#include "offwheel/str.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for n more bytes and the NUL; 0 or sets b->err. */
static int reserve(struct ow_str *b, size_t n)
{
	if (b->err)
		return b->err;
	if (n > SIZE_MAX / 2 - b->n - 1)
		return b->err = ow_err(OW_ENOMEM, "text: out of memory");
	if (b->p && b->n + n + 1 <= b->cap)
		return 0;
	size_t cap = (b->n + n + 1) * 2 < 256 ? 256 : (b->n + n + 1) * 2;
	char *p = realloc(b->p, cap);
	if (!p)
		return b->err = ow_err(OW_ENOMEM, "text: out of memory");
	b->p = p;
	b->cap = cap;
	return 0;
}

void ow_str_put(struct ow_str *b, const char *s, size_t n)
{
	if (reserve(b, n))
		return;
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

void ow_str_puts(struct ow_str *b, const char *s)
{
	ow_str_put(b, s, strlen(s));
}

void ow_str_printf(struct ow_str *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int w = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (w < 0) {
		if (!b->err)
			b->err = ow_err(OW_EINTERNAL, "text: format error");
		return;
	}
	if (reserve(b, (size_t)w))
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
	va_end(ap);
	b->n += (size_t)w;
}

int ow_str_take(struct ow_str *b, char **out)
{
	if (!b->err && !b->p) /* nothing appended: the empty string */
		reserve(b, 0);
	if (b->err) {
		int rc = b->err;
		ow_str_dispose(b);
		return rc;
	}
	b->p[b->n] = '\0';
	*out = b->p;
	b->p = NULL;
	b->n = b->cap = 0;
	return 0;
}

void ow_str_dispose(struct ow_str *b)
{
	free(b->p);
	memset(b, 0, sizeof *b);
}

char *ow_aprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int w = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *out = w < 0 ? NULL : malloc((size_t)w + 1);
	if (!out)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(out, (size_t)w + 1, fmt, ap);
	va_end(ap);
	return out;
}

int ow_str_distance(const char *a, const char *b, int cap)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 127 || lb > 127 || (size_t)cap <= (la > lb ? la - lb : lb - la))
		return cap;
	int row[128];
	for (size_t j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		int diag = row[0];
		row[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int up = row[j], best = diag + (a[i - 1] != b[j - 1]);
			best = up + 1 < best ? up + 1 : best;
			best = row[j - 1] + 1 < best ? row[j - 1] + 1 : best;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb] < cap ? row[lb] : cap;
}
