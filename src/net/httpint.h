/* httpint.h - what the files of the transfer engine share (net only):
 * http.c (queue, attempts, the run loop), httpxfer.c (a transfer's
 * decision and its detail; the checks of each hop's URL), httpbody.c (the
 * checks at a body's first sight: length, space, ranges and resume) and
 * httpclass.c (a finished attempt classified: retry, redirect, fail or
 * done).  Dependencies go one way: http.c -> httpclass.c -> httpbody.c ->
 * httpxfer.c. */
#ifndef OW_HTTPINT_H
#define OW_HTTPINT_H

#include <signal.h>
#include <stdint.h>

#include "http.h"
#include "httpcurl.h"
#include "httpresp.h"
#include "offwheel/error.h"
#include "url.h"

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

/* The request asks for one byte range (req->range_len). */
static inline int hx_ranged(const struct ow_http_req *q)
{
	return q->range_len > 0;
}

/* ---- httpxfer.c ---- */
void hx_copy_str(char *dst, size_t n, const char *src);
/* What a message calls the transfer: req->what, else its URL. */
const char *hx_label(const struct xfer *x);
/* Decide the current attempt: verdict, code, detail "GET <url>: <msg>". */
void hx_decide(struct xfer *x, enum verdict v, int rc, const char *fmt, ...) OW_PRINTF(4, 5);
/* Add to the request's detail. */
void hx_append_detail(struct xfer *x, const char *fmt, ...) OW_PRINTF(2, 3);
/* 0 when `url` may be fetched next; else decides V_FATAL with a reason. */
int hx_check_hop(struct xfer *x, const char *url, int redirect);
void hx_set_url(struct xfer *x, const char *url);

/* ---- httpbody.c ---- */
/* Free the space promised to this attempt's body (o.space_dir). */
void hx_unreserve(struct xfer *x);
/* First sight of a body (or the end of a body-less response): decide
 * whether to take it; nonzero stops the transfer (decided). */
int hx_begin_body(struct xfer *x);

/* ---- httpclass.c ---- */
/* Decide a finished attempt from curl's code and the response. */
void hx_classify(struct xfer *x, CURLcode c);

#endif
