/* http.h - the transfer engine (http.c) and single requests (httpcall.c),
 * the modules that use libcurl (through httpcurl.h, its loader).
 *
 * One engine = one curl multi handle running many transfers in parallel,
 * capped in total (`jobs`) and per host (`per_host`).  Every transfer:
 *   - streams its body to the caller's on_data sink (the caller hashes and
 *     writes); a hard size cap is enforced while receiving;
 *   - follows redirects itself, re-checking every hop with allow_url (plus
 *     scheme rules: https only; http only when the request allows it and the
 *     current hop is already http; never file: on a redirect), capped, with
 *     loop detection;
 *   - retries transient failures (connection errors, resets, timeouts,
 *     short bodies, 408/429/5xx) with capped exponential backoff + jitter,
 *     honouring a sane Retry-After, within a count and time budget;
 *   - resumes with Range + If-Range after a mid-body failure or from the
 *     caller's resume_from (with a plain Range when the caller vouches with
 *     OW_HTTP_RESUME_BY_HASH that it checks the whole file's hash: servers
 *     and caches without ETag / Last-Modified), accepting a 206 only with the right
 *     Content-Range; otherwise it calls on_restart (the caller truncates)
 *     before delivering any byte from offset zero;
 *   - asks for one byte range when the request says so (range_len: the last
 *     N bytes, or N bytes at an offset), accepting only a 206 whose
 *     Content-Range is exactly that range of a file of known size; a 200
 *     (a server that ignores Range) is cut off before its first body byte
 *     and flagged in range_ignored, so a caller never streams a whole
 *     multi-GB file by accident (unless it asked to take it whole:
 *     OW_HTTP_RANGE_OR_WHOLE);
 *   - does conditional GETs (If-None-Match / If-Modified-Since -> 304); a
 *     304 to a request that was not conditional is an error (a proxy or a
 *     captive portal answering in the index's place);
 *   - bounds time: nothing received for low_speed_time_s, or less than
 *     min_rate_bytes/s on average over such a window, is a stall; a
 *     deadline derived from the size bounds the whole transfer, retries
 *     included.
 * TLS verification is always on. */
#ifndef OW_HTTP_H
#define OW_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "offwheel/http.h"

/* Longest ETag kept (a real one is a quoted hash, well under this). */
#define OW_HTTP_VALIDATOR_MAX 128

/* Request flags. */
#define OW_HTTP_ALLOW_HTTP 0x1u /* plain http allowed (trusted host) */
#define OW_HTTP_ALLOW_FILE 0x2u /* file:// allowed for the first URL */
#define OW_HTTP_RANGE_SUFFIX 0x4u /* range_len is the last bytes of the file
                                   * wanted ("bytes=-N"), range_off unused */
#define OW_HTTP_RESUME_BY_HASH 0x8u /* the caller checks the whole file against
                                     * a hash it knows: bytes held are
                                     * continued with a plain Range, without
                                     * If-Range (else only with Range +
                                     * If-Range, when a validator is known) */
#define OW_HTTP_RANGE_OR_WHOLE 0x10u /* a range request whose 200 (a server that
                                     * ignores Range) the caller takes whole:
                                     * see ow_http_req.whole_max_size */

/* How a transfer continues from bytes the caller already holds. */
enum ow_http_resume {
	OW_HTTP_RESUME_NONE,     /* not at all: from byte zero */
	OW_HTTP_RESUME_IF_RANGE, /* Range + If-Range: the server says whether the
	                          * bytes held are still of its file */
	OW_HTTP_RESUME_PLAIN     /* a plain Range: nothing proves the bytes
	                          * held are of the file now served; the
	                          * caller's hash of the whole file decides */
};

/* The way to continue after `held` bytes, given the validator of those
 * bytes ("" or NULL when none) and whether the caller knows the whole
 * file's hash: a plain Range when the hash is known (it decides, whatever a
 * mirror's validators say), else If-Range when a validator is known, else
 * none: bytes are never stitched blind. */
enum ow_http_resume ow_http_resume_basis(uint64_t held, const char *validator, int hash_known);

struct ow_http_result {
	int rc;                 /* 0 or OW_E* (ENOENT for 403/404/410) */
	long status;            /* last HTTP status (0 for file: / none) */
	uint64_t bytes;         /* bytes the caller now holds (final offset) */
	uint64_t received;      /* body bytes delivered during this run */
	unsigned attempts;      /* requests made, redirects not counted */
	unsigned redirects;     /* hops followed */
	int resumed;            /* the final body continued earlier bytes */
	uint64_t resumed_from;  /* ... at this offset (0 when not resumed) */
	enum ow_http_resume resume_basis; /* ... on this basis (NONE when not) */
	int restarted;          /* on_restart was called at least once */
	int not_modified;       /* 304 to a conditional GET */
	int close_delimited;    /* HTTP/1.x body without Content-Length or
	                         * chunked framing: only the connection's close
	                         * ended it, so a cut-short body looks complete
	                         * (the caller judges the bytes) */
	char effective_url[2048];
	char etag[256];         /* of the last 200/206/304 ("" if none, or if it
	                         * held control characters or was over
	                         * OW_HTTP_VALIDATOR_MAX bytes: never replayed) */
	char last_modified[64]; /* likewise */
	char validator[256];    /* strong ETag or Last-Modified of the body being
	                         * delivered; set before its first byte reaches
	                         * on_data, so a sink can keep it for a resume */
	/* range requests (req->range_len > 0) */
	int range_ignored;      /* the server answered with 200, the whole file:
	                         * it does not serve ranges (or the If-Range
	                         * validator no longer matched).  Nothing was
	                         * delivered and rc is OW_EUNSUPPORTED; with
	                         * OW_HTTP_RANGE_OR_WHOLE the whole body was
	                         * delivered instead (whole_max_size). */
	uint64_t range_start;   /* offset in the file of the first byte delivered */
	uint64_t range_total;   /* the file's size, from the 206's Content-Range */
	int validator_changed;  /* a 206 to a range sent with If-Range carried
	                         * another validator (or none): bytes of another
	                         * version of the file.  Nothing was delivered
	                         * and rc is OW_EHTTP. */
	char detail[1024];      /* why it failed: URL, cause, what to do */
};

struct ow_http_req {
	const char *url;
	/* Body bytes in order; return nonzero (an OW_E* code with ow_err set,
	 * or any nonzero) to abort the transfer. */
	int (*on_data)(void *ud, const void *buf, size_t len);
	/* Discard every byte delivered so far (truncate to 0); the next bytes
	 * start at offset 0.  NULL = nothing to discard. Nonzero aborts. */
	int (*on_restart)(void *ud);
	/* Called once when the transfer has finished (success or not); the
	 * engine accepts ow_http_add() from here. May be NULL. */
	void (*on_done)(void *ud, struct ow_http_req *req);
	void *ud;
	const char *what;           /* progress label (default: url) */
	uint64_t expected_size;     /* total size when known, else 0 */
	uint64_t max_size;          /* hard cap on total size, 0 = engine's */
	uint64_t resume_from;       /* bytes the caller already holds */
	const char *if_range;       /* validator of those bytes (ETag or date);
	                             * without it resume_from restarts at 0,
	                             * unless flags has OW_HTTP_RESUME_BY_HASH
	                             * (then it is not sent) */
	const char *accept;         /* an Accept header (NULL: none) */
	const char *if_none_match;  /* conditional GET (ignored when resuming) */
	const char *if_modified_since;
	unsigned flags;             /* OW_HTTP_ALLOW_*, OW_HTTP_RANGE_SUFFIX,
	                             * OW_HTTP_RESUME_BY_HASH, OW_HTTP_RANGE_OR_WHOLE */
	/* One byte range instead of the whole body (0 = the whole body; not
	 * with resume_from): range_len bytes from range_off ("bytes=A-B"; a
	 * range past the end is cut at it), or with OW_HTTP_RANGE_SUFFIX the
	 * last range_len bytes ("bytes=-N").  expected_size, when given, is the
	 * whole file's size and the 206 must say the same; if_range, when
	 * given, is sent with the range and the 206 must carry it (the same
	 * strong ETag, or the same Last-Modified), else validator_changed.  A retry asks for the range again
	 * (on_restart first).  http(s) only. */
	uint64_t range_off, range_len;
	/* With OW_HTTP_RANGE_OR_WHOLE, a 200 to the range is not cut off: the
	 * engine sets res.range_ignored before the first byte reaches on_data,
	 * turns the request into a plain GET of the whole file (range_off,
	 * range_len, expected_size and if_range cleared, the suffix flag
	 * dropped, max_size set to this; 0: the engine's cap) and delivers the
	 * body as any download's, resumed or restarted as one on a retry. */
	uint64_t whole_max_size;
	struct ow_http_result res;  /* filled by the engine */
};

typedef struct ow_http ow_http;

/* A new engine; `opts` may be NULL (defaults) and is copied (the strings
 * must outlive the engine). */
int ow_http_new(ow_http **out, const struct ow_http_opts *opts);
void ow_http_free(ow_http *h);
/* Queue a request; `req` must stay valid until its on_done / run returns.
 * Allowed before ow_http_run and from callbacks during it. */
int ow_http_add(ow_http *h, struct ow_http_req *req);
/* Run until every queued transfer has finished.  0 when all succeeded
 * (304 included), else the code of the first failure (with ow_err set to
 * its detail); each request's own outcome is in req->res. */
int ow_http_run(ow_http *h);
/* Ask ow_http_run to stop soon (async-signal-safe): running and queued
 * transfers end with OW_EINCOMPLETE, their partial bytes kept. */
void ow_http_cancel(ow_http *h);

/* A growable capped memory sink for small bodies (index pages). */
struct ow_http_membuf {
	char *data; /* NUL-terminated when len > 0 */
	size_t len;
	size_t cap; /* refuse beyond this many bytes */
	size_t alloc;
};
int ow_http_membuf_write(void *membuf, const void *buf, size_t len);
int ow_http_membuf_restart(void *membuf);
void ow_http_membuf_dispose(struct ow_http_membuf *m);

/* One GET into memory with its own short-lived engine: `req` gives the URL,
 * flags and conditional headers (its sink fields are overwritten).  On
 * success *out is a malloc'd NUL-terminated body (NULL on 304) and *len its
 * size; req->res tells status, etag, last-modified. */
int ow_http_get_buffer(const struct ow_http_opts *opts, struct ow_http_req *req,
                       size_t cap, char **out, size_t *len);

/* ---- one request of any method, on the calling thread (the S3 client) ----
 *
 * A connection is one libcurl easy handle, reused across calls (keep-alive);
 * a thread that wants parallel requests opens one each.  A call follows no
 * redirect, sends its body from memory or from a range of a file (pread, so
 * a retry sends it again), signs with AWS Signature V4 when asked (libcurl's
 * own CURLOPT_AWS_SIGV4: the headers given, host and x-amz-date are signed),
 * and retries transient failures (connection errors, timeouts, 429, 5xx)
 * with capped exponential backoff up to opts.max_attempts.  A 2xx body goes
 * to on_data; any other body is kept (its start) in error_body, where S3
 * puts its XML <Error>. */
#define OW_HTTP_CALL_HEADERS 12
#define OW_HTTP_CALL_CAPTURE 4
struct ow_http_call {
	const char *method; /* "GET", "PUT", "POST", "DELETE", "HEAD" */
	const char *url;
	const char *headers[OW_HTTP_CALL_HEADERS]; /* "Name: value"; unused = NULL */
	const char *aws_sigv4;                     /* "aws:amz:REGION:s3", or NULL */
	const char *userpwd;                       /* "KEY:SECRET" with aws_sigv4 */
	unsigned flags;                            /* OW_HTTP_ALLOW_HTTP */
	const void *body;   /* request body from memory (body_len bytes) ... */
	int body_fd;        /* ... or from this fd (used when body is NULL and
	                       body_len > 0) at body_off */
	uint64_t body_off, body_len;
	int (*on_data)(void *ud, const void *buf, size_t len); /* NULL: dropped */
	int (*on_restart)(void *ud); /* before a retry delivers again */
	void *ud;
	uint64_t max_size;                            /* response body cap, 0 = 64 MiB */
	const char *capture[OW_HTTP_CALL_CAPTURE];    /* response header names wanted */
	char captured[OW_HTTP_CALL_CAPTURE][256];     /* their values ("" when absent) */
	long status;
	unsigned attempts;
	uint64_t received;
	char error_body[2048];
	char detail[1024];
};
typedef struct ow_http_conn ow_http_conn;
int ow_http_conn_new(ow_http_conn **out, const struct ow_http_opts *opts);
void ow_http_conn_free(ow_http_conn *c);
/* 0 on a 2xx; OW_ENOENT on 404; OW_EPOLICY on 401/403; OW_EHTTP on other
 * statuses (status and error_body tell which); OW_ENET / OW_ETLS /
 * OW_ETIMEOUT when no response came; ow_err set to detail. */
int ow_http_call(ow_http_conn *conn, struct ow_http_call *c);
#endif
