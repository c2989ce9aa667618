/* html.c - PEP 503 anchors through libxml2's HTML SAX parser.
 *
 * SAX rather than a tree: the page is never materialised, the caps (anchors,
 * depth) stop the parser the moment they are crossed, and only the handful of
 * elements that matter are looked at. The parser reads from memory only
 * (HTML_PARSE_NONET, no entity loading), with errors and warnings silenced:
 * what counts is what we extract, and every value is checked afterwards. */
#include "html.h"

#include <errno.h>
#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/SAX2.h>
#include <libxml/parserInternals.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "array.h"
#include "offwheel/error.h"

#define TEXT_CAP 4096u   /* anchor text kept; longer never names a file */
#define HEADING_CAP 120u /* title/h1 text kept for messages */

void ow_html_limits_default(struct ow_html_limits *lim)
{
	lim->max_bytes = OW_HTML_MAX_BYTES;
	lim->max_anchors = OW_HTML_MAX_ANCHORS;
	lim->max_depth = OW_HTML_MAX_DEPTH;
}

/* --- checks before parsing ----------------------------------------------- */

/* Length of the valid UTF-8 sequence at p (1..4), 0 if invalid. */
static size_t utf8_seq(const unsigned char *p, size_t left)
{
	unsigned c = p[0];
	size_t n = c < 0x80 ? 1 : c < 0xc2 ? 0 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : c < 0xf5 ? 4 : 0;
	if (n == 0 || n > left)
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if (n == 3 && ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0)))
		return 0; /* overlong, surrogate */
	if (n == 4 && ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90)))
		return 0; /* overlong, above U+10FFFF */
	return n;
}

/* 1 when none of the 8 bytes at p has its top bit set. */
static int ascii8(const unsigned char *p)
{
	uint64_t w;
	memcpy(&w, p, sizeof w);
	return !(w & 0x8080808080808080ull);
}

static int check_utf8(const unsigned char *p, size_t len)
{
	for (size_t i = 0; i < len;) {
		if (i + 8 <= len && ascii8(p + i)) { /* the usual page is all ASCII */
			i += 8;
			continue;
		}
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		size_t n = utf8_seq(p + i, len - i);
		if (n == 0)
			return ow_err(OW_EPARSE,
			              "invalid UTF-8 at byte %zu: an index page must be "
			              "UTF-8 HTML",
			              i);
		i += n;
	}
	return 0;
}

static int is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

static int check_shape(const char *body, size_t len)
{
	size_t i = 0;
	if (len >= 3 && !memcmp(body, "\xef\xbb\xbf", 3))
		i = 3;
	while (i < len && is_space((unsigned char)body[i]))
		i++;
	if (i == len)
		return ow_err(OW_EPARSE, "empty body, expected an HTML index page");
	if (body[i] == '{' || body[i] == '[')
		return ow_err(OW_EPARSE, "looks like JSON, expected an HTML index page (PEP 691 "
		                         "JSON is not read)");
	if (!memchr(body + i, '<', len - i))
		return ow_err(OW_EPARSE, "no HTML markup at all, expected an HTML index page");
	return 0;
}

/* libxml2's HTML tokenizer, as far as counting attributes goes: a start tag
 * is '<' and a name's first character (a letter, '_', ':', '.'); in it,
 * blanks separate attributes, a value may be quoted (then '>' and blanks are
 * in it), and the tag ends at '>' or "/>".
 * Comments and the text of <script> and <style> hold no tags; each is
 * skipped only up to the earliest end any libxml2 gives it (a comment ends
 * at "-->" or "--!>", "<!-->" included; raw text at "</" and a letter), so
 * what is counted is never less than what libxml2 parses: counting too much
 * only refuses a page no index serves (inline scripts are skipped, so their
 * `a<b` never reads as a tag). */
static int is_name_start(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' || c == '.';
}

static int is_name_char(int c)
{
	return is_name_start(c) || (c >= '0' && c <= '9') || c == '-';
}

static int tag_ends(const char *p, const char *end)
{
	return p >= end || *p == '>' || (*p == '/' && p + 1 < end && p[1] == '>');
}

/* Past the value after '=' at p. */
static const char *skip_value(const char *p, const char *end)
{
	while (p < end && is_space((unsigned char)*p))
		p++;
	if (p < end && (*p == '"' || *p == '\'')) {
		const char *q = memchr(p + 1, *p, (size_t)(end - p - 1));
		return q ? q + 1 : end;
	}
	while (p < end && !is_space((unsigned char)*p) && *p != '>')
		p++;
	return p;
}

/* The attributes of the start tag whose name begins at p; *next gets where
 * the tag ends. */
static size_t count_attrs(const char *p, const char *end, const char **next)
{
	size_t n = 0;
	while (p < end && is_name_char((unsigned char)*p))
		p++;
	while (!tag_ends(p, end)) {
		if (is_space((unsigned char)*p)) {
			p++;
			continue;
		}
		int named = is_name_start((unsigned char)*p);
		while (!tag_ends(p, end) && !is_space((unsigned char)*p) && *p != '=')
			p++;
		n += named;
		while (p < end && is_space((unsigned char)*p))
			p++;
		if (p < end && *p == '=')
			p = skip_value(p + 1, end);
	}
	*next = p;
	return n;
}

static int is_letter(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Past the comment whose "<!--" is at p, or NULL when it never ends. */
static const char *skip_comment(const char *p, const char *end)
{
	const char *a = memmem(p + 2, (size_t)(end - p - 2), "-->", 3);
	const char *b = memmem(p + 4, (size_t)(end - p - 4), "--!>", 4);
	if (a && (!b || a < b))
		return a + 3;
	return b ? b + 4 : NULL;
}

/* Past the text of a <script> or <style> that starts at p. */
static const char *skip_raw_text(const char *p, const char *end)
{
	for (; (p = memchr(p, '<', (size_t)(end - p))) && p + 2 < end; p++)
		if (p[1] == '/' && is_letter((unsigned char)p[2]))
			return p;
	return end;
}

static int is_raw_text(const char *name, size_t n)
{
	return (n == 6 && !strncasecmp(name, "script", 6)) ||
	       (n == 5 && !strncasecmp(name, "style", 5));
}

static size_t name_len(const char *p, const char *end)
{
	size_t n = 0;
	while (p + n < end && is_name_char((unsigned char)p[n]))
		n++;
	return n;
}

static int check_attr_counts(const char *body, size_t len)
{
	const char *p = body, *end = body + len;
	while ((p = memchr(p, '<', (size_t)(end - p))) && p + 1 < end) {
		const char *tag = ++p, *next;
		if ((size_t)(end - tag) >= 3 && !memcmp(tag, "!--", 3)) {
			const char *after = skip_comment(tag - 1, end);
			p = after ? after : tag;
			continue;
		}
		if (!is_name_start((unsigned char)*tag))
			continue;
		size_t nl = name_len(tag, end);
		if (count_attrs(tag, end, &next) <= OW_HTML_MAX_ATTRS) {
			/* "<script/>" is empty: only "<script>" starts raw text */
			int raw = is_raw_text(tag, nl) && next < end && *next == '>';
			p = raw ? skip_raw_text(next + 1, end) : next;
			continue;
		}
		return ow_err(OW_EPARSE,
		              "<%.*s> at byte %zu has more than %u attributes (an index page has "
		              "fewer than 10 on a tag): not an index page, refused",
		              (int)(nl < 20 ? nl : 20), tag, (size_t)(tag - 1 - body),
		              OW_HTML_MAX_ATTRS);
	}
	return 0;
}

static int precheck(const char *body, size_t len, const struct ow_html_limits *lim)
{
	const char *nul = memchr(body, '\0', len);
	if (len > lim->max_bytes)
		return ow_err(OW_ETOOBIG, "page is %zu bytes, over the %zu-byte cap", len,
		              lim->max_bytes);
	if (len > INT32_MAX)
		return ow_err(OW_ETOOBIG, "page is over 2 GiB");
	if (nul)
		return ow_err(OW_EPARSE, "NUL byte at offset %zu: not an HTML index page",
		              (size_t)(nul - body));
	int rc = check_utf8((const unsigned char *)body, len);
	if (!rc)
		rc = check_shape(body, len);
	return rc ? rc : check_attr_counts(body, len);
}

/* --- the SAX state ------------------------------------------------------- */

struct tbuf {
	char *p;
	size_t n, cap;
};

struct state {
	xmlParserCtxtPtr ctxt;
	struct ow_html_limits lim;
	struct ow_html_doc *doc;
	size_t cap;    /* allocated anchors */
	size_t seen_a; /* <a> elements, with or without href */
	unsigned depth;
	int in_a;         /* collecting the text of doc->anchors[nanchors-1] */
	int heading;      /* 0 none yet, 1 inside the first title/h1, 2 done */
	unsigned in_head; /* inside any title/h1 */
	unsigned skip;    /* inside elements whose links pip would not see */
	struct tbuf text;
	struct tbuf head;
	size_t loose_text; /* non-space characters outside anchors and headings */
	char *base_href;
	const char *portal; /* what made the page look like a login page */
	int rc;
};

static int tbuf_add(struct tbuf *b, const char *s, size_t n, size_t cap)
{
	if (b->n + n > cap)
		n = cap > b->n ? cap - b->n : 0;
	char *p = ow_array_reserve(b->p, &b->cap, b->n + n + 1, 1);
	if (!p)
		return ow_err(OW_ENOMEM, "html: out of memory");
	b->p = p;
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
	return 0;
}

static void fail(struct state *st, int rc)
{
	if (!st->rc)
		st->rc = rc;
	xmlStopParser(st->ctxt);
}

static char *dup_attr(const xmlChar *v)
{
	return strdup(v ? (const char *)v : "");
}

static char *trimmed(const struct tbuf *b)
{
	const char *s = b->p ? b->p : "";
	size_t n = b->n;
	while (n && is_space((unsigned char)*s)) {
		s++;
		n--;
	}
	while (n && is_space((unsigned char)s[n - 1]))
		n--;
	return strndup(s, n);
}

/* --- anchors ------------------------------------------------------------- */

static void anchor_free(struct ow_html_anchor *a)
{
	free(a->href);
	free(a->text);
	free(a->dist_info_metadata);
	free(a->core_metadata);
	free(a->requires_python);
	free(a->yanked);
	free(a->upload_time);
	free(a->reject);
}

static char **attr_slot(struct ow_html_anchor *a, const char *name)
{
	static const struct {
		const char *name;
		size_t off;
	} map[] = {
	    {"href", offsetof(struct ow_html_anchor, href)},
	    {"data-dist-info-metadata", offsetof(struct ow_html_anchor, dist_info_metadata)},
	    {"data-core-metadata", offsetof(struct ow_html_anchor, core_metadata)},
	    {"data-requires-python", offsetof(struct ow_html_anchor, requires_python)},
	    {"data-yanked", offsetof(struct ow_html_anchor, yanked)},
	    {"data-upload-time", offsetof(struct ow_html_anchor, upload_time)},
	};
	if (name[0] != 'h' && name[0] != 'd')
		return NULL; /* neither href nor data-*: most attributes end here */
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (!strcmp(name, map[i].name))
			return (char **)(void *)((char *)a + map[i].off); /* a char * field */
	return NULL;
}

static int set_attrs(struct ow_html_anchor *a, const xmlChar **atts)
{
	for (size_t i = 0; atts && atts[i]; i += 2) {
		char **slot = attr_slot(a, (const char *)atts[i]);
		if (!slot || *slot)
			continue; /* unknown, or a repeat: the first one counts */
		*slot = dup_attr(atts[i + 1]);
		/* analyzer: *slot is a field of the caller's anchor, freed by anchor_free */
		if (!*slot)
			return ow_err(OW_ENOMEM, "html: out of memory");
	}
	return 0;
}

static int grow_anchors(struct state *st)
{
	struct ow_html_doc *d = st->doc;
	struct ow_html_anchor *p = ow_array_reserve(d->anchors, &st->cap, d->nanchors + 1, sizeof *p);
	if (!p)
		return ow_err(OW_ENOMEM, "html: out of memory");
	d->anchors = p;
	return 0;
}

static void anchor_end(struct state *st)
{
	struct ow_html_anchor *a = &st->doc->anchors[st->doc->nanchors - 1];
	st->in_a = 0;
	a->text = trimmed(&st->text);
	/* analyzer: a->text is st->doc->anchors[nanchors - 1], freed with the document */
	if (!a->text)
		fail(st, ow_err(OW_ENOMEM, "html: out of memory"));
}

static void anchor_start(struct state *st, const xmlChar **atts)
{
	struct ow_html_anchor a = {0};
	if (st->in_a)
		anchor_end(st);
	if (++st->seen_a > st->lim.max_anchors) {
		fail(st, ow_err(OW_ETOOBIG, "more than %zu anchors on the page (line %d)",
		                st->lim.max_anchors, xmlSAX2GetLineNumber(st->ctxt)));
		return;
	}
	a.line = xmlSAX2GetLineNumber(st->ctxt);
	int rc = set_attrs(&a, atts);
	if (!rc && a.href)
		rc = grow_anchors(st);
	if (rc || !a.href) {
		anchor_free(&a);
		if (rc)
			fail(st, rc);
		return;
	}
	st->doc->anchors[st->doc->nanchors++] = a;
	st->text.n = 0;
	st->in_a = 1;
}

/* --- other elements ------------------------------------------------------ */

static const char *attr_value(const xmlChar **atts, const char *name)
{
	for (size_t i = 0; atts && atts[i]; i += 2)
		if (!strcmp((const char *)atts[i], name))
			return atts[i + 1] ? (const char *)atts[i + 1] : "";
	return NULL;
}

static void base_start(struct state *st, const xmlChar **atts)
{
	const char *href = attr_value(atts, "href");
	if (href && !st->base_href && !(st->base_href = strdup(href)))
		fail(st, ow_err(OW_ENOMEM, "html: out of memory"));
}

static void meta_start(struct state *st, const xmlChar **atts)
{
	const char *he = attr_value(atts, "http-equiv");
	if (he && !strcasecmp(he, "refresh"))
		st->portal = "a <meta http-equiv=refresh> redirect";
}

static void other_start(struct state *st, const char *name, const xmlChar **atts)
{
	if (!strcmp(name, "base"))
		base_start(st, atts);
	else if (!strcmp(name, "meta"))
		meta_start(st, atts);
	else if (!strcmp(name, "form"))
		st->portal = "a <form>";
	else if (!strcmp(name, "input") && !st->portal)
		st->portal = "an <input> field";
	else if (!strcmp(name, "title") || !strcmp(name, "h1")) {
		st->in_head++;
		if (st->heading == 0)
			st->heading = 1;
	}
}

/* Links inside these are not links of the page: raw text (script, style,
 * textarea, title) for an HTML5 parser such as pip's, or content that is
 * not rendered (template, noscript). libxml2's HTML 4 parser reads
 * elements inside all but script and style, so they are skipped here. */
static int is_skipped(const char *name)
{
	static const char *const tab[] = {"script", "style", "textarea", "title", "template",
	                                  "noscript", "xmp", "iframe", "noembed", "noframes"};
	if (!strchr("stnxi", name[0]))
		return 0; /* no name in tab starts otherwise: a, br, h1, body, ... end here */
	for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
		if (!strcmp(name, tab[i]))
			return 1;
	return 0;
}

/* --- SAX callbacks ------------------------------------------------------- */

static void on_start(void *ctx, const xmlChar *name, const xmlChar **atts)
{
	struct state *st = ctx;
	if (st->rc)
		return;
	if (++st->depth > st->lim.max_depth) {
		fail(st, ow_err(OW_ETOOBIG, "elements nested deeper than %u (line %d)",
		                st->lim.max_depth, xmlSAX2GetLineNumber(st->ctxt)));
		return;
	}
	if (!strcmp((const char *)name, "a")) {
		if (!st->skip)
			anchor_start(st, atts);
		return;
	}
	if (is_skipped((const char *)name)) {
		if (st->in_a)
			anchor_end(st);
		st->skip++;
	}
	other_start(st, (const char *)name, atts);
}

static void on_end(void *ctx, const xmlChar *name)
{
	struct state *st = ctx;
	const char *n = (const char *)name;
	if (st->rc)
		return;
	if (st->depth)
		st->depth--;
	if (is_skipped(n) && st->skip)
		st->skip--;
	if (!strcmp(n, "a") && st->in_a)
		anchor_end(st);
	else if ((!strcmp(n, "title") || !strcmp(n, "h1")) && st->in_head) {
		st->in_head--;
		if (st->heading == 1)
			st->heading = 2;
	}
}

static void count_loose(struct state *st, const xmlChar *ch, int len)
{
	for (int i = 0; i < len; i++)
		st->loose_text += !is_space(ch[i]);
}

static void on_text(void *ctx, const xmlChar *ch, int len)
{
	struct state *st = ctx;
	int rc = 0;
	if (st->rc || len <= 0)
		return;
	if (st->in_a)
		rc = tbuf_add(&st->text, (const char *)ch, (size_t)len, TEXT_CAP);
	else if (st->heading == 1)
		rc = tbuf_add(&st->head, (const char *)ch, (size_t)len, HEADING_CAP);
	else if (!st->in_head)
		count_loose(st, ch, len);
	if (rc)
		fail(st, rc);
}

/* "<!--TIMESTAMP 1697195006-->", the trailer of the PyTorch pages. */
static void on_comment(void *ctx, const xmlChar *value)
{
	struct state *st = ctx;
	const char *v = (const char *)value;
	char *end = NULL;
	while (is_space((unsigned char)*v))
		v++;
	if (st->rc || st->doc->has_timestamp || strncmp(v, "TIMESTAMP", 9) || !is_space(v[9]))
		return;
	v += 10;
	errno = 0;
	long long t = strtoll(v, &end, 10);
	while (end && is_space((unsigned char)*end))
		end++;
	if (errno || end == v || !end || *end || t < 0 || *v == '-' || *v == '+')
		return;
	st->doc->timestamp = t;
	st->doc->has_timestamp = 1;
}

/* --- driving the parser -------------------------------------------------- */

static pthread_once_t xml_once = PTHREAD_ONCE_INIT;

static void xml_init(void)
{
	xmlInitParser();
}

static void install_sax(htmlParserCtxtPtr ctxt, struct state *st)
{
	xmlSAXHandler *sax = ctxt->sax;
	memset(sax, 0, sizeof *sax);
	sax->startElement = on_start;
	sax->endElement = on_end;
	sax->characters = on_text;
	sax->cdataBlock = NULL;
	sax->comment = on_comment;
	sax->initialized = 1; /* SAX1: no structured error channel */
	ctxt->userData = st;
}

/* "<![CDATA[ ... ]]>" is no markup in HTML: a browser and pip's parser see
 * no link inside, libxml2's HTML parser sees the elements.  A copy of the
 * body has each such section (to its "]]>", else to the end) blanked out,
 * newlines kept for the line numbers.  NULL: nothing to blank (or ENOMEM,
 * *rc set). */
static char *blank_cdata(const char *body, size_t len, int *rc)
{
	static const char open[] = "<![CDATA[";
	const size_t ol = sizeof open - 1;
	const char *p = memmem(body, len, open, ol);
	*rc = 0;
	if (!p)
		return NULL;
	char *copy = malloc(len + 1);
	if (!copy) {
		*rc = ow_err(OW_ENOMEM, "html: out of memory");
		return NULL;
	}
	memcpy(copy, body, len);
	copy[len] = '\0';
	for (char *q = copy + (p - body); q; q = memmem(q, len - (size_t)(q - copy), open, ol)) {
		char *end = memmem(q + ol, len - (size_t)(q + ol - copy), "]]>", 3);
		char *stop = end ? end + 3 : copy + len;
		for (char *c = q; c < stop; c++)
			if (*c != '\n')
				*c = ' ';
		q = stop;
		if (q >= copy + len)
			break;
	}
	return copy;
}

static int run_parser(const char *body, size_t len, struct state *st)
{
	const int opts = HTML_PARSE_NONET | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING |
	                 HTML_PARSE_NOBLANKS | HTML_PARSE_IGNORE_ENC | HTML_PARSE_NODEFDTD;
	int rc;
	char *blanked = blank_cdata(body, len, &rc);
	if (rc)
		/* analyzer: rc is nonzero only where blank_cdata returned NULL */
		return rc;
	pthread_once(&xml_once, xml_init);
	htmlParserCtxtPtr ctxt = htmlCreateMemoryParserCtxt(blanked ? blanked : body, (int)len);
	if (!ctxt) {
		free(blanked);
		return ow_err(OW_ENOMEM, "html: cannot create the libxml2 parser");
	}
	install_sax(ctxt, st);
	htmlCtxtUseOptions(ctxt, opts);
	xmlSwitchEncoding(ctxt, XML_CHAR_ENCODING_UTF8);
	st->ctxt = ctxt;
	htmlParseDocument(ctxt);
	htmlFreeParserCtxt(ctxt);
	free(blanked);
	st->ctxt = NULL;
	if (!st->rc && st->in_a)
		anchor_end(st);
	return st->rc;
}

static int heading_is_index(const struct state *st)
{
	const char *h = st->head.p ? st->head.p : "";
	while (is_space((unsigned char)*h))
		h++;
	return !strncmp(h, "Links for", 9);
}

/* What the page looks like once parsed: refuse <base>, logins, portals. */
static int judge(const struct state *st)
{
	const char *h = st->head.p ? st->head.p : "";
	if (st->base_href)
		return ow_err(OW_EPOLICY,
		              "page has <base href=\"%.200s\">: PEP 503 pages do not "
		              "use it, and offwheel refuses pages that re-base their links",
		              st->base_href);
	if (st->portal)
		return ow_err(OW_EPARSE,
		              "looks like a captive portal or login page (it has %s; "
		              "title \"%.80s\"), expected an HTML index page — is a proxy or "
		              "network login in the way?",
		              st->portal, h);
	if (st->seen_a == 0 && st->loose_text && !heading_is_index(st))
		return ow_err(OW_EPARSE,
		              "no links and text that is not an index (title \"%.80s\"): "
		              "looks like a captive portal or error page, expected an HTML "
		              "index page",
		              h);
	return 0;
}

int ow_html_parse(const char *body, size_t len, const struct ow_html_limits *lim,
                  struct ow_html_doc **out)
{
	struct state st = {0};
	if (lim)
		st.lim = *lim;
	else
		ow_html_limits_default(&st.lim);
	int rc = precheck(body, len, &st.lim);
	if (rc)
		return rc;
	st.doc = calloc(1, sizeof *st.doc);
	if (!st.doc)
		return ow_err(OW_ENOMEM, "html: out of memory");
	rc = run_parser(body, len, &st);
	if (!rc)
		rc = judge(&st);
	free(st.text.p);
	free(st.head.p);
	free(st.base_href);
	if (rc) {
		ow_html_doc_free(st.doc);
		return rc;
	}
	*out = st.doc;
	return 0;
}

void ow_html_doc_free(struct ow_html_doc *doc)
{
	if (!doc)
		return;
	for (size_t i = 0; i < doc->nanchors; i++)
		anchor_free(&doc->anchors[i]);
	free(doc->anchors);
	free(doc);
}
