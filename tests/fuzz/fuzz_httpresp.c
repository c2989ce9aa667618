/* fuzz_httpresp.c - an HTTP response's header block, as libcurl hands it
 * line by line to the transfer engine and the single-request client, read
 * and judged (httpresp.h): status lines, fields, Content-Range in both
 * readings, Retry-After, validators, status classes, captured headers. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "httpresp.h"

/* Content-Range against the range requests the engine makes. */
static void ranges(const struct ow_http_resp *r)
{
	static const struct ow_http_req reqs[] = {
		{.range_off = 0, .range_len = 65536, .flags = OW_HTTP_RANGE_SUFFIX},
		{.range_off = 100, .range_len = 4096},
		{.range_off = UINT64_MAX - 10, .range_len = 10},
	};
	uint64_t a, b, t, wa, wb;
	char text[64];
	ow_http_crange_parse(r->crange, &a, &t);
	if (ow_http_crange_exact(r->crange, &a, &b, &t) == 0)
		for (size_t i = 0; i < sizeof reqs / sizeof *reqs; i++)
			ow_http_range_wanted(&reqs[i], t, &wa, &wb);
	for (size_t i = 0; i < sizeof reqs / sizeof *reqs; i++)
		ow_http_range_text(&reqs[i], text, sizeof text);
}

/* What the engine judges once the block has ended. */
static void judge(const struct ow_http_resp *r)
{
	int64_t secs;
	ranges(r);
	ow_http_retry_after(r->retry_after, &secs);
	ow_http_same_validator(r, "\"abc\"");
	ow_http_same_validator(r, "Wed, 21 Oct 2015 07:28:00 GMT");
	ow_http_resp_validator(r);
	for (unsigned sent = 0; sent < 16; sent++)
		ow_http_classify(r->status, sent);
	ow_http_call_status_rc(r->status);
	ow_http_call_retryable(r->status);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[OW_HTTP_CALL_CAPTURE] = {"ETag", "x-amz-version-id",
	                                                         "Content-Length", NULL};
	char captured[OW_HTTP_CALL_CAPTURE][256];
	struct ow_http_resp r;
	const char *p = (const char *)data, *end = p + size;
	ow_http_resp_reset(&r);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		/* the line alone in a block of its own, so that a read past it is seen */
		char *line = malloc(n ? n : 1);
		if (!line)
			return 0;
		memcpy(line, p, n);
		ow_http_status_code(line, n);
		ow_http_capture(line, n, names, captured, OW_HTTP_CALL_CAPTURE);
		if (ow_http_resp_line(&r, line, n) == OW_HTTP_LINE_END)
			judge(&r);
		free(line);
		p += n;
	}
	judge(&r);
	return 0;
}
