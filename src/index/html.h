/* html.h - the anchors of a PEP 503 page (the only module that includes
 * libxml2). The body is parsed from memory, never from the network; nothing
 * here judges the links themselves — pagelinks.h turns the anchors into file
 * records and url.h applies the link policy.
 *
 * Refused pages (each OW_E* with a message saying what the body looks like):
 * bigger than max_bytes (OW_ETOOBIG), more than max_anchors anchors or
 * nesting deeper than max_depth (OW_ETOOBIG), a NUL byte or invalid UTF-8
 * (OW_EPARSE), an empty body, JSON, something without markup, a captive
 * portal or login page (a <form>, <input> or <meta http-equiv=refresh>, or no
 * anchors but text that is not "Links for ..."), and a page with <base href>
 * (OW_EPOLICY): PEP 503 pages never use it, and re-basing every link on the
 * page's say-so is not worth the risk, so it is refused instead of applied. */
#ifndef OW_HTML_H
#define OW_HTML_H

#include <stddef.h>
#include <stdint.h>

struct ow_html_limits {
	size_t max_bytes;   /* page size */
	size_t max_anchors; /* <a> elements */
	unsigned max_depth; /* element nesting */
};

#define OW_HTML_MAX_BYTES ((size_t)64 << 20)
#define OW_HTML_MAX_ANCHORS ((size_t)200000)
#define OW_HTML_MAX_DEPTH 256u
/* Attributes on one start tag: real index pages have fewer than 10 on an
 * <a>, and libxml2 compares each new attribute with all before it (its
 * duplicate check), so thousands on one tag cost quadratic time. */
#define OW_HTML_MAX_ATTRS 64u

void ow_html_limits_default(struct ow_html_limits *lim);

/* One <a href>. Strings are malloc'd; attribute values are HTML-unescaped by
 * libxml2. An attribute that is absent is NULL; one without a value is "". */
struct ow_html_anchor {
	char *href;
	char *text; /* text content, ASCII whitespace trimmed */
	char *dist_info_metadata;
	char *core_metadata;
	char *requires_python;
	char *yanked; /* NULL: not yanked; else the reason ("" when none given) */
	char *upload_time;
	char *reject; /* set by the JSON reader: why the link cannot be used */
	int line;     /* line of the <a> in the page */
};

struct ow_html_doc {
	struct ow_html_anchor *anchors;
	size_t nanchors;
	int has_timestamp; /* a <!--TIMESTAMP nnn--> comment was seen */
	int64_t timestamp;
};

/* Parse `body` (len bytes). `lim` NULL means the defaults. */
int ow_html_parse(const char *body, size_t len, const struct ow_html_limits *lim,
                  struct ow_html_doc **out);
void ow_html_doc_free(struct ow_html_doc *doc);

#endif
