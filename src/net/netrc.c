/* netrc.c - the netrc parser (netrc.h): bytes in, entries out. */
#include "netrc.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "array.h"
#include "offwheel/error.h"

struct lex {
	const char *p, *end;
	size_t line; /* of the next byte, from 1 */
};

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static void skip_line(struct lex *l)
{
	while (l->p < l->end && *l->p != '\n')
		l->p++;
}

/* Past white space (and, where a keyword is due, comments) to the start of
 * the next token: a value such as "password #x" is taken as it is. */
static void skip_blank(struct lex *l, bool comments)
{
	while (l->p < l->end) {
		if (*l->p == '\n')
			l->line++;
		if (is_space(*l->p))
			l->p++;
		else if (comments && *l->p == '#')
			skip_line(l);
		else
			return;
	}
}

static char unescape(char c)
{
	return c == 'n' ? '\n' : c == 'r' ? '\r' : c == 't' ? '\t' : c;
}

/* A quoted token from just past its opening '"': *out malloc'd. */
static int quoted(struct lex *l, char **out)
{
	size_t at = l->line;
	char *d = malloc((size_t)(l->end - l->p) + 1);
	size_t n = 0;
	if (!d)
		return ow_err(OW_ENOMEM, "netrc: out of memory");
	while (l->p < l->end && *l->p != '"') {
		char c = *l->p++;
		if (c == '\\' && l->p < l->end)
			c = unescape(*l->p++);
		l->line += l->p[-1] == '\n';
		d[n++] = c;
	}
	if (l->p == l->end) {
		explicit_bzero(d, n);
		free(d);
		return ow_err(OW_EPARSE, "line %zu: a quoted value has no closing '\"'", at);
	}
	l->p++;
	d[n] = '\0';
	*out = d;
	return 0;
}

/* The next token (a keyword when `kw`): 1 with *out malloc'd, 0 at the
 * end, < 0 on an error. */
static int next_token(struct lex *l, bool kw, char **out)
{
	skip_blank(l, kw);
	if (l->p == l->end)
		return 0;
	if (*l->p == '"') {
		l->p++;
		int rc = quoted(l, out);
		return rc < 0 ? rc : 1;
	}
	const char *s = l->p;
	while (l->p < l->end && !is_space(*l->p))
		l->p++;
	*out = strndup(s, (size_t)(l->p - s));
	return *out ? 1 : ow_err(OW_ENOMEM, "netrc: out of memory");
}

/* A keyword's value; its absence at the end of the text is an error. */
static int value_of(struct lex *l, const char *keyword, char **out)
{
	size_t at = l->line;
	int rc = next_token(l, false, out);
	if (rc == 0)
		return ow_err(OW_EPARSE, "line %zu: '%s' without a value at the end of the file", at,
		              keyword);
	return rc < 0 ? rc : 0;
}

/* A macro's body: the rest of the macdef line, then lines up to the first
 * one that holds nothing but white space. */
static void skip_macro(struct lex *l)
{
	skip_line(l);
	while (l->p < l->end) {
		l->p++; /* the '\n' */
		l->line++;
		const char *s = l->p;
		skip_line(l);
		bool blank = true;
		for (const char *q = s; q < l->p; q++)
			blank &= is_space(*q) != 0;
		if (blank)
			return;
	}
}

static void wipe_free(char *s)
{
	if (s)
		explicit_bzero(s, strlen(s));
	free(s);
}

static int new_entry(struct ow_netrc *n, char *machine)
{
	struct ow_netrc_entry *g = ow_array_more(n->v, n->n, sizeof *g);
	if (!g) {
		free(machine);
		return ow_err(OW_ENOMEM, "netrc: out of memory");
	}
	n->v = g;
	for (char *p = machine; p && *p; p++)
		*p = (char)(*p >= 'A' && *p <= 'Z' ? *p + ('a' - 'A') : *p);
	g[n->n++] = (struct ow_netrc_entry){machine, NULL, NULL};
	return 0;
}

/* login / password / account: the value goes to the current entry (none
 * before the first machine: the value is skipped, as curl skips it). */
static int field(struct lex *l, struct ow_netrc *n, const char *kw, bool in_entry)
{
	char *v = NULL;
	int rc = value_of(l, kw, &v);
	if (rc)
		return rc;
	struct ow_netrc_entry *e = in_entry ? &n->v[n->n - 1] : NULL;
	char **slot = !e ? NULL : !strcmp(kw, "login") ? &e->login
	                      : !strcmp(kw, "password") ? &e->password
	                                                : NULL;
	if (slot) {
		wipe_free(*slot);
		*slot = v;
	} else {
		wipe_free(v);
	}
	return 0;
}

/* One keyword (or a token to skip) `t`, already read. */
static int keyword(struct lex *l, struct ow_netrc *n, const char *t, bool *in_entry)
{
	char *v = NULL;
	int rc = 0;
	if (!strcmp(t, "machine")) {
		if (!(rc = value_of(l, t, &v)))
			rc = new_entry(n, v);
		*in_entry = !rc;
	} else if (!strcmp(t, "default")) {
		rc = new_entry(n, NULL);
		*in_entry = !rc;
	} else if (!strcmp(t, "login") || !strcmp(t, "password") || !strcmp(t, "account")) {
		rc = field(l, n, t, *in_entry);
	} else if (!strcmp(t, "macdef")) {
		if (!(rc = value_of(l, t, &v)))
			skip_macro(l);
		free(v);
	}
	return rc;
}

/* Entries that name no login or password read as "". */
static int fill_blanks(struct ow_netrc *n)
{
	for (size_t i = 0; i < n->n; i++) {
		struct ow_netrc_entry *e = &n->v[i];
		if ((!e->login && !(e->login = strdup(""))) ||
		    (!e->password && !(e->password = strdup(""))))
			return ow_err(OW_ENOMEM, "netrc: out of memory");
	}
	return 0;
}

int ow_netrc_parse(const char *text, size_t len, struct ow_netrc *out)
{
	struct lex l = {text, text + len, 1};
	bool in_entry = false;
	int rc = 0;
	memset(out, 0, sizeof *out);
	if (len > OW_NETRC_MAX_BYTES)
		return ow_err(OW_ETOOBIG, "%zu bytes, more than the %u a netrc file may have", len,
		              OW_NETRC_MAX_BYTES);
	const char *nul = memchr(text, '\0', len);
	if (nul)
		return ow_err(OW_EPARSE, "a NUL byte at offset %zu: not a text file",
		              (size_t)(nul - text));
	for (;;) {
		char *t = NULL;
		if ((rc = next_token(&l, true, &t)) <= 0)
			break;
		rc = keyword(&l, out, t, &in_entry);
		wipe_free(t);
		if (rc)
			break;
	}
	if (!rc)
		rc = fill_blanks(out);
	if (rc)
		ow_netrc_dispose(out);
	return rc;
}

const struct ow_netrc_entry *ow_netrc_find(const struct ow_netrc *n, const char *host,
                                           bool with_default)
{
	const struct ow_netrc_entry *def = NULL;
	for (size_t i = 0; i < n->n; i++) {
		const struct ow_netrc_entry *e = &n->v[i];
		if (e->machine && !strcasecmp(e->machine, host))
			return e;
		if (!e->machine && !def)
			def = e;
	}
	return with_default ? def : NULL;
}

void ow_netrc_dispose(struct ow_netrc *n)
{
	for (size_t i = 0; i < n->n; i++) {
		free(n->v[i].machine);
		wipe_free(n->v[i].login);
		wipe_free(n->v[i].password);
	}
	free(n->v);
	n->v = NULL;
	n->n = 0;
}
