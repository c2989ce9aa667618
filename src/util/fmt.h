/* fmt.h - snprintf into a fixed buffer that refuses to cut.
 *
 * A fixed char[] holds only bounded things (docs/conventions.md); where the
 * bound is not visible to the compiler, or a value could be longer than the
 * buffer, format with ow_fmt() and check its result: a value that does not
 * fit is an error, never a shortened string. */
#ifndef OW_FMT_H
#define OW_FMT_H

#include <stddef.h>

#include "offwheel/error.h"

/* Format into buf (n bytes with the NUL): 0 when the whole text fit.
 * When it does not, OW_ETOOBIG with a detail naming the format and the size
 * it needed, and buf holds the empty string (n > 0), so that no cut value
 * is ever seen; OW_EINTERNAL when vsnprintf fails (buf empty as well). */
int ow_fmt(char *buf, size_t n, const char *fmt, ...) OW_PRINTF(3, 4);

/* Append to a list being built in buf (n bytes, *at of them used): the
 * piece goes in whole and *at moves past it (0), or buf keeps what it had
 * (OW_ETOOBIG, or OW_EINTERNAL when vsnprintf fails). Sets no error
 * detail: a full list is the caller's to mark ("...") or to accept. */
int ow_fmt_append(char *buf, size_t n, size_t *at, const char *fmt, ...) OW_PRINTF(4, 5);

#endif
