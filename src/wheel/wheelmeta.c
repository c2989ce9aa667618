/* wheelmeta.c - core metadata (METADATA / PEP 658) and RECORD parsers. */
#include "wheelmeta.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "array.h"
#include "offwheel/error.h"
#include "zipcheck.h"

/* ---- METADATA ------------------------------------------------------------ */

struct field {
	const char *key;
	size_t key_len;
	char *val; /* unfolded value, malloc'd */
	size_t val_len, val_cap;
	size_t line;
};

static int key_is(const struct field *f, const char *k)
{
	return strlen(k) == f->key_len && strncasecmp(f->key, k, f->key_len) == 0;
}

static int append(struct field *f, const char *s, size_t n)
{
	char *v = ow_array_reserve(f->val, &f->val_cap, f->val_len + n + 1, 1);
	if (!v)
		return ow_err(OW_ENOMEM, "METADATA: out of memory");
	f->val = v;
	memcpy(f->val + f->val_len, s, n);
	f->val_len += n;
	f->val[f->val_len] = '\0';
	return 0;
}

static char *take_value(struct field *f)
{
	char *v = f->val ? f->val : strdup("");
	size_t n = f->val ? f->val_len : 0;
	while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		v[--n] = '\0';
	f->val = NULL;
	f->val_len = f->val_cap = 0;
	return v;
}

static int push(char ***list, size_t *n, char *v)
{
	char **l = ow_array_more(*list, *n, sizeof *l);
	if (!l) {
		free(v);
		return ow_err(OW_ENOMEM, "METADATA: out of memory");
	}
	l[(*n)++] = v;
	*list = l;
	return 0;
}

static int push_capped(char ***list, size_t *n, struct field *f, const char *what)
{
	if (*n >= OW_METADATA_MAX_REQUIRES)
		return ow_err(OW_ETOOBIG,
		              "METADATA line %zu: more than %u %s lines (real wheels have a few "
		              "hundred) — the metadata is refused; report it to the index",
		              f->line, OW_METADATA_MAX_REQUIRES, what);
	return push(list, n, take_value(f));
}

static int set_once(char **slot, struct field *f, const char *what)
{
	if (*slot)
		return ow_err(OW_EPARSE,
		              "METADATA line %zu: %s given twice — the metadata is invalid",
		              f->line, what);
	*slot = take_value(f);
	return *slot ? 0 : ow_err(OW_ENOMEM, "METADATA: out of memory");
}

static int store_field(struct ow_metadata *md, struct field *f)
{
	if (key_is(f, "Metadata-Version"))
		return set_once(&md->metadata_version, f, "Metadata-Version");
	if (key_is(f, "Name"))
		return set_once(&md->name, f, "Name");
	if (key_is(f, "Version"))
		return set_once(&md->version, f, "Version");
	if (key_is(f, "Requires-Python"))
		return set_once(&md->requires_python, f, "Requires-Python");
	if (key_is(f, "Summary"))
		return set_once(&md->summary, f, "Summary");
	if (key_is(f, "Requires-Dist"))
		return push_capped(&md->requires_dist, &md->n_requires_dist, f, "Requires-Dist");
	if (key_is(f, "Provides-Extra"))
		return push_capped(&md->provides_extra, &md->n_provides_extra, f, "Provides-Extra");
	free(take_value(f));
	return 0;
}

/* Length of the field name of a header line, or 0 when it is not one. */
static size_t header_key_len(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && s[i] > ' ' && s[i] < 0x7f && s[i] != ':')
		i++;
	return i > 0 && i < n && s[i] == ':' ? i : 0;
}

static int start_field(struct field *f, const char *s, size_t n, size_t line)
{
	size_t k = header_key_len(s, n), v = k + 1;
	f->key = s;
	f->key_len = k;
	f->line = line;
	while (v < n && (s[v] == ' ' || s[v] == '\t'))
		v++;
	return append(f, s + v, n - v);
}

static int valid_name(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("._-", s[i]))
			return 0;
	return 1;
}

static int valid_version(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s <= ' ' || *s >= 0x7f)
			return 0;
	return 1;
}

static int check_required(const struct ow_metadata *md)
{
	if (!md->metadata_version || !md->name || !md->version)
		return ow_err(OW_EPARSE, "METADATA: %s missing — the metadata is invalid",
		              !md->metadata_version ? "Metadata-Version"
		              : !md->name           ? "Name"
		                                    : "Version");
	if (!valid_name(md->name))
		return ow_err(OW_EPARSE, "METADATA: Name '%.200s' is not a valid distribution name",
		              md->name);
	if (!valid_version(md->version))
		return ow_err(OW_EPARSE, "METADATA: Version '%.200s' is not a valid version",
		              md->version);
	return 0;
}

/* One physical line; *done is set at the end of the headers. */
static int metadata_line(struct ow_metadata *md, struct field *f, const char *s, size_t n,
                         size_t line, int *done)
{
	int rc = 0;
	if (n > 0 && (s[0] == ' ' || s[0] == '\t')) {
		if (!f->key)
			return ow_err(OW_EPARSE,
			              "METADATA line %zu: continuation line without a field", line);
		return append(f, s, n);
	}
	if (f->key) {
		rc = store_field(md, f);
		f->key = NULL;
	}
	if (rc)
		return rc;
	if (n == 0 || !header_key_len(s, n)) {
		*done = 1; /* blank line, or the body starts without one (as email does) */
		return 0;
	}
	return start_field(f, s, n, line);
}

static int metadata_lines(struct ow_metadata *md, const char *buf, size_t len)
{
	struct field f = {0};
	int rc = 0, done = 0;
	size_t pos = 0, line = 0;
	while (!rc && !done && pos <= len) {
		const char *nl = pos < len ? memchr(buf + pos, '\n', len - pos) : NULL;
		size_t end = nl ? (size_t)(nl - buf) : len, n = end - pos;
		if (n > 0 && buf[pos + n - 1] == '\r')
			n--;
		if (memchr(buf + pos, '\0', n))
			rc = ow_err(OW_EPARSE, "METADATA line %zu: NUL byte", line + 1);
		else
			rc = metadata_line(md, &f, buf + pos, n, ++line, &done);
		pos = end + 1;
	}
	if (!rc && f.key)
		rc = store_field(md, &f);
	free(f.val);
	return rc;
}

int ow_metadata_parse(const char *buf, size_t len, struct ow_metadata **out)
{
	struct ow_metadata *md = calloc(1, sizeof *md);
	*out = NULL;
	if (!md)
		return ow_err(OW_ENOMEM, "METADATA: out of memory");
	int rc = metadata_lines(md, buf, len);
	if (!rc)
		rc = check_required(md);
	if (rc) {
		ow_metadata_free(md);
		return rc;
	}
	*out = md;
	return 0;
}

static void free_list(char **l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(l[i]);
	free(l);
}

void ow_metadata_free(struct ow_metadata *md)
{
	if (!md)
		return;
	free(md->metadata_version);
	free(md->name);
	free(md->version);
	free(md->requires_python);
	free(md->summary);
	free_list(md->requires_dist, md->n_requires_dist);
	free_list(md->provides_extra, md->n_provides_extra);
	free(md);
}

/* ---- RECORD -------------------------------------------------------------- */

#define RECORD_FIELD_MAX 8192

struct csv {
	const char *buf;
	size_t len, pos, line;
	char field[3][RECORD_FIELD_MAX];
	size_t flen[3];
	size_t nf;
};

static int csv_put(struct csv *c, char ch)
{
	if (c->nf >= 3)
		return ow_err(OW_ERECORD, "RECORD line %zu: more than 3 fields", c->line);
	if (c->flen[c->nf] + 1 >= RECORD_FIELD_MAX)
		return ow_err(OW_ERECORD, "RECORD line %zu: field longer than %d bytes", c->line,
		              RECORD_FIELD_MAX);
	c->field[c->nf][c->flen[c->nf]++] = ch;
	return 0;
}

static int csv_quoted(struct csv *c)
{
	for (c->pos++; c->pos < c->len; c->pos++) {
		char ch = c->buf[c->pos];
		if (ch == '"' && c->pos + 1 < c->len && c->buf[c->pos + 1] == '"')
			c->pos++;
		else if (ch == '"') {
			c->pos++;
			return 0;
		}
		int rc = csv_put(c, ch);
		if (rc)
			return rc;
	}
	return ow_err(OW_ERECORD, "RECORD line %zu: unterminated quoted field", c->line);
}

static int at_eol(const struct csv *c)
{
	return c->pos >= c->len || c->buf[c->pos] == '\n' ||
	       (c->buf[c->pos] == '\r' && (c->pos + 1 >= c->len || c->buf[c->pos + 1] == '\n'));
}

static int csv_field(struct csv *c)
{
	if (c->pos < c->len && c->buf[c->pos] == '"') {
		int rc = csv_quoted(c);
		if (rc)
			return rc;
		if (!at_eol(c) && c->buf[c->pos] != ',')
			return ow_err(OW_ERECORD, "RECORD line %zu: text after a closing quote",
			              c->line);
		return 0;
	}
	for (; !at_eol(c) && c->buf[c->pos] != ','; c->pos++) {
		char ch = c->buf[c->pos];
		int rc = ch == '"' ? ow_err(OW_ERECORD, "RECORD line %zu: stray quote", c->line)
		                   : csv_put(c, ch);
		if (rc)
			return rc;
	}
	return 0;
}

/* Read one row into c->field; c->nf = 0 for a blank line. */
static int csv_row(struct csv *c)
{
	memset(c->flen, 0, sizeof c->flen);
	c->nf = 0;
	c->line++;
	if (at_eol(c)) {
		c->pos += c->pos < c->len && c->buf[c->pos] == '\r' ? 2 : 1;
		return 0;
	}
	for (;;) {
		int rc = csv_field(c);
		if (rc)
			return rc;
		c->nf++;
		if (at_eol(c))
			break;
		c->pos++; /* ',' */
		if (c->nf >= 3)
			return ow_err(OW_ERECORD, "RECORD line %zu: more than 3 fields", c->line);
	}
	c->pos += c->pos < c->len && c->buf[c->pos] == '\r' ? 2 : 1;
	return 0;
}

static int b64val(char ch)
{
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A';
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a' + 26;
	if (ch >= '0' && ch <= '9')
		return ch - '0' + 52;
	return ch == '-' ? 62 : ch == '_' ? 63 : -1;
}

/* 43 base64url characters -> 32 bytes (the last character carries 2 bits). */
static int b64_sha256(const char *s, size_t n, uint8_t out[32])
{
	uint32_t acc = 0;
	int bits = 0;
	size_t o = 0;
	if (n != 43)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int v = b64val(s[i]);
		if (v < 0)
			return -1;
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (uint8_t)(acc >> bits);
		}
	}
	return (acc & ((1u << bits) - 1)) ? -1 : 0;
}

static int parse_hash(const struct csv *c, struct ow_record_row *r)
{
	const char *h = c->field[1];
	size_t n = c->flen[1];
	if (n == 0)
		return 0;
	if (n < 7 || memcmp(h, "sha256=", 7) != 0)
		return ow_err(OW_ERECORD,
		              "RECORD line %zu: hash '%.40s' is not sha256=... (only "
		              "SHA-256 can be checked)",
		              c->line, h);
	if (b64_sha256(h + 7, n - 7, r->sha256))
		return ow_err(OW_ERECORD, "RECORD line %zu: malformed sha256 digest", c->line);
	r->has_hash = 1;
	return 0;
}

static int parse_size(const struct csv *c, struct ow_record_row *r)
{
	const char *s = c->field[2];
	size_t n = c->flen[2];
	if (n == 0)
		return 0;
	if (n > 20 || strspn(s, "0123456789") != n)
		return ow_err(OW_ERECORD, "RECORD line %zu: size '%.40s' is not a number", c->line,
		              s);
	errno = 0;
	r->size = strtoull(s, NULL, 10);
	if (errno)
		return ow_err(OW_ERECORD, "RECORD line %zu: size out of range", c->line);
	r->has_size = 1;
	return 0;
}

static int parse_row(struct csv *c, struct ow_record_row *r)
{
	const char *why = NULL;
	char shown[600];
	for (size_t i = 0; i < 3; i++)
		c->field[i][c->flen[i]] = '\0';
	if (c->nf != 3)
		return ow_err(OW_ERECORD, "RECORD line %zu: %zu fields, expected path,hash,size",
		              c->line, c->nf);
	if (ow_zip_name_check(c->field[0], c->flen[0], 0, &why)) {
		ow_zip_name_show(c->field[0], c->flen[0], shown, sizeof shown);
		return ow_err(OW_ERECORD, "RECORD line %zu: path '%s': %s", c->line, shown, why);
	}
	r->line = c->line;
	int rc = parse_hash(c, r);
	if (!rc)
		rc = parse_size(c, r);
	if (rc)
		return rc;
	r->path_len = c->flen[0];
	r->path = strndup(c->field[0], c->flen[0]);
	return r->path ? 0 : ow_err(OW_ENOMEM, "RECORD: out of memory");
}

static int record_add(struct ow_record *rec, struct csv *c, size_t *cap)
{
	struct ow_record_row *r = ow_array_reserve(rec->rows, cap, rec->n + 1, sizeof *r);
	if (!r)
		return ow_err(OW_ENOMEM, "RECORD: out of memory");
	rec->rows = r;
	memset(&rec->rows[rec->n], 0, sizeof rec->rows[0]);
	int rc = parse_row(c, &rec->rows[rec->n]);
	if (!rc)
		rec->n++;
	return rc;
}

int ow_record_parse(const char *buf, size_t len, struct ow_record **out)
{
	struct ow_record *rec = calloc(1, sizeof *rec);
	struct csv *c = calloc(1, sizeof *c);
	size_t cap = 0;
	int rc = rec && c ? 0 : ow_err(OW_ENOMEM, "RECORD: out of memory");
	*out = NULL;
	if (c)
		c->buf = buf, c->len = len;
	while (!rc && c->pos < len) {
		rc = csv_row(c);
		if (!rc && c->nf > 0)
			rc = record_add(rec, c, &cap);
	}
	free(c);
	if (rc) {
		ow_record_free(rec);
		return rc;
	}
	*out = rec;
	return 0;
}

void ow_record_free(struct ow_record *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		free(r->rows[i].path);
	free(r->rows);
	free(r);
}
