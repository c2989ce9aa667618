/* url.c - strict URL parsing and RFC 3986 §5 reference resolution. The link
 * policy lives in urlpolicy.c. */
#include "url.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "offwheel/error.h"
#include "urlint.h"

int ow_url_is_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

int ow_url_is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static int lower(int c)
{
	return (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c;
}

static char *dup_n(const char *s, size_t n)
{
	char *d = malloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

static char *dup_lower(const char *s, size_t n)
{
	char *d = dup_n(s, n);
	for (size_t i = 0; d && i < n; i++)
		d[i] = (char)lower((unsigned char)d[i]);
	return d;
}

/* --- parsing ------------------------------------------------------------ */

/* Length of a leading "scheme" followed by ':', else 0. */
size_t ow_url_scheme_len(const char *s)
{
	size_t i = 1;
	if (!ow_url_is_alpha((unsigned char)s[0]))
		return 0;
	while (ow_url_is_alpha((unsigned char)s[i]) || ow_url_is_digit((unsigned char)s[i]) ||
	       s[i] == '+' || s[i] == '-' || s[i] == '.')
		i++;
	return s[i] == ':' ? i : 0;
}

static int host_char_ok(int c)
{
	return ow_url_is_alpha(c) || ow_url_is_digit(c) || c == '-' || c == '.' || c == '_';
}

static int ip6_char_ok(int c)
{
	return ow_hexval(c) >= 0 || c == ':' || c == '.';
}

static int parse_port(const char *p, size_t n, struct ow_url *u)
{
	long v = 0;
	if (n == 0 || n > 5)
		return ow_err(OW_EPARSE, "url: bad port \"%.*s\"", (int)n, p);
	for (size_t i = 0; i < n; i++) {
		if (!ow_url_is_digit((unsigned char)p[i]))
			return ow_err(OW_EPARSE, "url: bad port \"%.*s\"", (int)n, p);
		v = v * 10 + (p[i] - '0');
	}
	if (v < 1 || v > 65535)
		return ow_err(OW_EPARSE, "url: port %ld out of range", v);
	u->port = (int)v;
	return 0;
}

/* Length of the host part of an authority (after any userinfo). */
static int host_len(const char *a, size_t n, size_t *hl)
{
	size_t i = 0;
	if (n > 0 && a[0] == '[') {
		while (i < n && a[i] != ']')
			i++;
		if (i == n)
			return ow_err(OW_EPARSE, "url: unterminated IPv6 literal");
		for (size_t j = 1; j < i; j++)
			if (!ip6_char_ok((unsigned char)a[j]))
				return ow_err(OW_EPARSE, "url: bad IPv6 literal");
		*hl = i + 1;
		return 0;
	}
	while (i < n && a[i] != ':') {
		if (!host_char_ok((unsigned char)a[i]))
			return ow_err(OW_EPARSE, "url: bad character in host \"%.*s\"", (int)n, a);
		i++;
	}
	*hl = i;
	return 0;
}

static int parse_authority(const char *a, size_t n, struct ow_url *u)
{
	const char *at = memrchr(a, '@', n);
	size_t hl = 0;
	if (at) {
		u->userinfo = dup_n(a, (size_t)(at - a));
		n -= (size_t)(at - a) + 1;
		a = at + 1;
		if (!u->userinfo)
			return ow_err(OW_ENOMEM, "url: out of memory");
	}
	int rc = host_len(a, n, &hl);
	if (rc)
		return rc;
	u->host = dup_lower(a, hl);
	if (!u->host)
		return ow_err(OW_ENOMEM, "url: out of memory");
	if (hl == n)
		return 0;
	if (a[hl] != ':')
		return ow_err(OW_EPARSE, "url: junk after host");
	return parse_port(a + hl + 1, n - hl - 1, u);
}

static int parse_tail(const char *p, struct ow_url *u)
{
	size_t n = strcspn(p, "?#");
	u->path = dup_n(p, n);
	p += n;
	if (*p == '?') {
		n = strcspn(++p, "#");
		u->query = dup_n(p, n);
		if (!u->query)
			return ow_err(OW_ENOMEM, "url: out of memory");
		p += n;
	}
	if (*p == '#') {
		u->fragment = dup_n(p + 1, strlen(p + 1));
		if (!u->fragment)
			return ow_err(OW_ENOMEM, "url: out of memory");
	}
	return u->path ? 0 : ow_err(OW_ENOMEM, "url: out of memory");
}

static int parse_any(const char *s, struct ow_url *u)
{
	size_t n = ow_url_scheme_len(s);
	const char *p = s;
	memset(u, 0, sizeof *u);
	u->port = -1;
	if (n) {
		u->scheme = dup_lower(s, n);
		if (!u->scheme)
			return ow_err(OW_ENOMEM, "url: out of memory");
		p += n + 1;
	}
	if (p[0] == '/' && p[1] == '/') {
		p += 2;
		n = strcspn(p, "/?#");
		u->has_authority = 1;
		int rc = parse_authority(p, n, u);
		if (rc)
			return rc;
		p += n;
	}
	return parse_tail(p, u);
}

int ow_url_parse_ref(const char *s, struct ow_url *u)
{
	int rc = parse_any(s, u);
	if (rc)
		ow_url_clear(u);
	return rc;
}

static int is_web(const char *scheme)
{
	return !strcmp(scheme, "http") || !strcmp(scheme, "https");
}

int ow_url_parse(const char *s, struct ow_url *u)
{
	int rc = ow_url_parse_ref(s, u);
	if (rc)
		return rc;
	if (!u->scheme)
		rc = ow_err(OW_EPARSE, "url: not an absolute URL (no scheme)");
	else if (is_web(u->scheme) && (!u->host || !u->host[0]))
		rc = ow_err(OW_EPARSE, "url: %s URL without a host", u->scheme);
	if (rc)
		ow_url_clear(u);
	return rc;
}

void ow_url_clear(struct ow_url *u)
{
	if (!u)
		return;
	free(u->scheme);
	free(u->userinfo);
	free(u->host);
	free(u->path);
	free(u->query);
	free(u->fragment);
	memset(u, 0, sizeof *u);
	u->port = -1;
}

static void format_authority(struct ow_str *b, const struct ow_url *u)
{
	char port[16];
	ow_str_puts(b, "//");
	if (u->userinfo) {
		ow_str_puts(b, u->userinfo);
		ow_str_puts(b, "@");
	}
	ow_str_puts(b, u->host ? u->host : "");
	if (u->port >= 0) {
		int n = snprintf(port, sizeof port, ":%d", u->port);
		ow_str_put(b, port, (size_t)n);
	}
}

int ow_url_format(const struct ow_url *u, char **out)
{
	struct ow_str b = {0};
	if (u->scheme) {
		ow_str_puts(&b, u->scheme);
		ow_str_puts(&b, ":");
	}
	if (u->has_authority)
		format_authority(&b, u);
	ow_str_puts(&b, u->path ? u->path : "");
	if (u->query) {
		ow_str_puts(&b, "?");
		ow_str_puts(&b, u->query);
	}
	if (u->fragment) {
		ow_str_puts(&b, "#");
		ow_str_puts(&b, u->fragment);
	}
	return ow_str_take(&b, out);
}

/* --- resolution (RFC 3986 §5.2) ------------------------------------------ */

static void pop_segment(char *out, size_t *o)
{
	while (*o > 0 && out[*o - 1] != '/')
		(*o)--;
	if (*o > 0)
		(*o)--;
}

static int starts(const char *p, const char *end, const char *lit)
{
	size_t n = strlen(lit);
	return (size_t)(end - p) >= n && !memcmp(p, lit, n);
}

static int is_exactly(const char *p, const char *end, const char *lit)
{
	return (size_t)(end - p) == strlen(lit) && starts(p, end, lit);
}

/* One step of §5.2.4; returns the new input position. */
static const char *dot_step(const char *p, const char *end, char *out, size_t *o)
{
	if (starts(p, end, "../"))
		return p + 3;
	if (starts(p, end, "./") || starts(p, end, "/./"))
		return p + 2;
	if (is_exactly(p, end, "/.") || is_exactly(p, end, "/..")) {
		if (p[2] == '.')
			pop_segment(out, o);
		out[(*o)++] = '/';
		return end;
	}
	if (starts(p, end, "/../")) {
		pop_segment(out, o);
		return p + 3;
	}
	if (is_exactly(p, end, ".") || is_exactly(p, end, ".."))
		return end;
	const char *q = p + (*p == '/');
	while (q < end && *q != '/')
		q++;
	memcpy(out + *o, p, (size_t)(q - p));
	*o += (size_t)(q - p);
	return q;
}

/* 1 when the path has a "." or ".." segment for §5.2.4 to remove. */
static int has_dot_segment(const char *path)
{
	for (const char *p = strchr(path, '.'); p; p = strchr(p + 1, '.'))
		if (p == path || p[-1] == '/')
			return 1;
	return 0;
}

static char *remove_dots(const char *path)
{
	size_t n = strlen(path), o = 0;
	char *out = malloc(n + 2);
	const char *p = path, *end = path + n;
	if (!out)
		return NULL;
	if (!has_dot_segment(path)) { /* the usual link: nothing to remove */
		memcpy(out, path, n + 1);
		return out;
	}
	while (p < end)
		p = dot_step(p, end, out, &o);
	out[o] = '\0';
	return out;
}

static char *merge_paths(const struct ow_url *base, const char *rpath)
{
	const char *bp = base->path ? base->path : "";
	const char *slash = strrchr(bp, '/');
	struct ow_str b = {0};
	char *out = NULL;
	if (base->has_authority && !bp[0])
		ow_str_puts(&b, "/");
	else if (slash)
		ow_str_put(&b, bp, (size_t)(slash - bp) + 1);
	ow_str_puts(&b, rpath);
	if (ow_str_take(&b, &out))
		return NULL;
	return out;
}

static int copy_str(char **dst, const char *src)
{
	*dst = NULL;
	if (!src)
		return 0;
	*dst = dup_n(src, strlen(src));
	return *dst ? 0 : -1;
}

static int copy_authority(struct ow_url *t, const struct ow_url *s)
{
	t->has_authority = s->has_authority;
	t->port = s->port;
	if (copy_str(&t->userinfo, s->userinfo) || copy_str(&t->host, s->host))
		return -1;
	return 0;
}

/* T.path and T.query when the reference has neither scheme nor authority. */
static int target_path(struct ow_url *t, const struct ow_url *b, const struct ow_url *r)
{
	if (!r->path[0]) {
		t->path = dup_n(b->path, strlen(b->path));
		return (t->path && !copy_str(&t->query, r->query ? r->query : b->query)) ? 0 : -1;
	}
	if (r->path[0] == '/') {
		t->path = remove_dots(r->path);
	} else {
		char *m = merge_paths(b, r->path);
		t->path = m ? remove_dots(m) : NULL;
		free(m);
	}
	return (t->path && !copy_str(&t->query, r->query)) ? 0 : -1;
}

int ow_url_resolve_refs(const struct ow_url *b, const struct ow_url *r, struct ow_url *t)
{
	int bad;
	memset(t, 0, sizeof *t);
	t->port = -1;
	if (r->scheme || r->has_authority) {
		bad = copy_authority(t, r);
		t->path = remove_dots(r->path);
		bad = bad || !t->path || copy_str(&t->query, r->query);
	} else {
		bad = copy_authority(t, b) || target_path(t, b, r);
	}
	bad = bad || copy_str(&t->scheme, r->scheme ? r->scheme : b->scheme);
	bad = bad || copy_str(&t->fragment, r->fragment);
	return bad ? ow_err(OW_ENOMEM, "url: out of memory") : 0;
}

int ow_url_resolve_parsed(const struct ow_url *base, const char *href, struct ow_url *t)
{
	struct ow_url r;
	int rc = ow_url_parse_ref(href, &r);
	if (rc)
		return rc;
	rc = ow_url_resolve_refs(base, &r, t);
	ow_url_clear(&r);
	if (rc)
		ow_url_clear(t);
	return rc;
}

int ow_url_resolve(const char *base, const char *href, char **out)
{
	struct ow_url b, t;
	int rc = ow_url_parse(base, &b);
	if (rc)
		return ow_err_prefix(rc, "base URL: ");
	rc = ow_url_resolve_parsed(&b, href, &t);
	ow_url_clear(&b);
	if (rc)
		return rc;
	rc = ow_url_format(&t, out);
	ow_url_clear(&t);
	return rc;
}

/* --- decoding ------------------------------------------------------------ */

int ow_url_decode_into(const char *s, size_t len, char *d, size_t *outlen)
{
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] != '%') {
			d[o++] = s[i];
			continue;
		}
		int hi = i + 2 < len ? ow_hexval((unsigned char)s[i + 1]) : -1;
		int lo = hi >= 0 ? ow_hexval((unsigned char)s[i + 2]) : -1;
		if (lo < 0)
			return ow_err(OW_EPARSE, "malformed percent-escape");
		if ((hi | lo) == 0)
			return ow_err(OW_EPARSE, "%%00 (an encoded NUL byte)");
		d[o++] = (char)(hi * 16 + lo);
		i += 2;
	}
	d[o] = '\0';
	*outlen = o;
	return 0;
}

int ow_url_percent_decode(const char *s, size_t len, char **out)
{
	size_t n;
	char *d = malloc(len + 1);
	if (!d)
		return ow_err(OW_ENOMEM, "url: out of memory");
	int rc = ow_url_decode_into(s, len, d, &n);
	if (rc) {
		free(d);
		return rc;
	}
	*out = d;
	return 0;
}

static int basename_ok(const char *b)
{
	if (!b[0])
		return ow_err(OW_EPARSE, "empty file name");
	for (const unsigned char *p = (const unsigned char *)b; *p; p++) {
		if (*p == '/' || *p == '\\')
			return ow_err(OW_EPARSE, "file name contains '%c' after decoding", *p);
		if (*p < 0x20 || *p == 0x7f)
			return ow_err(OW_EPARSE, "file name contains a control character");
	}
	return 0;
}

/* Where the path of `url` starts: after "scheme:" and "//authority". */
static size_t path_start(const char *url)
{
	size_t i = ow_url_scheme_len(url);
	if (i)
		i++;
	if (url[i] == '/' && url[i + 1] == '/')
		i += 2 + strcspn(url + i + 2, "/?#");
	return i;
}

int ow_url_basename_decoded(const char *url, char **out)
{
	size_t start = path_start(url), end = strcspn(url, "?#");
	if (start > end)
		start = end;
	const char *slash = memrchr(url + start, '/', end - start);
	const char *seg = slash ? slash + 1 : url + start;
	char *d = NULL;
	int rc = ow_url_percent_decode(seg, (size_t)(url + end - seg), &d);
	if (!rc)
		rc = d ? basename_ok(d) : ow_err(OW_EINTERNAL, "url: no decoded name");
	if (rc) {
		free(d);
		return rc;
	}
	*out = d;
	return 0;
}

/* --- file: URLs --------------------------------------------------------- */

int ow_url_file_path(const char *url, char **out)
{
	struct ow_url u;
	char *d = NULL;
	*out = NULL;
	int rc = ow_url_parse(url, &u);
	if (rc)
		return rc;
	if (strcmp(u.scheme, "file"))
		rc = ow_err(OW_EINVAL, "url: not a file: URL");
	else if (u.userinfo || u.port >= 0 || (u.host && u.host[0] && strcmp(u.host, "localhost")))
		rc = ow_err(OW_EPOLICY, "url: a file: URL names another host");
	else if (!u.path || u.path[0] != '/')
		rc = ow_err(OW_EPARSE, "url: a file: URL without an absolute path");
	else
		rc = ow_url_percent_decode(u.path, strlen(u.path), &d);
	/* what the link policy already refused, refused here too: the path is
	 * opened as it decodes, so it must not climb or hold control bytes */
	for (const char *p = d; !rc && *p;) {
		size_t n = strcspn(++p, "/");
		int bad = (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.');
		for (size_t i = 0; !bad && i < n; i++)
			bad = (unsigned char)p[i] < 0x20 || p[i] == 0x7f || p[i] == '\\';
		if (bad)
			rc = ow_err(OW_EPOLICY, "url: a file: path with a \".\" or \"..\" segment, a "
			                        "control character or a backslash");
		p += n;
	}
	ow_url_clear(&u);
	if (rc)
		free(d);
	else
		*out = d;
	return rc;
}

/* --- the #sha256= fragment ----------------------------------------------- */

static int hex64(const char *v, size_t n, char out[65])
{
	if (n != 64)
		return ow_err(OW_EPARSE, "#sha256 has %zu characters, expected 64 hex digits", n);
	/* a lower-case digit for each hex digit, 0 for anything else: one
	 * branch-free pass over the 64, the check after it */
	static const char digit[256] = {
	    ['0'] = '0', ['1'] = '1', ['2'] = '2', ['3'] = '3', ['4'] = '4', ['5'] = '5',
	    ['6'] = '6', ['7'] = '7', ['8'] = '8', ['9'] = '9', ['a'] = 'a', ['b'] = 'b',
	    ['c'] = 'c', ['d'] = 'd', ['e'] = 'e', ['f'] = 'f', ['A'] = 'a', ['B'] = 'b',
	    ['C'] = 'c', ['D'] = 'd', ['E'] = 'e', ['F'] = 'f'};
	int bad = 0;
	for (size_t i = 0; i < 64; i++) {
		out[i] = digit[(unsigned char)v[i]];
		bad |= !out[i];
	}
	out[64] = '\0';
	for (size_t i = 0; bad && i < 64; i++)
		if (!out[i]) {
			out[0] = '\0';
			return ow_err(OW_EPARSE, "#sha256 has a non-hex character '%c'", v[i]);
		}
	return 0;
}

/* One "name=value" item of the fragment; *seen counts sha256 items. */
static int fragment_item(const char *p, size_t n, char out[65], int *seen)
{
	const char *eq = memchr(p, '=', n);
	size_t nl = eq ? (size_t)(eq - p) : n;
	if (nl != 6 || strncasecmp(p, "sha256", 6))
		return 0;
	if (++*seen > 1)
		return ow_err(OW_EPARSE, "#sha256 given twice");
	if (!eq)
		return ow_err(OW_EPARSE, "#sha256 without a value");
	return hex64(eq + 1, n - nl - 1, out);
}

int ow_url_fragment_sha256(const char *href, char out[65])
{
	const char *f = strchr(href, '#');
	int seen = 0;
	out[0] = '\0';
	if (!f)
		return 0;
	if (strchr(++f, '#'))
		return ow_err(OW_EPARSE, "two '#' fragments (a second #sha256?)");
	while (*f) {
		size_t n = strcspn(f, "&");
		int rc = fragment_item(f, n, out, &seen);
		if (rc) {
			out[0] = '\0';
			return rc;
		}
		f += n + (f[n] == '&');
	}
	return 0;
}

/* --- messages ------------------------------------------------------------ */

void ow_url_userinfo_span(const char *s, size_t *start, size_t *len)
{
	const char *sep = strstr(s, "://");
	*start = *len = 0;
	if (!sep)
		return;
	const char *a = sep + 3;
	size_t auth = strcspn(a, "/?#");
	const char *at = memrchr(a, '@', auth);
	if (at) {
		*start = (size_t)(a - s);
		*len = (size_t)(at - a);
	}
}

static void printable(const char *s, char *buf, size_t bufsz)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;
	if (bufsz < 8) {
		if (bufsz)
			buf[0] = '\0';
		return;
	}
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (o + 8 >= bufsz) {
			memcpy(buf + (o < bufsz - 4 ? o : bufsz - 4), "...", 4);
			return;
		}
		if (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\') {
			buf[o++] = (char)*p;
			continue;
		}
		buf[o++] = '\\';
		buf[o++] = 'x';
		buf[o++] = hex[*p >> 4];
		buf[o++] = hex[*p & 15];
	}
	buf[o] = '\0';
}

void ow_url_printable(const char *s, char *buf, size_t bufsz)
{
	size_t ui_start, ui_len;
	ow_url_userinfo_span(s, &ui_start, &ui_len);
	char *copy = ui_start ? malloc(strlen(s) + 4) : NULL;
	if (!copy) { /* out of memory, a URL with userinfo is not shown at all */
		printable(ui_start ? "***" : s, buf, bufsz);
		return;
	}
	/* the credentials replaced by three stars */
	memcpy(copy, s, ui_start);
	memcpy(copy + ui_start, "***", 3);
	memcpy(copy + ui_start + 3, s + ui_start + ui_len, strlen(s + ui_start + ui_len) + 1);
	printable(copy, buf, bufsz);
	free(copy);
}
