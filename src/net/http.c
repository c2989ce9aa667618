/* http.c - the transfer engine on one curl multi handle (see http.h).
 *
 * Shape after curl's own tool: one multi handle, curl_multi_poll +
 * curl_multi_info_read, per-transfer state through CURLINFO_PRIVATE.  Each
 * attempt gets a fresh easy handle (connections stay cached in the multi);
 * queueing, caps, redirects, retries and resume are ours, so every hop and
 * every response is checked here rather than trusted to libcurl. */
#include "http.h"

#define CURL_DISABLE_TYPECHECK 1 /* its macros would wrap the pointers below */
#include <curl/curl.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "offwheel/error.h"
#include "event.h"
#include "bytes.h"
#include "clock.h"
#include "fsbeneath.h"
#include "fsutil.h"
#include "url.h"

/* ---- libcurl, loaded on first use ---------------------------------------------
 *
 * libcurl on Debian pulls in about 30 shared libraries (gnutls, kerberos,
 * ldap, ssh, rtmp...) whose loading and constructors cost ~3.5 ms at every
 * start (measured: an empty program linked with -lcurl starts in 6.0 ms,
 * 2.4 ms without).  Only the commands that go to the network need it, so the
 * few entry points used here are resolved with dlopen when the first engine
 * is created: offline commands (audit, verify, ls, export, check, smoke)
 * never load it.  OFFWHEEL_LIBCURL names another libcurl (path or soname). */

#ifndef OW_CURL_SONAME
#define OW_CURL_SONAME "libcurl.so.4"
#endif

/* X(name, return type, parameters) for every libcurl function used here */
#define OW_CURL_FUNCS(X)                                                          \
	X(curl_global_init, CURLcode, (long))                                         \
	X(curl_easy_init, CURL *, (void))                                             \
	X(curl_easy_setopt, CURLcode, (CURL *, CURLoption, ...))                      \
	X(curl_easy_getinfo, CURLcode, (CURL *, CURLINFO, ...))                       \
	X(curl_easy_cleanup, void, (CURL *))                                          \
	X(curl_easy_perform, CURLcode, (CURL *))                                      \
	X(curl_easy_reset, void, (CURL *))                                            \
	X(curl_easy_strerror, const char *, (CURLcode))                               \
	X(curl_multi_init, CURLM *, (void))                                           \
	X(curl_multi_setopt, CURLMcode, (CURLM *, CURLMoption, ...))                  \
	X(curl_multi_add_handle, CURLMcode, (CURLM *, CURL *))                        \
	X(curl_multi_remove_handle, CURLMcode, (CURLM *, CURL *))                     \
	X(curl_multi_perform, CURLMcode, (CURLM *, int *))                            \
	X(curl_multi_poll, CURLMcode, (CURLM *, struct curl_waitfd *, unsigned, int, int *)) \
	X(curl_multi_info_read, CURLMsg *, (CURLM *, int *))                          \
	X(curl_multi_cleanup, CURLMcode, (CURLM *))                                   \
	X(curl_slist_append, struct curl_slist *, (struct curl_slist *, const char *)) \
	X(curl_slist_free_all, void, (struct curl_slist *))                           \
	X(curl_url, CURLU *, (void))                                                  \
	X(curl_url_set, CURLUcode, (CURLU *, CURLUPart, const char *, unsigned int))  \
	X(curl_url_get, CURLUcode, (CURLU *, CURLUPart, char **, unsigned int)) \
	X(curl_url_cleanup, void, (CURLU *))                                          \
	X(curl_getdate, time_t, (const char *, const time_t *))                       \
	X(curl_free, void, (void *))

static struct curl_api {
#define OW_CURL_PTR(name, ret, args) ret(*name) args;
	OW_CURL_FUNCS(OW_CURL_PTR)
#undef OW_CURL_PTR
} ow_curl;

static char curl_why[512];
static int curl_ok; /* every entry point resolved */

static const char *curl_lib_name(void)
{
	const char *env = getenv("OFFWHEEL_LIBCURL");
	return env && *env ? env : OW_CURL_SONAME;
}

static void curl_load(void)
{
	void *h = dlopen(curl_lib_name(), RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		snprintf(curl_why, sizeof curl_why, "%s", e ? e : "not found");
		return;
	}
	struct curl_api api;
#define OW_CURL_SYM(name, ret, args)                                                         \
	if (!(*(void **)&api.name = dlsym(h, #name))) {                                          \
		snprintf(curl_why, sizeof curl_why, "it has no %s (libcurl older than 7.80?)", #name); \
		return;                                                                          \
	}
	OW_CURL_FUNCS(OW_CURL_SYM)
#undef OW_CURL_SYM
	ow_curl = api;
	curl_ok = 1;
}

/* 0, or an error naming the library, the cause and what to install. */
static int curl_loaded(void)
{
	if (curl_ok)
		return 0;
	return ow_err(OW_EUNSUPPORTED,
	              "cannot load %s, which offwheel needs for the network: %s — install "
	              "libcurl 7.80 or newer (Debian/Ubuntu: apt-get install libcurl4) or point "
	              "OFFWHEEL_LIBCURL at one; offline commands work without it",
	              curl_lib_name(), curl_why);
}

/* From here on the usual names call through the table (curl.h defines the
 * first three as pass-through macros). */
#undef curl_easy_setopt
#undef curl_easy_getinfo
#undef curl_multi_setopt
#define curl_global_init ow_curl.curl_global_init
#define curl_easy_init ow_curl.curl_easy_init
#define curl_easy_setopt ow_curl.curl_easy_setopt
#define curl_easy_getinfo ow_curl.curl_easy_getinfo
#define curl_easy_cleanup ow_curl.curl_easy_cleanup
#define curl_easy_perform ow_curl.curl_easy_perform
#define curl_easy_reset ow_curl.curl_easy_reset
#define curl_easy_strerror ow_curl.curl_easy_strerror
#define curl_multi_init ow_curl.curl_multi_init
#define curl_multi_setopt ow_curl.curl_multi_setopt
#define curl_multi_add_handle ow_curl.curl_multi_add_handle
#define curl_multi_remove_handle ow_curl.curl_multi_remove_handle
#define curl_multi_perform ow_curl.curl_multi_perform
#define curl_multi_poll ow_curl.curl_multi_poll
#define curl_multi_info_read ow_curl.curl_multi_info_read
#define curl_multi_cleanup ow_curl.curl_multi_cleanup
#define curl_slist_append ow_curl.curl_slist_append
#define curl_slist_free_all ow_curl.curl_slist_free_all
#define curl_url ow_curl.curl_url
#define curl_url_set ow_curl.curl_url_set
#define curl_url_get ow_curl.curl_url_get
#define curl_url_cleanup ow_curl.curl_url_cleanup
#define curl_getdate ow_curl.curl_getdate
#define curl_free ow_curl.curl_free

#define MAX_VISITED 32
#define DISCARD_MAX (1u << 20) /* bytes of an error page we read and drop */
#define PROGRESS_MS 250

enum verdict { V_NONE, V_OK, V_FATAL, V_RETRY, V_RESTART, V_REDIRECT };
enum xstate { X_QUEUED, X_RUNNING, X_DONE };

/* What one response said (reset at each status line). */
struct resp {
	long status;
	int64_t clen; /* -1: absent */
	int clen_bad;
	int begun;     /* body checks done */
	int body_sink; /* body goes to the caller (2xx) */
	int discard_cut;
	int http1;   /* an HTTP/1.x status line */
	int chunked; /* Transfer-Encoding: chunked */
	uint64_t got; /* body bytes of this attempt */
	char crange[128];
	char cenc[64];
	char etag[256];
	char lastmod[64];
	char retry_after[128];
};

struct xfer {
	struct ow_http *h;
	struct ow_http_req *req;
	struct xfer *next;
	enum xstate state;
	CURL *easy;
	struct curl_slist *hdrs;
	char url[2048]; /* current hop */
	char host[256];
	int is_file;
	int hop; /* next start follows a redirect (not an attempt) */
	int64_t started, not_before, last_progress;
	int64_t last_byte; /* when this attempt last received anything */
	int64_t attempt_start;
	int64_t win_start; /* the current rate window began ... */
	uint64_t win_rx;   /* ... with this many bytes of the attempt */
	uint64_t rx;       /* bytes of this attempt, headers and body */
	int conditional;   /* this attempt sent If-None-Match / If-Modified-Since */
	uint64_t pos;        /* offset of the next byte the sink expects */
	uint64_t total;      /* total size learned from responses, 0 unknown */
	uint64_t cap;
	uint64_t reserved;   /* free space promised to this attempt's body */
	uint64_t range_from; /* this attempt's Range start, 0 = none */
	enum ow_http_resume range_basis; /* ... sent with If-Range, or plain */
	uint64_t rlen;       /* a range request: body bytes its 206 announced */
	int no_range;
	char validator[256]; /* for If-Range */
	uint64_t visited[MAX_VISITED];
	unsigned nvisited;
	size_t hdr_bytes;
	unsigned hdr_count;
	struct resp r;
	enum verdict v; /* decision about the current attempt */
	int rc;
	long delay_ms; /* for V_RETRY; -1 = own backoff */
	char errbuf[CURL_ERROR_SIZE];
};

struct ow_http {
	struct ow_http_opts o;
	char *ca_file;
	char *user_agent;
	CURLM *multi;
	struct xfer *head, *tail;
	struct xfer **run; /* o.jobs slots */
	unsigned nrun;
	uint64_t rng;
	volatile sig_atomic_t cancel;
	uint64_t reserved; /* bytes the transfers under way still bring (o.space_dir) */
	int first_rc;
	char first_detail[1024];
};

/* ---- small helpers ------------------------------------------------------ */

static int64_t now_ms(void)
{
	return ow_mono_ms();
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static uint64_t rng_next(struct ow_http *h)
{
	return xorshift(&h->rng);
}

static void copy_str(char *dst, size_t n, const char *src)
{
	size_t l = strnlen(src, n - 1);
	memcpy(dst, src, l);
	dst[l] = '\0';
}

/* A sink's nonzero return as an OW_E* code. */
static int ow_code(int rc)
{
	return rc > OW__ERROR_BASE && rc < OW__ERROR_END ? rc : OW_EIO;
}

/* The request asks for one byte range (req->range_len). */
static int ranged(const struct ow_http_req *q)
{
	return q->range_len > 0;
}

static const char *label(const struct xfer *x)
{
	return x->req->what ? x->req->what : x->req->url;
}

/* Decide the current attempt: verdict, code, detail "GET <url>: <msg>". */
OW_PRINTF(4, 5)
static void decide(struct xfer *x, enum verdict v, int rc, const char *fmt, ...)
{
	char *d = x->req->res.detail;
	size_t n = sizeof x->req->res.detail;
	int k = snprintf(d, n, "GET %s: ", x->url);
	va_list ap;
	va_start(ap, fmt);
	if (k >= 0 && (size_t)k < n)
		vsnprintf(d + k, n - (size_t)k, fmt, ap);
	va_end(ap);
	x->v = v;
	x->rc = rc;
	x->delay_ms = -1;
}

static void append_detail(struct xfer *x, const char *fmt, ...) OW_PRINTF(2, 3);
static void append_detail(struct xfer *x, const char *fmt, ...)
{
	char *d = x->req->res.detail;
	size_t l = strlen(d), n = sizeof x->req->res.detail;
	va_list ap;
	va_start(ap, fmt);
	if (l + 1 < n)
		vsnprintf(d + l, n - l, fmt, ap);
	va_end(ap);
}

/* ---- URL checks ------------------------------------------------------------ */

static int url_part(const char *url, CURLUPart part, char *out, size_t n)
{
	CURLU *u = curl_url();
	char *p = NULL;
	int ok = u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	         curl_url_get(u, part, &p, 0) == CURLUE_OK;
	if (ok)
		copy_str(out, n, p);
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
static int check_hop(struct xfer *x, const char *url, int redirect)
{
	char scheme[16];
	const char *how = redirect ? "redirect to" : "URL";
	if (strlen(url) >= sizeof x->url || url_part(url, CURLUPART_SCHEME, scheme, sizeof scheme)) {
		decide(x, V_FATAL, OW_EPOLICY, "%s %.300s refused: malformed or over-long URL", how, url);
		return -1;
	}
	if (!scheme_allowed(x, scheme, redirect)) {
		decide(x, V_FATAL, OW_EPOLICY,
		       "%s %.300s refused: scheme %s not allowed (https only; http only for "
		       "--trusted-host, file: only for a local index, never by redirect)",
		       how, url, scheme);
		return -1;
	}
	if (x->h->o.allow_url && x->h->o.allow_url(x->h->o.allow_ud, url)) {
		decide(x, V_FATAL, OW_EPOLICY,
		       "%s %.300s refused: host not allowed by policy (add it to the allowed "
		       "hosts if you trust it)", how, url);
		return -1;
	}
	return 0;
}

static void set_url(struct xfer *x, const char *url)
{
	copy_str(x->url, sizeof x->url, url);
	x->is_file = !strncasecmp(url, "file:", 5);
	if (x->is_file || url_part(url, CURLUPART_HOST, x->host, sizeof x->host))
		x->host[0] = '\0';
}

/* ---- response headers ------------------------------------------------------ */

static int64_t parse_clen(const char *v)
{
	if (!*v || strlen(v) > 18 || strspn(v, "0123456789") != strlen(v))
		return -2;
	return (int64_t)strtoll(v, NULL, 10);
}

static void on_clen(struct resp *r, const char *v)
{
	int64_t n = parse_clen(v);
	if (n < 0 || (r->clen >= 0 && r->clen != n))
		r->clen_bad = 1;
	else
		r->clen = n;
}

/* A validator is replayed to the server in a later request: only printable
 * ASCII of a sane length is kept, anything else is dropped (that request
 * will then be unconditional). */
static int validator_ok(const char *v, size_t vl, size_t max)
{
	if (!vl || vl > max)
		return 0;
	for (size_t i = 0; i < vl; i++)
		if ((unsigned char)v[i] < 0x20 || (unsigned char)v[i] > 0x7e)
			return 0;
	return 1;
}

static int is_chunked(const char *v)
{
	size_t n = strlen(v);
	while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	return n >= 7 && !strncasecmp(v + n - 7, "chunked", 7);
}

static void on_header(struct resp *r, const char *name, const char *v)
{
	size_t vl = strlen(v);
	if (!strcasecmp(name, "content-length"))
		on_clen(r, v);
	else if (!strcasecmp(name, "content-range"))
		copy_str(r->crange, sizeof r->crange, v);
	else if (!strcasecmp(name, "content-encoding"))
		copy_str(r->cenc, sizeof r->cenc, v);
	else if (!strcasecmp(name, "transfer-encoding"))
		r->chunked = is_chunked(v);
	else if (!strcasecmp(name, "etag") && validator_ok(v, vl, OW_HTTP_VALIDATOR_MAX))
		copy_str(r->etag, sizeof r->etag, v);
	else if (!strcasecmp(name, "last-modified") && validator_ok(v, vl, sizeof r->lastmod - 1))
		copy_str(r->lastmod, sizeof r->lastmod, v);
	else if (!strcasecmp(name, "retry-after"))
		copy_str(r->retry_after, sizeof r->retry_after, v);
}

/* Split "Name: value\r\n" (trimmed) and hand it to on_header. */
static void parse_header_line(struct resp *r, const char *line, size_t n)
{
	char buf[1024];
	if (n >= sizeof buf)
		return; /* no header we read is that long; the total is capped */
	memcpy(buf, line, n);
	buf[n] = '\0';
	while (n && (buf[n - 1] == '\r' || buf[n - 1] == '\n' || buf[n - 1] == ' ' || buf[n - 1] == '\t'))
		buf[--n] = '\0';
	char *colon = strchr(buf, ':');
	if (!colon)
		return;
	*colon = '\0';
	char *v = colon + 1;
	v += strspn(v, " \t");
	on_header(r, buf, v);
}

static int begin_body(struct xfer *x);

static size_t header_cb(char *p, size_t size, size_t nitems, void *ud)
{
	struct xfer *x = ud;
	size_t n = size * nitems;
	const struct ow_http_opts *o = &x->h->o;
	x->hdr_bytes += n;
	x->rx += n;
	x->last_byte = now_ms();
	if (++x->hdr_count > o->header_max_count || x->hdr_bytes > o->header_max_bytes) {
		decide(x, V_FATAL, OW_ETOOBIG,
		       "response headers exceed %u lines or %zu bytes — the server is "
		       "misbehaving; try another mirror", o->header_max_count, o->header_max_bytes);
		return 0;
	}
	if (n >= 5 && !memcmp(p, "HTTP/", 5)) {
		memset(&x->r, 0, sizeof x->r);
		x->r.clen = -1;
		x->r.http1 = n >= 7 && !memcmp(p, "HTTP/1.", 7);
		const char *sp = memchr(p, ' ', n);
		x->r.status = sp ? strtol(sp + 1, NULL, 10) : 0;
	} else if (n <= 2 && (p[0] == '\r' || p[0] == '\n')) {
		if (x->r.status >= 200 && begin_body(x))
			return 0;
	} else {
		parse_header_line(&x->r, p, n);
	}
	return n;
}

/* ---- body checks ------------------------------------------------------------ */

/* "bytes A-B/T" (T may be "*"): 0 with *a, *t (0 = unknown), or -1. */
static int parse_crange(const char *s, uint64_t *a, uint64_t *t)
{
	unsigned long long first, last;
	char tot[32];
	if (sscanf(s, "bytes %llu-%llu/%31s", &first, &last, tot) != 3 || last < first)
		return -1;
	*a = first;
	*t = 0;
	if (strcmp(tot, "*")) {
		char *end;
		*t = strtoull(tot, &end, 10);
		if (*end || *t <= last)
			return -1;
	}
	return 0;
}

/* A 206 to a request with If-Range must carry what was sent: the same
 * strong ETag (a quoted one), else the same Last-Modified (a date). */
static int same_validator(const struct resp *r, const char *sent)
{
	return *sent == '"' ? !strcmp(r->etag, sent) : !strcmp(r->lastmod, sent);
}

/* A 206: accept only a Content-Range that continues where we are, of the
 * version of the file the If-Range named. */
static int check_partial(struct xfer *x, uint64_t *start)
{
	uint64_t a, t;
	uint64_t want = x->req->expected_size ? x->req->expected_size : x->total;
	if (!x->range_from) {
		decide(x, V_FATAL, OW_EHTTP,
		       "206 Partial Content to a request without Range — the server is broken; "
		       "use another mirror");
		return -1;
	}
	if (parse_crange(x->r.crange, &a, &t) || a != x->range_from || (want && t && t != want)) {
		decide(x, V_RESTART, OW_EHTTP,
		       "206 with Content-Range '%s' does not continue at byte %llu; restarting "
		       "from zero without Range", x->r.crange, (unsigned long long)x->range_from);
		x->no_range = 1;
		return -1;
	}
	if (x->range_basis == OW_HTTP_RESUME_IF_RANGE && !same_validator(&x->r, x->validator)) {
		decide(x, V_RESTART, OW_EHTTP,
		       "206 without the If-Range validator '%s' sent (the server ignored it); "
		       "restarting from zero without Range", x->validator);
		x->no_range = 1;
		return -1;
	}
	*start = a;
	if (t)
		x->total = t;
	return 0;
}

/* "48.0 MB": bytes for a message (powers of 1000, as the CLI prints them). */
static void size_text(uint64_t n, char *buf, size_t cap)
{
	static const char *const units[] = {"B", "kB", "MB", "GB", "TB"};
	double v = (double)n;
	int u = 0;
	while (v >= 1000 && u < 4)
		v /= 1000, u++;
	snprintf(buf, cap, u ? "%.1f %s" : "%.0f %s", v, units[u]);
}

static void unreserve(struct xfer *x)
{
	x->h->reserved -= x->reserved < x->h->reserved ? x->reserved : x->h->reserved;
	x->reserved = 0;
}

/* The body about to come must fit on the filesystem of o.space_dir beside
 * what the other transfers under way still bring. */
static int check_space(struct xfer *x, uint64_t need)
{
	struct ow_http *h = x->h;
	uint64_t avail, want;
	unreserve(x);
	if (!h->o.space_dir || !need || ow_fs_avail(h->o.space_dir, &avail) != 0)
		return 0; /* no check asked, or none possible: the write will say */
	if (ow_space_short(need, h->reserved, avail, &want)) {
		char a[32], b[32], c[32];
		size_text(need, a, sizeof a);
		size_text(h->reserved, b, sizeof b);
		size_text(avail, c, sizeof c);
		decide(x, V_FATAL, OW_ENOSPC,
		       "not enough disk space: this file is %s%s%s, and %s has %s free — nothing "
		       "of it was written; free some space (or fetch fewer sets), or re-run with "
		       "--force to skip this check",
		       a, h->reserved ? "; the downloads under way still bring " : "",
		       h->reserved ? b : "", h->o.space_dir, c);
		return -1;
	}
	x->reserved = need;
	h->reserved += need;
	return 0;
}

/* Content-Length against the cap and the expected size. */
static int check_length(struct xfer *x, uint64_t start)
{
	uint64_t end = start + (uint64_t)x->r.clen, exp = x->req->expected_size;
	if (end > x->cap) {
		decide(x, V_FATAL, OW_ETOOBIG,
		       "Content-Length %lld is over the size cap of %llu bytes — refusing to "
		       "download", (long long)x->r.clen, (unsigned long long)x->cap);
		return -1;
	}
	if (exp && end != exp) {
		decide(x, V_FATAL, OW_EHTTP,
		       "Content-Length %lld (ending at byte %llu) disagrees with the expected "
		       "size %llu — the server or the index is wrong", (long long)x->r.clen,
		       (unsigned long long)end, (unsigned long long)exp);
		return -1;
	}
	if (x->r.clen > 0 && check_space(x, (uint64_t)x->r.clen) < 0)
		return -1;
	if (x->r.status == 200)
		x->total = end;
	return 0;
}

static int restart_sink(struct xfer *x);
static void learn_validator(struct xfer *x);

/* "bytes=-N" or "bytes=A-B" as this request asks for it. */
static void range_text(const struct ow_http_req *q, char *buf, size_t n)
{
	if (q->flags & OW_HTTP_RANGE_SUFFIX)
		snprintf(buf, n, "bytes=-%llu", (unsigned long long)q->range_len);
	else
		snprintf(buf, n, "bytes=%llu-%llu", (unsigned long long)q->range_off,
		         (unsigned long long)(q->range_off + q->range_len - 1));
}

/* Digits up to `stop` (at most 19 of them): 0 with *v and *s past them. */
static int crange_num(const char **s, char stop, uint64_t *v)
{
	const char *p = *s;
	size_t n = strspn(p, "0123456789");
	if (!n || n > 19 || p[n] != stop)
		return -1;
	*v = strtoull(p, NULL, 10);
	*s = p + n + (stop ? 1 : 0);
	return 0;
}

/* "bytes A-B/T" exactly (no spaces, signs or "*"), A <= B < T. */
static int crange_exact(const char *s, uint64_t *a, uint64_t *b, uint64_t *t)
{
	if (strncmp(s, "bytes ", 6))
		return -1;
	s += 6;
	if (crange_num(&s, '-', a) || crange_num(&s, '/', b) || crange_num(&s, '\0', t))
		return -1;
	return *a <= *b && *b < *t ? 0 : -1;
}

/* The bytes [*a, *b] of a file of `total` bytes that the request asks for;
 * -1 when none of them exists. */
static int range_wanted(const struct ow_http_req *q, uint64_t total, uint64_t *a, uint64_t *b)
{
	if (!total)
		return -1;
	if (q->flags & OW_HTTP_RANGE_SUFFIX) {
		*a = total > q->range_len ? total - q->range_len : 0;
		*b = total - 1;
		return 0;
	}
	if (q->range_off >= total)
		return -1;
	*a = q->range_off;
	*b = total - q->range_off > q->range_len ? q->range_off + q->range_len - 1 : total - 1;
	return 0;
}

/* The answer to a range request: only a 206 for exactly the range asked for
 * (cut at the end of the file), with the file's size, goes to the sink.  A
 * 200 carries the whole file: it is cut off here, before its first body
 * byte, and flagged for the caller. */
static int begin_range(struct xfer *x)
{
	struct ow_http_req *q = x->req;
	char asked[64];
	uint64_t a, t, wa, wb, last;
	range_text(q, asked, sizeof asked);
	if (x->r.status == 200) {
		q->res.range_ignored = 1;
		decide(x, V_FATAL, OW_EUNSUPPORTED,
		       "the server answered Range %s with the whole file (HTTP 200): it does not "
		       "serve byte ranges%s — nothing was read from it", asked,
		       q->if_range && *q->if_range ? ", or the file changed since it was first read" : "");
		return -1;
	}
	if (x->r.status != 206) {
		decide(x, V_FATAL, OW_EHTTP, "HTTP %ld to Range %s, not 206 — the server is "
		       "broken; use another mirror", x->r.status, asked);
		return -1;
	}
	if (crange_exact(x->r.crange, &a, &last, &t) || range_wanted(q, t, &wa, &wb) || a != wa ||
	    last != wb ||
	    (q->expected_size && t != q->expected_size)) {
		char of[48] = "";
		if (q->expected_size)
			snprintf(of, sizeof of, " of a file of %llu bytes",
			         (unsigned long long)q->expected_size);
		decide(x, V_FATAL, OW_EHTTP,
		       "206 with Content-Range '%s' is not the range asked for (%s%s) — the server is "
		       "broken, or the file changed; use another mirror", x->r.crange, asked, of);
		return -1;
	}
	if (x->r.clen >= 0 && (uint64_t)x->r.clen != wb - wa + 1) {
		decide(x, V_FATAL, OW_EHTTP, "206 with Content-Length %lld for Content-Range '%s' — "
		       "the server is broken; use another mirror", (long long)x->r.clen, x->r.crange);
		return -1;
	}
	if (wb - wa + 1 > x->cap) {
		decide(x, V_FATAL, OW_ETOOBIG, "the range %s is %llu bytes, over the size cap of %llu",
		       asked, (unsigned long long)(wb - wa + 1), (unsigned long long)x->cap);
		return -1;
	}
	if (q->if_range && *q->if_range && !same_validator(&x->r, q->if_range)) {
		q->res.validator_changed = 1;
		decide(x, V_FATAL, OW_EHTTP,
		       "the 206 to Range %s carries %s '%s', not the If-Range '%s' sent: the server "
		       "ignored If-Range and these bytes may be of another version of the file",
		       asked, *q->if_range == '"' ? "ETag" : "Last-Modified",
		       *q->if_range == '"' ? x->r.etag : x->r.lastmod, q->if_range);
		return -1;
	}
	if (x->pos && restart_sink(x))
		return -1;
	x->rlen = wb - wa + 1;
	x->total = t;
	q->res.range_start = wa;
	q->res.range_total = t;
	learn_validator(x);
	copy_str(q->res.validator, sizeof q->res.validator, x->validator);
	x->r.body_sink = 1;
	return 0;
}

static int restart_sink(struct xfer *x)
{
	struct ow_http_req *q = x->req;
	int rc = q->on_restart ? q->on_restart(q->ud) : 0;
	if (rc) {
		decide(x, V_FATAL, ow_code(rc),
		       "discarding the partial download failed: %s", ow_err_detail());
		return -1;
	}
	if (ranged(q))
		ow_log(OW_LOG_INFO, "%s: asking for the range again from its start", label(x));
	else
		ow_log(OW_LOG_INFO, "%s: server sent the whole file; restarting from zero", label(x));
	q->res.restarted = 1;
	q->res.resumed = 0;
	q->res.resumed_from = 0;
	q->res.resume_basis = OW_HTTP_RESUME_NONE;
	x->pos = 0;
	return 0;
}

static void learn_validator(struct xfer *x)
{
	struct resp *r = &x->r;
	if (r->etag[0] && strncmp(r->etag, "W/", 2))
		copy_str(x->validator, sizeof x->validator, r->etag);
	else
		copy_str(x->validator, sizeof x->validator, r->lastmod);
}

static int check_encoding(struct xfer *x)
{
	if (x->r.clen_bad) {
		decide(x, V_FATAL, OW_EHTTP, "malformed or conflicting Content-Length — the "
		       "server is broken; use another mirror");
		return -1;
	}
	if (x->r.cenc[0] && strcasecmp(x->r.cenc, "identity")) {
		decide(x, V_FATAL, OW_EHTTP,
		       "server sent Content-Encoding '%s' although offwheel asked for identity; "
		       "an encoded body cannot be verified — check the server or proxy", x->r.cenc);
		return -1;
	}
	return 0;
}

/* First sight of a body (or the end of a body-less response): decide
 * whether it goes to the caller and where it starts.  -1 = abort. */
static int begin_body(struct xfer *x)
{
	uint64_t start = 0;
	if (x->r.begun)
		return 0;
	x->r.begun = 1;
	if (!x->is_file && x->r.status / 100 != 2)
		return 0;
	if (check_encoding(x))
		return -1;
	if (ranged(x->req))
		return begin_range(x);
	if (x->r.status == 206 && check_partial(x, &start))
		return -1;
	if (x->r.clen >= 0 && check_length(x, start))
		return -1;
	if (start != x->pos && restart_sink(x))
		return -1;
	x->req->res.resumed = start > 0;
	x->req->res.resumed_from = start;
	x->req->res.resume_basis = start ? x->range_basis : OW_HTTP_RESUME_NONE;
	learn_validator(x);
	/* let the sink see, before the first byte, what validates these bytes */
	copy_str(x->req->res.validator, sizeof x->req->res.validator, x->validator);
	x->r.body_sink = 1;
	return 0;
}

/* ---- body bytes ----------------------------------------------------------- */

static int sink_bytes(struct xfer *x, const char *p, size_t n)
{
	struct ow_http_req *q = x->req;
	if (ranged(q) && x->pos + n > x->rlen) {
		decide(x, V_FATAL, OW_EHTTP, "body is longer than the %llu bytes of the range its "
		       "Content-Range announced — the server is broken", (unsigned long long)x->rlen);
		return -1;
	}
	if (ranged(q)) {
		/* bounded by the range above */
	} else if (x->pos + n > x->cap || (q->expected_size && x->pos + n > q->expected_size)) {
		uint64_t lim = q->expected_size && q->expected_size < x->cap ? q->expected_size : x->cap;
		decide(x, V_FATAL, OW_ETOOBIG,
		       "body is longer than %llu bytes (the %s) — refusing the rest",
		       (unsigned long long)lim, lim == x->cap ? "size cap" : "expected size");
		return -1;
	}
	int rc = q->on_data(q->ud, p, n);
	if (rc) {
		decide(x, V_FATAL, ow_code(rc),
		       "storing the body failed: %s", ow_err_detail());
		return -1;
	}
	x->pos += n;
	q->res.received += n;
	return 0;
}

static void report_progress(struct xfer *x)
{
	int64_t t = now_ms();
	if (t - x->last_progress < PROGRESS_MS)
		return;
	x->last_progress = t;
	uint64_t tot = ranged(x->req)          ? x->rlen
	               : x->req->expected_size ? x->req->expected_size
	                                       : x->total;
	ow_progress(label(x), x->pos, tot);
}

static size_t write_cb(char *p, size_t size, size_t nmemb, void *ud)
{
	struct xfer *x = ud;
	size_t n = size * nmemb;
	if (begin_body(x))
		return 0;
	x->r.got += n;
	x->rx += n;
	x->last_byte = now_ms();
	if (!x->r.body_sink) {
		if (x->r.got <= DISCARD_MAX)
			return n;
		x->r.discard_cut = 1;
		return 0;
	}
	if (sink_bytes(x, p, n))
		return 0;
	report_progress(x);
	return n;
}

/* The time one transfer may take, all attempts together (0 = no limit):
 * max(floor, 2 x size / min_rate), the size being the expected one, else the
 * one the response announced, else the cap. */
static int64_t deadline_ms(const struct xfer *x)
{
	const struct ow_http_opts *o = &x->h->o;
	uint64_t size = x->req->expected_size ? x->req->expected_size : x->total ? x->total : x->cap;
	if (o->deadline_floor_ms <= 0)
		return 0;
	double d = (double)o->deadline_floor_ms;
	if (o->min_rate_bytes > 0 && 2000.0 * (double)size / (double)o->min_rate_bytes > d)
		d = 2000.0 * (double)size / (double)o->min_rate_bytes;
	return d > 1e15 ? (int64_t)1e15 : (int64_t)d;
}

static double rate_of(uint64_t bytes, int64_t ms)
{
	return ms > 0 ? (double)bytes * 1000.0 / (double)ms : 0.0;
}

/* Nothing at all for low_speed_time_s: curl's own low-speed check averages
 * over a window of several seconds, so a burst then silence goes unnoticed
 * for long. */
static int check_silence(struct xfer *x, int64_t t)
{
	long lim = x->h->o.low_speed_time_s;
	if (lim <= 0 || t - x->last_byte <= lim * 1000)
		return 0;
	decide(x, V_RETRY, OW_ETIMEOUT,
	       "nothing received for %ld s after %llu body bytes (stalled) — check the "
	       "network or raise the stall timeout", lim, (unsigned long long)x->r.got);
	return 1;
}

/* A server that trickles (2 bytes a second) is never silent: each window of
 * low_speed_time_s must bring min_rate_bytes a second on average. */
static int check_rate(struct xfer *x, int64_t t)
{
	const struct ow_http_opts *o = &x->h->o;
	int64_t span = t - x->win_start;
	if (o->min_rate_bytes <= 0 || o->low_speed_time_s <= 0 || span < o->low_speed_time_s * 1000)
		return 0;
	uint64_t got = x->rx - x->win_rx;
	double rate = rate_of(got, span);
	if (rate >= (double)o->min_rate_bytes) {
		x->win_start = t;
		x->win_rx = x->rx;
		return 0;
	}
	decide(x, V_RETRY, OW_ETIMEOUT,
	       "too slow: %llu bytes in the last %.1f s (%.0f B/s, below the minimum of %ld B/s) — "
	       "the server is trickling or the link is too slow; try again later or another "
	       "mirror, or lower --min-rate", (unsigned long long)got, (double)span / 1000.0, rate,
	       o->min_rate_bytes);
	return 1;
}

static int check_deadline(struct xfer *x, int64_t t)
{
	int64_t dl = deadline_ms(x);
	if (!dl || t - x->started <= dl)
		return 0;
	decide(x, V_FATAL, OW_ETIMEOUT,
	       "gave up after %.0f s, the deadline for this transfer (attempt %u: %llu bytes in "
	       "%.1f s, %.0f B/s) — the server is too slow; try another mirror, or raise "
	       "--deadline", (double)(t - x->started) / 1000.0, x->req->res.attempts,
	       (unsigned long long)x->rx, (double)(t - x->attempt_start) / 1000.0,
	       rate_of(x->rx, t - x->attempt_start));
	return 1;
}

static int xferinfo_cb(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct xfer *x = ud;
	int64_t t = now_ms();
	(void)dt, (void)dn, (void)ut, (void)un;
	return check_deadline(x, t) || check_silence(x, t) || check_rate(x, t);
}

/* ---- classification of a finished attempt ----------------------------------- */

static int is_tls_error(CURLcode c)
{
	switch (c) {
	case CURLE_PEER_FAILED_VERIFICATION: case CURLE_SSL_CONNECT_ERROR:
	case CURLE_SSL_CERTPROBLEM: case CURLE_SSL_CIPHER: case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_ISSUER_ERROR: case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
	case CURLE_SSL_INVALIDCERTSTATUS: case CURLE_SSL_CRL_BADFILE:
	case CURLE_USE_SSL_FAILED: case CURLE_SSL_ENGINE_INITFAILED:
		return 1;
	default:
		return 0;
	}
}

static int is_transient(CURLcode c)
{
	switch (c) {
	case CURLE_COULDNT_CONNECT: case CURLE_PARTIAL_FILE: case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR: case CURLE_GOT_NOTHING: case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return 1;
	default:
		return 0;
	}
}

static const char *cerr(const struct xfer *x, CURLcode c)
{
	return x->errbuf[0] ? x->errbuf : curl_easy_strerror(c);
}

static void classify_curl(struct xfer *x, CURLcode c)
{
	const struct ow_http_opts *o = &x->h->o;
	if (is_tls_error(c))
		decide(x, V_FATAL, OW_ETLS,
		       "TLS failed: %s — check the host name and the system clock; for a "
		       "private CA pass --cert FILE (or set SSL_CERT_FILE)", cerr(x, c));
	else if (c == CURLE_OPERATION_TIMEDOUT)
		decide(x, V_RETRY, OW_ETIMEOUT,
		       "timed out (%s; stall limit %ld s below %ld B/s) — check the network or "
		       "raise the timeouts", cerr(x, c), o->low_speed_time_s, o->low_speed_bytes);
	else if (is_transient(c))
		decide(x, V_RETRY, OW_ENET, "%s after %llu body bytes — network or server "
		       "trouble", cerr(x, c), (unsigned long long)x->r.got);
	else if ((c == CURLE_OUT_OF_MEMORY || (int)c == 100 /* CURLE_TOO_LARGE */) && !x->r.begun)
		decide(x, V_FATAL, OW_ETOOBIG,
		       "the server sent response headers over libcurl's limit (a header line over "
		       "100 kB, or too many in all) — the server is misbehaving or hostile; try "
		       "another mirror");
	else if (c == CURLE_FILESIZE_EXCEEDED)
		decide(x, V_FATAL, OW_ETOOBIG, "file is larger than the size cap of %llu bytes",
		       (unsigned long long)x->cap);
	else if (c == CURLE_FILE_COULDNT_READ_FILE)
		decide(x, V_FATAL, OW_ENOENT, "%s — check the path of the local index", cerr(x, c));
	else if (c == CURLE_UNSUPPORTED_PROTOCOL)
		decide(x, V_FATAL, OW_EPOLICY, "%s — only https (http for trusted hosts) is allowed",
		       cerr(x, c));
	else if (c == CURLE_COULDNT_RESOLVE_HOST || c == CURLE_COULDNT_RESOLVE_PROXY)
		decide(x, V_FATAL, OW_ENET, "%s — check the URL and that this machine is online",
		       cerr(x, c));
	else
		decide(x, V_FATAL, c == CURLE_WEIRD_SERVER_REPLY ? OW_EHTTP : OW_ENET,
		       "%s (curl error %d)", cerr(x, c), (int)c);
}

/* Retry-After in seconds: -1 absent or unparsable (use own backoff). */
static int64_t retry_after_s(const char *v)
{
	if (!*v)
		return -1;
	if (strspn(v, "0123456789") == strlen(v))
		return strlen(v) > 9 ? INT64_MAX : strtoll(v, NULL, 10);
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
		decide(x, V_FATAL, OW_EHTTP,
		       "HTTP %ld with Retry-After '%.60s', more than the %ld s offwheel waits — "
		       "the server is overloaded; try again later", st, x->r.retry_after, max);
		return;
	}
	decide(x, V_RETRY, OW_EHTTP, "HTTP %ld from the server — it is failing or "
	       "overloaded; try again later", st);
	x->delay_ms = ra >= 0 ? (long)ra * 1000 : -1;
}

static int recheck_effective(struct xfer *x)
{
	char *eff = NULL;
	curl_easy_getinfo(x->easy, CURLINFO_EFFECTIVE_URL, &eff);
	copy_str(x->req->res.effective_url, sizeof x->req->res.effective_url, eff ? eff : x->url);
	return x->is_file ? 0 : check_hop(x, x->req->res.effective_url, 0);
}

static void note_validators(struct xfer *x)
{
	struct ow_http_result *res = &x->req->res;
	const char *et = x->r.etag[0] || x->r.status != 304 ? x->r.etag : x->req->if_none_match;
	const char *lm = x->r.lastmod[0] || x->r.status != 304 ? x->r.lastmod
	                                                      : x->req->if_modified_since;
	copy_str(res->etag, sizeof res->etag, et ? et : "");
	copy_str(res->last_modified, sizeof res->last_modified, lm ? lm : "");
}

static void classify_success(struct xfer *x)
{
	uint64_t exp = x->req->expected_size;
	if (begin_body(x))
		return;
	if (x->r.clen >= 0 && x->r.got < (uint64_t)x->r.clen)
		decide(x, V_RETRY, OW_ENET, "short body: %llu of %lld bytes", (unsigned long long)x->r.got,
		       (long long)x->r.clen);
	else if (ranged(x->req) && x->pos < x->rlen)
		decide(x, V_RETRY, OW_ENET, "connection closed after %llu of the range's %llu bytes",
		       (unsigned long long)x->pos, (unsigned long long)x->rlen);
	else if (!ranged(x->req) && exp && x->pos < exp)
		decide(x, V_RETRY, OW_ENET, "connection closed after %llu of %llu bytes",
		       (unsigned long long)x->pos, (unsigned long long)exp);
	else if (!recheck_effective(x)) {
		note_validators(x);
		x->req->res.close_delimited = !x->is_file && x->r.http1 && x->r.clen < 0 &&
		                              !x->r.chunked;
		x->v = V_OK;
	}
}

static void classify_redirect(struct xfer *x)
{
	char *loc = NULL;
	unsigned max = x->h->o.max_redirects;
	curl_easy_getinfo(x->easy, CURLINFO_REDIRECT_URL, &loc);
	if (!loc) {
		decide(x, V_FATAL, OW_EHTTP, "HTTP %ld without a usable Location", x->r.status);
		return;
	}
	if (x->req->res.redirects >= max) {
		decide(x, V_FATAL, OW_EPOLICY, "more than %u redirects — refusing to follow %.300s",
		       max, loc);
		return;
	}
	if (check_hop(x, loc, 1))
		return;
	uint64_t hv = ow_fnv1a(loc);
	for (unsigned i = 0; i < x->nvisited; i++)
		if (x->visited[i] == hv) {
			decide(x, V_FATAL, OW_EPOLICY, "redirect loop back to %.300s — the server is "
			       "misconfigured", loc);
			return;
		}
	if (x->nvisited < MAX_VISITED)
		x->visited[x->nvisited++] = hv;
	x->req->res.redirects++;
	set_url(x, loc);
	x->v = V_REDIRECT;
}

static void classify_status(struct xfer *x)
{
	long st = x->r.status;
	x->req->res.status = st;
	if (x->is_file || st / 100 == 2) {
		classify_success(x);
	} else if (st == 304 && !x->conditional) {
		decide(x, V_FATAL, OW_EHTTP,
		       "HTTP 304 Not Modified to a request that was not conditional (no If-None-Match "
		       "or If-Modified-Since was sent) — a proxy or captive portal is answering in "
		       "the server's place; check the network, or use another mirror");
	} else if (st == 304) {
		x->req->res.not_modified = 1;
		note_validators(x);
		if (!recheck_effective(x))
			x->v = V_OK;
	} else if (st / 100 == 3) {
		classify_redirect(x);
	} else if (st == 416 && ranged(x->req)) {
		char asked[64];
		range_text(x->req, asked, sizeof asked);
		decide(x, V_FATAL, OW_EHTTP, "HTTP 416 to Range %s: the file has no such bytes "
		       "(Content-Range '%s') — the index and the file disagree", asked, x->r.crange);
	} else if (st == 416 && x->range_from) {
		decide(x, V_RESTART, OW_EHTTP, "HTTP 416 to Range bytes=%llu- — the file is not "
		       "what was partly downloaded; restarting from zero",
		       (unsigned long long)x->range_from);
		x->no_range = 1;
	} else if (st == 403 || st == 404 || st == 410) {
		decide(x, V_FATAL, OW_ENOENT, "not found (HTTP %ld) — check the name and the index "
		       "URL", st);
	} else if (st == 408 || st == 429 || st / 100 == 5) {
		classify_retryable_status(x);
	} else {
		decide(x, V_FATAL, OW_EHTTP, "unexpected HTTP status %ld", st);
	}
}

static void classify(struct xfer *x, CURLcode c)
{
	if (x->v != V_NONE)
		return; /* a callback already decided */
	if (c != CURLE_OK && !x->r.discard_cut)
		classify_curl(x, c);
	else
		classify_status(x);
}

/* ---- scheduling -------------------------------------------------------------- */

static void finish(struct xfer *x, int rc)
{
	struct ow_http *h = x->h;
	struct ow_http_result *res = &x->req->res;
	res->rc = rc;
	res->bytes = x->pos;
	if (!res->effective_url[0])
		copy_str(res->effective_url, sizeof res->effective_url, x->url);
	if (rc == 0)
		res->detail[0] = '\0';
	else if (!h->first_rc) {
		h->first_rc = rc;
		copy_str(h->first_detail, sizeof h->first_detail, res->detail);
	}
	x->state = X_DONE;
	unreserve(x);
	ow_progress_done(label(x), x->pos);
	if (x->req->on_done)
		x->req->on_done(x->req->ud, x->req);
}

/* Capped exponential backoff with jitter (half fixed, half random) before
 * the attempt after `attempts` ones. */
static long backoff_delay(const struct ow_http_opts *o, unsigned attempts, uint64_t rnd)
{
	unsigned n = attempts ? attempts - 1 : 0;
	long d = o->backoff_base_ms;
	while (n-- && d < o->backoff_max_ms)
		d *= 2;
	if (d > o->backoff_max_ms)
		d = o->backoff_max_ms;
	return d / 2 + (long)(rnd % (uint64_t)(d / 2 + 1));
}

static long backoff_ms(struct xfer *x)
{
	return backoff_delay(&x->h->o, x->req->res.attempts, rng_next(x->h));
}

static void requeue(struct xfer *x, long delay_ms)
{
	x->state = X_QUEUED;
	x->not_before = now_ms() + delay_ms;
}

static void retry(struct xfer *x)
{
	const struct ow_http_opts *o = &x->h->o;
	unsigned att = x->req->res.attempts;
	long d = x->delay_ms >= 0 ? x->delay_ms : backoff_ms(x);
	if (att >= o->max_attempts) {
		append_detail(x, " (gave up after %u attempts)", att);
		finish(x, x->rc);
	} else if (now_ms() + d - x->started > o->retry_budget_ms) {
		append_detail(x, " (gave up after %u attempts: retry budget of %ld ms spent)", att,
		              o->retry_budget_ms);
		finish(x, x->rc);
	} else if (deadline_ms(x) && now_ms() + d - x->started > deadline_ms(x)) {
		append_detail(x, " (gave up after %u attempts: the deadline of %.0f s for this "
		              "transfer is reached; raise --deadline)", att,
		              (double)deadline_ms(x) / 1000.0);
		finish(x, x->rc);
	} else {
		ow_log(OW_LOG_INFO, "retrying in %ld ms: %s", d, x->req->res.detail);
		requeue(x, d);
	}
}

static void apply(struct xfer *x)
{
	switch (x->v) {
	case V_OK: finish(x, 0); break;
	case V_RETRY: retry(x); break;
	case V_RESTART:
		if (x->req->res.attempts >= x->h->o.max_attempts)
			finish(x, x->rc);
		else
			requeue(x, 0);
		break;
	case V_REDIRECT: x->hop = 1; requeue(x, 0); break;
	default: finish(x, x->rc ? x->rc : OW_EINTERNAL); break;
	}
}

/* ---- attempts ----------------------------------------------------------------- */

static int add_header(struct xfer *x, const char *fmt, ...) OW_PRINTF(2, 3);
static int add_header(struct xfer *x, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof line || strpbrk(line, "\r\n"))
		return -1;
	struct curl_slist *l = curl_slist_append(x->hdrs, line);
	if (!l)
		return -1;
	x->hdrs = l;
	return 0;
}

enum ow_http_resume ow_http_resume_basis(uint64_t held, const char *validator, int hash_known)
{
	if (!held)
		return OW_HTTP_RESUME_NONE;
	if (hash_known)
		return OW_HTTP_RESUME_PLAIN;
	return validator && *validator ? OW_HTTP_RESUME_IF_RANGE : OW_HTTP_RESUME_NONE;
}

/* Range (+ If-Range) to continue after the bytes the sink holds, when
 * that can be judged (see ow_http_resume_basis). */
static int add_resume_headers(struct xfer *x)
{
	const struct ow_http_req *q = x->req;
	int by_hash = (q->flags & OW_HTTP_RESUME_BY_HASH) != 0;
	if (x->no_range || x->is_file)
		return 0;
	x->range_basis = ow_http_resume_basis(x->pos, x->validator, by_hash);
	if (x->range_basis == OW_HTTP_RESUME_NONE)
		return 0;
	x->range_from = x->pos;
	int bad = add_header(x, "Range: bytes=%llu-", (unsigned long long)x->pos);
	if (x->range_basis == OW_HTTP_RESUME_IF_RANGE)
		bad |= add_header(x, "If-Range: %s", x->validator);
	return bad;
}

static int build_headers(struct xfer *x)
{
	const struct ow_http_req *q = x->req;
	int bad = add_header(x, "Accept-Encoding: identity");
	if (q->accept && *q->accept)
		bad |= add_header(x, "Accept: %s", q->accept);
	x->range_from = 0;
	x->range_basis = OW_HTTP_RESUME_NONE;
	if (ranged(q)) {
		char asked[64];
		range_text(q, asked, sizeof asked);
		bad |= add_header(x, "Range: %s", asked);
		if (q->if_range && *q->if_range)
			bad |= add_header(x, "If-Range: %s", q->if_range);
		return bad ? -1 : 0;
	}
	bad |= add_resume_headers(x);
	if (!x->range_from && x->pos == 0 && q->if_none_match && *q->if_none_match) {
		bad |= add_header(x, "If-None-Match: %s", q->if_none_match);
		x->conditional = 1;
	}
	if (!x->range_from && x->pos == 0 && q->if_modified_since && *q->if_modified_since) {
		bad |= add_header(x, "If-Modified-Since: %s", q->if_modified_since);
		x->conditional = 1;
	}
	return bad ? -1 : 0;
}

static const char *protocols(const struct xfer *x)
{
	unsigned f = x->req->flags & (OW_HTTP_ALLOW_HTTP | OW_HTTP_ALLOW_FILE);
	static const char *const tab[] = {"https", "https,http", "https,file", "https,http,file"};
	return tab[f];
}

static void set_options(struct xfer *x)
{
	CURL *e = x->easy;
	const struct ow_http *h = x->h;
	curl_easy_setopt(e, CURLOPT_URL, x->url);
	curl_easy_setopt(e, CURLOPT_PRIVATE, x);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	/* large receive buffers: fewer callbacks per byte (curl's own tool uses 100 kB) */
	curl_easy_setopt(e, CURLOPT_BUFFERSIZE, 256L * 1024);
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, protocols(x));
	curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "https");
	curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
	if (h->ca_file)
		curl_easy_setopt(e, CURLOPT_CAINFO, h->ca_file);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, h->o.connect_timeout_ms);
	curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, h->o.low_speed_bytes);
	curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, h->o.low_speed_time_s);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, h->o.attempt_timeout_ms);
	curl_easy_setopt(e, CURLOPT_USERAGENT, h->user_agent);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->hdrs);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, xferinfo_cb);
	curl_easy_setopt(e, CURLOPT_XFERINFODATA, x);
	curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
}

static void reset_attempt(struct xfer *x)
{
	memset(&x->r, 0, sizeof x->r);
	x->r.clen = -1;
	x->v = V_NONE;
	x->rc = 0;
	x->errbuf[0] = '\0';
	x->hdr_bytes = 0;
	x->hdr_count = 0;
	x->last_byte = now_ms();
	x->attempt_start = x->last_byte;
	x->win_start = x->last_byte;
	x->win_rx = 0;
	x->rx = 0;
	x->conditional = 0;
}

/* libcurl opens a file: URL with a blocking open() and reads whatever is
 * there: a FIFO would hang the run past every deadline, a link to
 * /dev/zero would stream until the size cap.  The path is opened here first
 * without blocking and must be a regular file within the cap (what the
 * local user swaps in between this check and libcurl's open is their own
 * race); 0 when it is, else the attempt is decided. */
static int check_local_file(struct xfer *x)
{
	char *path = NULL;
	struct stat st;
	int fd = -1, rc = ow_url_file_path(x->url, &path);
	if (rc)
		decide(x, V_FATAL, rc, "%s", ow_err_detail());
	else if ((rc = ow_open_regular(path, &fd, &st)))
		decide(x, V_FATAL, rc, "%s — %s", ow_err_detail(),
		       rc == OW_EPOLICY ? "a local index holds regular files only; put the file itself there"
		                        : "check the path of the local index");
	else if (x->cap && (uint64_t)st.st_size > x->cap)
		decide(x, V_FATAL, OW_ETOOBIG, "%s has %llu bytes, over the size cap of %llu", path,
		       (unsigned long long)st.st_size, (unsigned long long)x->cap);
	if (fd >= 0)
		close(fd);
	free(path);
	return x->v == V_NONE ? 0 : -1;
}

static void start_attempt(struct xfer *x)
{
	struct ow_http *h = x->h;
	reset_attempt(x);
	if (!x->hop)
		x->req->res.attempts++;
	x->hop = 0;
	if (x->is_file && check_local_file(x)) {
		finish(x, x->rc);
		return;
	}
	x->easy = curl_easy_init();
	if (!x->easy || build_headers(x)) {
		decide(x, V_FATAL, OW_ENOMEM, "cannot set up the request");
		curl_slist_free_all(x->hdrs);
		x->hdrs = NULL;
		curl_easy_cleanup(x->easy);
		x->easy = NULL;
		finish(x, x->rc);
		return;
	}
	set_options(x);
	curl_multi_add_handle(h->multi, x->easy);
	x->state = X_RUNNING;
	h->run[h->nrun++] = x;
}

static void detach(struct xfer *x)
{
	struct ow_http *h = x->h;
	curl_multi_remove_handle(h->multi, x->easy);
	curl_easy_cleanup(x->easy);
	curl_slist_free_all(x->hdrs);
	x->easy = NULL;
	x->hdrs = NULL;
	for (unsigned i = 0; i < h->nrun; i++)
		if (h->run[i] == x) {
			h->run[i] = h->run[--h->nrun];
			break;
		}
}

static unsigned host_running(const struct ow_http *h, const char *host)
{
	unsigned n = 0;
	for (unsigned i = 0; i < h->nrun; i++)
		n += !strcmp(h->run[i]->host, host);
	return n;
}

static void start_ready(struct ow_http *h)
{
	int64_t t = now_ms();
	for (struct xfer *x = h->head; x && h->nrun < h->o.jobs; x = x->next) {
		if (x->state != X_QUEUED || x->not_before > t)
			continue;
		if (host_running(h, x->host) >= h->o.per_host)
			continue;
		start_attempt(x);
	}
}

static void drain(struct ow_http *h)
{
	CURLMsg *m;
	int left;
	while ((m = curl_multi_info_read(h->multi, &left))) {
		char *p = NULL;
		if (m->msg != CURLMSG_DONE)
			continue;
		CURLcode c = m->data.result;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &p);
		struct xfer *x = (void *)p;
		if (!x)
			continue;
		classify(x, c);
		detach(x);
		apply(x);
	}
}

static void reap(struct ow_http *h)
{
	struct xfer **pp = &h->head;
	h->tail = NULL;
	while (*pp) {
		struct xfer *x = *pp;
		if (x->state == X_DONE) {
			*pp = x->next;
			free(x);
		} else {
			h->tail = x;
			pp = &x->next;
		}
	}
}

static long next_wait_ms(const struct ow_http *h)
{
	int64_t t = now_ms(), w = 1000;
	for (const struct xfer *x = h->head; x; x = x->next)
		if (x->state == X_QUEUED && x->not_before > t && x->not_before - t < w)
			w = x->not_before - t;
	return (long)w;
}

static void cancel_all(struct ow_http *h)
{
	for (struct xfer *x = h->head; x; x = x->next) {
		if (x->state == X_DONE)
			continue;
		if (x->state == X_RUNNING)
			detach(x);
		decide(x, V_FATAL, OW_EINCOMPLETE, "cancelled; %llu bytes kept for a later resume",
		       (unsigned long long)x->pos);
		finish(x, OW_EINCOMPLETE);
	}
}

/* ---- public API ----------------------------------------------------------------- */

void ow_http_opts_default(struct ow_http_opts *o)
{
	memset(o, 0, sizeof *o);
	o->jobs = 8;
	o->per_host = 4;
	o->connect_timeout_ms = 15000;
	o->low_speed_bytes = 1;
	o->low_speed_time_s = 30;
	o->min_rate_bytes = 10240;
	o->deadline_floor_ms = 300000;
	o->max_redirects = 5;
	o->max_attempts = 5;
	o->retry_budget_ms = 120000;
	o->backoff_base_ms = 500;
	o->backoff_max_ms = 30000;
	o->retry_after_max_s = 60;
	o->max_size = 4ull << 30;
	o->header_max_bytes = 64 * 1024;
	o->header_max_count = 200;
}

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc;
static void global_init(void)
{
	curl_load();
	if (curl_ok)
		global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* libcurl loaded and initialised, once per process; else why not (the
 * message recorded on this thread). */
static int curl_ready(void)
{
	pthread_once(&global_once, global_init);
	int rc = curl_loaded();
	if (rc)
		return rc;
	if (global_rc != CURLE_OK)
		return ow_err(OW_EINTERNAL, "libcurl initialisation failed: %s",
		              curl_easy_strerror(global_rc));
	return 0;
}

/* The CA file (opts, else $SSL_CERT_FILE), checked readable; NULL: the system's. */
static int pick_ca_file(const struct ow_http_opts *o, char **out)
{
	const char *ca = o->ca_file ? o->ca_file : getenv("SSL_CERT_FILE");
	*out = NULL;
	if (!ca || !*ca)
		return 0;
	struct stat st;
	int fd, rc = ow_open_regular(ca, &fd, &st); /* OpenSSL's read of a FIFO would block */
	if (rc == OW_EPOLICY) {
		char why[512];
		snprintf(why, sizeof why, "%s", ow_err_detail());
		return ow_err(OW_EINVAL, "CA file %s — pass a PEM file with --cert (or fix "
		              "SSL_CERT_FILE)", why);
	}
	if (rc)
		return ow_err(OW_EINVAL, "CA file %s cannot be read — pass an existing PEM file "
		              "with --cert (or fix SSL_CERT_FILE)", ca);
	close(fd);
	*out = strdup(ca);
	return *out ? 0 : ow_err(OW_ENOMEM, "out of memory");
}

static int pick_ca(struct ow_http *h)
{
	return pick_ca_file(&h->o, &h->ca_file);
}

static int check_opts(const struct ow_http_opts *o)
{
	if (!o->jobs || !o->per_host || !o->max_attempts || o->max_redirects > MAX_VISITED - 1 ||
	    o->backoff_base_ms < 1 || o->backoff_max_ms < o->backoff_base_ms)
		return ow_err(OW_EINVAL, "http options: jobs, per_host and max_attempts must be "
		              "positive, max_redirects at most %d, backoff_base_ms >= 1 and <= "
		              "backoff_max_ms", MAX_VISITED - 1);
	return 0;
}

static int engine_setup(struct ow_http *h)
{
	const char *ua = h->o.user_agent ? h->o.user_agent : "offwheel/" OW_VERSION;
	int rc = pick_ca(h);
	if (rc)
		return rc;
	h->user_agent = strdup(ua);
	h->run = calloc(h->o.jobs, sizeof *h->run);
	h->multi = curl_multi_init();
	if (!h->user_agent || !h->run || !h->multi)
		return ow_err(OW_ENOMEM, "cannot create the transfer engine: out of memory");
	curl_multi_setopt(h->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)h->o.per_host);
	curl_multi_setopt(h->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)h->o.jobs);
	h->rng = (uint64_t)now_ms() * 2654435761u ^ (uint64_t)getpid() ^ (uintptr_t)h;
	h->rng |= 1;
	return 0;
}

int ow_http_new(struct ow_http **out, const struct ow_http_opts *opts)
{
	*out = NULL;
	int lrc = curl_ready();
	if (lrc)
		return lrc;
	struct ow_http *h = calloc(1, sizeof *h);
	if (!h)
		return ow_err(OW_ENOMEM, "cannot create the transfer engine: out of memory");
	if (opts)
		h->o = *opts;
	else
		ow_http_opts_default(&h->o);
	int rc = check_opts(&h->o);
	if (!rc)
		rc = engine_setup(h);
	if (rc) {
		ow_http_free(h);
		return rc;
	}
	*out = h;
	return 0;
}

void ow_http_free(struct ow_http *h)
{
	if (!h)
		return;
	for (struct xfer *x = h->head; x; x = x->next)
		if (x->state == X_RUNNING)
			detach(x);
	while (h->head) {
		struct xfer *x = h->head;
		h->head = x->next;
		free(x);
	}
	if (h->multi)
		curl_multi_cleanup(h->multi);
	free(h->run);
	free(h->ca_file);
	free(h->user_agent);
	free(h);
}

static int init_xfer(struct xfer *x, struct ow_http *h, struct ow_http_req *q)
{
	x->h = h;
	x->req = q;
	memset(&q->res, 0, sizeof q->res);
	x->cap = q->max_size ? q->max_size : h->o.max_size;
	x->pos = q->resume_from;
	x->started = now_ms();
	x->not_before = x->started;
	if (q->if_range && q->resume_from)
		copy_str(x->validator, sizeof x->validator, q->if_range);
	copy_str(x->url, sizeof x->url, q->url ? q->url : "");
	if (!q->url || !q->on_data)
		decide(x, V_FATAL, OW_EINVAL, "request without URL or data sink");
	else if (ranged(q) && (q->resume_from || !strncasecmp(q->url, "file:", 5) ||
	                       (!(q->flags & OW_HTTP_RANGE_SUFFIX) &&
	                        q->range_off > UINT64_MAX - q->range_len)))
		decide(x, V_FATAL, OW_EINVAL, "a range request is for http(s), without resume_from, "
		       "and within 2^64 bytes");
	else if (!check_hop(x, q->url, 0)) {
		set_url(x, q->url);
		x->visited[x->nvisited++] = ow_fnv1a(q->url);
		return 0;
	}
	return -1;
}

int ow_http_add(struct ow_http *h, struct ow_http_req *req)
{
	struct xfer *x = calloc(1, sizeof *x);
	if (!x)
		return ow_err(OW_ENOMEM, "cannot queue %s: out of memory", req->url);
	x->state = X_QUEUED;
	if (h->tail)
		h->tail->next = x;
	else
		h->head = x;
	h->tail = x;
	if (init_xfer(x, h, req)) {
		finish(x, x->rc);
		return ow_err(x->rc, "%s", req->res.detail);
	}
	return 0;
}

static int has_work(const struct ow_http *h)
{
	for (const struct xfer *x = h->head; x; x = x->next)
		if (x->state != X_DONE)
			return 1;
	return 0;
}

/* ow_http_interrupt: the flag every engine obeys, and the engine inside
 * ow_http_run now (one at a time: the runs are not nested). */
static volatile sig_atomic_t interrupted;
static struct ow_http *_Atomic running;

static int run_loop(struct ow_http *h)
{
	reap(h);
	while (has_work(h)) {
		int still = 0;
		if (h->cancel || interrupted)
			cancel_all(h);
		start_ready(h);
		if (curl_multi_perform(h->multi, &still) != CURLM_OK)
			return ow_err(OW_EINTERNAL, "curl_multi_perform failed");
		drain(h);
		reap(h);
		start_ready(h); /* retries, redirects and adds from on_done */
		if (has_work(h) && curl_multi_poll(h->multi, NULL, 0, (int)next_wait_ms(h), NULL) != CURLM_OK)
			return ow_err(OW_EINTERNAL, "curl_multi_poll failed");
	}
	int rc = h->first_rc;
	h->first_rc = 0;
	return rc ? ow_err(rc, "%s", h->first_detail) : 0;
}

int ow_http_run(struct ow_http *h)
{
	atomic_store(&running, h);
	int rc = run_loop(h);
	atomic_store(&running, NULL);
	return rc;
}

void ow_http_cancel(struct ow_http *h) { h->cancel = 1; }

void ow_http_interrupt(void)
{
	interrupted = 1;
	struct ow_http *h = atomic_load(&running);
	if (h)
		ow_http_cancel(h);
}

int ow_http_interrupted(void) { return interrupted != 0; }

/* ---- memory sink and the one-shot helper -------------------------------------- */

int ow_http_membuf_write(void *ud, const void *buf, size_t len)
{
	struct ow_http_membuf *m = ud;
	if (len > m->cap - m->len)
		return ow_err(OW_ETOOBIG, "body is larger than %zu bytes", m->cap);
	if (m->len + len + 1 > m->alloc) {
		size_t want = m->alloc ? m->alloc : 16384;
		while (want < m->len + len + 1)
			want *= 2;
		char *p = realloc(m->data, want);
		if (!p)
			return ow_err(OW_ENOMEM, "out of memory for a %zu-byte body", m->len + len);
		m->data = p;
		m->alloc = want;
	}
	memcpy(m->data + m->len, buf, len);
	m->len += len;
	m->data[m->len] = '\0';
	return 0;
}

int ow_http_membuf_restart(void *ud)
{
	struct ow_http_membuf *m = ud;
	m->len = 0;
	if (m->data)
		m->data[0] = '\0';
	return 0;
}

void ow_http_membuf_free(struct ow_http_membuf *m)
{
	if (!m)
		return;
	free(m->data);
	memset(m, 0, sizeof *m);
}

int ow_http_get_buffer(const struct ow_http_opts *opts, struct ow_http_req *req,
                       size_t cap, char **out, size_t *len)
{
	struct ow_http *h;
	struct ow_http_membuf m = {.cap = cap};
	*out = NULL;
	*len = 0;
	int rc = ow_http_new(&h, opts);
	if (rc)
		return rc;
	req->on_data = ow_http_membuf_write;
	req->on_restart = ow_http_membuf_restart;
	req->on_done = NULL;
	req->ud = &m;
	req->resume_from = 0;
	if (!req->max_size || req->max_size > cap)
		req->max_size = cap;
	rc = ow_http_add(h, req);
	if (!rc)
		rc = ow_http_run(h);
	ow_http_free(h);
	if (rc || req->res.not_modified) {
		ow_http_membuf_free(&m);
		return rc;
	}
	if (!m.data && !(m.data = calloc(1, 1)))
		return ow_err(OW_ENOMEM, "out of memory");
	*out = m.data;
	*len = m.len;
	return 0;
}

/* ---- one request of any method (http.h: ow_http_call) ------------------------ */

struct ow_http_conn {
	struct ow_http_opts o;
	char *ca_file;
	char *user_agent;
	CURL *easy;
	uint64_t rng;
};

int ow_http_conn_new(struct ow_http_conn **out, const struct ow_http_opts *opts)
{
	*out = NULL;
	int rc = curl_ready();
	if (rc)
		return rc;
	struct ow_http_conn *c = calloc(1, sizeof *c);
	if (!c)
		return ow_err(OW_ENOMEM, "out of memory");
	if (opts)
		c->o = *opts;
	else
		ow_http_opts_default(&c->o);
	rc = pick_ca_file(&c->o, &c->ca_file);
	if (!rc && !(c->user_agent = strdup(c->o.user_agent ? c->o.user_agent : "offwheel/" OW_VERSION)))
		rc = ow_err(OW_ENOMEM, "out of memory");
	if (!rc && !(c->easy = curl_easy_init()))
		rc = ow_err(OW_ENOMEM, "cannot create a libcurl handle");
	c->rng = (uint64_t)now_ms() * 0x9E3779B97F4A7C15ull + (uint64_t)(uintptr_t)c;
	if (rc) {
		ow_http_conn_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

void ow_http_conn_free(struct ow_http_conn *c)
{
	if (!c)
		return;
	if (c->easy)
		curl_easy_cleanup(c->easy);
	free(c->ca_file);
	free(c->user_agent);
	free(c);
}

struct call_run {
	struct ow_http_call *c;
	uint64_t sent;   /* request body bytes handed to libcurl */
	uint64_t got;    /* response body bytes */
	uint64_t cap;
	int sink_rc;     /* the caller's sink refused */
	int read_err;    /* errno of a failed pread */
	size_t err_len;
	long status;     /* of the response being read */
	const char *shown; /* the URL for messages: userinfo as "***" */
	long stall_s;      /* no byte either way for this long: stalled */
	int64_t last_move; /* when bytes last moved (ms) */
	curl_off_t moved;  /* bytes up and down so far */
	int stalled;
};

/* Nothing at all moved for stall_s: curl's own low-speed check averages
 * over a window of several seconds, so a burst then silence goes unnoticed
 * for long (the transfer engine's check_silence, for calls). */
static int call_progress_cb(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct call_run *r = ud;
	int64_t t = now_ms();
	(void)dt, (void)ut;
	if (dn + un != r->moved) {
		r->moved = dn + un;
		r->last_move = t;
	}
	r->stalled = r->stall_s > 0 && t - r->last_move > r->stall_s * 1000;
	return r->stalled;
}

static size_t call_read_cb(char *buf, size_t size, size_t nitems, void *ud)
{
	struct call_run *r = ud;
	struct ow_http_call *c = r->c;
	size_t want = size * nitems;
	uint64_t left = c->body_len - r->sent;
	if (want > left)
		want = (size_t)left;
	if (!want)
		return 0;
	if (c->body) {
		memcpy(buf, (const char *)c->body + r->sent, want);
	} else {
		ssize_t n;
		do
			n = pread(c->body_fd, buf, want, (off_t)(c->body_off + r->sent));
		while (n < 0 && errno == EINTR);
		if (n <= 0) {
			r->read_err = n < 0 ? errno : EIO;
			return CURL_READFUNC_ABORT;
		}
		want = (size_t)n;
	}
	r->sent += want;
	return want;
}

static int call_seek_cb(void *ud, curl_off_t off, int origin)
{
	struct call_run *r = ud;
	if (origin != SEEK_SET || off < 0 || (uint64_t)off > r->c->body_len)
		return CURL_SEEKFUNC_CANTSEEK;
	r->sent = (uint64_t)off;
	return CURL_SEEKFUNC_OK;
}

static size_t call_write_cb(char *p, size_t size, size_t nmemb, void *ud)
{
	struct call_run *r = ud;
	struct ow_http_call *c = r->c;
	size_t n = size * nmemb;
	if (r->status < 200 || r->status > 299) { /* keep the start of an error page */
		size_t room = sizeof c->error_body - 1 - r->err_len;
		size_t k = n < room ? n : room;
		memcpy(c->error_body + r->err_len, p, k);
		r->err_len += k;
		c->error_body[r->err_len] = '\0';
		return n;
	}
	if (r->got + n > r->cap) {
		r->sink_rc = ow_err(OW_ETOOBIG, "%s %s: the answer is over the %llu-byte cap (HTTP "
		                    "%ld) — the server sent more than this can be; check the URL "
		                    "and the server", c->method, r->shown, (unsigned long long)r->cap,
		                    r->status);
		return 0;
	}
	r->got += n;
	if (c->on_data) {
		int rc = c->on_data(c->ud, p, n);
		if (rc) {
			r->sink_rc = ow_code(rc);
			return 0;
		}
	}
	return n;
}

static size_t call_header_cb(char *p, size_t size, size_t nitems, void *ud)
{
	struct call_run *r = ud;
	struct ow_http_call *c = r->c;
	size_t n = size * nitems;
	if (n > 5 && !strncmp(p, "HTTP/", 5)) { /* a new response (100 Continue first) */
		const char *sp = memchr(p, ' ', n);
		r->status = sp ? strtol(sp + 1, NULL, 10) : 0;
		for (int i = 0; i < OW_HTTP_CALL_CAPTURE; i++)
			c->captured[i][0] = '\0';
		return n;
	}
	const char *colon = memchr(p, ':', n);
	if (!colon)
		return n;
	size_t nl = (size_t)(colon - p);
	for (int i = 0; i < OW_HTTP_CALL_CAPTURE && c->capture[i]; i++) {
		if (strlen(c->capture[i]) != nl || strncasecmp(p, c->capture[i], nl))
			continue;
		const char *v = colon + 1, *end = p + n;
		while (v < end && (*v == ' ' || *v == '\t'))
			v++;
		while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
			end--;
		size_t vl = (size_t)(end - v);
		if (vl >= sizeof c->captured[i] || !validator_ok(v, vl, sizeof c->captured[i] - 1))
			vl = 0;
		memcpy(c->captured[i], v, vl);
		c->captured[i][vl] = '\0';
	}
	return n;
}

static int call_retryable(long status)
{
	return status == 408 || status == 429 || status == 500 || status == 502 ||
	       status == 503 || status == 504;
}

/* One attempt: 0 = the response is final (any status), else a curl code. */
static CURLcode call_attempt(struct ow_http_conn *k, struct call_run *r, struct curl_slist *hdrs,
                             char *errbuf)
{
	struct ow_http_call *c = r->c;
	CURL *e = k->easy;
	curl_easy_reset(e);
	errbuf[0] = '\0';
	curl_easy_setopt(e, CURLOPT_URL, c->url);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, (c->flags & OW_HTTP_ALLOW_HTTP) ? "https,http" : "https");
	curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
	if (k->ca_file)
		curl_easy_setopt(e, CURLOPT_CAINFO, k->ca_file);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, k->o.connect_timeout_ms);
	curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, k->o.low_speed_bytes);
	curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, k->o.low_speed_time_s);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, k->o.attempt_timeout_ms);
	curl_easy_setopt(e, CURLOPT_USERAGENT, k->user_agent);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, call_write_cb);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, call_header_cb);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, call_progress_cb);
	curl_easy_setopt(e, CURLOPT_XFERINFODATA, r);
	curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(e, CURLOPT_BUFFERSIZE, 256L * 1024);
	curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
	if (c->aws_sigv4) {
		curl_easy_setopt(e, CURLOPT_AWS_SIGV4, c->aws_sigv4);
		curl_easy_setopt(e, CURLOPT_USERPWD, c->userpwd);
	}
	int up = !strcmp(c->method, "PUT") || (!strcmp(c->method, "POST") && c->body_len);
	if (up) {
		curl_easy_setopt(e, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(e, CURLOPT_INFILESIZE_LARGE, (curl_off_t)c->body_len);
		curl_easy_setopt(e, CURLOPT_READFUNCTION, call_read_cb);
		curl_easy_setopt(e, CURLOPT_READDATA, r);
		curl_easy_setopt(e, CURLOPT_SEEKFUNCTION, call_seek_cb);
		curl_easy_setopt(e, CURLOPT_SEEKDATA, r);
		curl_easy_setopt(e, CURLOPT_UPLOAD_BUFFERSIZE, 256L * 1024);
		if (strcmp(c->method, "PUT"))
			curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, c->method);
	} else if (!strcmp(c->method, "HEAD")) {
		curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
	} else if (!strcmp(c->method, "POST")) {
		curl_easy_setopt(e, CURLOPT_POST, 1L);
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)0);
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, "");
	} else if (strcmp(c->method, "GET")) {
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, c->method);
	}
	return curl_easy_perform(e);
}

/* A timeout named by what happened: the store stopped sending (curl's
 * low-speed check: under low_speed_bytes a second for low_speed_time_s), or
 * the attempt's whole time ran out. */
static void call_timeout_detail(const struct ow_http_conn *k, const struct call_run *r,
                                int64_t ms, char *out, size_t n)
{
	const struct ow_http_call *c = r->c;
	long lim = k->o.low_speed_time_s;
	if (k->o.attempt_timeout_ms > 0 && ms + 100 >= k->o.attempt_timeout_ms)
		snprintf(out, n, "%s %s: no complete answer within %.0f s (%llu body bytes) — the "
		         "server is too slow or hung; try again later", c->method, r->shown,
		         (double)k->o.attempt_timeout_ms / 1000.0, (unsigned long long)r->got);
	else if (r->status)
		snprintf(out, n, "%s %s: stalled after %llu bytes (HTTP %ld, no data for %ld s) — the "
		         "server stopped sending; check it and try again", c->method, r->shown,
		         (unsigned long long)r->got, r->status, lim);
	else
		snprintf(out, n, "%s %s: no answer for %ld s (stalled before the response headers) "
		         "— the server is hung; check it and try again", c->method, r->shown, lim);
}

static void call_sleep(struct ow_http_conn *k, unsigned attempts)
{
	long d = backoff_delay(&k->o, attempts, xorshift(&k->rng));
	struct timespec ts = {d / 1000, (d % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

int ow_http_call(struct ow_http_conn *k, struct ow_http_call *c)
{
	struct curl_slist *hdrs = NULL;
	char errbuf[CURL_ERROR_SIZE];
	c->status = 0;
	c->attempts = 0;
	c->received = 0;
	c->error_body[0] = c->detail[0] = '\0';
	for (int i = 0; i < OW_HTTP_CALL_CAPTURE; i++)
		c->captured[i][0] = '\0';
	for (int i = 0; i < OW_HTTP_CALL_HEADERS && c->headers[i]; i++) {
		struct curl_slist *n = curl_slist_append(hdrs, c->headers[i]);
		if (!n) {
			curl_slist_free_all(hdrs);
			return ow_err(OW_ENOMEM, "out of memory");
		}
		hdrs = n;
	}
	int64_t start = now_ms();
	int rc = 0;
	char shown[512]; /* cut with "..." to leave the detail room for the cause */
	ow_url_printable(c->url, shown, sizeof shown);
	for (;;) {
		int64_t t0 = now_ms();
		struct call_run r = {.c = c, .cap = c->max_size ? c->max_size : 64u << 20,
		                     .shown = shown, .stall_s = k->o.low_speed_time_s,
		                     .last_move = t0};
		c->attempts++;
		c->error_body[0] = '\0';
		CURLcode cc = call_attempt(k, &r, hdrs, errbuf);
		c->received = r.got;
		c->status = r.status;
		int again = 0;
		if (r.sink_rc) {
			rc = r.sink_rc;
			snprintf(c->detail, sizeof c->detail, "%s", ow_err_detail());
		} else if (r.read_err) {
			rc = OW_EIO;
			snprintf(c->detail, sizeof c->detail, "%s %s: reading the body to send failed: %s",
			         c->method, shown, strerror(r.read_err));
		} else if (cc != CURLE_OK) {
			int timeout = cc == CURLE_OPERATION_TIMEDOUT || r.stalled;
			rc = is_tls_error(cc) ? OW_ETLS : timeout ? OW_ETIMEOUT : OW_ENET;
			again = rc != OW_ETLS && (is_transient(cc) || timeout);
			if (rc == OW_ETIMEOUT)
				call_timeout_detail(k, &r, now_ms() - t0, c->detail, sizeof c->detail);
			else
				snprintf(c->detail, sizeof c->detail, "%s %s: %s%s%s", c->method, shown,
				         errbuf[0] ? errbuf : curl_easy_strerror(cc),
				         r.status ? " (the answer broke off)" : "",
				         rc == OW_ETLS ? " — check the host name and the system clock; for a "
				                         "private CA pass --cert FILE (or set SSL_CERT_FILE)" : "");
		} else if (r.status >= 200 && r.status <= 299) {
			rc = 0;
		} else {
			rc = r.status == 404 ? OW_ENOENT : r.status == 401 || r.status == 403 ? OW_EPOLICY
			                                                                      : OW_EHTTP;
			again = call_retryable(r.status);
			snprintf(c->detail, sizeof c->detail, "%s %s: HTTP %ld", c->method, shown, r.status);
		}
		if (!again || c->attempts >= k->o.max_attempts ||
		    now_ms() - start > k->o.retry_budget_ms)
			break;
		if (c->on_restart && r.got && (rc = c->on_restart(c->ud)) != 0) {
			snprintf(c->detail, sizeof c->detail, "%s", ow_err_detail());
			break;
		}
		call_sleep(k, c->attempts);
	}
	curl_slist_free_all(hdrs);
	if (rc)
		ow_err(rc, "%s", c->detail);
	return rc;
}
