/* url.h - strict URL parsing, RFC 3986 reference resolution, percent-decoding
 * and the link policy of the index crawler (docs/index-quirks.md).
 *
 * Every href of an index page is hostile until ow_url_check() has accepted
 * it: the check resolves it against the page URL and refuses, with a message
 * naming the href and the reason, anything that is not an https (or trusted
 * http, or file-from-file) link to an allowed host with a clean path. */
#ifndef OW_URL_H
#define OW_URL_H

#include <stddef.h>

#include "offwheel/url.h"

/* Parse an absolute URL or a relative reference. */
int ow_url_parse_ref(const char *s, struct ow_url *u);
/* Recompose `u` into a malloc'd string. */
int ow_url_format(const struct ow_url *u, char **out);

/* Resolve `href` against the absolute `base` as RFC 3986 §5.2 says (the
 * fragment of `href` is kept). *out is malloc'd. */
int ow_url_resolve(const char *base, const char *href, char **out);

/* Decode %XX escapes exactly once (so "%252B" gives "%2B", not "+").
 * Refuses a malformed escape and %00. *out is malloc'd, NUL-terminated. */
int ow_url_percent_decode(const char *s, size_t len, char **out);

/* The last path segment of `url` (query and fragment ignored), decoded once.
 * Refuses an empty basename and one that decodes to '/', '\\' or a control
 * character. */
int ow_url_basename_decoded(const char *url, char **out);

/* The local path of a file: URL ("file:///p" or "file://localhost/p"),
 * decoded once: refuses another host, userinfo or a port, a relative path,
 * and a path that decodes to a "." or ".." segment, a control character or
 * a backslash (what the link policy refuses in links).  Query and fragment
 * are not part of the path.  *out is malloc'd. */
int ow_url_file_path(const char *url, char **out);

/* The `#sha256=<hex>` of an href or URL. `out` gets 64 lowercase hex digits,
 * or "" when the fragment has no sha256. Other hash names (md5=...) are
 * ignored; a sha256 of the wrong length, with a non-hex digit, or given twice
 * (or a second '#') is OW_EPARSE. */
int ow_url_fragment_sha256(const char *href, char out[65]);

/* Resolve `href` against `page_url` and apply the policy. On success *out is
 * the absolute URL without its fragment (malloc'd). On failure the detail
 * names the href and the reason; the code is OW_EPOLICY (refused by policy),
 * OW_EPARSE (malformed) or OW_ETOOBIG (overlong). */
int ow_url_check(const struct ow_url_policy *pol, const char *page_url, const char *href,
                 char **out);

/* The same against a page URL parsed once (ow_url_parse), for pages with
 * thousands of links. */
int ow_url_check_at(const struct ow_url_policy *pol, const struct ow_url *page, const char *href,
                    char **out);

#endif
