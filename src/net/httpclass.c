/* httpclass.c - a finished attempt classified (httpint.h): curl's error,
 * the HTTP status, redirects, 304, 416, logins, Retry-After; each ends in
 * a verdict with a detail that says what to do. */
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
#include "bytes.h"
#include "event.h"
#include "url.h"
#include "urlint.h"

/* ---- classification of a finished attempt ----------------------------------- */

static const char *cerr(const struct xfer *x, CURLcode c)
{
	return x->errbuf[0] ? x->errbuf : curl_easy_strerror(c);
}

static void classify_curl(struct xfer *x, CURLcode c)
{
	const struct ow_http_opts *o = &x->h->o;
	if (ow_http_curl_tls_error(c))
		hx_decide(x, V_FATAL, OW_ETLS,
		       "TLS failed: %s — check the host name and the system clock; for a "
		       "private CA pass --cert FILE (or set SSL_CERT_FILE)", cerr(x, c));
	else if (c == CURLE_OPERATION_TIMEDOUT)
		hx_decide(x, V_RETRY, OW_ETIMEOUT,
		       "timed out (%s; stall limit %ld s below %ld B/s) — check the network or "
		       "raise the timeouts", cerr(x, c), o->low_speed_time_s, o->low_speed_bytes);
	else if (ow_http_curl_transient(c))
		hx_decide(x, V_RETRY, OW_ENET, "%s after %llu body bytes — network or server "
		       "trouble", cerr(x, c), (unsigned long long)x->r.got);
	else if ((c == CURLE_OUT_OF_MEMORY || (int)c == 100 /* CURLE_TOO_LARGE */) && !x->r.begun)
		hx_decide(x, V_FATAL, OW_ETOOBIG,
		       "the server sent response headers over libcurl's limit (a header line over "
		       "100 kB, or too many in all) — the server is misbehaving or hostile; try "
		       "another mirror");
	else if (c == CURLE_FILESIZE_EXCEEDED)
		hx_decide(x, V_FATAL, OW_ETOOBIG, "file is larger than the size cap of %llu bytes",
		       (unsigned long long)x->cap);
	else if (c == CURLE_FILE_COULDNT_READ_FILE)
		hx_decide(x, V_FATAL, OW_ENOENT, "%s — check the path of the local index", cerr(x, c));
	else if (c == CURLE_UNSUPPORTED_PROTOCOL)
		hx_decide(x, V_FATAL, OW_EPOLICY, "%s — only https (http for trusted hosts) is allowed",
		       cerr(x, c));
	else if (c == CURLE_COULDNT_RESOLVE_HOST || c == CURLE_COULDNT_RESOLVE_PROXY)
		hx_decide(x, V_FATAL, OW_ENET, "%s — check the URL and that this machine is online",
		       cerr(x, c));
	else
		hx_decide(x, V_FATAL, c == CURLE_WEIRD_SERVER_REPLY ? OW_EHTTP : OW_ENET,
		       "%s (curl error %d)", cerr(x, c), (int)c);
}

/* Retry-After in seconds: -1 absent or unparsable (use own backoff). */
static int64_t retry_after_s(const char *v)
{
	int64_t secs;
	if (ow_http_retry_after(v, &secs) != OW_HTTP_RA_DATE)
		return secs;
	time_t when = curl_getdate(v, NULL);
	if (when == (time_t)-1)
		return -1;
	int64_t d = (int64_t)when - (int64_t)time(NULL);
	return d < 0 ? 0 : d;
}

static void classify_retryable_status(struct xfer *x)
{
	long st = x->r.status;
	int64_t ra = retry_after_s(x->r.retry_after);
	long max = x->h->o.retry_after_max_s;
	if (ra > max) {
		hx_decide(x, V_FATAL, OW_EHTTP,
		       "HTTP %ld with Retry-After '%.60s', more than the %ld s offwheel waits — "
		       "the server is overloaded; try again later", st, x->r.retry_after, max);
		return;
	}
	hx_decide(x, V_RETRY, OW_EHTTP, "HTTP %ld from the server — it is failing or "
	       "overloaded; try again later", st);
	x->delay_ms = ra >= 0 ? (long)ra * 1000 : -1;
}

static int recheck_effective(struct xfer *x)
{
	char *eff = NULL;
	curl_easy_getinfo(x->easy, CURLINFO_EFFECTIVE_URL, &eff);
	hx_copy_str(x->req->res.effective_url, sizeof x->req->res.effective_url, eff ? eff : x->url);
	return x->is_file ? 0 : hx_check_hop(x, x->req->res.effective_url, 0);
}

static void note_validators(struct xfer *x)
{
	struct ow_http_result *res = &x->req->res;
	const char *et = x->r.etag[0] || x->r.status != 304 ? x->r.etag : x->req->if_none_match;
	const char *lm = x->r.lastmod[0] || x->r.status != 304 ? x->r.lastmod
	                                                      : x->req->if_modified_since;
	hx_copy_str(res->etag, sizeof res->etag, et ? et : "");
	hx_copy_str(res->last_modified, sizeof res->last_modified, lm ? lm : "");
}

static void classify_success(struct xfer *x)
{
	uint64_t exp = x->req->expected_size;
	if (hx_begin_body(x))
		return;
	if (x->r.clen >= 0 && x->r.got < (uint64_t)x->r.clen)
		hx_decide(x, V_RETRY, OW_ENET, "short body: %llu of %lld bytes", (unsigned long long)x->r.got,
		       (long long)x->r.clen);
	else if (hx_ranged(x->req) && x->pos < x->rlen)
		hx_decide(x, V_RETRY, OW_ENET, "connection closed after %llu of the range's %llu bytes",
		       (unsigned long long)x->pos, (unsigned long long)x->rlen);
	else if (!hx_ranged(x->req) && exp && x->pos < exp)
		hx_decide(x, V_RETRY, OW_ENET, "connection closed after %llu of %llu bytes",
		       (unsigned long long)x->pos, (unsigned long long)exp);
	else if (!recheck_effective(x)) {
		note_validators(x);
		x->req->res.close_delimited = !x->is_file && x->r.http1 && x->r.clen < 0 &&
		                              !x->r.chunked;
		x->v = V_OK;
	}
}

static void follow_redirect(struct xfer *x, const char *loc)
{
	unsigned max = x->h->o.max_redirects;
	if (x->req->res.redirects >= max) {
		hx_decide(x, V_FATAL, OW_EPOLICY, "more than %u redirects — refusing to follow %.300s",
		       max, loc);
		return;
	}
	if (hx_check_hop(x, loc, 1))
		return;
	uint64_t hv = ow_fnv1a(loc);
	for (unsigned i = 0; i < x->nvisited; i++)
		if (x->visited[i] == hv) {
			hx_decide(x, V_FATAL, OW_EPOLICY, "redirect loop back to %.300s — the server is "
			       "misconfigured", loc);
			return;
		}
	if (x->nvisited < MAX_VISITED)
		x->visited[x->nvisited++] = hv;
	x->req->res.redirects++;
	hx_set_url(x, loc);
	x->v = V_REDIRECT;
}

static void classify_redirect(struct xfer *x)
{
	char *loc = NULL, *bare = NULL;
	size_t ui, n;
	curl_easy_getinfo(x->easy, CURLINFO_REDIRECT_URL, &loc);
	if (!loc) {
		hx_decide(x, V_FATAL, OW_EHTTP, "HTTP %ld without a usable Location", x->r.status);
		return;
	}
	/* libcurl writes the login it sent into the redirect URL it resolves
	 * (user:password@): never kept, shown or sent on from there; the next
	 * hop gets the login that belongs to its own host, if any */
	ow_url_userinfo_span(loc, &ui, &n);
	if (x->login && ui && asprintf(&bare, "%.*s%s", (int)ui, loc, loc + ui + n + 1) < 0)
		bare = NULL;
	if (x->login && ui && !bare)
		hx_decide(x, V_FATAL, OW_ENOMEM, "out of memory");
	else
		follow_redirect(x, bare ? bare : loc);
	free(bare);
}

/* How the current attempt was sent, for ow_http_classify. */
static unsigned sent_as(const struct xfer *x)
{
	return (x->is_file ? OW_HTTP_SENT_FILE : 0) | (x->conditional ? OW_HTTP_SENT_CONDITIONAL : 0) |
	       (hx_ranged(x->req) ? OW_HTTP_SENT_RANGE : 0) | (x->range_from ? OW_HTTP_SENT_RESUME : 0) |
	       (x->login ? OW_HTTP_SENT_LOGIN : 0);
}

static void classify_not_modified(struct xfer *x)
{
	x->req->res.not_modified = 1;
	note_validators(x);
	if (!recheck_effective(x))
		x->v = V_OK;
}

static void classify_416(struct xfer *x, enum ow_http_class k)
{
	char asked[64];
	if (k == OW_HTTP_CLASS_RANGE_MISSING) {
		ow_http_range_text(x->req, asked, sizeof asked);
		hx_decide(x, V_FATAL, OW_EHTTP, "HTTP 416 to Range %s: the file has no such bytes "
		       "(Content-Range '%s') — the index and the file disagree", asked, x->r.crange);
		return;
	}
	hx_decide(x, V_RESTART, OW_EHTTP, "HTTP 416 to Range bytes=%llu- — the file is not "
	       "what was partly downloaded; restarting from zero",
	       (unsigned long long)x->range_from);
	x->no_range = 1;
}

/* 401, or 401/403 to a login: say who asks and where a login is given
 * (docs/logins.md), never "check the network". */
static void classify_auth(struct xfer *x, enum ow_http_class k)
{
	struct ow_url u;
	char where[300] = "the server";
	const char *netrc = ow_logins_netrc_name(x->h->o.logins);
	if (ow_url_parse(x->url, &u) == 0) {
		if (u.port >= 0)
			snprintf(where, sizeof where, "%.255s:%d", u.host, u.port);
		else
			snprintf(where, sizeof where, "%.255s", u.host);
	}
	if (k == OW_HTTP_CLASS_AUTH_REQUIRED)
		hx_decide(x, V_FATAL, OW_EAUTH, "authentication required by %s (HTTP 401): give "
		       "credentials in %s (machine %.255s login USER password PASS) or in the URL "
		       "(%s://USER:PASS@%s/...)", where, netrc, u.host ? u.host : where,
		       u.scheme ? u.scheme : "https", where);
	else
		hx_decide(x, V_FATAL, OW_EAUTH, "credentials refused by %s (HTTP %ld): the login %s "
		       "gives for it was not accepted; check its user and password", where,
		       x->r.status, x->login == OW_LOGIN_URL ? "the URL" : netrc);
	ow_url_clear(&u);
}

static void classify_status(struct xfer *x)
{
	long st = x->r.status;
	enum ow_http_class k = ow_http_classify(st, sent_as(x));
	x->req->res.status = st;
	switch (k) {
	case OW_HTTP_CLASS_SUCCESS: classify_success(x); break;
	case OW_HTTP_CLASS_UNASKED_304:
		hx_decide(x, V_FATAL, OW_EHTTP,
		       "HTTP 304 Not Modified to a request that was not conditional (no If-None-Match "
		       "or If-Modified-Since was sent) — a proxy or captive portal is answering in "
		       "the server's place; check the network, or use another mirror");
		break;
	case OW_HTTP_CLASS_NOT_MODIFIED: classify_not_modified(x); break;
	case OW_HTTP_CLASS_REDIRECT: classify_redirect(x); break;
	case OW_HTTP_CLASS_RANGE_MISSING:
	case OW_HTTP_CLASS_RESUME_REFUSED: classify_416(x, k); break;
	case OW_HTTP_CLASS_NOT_FOUND:
		hx_decide(x, V_FATAL, OW_ENOENT, "not found (HTTP %ld) — check the name and the index "
		       "URL", st);
		break;
	case OW_HTTP_CLASS_AUTH_REQUIRED:
	case OW_HTTP_CLASS_AUTH_REFUSED: classify_auth(x, k); break;
	case OW_HTTP_CLASS_RETRY: classify_retryable_status(x); break;
	default: hx_decide(x, V_FATAL, OW_EHTTP, "unexpected HTTP status %ld", st); break;
	}
}

void hx_classify(struct xfer *x, CURLcode c)
{
	if (x->v != V_NONE)
		return; /* a callback already decided */
	if (c != CURLE_OK && !x->r.discard_cut)
		classify_curl(x, c);
	else
		classify_status(x);
}
