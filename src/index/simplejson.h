/* simplejson.h - PEP 691 JSON project pages ("application/vnd.pypi.simple.
 * v1+json"), read into the anchors of html.h so that pagelinks.c applies the
 * same link checks to both forms of a page. */
#ifndef OW_SIMPLEJSON_H
#define OW_SIMPLEJSON_H

#include <stddef.h>

#include "html.h"

/* Parse a JSON project page (len bytes) into anchors; `lim` NULL means the
 * defaults of html.h (bytes, files).  OW_EPARSE when it is not a PEP 691
 * page, OW_EUNSUPPORTED for an api-version other than 1.x, OW_ETOOBIG over
 * the limits. */
int ow_simple_json_parse(const char *body, size_t len, const struct ow_html_limits *lim,
                         struct ow_html_doc **out);

/* 1 when the body is JSON (its first non-blank byte is '{'), else 0. */
int ow_simple_json_sniff(const char *body, size_t len);

#endif
