/* simplejson.c - a PEP 691 JSON project page, read into the same anchors a
 * PEP 503 HTML page gives (html.h), so every link goes through the same
 * checks in pagelinks.c whichever form the index served.
 *
 * PEP 691 (api-version 1.x; PEP 700 adds versions/size/upload-time): the
 * page is {"meta": {"api-version": "1.1"}, "name": ..., "files": [{
 * "filename", "url", "hashes": {"sha256": ...}, "requires-python",
 * "yanked": false | true | "reason", "core-metadata" (PEP 714; older
 * servers say "dist-info-metadata"): false | true | {"sha256": ...},
 * "upload-time", "size"}, ...]}.  A client must refuse a major version it
 * does not know; a newer minor version only adds keys.  The mapping onto an
 * HTML anchor: href = url with "#sha256=" added when the url has no
 * fragment, text = filename, data-requires-python, data-yanked,
 * data-core-metadata = "true" or "sha256=<hex>". */
#include "simplejson.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "offwheel/error.h"

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static int oom(void)
{
	return ow_err(OW_ENOMEM, "JSON page: out of memory");
}

/* "true", "sha256=<hex>", or NULL (false, absent, or a form we do not know:
 * then there is no metadata file to trust). */
static char *meta_attr(const json_t *v)
{
	if (json_is_true(v))
		return strdup("true");
	const char *h = json_string_value(json_object_get(v, "sha256"));
	if (!h)
		return NULL;
	char *s = NULL;
	return asprintf(&s, "sha256=%s", h) < 0 ? NULL : s;
}

/* Why a "hashes" value cannot be used, or NULL: it must be an object of
 * strings (PEP 691); the same as a malformed #sha256 fragment in HTML. */
static const char *bad_hashes(json_t *h)
{
	const char *key;
	json_t *v;
	if (!h)
		return NULL;
	if (!json_is_object(h))
		return "\"hashes\" is not an object of hash names to hex digests";
	json_object_foreach(h, key, v) {
		if (!json_is_string(v))
			return "a \"hashes\" value is not a string of hex digits";
	}
	return NULL;
}

/* The same for "core-metadata" (PEP 714: true, false or such an object). */
static const char *bad_core_metadata(json_t *m)
{
	if (!m || json_is_boolean(m))
		return NULL;
	if (!json_is_object(m))
		return "\"core-metadata\" is neither true, false nor an object of hashes";
	return bad_hashes(m) ? "a \"core-metadata\" hash is not a string of hex digits" : NULL;
}

static int file_anchor(const json_t *f, size_t i, struct ow_html_anchor *a)
{
	const char *name = json_string_value(json_object_get(f, "filename"));
	const char *url = json_string_value(json_object_get(f, "url"));
	if (!json_is_object(f) || !name || !url)
		return ow_err(OW_EPARSE,
		              "JSON page: files[%zu] has no \"filename\" and \"url\" strings — not a "
		              "PEP 691 project page",
		              i);
	json_t *hashes = json_object_get(f, "hashes");
	const char *why = bad_hashes(hashes);
	const char *sha = json_string_value(json_object_get(hashes, "sha256"));
	if (why && !(a->reject = strdup(why)))
		return oom();
	if (sha && !strchr(url, '#')) {
		if (asprintf(&a->href, "%s#sha256=%s", url, sha) < 0)
			a->href = NULL;
	} else {
		a->href = strdup(url);
	}
	a->text = strdup(name);
	if (!a->href || !a->text)
		return oom();
	a->line = (int)(i + 1); /* the file's place in the list stands in for a line */
	a->requires_python = dup_or_null(json_string_value(json_object_get(f, "requires-python")));
	a->upload_time = dup_or_null(json_string_value(json_object_get(f, "upload-time")));
	const json_t *y = json_object_get(f, "yanked");
	if (json_is_true(y))
		a->yanked = strdup("");
	else if (json_is_string(y))
		a->yanked = strdup(json_string_value(y));
	json_t *cm = json_object_get(f, "core-metadata");
	if (!cm)
		cm = json_object_get(f, "dist-info-metadata");
	a->core_metadata = meta_attr(cm);
	if (!why && (why = bad_core_metadata(cm)) && !(a->reject = strdup(why)))
		return oom();
	return 0;
}

static int check_version(const json_t *root)
{
	const char *v = json_string_value(json_object_get(json_object_get(root, "meta"), "api-version"));
	if (!v)
		return ow_err(OW_EPARSE, "JSON page: no meta.api-version — not a PEP 691 project page");
	if (strncmp(v, "1.", 2) && strcmp(v, "1"))
		return ow_err(OW_EUNSUPPORTED,
		              "JSON page: api-version %s — only version 1 of the simple API (PEP 691) "
		              "is understood; ask the index for HTML (text/html) or update offwheel",
		              v);
	return 0;
}

static int fill(const json_t *root, const struct ow_html_limits *lim, struct ow_html_doc *doc)
{
	int rc = check_version(root);
	const json_t *files = json_object_get(root, "files");
	if (!rc && !json_is_array(files))
		rc = ow_err(OW_EPARSE, "JSON page: no \"files\" list — not a PEP 691 project page");
	if (rc)
		return rc;
	size_t n = json_array_size(files);
	if (n > lim->max_anchors)
		return ow_err(OW_ETOOBIG, "JSON page: %zu files, more than the %zu allowed", n,
		              lim->max_anchors);
	doc->anchors = calloc(n + 1, sizeof *doc->anchors);
	if (!doc->anchors)
		return oom();
	for (size_t i = 0; i < n && !rc; i++) {
		rc = file_anchor(json_array_get(files, i), i, &doc->anchors[i]);
		doc->nanchors = i + 1;
	}
	return rc;
}

int ow_simple_json_parse(const char *body, size_t len, const struct ow_html_limits *lim,
                         struct ow_html_doc **out)
{
	struct ow_html_limits def;
	if (!lim) {
		ow_html_limits_default(&def);
		lim = &def;
	}
	*out = NULL;
	if (len > lim->max_bytes)
		return ow_err(OW_ETOOBIG, "JSON page: %zu bytes, more than the %zu allowed", len,
		              lim->max_bytes);
	json_error_t je;
	/* depth is bounded by jansson itself (2048); duplicates refused: a key
	 * given twice is a page that says two things */
	json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return ow_err(OW_EPARSE, "JSON page: %s (line %d, column %d)", je.text, je.line,
		              je.column);
	struct ow_html_doc *doc = calloc(1, sizeof *doc);
	int rc = !doc ? oom() : !json_is_object(root) ? ow_err(OW_EPARSE, "JSON page: not an object")
	                                             : fill(root, lim, doc);
	json_decref(root);
	if (rc) {
		ow_html_doc_free(doc);
		return rc;
	}
	*out = doc;
	return 0;
}

int ow_simple_json_sniff(const char *body, size_t len)
{
	size_t i = 0;
	if (len >= 3 && !memcmp(body, "\xEF\xBB\xBF", 3))
		i = 3;
	while (i < len && strchr(" \t\r\n", body[i]))
		i++;
	return i < len && body[i] == '{';
}
