/* httpbody.c - the checks at a body's first sight (httpint.h): a 206's
 * Content-Range against the bytes held, the length against the cap and the
 * expected size, free space, the answer to a range request, If-Range and
 * resume, the content encoding. */
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
#include "event.h"
#include "fsutil.h"

/* ---- body checks ------------------------------------------------------------ */

/* A 206: accept only a Content-Range that continues where we are, of the
 * version of the file the If-Range named. */
static int check_partial(struct xfer *x, uint64_t *start)
{
	uint64_t a, t;
	uint64_t want = x->req->expected_size ? x->req->expected_size : x->total;
	if (!x->range_from) {
		hx_decide(x, V_FATAL, OW_EHTTP,
		       "206 Partial Content to a request without Range — the server is broken; "
		       "use another mirror");
		return -1;
	}
	if (ow_http_crange_parse(x->r.crange, &a, &t) || a != x->range_from || (want && t && t != want)) {
		hx_decide(x, V_RESTART, OW_EHTTP,
		       "206 with Content-Range '%s' does not continue at byte %llu; restarting "
		       "from zero without Range", x->r.crange, (unsigned long long)x->range_from);
		x->no_range = 1;
		return -1;
	}
	if (x->range_basis == OW_HTTP_RESUME_IF_RANGE && !ow_http_same_validator(&x->r, x->validator)) {
		hx_decide(x, V_RESTART, OW_EHTTP,
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

void hx_unreserve(struct xfer *x)
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
	hx_unreserve(x);
	if (!h->o.space_dir || !need || ow_fs_avail(h->o.space_dir, &avail) != 0)
		return 0; /* no check asked, or none possible: the write will say */
	if (ow_space_short(need, h->reserved, avail, &want)) {
		char a[32], b[32], c[32];
		size_text(need, a, sizeof a);
		size_text(h->reserved, b, sizeof b);
		size_text(avail, c, sizeof c);
		hx_decide(x, V_FATAL, OW_ENOSPC,
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
		hx_decide(x, V_FATAL, OW_ETOOBIG,
		       "Content-Length %lld is over the size cap of %llu bytes — refusing to "
		       "download", (long long)x->r.clen, (unsigned long long)x->cap);
		return -1;
	}
	if (exp && end != exp) {
		hx_decide(x, V_FATAL, OW_EHTTP,
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
		hx_decide(x, V_FATAL, OW_EUNSUPPORTED,
		       "the server answered Range %s with the whole file (HTTP 200): it does not "
		       "serve byte ranges%s — nothing was read from it", asked,
		       q->if_range && *q->if_range ? ", or the file changed since it was first read" : "");
		return -1;
	}
	if (x->r.status != 206) {
		hx_decide(x, V_FATAL, OW_EHTTP, "HTTP %ld to Range %s, not 206 — the server is "
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
		hx_decide(x, V_FATAL, OW_EHTTP,
		       "206 with Content-Range '%s' is not the range asked for (%s%s) — the server is "
		       "broken, or the file changed; use another mirror", x->r.crange, asked, of);
		return -1;
	}
	if (x->r.clen >= 0 && (uint64_t)x->r.clen != wb - wa + 1) {
		hx_decide(x, V_FATAL, OW_EHTTP, "206 with Content-Length %lld for Content-Range '%s' — "
		       "the server is broken; use another mirror", (long long)x->r.clen, x->r.crange);
		return -1;
	}
	if (wb - wa + 1 > x->cap) {
		hx_decide(x, V_FATAL, OW_ETOOBIG, "the range %s is %llu bytes, over the size cap of %llu",
		       asked, (unsigned long long)(wb - wa + 1), (unsigned long long)x->cap);
		return -1;
	}
	if (q->if_range && *q->if_range && !ow_http_same_validator(&x->r, q->if_range)) {
		q->res.validator_changed = 1;
		hx_decide(x, V_FATAL, OW_EHTTP,
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
	hx_copy_str(q->res.validator, sizeof q->res.validator, x->validator);
	x->r.body_sink = 1;
	return 0;
}

static int restart_sink(struct xfer *x)
{
	struct ow_http_req *q = x->req;
	int rc = q->on_restart ? q->on_restart(q->ud) : 0;
	if (rc) {
		hx_decide(x, V_FATAL, ow_http_sink_code(rc),
		       "discarding the partial download failed: %s", ow_err_detail());
		return -1;
	}
	if (hx_ranged(q))
		ow_log(OW_LOG_INFO, "%s: asking for the range again from its start", hx_label(x));
	else
		ow_log(OW_LOG_INFO, "%s: server sent the whole file; restarting from zero", hx_label(x));
	q->res.restarted = 1;
	q->res.resumed = 0;
	q->res.resumed_from = 0;
	q->res.resume_basis = OW_HTTP_RESUME_NONE;
	x->pos = 0;
	return 0;
}

static void learn_validator(struct xfer *x)
{
	hx_copy_str(x->validator, sizeof x->validator, ow_http_resp_validator(&x->r));
}

static int check_encoding(struct xfer *x)
{
	if (x->r.clen_bad) {
		hx_decide(x, V_FATAL, OW_EHTTP, "malformed or conflicting Content-Length — the "
		       "server is broken; use another mirror");
		return -1;
	}
	if (x->r.cenc[0] && strcasecmp(x->r.cenc, "identity")) {
		hx_decide(x, V_FATAL, OW_EHTTP,
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
	       hx_label(x));
}

/* First sight of a body (or the end of a body-less response): decide
 * whether it goes to the caller and where it starts.  -1 = abort. */
int hx_begin_body(struct xfer *x)
{
	uint64_t start = 0;
	if (x->r.begun)
		return 0;
	x->r.begun = 1;
	if (!x->is_file && x->r.status / 100 != 2)
		return 0;
	if (check_encoding(x))
		return -1;
	if (hx_ranged(x->req) && x->r.status == 200 && (x->req->flags & OW_HTTP_RANGE_OR_WHOLE))
		range_to_whole(x);
	if (hx_ranged(x->req))
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
	hx_copy_str(x->req->res.validator, sizeof x->req->res.validator, x->validator);
	x->r.body_sink = 1;
	return 0;
}
