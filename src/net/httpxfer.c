/* httpxfer.c - a transfer's decision and its detail message, and the
 * checks every hop's URL passes (httpint.h). */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "offwheel/error.h"
#include "httpint.h"
#include "url.h"
#include "urlint.h"

/* ---- small helpers ------------------------------------------------------ */

void hx_copy_str(char *dst, size_t n, const char *src)
{
	size_t l = strnlen(src, n - 1);
	memcpy(dst, src, l);
	dst[l] = '\0';
}

const char *hx_label(const struct xfer *x)
{
	return x->req->what ? x->req->what : x->req->url;
}

/* The most of a URL that a detail shows: the rest of detail[1024] is left
 * for the cause (a longer URL is shown with "..." after its head). */
#define DETAIL_URL_MAX 600

/* Put `text` into the request's detail whole, or its start and end around a
 * mark of what was left out (ow_err_fit): the cause and the advice at the
 * end of a message survive.  NULL (out of memory) leaves `fallback`. */
static void set_detail(struct xfer *x, const char *text, const char *fallback)
{
	ow_err_fit(x->req->res.detail, sizeof x->req->res.detail, text ? text : fallback);
}

/* Decide the current attempt: verdict, code, detail "GET <url>: <msg>". */
void hx_decide(struct xfer *x, enum verdict v, int rc, const char *fmt, ...)
{
	size_t ul = strnlen(x->url, DETAIL_URL_MAX + 1);
	char *msg = NULL, *full = NULL;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (msg && asprintf(&full, "GET %.*s%s: %s", (int)(ul > DETAIL_URL_MAX ? DETAIL_URL_MAX : ul),
	                    x->url, ul > DETAIL_URL_MAX ? "..." : "", msg) < 0)
		full = NULL;
	set_detail(x, full, "out of memory");
	free(full);
	free(msg);
	x->v = v;
	x->rc = rc;
	x->delay_ms = -1;
}

void hx_append_detail(struct xfer *x, const char *fmt, ...)
{
	char *more = NULL, *full = NULL;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&more, fmt, ap) < 0)
		more = NULL;
	va_end(ap);
	if (more && asprintf(&full, "%s%s", x->req->res.detail, more) < 0)
		full = NULL;
	if (full) /* out of memory: the detail stays as it was */
		set_detail(x, full, "");
	free(full);
	free(more);
}

/* ---- URL checks ------------------------------------------------------------ */

static int url_part(const char *url, CURLUPart part, char *out, size_t n)
{
	CURLU *u = curl_url();
	char *p = NULL;
	int ok = u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	         curl_url_get(u, part, &p, 0) == CURLUE_OK;
	if (ok)
		hx_copy_str(out, n, p);
	curl_free(p);
	curl_url_cleanup(u);
	return ok ? 0 : -1;
}

static int scheme_allowed(const struct xfer *x, const char *scheme, int redirect)
{
	unsigned fl = x->req->flags;
	if (!strcmp(scheme, "https"))
		return 1;
	if (!strcmp(scheme, "http"))
		return (fl & OW_HTTP_ALLOW_HTTP) && (!redirect || !strncmp(x->url, "http:", 5));
	if (!strcmp(scheme, "file"))
		return (fl & OW_HTTP_ALLOW_FILE) && !redirect;
	return 0;
}

/* 0 when `url` may be fetched next; else decides V_FATAL with a reason. */
int hx_check_hop(struct xfer *x, const char *url, int redirect)
{
	char scheme[16];
	const char *how = redirect ? "redirect to" : "URL";
	size_t len = strlen(url);
	if (len >= sizeof x->url) {
		hx_decide(x, V_FATAL, OW_EPOLICY, "%s %.300s... refused: %zu bytes, longer than the %d "
		       "a URL may be", how, url, len, OW_URL_MAX_LEN);
		return -1;
	}
	if (url_part(url, CURLUPART_SCHEME, scheme, sizeof scheme)) {
		hx_decide(x, V_FATAL, OW_EPOLICY, "%s %.300s refused: malformed URL", how, url);
		return -1;
	}
	if (!scheme_allowed(x, scheme, redirect)) {
		hx_decide(x, V_FATAL, OW_EPOLICY,
		       "%s %.300s refused: scheme %s not allowed (https only; http only for "
		       "--trusted-host, file: only for a local index, never by redirect)",
		       how, url, scheme);
		return -1;
	}
	if (x->h->o.allow_url && x->h->o.allow_url(x->h->o.allow_ud, url)) {
		hx_decide(x, V_FATAL, OW_EPOLICY,
		       "%s %.300s refused: host not allowed by policy (add it to the allowed "
		       "hosts if you trust it)", how, url);
		return -1;
	}
	return 0;
}

void hx_set_url(struct xfer *x, const char *url)
{
	hx_copy_str(x->url, sizeof x->url, url);
	x->is_file = !strncasecmp(url, "file:", 5);
	if (x->is_file || url_part(url, CURLUPART_HOST, x->host, sizeof x->host))
		x->host[0] = '\0';
}
