/* httpresp.c - response headers read and judged, no libcurl (httpresp.h). */
#include "httpresp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "offwheel/error.h"

static void copy_str(char *dst, size_t n, const char *src)
{
	size_t l = strnlen(src, n - 1);
	memcpy(dst, src, l);
	dst[l] = '\0';
}

/* ---- header lines ----------------------------------------------------------- */

void ow_http_resp_reset(struct ow_http_resp *r)
{
	memset(r, 0, sizeof *r);
	r->clen = -1;
}

long ow_http_status_code(const char *p, size_t n)
{
	const char *sp = memchr(p, ' ', n);
	char num[64];
	if (!sp)
		return 0;
	size_t k = n - (size_t)(sp + 1 - p);
	if (k >= sizeof num)
		k = sizeof num - 1;
	memcpy(num, sp + 1, k);
	num[k] = '\0';
	return strtol(num, NULL, 10);
}

static int64_t parse_clen(const char *v)
{
	if (!*v || strlen(v) > 18 || strspn(v, "0123456789") != strlen(v))
		return -2;
	return (int64_t)strtoll(v, NULL, 10);
}

static void on_clen(struct ow_http_resp *r, const char *v)
{
	int64_t n = parse_clen(v);
	if (n < 0 || (r->clen >= 0 && r->clen != n))
		r->clen_bad = 1;
	else
		r->clen = n;
}

/* Only printable ASCII of a sane length is kept, anything else is dropped
 * (the request that would replay it is then unconditional). */
int ow_http_validator_ok(const char *v, size_t vl, size_t max)
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

static void on_header(struct ow_http_resp *r, const char *name, const char *v)
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
	else if (!strcasecmp(name, "etag") && ow_http_validator_ok(v, vl, OW_HTTP_VALIDATOR_MAX))
		copy_str(r->etag, sizeof r->etag, v);
	else if (!strcasecmp(name, "last-modified") &&
	         ow_http_validator_ok(v, vl, sizeof r->lastmod - 1))
		copy_str(r->lastmod, sizeof r->lastmod, v);
	else if (!strcasecmp(name, "retry-after"))
		copy_str(r->retry_after, sizeof r->retry_after, v);
}

/* Split "Name: value\r\n" (trimmed) and hand it to on_header. */
static void parse_header_line(struct ow_http_resp *r, const char *line, size_t n)
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

enum ow_http_line ow_http_resp_line(struct ow_http_resp *r, const char *p, size_t n)
{
	if (n >= 5 && !memcmp(p, "HTTP/", 5)) {
		ow_http_resp_reset(r);
		r->http1 = n >= 7 && !memcmp(p, "HTTP/1.", 7);
		r->status = ow_http_status_code(p, n);
		return OW_HTTP_LINE_STATUS;
	}
	if (n >= 1 && n <= 2 && (p[0] == '\r' || p[0] == '\n'))
		return OW_HTTP_LINE_END;
	parse_header_line(r, p, n);
	return OW_HTTP_LINE_FIELD;
}

/* ---- validators ------------------------------------------------------------- */

int ow_http_same_validator(const struct ow_http_resp *r, const char *sent)
{
	return *sent == '"' ? !strcmp(r->etag, sent) : !strcmp(r->lastmod, sent);
}

const char *ow_http_resp_validator(const struct ow_http_resp *r)
{
	return r->etag[0] && strncmp(r->etag, "W/", 2) ? r->etag : r->lastmod;
}

/* ---- Content-Range ---------------------------------------------------------- */

int ow_http_crange_parse(const char *s, uint64_t *a, uint64_t *t)
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

int ow_http_crange_exact(const char *s, uint64_t *a, uint64_t *b, uint64_t *t)
{
	if (strncmp(s, "bytes ", 6))
		return -1;
	s += 6;
	if (crange_num(&s, '-', a) || crange_num(&s, '/', b) || crange_num(&s, '\0', t))
		return -1;
	return *a <= *b && *b < *t ? 0 : -1;
}

int ow_http_range_wanted(const struct ow_http_req *q, uint64_t total, uint64_t *a, uint64_t *b)
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

void ow_http_range_text(const struct ow_http_req *q, char *buf, size_t n)
{
	if (q->flags & OW_HTTP_RANGE_SUFFIX)
		snprintf(buf, n, "bytes=-%llu", (unsigned long long)q->range_len);
	else
		snprintf(buf, n, "bytes=%llu-%llu", (unsigned long long)q->range_off,
		         (unsigned long long)(q->range_off + q->range_len - 1));
}

/* ---- Retry-After and the classes of a status ---------------------------------- */

enum ow_http_retry_after ow_http_retry_after(const char *v, int64_t *secs)
{
	*secs = -1;
	if (!*v)
		return OW_HTTP_RA_NONE;
	if (strspn(v, "0123456789") != strlen(v))
		return OW_HTTP_RA_DATE;
	*secs = strlen(v) > 9 ? INT64_MAX : strtoll(v, NULL, 10);
	return OW_HTTP_RA_SECONDS;
}

static enum ow_http_class classify_416(unsigned sent)
{
	if (sent & OW_HTTP_SENT_RANGE)
		return OW_HTTP_CLASS_RANGE_MISSING;
	if (sent & OW_HTTP_SENT_RESUME)
		return OW_HTTP_CLASS_RESUME_REFUSED;
	return OW_HTTP_CLASS_UNEXPECTED;
}

enum ow_http_class ow_http_classify(long st, unsigned sent)
{
	if ((sent & OW_HTTP_SENT_FILE) || st / 100 == 2)
		return OW_HTTP_CLASS_SUCCESS;
	if (st == 304)
		return sent & OW_HTTP_SENT_CONDITIONAL ? OW_HTTP_CLASS_NOT_MODIFIED
		                                       : OW_HTTP_CLASS_UNASKED_304;
	if (st / 100 == 3)
		return OW_HTTP_CLASS_REDIRECT;
	if (st == 416 && classify_416(sent) != OW_HTTP_CLASS_UNEXPECTED)
		return classify_416(sent);
	if ((st == 401 || st == 403) && (sent & OW_HTTP_SENT_LOGIN))
		return OW_HTTP_CLASS_AUTH_REFUSED;
	if (st == 401)
		return OW_HTTP_CLASS_AUTH_REQUIRED;
	if (st == 403 || st == 404 || st == 410)
		return OW_HTTP_CLASS_NOT_FOUND;
	if (st == 408 || st == 429 || st / 100 == 5)
		return OW_HTTP_CLASS_RETRY;
	return OW_HTTP_CLASS_UNEXPECTED;
}

/* ---- the single-request client's statuses and captured headers ---------------- */

int ow_http_call_status_rc(long st)
{
	if (st >= 200 && st <= 299)
		return 0;
	return st == 404 ? OW_ENOENT : st == 401 || st == 403 ? OW_EPOLICY : OW_EHTTP;
}

int ow_http_call_retryable(long st)
{
	return st == 408 || st == 429 || st == 500 || st == 502 || st == 503 || st == 504;
}

static void capture_value(const char *v, const char *end, char *out, size_t cap)
{
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
		end--;
	size_t vl = (size_t)(end - v);
	if (vl >= cap || !ow_http_validator_ok(v, vl, cap - 1))
		vl = 0;
	memcpy(out, v, vl);
	out[vl] = '\0';
}

void ow_http_capture(const char *p, size_t n, const char *const *names, char (*vals)[256],
                     int count)
{
	const char *colon = memchr(p, ':', n);
	if (!colon)
		return;
	size_t nl = (size_t)(colon - p);
	for (int i = 0; i < count && names[i]; i++) {
		if (strlen(names[i]) != nl || strncasecmp(p, names[i], nl))
			continue;
		capture_value(colon + 1, p + n, vals[i], sizeof vals[i]);
	}
}
