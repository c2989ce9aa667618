/* http.c - the transfer engine on one curl multi handle (see http.h).
 *
 * Shape after curl's own tool: one multi handle, curl_multi_poll +
 * curl_multi_info_read, per-transfer state through CURLINFO_PRIVATE.  Each
 * attempt gets a fresh easy handle (connections stay cached in the multi);
 * queueing, caps, redirects, retries and resume are ours, so every hop and
 * every response is checked here rather than trusted to libcurl. */
#include "http.h"

#include <errno.h>
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
#include "array.h"
#include "event.h"
#include "bytes.h"
#include "clock.h"
#include "fsbeneath.h"
#include "fsutil.h"
#include "httpcurl.h"
#include "httpresp.h"
#include "httpretry.h"
#include "url.h"
#include "urlint.h"

#define MAX_VISITED 32
#define DISCARD_MAX (1u << 20) /* bytes of an error page we read and drop */
#define PROGRESS_MS 250

enum verdict { V_NONE, V_OK, V_FATAL, V_RETRY, V_RESTART, V_REDIRECT };
enum xstate { X_QUEUED, X_RUNNING, X_DONE };

struct xfer {
	ow_http *h;
	struct ow_http_req *req;
	struct xfer *next;
	enum xstate state;
	CURL *easy;
	struct curl_slist *hdrs;
	char url[OW_URL_MAX_LEN + 1]; /* current hop: as long as a link may be (url.h) */
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
	int login;         /* this attempt sent a login: its ow_login_source, else 0 */
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
	struct ow_http_resp r;
	enum verdict v; /* decision about the current attempt */
	int rc;
	long delay_ms; /* for V_RETRY; -1 = own backoff */
	char errbuf[CURL_ERROR_SIZE];
};

struct ow_http_pool {
	CURLSH *sh;
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

static void copy_str(char *dst, size_t n, const char *src)
{
	size_t l = strnlen(src, n - 1);
	memcpy(dst, src, l);
	dst[l] = '\0';
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
OW_PRINTF(4, 5)
static void decide(struct xfer *x, enum verdict v, int rc, const char *fmt, ...)
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

static void append_detail(struct xfer *x, const char *fmt, ...) OW_PRINTF(2, 3);
static void append_detail(struct xfer *x, const char *fmt, ...)
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
	size_t len = strlen(url);
	if (len >= sizeof x->url) {
		decide(x, V_FATAL, OW_EPOLICY, "%s %.300s... refused: %zu bytes, longer than the %d "
		       "a URL may be", how, url, len, OW_URL_MAX_LEN);
		return -1;
	}
	if (url_part(url, CURLUPART_SCHEME, scheme, sizeof scheme)) {
		decide(x, V_FATAL, OW_EPOLICY, "%s %.300s refused: malformed URL", how, url);
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
	if (ow_http_resp_line(&x->r, p, n) == OW_HTTP_LINE_END && x->r.status >= 200 &&
	    begin_body(x))
		return 0;
	return n;
}

/* ---- body checks ------------------------------------------------------------ */

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
	if (ow_http_crange_parse(x->r.crange, &a, &t) || a != x->range_from || (want && t && t != want)) {
		decide(x, V_RESTART, OW_EHTTP,
		       "206 with Content-Range '%s' does not continue at byte %llu; restarting "
		       "from zero without Range", x->r.crange, (unsigned long long)x->range_from);
		x->no_range = 1;
		return -1;
	}
	if (x->range_basis == OW_HTTP_RESUME_IF_RANGE && !ow_http_same_validator(&x->r, x->validator)) {
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
	ow_http *h = x->h;
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

/* The answer to a range request: only a 206 for exactly the range asked for
 * (cut at the end of the file), with the file's size, goes to the sink.  A
 * 200 carries the whole file: it is cut off here, before its first body
 * byte, and flagged for the caller. */
static int begin_range(struct xfer *x)
{
	struct ow_http_req *q = x->req;
	char asked[64];
	uint64_t a, t, wa, wb, last;
	ow_http_range_text(q, asked, sizeof asked);
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
	if (ow_http_crange_exact(x->r.crange, &a, &last, &t) || ow_http_range_wanted(q, t, &wa, &wb) || a != wa ||
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
	if (q->if_range && *q->if_range && !ow_http_same_validator(&x->r, q->if_range)) {
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
		decide(x, V_FATAL, ow_http_sink_code(rc),
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
	copy_str(x->validator, sizeof x->validator, ow_http_resp_validator(&x->r));
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

/* OW_HTTP_RANGE_OR_WHOLE: the 200 to a range request is the whole file and
 * the caller takes it.  From here on the request is a plain GET of the
 * whole body (a retry resumes or restarts it as any download's). */
static void range_to_whole(struct xfer *x)
{
	struct ow_http_req *q = x->req;
	q->res.range_ignored = 1;
	q->range_off = q->range_len = 0;
	q->flags &= ~OW_HTTP_RANGE_SUFFIX;
	q->expected_size = 0;
	q->if_range = NULL;
	q->max_size = q->whole_max_size;
	x->cap = q->max_size ? q->max_size : x->h->o.max_size;
	x->rlen = 0;
	ow_log(OW_LOG_DEBUG, "%s: the server answered the range with the whole file; taking it",
	       label(x));
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
	if (ranged(x->req) && x->r.status == 200 && (x->req->flags & OW_HTTP_RANGE_OR_WHOLE))
		range_to_whole(x);
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
		decide(x, V_FATAL, ow_http_sink_code(rc),
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

static const char *cerr(const struct xfer *x, CURLcode c)
{
	return x->errbuf[0] ? x->errbuf : curl_easy_strerror(c);
}

static void classify_curl(struct xfer *x, CURLcode c)
{
	const struct ow_http_opts *o = &x->h->o;
	if (ow_http_curl_tls_error(c))
		decide(x, V_FATAL, OW_ETLS,
		       "TLS failed: %s — check the host name and the system clock; for a "
		       "private CA pass --cert FILE (or set SSL_CERT_FILE)", cerr(x, c));
	else if (c == CURLE_OPERATION_TIMEDOUT)
		decide(x, V_RETRY, OW_ETIMEOUT,
		       "timed out (%s; stall limit %ld s below %ld B/s) — check the network or "
		       "raise the timeouts", cerr(x, c), o->low_speed_time_s, o->low_speed_bytes);
	else if (ow_http_curl_transient(c))
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

static void follow_redirect(struct xfer *x, const char *loc)
{
	unsigned max = x->h->o.max_redirects;
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

static void classify_redirect(struct xfer *x)
{
	char *loc = NULL, *bare = NULL;
	size_t ui, n;
	curl_easy_getinfo(x->easy, CURLINFO_REDIRECT_URL, &loc);
	if (!loc) {
		decide(x, V_FATAL, OW_EHTTP, "HTTP %ld without a usable Location", x->r.status);
		return;
	}
	/* libcurl writes the login it sent into the redirect URL it resolves
	 * (user:password@): never kept, shown or sent on from there; the next
	 * hop gets the login that belongs to its own host, if any */
	ow_url_userinfo_span(loc, &ui, &n);
	if (x->login && ui && asprintf(&bare, "%.*s%s", (int)ui, loc, loc + ui + n + 1) < 0)
		bare = NULL;
	if (x->login && ui && !bare)
		decide(x, V_FATAL, OW_ENOMEM, "out of memory");
	else
		follow_redirect(x, bare ? bare : loc);
	free(bare);
}

/* How the current attempt was sent, for ow_http_classify. */
static unsigned sent_as(const struct xfer *x)
{
	return (x->is_file ? OW_HTTP_SENT_FILE : 0) | (x->conditional ? OW_HTTP_SENT_CONDITIONAL : 0) |
	       (ranged(x->req) ? OW_HTTP_SENT_RANGE : 0) | (x->range_from ? OW_HTTP_SENT_RESUME : 0) |
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
		decide(x, V_FATAL, OW_EHTTP, "HTTP 416 to Range %s: the file has no such bytes "
		       "(Content-Range '%s') — the index and the file disagree", asked, x->r.crange);
		return;
	}
	decide(x, V_RESTART, OW_EHTTP, "HTTP 416 to Range bytes=%llu- — the file is not "
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
		decide(x, V_FATAL, OW_EAUTH, "authentication required by %s (HTTP 401): give "
		       "credentials in %s (machine %.255s login USER password PASS) or in the URL "
		       "(%s://USER:PASS@%s/...)", where, netrc, u.host ? u.host : where,
		       u.scheme ? u.scheme : "https", where);
	else
		decide(x, V_FATAL, OW_EAUTH, "credentials refused by %s (HTTP %ld): the login %s "
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
		decide(x, V_FATAL, OW_EHTTP,
		       "HTTP 304 Not Modified to a request that was not conditional (no If-None-Match "
		       "or If-Modified-Since was sent) — a proxy or captive portal is answering in "
		       "the server's place; check the network, or use another mirror");
		break;
	case OW_HTTP_CLASS_NOT_MODIFIED: classify_not_modified(x); break;
	case OW_HTTP_CLASS_REDIRECT: classify_redirect(x); break;
	case OW_HTTP_CLASS_RANGE_MISSING:
	case OW_HTTP_CLASS_RESUME_REFUSED: classify_416(x, k); break;
	case OW_HTTP_CLASS_NOT_FOUND:
		decide(x, V_FATAL, OW_ENOENT, "not found (HTTP %ld) — check the name and the index "
		       "URL", st);
		break;
	case OW_HTTP_CLASS_AUTH_REQUIRED:
	case OW_HTTP_CLASS_AUTH_REFUSED: classify_auth(x, k); break;
	case OW_HTTP_CLASS_RETRY: classify_retryable_status(x); break;
	default: decide(x, V_FATAL, OW_EHTTP, "unexpected HTTP status %ld", st); break;
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
	ow_http *h = x->h;
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

static long backoff_ms(struct xfer *x)
{
	return ow_http_backoff_ms(&x->h->o, x->req->res.attempts, &x->h->rng);
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
		ow_http_range_text(q, asked, sizeof asked);
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

/* The login for this hop's own URL, when there is one (ow_logins_find):
 * each attempt is a fresh easy handle and libcurl follows no redirect, so
 * a login set here goes to this URL's host and nowhere else. */
static void set_login(struct xfer *x)
{
	struct ow_login lg;
	if (x->is_file || ow_logins_find(x->h->o.logins, x->url, &lg) != 1)
		return;
	curl_easy_setopt(x->easy, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
	curl_easy_setopt(x->easy, CURLOPT_USERNAME, lg.user);
	curl_easy_setopt(x->easy, CURLOPT_PASSWORD, lg.password);
	x->login = (int)lg.source;
}

static void set_options(struct xfer *x)
{
	CURL *e = x->easy;
	const ow_http *h = x->h;
	curl_easy_setopt(e, CURLOPT_URL, x->url);
	curl_easy_setopt(e, CURLOPT_PRIVATE, x);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
	ow_http_curl_common(e, &h->o, h->ca_file, h->user_agent);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, protocols(x));
	curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "https");
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->hdrs);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, xferinfo_cb);
	curl_easy_setopt(e, CURLOPT_XFERINFODATA, x);
	curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
	if (h->o.pool) { /* one connection per host, its streams shared */
		curl_easy_setopt(e, CURLOPT_SHARE, h->o.pool->sh);
		curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
	}
	set_login(x);
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
	x->login = 0;
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
	ow_http *h = x->h;
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
	ow_http *h = x->h;
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

static unsigned host_running(const ow_http *h, const char *host)
{
	unsigned n = 0;
	for (unsigned i = 0; i < h->nrun; i++)
		n += !strcmp(h->run[i]->host, host);
	return n;
}

static void start_ready(ow_http *h)
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

static void drain(ow_http *h)
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

static void reap(ow_http *h)
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

static long next_wait_ms(const ow_http *h)
{
	int64_t t = now_ms(), w = 1000;
	for (const struct xfer *x = h->head; x; x = x->next)
		if (x->state == X_QUEUED && x->not_before > t && x->not_before - t < w)
			w = x->not_before - t;
	return (long)w;
}

static void cancel_all(ow_http *h)
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

static int pick_ca(ow_http *h)
{
	return ow_http_pick_ca_file(&h->o, &h->ca_file);
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

static int engine_setup(ow_http *h)
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
	h->rng = ow_http_rng_seed(h);
	return 0;
}

int ow_http_new(ow_http **out, const struct ow_http_opts *opts)
{
	*out = NULL;
	int lrc = ow_http_curl_ready();
	if (lrc)
		return lrc;
	ow_http *h = calloc(1, sizeof *h);
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

int ow_http_pool_new(ow_http_pool **out)
{
	*out = NULL;
	int rc = ow_http_curl_ready();
	if (rc)
		return rc;
	ow_http_pool *p = calloc(1, sizeof *p);
	if (!p || !(p->sh = curl_share_init())) {
		free(p);
		return ow_err(OW_ENOMEM, "cannot create a connection pool: out of memory");
	}
	/* no lock callbacks: one engine at a time, in one thread (http.h) */
	static const curl_lock_data what[] = {CURL_LOCK_DATA_CONNECT, CURL_LOCK_DATA_SSL_SESSION,
	                                      CURL_LOCK_DATA_DNS};
	for (size_t i = 0; i < sizeof what / sizeof *what; i++)
		if (curl_share_setopt(p->sh, CURLSHOPT_SHARE, what[i]) != CURLSHE_OK) {
			ow_http_pool_free(p);
			return ow_err(OW_EUNSUPPORTED, "this libcurl cannot share connections between "
			              "transfer engines — install libcurl 7.57 or later");
		}
	*out = p;
	return 0;
}

void ow_http_pool_free(ow_http_pool *p)
{
	if (!p)
		return;
	if (p->sh)
		curl_share_cleanup(p->sh);
	free(p);
}

void ow_http_free(ow_http *h)
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

static int init_xfer(struct xfer *x, ow_http *h, struct ow_http_req *q)
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

int ow_http_add(ow_http *h, struct ow_http_req *req)
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

static int has_work(const ow_http *h)
{
	for (const struct xfer *x = h->head; x; x = x->next)
		if (x->state != X_DONE)
			return 1;
	return 0;
}

/* ow_http_interrupt: the flag every engine obeys, and the engine inside
 * ow_http_run now (one at a time: the runs are not nested). */
static volatile sig_atomic_t interrupted;
static ow_http *_Atomic running;

static int run_loop(ow_http *h)
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

int ow_http_run(ow_http *h)
{
	atomic_store(&running, h);
	int rc = run_loop(h);
	atomic_store(&running, NULL);
	return rc;
}

void ow_http_cancel(ow_http *h) { h->cancel = 1; }

void ow_http_interrupt(void)
{
	interrupted = 1;
	ow_http *h = atomic_load(&running);
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
	size_t need = m->len + len + 1;
	/* the first block 16 kB, an index page's size; doubled from there */
	char *p = ow_array_reserve(m->data, &m->alloc, need < 16384 ? 16384 : need, 1);
	if (!p)
		return ow_err(OW_ENOMEM, "out of memory for a %zu-byte body", m->len + len);
	m->data = p;
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

void ow_http_membuf_dispose(struct ow_http_membuf *m)
{
	if (!m)
		return;
	free(m->data);
	memset(m, 0, sizeof *m);
}

int ow_http_get_buffer(const struct ow_http_opts *opts, struct ow_http_req *req,
                       size_t cap, char **out, size_t *len)
{
	ow_http *h;
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
		ow_http_membuf_dispose(&m);
		return rc;
	}
	if (!m.data && !(m.data = calloc(1, 1)))
		return ow_err(OW_ENOMEM, "out of memory");
	*out = m.data;
	*len = m.len;
	return 0;
}
