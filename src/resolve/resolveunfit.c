/* resolveunfit.c - why a release the requirements admit has no file for a
 * target, in the words of its own files (resolveint.h, rs_unfit_why): only
 * an sdist; a Requires-Python that excludes the target's Python (honoured
 * as pip honours it, upper bound included); wheels for other Python ABIs
 * or other platforms only, named by their tags as uv names them, with the
 * --python or --platform that would take one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resolveint.h"
#include "tags.h"
#include "offwheel/error.h"

#define UF_TAGS_MAX 64  /* distinct tags kept per release */
#define UF_TAGS_SHOWN 8 /* named in the text; the rest counted */
#define UF_PY_MINOR_MAX 40

struct tagset {
	char tag[UF_TAGS_MAX][OW_TAGSET_MAX];
	size_t n, more; /* more: distinct ones beyond UF_TAGS_MAX */
};

/* Add each tag of the compressed set s ("manylinux_2_17_x86_64.manylinux2014_x86_64"). */
static void tagset_add(struct tagset *ts, const char *s)
{
	while (*s) {
		size_t k = strcspn(s, "."), i = 0;
		while (i < ts->n && (strlen(ts->tag[i]) != k || strncmp(ts->tag[i], s, k)))
			i++;
		if (i == ts->n && k < OW_TAGSET_MAX && ts->n < UF_TAGS_MAX)
			snprintf(ts->tag[ts->n++], OW_TAGSET_MAX, "%.*s", (int)k, s);
		else if (i == ts->n)
			ts->more++;
		s += k + (s[k] == '.');
	}
}

/* cp37m, cp39, cp310; macosx_9_0 before macosx_10_9: the letters, then the
 * first number, then the rest. */
static int tag_cmp(const void *a, const void *b)
{
	const char *x = a, *y = b;
	size_t nx = strcspn(x, "0123456789"), ny = strcspn(y, "0123456789");
	int c = strncmp(x, y, nx < ny ? nx : ny);
	if (c || nx != ny)
		return c ? c : nx < ny ? -1 : 1;
	char *ex, *ey;
	unsigned long vx = strtoul(x + nx, &ex, 10), vy = strtoul(y + ny, &ey, 10);
	return vx != vy ? (vx < vy ? -1 : 1) : strcmp(ex, ey);
}

static void tagset_text(const struct tagset *ts, struct ow_str *out)
{
	for (size_t i = 0; i < ts->n && i < UF_TAGS_SHOWN; i++)
		ow_str_printf(out, "%s%s", i ? ", " : "", ts->tag[i]);
	size_t rest = ts->more + (ts->n > UF_TAGS_SHOWN ? ts->n - UF_TAGS_SHOWN : 0);
	if (rest)
		ow_str_printf(out, " and %zu more", rest);
}

/* The files of one release, and what they say about the target. */
struct rel {
	const struct rs_list *l;
	const struct ow_version *v;
	const struct ow_target *t;
	char abi[128], plat[128]; /* the target's: "cp312", "manylinux_2_28_x86_64" */
	size_t wheels;
	bool sdist;
	bool fits;     /* a wheel's tags fit the target (then Requires-Python excludes it) */
	bool py_fit;   /* a wheel's Python ABI fits the target's platform */
	bool plat_fit; /* a wheel's platform fits the target */
	const char *rp; /* a Requires-Python that excludes the target, NULL none */
};

static const char *const *tags_of(const struct rs_list *l, const struct rs_cand *c)
{
	return (const char *const *)&l->tags[3 * c->tag];
}

static bool same_release(const struct rel *r, const struct rs_cand *c)
{
	return !ow_pep440_cmp(&c->v, r->v);
}

/* Whether target a takes a wheel of the release, by its tags and its
 * Requires-Python. */
static int takes(const struct rel *r, const struct ow_target *a, bool *yes)
{
	ow_tagorder *o = ow_tagorder_new(a);
	if (!o)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	*yes = false;
	for (size_t i = 0; i < r->l->n && !*yes; i++) {
		const struct rs_cand *c = &r->l->c[i];
		const char *const *tg = tags_of(r->l, c);
		*yes = same_release(r, c) && !c->sdist && rs_python_ok(a, c->requires_python) &&
		       ow_tagorder_priority(o, tg[0], tg[1], tg[2]) >= 0;
	}
	ow_tagorder_free(o);
	return 0;
}

static int rel_read(struct rel *r)
{
	char desc[128];
	ow_tagorder *o = ow_tagorder_new(r->t);
	if (!o || ow_target_describe(r->t, desc, sizeof desc) < 0) {
		ow_tagorder_free(o);
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	}
	char *dash = strchr(desc, '-');
	snprintf(r->abi, sizeof r->abi, "%.*s", dash ? (int)(dash - desc) : 0, desc);
	snprintf(r->plat, sizeof r->plat, "%s", dash ? dash + 1 : "");
	for (size_t i = 0; i < r->l->n; i++) {
		const struct rs_cand *c = &r->l->c[i];
		if (!same_release(r, c))
			continue;
		r->sdist |= c->sdist;
		if (c->sdist)
			continue;
		const char *const *tg = tags_of(r->l, c);
		r->wheels++;
		r->fits |= ow_tagorder_priority(o, tg[0], tg[1], tg[2]) >= 0;
		r->py_fit |= ow_tagorder_priority(o, tg[0], tg[1], r->plat) >= 0;
		r->plat_fit |= ow_tagorder_priority(o, "py3", "none", tg[2]) >= 0;
		if (!r->rp && !rs_python_ok(r->t, c->requires_python))
			r->rp = c->requires_python;
	}
	ow_tagorder_free(o);
	return 0;
}

/* The distinct tags of the release's wheels: part 0 python, 2 platform;
 * part 1 reads the ABI where it names a CPython one, else the python tag;
 * sorted. */
static void release_tags(const struct rel *r, int part, struct tagset *ts)
{
	for (size_t i = 0; i < r->l->n; i++)
		if (same_release(r, &r->l->c[i]) && !r->l->c[i].sdist) {
			const char *const *tg = tags_of(r->l, &r->l->c[i]);
			tagset_add(ts, part == 1 && strncmp(tg[1], "cp", 2) ? tg[0] : tg[part]);
		}
	qsort(ts->tag, ts->n, sizeof ts->tag[0], tag_cmp);
}

/* " (--python 3.10 would take it)": the newest Python of the target's
 * platform that takes a wheel of the release, when one does. */
static int python_hint(const struct rel *r, struct ow_str *out)
{
	struct ow_target a = *r->t;
	for (a.py_minor = UF_PY_MINOR_MAX; a.py_minor >= 0; a.py_minor--) {
		bool yes = false;
		int rc = a.py_minor == r->t->py_minor ? 0 : takes(r, &a, &yes);
		if (rc < 0 || yes) {
			if (yes)
				ow_str_printf(out, " (--python %d.%d%s would take it)", a.py_major,
				              a.py_minor, a.freethreaded ? "t" : "");
			return rc;
		}
	}
	return 0;
}

/* "its wheels are for cp39, cp310, not this target's cp312 (--python 3.10
 * would take it)". */
static int python_text(const struct rel *r, struct ow_str *out)
{
	struct tagset ts = {.n = 0};
	release_tags(r, 1, &ts);
	ow_str_puts(out, "its wheels are for ");
	tagset_text(&ts, out);
	ow_str_printf(out, ", not this target's %s", r->abi);
	return python_hint(r, out);
}

static bool older_os(const struct ow_target *a, const struct ow_target *b)
{
	if (a->glibc_major != b->glibc_major || a->glibc_minor != b->glibc_minor)
		return a->glibc_major < b->glibc_major ||
		       (a->glibc_major == b->glibc_major && a->glibc_minor < b->glibc_minor);
	return a->macos_major < b->macos_major ||
	       (a->macos_major == b->macos_major && a->macos_minor < b->macos_minor);
}

/* The platform tag of the release that a target of the same OS, machine
 * and Python takes with the oldest glibc or macOS: *tag, and 1; 0 none. */
static int nearest_platform(const struct rel *r, const struct tagset *ts, const char **tag)
{
	char py[sizeof "-2147483648.-2147483648t"];
	struct ow_target best = {0};
	int found = 0;
	snprintf(py, sizeof py, "%d.%d%s", r->t->py_major, r->t->py_minor,
	         r->t->freethreaded ? "t" : "");
	for (size_t i = 0; i < ts->n; i++) {
		struct ow_target a;
		bool yes = false;
		if (ow_target_parse(&a, py, ts->tag[i]) < 0 || a.os != r->t->os ||
		    strcmp(a.arch, r->t->arch))
			continue;
		int rc = takes(r, &a, &yes);
		if (rc < 0)
			return rc;
		if (yes && (!found || older_os(&a, &best)))
			best = a, *tag = ts->tag[i], found = 1;
	}
	return found;
}

/* "its wheels are for manylinux_2_31_aarch64, manylinux_2_31_x86_64, not
 * this target's manylinux_2_28_x86_64; --platform manylinux_2_31_x86_64
 * (a newer glibc than this target's manylinux_2_28) would take it". */
static int platform_text(const struct rel *r, struct ow_str *out)
{
	struct tagset ts = {.n = 0};
	const char *tag = NULL;
	release_tags(r, 2, &ts);
	int near = nearest_platform(r, &ts, &tag);
	ow_str_puts(out, "its wheels are for ");
	tagset_text(&ts, out);
	ow_str_printf(out, ", not this target's %s", r->plat);
	if (near <= 0)
		return near;
	ow_str_printf(out, "; --platform %s", tag);
	if (r->t->os == OW_OS_LINUX && r->t->glibc_major)
		ow_str_printf(out, " (a newer glibc than this target's manylinux_%d_%d)",
		              r->t->glibc_major, r->t->glibc_minor);
	else if (r->t->os == OW_OS_MACOS)
		ow_str_printf(out, " (a newer macOS than this target's macosx_%d_%d)",
		              r->t->macos_major, r->t->macos_minor);
	ow_str_puts(out, " would take it");
	return 0;
}

int rs_unfit_why(const struct rs_list *l, const struct ow_version *v, const struct ow_target *t,
                 struct ow_str *out)
{
	struct rel r = {.l = l, .v = v, .t = t};
	int rc = rel_read(&r);
	if (rc < 0 || !r.wheels) {
		if (rc == 0)
			ow_str_puts(out, "it has only an sdist (--allow-sdist ships it, and the target "
			                 "builds it at install)");
		return rc < 0 ? rc : out->err;
	}
	if (r.rp)
		ow_str_printf(out, "its Requires-Python '%s' excludes this target's Python %d.%d%s",
		              r.rp, t->py_major, t->py_minor, r.fits ? "" : ", and ");
	if (r.fits && !r.rp)
		ow_str_printf(out, "none of its %zu wheel%s is for this target", r.wheels,
		              r.wheels == 1 ? "" : "s");
	else if (!r.fits && !r.py_fit)
		rc = python_text(&r, out);
	else if (!r.fits && !r.plat_fit)
		rc = platform_text(&r, out);
	else if (!r.fits) {
		ow_str_printf(out, "none of its %zu wheel%s is for this target (each fits its Python "
		                   "or its platform, none both)", r.wheels, r.wheels == 1 ? "" : "s");
		rc = python_hint(&r, out);
	}
	if (r.sdist)
		ow_str_puts(out, " (it has an sdist: --allow-sdist ships it, and the target builds it)");
	return rc < 0 ? rc : out->err;
}
