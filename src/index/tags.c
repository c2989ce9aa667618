/* tags.c - wheel filenames, targets, and tag priority.  The priority order
 * is the one packaging.tags.cpython_tags + compatible_tags produce: a list of
 * (python, abi) pairs crossed with the target's platform list (newest
 * first), then the pure-Python "any" pairs. */
#include "tags.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "offwheel/error.h"

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alnum(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_name_sep(char c)
{
	return c == '-' || c == '_' || c == '.';
}

static char to_lower(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

int ow_name_normalize(const char *name, size_t len, char *out, size_t cap)
{
	size_t o = 0;
	if (len == 0 || !is_alnum(name[0]) || !is_alnum(name[len - 1]))
		return ow_err(OW_EPARSE,
		              "project name '%.*s': must start and end with a letter or digit",
		              (int)(len > 200 ? 200 : len), name);
	for (size_t i = 0; i < len; i++) {
		if (!is_alnum(name[i]) && !is_name_sep(name[i]))
			return ow_err(OW_EPARSE,
			              "project name '%.*s': only letters, digits, '-', '_' "
			              "and '.' are allowed",
			              (int)(len > 200 ? 200 : len), name);
		if (o + 2 > cap)
			return ow_err(OW_ETOOBIG,
			              "project name '%.40s...': longer than %zu characters", name,
			              cap - 1);
		if (!is_name_sep(name[i]))
			out[o++] = to_lower(name[i]);
		else if (out[o - 1] != '-')
			out[o++] = '-';
	}
	out[o] = '\0';
	return 0;
}

/* ---- wheel filenames -------------------------------------------------- */

static bool filename_char_ok(char c)
{
	return is_alnum(c) || c == '.' || c == '_' || c == '-' || c == '+' || c == '!';
}

static int check_filename_chars(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (filename_char_ok(s[i]))
			continue;
		if (s[i] == '/' || s[i] == '\\')
			return ow_err(OW_EPARSE, "wheel filename '%.*s': contains a path separator",
			              (int)len, s);
		return ow_err(OW_EPARSE, "wheel filename '%.*s': character 0x%02x not allowed",
		              (int)i, s, (unsigned)(unsigned char)s[i]);
	}
	return 0;
}

/* Copy one '.'-joined tag set, lowercased; each tag is [a-z0-9_]+. */
static int copy_tagset(char *out, const char *s, size_t k)
{
	if (k == 0 || k >= OW_TAGSET_MAX)
		return OW_EPARSE;
	for (size_t i = 0; i < k; i++) {
		bool edge = (i == 0 || i == k - 1 || s[i - 1] == '.');
		if (s[i] == '.' && !edge)
			out[i] = '.';
		else if (is_alnum(s[i]) || s[i] == '_')
			out[i] = to_lower(s[i]);
		else
			return OW_EPARSE;
	}
	out[k] = '\0';
	return 0;
}

static int copy_build(char *out, const char *s, size_t k)
{
	if (k == 0 || k >= OW_BUILD_MAX || !is_digit(s[0]))
		return OW_EPARSE;
	for (size_t i = 0; i < k; i++)
		if (!is_alnum(s[i]) && s[i] != '_' && s[i] != '.')
			return OW_EPARSE;
	memcpy(out, s, k);
	out[k] = '\0';
	return 0;
}

/* Split the stem on '-': 5 or 6 parts. */
static size_t split_dashes(const char *s, size_t len, const char **part, size_t *plen)
{
	size_t n = 0, start = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != '-')
			continue;
		if (n == 6)
			return 7;
		part[n] = s + start;
		plen[n++] = i - start;
		start = i + 1;
	}
	return n;
}

static int fill_parts(struct ow_wheel_name *w, const char **p, const size_t *k, size_t n)
{
	int rc = ow_name_normalize(p[0], k[0], w->name, sizeof w->name);
	if (rc < 0)
		return rc;
	if (ow_pep440_parse_n(&w->version, p[1], k[1]) < 0)
		return ow_err(OW_EPARSE, "version '%.*s' is not PEP 440", (int)k[1], p[1]);
	memcpy(w->version_text, p[1], k[1]);
	w->version_text[k[1]] = '\0';
	if (n == 6 && copy_build(w->build, p[2], k[2]) < 0)
		return ow_err(OW_EPARSE,
		              "build tag '%.*s' must be a number with an optional suffix",
		              (int)k[2], p[2]);
	size_t t = n - 3;
	if (copy_tagset(w->python, p[t], k[t]) < 0 || copy_tagset(w->abi, p[t + 1], k[t + 1]) < 0 ||
	    copy_tagset(w->platform, p[t + 2], k[t + 2]) < 0)
		return ow_err(OW_EPARSE, "bad python/abi/platform tag");
	return 0;
}

int ow_wheel_name_parse_n(struct ow_wheel_name *w, const char *filename, size_t len)
{
	const char *part[7];
	size_t plen[7];
	memset(w, 0, sizeof *w);
	if (len > OW_FILENAME_MAX)
		return ow_err(OW_EPARSE, "wheel filename '%.40s...': longer than %d bytes",
		              filename, OW_FILENAME_MAX);
	int rc = check_filename_chars(filename, len);
	if (rc < 0)
		return rc;
	if (len < 4 || memcmp(filename + len - 4, ".whl", 4) != 0)
		return ow_err(OW_EPARSE, "wheel filename '%.*s': does not end in .whl", (int)len,
		              filename);
	size_t n = split_dashes(filename, len - 4, part, plen);
	if (n != 5 && n != 6)
		return ow_err(OW_EPARSE,
		              "wheel filename '%.*s': expected "
		              "name-version[-build]-python-abi-platform.whl",
		              (int)len, filename);
	rc = fill_parts(w, part, plen, n);
	return rc < 0 ? ow_err_prefix(rc, "wheel filename '%.*s': ", (int)len, filename) : 0;
}

int ow_wheel_name_parse(struct ow_wheel_name *w, const char *filename)
{
	return ow_wheel_name_parse_n(w, filename, strnlen(filename, OW_FILENAME_MAX + 1));
}

/* ---- targets ---------------------------------------------------------- */

/* Read a decimal number of at most 3 digits at *s; -1 when none. */
static int read_small(const char **s)
{
	int v = 0, k = 0;
	while (is_digit(**s) && k < 4) {
		v = v * 10 + (**s - '0');
		(*s)++;
		k++;
	}
	return (k == 0 || k > 3) ? -1 : v;
}

/* "cp312", "cp313t": one digit of major, the rest is the minor. */
static int parse_cp_python(struct ow_target *t, const char *s)
{
	if (!is_digit(s[0]) || !is_digit(s[1]))
		return OW_EPARSE;
	t->py_major = s[0] - '0';
	s++;
	t->py_minor = read_small(&s);
	if (t->py_minor < 0)
		return OW_EPARSE;
	if (*s == 't') {
		t->freethreaded = true;
		s++;
	}
	return *s;
}

static int parse_dotted_python(struct ow_target *t, const char *s)
{
	t->py_major = read_small(&s);
	if (t->py_major < 0 || *s++ != '.')
		return OW_EPARSE;
	t->py_minor = read_small(&s);
	if (t->py_minor < 0)
		return OW_EPARSE;
	if (*s == '.') {
		s++;
		if ((t->py_patch = read_small(&s)) < 0)
			return OW_EPARSE;
	}
	if (*s == 't') {
		t->freethreaded = true;
		s++;
	}
	return *s;
}

static int parse_python(struct ow_target *t, const char *s)
{
	int rc = strncmp(s, "cp", 2) == 0 ? parse_cp_python(t, s + 2) : parse_dotted_python(t, s);
	if (rc != 0 || t->py_major != 3 || t->py_minor > 99)
		return ow_err(OW_EINVAL,
		              "python '%.40s': expected 3.N, 3.Nt (free-threaded), 3.N.P "
		              "or cp3N, e.g. 3.12 or 3.13t",
		              s);
	if (t->freethreaded && t->py_minor < 13)
		return ow_err(OW_EINVAL, "python '%.40s': free-threaded builds start with 3.13", s);
	return 0;
}

static bool arch_ok(const char *a, size_t cap)
{
	size_t k = strlen(a);
	if (k == 0 || k >= cap)
		return false;
	for (size_t i = 0; i < k; i++)
		if (!is_digit(a[i]) && !(a[i] >= 'a' && a[i] <= 'z') && a[i] != '_')
			return false;
	return true;
}

static int set_arch(struct ow_target *t, const char *a)
{
	if (!arch_ok(a, sizeof t->arch))
		return OW_EPARSE;
	snprintf(t->arch, sizeof t->arch, "%s", a);
	return 0;
}

static int parse_manylinux(struct ow_target *t, const char *s)
{
	static const struct {
		const char *prefix;
		int minor;
	} legacy[] = {{"manylinux2014_", 17}, {"manylinux2010_", 12}, {"manylinux1_", 5}};
	t->os = OW_OS_LINUX;
	t->glibc_major = 2;
	for (size_t i = 0; i < sizeof legacy / sizeof legacy[0]; i++) {
		size_t k = strlen(legacy[i].prefix);
		if (strncmp(s, legacy[i].prefix, k) == 0) {
			t->glibc_minor = legacy[i].minor;
			return set_arch(t, s + k);
		}
	}
	s += strlen("manylinux_");
	if (read_small(&s) != 2 || *s++ != '_')
		return OW_EPARSE;
	t->glibc_minor = read_small(&s);
	if (t->glibc_minor < 0 || t->glibc_minor > 99 || *s++ != '_')
		return OW_EPARSE;
	return set_arch(t, s);
}

static int parse_macos(struct ow_target *t, const char *s)
{
	t->os = OW_OS_MACOS;
	s += strlen("macosx_");
	t->macos_major = read_small(&s);
	if (t->macos_major < 10 || t->macos_major > 40 || *s++ != '_')
		return OW_EPARSE;
	t->macos_minor = read_small(&s);
	if (t->macos_minor < 0 || *s++ != '_')
		return OW_EPARSE;
	if (t->macos_major == 10 && t->macos_minor > 16)
		return OW_EPARSE;
	if (strcmp(s, "x86_64") != 0 && !(strcmp(s, "arm64") == 0 && t->macos_major >= 11))
		return OW_EPARSE;
	return set_arch(t, s);
}

static int parse_platform_tag(struct ow_target *t, const char *s)
{
	if (strncmp(s, "manylinux", 9) == 0)
		return parse_manylinux(t, s);
	if (strncmp(s, "linux_", 6) == 0) {
		t->os = OW_OS_LINUX;
		return set_arch(t, s + 6);
	}
	if (strncmp(s, "macosx_", 7) == 0)
		return parse_macos(t, s);
	t->os = OW_OS_WINDOWS;
	if (strcmp(s, "win32") == 0)
		return set_arch(t, "win32");
	if (strcmp(s, "win_amd64") == 0 || strcmp(s, "win_arm64") == 0)
		return set_arch(t, s + 4);
	return OW_EPARSE;
}

static const struct {
	const char *name;
	const char *tag;
} shorthands[] = {
    {"linux-x86_64", "manylinux_2_28_x86_64"},
    {"linux-aarch64", "manylinux_2_28_aarch64"},
    {"windows-x86_64", "win_amd64"},
    {"windows-amd64", "win_amd64"},
    {"windows-arm64", "win_arm64"},
    {"macos-arm64", "macosx_11_0_arm64"},
    {"macos-x86_64", "macosx_10_15_x86_64"},
};

static int parse_platform(struct ow_target *t, const char *s)
{
	const char *tag = s;
	for (size_t i = 0; i < sizeof shorthands / sizeof shorthands[0]; i++)
		if (strcmp(s, shorthands[i].name) == 0)
			tag = shorthands[i].tag;
	if (parse_platform_tag(t, tag) < 0)
		return ow_err(OW_EINVAL,
		              "platform '%.60s': expected a pip platform tag "
		              "(manylinux_2_28_x86_64, win_amd64, macosx_11_0_arm64) or "
		              "linux-x86_64, linux-aarch64, windows-x86_64, macos-arm64",
		              s);
	return 0;
}

int ow_target_parse(struct ow_target *t, const char *python, const char *platform)
{
	memset(t, 0, sizeof *t);
	int rc = parse_python(t, python);
	return rc < 0 ? rc : parse_platform(t, platform);
}

/* 0, or OW_ETOOBIG (buf empty) when the tag does not fit in cap. */
static int platform_primary(const struct ow_target *t, char *buf, size_t cap)
{
	if (t->os == OW_OS_LINUX && t->glibc_major)
		return ow_fmt(buf, cap, "manylinux_%d_%d_%s", t->glibc_major, t->glibc_minor,
		              t->arch);
	if (t->os == OW_OS_LINUX)
		return ow_fmt(buf, cap, "linux_%s", t->arch);
	if (t->os == OW_OS_MACOS)
		return ow_fmt(buf, cap, "macosx_%d_%d_%s", t->macos_major, t->macos_minor, t->arch);
	if (strcmp(t->arch, "win32") == 0)
		return ow_fmt(buf, cap, "win32");
	return ow_fmt(buf, cap, "win_%s", t->arch);
}

int ow_target_describe(const struct ow_target *t, char *buf, size_t cap)
{
	char plat[64];
	if (platform_primary(t, plat, sizeof plat) < 0)
		return ow_err(OW_ETOOBIG, "target: platform text too long");
	int rc = ow_fmt(buf, cap, "cp%d%d%s-%s", t->py_major, t->py_minor,
	                t->freethreaded ? "t" : "", plat);
	return rc < 0 ? ow_err_prefix(rc, "target text: ") : 0;
}

/* ---- compatibility ---------------------------------------------------- */

#define PLAT_MAX 320
#define PAIR_MAX 256
#define TAG_LEN 48

struct taglist {
	size_t n, cap;
	char (*tag)[TAG_LEN];
};

struct tagorder {
	char plat_buf[PLAT_MAX][TAG_LEN];
	char pair_buf[PAIR_MAX][TAG_LEN];
	char any_buf[PAIR_MAX][TAG_LEN];
	struct taglist plats, pairs, anys;
};

/* "a-b", left out when it does not fit a tag */
static void add2(struct taglist *l, const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	if (l->n >= l->cap || na + 1 + nb >= TAG_LEN)
		return;
	char *t = l->tag[l->n++];
	memcpy(t, a, na);
	t[na] = '-';
	memcpy(t + na + 1, b, nb + 1);
}

static void add_manylinux(struct taglist *l, int minor, const char *arch)
{
	if (l->n < l->cap &&
	    snprintf(l->tag[l->n], TAG_LEN, "manylinux_2_%d_%s", minor, arch) < TAG_LEN)
		l->n++;
}

static void add_named(struct taglist *l, const char *name, const char *arch)
{
	if (l->n < l->cap && snprintf(l->tag[l->n], TAG_LEN, "%s_%s", name, arch) < TAG_LEN)
		l->n++;
}

static void add_mac(struct taglist *l, int major, int minor, const char *fmt)
{
	if (l->n < l->cap &&
	    snprintf(l->tag[l->n], TAG_LEN, "macosx_%d_%d_%s", major, minor, fmt) < TAG_LEN)
		l->n++;
}

static void linux_platforms(struct taglist *l, const struct ow_target *t)
{
	bool x86 = strcmp(t->arch, "x86_64") == 0 || strcmp(t->arch, "i686") == 0;
	int lowest = x86 ? 5 : 17;
	for (int m = t->glibc_major == 2 ? t->glibc_minor : -1; m >= lowest; m--) {
		add_manylinux(l, m, t->arch);
		if (m == 17)
			add_named(l, "manylinux2014", t->arch);
		if (m == 12)
			add_named(l, "manylinux2010", t->arch);
		if (m == 5)
			add_named(l, "manylinux1", t->arch);
	}
	add_named(l, "linux", t->arch);
}

/* The binary formats a macOS version runs (packaging's _mac_binary_formats). */
static void mac_formats(struct taglist *l, int major, int minor, const char *arch)
{
	static const char *const x86[] = {"x86_64", "intel",      "fat64",
	                                  "fat32",  "universal2", "universal"};
	if (strcmp(arch, "arm64") == 0) {
		add_mac(l, major, minor, "arm64");
		add_mac(l, major, minor, "universal2");
		return;
	}
	if (major == 10 && minor < 4)
		return;
	for (size_t i = 0; i < sizeof x86 / sizeof x86[0]; i++)
		add_mac(l, major, minor, x86[i]);
}

static void mac_platforms(struct taglist *l, const struct ow_target *t)
{
	if (t->macos_major == 10)
		for (int m = t->macos_minor; m >= 0; m--)
			mac_formats(l, 10, m, t->arch);
	if (t->macos_major < 11)
		return;
	for (int major = t->macos_major; major >= 11; major--)
		mac_formats(l, major, 0, t->arch);
	for (int m = 16; m >= 4; m--) {
		if (strcmp(t->arch, "x86_64") == 0)
			mac_formats(l, 10, m, t->arch);
		else
			add_mac(l, 10, m, "universal2");
	}
}

static void platforms(struct taglist *l, const struct ow_target *t)
{
	char win[TAG_LEN];
	if (t->os == OW_OS_LINUX) {
		linux_platforms(l, t);
	} else if (t->os == OW_OS_MACOS) {
		mac_platforms(l, t);
	} else if (platform_primary(t, win, sizeof win) == 0 && l->n < l->cap) {
		snprintf(l->tag[l->n++], TAG_LEN, "%s", win);
	}
}

/* py3X, py3, py3(X-1) ... py30 (packaging's _py_interpreter_range). */
static void py_range(struct taglist *l, const struct ow_target *t, const char *abi)
{
	char py[32];
	snprintf(py, sizeof py, "py%d%d", t->py_major, t->py_minor);
	add2(l, py, abi);
	snprintf(py, sizeof py, "py%d", t->py_major);
	add2(l, py, abi);
	for (int m = t->py_minor - 1; m >= 0; m--) {
		snprintf(py, sizeof py, "py%d%d", t->py_major, m);
		add2(l, py, abi);
	}
}

/* The stable ABI of the target: abi3, or abi3t (PEP 803) when free-threaded. */
static const char *stable_abi(const struct ow_target *t)
{
	return t->freethreaded ? "abi3t" : "abi3";
}

static void pairs(struct taglist *l, const struct ow_target *t)
{
	char cp[32], abi[40], old[32];
	snprintf(cp, sizeof cp, "cp%d%d", t->py_major, t->py_minor);
	snprintf(abi, sizeof abi, "%s%s", cp, t->freethreaded ? "t" : (t->py_minor < 8 ? "m" : ""));
	add2(l, cp, abi);
	bool stable = t->py_minor >= 2;
	if (stable)
		add2(l, cp, stable_abi(t));
	add2(l, cp, "none");
	for (int m = t->py_minor - 1; stable && m >= 2; m--) {
		snprintf(old, sizeof old, "cp%d%d", t->py_major, m);
		add2(l, old, stable_abi(t));
	}
	py_range(l, t, "none");
}

static void any_pairs(struct taglist *l, const struct ow_target *t)
{
	char cp[32];
	snprintf(cp, sizeof cp, "cp%d%d", t->py_major, t->py_minor);
	add2(l, cp, "none");
	py_range(l, t, "none");
}

static void build_order(struct tagorder *o, const struct ow_target *t)
{
	o->plats = (struct taglist){0, PLAT_MAX, o->plat_buf};
	o->pairs = (struct taglist){0, PAIR_MAX, o->pair_buf};
	o->anys = (struct taglist){0, PAIR_MAX, o->any_buf};
	platforms(&o->plats, t);
	pairs(&o->pairs, t);
	any_pairs(&o->anys, t);
}

static long find(const struct taglist *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->tag[i], s) == 0)
			return (long)i;
	return -1;
}

/* Priority of one python-abi-platform triple, or -1. */
static long triple_priority(const struct tagorder *o, const char *py, const char *abi,
                            const char *plat)
{
	char pair[TAG_LEN * 2];
	snprintf(pair, sizeof pair, "%s-%s", py, abi);
	long np = (long)o->plats.n;
	if (strcmp(plat, "any") == 0) {
		long a = find(&o->anys, pair);
		return a < 0 ? -1 : (long)o->pairs.n * np + a;
	}
	long g = find(&o->pairs, pair), p = find(&o->plats, plat);
	return (g < 0 || p < 0) ? -1 : g * np + p;
}

/* Next tag of a '.'-joined set into `out` ("" when too long to match
 * anything); false at the end. */
static bool next_tag(const char **s, char *out, size_t cap)
{
	size_t k = strcspn(*s, ".");
	if (**s == '\0')
		return false;
	size_t copy = k < cap ? k : 0; /* too long: "" matches nothing */
	memcpy(out, *s, copy);
	out[copy] = '\0';
	*s += k + ((*s)[k] == '.');
	return true;
}

static long best_priority(const struct tagorder *o, const char *py, const char *abi,
                          const char *plat)
{
	char a[TAG_LEN], b[TAG_LEN], c[TAG_LEN];
	long best = -1;
	for (const char *i = py; next_tag(&i, a, sizeof a);)
		for (const char *j = abi; next_tag(&j, b, sizeof b);)
			for (const char *k = plat; next_tag(&k, c, sizeof c);) {
				long p = triple_priority(o, a, b, c);
				if (p >= 0 && (best < 0 || p < best))
					best = p;
			}
	return best;
}

int ow_tags_priority(const struct ow_target *t, const char *python, const char *abi,
                     const char *platform)
{
	struct tagorder o;
	build_order(&o, t);
	return (int)best_priority(&o, python, abi, platform);
}

struct ow_tagorder {
	struct tagorder o;
};

ow_tagorder *ow_tagorder_new(const struct ow_target *t)
{
	ow_tagorder *o = malloc(sizeof *o);
	if (o)
		build_order(&o->o, t);
	return o;
}

int ow_tagorder_priority(const ow_tagorder *o, const char *python, const char *abi,
                         const char *platform)
{
	return (int)best_priority(&o->o, python, abi, platform);
}

void ow_tagorder_free(ow_tagorder *o)
{
	free(o);
}

int ow_tags_compatible(const struct ow_target *t, const struct ow_wheel_name *w)
{
	return ow_tags_priority(t, w->python, w->abi, w->platform);
}

size_t ow_tagorder_platforms(const ow_tagorder *o)
{
	return o->o.plats.n;
}

const char *ow_tagorder_platform(const ow_tagorder *o, size_t i)
{
	return i < o->o.plats.n ? o->o.plats.tag[i] : NULL;
}
