/* pagelinks.c - anchors of an index page -> file records and rejections.
 * No libxml2 or jansson here: html.c (PEP 503) and simplejson.c (PEP 691)
 * hand over the raw anchors. */
#include "pagelinks.h"

#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "array.h"
#include "digest.h"
#include "offwheel/error.h"
#include "simplejson.h"
#include "bytes.h"

#define FILENAME_MAX_LEN 255

/* --- file names ---------------------------------------------------------- */

static int name_char_ok(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-' || c == '+' || c == '!';
}

static int ends_with(const char *s, size_t n, const char *suf)
{
	size_t k = strlen(suf);
	return n >= k && !memcmp(s + n - k, suf, k);
}

/* Wheel: {name}-{version}(-{build})?-{python}-{abi}-{platform}.whl.
 * This check only splits the parts and checks the characters; crawl.c
 * parses the name fully (ow_wheel_name_parse, tags.h) before it records a
 * file. */
static int split_wheel(const char *fn, size_t stem, struct ow_link *l)
{
	const char *part[7];
	size_t len[7], np = 0;
	for (const char *p = fn, *end = fn + stem; p <= end && np < 7;) {
		const char *d = memchr(p, '-', (size_t)(end - p));
		const char *e = d ? d : end;
		part[np] = p;
		len[np++] = (size_t)(e - p);
		p = e + 1;
	}
	for (size_t i = 0; i < np; i++)
		if (len[i] == 0)
			np = 0;
	if (np == 6 && !(part[2][0] >= '0' && part[2][0] <= '9'))
		np = 0; /* a build tag starts with a digit */
	if (np != 5 && np != 6)
		return ow_err(OW_EPARSE,
		              "\"%s\" is not a wheel file name "
		              "(name-version[-build]-python-abi-platform.whl)",
		              fn);
	l->name = strndup(part[0], len[0]);
	l->version = strndup(part[1], len[1]);
	return (l->name && l->version) ? 0 : ow_err(OW_ENOMEM, "pagelinks: out of memory");
}

static int split_sdist(const char *fn, size_t stem, struct ow_link *l)
{
	const char *dash = memrchr(fn, '-', stem);
	if (!dash || dash == fn || (size_t)(dash - fn) + 1 == stem)
		return ow_err(OW_EPARSE, "\"%s\" is not an sdist file name (name-version.tar.gz)",
		              fn);
	l->is_sdist = 1;
	l->name = strndup(fn, (size_t)(dash - fn));
	l->version = strndup(dash + 1, stem - (size_t)(dash - fn) - 1);
	return (l->name && l->version) ? 0 : ow_err(OW_ENOMEM, "pagelinks: out of memory");
}

static int classify_filename(const char *fn, struct ow_link *l)
{
	size_t n = strlen(fn);
	if (n > FILENAME_MAX_LEN)
		return ow_err(OW_EPARSE, "file name longer than %d bytes", FILENAME_MAX_LEN);
	for (size_t i = 0; i < n; i++)
		if (!name_char_ok((unsigned char)fn[i]))
			return ow_err(OW_EPARSE,
			              "file name \"%s\" has a character outside "
			              "[A-Za-z0-9._+!-]",
			              fn);
	if (ends_with(fn, n, ".whl"))
		return split_wheel(fn, n - 4, l);
	if (ends_with(fn, n, ".tar.gz"))
		return split_sdist(fn, n - 7, l);
	if (ends_with(fn, n, ".zip"))
		return split_sdist(fn, n - 4, l);
	return ow_err(OW_EPARSE, "\"%s\" is not a wheel (or sdist) file name", fn);
}

/* --- attributes ---------------------------------------------------------- */

/* data-core-metadata / data-dist-info-metadata: "true" or "<hash>=<hex>".
 * *has: 0 absent or unknown value, 1 present. */
static int parse_meta(const char *v, const char *attr, int *has, char hex[65])
{
	uint8_t d[OW_SHA256_LEN];
	*has = 0;
	hex[0] = '\0';
	if (!v)
		return 0;
	if (!strcmp(v, "true")) {
		*has = 1;
		return 0;
	}
	const char *eq = strchr(v, '=');
	if (!eq || eq == v)
		return 0; /* not PEP 658: read as "no metadata file" */
	*has = 1;
	if ((size_t)(eq - v) != 6 || strncasecmp(v, "sha256", 6))
		return 0; /* another hash name: the file exists, no sha256 */
	if (ow_sha256_from_hex(eq + 1, d))
		return ow_err(OW_EPARSE, "%s=\"%.80s\": sha256 is not 64 hex digits", attr, v);
	ow_hex(d, sizeof d, hex);
	return 0;
}

static int link_meta(const struct ow_html_anchor *a, struct ow_link *l)
{
	int h1, h2;
	char x1[65], x2[65];
	int rc = parse_meta(a->core_metadata, "data-core-metadata", &h1, x1);
	if (!rc)
		rc = parse_meta(a->dist_info_metadata, "data-dist-info-metadata", &h2, x2);
	if (rc)
		return rc;
	if (a->core_metadata && a->dist_info_metadata && (h1 != h2 || strcmp(x1, x2)))
		return ow_err(OW_EPARSE, "data-core-metadata and data-dist-info-metadata "
		                         "disagree");
	l->has_meta = h1 || h2;
	memcpy(l->meta_sha256, h1 ? x1 : x2, sizeof l->meta_sha256);
	return 0;
}

/* Hand a string over from the anchor (the html doc is freed right after). */
static char *take(char **src)
{
	char *s = *src;
	*src = NULL;
	return s;
}

static int link_attrs(struct ow_html_anchor *a, struct ow_link *l)
{
	int rc = link_meta(a, l);
	if (rc)
		return rc;
	l->yanked = a->yanked != NULL;
	l->line = a->line;
	l->requires_python = take(&a->requires_python);
	l->yanked_reason = take(&a->yanked);
	l->upload_time = take(&a->upload_time);
	l->href = take(&a->href);
	l->text = take(&a->text);
	return 0;
}

/* --- one anchor ---------------------------------------------------------- */

static void link_free(struct ow_link *l)
{
	free(l->href);
	free(l->text);
	free(l->url);
	free(l->filename);
	free(l->name);
	free(l->version);
	free(l->requires_python);
	free(l->yanked_reason);
	free(l->upload_time);
}

/* find_links: the file is named by its href alone (a directory listing may
 * cut the text: nginx's autoindex ends a long name with "..>"). */
static int link_file(const struct ow_html_anchor *a, struct ow_link *l, bool find_links)
{
	char t[160];
	int rc = ow_url_basename_decoded(l->url, &l->filename);
	if (rc)
		return ow_err_prefix(rc, "URL basename: ");
	if (!find_links && (!a->text || strcmp(a->text, l->filename))) {
		ow_url_printable(a->text ? a->text : "", t, sizeof t);
		return ow_err(OW_EPARSE, "anchor text \"%s\" is not the URL's file name \"%s\"", t,
		              l->filename);
	}
	return classify_filename(l->filename, l);
}

static int make_link(const struct ow_url *page, const struct ow_url_policy *pol,
                     struct ow_html_anchor *a, struct ow_link *l, bool find_links)
{
	char q[320];
	int rc = ow_url_check_at(pol, page, a->href, &l->url);
	if (rc)
		return rc; /* the detail already names the href */
	rc = ow_url_fragment_sha256(a->href, l->sha256);
	if (rc)
		rc = ow_err_prefix(rc, "malformed #sha256 fragment: ");
	if (!rc)
		rc = link_file(a, l, find_links);
	if (!rc)
		rc = link_attrs(a, l);
	if (rc) {
		ow_url_printable(a->href, q, sizeof q);
		return ow_err_prefix(rc, "href \"%s\": ", q);
	}
	return 0;
}

/* --- the page ------------------------------------------------------------ */

static int add_rejected(struct ow_page *p, const char *href, int line, const char *why)
{
	struct ow_rejected *r = ow_array_more(p->rejected, p->nrejected, sizeof *r);
	if (!r)
		return ow_err(OW_ENOMEM, "pagelinks: out of memory");
	p->rejected = r;
	r += p->nrejected;
	r->href = strdup(href);
	/* analyzer: r->href is in p->rejected, freed below or with the page */
	r->reason = strdup(why);
	/* analyzer: r->reason is in p->rejected, freed below or with the page */
	r->line = line;
	if (!r->href || !r->reason) {
		free(r->href);
		free(r->reason);
		return ow_err(OW_ENOMEM, "pagelinks: out of memory");
	}
	p->nrejected++;
	return 0;
}

/* Formats pip no longer installs (eggs, Windows installers, old sdist
 * archives): not a file of ours and not hostile either; counted apart. */
static bool is_legacy(const char *href)
{
	static const char *const ext[] = {".egg", ".exe", ".msi", ".tar.bz2", ".tbz", ".tgz",
	                                  ".tar.xz", ".txz", ".tar", ".rpm", ".dmg"};
	size_t n = strcspn(href, "#?");
	if (n >= 4 && !memcmp(href + n - 4, ".whl", 4))
		return false; /* nearly every link of a wheel index */
	for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
		size_t k = strlen(ext[i]);
		if (n >= k && !strncasecmp(href + n - k, ext[i], k))
			return true;
	}
	return false;
}

/* The href's last path segment ends like a distribution file (.whl,
 * .tar.gz, .zip): on a find-links page every other link (../, a README,
 * a sort order) is passed over without a word, as pip does. */
static bool names_dist(const char *href)
{
	static const char *const ext[] = {".whl", ".tar.gz", ".zip"};
	size_t n = strcspn(href, "#?");
	for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
		size_t k = strlen(ext[i]);
		if (n >= k && !strncasecmp(href + n - k, ext[i], k))
			return true;
	}
	return false;
}

static int take_anchor(struct ow_page *p, const struct ow_url *page,
                       const struct ow_url_policy *pol, struct ow_html_anchor *a, bool find_links)
{
	struct ow_link l = {0};
	if (find_links && !names_dist(a->href))
		return 0; /* not a file of the listing: ../, a README, a sort order */
	if (is_legacy(a->href)) {
		p->nskipped++;
		return 0;
	}
	if (a->reject)
		return add_rejected(p, a->href, a->line, a->reject);
	int rc = make_link(page, pol, a, &l, find_links);
	if (rc == OW_ENOMEM)
		return rc;
	if (rc) {
		link_free(&l);
		return add_rejected(p, a->href, a->line, ow_err_detail());
	}
	p->links[p->nlinks++] = l;
	return 0;
}

struct url_ix {
	uint64_t hash;
	const char *key;
	size_t i;
};

/* By hash first: the URLs of a page share long prefixes, strcmp is slow. */
static int cmp_by_key(const void *x, const void *y)
{
	const struct url_ix *a = x, *b = y;
	if (a->hash != b->hash)
		return a->hash < b->hash ? -1 : 1;
	int c = strcmp(a->key, b->key);
	return c ? c : (a->i > b->i) - (a->i < b->i);
}

static int same_key(const struct url_ix *a, const struct url_ix *b)
{
	return a->hash == b->hash && !strcmp(a->key, b->key);
}

/* Mark the group [b, e) of links to one URL: copies with the same #sha256
 * are dropped (1), different ones all rejected (2). The key is the URL, not
 * the file name: mixed pages such as /whl/torch/ list one file name in
 * several variant folders (cu75/, cu80/, ...) as distinct files with
 * distinct hashes. */
static int mark_group(struct ow_page *p, const struct url_ix *ix, size_t b, size_t e, char *mark)
{
	int same = 1;
	for (size_t k = b + 1; k < e; k++)
		same = same && !strcmp(p->links[ix[k].i].sha256, p->links[ix[b].i].sha256);
	for (size_t k = b + 1; k < e; k++)
		mark[ix[k].i] = 1;
	if (same)
		return 0;
	for (size_t k = b; k < e; k++) {
		const struct ow_link *l = &p->links[ix[k].i];
		char why[1024], q[320];
		mark[ix[k].i] = 2;
		ow_url_printable(l->href, q, sizeof q);
		snprintf(why, sizeof why,
		         "href \"%s\": the same file \"%s\" is listed %zu times at %s with "
		         "different #sha256 values (or with and without one): conflict, no copy "
		         "is kept",
		         q, l->filename, e - b, l->url);
		if (add_rejected(p, l->href, l->line, why))
			return OW_ENOMEM;
	}
	return 0;
}

static void compact(struct ow_page *p, const char *mark)
{
	size_t o = 0;
	for (size_t i = 0; i < p->nlinks; i++) {
		if (mark[i])
			link_free(&p->links[i]);
		else
			p->links[o++] = p->links[i];
	}
	p->nlinks = o;
}

/* 1 when some URL is listed twice, 0 when none is: one pass over a hash
 * table, so a page of thousands of links is sorted only when it must be. */
static int any_duplicate(const struct url_ix *ix, size_t n)
{
	size_t cap = 16;
	while (cap < 2 * n)
		cap *= 2;
	size_t *slot = calloc(cap, sizeof *slot); /* index + 1, 0 empty */
	if (!slot)
		return ow_err(OW_ENOMEM, "pagelinks: out of memory");
	int dup = 0;
	for (size_t i = 0; i < n && !dup; i++) {
		size_t h = (size_t)ix[i].hash & (cap - 1);
		while (slot[h] && !(dup = same_key(&ix[slot[h] - 1], &ix[i])))
			h = (h + 1) & (cap - 1);
		slot[h] = i + 1;
	}
	free(slot);
	return dup;
}

static int dedup(struct ow_page *p)
{
	struct url_ix *ix = malloc((p->nlinks + 1) * sizeof *ix);
	char *mark = calloc(p->nlinks + 1, 1);
	int rc = (ix && mark) ? 0 : ow_err(OW_ENOMEM, "pagelinks: out of memory");
	for (size_t i = 0; !rc && i < p->nlinks; i++)
		ix[i] = (struct url_ix){ow_fnv1a(p->links[i].url), p->links[i].url, i};
	int dup = rc ? 0 : any_duplicate(ix, p->nlinks);
	if (dup <= 0) { /* the usual page: no URL twice, nothing to group */
		free(ix);
		free(mark);
		return rc ? rc : dup;
	}
	qsort(ix, p->nlinks, sizeof *ix, cmp_by_key);
	for (size_t b = 0, e; !rc && b < p->nlinks; b = e) {
		for (e = b + 1; e < p->nlinks && same_key(&ix[e], &ix[b]); e++)
			;
		if (e - b > 1)
			rc = mark_group(p, ix, b, e, mark);
	}
	if (!rc)
		compact(p, mark);
	free(ix);
	free(mark);
	return rc;
}

static int fill_page(struct ow_page *p, const char *page_url, const struct ow_url_policy *pol,
                     struct ow_html_doc *doc, bool find_links)
{
	struct ow_url page;
	p->has_timestamp = doc->has_timestamp;
	p->timestamp = doc->timestamp;
	p->links = calloc(doc->nanchors + 1, sizeof *p->links);
	if (!p->links)
		return ow_err(OW_ENOMEM, "pagelinks: out of memory");
	int rc = ow_url_parse(page_url, &page);
	for (size_t i = 0; !rc && i < doc->nanchors; i++)
		rc = take_anchor(p, &page, pol, &doc->anchors[i], find_links);
	ow_url_clear(&page);
	return rc ? rc : dedup(p);
}

/* A page {root}/{project}/ of a local index: its root is the folder above. */
static int add_parent_root(struct ow_url_policy *pol, const char *page_url)
{
	char *root = NULL;
	int rc = ow_url_resolve(page_url, "../", &root);
	if (!rc)
		rc = ow_url_policy_add_file_root(pol, root);
	free(root);
	return rc;
}

/* The policy used when the caller gives none. */
static int default_policy(const char *page_url, struct ow_url_policy *pol)
{
	struct ow_url u;
	int rc = ow_url_policy_init(pol);
	if (rc)
		return rc;
	rc = ow_url_parse(page_url, &u);
	if (!rc && u.host && u.host[0])
		rc = ow_url_policy_add_host(pol, u.host);
	if (!rc)
		pol->allow_file = !strcmp(u.scheme, "file");
	if (!rc && pol->allow_file)
		rc = add_parent_root(pol, page_url);
	ow_url_clear(&u);
	if (rc)
		ow_url_policy_clear(pol);
	return rc;
}

static int parse_with(const char *page_url, const char *body, size_t len,
                      const struct ow_html_limits *lim, const struct ow_url_policy *pol,
                      bool find_links, struct ow_page **out)
{
	struct ow_html_doc *doc = NULL;
	int rc = ow_url_check_page(pol, page_url);
	/* PEP 691 JSON or PEP 503 HTML: whichever the index served, the same
	 * anchors and the same checks */
	if (!rc)
		rc = ow_simple_json_sniff(body, len) ? ow_simple_json_parse(body, len, lim, &doc)
		                                     : ow_html_parse(body, len, lim, &doc);
	if (rc)
		return rc;
	struct ow_page *p = calloc(1, sizeof *p);
	rc = p ? fill_page(p, page_url, pol, doc, find_links) : ow_err(OW_ENOMEM, "pagelinks: out of memory");
	ow_html_doc_free(doc);
	if (rc) {
		ow_page_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

int ow_page_parse(const char *page_url, const char *body, size_t len,
                  const struct ow_html_limits *lim, const struct ow_url_policy *pol,
                  struct ow_page **out)
{
	struct ow_url_policy def;
	if (pol)
		return parse_with(page_url, body, len, lim, pol, false, out);
	int rc = default_policy(page_url, &def);
	if (rc)
		return ow_err_prefix(rc, "page URL: ");
	rc = parse_with(page_url, body, len, lim, &def, false, out);
	ow_url_policy_clear(&def);
	return rc;
}

int ow_page_parse_find_links(const char *page_url, const char *body, size_t len,
                             const struct ow_html_limits *lim, const struct ow_url_policy *pol,
                             struct ow_page **out)
{
	return parse_with(page_url, body, len, lim, pol, true, out);
}

void ow_page_free(struct ow_page *page)
{
	if (!page)
		return;
	for (size_t i = 0; i < page->nlinks; i++)
		link_free(&page->links[i]);
	for (size_t i = 0; i < page->nrejected; i++) {
		free(page->rejected[i].href);
		free(page->rejected[i].reason);
	}
	free(page->links);
	free(page->rejected);
	free(page);
}
