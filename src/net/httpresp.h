/* httpresp.h - an HTTP response's header block read and judged, without a
 * libcurl handle: the header lines, Content-Range, Retry-After, validators
 * and the class of a status, for the transfer engine (http.c) and the
 * single-request client (httpcall.c).  Pure functions on bytes, so
 * tests/fuzz/fuzz_httpresp.c runs them on hostile header blocks. */
#ifndef OW_HTTPRESP_H
#define OW_HTTPRESP_H

#include <stddef.h>
#include <stdint.h>

#include "http.h"

/* What one response said (reset at each status line). */
struct ow_http_resp {
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

/* What a line of the header block was. */
enum ow_http_line {
	OW_HTTP_LINE_STATUS, /* "HTTP/...": a new response, *r reset */
	OW_HTTP_LINE_END,    /* the blank line that ends the block */
	OW_HTTP_LINE_FIELD   /* a header field (kept in *r when one we read) */
};

/* Forget every header: a new response begins. */
void ow_http_resp_reset(struct ow_http_resp *r);
/* One line as libcurl hands it (`n` bytes, "\r\n" included, not
 * NUL-terminated) read into *r. */
enum ow_http_line ow_http_resp_line(struct ow_http_resp *r, const char *p, size_t n);
/* The status code of a status line "HTTP/x SSS ..." of `n` bytes (0 when
 * it has none). */
long ow_http_status_code(const char *p, size_t n);

/* A validator is replayed to the server in a later request: 1 when the
 * `vl` bytes at v are printable ASCII and at most `max` of them. */
int ow_http_validator_ok(const char *v, size_t vl, size_t max);
/* A 206 to a request with If-Range carries what was sent: the same strong
 * ETag (a quoted one), else the same Last-Modified (a date). */
int ow_http_same_validator(const struct ow_http_resp *r, const char *sent);
/* What validates the body of *r for a later If-Range: its strong ETag,
 * else its Last-Modified ("" when neither). */
const char *ow_http_resp_validator(const struct ow_http_resp *r);

/* "bytes A-B/T" (T may be "*"), read leniently (a resume's 206): 0 with *a
 * and *t (0 = unknown), or -1. */
int ow_http_crange_parse(const char *s, uint64_t *a, uint64_t *t);
/* "bytes A-B/T" exactly (no spaces, signs or "*"), A <= B < T: 0 or -1. */
int ow_http_crange_exact(const char *s, uint64_t *a, uint64_t *b, uint64_t *t);
/* The bytes [*a, *b] of a file of `total` bytes that the range request `q`
 * asks for; -1 when none of them exists. */
int ow_http_range_wanted(const struct ow_http_req *q, uint64_t total, uint64_t *a, uint64_t *b);
/* "bytes=-N" or "bytes=A-B" as the range request `q` asks for it. */
void ow_http_range_text(const struct ow_http_req *q, char *buf, size_t n);

/* What a Retry-After value is. */
enum ow_http_retry_after {
	OW_HTTP_RA_NONE,    /* absent: the own backoff */
	OW_HTTP_RA_SECONDS, /* delay-seconds, in *secs (INT64_MAX when huge) */
	OW_HTTP_RA_DATE     /* anything else: an HTTP-date, for the caller to read */
};
enum ow_http_retry_after ow_http_retry_after(const char *v, int64_t *secs);

/* The transfer engine's classes of a finished response's status. */
enum ow_http_class {
	OW_HTTP_CLASS_SUCCESS,        /* 2xx, or any answer from a file: URL */
	OW_HTTP_CLASS_NOT_MODIFIED,   /* 304 to a conditional request */
	OW_HTTP_CLASS_UNASKED_304,    /* 304 to a request that was not conditional */
	OW_HTTP_CLASS_REDIRECT,       /* another 3xx */
	OW_HTTP_CLASS_RANGE_MISSING,  /* 416 to a range request */
	OW_HTTP_CLASS_RESUME_REFUSED, /* 416 to a resume's Range */
	OW_HTTP_CLASS_NOT_FOUND,      /* 403 (sent without a login), 404, 410 */
	OW_HTTP_CLASS_AUTH_REQUIRED,  /* 401 to a request without a login */
	OW_HTTP_CLASS_AUTH_REFUSED,   /* 401 or 403 to a request with one */
	OW_HTTP_CLASS_RETRY,          /* 408, 429, 5xx */
	OW_HTTP_CLASS_UNEXPECTED      /* any other */
};
/* How the request was made, for ow_http_classify. */
#define OW_HTTP_SENT_FILE 0x1u        /* a file: URL */
#define OW_HTTP_SENT_CONDITIONAL 0x2u /* If-None-Match / If-Modified-Since */
#define OW_HTTP_SENT_RANGE 0x4u       /* a range request (req->range_len) */
#define OW_HTTP_SENT_RESUME 0x8u      /* Range to continue held bytes */
#define OW_HTTP_SENT_LOGIN 0x10u      /* with a login (basic auth) */
enum ow_http_class ow_http_classify(long status, unsigned sent);

/* A single request's status as its result (http.h: ow_http_call): 0 for
 * 2xx, OW_ENOENT for 404, OW_EPOLICY for 401/403, else OW_EHTTP. */
int ow_http_call_status_rc(long status);
/* 1 when a single request answered with `status` is tried again. */
int ow_http_call_retryable(long status);
/* The header line `p` (`n` bytes) kept in vals[i] when its name is
 * names[i] (compared without case; names ends at `count` or a NULL), as a
 * validator: a value that is not printable ASCII or does not fit the 256
 * bytes is kept as "". */
void ow_http_capture(const char *p, size_t n, const char *const *names, char (*vals)[256],
                     int count);

#endif
