/* toml.c - a TOML 1.0 reader (toml.h).
 *
 * One pass over the text with a cursor.  A document is lines of three
 * kinds: `key = value`, `[table]` and `[[array of tables]]`, each followed
 * by an optional comment.  The tree is built as the lines come; the rules
 * of TOML 1.0 against redefinition are kept with three flags per table:
 * DEFINED (a [header] named it: a second [header] may not), DOTTED (a
 * dotted key made it: no [header] may name it later) and FROZEN (an inline
 * table, or a value: nothing may add to it). */
#include "toml.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "offwheel/error.h"
#include "offwheel/str.h"
#include "strmap.h"

enum { T_DEFINED = 1, T_DOTTED = 2, T_FROZEN = 4, T_AOT = 8 };

struct tp {
	const char *s;
	size_t n, i, line;
	const char *path;
	int depth;
	size_t nodes; /* values and tables made so far */
	struct ow_toml *root, *cur; /* the table key/value lines go into */
};

static int perr(const struct tp *p, const char *fmt, ...) OW_PRINTF(2, 3);
static int perr(const struct tp *p, const char *fmt, ...)
{
	char what[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return ow_err(OW_EPARSE, "%s:%zu: %s", p->path, p->line, what);
}

static int oom(void)
{
	return ow_err(OW_ENOMEM, "toml: out of memory");
}

/* ---- the tree ------------------------------------------------------------- */

static struct ow_toml *mknode(enum ow_toml_kind k, size_t line)
{
	struct ow_toml *t = calloc(1, sizeof *t);
	if (t)
		t->kind = k, t->line = line;
	return t;
}

void ow_toml_free(struct ow_toml *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		ow_toml_free(t->kids[i]);
	free(t->kids);
	if (t->index)
		ow_strmap_dispose(t->index);
	free(t->index);
	free(t->key);
	free(t->text);
	free(t);
}

#define TOML_INDEX_FROM 8 /* members before a table is hashed */

/* Index the members of table t by key: all of them, once there are
 * TOML_INDEX_FROM, then each as it comes.  0 or OW_ENOMEM. */
static int index_member(struct ow_toml *t)
{
	if (t->kind != OW_TOML_TABLE || (!t->index && t->n < TOML_INDEX_FROM))
		return 0;
	size_t from = t->index ? t->n - 1 : 0;
	if (!t->index && !(t->index = calloc(1, sizeof *t->index)))
		return oom();
	int rc = 0;
	for (size_t i = from; rc == 0 && i < t->n; i++)
		rc = ow_strmap_add(t->index, t->kids[i]->key, i);
	return rc;
}

/* Append kid to t; kid is freed on failure. */
static int adopt(struct ow_toml *t, struct ow_toml *kid)
{
	struct ow_toml **g = kid ? ow_array_more(t->kids, t->n, sizeof *g) : NULL;
	if (!g) {
		ow_toml_free(kid);
		return oom();
	}
	t->kids = g;
	g[t->n++] = kid;
	return index_member(t);
}

static struct ow_toml *member(const struct ow_toml *t, const char *key)
{
	if (t && t->index) {
		const size_t *i = ow_strmap_find(t->index, key);
		return i ? t->kids[*i] : NULL;
	}
	for (size_t i = 0; t && t->kind == OW_TOML_TABLE && i < t->n; i++)
		if (!strcmp(t->kids[i]->key, key))
			return t->kids[i];
	return NULL;
}

/* One more value or table; the document's cost stays bounded. */
static int count_node(struct tp *p)
{
	if (++p->nodes <= OW_TOML_NODES_MAX)
		return 0;
	return ow_err(OW_ETOOBIG, "%s:%zu: more than %d values and tables in one document (the "
	                          "most offwheel reads)", p->path, p->line, OW_TOML_NODES_MAX);
}

const struct ow_toml *ow_toml_get(const struct ow_toml *t, const char *key)
{
	return member(t, key);
}

/* A new member table `key` of t, with flags. */
static int new_table(struct ow_toml *t, char *key, unsigned flags, size_t line,
                     struct ow_toml **out)
{
	struct ow_toml *k = mknode(OW_TOML_TABLE, line);
	if (!k) {
		free(key);
		return oom();
	}
	k->key = key;
	k->flags = flags;
	int rc = adopt(t, k);
	*out = rc == 0 ? k : NULL;
	return rc;
}

/* ---- characters ---------------------------------------------------------- */

static int peek(const struct tp *p)
{
	return p->i < p->n ? (unsigned char)p->s[p->i] : -1;
}

static bool at(const struct tp *p, const char *lit)
{
	size_t k = strlen(lit);
	return p->n - p->i >= k && !memcmp(p->s + p->i, lit, k);
}

static void blanks(struct tp *p)
{
	while (peek(p) == ' ' || peek(p) == '\t')
		p->i++;
}

static bool is_newline(const struct tp *p)
{
	return peek(p) == '\n' || at(p, "\r\n");
}

static void newline(struct tp *p)
{
	p->i += peek(p) == '\r' ? 2 : 1;
	p->line++;
}

/* A comment runs to the end of the line; control characters but tab are
 * not allowed in it. */
static int comment(struct tp *p)
{
	if (peek(p) != '#')
		return 0;
	for (p->i++; p->i < p->n && !is_newline(p); p->i++) {
		int c = peek(p);
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return perr(p, "a control character (0x%02x) in a comment", c);
	}
	return 0;
}

/* Blanks, then an optional comment, then a newline or the end. */
static int line_end(struct tp *p)
{
	blanks(p);
	int rc = comment(p);
	if (rc < 0)
		return rc;
	if (p->i == p->n)
		return 0;
	if (!is_newline(p))
		return perr(p, "expected the end of the line, found '%c'", peek(p));
	newline(p);
	return 0;
}

/* Blanks, newlines and comments, inside an array. */
static int array_space(struct tp *p)
{
	for (;;) {
		blanks(p);
		int rc = comment(p);
		if (rc < 0)
			return rc;
		if (!is_newline(p))
			return 0;
		newline(p);
	}
}

/* ---- strings ---------------------------------------------------------------- */

/* Append to a string being decoded: 0, or OW_ENOMEM. */
static int put(struct ow_str *b, const char *s, size_t n)
{
	ow_str_put(b, s, n);
	return b->err ? oom() : 0;
}

static int put_utf8(struct ow_str *b, uint32_t cp)
{
	char u[4];
	size_t k;
	if (cp < 0x80)
		u[0] = (char)cp, k = 1;
	else if (cp < 0x800)
		u[0] = (char)(0xc0 | cp >> 6), u[1] = (char)(0x80 | (cp & 0x3f)), k = 2;
	else if (cp < 0x10000)
		u[0] = (char)(0xe0 | cp >> 12), u[1] = (char)(0x80 | (cp >> 6 & 0x3f)),
		u[2] = (char)(0x80 | (cp & 0x3f)), k = 3;
	else
		u[0] = (char)(0xf0 | cp >> 18), u[1] = (char)(0x80 | (cp >> 12 & 0x3f)),
		u[2] = (char)(0x80 | (cp >> 6 & 0x3f)), u[3] = (char)(0x80 | (cp & 0x3f)), k = 4;
	return put(b, u, k);
}

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
	                              : -1;
}

/* \uXXXX or \UXXXXXXXX (the cursor on the u or U). */
static int escape_unicode(struct tp *p, struct ow_str *b)
{
	size_t k = peek(p) == 'u' ? 4 : 8;
	uint32_t cp = 0;
	p->i++;
	for (size_t j = 0; j < k; j++, p->i++) {
		int h = hexval(peek(p));
		if (h < 0)
			return perr(p, "\\%c needs %zu hex digits", k == 4 ? 'u' : 'U', k);
		cp = cp << 4 | (uint32_t)h;
	}
	if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return perr(p, "\\u%04X is not a Unicode scalar value", (unsigned)cp);
	if (cp == 0) /* TOML allows it; every reader of these strings takes them as C text */
		return perr(p, "\\%c%s (a NUL character) in a string or key: offwheel reads them as "
		            "text, which a NUL would cut short (\"alpha\\u0000; marker\" would be "
		            "read as \"alpha\") — remove it", k == 4 ? 'u' : 'U',
		            k == 4 ? "0000" : "00000000");
	return put_utf8(b, cp);
}

/* One escape of a basic string (the cursor after the backslash). */
static int escape(struct tp *p, struct ow_str *b)
{
	static const char from[] = "btnfr\"\\", to[] = "\b\t\n\f\r\"\\";
	int c = peek(p);
	const char *hit = c > 0 ? strchr(from, c) : NULL;
	if (c == 'u' || c == 'U')
		return escape_unicode(p, b);
	if (!hit)
		return perr(p, "an unknown escape '\\%c' in a string", c > 0 ? c : '?');
	p->i++;
	return put(b, &to[hit - from], 1);
}

/* In a multi-line basic string, a backslash at the end of a line (blanks
 * may follow it) removes it and every blank and newline after it. */
static bool line_ending_backslash(struct tp *p)
{
	size_t j = p->i;
	while (j < p->n && (p->s[j] == ' ' || p->s[j] == '\t'))
		j++;
	if (j == p->n || (p->s[j] != '\n' && !(p->s[j] == '\r' && j + 1 < p->n && p->s[j + 1] == '\n')))
		return false;
	p->i = j;
	for (;;) {
		blanks(p);
		if (!is_newline(p))
			return true;
		newline(p);
	}
}

/* The body of a string opened by `quote` (1 or 3 quote characters): basic
 * strings decode escapes, literal ones do not; up to two quotes may end a
 * multi-line body before its closing three. */
static int string_body(struct tp *p, char quote, bool multi, struct ow_str *b)
{
	const char *close = quote == '"' ? (multi ? "\"\"\"" : "\"") : (multi ? "'''" : "'");
	for (;;) {
		if (p->i == p->n)
			return perr(p, "a string that is never closed");
		if (at(p, close)) {
			size_t extra = 0;
			while (multi && extra < 2 && p->i + 3 + extra < p->n && p->s[p->i + 3 + extra] == quote)
				extra++;
			int rc = extra ? put(b, p->s + p->i, extra) : 0;
			p->i += strlen(close) + extra;
			return rc;
		}
		int c = peek(p), rc = 0;
		if (multi && is_newline(p)) {
			rc = put(b, "\n", 1);
			newline(p);
		} else if (c == '\\' && quote == '"') {
			p->i++;
			if (!(multi && line_ending_backslash(p)))
				rc = escape(p, b);
		} else if (c == '\n' || c == '\r') {
			return perr(p, "a line break in a one-line string (three quotes open one of "
			               "several lines)");
		} else if ((c < 0x20 && c != '\t') || c == 0x7f) {
			return perr(p, "a control character (0x%02x) in a string", c);
		} else {
			rc = put(b, p->s + p->i++, 1);
		}
		if (rc < 0)
			return rc;
	}
}

/* A string of any of the four kinds, the cursor on its first quote. */
static int string(struct tp *p, struct ow_str *b)
{
	char quote = (char)peek(p);
	bool multi = at(p, quote == '"' ? "\"\"\"" : "'''");
	p->i += multi ? 3 : 1;
	if (multi && is_newline(p)) /* a newline right after the opening is trimmed */
		newline(p);
	b->n = 0;
	int rc = put(b, "", 0);
	return rc < 0 ? rc : string_body(p, quote, multi, b);
}

/* ---- keys ---------------------------------------------------------------------- */

static bool bare_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

/* One part of a key: bare, "basic" or 'literal' (single-line only). */
static int key_part(struct tp *p, char **out)
{
	struct ow_str b = {0};
	int rc = 0, c = peek(p);
	if (c == '"' || c == '\'') {
		if (at(p, c == '"' ? "\"\"\"" : "'''"))
			return perr(p, "a key cannot be a multi-line string");
		rc = string(p, &b);
	} else if (bare_char(c)) {
		size_t s = p->i;
		while (bare_char(peek(p)))
			p->i++;
		rc = put(&b, p->s + s, p->i - s);
	} else {
		return perr(p, "expected a key, found %s", c < 0 ? "the end" : "another character");
	}
	if (rc < 0) {
		ow_str_dispose(&b);
		return rc;
	}
	*out = b.p;
	return 0;
}

struct key {
	char *part[OW_TOML_DEPTH_MAX];
	size_t n;
};

static void key_free(struct key *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->part[i]);
	k->n = 0;
}

/* A dotted key: parts joined by '.', blanks around the dots. */
static int key(struct tp *p, struct key *k)
{
	k->n = 0;
	for (;;) {
		blanks(p);
		if (k->n == OW_TOML_DEPTH_MAX)
			return perr(p, "a key of more than %d parts", OW_TOML_DEPTH_MAX);
		int rc = key_part(p, &k->part[k->n]);
		if (rc < 0)
			return rc;
		k->n++;
		blanks(p);
		if (peek(p) != '.')
			return 0;
		p->i++;
	}
}

/* ---- values ----------------------------------------------------------------- */

static int value(struct tp *p, struct ow_toml **out);

static bool scalar_char(int c)
{
	return bare_char(c) || c == '.' || c == ':' || c == '+';
}

/* An integer, float, boolean or date-time: its text, checked for shape
 * only.  A date and a time may be joined by one space ("1979-05-27
 * 07:32:00Z"). */
static int scalar(struct tp *p, struct ow_toml **out)
{
	size_t s = p->i;
	while (scalar_char(peek(p)))
		p->i++;
	size_t k = p->i - s;
	if (k == 10 && p->s[s + 4] == '-' && peek(p) == ' ' && p->i + 1 < p->n &&
	    p->s[p->i + 1] >= '0' && p->s[p->i + 1] <= '9')
		for (p->i++; scalar_char(peek(p));)
			p->i++;
	k = p->i - s;
	const char *t = p->s + s;
	bool word = (k == 4 && !memcmp(t, "true", 4)) || (k == 5 && !memcmp(t, "false", 5));
	bool num = k && ((t[0] >= '0' && t[0] <= '9') || t[0] == '+' || t[0] == '-' ||
	                 (k == 3 && (!memcmp(t, "inf", 3) || !memcmp(t, "nan", 3))));
	if (!word && !num)
		return perr(p, "expected a value (a string, number, boolean, date, array or "
		               "inline table)");
	struct ow_toml *v = mknode(OW_TOML_SCALAR, p->line);
	if (!v || !(v->text = strndup(t, k))) {
		ow_toml_free(v);
		return oom();
	}
	v->len = k;
	*out = v;
	return 0;
}

static int array(struct tp *p, struct ow_toml **out)
{
	struct ow_toml *a = mknode(OW_TOML_ARRAY, p->line);
	int rc = a ? 0 : oom();
	p->i++; /* [ */
	while (rc == 0) {
		if ((rc = array_space(p)) < 0 || peek(p) == ']')
			break;
		if (p->i == p->n) {
			rc = perr(p, "an array that is never closed (no ']')");
			break;
		}
		struct ow_toml *item = NULL;
		if ((rc = value(p, &item)) < 0 || (rc = adopt(a, item)) < 0 || (rc = array_space(p)) < 0)
			break;
		if (peek(p) == ',')
			p->i++;
		else if (peek(p) != ']')
			rc = perr(p, "expected ',' or ']' in an array");
	}
	if (rc == 0)
		p->i++; /* ] */
	if (rc < 0)
		ow_toml_free(a);
	*out = rc < 0 ? NULL : a;
	return rc;
}

static int keyval(struct tp *p, struct ow_toml *table, unsigned dotted_flags);

/* { key = value, ... } on one line; frozen once closed. */
static int inline_table(struct tp *p, struct ow_toml **out)
{
	struct ow_toml *t = mknode(OW_TOML_TABLE, p->line);
	int rc = t ? 0 : oom();
	p->i++; /* { */
	blanks(p);
	if (rc == 0 && peek(p) == '}') {
		p->i++;
	} else {
		while (rc == 0) {
			if ((rc = keyval(p, t, T_DOTTED)) < 0)
				break;
			blanks(p);
			if (peek(p) == '}') {
				p->i++;
				break;
			}
			if (peek(p) != ',')
				rc = perr(p, "expected ',' or '}' in an inline table (one line, no "
				             "trailing comma)");
			p->i++;
		}
	}
	if (rc < 0) {
		ow_toml_free(t);
		return rc;
	}
	t->flags = T_FROZEN | T_DEFINED;
	*out = t;
	return 0;
}

static int value(struct tp *p, struct ow_toml **out)
{
	if (++p->depth > OW_TOML_DEPTH_MAX)
		return perr(p, "arrays and inline tables nested more than %d deep", OW_TOML_DEPTH_MAX);
	int rc = count_node(p), c = peek(p);
	if (rc < 0)
		return rc;
	if (c == '"' || c == '\'') {
		struct ow_str b = {0};
		struct ow_toml *v = mknode(OW_TOML_STRING, p->line);
		rc = v ? string(p, &b) : oom();
		if (v)
			v->text = b.p, v->len = b.n;
		if (rc < 0)
			ow_toml_free(v);
		*out = rc < 0 ? NULL : v;
	} else if (c == '[') {
		rc = array(p, out);
	} else if (c == '{') {
		rc = inline_table(p, out);
	} else {
		rc = scalar(p, out);
	}
	p->depth--;
	return rc;
}

/* ---- key/value lines and headers -------------------------------------- */

/* The table a dotted key's leading parts name inside t, made when missing
 * (flagged `made`); an existing one must be a table nothing froze. */
static int descend(struct tp *p, struct ow_toml *t, char *part, unsigned made,
                   struct ow_toml **out)
{
	struct ow_toml *k = member(t, part);
	if (!k) {
		char *name = strdup(part);
		return name ? new_table(t, name, made, p->line, out) : oom();
	}
	if (k->kind == OW_TOML_ARRAY && (k->flags & T_AOT) && k->n && !(made & T_DOTTED)) {
		*out = k->kids[k->n - 1]; /* [a.b] after [[a]]: into a's last table */
		return 0;
	}
	if (k->kind != OW_TOML_TABLE || (k->flags & T_FROZEN) ||
	    ((made & T_DOTTED) && (k->flags & T_DEFINED) && !(k->flags & T_DOTTED)))
		return perr(p, "'%s' is already defined as something else", part);
	*out = k;
	return 0;
}

/* key = value, into `table`; dotted parts make tables flagged dotted_flags. */
static int keyval(struct tp *p, struct ow_toml *table, unsigned dotted_flags)
{
	struct key k;
	int rc = key(p, &k);
	struct ow_toml *t = table, *v = NULL;
	for (size_t i = 0; rc == 0 && i + 1 < k.n; i++)
		rc = descend(p, t, k.part[i], dotted_flags | T_DEFINED, &t);
	if (rc == 0 && member(t, k.part[k.n - 1]))
		rc = perr(p, "the key '%s' is defined twice", k.part[k.n - 1]);
	blanks(p);
	if (rc == 0 && peek(p) != '=')
		rc = perr(p, "expected '=' after the key '%s'", k.part[k.n - 1]);
	if (rc == 0) {
		p->i++;
		blanks(p);
		rc = value(p, &v);
	}
	if (rc == 0) {
		v->key = k.part[k.n - 1];
		k.part[--k.n] = NULL;
		if (v->kind == OW_TOML_TABLE || v->kind == OW_TOML_ARRAY)
			v->flags |= T_FROZEN;
		rc = adopt(t, v);
	}
	key_free(&k);
	return rc;
}

/* [[...]]: a new table at the end of the array of tables m. */
static int append_table(struct tp *p, struct ow_toml *m, const char *name)
{
	if (!m || m->kind != OW_TOML_ARRAY || !(m->flags & T_AOT))
		return perr(p, "'%s' is already defined as something else", name ? name : "?");
	return new_table(m, NULL, T_DEFINED, p->line, &p->cur);
}

/* [...]: table *name of t (m when it exists already, made implicitly). */
static int define_table(struct tp *p, struct ow_toml *t, struct ow_toml *m, char **name)
{
	if (!m) {
		char *key = *name;
		*name = NULL;
		return new_table(t, key, T_DEFINED, p->line, &p->cur);
	}
	if (m->kind != OW_TOML_TABLE || (m->flags & (T_DEFINED | T_FROZEN)))
		return perr(p, "the table '%s' is defined twice", *name);
	m->flags |= T_DEFINED;
	p->cur = m;
	return 0;
}

/* [a.b.c] or [[a.b.c]] (the cursor after the brackets' opening). */
static int header(struct tp *p, bool aot)
{
	struct key k;
	int rc = key(p, &k);
	if (rc == 0)
		rc = count_node(p);
	struct ow_toml *t = p->root;
	for (size_t i = 0; rc == 0 && i + 1 < k.n; i++)
		rc = descend(p, t, k.part[i], 0, &t);
	if (rc == 0 && !at(p, aot ? "]]" : "]"))
		rc = perr(p, "expected '%s' to close the table header", aot ? "]]" : "]");
	if (rc < 0) {
		key_free(&k);
		return rc;
	}
	p->i += aot ? 2 : 1;
	char *last = k.part[--k.n];
	struct ow_toml *m = member(t, last);
	if (aot && !m) {
		struct ow_toml *a = mknode(OW_TOML_ARRAY, p->line);
		if (a)
			a->key = last, a->flags = T_AOT, last = NULL;
		m = a;
		rc = a ? adopt(t, a) : oom();
	}
	if (rc == 0)
		rc = aot ? append_table(p, m, last) : define_table(p, t, m, &last);
	free(last);
	key_free(&k);
	return rc;
}

/* The text must be UTF-8, as a TOML document is. */
static int check_utf8(struct tp *p)
{
	const unsigned char *s = (const unsigned char *)p->s;
	for (size_t i = 0; i < p->n;) {
		unsigned c = s[i];
		size_t k = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
		uint32_t cp = k == 1 ? c : k == 2 ? c & 0x1f : k == 3 ? c & 0x0f : c & 0x07;
		for (size_t j = 1; k && j < k; j++)
			if (i + j >= p->n || (s[i + j] & 0xc0) != 0x80)
				k = 0;
			else
				cp = cp << 6 | (s[i + j] & 0x3f);
		static const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
		if (!k || cp < least[k] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return ow_err(OW_EPARSE, "%s: not UTF-8 text (byte %zu)", p->path, i);
		i += k;
	}
	return 0;
}

static int document(struct tp *p)
{
	while (p->i < p->n) {
		blanks(p);
		int rc = 0;
		if (at(p, "[[")) {
			p->i += 2;
			rc = header(p, true);
		} else if (peek(p) == '[') {
			p->i++;
			rc = header(p, false);
		} else if (peek(p) != '#' && !is_newline(p) && p->i < p->n) {
			rc = keyval(p, p->cur, T_DOTTED);
		}
		if (rc == 0)
			rc = line_end(p);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int ow_toml_parse(const char *text, size_t len, const char *path, struct ow_toml **out)
{
	*out = NULL;
	if (len > OW_TOML_SIZE_MAX)
		return ow_err(OW_ETOOBIG, "%s: larger than %d bytes", path, OW_TOML_SIZE_MAX);
	struct tp p = {text, len, 0, 1, path, 0, 0, NULL, NULL};
	if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3))
		p.i = 3;
	int rc = check_utf8(&p);
	if (rc == 0 && !(p.root = mknode(OW_TOML_TABLE, 1)))
		rc = oom();
	p.cur = p.root;
	if (rc == 0)
		rc = document(&p);
	if (rc < 0) {
		ow_toml_free(p.root);
		return rc;
	}
	*out = p.root;
	return 0;
}
