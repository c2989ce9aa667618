/* str.h - a growable NUL-terminated string for text built piece by piece
 * (URLs, pages, lists, messages).  The first failure sticks in `err` and
 * later appends do nothing, so a builder is checked once, at the end. */
#ifndef OW_STR_H
#define OW_STR_H

#include <stddef.h>

#include "offwheel/error.h"

struct ow_str {
	char *p;  /* NULL until the first append; else NUL-terminated */
	size_t n; /* bytes, without the NUL */
	size_t cap;
	int err;  /* 0, or the OW_E* code of the first failure */
};

void ow_str_put(struct ow_str *b, const char *s, size_t n);
void ow_str_puts(struct ow_str *b, const char *s);
void ow_str_printf(struct ow_str *b, const char *fmt, ...) OW_PRINTF(2, 3);
/* Hand the string to *out (the builder is left empty): 0, or the builder's
 * error (nothing handed over, the buffer freed). */
int ow_str_take(struct ow_str *b, char **out);
void ow_str_dispose(struct ow_str *b);

/* The formatted text in a new malloc'd string, or NULL when out of memory
 * (or on a format error).  Sets no error detail, so it can word a message
 * from the current one: ow_aprintf("...: %s", ow_err_detail()). */
char *ow_aprintf(const char *fmt, ...) OW_PRINTF(1, 2);

/* Levenshtein distance of two short words (did-you-mean), capped at `cap`:
 * cap for words over 127 bytes or a distance of cap or more. */
int ow_str_distance(const char *a, const char *b, int cap);

#endif
