/* urlpolicy.c - which links an index page may contain (the list:
 * docs/index-quirks.md). Every refusal names the href and the reason. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "array.h"
#include "offwheel/error.h"
#include "offwheel/str.h"
#include "url.h"
#include "urlint.h"

static const char *const default_hosts[] = {
    "download.pytorch.org", "download-r2.pytorch.org", "files.pythonhosted.org", "pypi.org",
    "pypi.nvidia.com",
};

/* --- the host lists ------------------------------------------------------ */

/* Normalize "Host[:port]" to "host" or "host:port" (malloc'd). */
static int normalize_host(const char *spec, char **out)
{
	char buf[600];
	struct ow_url u;
	if (strlen(spec) > 512 ||
	    (size_t)snprintf(buf, sizeof buf, "https://%s/", spec) >= sizeof buf)
		return ow_err(OW_EINVAL, "host \"%.40s...\": too long", spec);
	int rc = ow_url_parse(buf, &u);
	if (!rc && (u.userinfo || strcmp(u.path, "/") || u.query || u.fragment))
		rc = ow_err(OW_EINVAL, "not a plain host[:port]");
	if (rc) {
		ow_url_clear(&u);
		return ow_err_prefix(OW_EINVAL, "host \"%s\": ", spec);
	}
	struct ow_str b = {0};
	ow_str_puts(&b, u.host);
	if (u.port >= 0) {
		snprintf(buf, sizeof buf, ":%d", u.port);
		ow_str_puts(&b, buf);
	}
	ow_url_clear(&u);
	return ow_str_take(&b, out);
}

static int list_add(char ***list, size_t *n, const char *spec)
{
	char *h = NULL;
	int rc = normalize_host(spec, &h);
	if (rc)
		return rc;
	char **l = ow_array_more(*list, *n, sizeof *l);
	if (!l) {
		free(h);
		return ow_err(OW_ENOMEM, "url policy: out of memory");
	}
	l[(*n)++] = h;
	*list = l;
	return 0;
}

int ow_url_policy_add_host(struct ow_url_policy *p, const char *host)
{
	return list_add(&p->hosts, &p->nhosts, host);
}

int ow_url_policy_add_trusted(struct ow_url_policy *p, const char *host)
{
	return list_add(&p->trusted, &p->ntrusted, host);
}

int ow_url_policy_init(struct ow_url_policy *p)
{
	memset(p, 0, sizeof *p);
	for (size_t i = 0; i < sizeof default_hosts / sizeof default_hosts[0]; i++) {
		int rc = ow_url_policy_add_host(p, default_hosts[i]);
		if (rc) {
			ow_url_policy_clear(p);
			return rc;
		}
	}
	return 0;
}

/* --- the local index roots ---------------------------------------------- */

/* A root is kept without its trailing '/' ("/" itself becomes ""). */
static int roots_add(struct ow_url_policy *p, const char *path)
{
	size_t n = strlen(path);
	while (n && path[n - 1] == '/')
		n--;
	char *r = strndup(path, n);
	char **l = r ? ow_array_more(p->file_roots, p->nfile_roots, sizeof *l) : NULL;
	if (!l) {
		free(r);
		return ow_err(OW_ENOMEM, "url policy: out of memory");
	}
	l[p->nfile_roots++] = r;
	p->file_roots = l;
	return 0;
}

/* DIR/simple -> DIR: a PEP 503 "simple" folder has its files beside it
 * (DIR/wheels of an export, DIR/packages of a bandersnatch mirror). */
static void drop_simple(char *path)
{
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		path[--n] = '\0';
	char *slash = strrchr(path, '/');
	if (slash && !strcmp(slash + 1, "simple"))
		slash[slash == path] = '\0';
}

int ow_url_policy_add_file_root(struct ow_url_policy *p, const char *root_url)
{
	char *path = NULL, real[PATH_MAX];
	int rc = ow_url_file_path(root_url, &path);
	if (rc)
		return ow_err_prefix(OW_EINVAL, "local index root \"%.300s\": ", root_url);
	drop_simple(path);
	rc = roots_add(p, path);
	/* the root as the files are opened: through its symlinks */
	if (!rc && realpath(path, real) && strcmp(real, path))
		rc = roots_add(p, real);
	free(path);
	return rc;
}

static int below_root(const char *root, const char *path)
{
	size_t n = strlen(root);
	return !strncmp(path, root, n) && (path[n] == '/' || path[n] == '\0');
}

/* The decoded path of a file: URL (already free of "." segments, encoded
 * '/' and control bytes: check_path) below one of the roots. */
static int check_file_root(const struct ow_url_policy *pol, const char *path)
{
	char *d = NULL, q[320];
	int inside = pol->allow_file_outside_root;
	if (inside)
		return 0;
	int rc = ow_url_percent_decode(path, strlen(path), &d);
	if (rc)
		return rc;
	for (size_t i = 0; i < pol->nfile_roots && !inside; i++)
		inside = below_root(pol->file_roots[i], d);
	ow_url_printable(d, q, sizeof q);
	if (!inside && !pol->nfile_roots)
		rc = ow_err(OW_EPOLICY,
		            "file: path \"%s\": no local index root is known to check it "
		            "against",
		            q);
	else if (!inside)
		rc = ow_err(OW_EPOLICY,
		            "file: path \"%s\" lies outside the index root \"%s/\" (pass "
		            "--allow-file-outside-root to follow links out of a local index)",
		            q, pol->file_roots[0]);
	free(d);
	return rc;
}

static void list_free(char **l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(l[i]);
	free(l);
}

void ow_url_policy_clear(struct ow_url_policy *p)
{
	if (!p)
		return;
	list_free(p->hosts, p->nhosts);
	list_free(p->trusted, p->ntrusted);
	list_free(p->file_roots, p->nfile_roots);
	memset(p, 0, sizeof *p);
}

static int is_web(const char *scheme)
{
	return !strcmp(scheme, "http") || !strcmp(scheme, "https");
}

static int effective_port(const struct ow_url *u)
{
	if (u->port >= 0)
		return u->port;
	return strcmp(u->scheme, "https") ? 80 : 443;
}

/* "host" matches any port, "host:port" only that port. */
static int entry_matches(const char *e, const struct ow_url *u)
{
	const char *after = e[0] == '[' ? strchr(e, ']') : e;
	const char *colon = after ? strchr(after, ':') : NULL;
	size_t hl = colon ? (size_t)(colon - e) : strlen(e);
	if (strlen(u->host) != hl || memcmp(e, u->host, hl))
		return 0;
	return !colon || strtol(colon + 1, NULL, 10) == effective_port(u);
}

static int in_list(char *const *l, size_t n, const struct ow_url *u)
{
	for (size_t i = 0; i < n; i++)
		if (entry_matches(l[i], u))
			return 1;
	return 0;
}

static int is_trusted(const struct ow_url_policy *p, const struct ow_url *u)
{
	return in_list(p->trusted, p->ntrusted, u);
}

static int is_allowed(const struct ow_url_policy *p, const struct ow_url *u)
{
	return in_list(p->hosts, p->nhosts, u) || is_trusted(p, u);
}

/* --- raw href checks ----------------------------------------------------- */

/* The bytes a link may hold as they are: printable ASCII but space and
 * backslash.  A page carries thousands of links, so the common case is a
 * tight scan; the first other byte is named below. */
static int plain_byte(unsigned char c)
{
	return c > ' ' && c < 0x7f && c != '\\';
}

static int check_chars(const char *href)
{
	const unsigned char *q = (const unsigned char *)href;
	while (plain_byte(*q))
		q++;
	if (!*q)
		return 0;
	for (const unsigned char *p = q; *p; p++) {
		if (*p == '\r' || *p == '\n')
			return ow_err(OW_EPOLICY, "contains a CR/LF control character");
		if (*p < 0x20 || *p == 0x7f)
			return ow_err(OW_EPOLICY, "contains a control character \\x%02x", *p);
		if (*p == ' ')
			return ow_err(OW_EPOLICY, "contains a space (not a valid URL)");
		if (*p >= 0x80)
			return ow_err(OW_EPOLICY, "contains a non-ASCII byte (not a valid URL)");
		if (*p == '\\')
			return ow_err(OW_EPOLICY, "contains a backslash");
	}
	return 0;
}

static int check_escapes(const char *href)
{
	for (const char *p = strchr(href, '%'); p; p = strchr(p + 1, '%')) {
		int hi = ow_hexval((unsigned char)p[1]);
		int lo = hi >= 0 ? ow_hexval((unsigned char)p[2]) : -1;
		if (lo < 0)
			return ow_err(OW_EPARSE, "malformed percent-escape \"%.3s\"", p);
		if (hi == 0 && lo == 0)
			return ow_err(OW_EPOLICY, "contains %%00 (an encoded NUL byte)");
		if (hi == 2 && lo == 5 && ow_hexval((unsigned char)p[3]) >= 0 &&
		    ow_hexval((unsigned char)p[4]) >= 0)
			return ow_err(OW_EPOLICY,
			              "double-encoded escape \"%.5s\" (%%25 followed by "
			              "hex digits)",
			              p);
	}
	return 0;
}

static int check_scheme(const char *href)
{
	size_t n = ow_url_scheme_len(href);
	if (n == 0)
		return 0;
	if ((n == 5 && !strncasecmp(href, "https", 5)) ||
	    (n == 4 && !strncasecmp(href, "http", 4)) || (n == 4 && !strncasecmp(href, "file", 4)))
		return 0;
	return ow_err(OW_EPOLICY,
	              "scheme \"%.*s:\" is not allowed in index links (only https; http for "
	              "--trusted-host hosts; file for file:// indexes)",
	              (int)(n > 20 ? 20 : n), href);
}

static int is_dot_piece(const char *s, size_t n)
{
	return (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.');
}

/* A decoded path segment: no '.'/'..' pieces, no '/', '\\' or controls. */
static int check_decoded_segment(const char *d, size_t len)
{
	for (size_t i = 0; i < len;) {
		size_t n = strcspn(d + i, "/");
		if (is_dot_piece(d + i, n))
			return ow_err(OW_EPOLICY,
			              "path traversal: a \"%.*s\" segment after "
			              "percent-decoding",
			              (int)n, d + i);
		i += n + 1;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)d[i];
		if (c == '/')
			return ow_err(OW_EPOLICY, "encoded '/' (%%2F) inside a path segment");
		if (c == '\\')
			return ow_err(OW_EPOLICY, "encoded backslash (%%5C) in the path");
		if (c < 0x20 || c == 0x7f)
			return ow_err(OW_EPOLICY, "encoded control character in the path");
	}
	return 0;
}

static int check_segment(const char *p, size_t n)
{
	if (!memchr(p, '%', n)) /* decodes to itself: checked in place */
		return check_decoded_segment(p, n);
	char small[256];
	char *d = n < sizeof small ? small : malloc(n + 1);
	size_t len = 0;
	if (!d)
		return ow_err(OW_ENOMEM, "url: out of memory");
	int rc = ow_url_decode_into(p, n, d, &len);
	if (!rc)
		rc = check_decoded_segment(d, len);
	if (d != small)
		free(d);
	return rc;
}

static int check_path(const char *path)
{
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, "/");
		int rc = n ? check_segment(p, n) : 0;
		if (rc)
			return rc;
		p += n + (p[n] == '/');
	}
	return 0;
}

/* The href as text: length, characters, escapes, scheme. */
static int check_text(const struct ow_url_policy *pol, const char *href)
{
	size_t max = pol->max_len ? pol->max_len : OW_URL_MAX_LEN;
	size_t n = strnlen(href, max + 1);
	if (n > max)
		return ow_err(OW_ETOOBIG, "longer than %zu bytes", max);
	if (n == 0)
		return ow_err(OW_EPARSE, "empty href");
	int rc = check_chars(href);
	if (!rc)
		rc = check_escapes(href);
	return rc ? rc : check_scheme(href);
}

/* The reference as written: its path is judged only once resolved (pip
 * reads "../../packages/x.whl" against the page, and so do we). */
static int check_ref(const struct ow_url *r)
{
	if (r->userinfo)
		return ow_err(OW_EPOLICY, "has userinfo (user@host); credentials in index links "
		                          "are refused");
	return 0;
}

/* --- the resolved target ------------------------------------------------- */

static int check_file_target(const struct ow_url *page, const struct ow_url *t)
{
	if (strcmp(page->scheme, "file"))
		return ow_err(OW_EPOLICY, "file: link from a non-file index (only a file:// index "
		                          "may link to local files)");
	if (t->host && t->host[0] && strcmp(t->host, "localhost"))
		return ow_err(OW_EPOLICY, "file: URL with a remote host \"%s\"", t->host);
	return 0;
}

static int check_web_target(const struct ow_url_policy *pol, const struct ow_url *page,
                            const struct ow_url *t, const char *href)
{
	if (!t->host || !t->host[0])
		return ow_err(OW_EPARSE, "%s link without a host", t->scheme);
	if (href[0] == '/' && href[1] == '/' && strcmp(t->host, page->host ? page->host : ""))
		return ow_err(OW_EPOLICY,
		              "scheme-relative link (//host/...) to a foreign host \"%s\"",
		              t->host);
	if (!is_allowed(pol, t))
		return ow_err(OW_EPOLICY, "host \"%s\" is not an allowed download host", t->host);
	if (!strcmp(t->scheme, "http") && !is_trusted(pol, t))
		return ow_err(OW_EPOLICY,
		              "plain http link%s refused: https is required (pass "
		              "--trusted-host %s to allow http from it)",
		              strcmp(page->scheme, "https") ? "" : " from an https index", t->host);
	return 0;
}

static int check_target(const struct ow_url_policy *pol, const struct ow_url *page,
                        const struct ow_url *t, const char *href)
{
	int rc;
	if (t->userinfo)
		return ow_err(OW_EPOLICY, "has userinfo (user@host); credentials in index links "
		                          "are refused");
	if (!strcmp(t->scheme, "file"))
		rc = check_file_target(page, t);
	else if (is_web(t->scheme))
		rc = check_web_target(pol, page, t, href);
	else
		rc = ow_err(OW_EPOLICY, "scheme \"%s:\" is not allowed in index links", t->scheme);
	if (!rc)
		rc = check_path(t->path);
	return rc || strcmp(t->scheme, "file") ? rc : check_file_root(pol, t->path);
}

static int check_parsed(const struct ow_url_policy *pol, const struct ow_url *page,
                        const char *href, char **out)
{
	struct ow_url r, t;
	int rc = ow_url_parse_ref(href, &r);
	if (rc)
		return rc;
	rc = check_ref(&r);
	free(r.fragment); /* the result is the URL without it: never copied */
	r.fragment = NULL;
	if (!rc)
		rc = ow_url_resolve_refs(page, &r, &t);
	ow_url_clear(&r);
	if (rc)
		return rc;
	rc = check_target(pol, page, &t, href);
	if (!rc)
		rc = ow_url_format(&t, out);
	ow_url_clear(&t);
	return rc;
}

int ow_url_check_at(const struct ow_url_policy *pol, const struct ow_url *page, const char *href,
                    char **out)
{
	char q[320];
	int rc = check_text(pol, href);
	if (!rc)
		rc = check_parsed(pol, page, href, out);
	if (rc) {
		ow_url_printable(href, q, sizeof q);
		return ow_err_prefix(rc, "href \"%s\": ", q);
	}
	return 0;
}

int ow_url_check(const struct ow_url_policy *pol, const char *page_url, const char *href,
                 char **out)
{
	struct ow_url page;
	int rc = ow_url_parse(page_url, &page);
	if (rc)
		return ow_err_prefix(OW_EINVAL, "page URL: ");
	rc = ow_url_check_at(pol, &page, href, out);
	ow_url_clear(&page);
	return rc;
}

/* --- the page itself ----------------------------------------------------- */

static int check_page_parsed(const struct ow_url_policy *pol, const struct ow_url *u)
{
	if (u->userinfo)
		return ow_err(OW_EPOLICY, "has userinfo (user@host): a login is given with the index "
		                          "URL (--index-url https://USER:PASS@host/...) or in ~/.netrc, "
		                          "and kept out of every other URL");
	if (!strcmp(u->scheme, "file") && !pol->allow_file)
		return ow_err(OW_EPOLICY, "file:// indexes are not allowed here");
	if (!strcmp(u->scheme, "file")) {
		int rc = check_path(u->path);
		return rc || !pol->nfile_roots ? rc : check_file_root(pol, u->path);
	}
	if (!is_web(u->scheme))
		return ow_err(OW_EPOLICY, "scheme \"%s:\" is not supported", u->scheme);
	if (!is_allowed(pol, u))
		return ow_err(OW_EPOLICY, "host \"%s\" is not an allowed index host", u->host);
	if (!strcmp(u->scheme, "http") && !is_trusted(pol, u))
		return ow_err(OW_EPOLICY,
		              "plain http refused: https is required (pass "
		              "--trusted-host %s to allow http from it)",
		              u->host);
	return 0;
}

int ow_url_check_page(const struct ow_url_policy *pol, const char *page_url)
{
	struct ow_url u;
	char q[320];
	int rc = check_chars(page_url);
	if (!rc)
		rc = ow_url_parse(page_url, &u);
	if (!rc) {
		rc = check_page_parsed(pol, &u);
		ow_url_clear(&u);
	}
	if (rc) {
		ow_url_printable(page_url, q, sizeof q);
		return ow_err_prefix(rc, "index page URL \"%s\": ", q);
	}
	return 0;
}

/* --- rejected links, counted for the reports ------------------------------- */

void ow_link_refusals_add(struct ow_link_refusals *r, const char *page, const char *reason)
{
	if (r->n < OW_REFUSALS_KEPT)
		r->first[r->n] = ow_aprintf("%s: %s", page, reason);
	r->n++;
}

void ow_link_refusals_merge(struct ow_link_refusals *r, const struct ow_link_refusals *more)
{
	size_t kept = more->n < OW_REFUSALS_KEPT ? more->n : OW_REFUSALS_KEPT, copied = 0;
	for (; copied < kept && r->n < OW_REFUSALS_KEPT; copied++) {
		const char *reason = more->first[copied];
		r->first[r->n++] = reason ? strdup(reason) : NULL;
	}
	r->n += more->n - copied;
}

void ow_link_refusals_dispose(struct ow_link_refusals *r)
{
	for (size_t i = 0; i < OW_REFUSALS_KEPT; i++)
		free(r->first[i]);
	memset(r, 0, sizeof *r);
}
