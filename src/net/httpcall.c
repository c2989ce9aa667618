/* httpcall.c - one request of any method on the calling thread, for the
 * S3 client (http.h: ow_http_call): one libcurl easy handle per connection,
 * reused across calls; no redirect followed; transient failures tried again
 * after the shared backoff (httpretry.h). */
#include "http.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "clock.h"
#include "httpcurl.h"
#include "httpresp.h"
#include "httpretry.h"
#include "offwheel/error.h"
#include "url.h"

struct ow_http_conn {
	struct ow_http_opts o;
	char *ca_file;
	char *user_agent;
	CURL *easy;
	uint64_t rng;
};

int ow_http_conn_new(ow_http_conn **out, const struct ow_http_opts *opts)
{
	*out = NULL;
	int rc = ow_http_curl_ready();
	if (rc)
		return rc;
	ow_http_conn *c = calloc(1, sizeof *c);
	if (!c)
		return ow_err(OW_ENOMEM, "out of memory");
	if (opts)
		c->o = *opts;
	else
		ow_http_opts_default(&c->o);
	rc = ow_http_pick_ca_file(&c->o, &c->ca_file);
	if (!rc && !(c->user_agent = strdup(c->o.user_agent ? c->o.user_agent : "offwheel/" OW_VERSION)))
		rc = ow_err(OW_ENOMEM, "out of memory");
	if (!rc && !(c->easy = curl_easy_init()))
		rc = ow_err(OW_ENOMEM, "cannot create a libcurl handle");
	c->rng = ow_http_rng_seed(c);
	if (rc) {
		ow_http_conn_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

void ow_http_conn_free(ow_http_conn *c)
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
	int64_t t = ow_mono_ms();
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
			r->sink_rc = ow_http_sink_code(rc);
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
		r->status = ow_http_status_code(p, n);
		for (int i = 0; i < OW_HTTP_CALL_CAPTURE; i++)
			c->captured[i][0] = '\0';
		return n;
	}
	ow_http_capture(p, n, c->capture, c->captured, OW_HTTP_CALL_CAPTURE);
	return n;
}

/* One attempt: 0 = the response is final (any status), else a curl code. */
static CURLcode call_attempt(ow_http_conn *k, struct call_run *r, struct curl_slist *hdrs,
                             char *errbuf)
{
	struct ow_http_call *c = r->c;
	CURL *e = k->easy;
	curl_easy_reset(e);
	errbuf[0] = '\0';
	curl_easy_setopt(e, CURLOPT_URL, c->url);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
	ow_http_curl_common(e, &k->o, k->ca_file, k->user_agent);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, (c->flags & OW_HTTP_ALLOW_HTTP) ? "https,http" : "https");
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, call_write_cb);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, call_header_cb);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, call_progress_cb);
	curl_easy_setopt(e, CURLOPT_XFERINFODATA, r);
	curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
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
static void call_timeout_detail(const ow_http_conn *k, const struct call_run *r,
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

/* The curl code of a failed attempt as rc and detail; *again when it is
 * worth another. */
static int call_curl_failed(const ow_http_conn *k, const struct call_run *r, CURLcode cc,
                            const char *errbuf, int64_t ms, int *again)
{
	struct ow_http_call *c = r->c;
	int timeout = cc == CURLE_OPERATION_TIMEDOUT || r->stalled;
	int rc = ow_http_curl_tls_error(cc) ? OW_ETLS : timeout ? OW_ETIMEOUT : OW_ENET;
	*again = rc != OW_ETLS && (ow_http_curl_transient(cc) || timeout);
	if (rc == OW_ETIMEOUT)
		call_timeout_detail(k, r, ms, c->detail, sizeof c->detail);
	else
		snprintf(c->detail, sizeof c->detail, "%s %s: %s%s%s", c->method, r->shown,
		         errbuf[0] ? errbuf : curl_easy_strerror(cc),
		         r->status ? " (the answer broke off)" : "",
		         rc == OW_ETLS ? " — check the host name and the system clock; for a "
		                         "private CA pass --cert FILE (or set SSL_CERT_FILE)" : "");
	return rc;
}

/* What one attempt came to: 0 or an OW_E* code with c->detail; *again
 * when it is worth another. */
static int call_outcome(const ow_http_conn *k, const struct call_run *r, CURLcode cc,
                        const char *errbuf, int64_t ms, int *again)
{
	struct ow_http_call *c = r->c;
	int rc;
	*again = 0;
	if (r->sink_rc) {
		snprintf(c->detail, sizeof c->detail, "%s", ow_err_detail());
		return r->sink_rc;
	}
	if (r->read_err) {
		snprintf(c->detail, sizeof c->detail, "%s %s: reading the body to send failed: %s",
		         c->method, r->shown, strerror(r->read_err));
		return OW_EIO;
	}
	if (cc != CURLE_OK)
		return call_curl_failed(k, r, cc, errbuf, ms, again);
	if (!(rc = ow_http_call_status_rc(r->status)))
		return 0;
	*again = ow_http_call_retryable(r->status);
	snprintf(c->detail, sizeof c->detail, "%s %s: HTTP %ld", c->method, r->shown, r->status);
	return rc;
}

/* The call's headers as a curl list in *out. */
static int call_headers(const struct ow_http_call *c, struct curl_slist **out)
{
	struct curl_slist *hdrs = NULL;
	*out = NULL;
	for (int i = 0; i < OW_HTTP_CALL_HEADERS && c->headers[i]; i++) {
		struct curl_slist *n = curl_slist_append(hdrs, c->headers[i]);
		if (!n) {
			curl_slist_free_all(hdrs);
			return ow_err(OW_ENOMEM, "out of memory");
		}
		hdrs = n;
	}
	*out = hdrs;
	return 0;
}

static void call_clear(struct ow_http_call *c)
{
	c->status = 0;
	c->attempts = 0;
	c->received = 0;
	c->error_body[0] = c->detail[0] = '\0';
	for (int i = 0; i < OW_HTTP_CALL_CAPTURE; i++)
		c->captured[i][0] = '\0';
}

/* Attempts until one is final, the attempts or the retry budget are spent,
 * or the sink refuses to start again. */
static int call_attempts(ow_http_conn *k, struct ow_http_call *c, struct curl_slist *hdrs,
                         const char *shown)
{
	char errbuf[CURL_ERROR_SIZE];
	int64_t start = ow_mono_ms();
	int rc = 0;
	for (;;) {
		int64_t t0 = ow_mono_ms();
		struct call_run r = {.c = c, .cap = c->max_size ? c->max_size : 64u << 20,
		                     .shown = shown, .stall_s = k->o.low_speed_time_s,
		                     .last_move = t0};
		int again;
		c->attempts++;
		c->error_body[0] = '\0';
		CURLcode cc = call_attempt(k, &r, hdrs, errbuf);
		c->received = r.got;
		c->status = r.status;
		rc = call_outcome(k, &r, cc, errbuf, ow_mono_ms() - t0, &again);
		if (!again || c->attempts >= k->o.max_attempts ||
		    ow_mono_ms() - start > k->o.retry_budget_ms)
			break;
		if (c->on_restart && r.got && (rc = c->on_restart(c->ud)) != 0) {
			snprintf(c->detail, sizeof c->detail, "%s", ow_err_detail());
			break;
		}
		ow_http_sleep_ms(ow_http_backoff_ms(&k->o, c->attempts, &k->rng));
	}
	return rc;
}

int ow_http_call(ow_http_conn *k, struct ow_http_call *c)
{
	struct curl_slist *hdrs;
	char shown[512]; /* cut with "..." to leave the detail room for the cause */
	call_clear(c);
	int rc = call_headers(c, &hdrs);
	if (rc < 0)
		return rc;
	ow_url_printable(c->url, shown, sizeof shown);
	rc = call_attempts(k, c, hdrs, shown);
	curl_slist_free_all(hdrs);
	if (rc)
		ow_err(rc, "%s", c->detail);
	return rc;
}
