/* pep440.c - PEP 440 versions: a hand-written scanner that follows the
 * spec's reference regular expression (optional separators, alternative
 * spellings), the canonical form and the ordering; then specifiers. */
#include "pep440.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "offwheel/error.h"

/* A syntax error that parse_n turns into one message. */
#define BAD (-1)

struct scan {
	const char *s;
	size_t n;
	size_t i;
};

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alnum_lower(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static bool is_sep(char c)
{
	return c == '-' || c == '_' || c == '.';
}

static char to_lower(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

static char peek(const struct scan *sc, size_t at)
{
	return at < sc->n ? sc->s[at] : '\0';
}

/* Length of `word` if it starts at `at` (case-insensitively), else 0. */
static size_t word_at(const struct scan *sc, size_t at, const char *word)
{
	size_t k = strlen(word);
	if (at + k > sc->n)
		return 0;
	for (size_t j = 0; j < k; j++)
		if (to_lower(sc->s[at + j]) != word[j])
			return 0;
	return k;
}

/* Read a run of digits at *at; 1 when one was read, 0 when none is there. */
static int read_num(const struct scan *sc, size_t *at, uint64_t *out)
{
	uint64_t v = 0;
	size_t p = *at;
	if (!is_digit(peek(sc, p)))
		return 0;
	for (; is_digit(peek(sc, p)); p++) {
		uint64_t d = (uint64_t)(sc->s[p] - '0');
		if (v > (OW_VER_NUM_MAX - d) / 10)
			return ow_err(OW_EPARSE,
			              "version '%.*s': number too large (over 18 digits)",
			              (int)(sc->n > 200 ? 200 : sc->n), sc->s);
		v = v * 10 + d;
	}
	*at = p;
	*out = v;
	return 1;
}

static int parse_release(struct scan *sc, struct ow_version *v)
{
	uint64_t num;
	int rc = read_num(sc, &sc->i, &num);
	if (rc <= 0)
		return rc < 0 ? rc : BAD;
	if (peek(sc, sc->i) == '!') {
		v->epoch = num;
		sc->i++;
		rc = read_num(sc, &sc->i, &num);
		if (rc <= 0)
			return rc < 0 ? rc : BAD;
	}
	v->release[v->nrelease++] = num;
	while (peek(sc, sc->i) == '.' && is_digit(peek(sc, sc->i + 1))) {
		if (v->nrelease == OW_VER_RELEASE_MAX)
			return ow_err(OW_EPARSE, "version '%.*s': more than %d release numbers",
			              (int)sc->n, sc->s, OW_VER_RELEASE_MAX);
		sc->i++;
		rc = read_num(sc, &sc->i, &num);
		if (rc < 0)
			return rc;
		v->release[v->nrelease++] = num;
	}
	return 0;
}

/* "[sep]label[sep][N]": the label's length-prefixed form is tried longest
 * first, which is what the reference regex does.  1 and *end when found,
 * 0 when not there. */
static int parse_labelled(const struct scan *sc, size_t at, const char *const *labels,
                          size_t *which, uint64_t *num, size_t *end)
{
	size_t p = at + (is_sep(peek(sc, at)) ? 1 : 0);
	size_t k = 0;
	for (*which = 0; labels[*which]; (*which)++)
		if ((k = word_at(sc, p, labels[*which])) > 0)
			break;
	if (k == 0)
		return 0;
	p += k;
	size_t q = p + (is_sep(peek(sc, p)) ? 1 : 0);
	*num = 0;
	int rc = read_num(sc, &q, num);
	if (rc < 0)
		return rc;
	*end = q; /* a trailing separator is taken even without a number */
	return 1;
}

static int parse_pre(struct scan *sc, struct ow_version *v)
{
	static const char *const labels[] = {"alpha", "a", "beta", "b", "preview",
	                                     "pre",   "c", "rc",   NULL};
	static const enum ow_pre_kind kinds[] = {OW_PRE_A,  OW_PRE_A,  OW_PRE_B,  OW_PRE_B,
	                                         OW_PRE_RC, OW_PRE_RC, OW_PRE_RC, OW_PRE_RC};
	size_t which, end;
	int rc = parse_labelled(sc, sc->i, labels, &which, &v->pre_num, &end);
	if (rc <= 0)
		return rc;
	v->pre = kinds[which];
	sc->i = end;
	return 0;
}

static int parse_post(struct scan *sc, struct ow_version *v)
{
	static const char *const labels[] = {"post", "rev", "r", NULL};
	size_t which, end = sc->i + 1;
	if (peek(sc, sc->i) == '-' && is_digit(peek(sc, sc->i + 1))) {
		int rc = read_num(sc, &end, &v->post);
		if (rc < 0)
			return rc;
		v->has_post = true;
		sc->i = end;
		return 0;
	}
	int rc = parse_labelled(sc, sc->i, labels, &which, &v->post, &end);
	if (rc <= 0)
		return rc;
	v->has_post = true;
	sc->i = end;
	return 0;
}

static int parse_dev(struct scan *sc, struct ow_version *v)
{
	static const char *const labels[] = {"dev", NULL};
	size_t which, end;
	int rc = parse_labelled(sc, sc->i, labels, &which, &v->dev, &end);
	if (rc <= 0)
		return rc;
	v->has_dev = true;
	sc->i = end;
	return 0;
}

/* Append one local segment, lowercased; numeric ones lose leading zeros. */
static int append_local_segment(char *out, size_t *len, const char *seg, size_t k)
{
	bool numeric = true;
	for (size_t j = 0; j < k; j++)
		numeric = numeric && is_digit(seg[j]);
	while (numeric && k > 1 && seg[0] == '0') {
		seg++;
		k--;
	}
	if (*len + k + 2 > OW_VER_LOCAL_MAX)
		return ow_err(OW_EPARSE, "version: local label longer than %d characters",
		              OW_VER_LOCAL_MAX - 1);
	if (*len > 0)
		out[(*len)++] = '.';
	for (size_t j = 0; j < k; j++)
		out[(*len)++] = to_lower(seg[j]);
	out[*len] = '\0';
	return 0;
}

static int parse_local(struct scan *sc, struct ow_version *v)
{
	size_t len = 0;
	if (peek(sc, sc->i) != '+')
		return 0;
	sc->i++;
	for (;;) {
		size_t start = sc->i;
		while (is_alnum_lower(peek(sc, sc->i)))
			sc->i++;
		if (sc->i == start)
			return BAD;
		int rc = append_local_segment(v->local, &len, sc->s + start, sc->i - start);
		if (rc < 0)
			return rc;
		if (!is_sep(peek(sc, sc->i)))
			return 0;
		sc->i++;
	}
}

static int parse_all(struct scan *sc, struct ow_version *v)
{
	int rc;
	if (peek(sc, sc->i) == 'v' || peek(sc, sc->i) == 'V')
		sc->i++;
	if ((rc = parse_release(sc, v)) < 0)
		return rc;
	if ((rc = parse_pre(sc, v)) < 0 || (rc = parse_post(sc, v)) < 0)
		return rc;
	if ((rc = parse_dev(sc, v)) < 0 || (rc = parse_local(sc, v)) < 0)
		return rc;
	return sc->i == sc->n ? 0 : BAD;
}

static int format_parts(const struct ow_version *v, char *buf, size_t cap);

/* Every accepted version has a canonical text of at most OW_VER_TEXT_MAX
 * (spellings like "1.0r" grow when normalized). */
static int check_canonical_length(const struct ow_version *v, const char *text)
{
	char buf[OW_VER_TEXT_MAX + 1];
	if (format_parts(v, buf, sizeof buf) < 0)
		return ow_err(OW_EPARSE,
		              "version '%.40s...': longer than %d characters once "
		              "normalized",
		              text, OW_VER_TEXT_MAX);
	return 0;
}

int ow_pep440_parse_n(struct ow_version *v, const char *text, size_t len)
{
	struct scan sc = {text, len, 0};
	memset(v, 0, sizeof *v);
	while (sc.n > 0 && is_space(sc.s[sc.n - 1]))
		sc.n--;
	while (sc.i < sc.n && is_space(sc.s[sc.i]))
		sc.i++;
	if (sc.n - sc.i > OW_VER_TEXT_MAX)
		return ow_err(OW_EPARSE, "version '%.40s...': longer than %d characters",
		              text + sc.i, OW_VER_TEXT_MAX);
	int rc = parse_all(&sc, v);
	if (rc == BAD)
		return ow_err(OW_EPARSE,
		              "version '%.*s': not a PEP 440 version (e.g. 2.10.0, "
		              "2.10.0.dev20251021+cu128)",
		              (int)(sc.n - sc.i), text + sc.i);
	return rc < 0 ? rc : check_canonical_length(v, text + sc.i);
}

int ow_pep440_parse(struct ow_version *v, const char *text)
{
	return ow_pep440_parse_n(v, text, strlen(text));
}

/* snprintf that advances *len; OW_ETOOBIG on truncation. */
static int put(char *buf, size_t cap, size_t *len, const char *pre, uint64_t a, const char *post)
{
	int k = snprintf(buf + *len, cap - *len, "%s%llu%s", pre, (unsigned long long)a, post);
	if (k < 0 || (size_t)k >= cap - *len)
		return OW_ETOOBIG;
	*len += (size_t)k;
	return 0;
}

static int put_str(char *buf, size_t cap, size_t *len, const char *pre, const char *s)
{
	int k = snprintf(buf + *len, cap - *len, "%s%s", pre, s);
	if (k < 0 || (size_t)k >= cap - *len)
		return OW_ETOOBIG;
	*len += (size_t)k;
	return 0;
}

static int format_parts(const struct ow_version *v, char *buf, size_t cap)
{
	static const char *const pre[] = {"", "a", "b", "rc"};
	size_t len = 0;
	buf[0] = '\0';
	if (v->epoch && put(buf, cap, &len, "", v->epoch, "!") < 0)
		return OW_ETOOBIG;
	for (size_t i = 0; i < v->nrelease; i++)
		if (put(buf, cap, &len, i ? "." : "", v->release[i], "") < 0)
			return OW_ETOOBIG;
	if (v->pre != OW_PRE_NONE && put(buf, cap, &len, pre[v->pre], v->pre_num, "") < 0)
		return OW_ETOOBIG;
	if (v->has_post && put(buf, cap, &len, ".post", v->post, "") < 0)
		return OW_ETOOBIG;
	if (v->has_dev && put(buf, cap, &len, ".dev", v->dev, "") < 0)
		return OW_ETOOBIG;
	if (v->local[0] && put_str(buf, cap, &len, "+", v->local) < 0)
		return OW_ETOOBIG;
	return 0;
}

int ow_pep440_format(const struct ow_version *v, char *buf, size_t cap)
{
	if (cap == 0 || format_parts(v, buf, cap) < 0)
		return ow_err(OW_ETOOBIG, "version text: buffer of %zu bytes too small", cap);
	return 0;
}

int ow_pep440_normalize(const char *text, char *buf, size_t cap)
{
	struct ow_version v;
	int rc = ow_pep440_parse(&v, text);
	return rc < 0 ? rc : ow_pep440_format(&v, buf, cap);
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

static int cmp_release(const struct ow_version *a, const struct ow_version *b)
{
	size_t n = a->nrelease > b->nrelease ? a->nrelease : b->nrelease;
	for (size_t i = 0; i < n; i++) {
		uint64_t x = i < a->nrelease ? a->release[i] : 0;
		uint64_t y = i < b->nrelease ? b->release[i] : 0;
		if (x != y)
			return cmp_u64(x, y);
	}
	return 0;
}

/* A dev-only release sorts before every pre-release of its version. */
static int pre_class(const struct ow_version *v)
{
	if (v->pre != OW_PRE_NONE)
		return 1;
	return (!v->has_post && v->has_dev) ? 0 : 2;
}

static int cmp_pre(const struct ow_version *a, const struct ow_version *b)
{
	int ca = pre_class(a), cb = pre_class(b);
	if (ca != cb || ca != 1)
		return (ca > cb) - (ca < cb);
	if (a->pre != b->pre)
		return (a->pre > b->pre) - (a->pre < b->pre);
	return cmp_u64(a->pre_num, b->pre_num);
}

static int cmp_post(const struct ow_version *a, const struct ow_version *b)
{
	if (a->has_post != b->has_post)
		return a->has_post ? 1 : -1;
	return cmp_u64(a->post, b->post);
}

static int cmp_dev(const struct ow_version *a, const struct ow_version *b)
{
	if (a->has_dev != b->has_dev)
		return a->has_dev ? -1 : 1;
	return cmp_u64(a->dev, b->dev);
}

static size_t seg_len(const char *s)
{
	const char *dot = strchr(s, '.');
	return dot ? (size_t)(dot - s) : strlen(s);
}

static bool all_digits(const char *s, size_t k)
{
	for (size_t j = 0; j < k; j++)
		if (!is_digit(s[j]))
			return false;
	return true;
}

/* Numbers beat words; numbers (without leading zeros) by length then text. */
static int cmp_local_segment(const char *a, size_t ka, const char *b, size_t kb)
{
	bool na = all_digits(a, ka), nb = all_digits(b, kb);
	if (na != nb)
		return na ? 1 : -1;
	if (na && ka != kb)
		return ka > kb ? 1 : -1;
	int c = memcmp(a, b, ka < kb ? ka : kb);
	if (c != 0)
		return c > 0 ? 1 : -1;
	return (ka > kb) - (ka < kb);
}

static int cmp_local(const char *a, const char *b)
{
	if (!a[0] || !b[0])
		return (a[0] != 0) - (b[0] != 0);
	for (;;) {
		size_t ka = seg_len(a), kb = seg_len(b);
		int c = cmp_local_segment(a, ka, b, kb);
		if (c != 0)
			return c;
		a += ka;
		b += kb;
		if (!*a || !*b)
			return (*a != 0) - (*b != 0);
		a++;
		b++;
	}
}

int ow_pep440_cmp(const struct ow_version *a, const struct ow_version *b)
{
	int c = cmp_u64(a->epoch, b->epoch);
	if (c == 0)
		c = cmp_release(a, b);
	if (c == 0)
		c = cmp_pre(a, b);
	if (c == 0)
		c = cmp_post(a, b);
	if (c == 0)
		c = cmp_dev(a, b);
	if (c == 0)
		c = cmp_local(a->local, b->local);
	return c;
}

void ow_pep440_public(struct ow_version *dst, const struct ow_version *src)
{
	if (dst != src)
		*dst = *src;
	dst->local[0] = '\0';
}

bool ow_pep440_is_prerelease(const struct ow_version *v)
{
	return v->pre != OW_PRE_NONE || v->has_dev;
}

/* ---- specifiers ------------------------------------------------------- */

static const struct {
	const char *text;
	enum ow_spec_op op;
} ops[] = {
    {"===", OW_OP_ARBITRARY}, {"~=", OW_OP_COMPATIBLE}, {"==", OW_OP_EQ}, {"!=", OW_OP_NE},
    {"<=", OW_OP_LE},         {">=", OW_OP_GE},         {"<", OW_OP_LT},  {">", OW_OP_GT},
};

static const char *op_text(enum ow_spec_op op)
{
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
		if (ops[i].op == op)
			return ops[i].text;
	return "?";
}

static bool only_release(const struct ow_version *v)
{
	return v->pre == OW_PRE_NONE && !v->has_post && !v->has_dev && !v->local[0];
}

static int spec_error(const char *s, size_t n, const char *why)
{
	return ow_err(OW_EPARSE, "version specifier '%.*s': %s", (int)(n > 200 ? 200 : n), s, why);
}

static int check_spec_version(struct ow_spec *sp, const char *s, size_t n)
{
	bool local = sp->version.local[0] != '\0';
	if (sp->wildcard && (sp->op != OW_OP_EQ && sp->op != OW_OP_NE))
		return spec_error(s, n, "'.*' is only allowed with == and !=");
	if (sp->wildcard && !only_release(&sp->version))
		return spec_error(s, n, "'.*' only follows a plain release like 2.10");
	if (local && sp->op != OW_OP_EQ && sp->op != OW_OP_NE)
		return spec_error(s, n, "a local label (+...) is only allowed with == and !=");
	if (sp->op == OW_OP_COMPATIBLE && sp->version.nrelease < 2)
		return spec_error(s, n, "~= needs at least two release numbers (~=2.1)");
	return 0;
}

static int parse_spec_version(struct ow_spec *sp, const char *v, size_t k, const char *s, size_t n)
{
	if (sp->op == OW_OP_ARBITRARY) {
		for (size_t j = 0; j < k; j++)
			if (is_space(v[j]) || v[j] == ';' || v[j] == ')' || v[j] == '(')
				return spec_error(s, n, "=== takes one word");
		return k > 0 ? 0 : spec_error(s, n, "=== without a value");
	}
	if (k >= 3 && v[k - 2] == '.' && v[k - 1] == '*') {
		if (!is_digit(v[k - 3]))
			return spec_error(s, n, "'.*' must follow a number");
		sp->wildcard = true;
		k -= 2;
	}
	if (ow_pep440_parse_n(&sp->version, v, k) < 0)
		return spec_error(s, n, "not a valid version after the operator");
	return check_spec_version(sp, s, n);
}

static int parse_one_spec(struct ow_spec *sp, const char *s, size_t n)
{
	size_t i = 0;
	memset(sp, 0, sizeof *sp);
	while (i < n && is_space(s[i]))
		i++;
	while (n > i && is_space(s[n - 1]))
		n--;
	size_t o = 0;
	for (; o < sizeof ops / sizeof ops[0]; o++)
		if (n - i >= strlen(ops[o].text) &&
		    !memcmp(s + i, ops[o].text, strlen(ops[o].text)))
			break;
	if (o == sizeof ops / sizeof ops[0])
		return spec_error(s + i, n - i, "must start with ==, !=, <=, >=, <, >, ~= or ===");
	sp->op = ops[o].op;
	i += strlen(ops[o].text);
	while (i < n && is_space(s[i]))
		i++;
	if (n - i >= sizeof sp->text)
		return spec_error(s, n, "version too long");
	memcpy(sp->text, s + i, n - i);
	sp->text[n - i] = '\0';
	return parse_spec_version(sp, s + i, n - i, s, n);
}

static bool blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!is_space(s[i]))
			return false;
	return true;
}

int ow_spec_parse_n(struct ow_specset *set, const char *text, size_t len)
{
	set->n = 0;
	if (blank(text, len))
		return 0;
	size_t start = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && text[i] != ',')
			continue;
		if (blank(text + start, i - start) && i == len && set->n > 0)
			return 0; /* a trailing comma, which packaging accepts */
		if (blank(text + start, i - start))
			return spec_error(text, len, "empty part between commas");
		if (set->n == OW_SPEC_MAX)
			return ow_err(OW_EPARSE, "version specifier: more than %d parts",
			              OW_SPEC_MAX);
		int rc = parse_one_spec(&set->specs[set->n], text + start, i - start);
		if (rc < 0)
			return rc;
		set->n++;
		start = i + 1;
	}
	return 0;
}

int ow_spec_parse(struct ow_specset *set, const char *text)
{
	return ow_spec_parse_n(set, text, strlen(text));
}

int ow_spec_format(const struct ow_specset *set, char *buf, size_t cap)
{
	size_t len = 0;
	if (cap == 0)
		return ow_err(OW_ETOOBIG, "specifier text: no room");
	buf[0] = '\0';
	for (size_t i = 0; i < set->n; i++) {
		const struct ow_spec *sp = &set->specs[i];
		char ver[OW_VER_TEXT_MAX * 2];
		if (sp->op == OW_OP_ARBITRARY)
			snprintf(ver, sizeof ver, "%s", sp->text);
		else if (ow_pep440_format(&sp->version, ver, sizeof ver) < 0)
			return OW_ETOOBIG;
		int k = snprintf(buf + len, cap - len, "%s%s%s%s", i ? "," : "", op_text(sp->op),
		                 ver, sp->wildcard ? ".*" : "");
		if (k < 0 || (size_t)k >= cap - len)
			return ow_err(OW_ETOOBIG, "specifier text: buffer of %zu bytes too small",
			              cap);
		len += (size_t)k;
	}
	return 0;
}

/* Release prefix match, candidate padded with zeros (PEP 440 "==X.*"). */
static bool prefix_match(const struct ow_version *v, const struct ow_version *p, size_t n)
{
	if (v->epoch != p->epoch)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((i < v->nrelease ? v->release[i] : 0) != p->release[i])
			return false;
	return true;
}

static int cmp_public(const struct ow_version *v, const struct ow_version *spec)
{
	struct ow_version pub;
	ow_pep440_public(&pub, v);
	return ow_pep440_cmp(&pub, spec);
}

static int cmp_base(const struct ow_version *a, const struct ow_version *b)
{
	int c = cmp_u64(a->epoch, b->epoch);
	return c ? c : cmp_release(a, b);
}

static bool match_eq(const struct ow_spec *sp, const struct ow_version *v)
{
	if (sp->wildcard)
		return prefix_match(v, &sp->version, sp->version.nrelease);
	if (!sp->version.local[0])
		return cmp_public(v, &sp->version) == 0;
	return ow_pep440_cmp(v, &sp->version) == 0;
}

static bool same_pre(const struct ow_version *a, const struct ow_version *b)
{
	return a->pre == b->pre && a->pre_num == b->pre_num;
}

/* "<V" never admits a pre-release of V unless V is one: for a final V that
 * is all of V's release below V; for V.postN it is V.postN.devM. */
static bool match_lt(const struct ow_spec *sp, const struct ow_version *v)
{
	const struct ow_version *s = &sp->version;
	if (ow_pep440_cmp(v, s) >= 0)
		return false;
	if (ow_pep440_is_prerelease(s) || cmp_base(v, s) != 0)
		return true;
	if (!s->has_post)
		return false;
	return !(same_pre(v, s) && v->has_post && v->post == s->post && v->has_dev);
}

/* ">V" never admits a local build of V, nor a post-release of V (one that
 * shares V's pre part) unless V is a post or dev release itself. */
static bool match_gt(const struct ow_spec *sp, const struct ow_version *v)
{
	const struct ow_version *s = &sp->version;
	if (ow_pep440_cmp(v, s) <= 0 || cmp_public(v, s) == 0)
		return false;
	if (s->has_dev || s->has_post || cmp_base(v, s) != 0)
		return true;
	return !same_pre(v, s);
}

static bool match_arbitrary(const struct ow_spec *sp, const struct ow_version *v)
{
	char buf[OW_VER_TEXT_MAX * 2];
	if (ow_pep440_format(v, buf, sizeof buf) < 0)
		return false;
	return strcasecmp(buf, sp->text) == 0;
}

bool ow_spec_match(const struct ow_spec *sp, const struct ow_version *v)
{
	switch (sp->op) {
	case OW_OP_EQ:
		return match_eq(sp, v);
	case OW_OP_NE:
		return !match_eq(sp, v);
	case OW_OP_LE:
		return cmp_public(v, &sp->version) <= 0;
	case OW_OP_GE:
		return cmp_public(v, &sp->version) >= 0;
	case OW_OP_LT:
		return match_lt(sp, v);
	case OW_OP_GT:
		return match_gt(sp, v);
	case OW_OP_COMPATIBLE:
		return cmp_public(v, &sp->version) >= 0 &&
		       prefix_match(v, &sp->version, sp->version.nrelease - 1);
	case OW_OP_ARBITRARY:
		return match_arbitrary(sp, v);
	}
	return false;
}

static bool spec_names_prerelease(const struct ow_spec *sp)
{
	struct ow_version v;
	if (sp->op == OW_OP_NE)
		return false;
	if (sp->op == OW_OP_ARBITRARY)
		return ow_pep440_parse(&v, sp->text) == 0 && ow_pep440_is_prerelease(&v);
	return ow_pep440_is_prerelease(&sp->version);
}

bool ow_spec_contains(const struct ow_specset *set, const struct ow_version *v,
                      bool allow_prereleases)
{
	bool pre_ok = allow_prereleases;
	for (size_t i = 0; i < set->n && !pre_ok; i++)
		pre_ok = spec_names_prerelease(&set->specs[i]);
	if (!pre_ok && ow_pep440_is_prerelease(v))
		return false;
	for (size_t i = 0; i < set->n; i++)
		if (!ow_spec_match(&set->specs[i], v))
			return false;
	return true;
}
