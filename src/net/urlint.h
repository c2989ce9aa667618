/* urlint.h - helpers shared by url.c and urlpolicy.c (not a public API). */
#ifndef OW_URLINT_H
#define OW_URLINT_H

#include <stddef.h>

#include "bytes.h"
#include "offwheel/str.h"
#include "url.h"


int ow_url_is_alpha(int c);
int ow_url_is_digit(int c);
/* Length of a leading "scheme" followed by ':', else 0. */
size_t ow_url_scheme_len(const char *s);
/* Where the userinfo of `s` is (the USER:PW of scheme://USER:PW@host/):
 * *start and *len, the '@' at start + len; *start 0 when there is none (so
 * messages never repeat credentials, and logins split them off). */
void ow_url_userinfo_span(const char *s, size_t *start, size_t *len);
/* Decode %XX of s[0..len) into d (room for len + 1), NUL-terminate, set
 * *outlen; OW_EPARSE on a malformed escape or %00. */
int ow_url_decode_into(const char *s, size_t len, char *d, size_t *outlen);
/* RFC 3986 §5.2.2 on parsed parts; `t` gets its own copies. */
int ow_url_resolve_refs(const struct ow_url *b, const struct ow_url *r, struct ow_url *t);
/* Resolve `href` against the parsed absolute `base` into `t`. */
int ow_url_resolve_parsed(const struct ow_url *base, const char *href, struct ow_url *t);

#endif
