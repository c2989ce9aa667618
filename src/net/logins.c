/* logins.c - credentials for index hosts: URL userinfo and netrc
 * (offwheel/logins.h). */
#include "offwheel/logins.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "array.h"
#include "bytes.h"
#include "event.h"
#include "fsbeneath.h"
#include "netrc.h"
#include "offwheel/error.h"
#include "offwheel/str.h"
#include "url.h"
#include "urlint.h"

/* Where a login may go: one scheme, host and port (the default port when
 * the URL names none). */
struct origin {
	char *scheme, *host;
	int port;
};

struct url_login {
	struct origin at;
	char *user;
	char *password; /* NULL: the userinfo had no ':' */
};

struct ow_logins {
	struct url_login *v;
	size_t n;
	struct origin *roots; /* the index hosts: netrc's `default` goes there only */
	size_t nroots;
	struct ow_netrc netrc;
	char *netrc_name;
};

int ow_logins_new(ow_logins **out)
{
	*out = calloc(1, sizeof **out);
	return *out ? 0 : ow_err(OW_ENOMEM, "logins: out of memory");
}

static void wipe_free(char *s)
{
	if (s)
		explicit_bzero(s, strlen(s));
	free(s);
}

static void origin_dispose(struct origin *o)
{
	free(o->scheme);
	free(o->host);
	o->scheme = o->host = NULL;
}

void ow_logins_free(ow_logins *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		origin_dispose(&l->v[i].at);
		wipe_free(l->v[i].user);
		wipe_free(l->v[i].password);
	}
	for (size_t i = 0; i < l->nroots; i++)
		origin_dispose(&l->roots[i]);
	free(l->v);
	free(l->roots);
	ow_netrc_dispose(&l->netrc);
	free(l->netrc_name);
	free(l);
}

/* The origin of an http(s) URL: 1 with *o filled (owned), 0 for another
 * scheme or a URL that does not parse, < 0 out of memory. */
static int origin_of(const char *url, struct origin *o)
{
	struct ow_url u;
	memset(o, 0, sizeof *o);
	if (ow_url_parse(url, &u))
		return 0;
	bool web = !strcmp(u.scheme, "https") || !strcmp(u.scheme, "http");
	if (web) {
		o->port = u.port >= 0 ? u.port : !strcmp(u.scheme, "https") ? 443 : 80;
		o->scheme = u.scheme;
		o->host = u.host;
		u.scheme = u.host = NULL;
	}
	ow_url_clear(&u);
	return web;
}

static bool same_origin(const struct origin *a, const struct origin *b)
{
	return a->port == b->port && !strcmp(a->scheme, b->scheme) && !strcmp(a->host, b->host);
}

/* Percent-decoding as Python's urllib.parse.unquote (pip's): %XX with two
 * hex digits is the byte, anything else stays as written; %00 is refused
 * (no header can carry it).  *out malloc'd. */
static int unquote(const char *s, size_t n, char **out)
{
	char *d = malloc(n + 1);
	size_t k = 0;
	if (!d)
		return ow_err(OW_ENOMEM, "logins: out of memory");
	for (size_t i = 0; i < n; i++) {
		int hi = s[i] == '%' && i + 2 < n ? ow_hexval((unsigned char)s[i + 1]) : -1;
		int lo = hi >= 0 ? ow_hexval((unsigned char)s[i + 2]) : -1;
		if (lo >= 0) {
			d[k] = (char)(hi * 16 + lo);
			i += 2;
		} else {
			d[k] = s[i];
		}
		if (!d[k++]) {
			wipe_free(d);
			return ow_err(OW_EINVAL, "%%00 in the userinfo decodes to a NUL byte, which no "
			                         "login can hold");
		}
	}
	d[k] = '\0';
	*out = d;
	return 0;
}

static int add_root(ow_logins *l, const char *url)
{
	struct origin o;
	int rc = origin_of(url, &o);
	for (size_t i = 0; rc == 1 && i < l->nroots; i++)
		if (same_origin(&l->roots[i], &o)) {
			origin_dispose(&o);
			return 0;
		}
	if (rc != 1)
		return rc;
	struct origin *g = ow_array_more(l->roots, l->nroots, sizeof *g);
	if (!g) {
		origin_dispose(&o);
		return ow_err(OW_ENOMEM, "logins: out of memory");
	}
	l->roots = g;
	g[l->nroots++] = o;
	return 0;
}

static struct url_login *url_login_at(const ow_logins *l, const struct origin *o)
{
	for (size_t i = 0; i < l->n; i++)
		if (same_origin(&l->v[i].at, o))
			return &l->v[i];
	return NULL;
}

/* Keep USER[:PASSWORD] (still percent-encoded) for the origin of `url`. */
static int keep_userinfo(ow_logins *l, const char *url, const char *ui, size_t n)
{
	struct url_login k = {0};
	const char *colon = memchr(ui, ':', n);
	size_t un = colon ? (size_t)(colon - ui) : n;
	int rc = origin_of(url, &k.at);
	if (rc != 1)
		return rc; /* not http(s): nothing would send it */
	if (!(rc = unquote(ui, un, &k.user)) && colon)
		rc = unquote(colon + 1, n - un - 1, &k.password);
	struct url_login *have = rc ? NULL : url_login_at(l, &k.at);
	struct url_login *g = rc || have ? NULL : ow_array_more(l->v, l->n, sizeof *g);
	if (!rc && !have && !g)
		rc = ow_err(OW_ENOMEM, "logins: out of memory");
	if (!rc && have && !have->password && k.password) { /* a password wins over none */
		struct url_login old = *have;
		*have = k;
		k = old;
	} else if (!rc && g) {
		l->v = g;
		g[l->n++] = k;
		return 0;
	}
	origin_dispose(&k.at);
	wipe_free(k.user);
	wipe_free(k.password);
	return rc;
}

int ow_logins_take_url(ow_logins *l, const char *url, char **out)
{
	size_t start, len;
	ow_url_userinfo_span(url, &start, &len);
	struct ow_str b = {0};
	ow_str_put(&b, url, start);
	ow_str_puts(&b, url + start + len + (start ? 1 : 0));
	char *bare = NULL;
	int rc = ow_str_take(&b, &bare);
	if (!rc && start && l)
		rc = keep_userinfo(l, bare, url + start, len);
	if (!rc && l)
		rc = add_root(l, bare);
	if (rc) {
		char shown[320];
		free(bare);
		ow_url_printable(url, shown, sizeof shown);
		return ow_err_prefix(rc, "%s: ", shown);
	}
	*out = bare;
	return 0;
}

/* The netrc's path: *path malloc'd, NULL when there is none to read; how
 * messages name it in l->netrc_name. */
static int netrc_path(ow_logins *l, const char *given, char **path)
{
	const char *env = getenv("NETRC"), *home = getenv("HOME");
	char *name = NULL;
	*path = NULL;
	if (given && *given) {
		*path = strdup(given);
		name = strdup(given);
	} else if (env && *env) {
		*path = strdup(env);
		name = ow_aprintf("$NETRC (%s)", env);
	} else if (home && *home) {
		*path = ow_aprintf("%s/.netrc", home);
		name = strdup("~/.netrc");
	} else {
		return 0;
	}
	free(l->netrc_name);
	l->netrc_name = name;
	if (*path && name)
		return 0;
	free(*path);
	*path = NULL;
	return ow_err(OW_ENOMEM, "logins: out of memory");
}

int ow_logins_read_netrc(ow_logins *l, const char *given)
{
	char *path = NULL, *text = NULL;
	size_t len = 0;
	int fd = -1, rc = netrc_path(l, given, &path);
	if (rc || !path)
		return rc;
	struct stat st;
	rc = ow_open_regular(path, &fd, &st);
	if (!rc)
		rc = ow_read_fd_small(fd, path, OW_NETRC_MAX_BYTES, &text, &len);
	if (fd >= 0)
		close(fd);
	if (!rc) {
		ow_netrc_dispose(&l->netrc);
		rc = ow_netrc_parse(text, len, &l->netrc);
		if (rc)
			ow_err_prefix(rc, "%s: ", path);
	}
	if (rc && rc != OW_ENOENT && rc != OW_ENOMEM)
		ow_log(OW_LOG_WARN, "%s — its logins are not used; fix it, or point $NETRC at another "
		                    "file", ow_err_detail());
	if (text)
		explicit_bzero(text, len);
	free(text);
	free(path);
	return rc == OW_ENOMEM ? rc : 0;
}

const char *ow_logins_netrc_name(const ow_logins *l)
{
	return l && l->netrc_name ? l->netrc_name : "~/.netrc";
}

static bool is_root(const ow_logins *l, const struct origin *o)
{
	for (size_t i = 0; i < l->nroots; i++)
		if (same_origin(&l->roots[i], o))
			return true;
	return false;
}

int ow_logins_find(const ow_logins *l, const char *url, struct ow_login *out)
{
	struct origin o;
	if (!l || origin_of(url, &o) != 1)
		return 0;
	const struct url_login *u = url_login_at(l, &o);
	const struct ow_netrc_entry *e = ow_netrc_find(&l->netrc, o.host, is_root(l, &o));
	origin_dispose(&o);
	if (u && u->password)
		*out = (struct ow_login){u->user, u->password, OW_LOGIN_URL};
	else if (e)
		*out = (struct ow_login){e->login, e->password, OW_LOGIN_NETRC};
	else if (u)
		*out = (struct ow_login){u->user, "", OW_LOGIN_URL};
	else
		return 0;
	return 1;
}
