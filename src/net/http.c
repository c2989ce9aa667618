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
#include "httpint.h"
#include "httpretry.h"
#include "url.h"
#include "urlint.h"

static int64_t now_ms(void)
{
	return ow_mono_ms();
}

/* ---- response headers ------------------------------------------------------ */

static size_t header_cb(char *p, size_t size, size_t nitems, void *ud)
{
	struct xfer *x = ud;
	size_t n = size * nitems;
	const struct ow_http_opts *o = &x->h->o;
	x->hdr_bytes += n;
	x->rx += n;
	x->last_byte = now_ms();
	if (++x->hdr_count > o->header_max_count || x->hdr_bytes > o->header_max_bytes) {
		hx_decide(x, V_FATAL, OW_ETOOBIG,
		       "response headers exceed %u lines or %zu bytes — the server is "
		       "misbehaving; try another mirror", o->header_max_count, o->header_max_bytes);
		return 0;
	}
	if (ow_http_resp_line(&x->r, p, n) == OW_HTTP_LINE_END && x->r.status >= 200 &&
	    hx_begin_body(x))
		return 0;
	return n;
}

/* ---- body bytes ----------------------------------------------------------- */

static int sink_bytes(struct xfer *x, const char *p, size_t n)
{
	struct ow_http_req *q = x->req;
	if (hx_ranged(q) && x->pos + n > x->rlen) {
		hx_decide(x, V_FATAL, OW_EHTTP, "body is longer than the %llu bytes of the range its "
		       "Content-Range announced — the server is broken", (unsigned long long)x->rlen);
		return -1;
	}
	if (hx_ranged(q)) {
		/* bounded by the range above */
	} else if (x->pos + n > x->cap || (q->expected_size && x->pos + n > q->expected_size)) {
		uint64_t lim = q->expected_size && q->expected_size < x->cap ? q->expected_size : x->cap;
		hx_decide(x, V_FATAL, OW_ETOOBIG,
		       "body is longer than %llu bytes (the %s) — refusing the rest",
		       (unsigned long long)lim, lim == x->cap ? "size cap" : "expected size");
		return -1;
	}
	int rc = q->on_data(q->ud, p, n);
	if (rc) {
		hx_decide(x, V_FATAL, ow_http_sink_code(rc),
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
	uint64_t tot = hx_ranged(x->req)          ? x->rlen
	               : x->req->expected_size ? x->req->expected_size
	                                       : x->total;
	ow_progress(hx_label(x), x->pos, tot);
}

static size_t write_cb(char *p, size_t size, size_t nmemb, void *ud)
{
	struct xfer *x = ud;
	size_t n = size * nmemb;
	if (hx_begin_body(x))
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
	hx_decide(x, V_RETRY, OW_ETIMEOUT,
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
	hx_decide(x, V_RETRY, OW_ETIMEOUT,
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
	hx_decide(x, V_FATAL, OW_ETIMEOUT,
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

/* ---- scheduling -------------------------------------------------------------- */

static void finish(struct xfer *x, int rc)
{
	ow_http *h = x->h;
	struct ow_http_result *res = &x->req->res;
	res->rc = rc;
	res->bytes = x->pos;
	if (!res->effective_url[0])
		hx_copy_str(res->effective_url, sizeof res->effective_url, x->url);
	if (rc == 0)
		res->detail[0] = '\0';
	else if (!h->first_rc) {
		h->first_rc = rc;
		hx_copy_str(h->first_detail, sizeof h->first_detail, res->detail);
	}
	x->state = X_DONE;
	hx_unreserve(x);
	ow_progress_done(hx_label(x), x->pos);
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
		hx_append_detail(x, " (gave up after %u attempts)", att);
		finish(x, x->rc);
	} else if (now_ms() + d - x->started > o->retry_budget_ms) {
		hx_append_detail(x, " (gave up after %u attempts: retry budget of %ld ms spent)", att,
		              o->retry_budget_ms);
		finish(x, x->rc);
	} else if (deadline_ms(x) && now_ms() + d - x->started > deadline_ms(x)) {
		hx_append_detail(x, " (gave up after %u attempts: the deadline of %.0f s for this "
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
	if (hx_ranged(q)) {
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
		hx_decide(x, V_FATAL, rc, "%s", ow_err_detail());
	else if ((rc = ow_open_regular(path, &fd, &st)))
		hx_decide(x, V_FATAL, rc, "%s — %s", ow_err_detail(),
		       rc == OW_EPOLICY ? "a local index holds regular files only; put the file itself there"
		                        : "check the path of the local index");
	else if (x->cap && (uint64_t)st.st_size > x->cap)
		hx_decide(x, V_FATAL, OW_ETOOBIG, "%s has %llu bytes, over the size cap of %llu", path,
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
		hx_decide(x, V_FATAL, OW_ENOMEM, "cannot set up the request");
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
		hx_classify(x, c);
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

/* Every transfer not done ends now, its bytes kept for a resume: with
 * OW_EINTERRUPTED once the process was interrupted (ow_interrupt), else
 * (ow_http_cancel) with OW_EINCOMPLETE. */
static void cancel_all(ow_http *h)
{
	int rc = ow_interrupted() ? OW_EINTERRUPTED : OW_EINCOMPLETE;
	for (struct xfer *x = h->head; x; x = x->next) {
		if (x->state == X_DONE)
			continue;
		if (x->state == X_RUNNING)
			detach(x);
		hx_decide(x, V_FATAL, rc, "%s; %llu bytes kept for a later resume",
		          rc == OW_EINTERRUPTED ? "interrupted" : "cancelled", (unsigned long long)x->pos);
		finish(x, rc);
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
		hx_copy_str(x->validator, sizeof x->validator, q->if_range);
	hx_copy_str(x->url, sizeof x->url, q->url ? q->url : "");
	if (!q->url || !q->on_data)
		hx_decide(x, V_FATAL, OW_EINVAL, "request without URL or data sink");
	else if (hx_ranged(q) && (q->resume_from || !strncasecmp(q->url, "file:", 5) ||
	                       (!(q->flags & OW_HTTP_RANGE_SUFFIX) &&
	                        q->range_off > UINT64_MAX - q->range_len)))
		hx_decide(x, V_FATAL, OW_EINVAL, "a range request is for http(s), without resume_from, "
		       "and within 2^64 bytes");
	else if (!hx_check_hop(x, q->url, 0)) {
		hx_set_url(x, q->url);
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

int ow_http_run(ow_http *h)
{
	reap(h);
	while (has_work(h)) {
		int still = 0;
		if (h->cancel || ow_interrupted())
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

void ow_http_cancel(ow_http *h) { h->cancel = 1; }


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
