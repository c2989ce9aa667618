/* resolvesummary.c - one stack, one answer across the matrix, or said.
 *
 * Each target decides its closure alone, so a project the lab named can
 * land on different releases on different targets of one run: vllm 0.21.0
 * where its wheels fit, an old release where the newest has no wheel for
 * the Python or the platform.  Valid by the metadata, but a matrix that
 * ships releases years apart should say so.  After the run, every project
 * the user named (members of role project) is compared across the complete
 * targets; where its versions differ, the report gets a spread, and the
 * candidate lists tell why the targets below the newest did not get it:
 * that release has no wheel for them, its Requires-Python excludes them, or
 * it was held back there (ow_resolve_target.held says why). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "offwheel/error.h"
#include "resolveint.h"

/* ---- target names ------------------------------------------------------------ */

const char *ow_resolve_target_name(const struct ow_resolve_report *r, size_t i)
{
	const struct ow_resolve_target *t = &r->targets[i];
	size_t n = strlen(t->variant);
	for (size_t k = 0; k < r->ntargets; k++)
		if (strcmp(r->targets[k].variant, t->variant))
			return t->describe;
	return n && !strncmp(t->describe, t->variant, n) && t->describe[n] == ' '
	               ? t->describe + n + 1
	               : t->describe;
}

/* ---- the versions per project ------------------------------------------------ */

static struct ow_resolve_spread *spread_of(struct ow_resolve_report *r, const char *project)
{
	for (size_t i = 0; i < r->nspread; i++)
		if (!strcmp(r->spread[i].project, project))
			return &r->spread[i];
	struct ow_resolve_spread *g = ow_array_more(r->spread, r->nspread, sizeof *g);
	if (!g)
		return NULL;
	r->spread = g;
	struct ow_resolve_spread *sp = &g[r->nspread++];
	memset(sp, 0, sizeof *sp);
	snprintf(sp->project, sizeof sp->project, "%s", project);
	return sp;
}

static int add_version(struct ow_resolve_spread *sp, const char *version, size_t ti)
{
	struct ow_resolve_spread_version *v = NULL;
	for (size_t i = 0; i < sp->nversions && !v; i++)
		if (!strcmp(sp->versions[i].version, version))
			v = &sp->versions[i];
	if (!v) {
		struct ow_resolve_spread_version *g =
			ow_array_more(sp->versions, sp->nversions, sizeof *g);
		if (!g)
			return ow_err(OW_ENOMEM, "resolve: out of memory");
		sp->versions = g;
		v = &g[sp->nversions++];
		memset(v, 0, sizeof *v);
		snprintf(v->version, sizeof v->version, "%s", version);
	}
	size_t *t = ow_array_more(v->targets, v->ntargets, sizeof *t);
	if (!t)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	v->targets = t;
	t[v->ntargets++] = ti;
	return 0;
}

static int newest_first(const void *a, const void *b)
{
	const struct ow_resolve_spread_version *x = a, *y = b;
	struct ow_version vx, vy;
	if (ow_pep440_parse(&vx, x->version) < 0 || ow_pep440_parse(&vy, y->version) < 0)
		return strcmp(y->version, x->version);
	return ow_pep440_cmp(&vy, &vx);
}

static void spread_dispose(struct ow_resolve_spread *sp)
{
	for (size_t i = 0; i < sp->nversions; i++)
		free(sp->versions[i].targets);
	free(sp->versions);
	free(sp->why);
	memset(sp, 0, sizeof *sp);
}

void rs_spread_free(struct ow_resolve_spread *sp, size_t n)
{
	for (size_t i = 0; i < n; i++)
		spread_dispose(&sp[i]);
	free(sp);
}

/* Every named project's versions on the complete targets; those with one
 * version are dropped. */
static int collect(struct ow_resolve_report *r)
{
	for (size_t i = 0; i < r->ntargets; i++) {
		const struct ow_resolve_target *t = &r->targets[i];
		for (size_t m = 0; t->complete && m < t->nmembers; m++) {
			if (t->members[m].role != OW_ROLE_PROJECT)
				continue;
			struct ow_resolve_spread *sp = spread_of(r, t->members[m].project);
			if (!sp)
				return ow_err(OW_ENOMEM, "resolve: out of memory");
			int rc = add_version(sp, t->members[m].version, i);
			if (rc < 0)
				return rc;
		}
	}
	size_t k = 0;
	for (size_t i = 0; i < r->nspread; i++) {
		if (r->spread[i].nversions < 2) {
			spread_dispose(&r->spread[i]);
			continue;
		}
		r->spread[k] = r->spread[i];
		qsort(r->spread[k].versions, r->spread[k].nversions, sizeof *r->spread[k].versions,
		      newest_first);
		k++;
	}
	r->nspread = k;
	return 0;
}

/* ---- why ------------------------------------------------------------------------- */

enum why_kind { WHY_NO_WHEEL, WHY_PYTHON, WHY_HELD, WHY_KINDS, WHY_UNKNOWN = WHY_KINDS };

/* The options' target a report target was made from (matched by its text). */
static const struct ow_target *opt_target(const struct rs_ctx *x, const struct ow_resolve_target *t)
{
	size_t lp = strlen(t->python);
	for (size_t k = 0; k < x->o->ntargets; k++) {
		char desc[128];
		if (ow_target_describe(&x->o->targets[k], desc, sizeof desc) == 0 &&
		    !strncmp(desc, t->python, lp) && desc[lp] == '-' && !strcmp(desc + lp + 1, t->platform))
			return &x->o->targets[k];
	}
	return NULL;
}

/* The candidate list the run loaded for the project on this target's root
 * (none: it was never read, and nothing is said). */
static const struct rs_list *loaded_list(const struct rs_ctx *x, const char *project,
                                         const struct ow_resolve_target *t)
{
	const char *variant = x->o->flat ? "" : t->variant;
	for (size_t i = 0; i < x->nlists; i++)
		if (!strcmp(x->lists[i].project, project) && !strcmp(x->lists[i].variant, variant) &&
		    x->lists[i].state == RS_LIST_LOADED)
			return &x->lists[i];
	return NULL;
}

static bool held_there(const struct ow_resolve_target *t, const char *project)
{
	for (size_t i = 0; i < t->nheld; i++)
		if (!strcmp(t->held[i].project, project))
			return true;
	return false;
}

/* Why target t did not get version `top` of the project: *rp is the
 * Requires-Python that excludes it (WHY_PYTHON). */
static int why_of(struct rs_ctx *x, const struct ow_resolve_target *t, const char *project,
                  const struct ow_version *top, const char **rp, enum why_kind *out)
{
	const struct ow_target *ot = opt_target(x, t);
	const struct rs_list *l = loaded_list(x, project, t);
	struct rs_cand **v = NULL;
	size_t nv = 0;
	*out = WHY_UNKNOWN;
	if (!ot || !l)
		return 0;
	int rc = rs_view(x, l, ot, &v, &nv);
	if (rc < 0)
		return rc;
	bool wheel = false;
	for (size_t i = 0; i < nv; i++)
		wheel |= !v[i]->sdist && !v[i]->yanked && ow_pep440_cmp(&v[i]->v, top) == 0;
	free(v);
	if (wheel) {
		*out = held_there(t, project) ? WHY_HELD : WHY_UNKNOWN;
		return 0;
	}
	*out = WHY_NO_WHEEL;
	for (size_t i = 0; i < l->n; i++)
		if (!l->c[i].sdist && ow_pep440_cmp(&l->c[i].v, top) == 0 &&
		    !rs_python_ok(ot, l->c[i].requires_python)) {
			*out = WHY_PYTHON;
			*rp = l->c[i].requires_python;
		}
	return 0;
}

/* The targets below the newest version, sorted by why into names[kind]. */
static int sort_why(struct rs_ctx *x, const struct ow_resolve_report *r,
                    const struct ow_resolve_spread *sp, struct ow_str *names, const char **rp)
{
	struct ow_version top;
	if (ow_pep440_parse(&top, sp->versions[0].version) < 0)
		return 0;
	for (size_t v = 1; v < sp->nversions; v++)
		for (size_t k = 0; k < sp->versions[v].ntargets; k++) {
			size_t ti = sp->versions[v].targets[k];
			enum why_kind w;
			int rc = why_of(x, &r->targets[ti], sp->project, &top, rp, &w);
			if (rc < 0)
				return rc;
			if (w == WHY_UNKNOWN)
				continue;
			ow_str_printf(&names[w], "%s%s", names[w].n ? ", " : "",
			              ow_resolve_target_name(r, ti));
		}
	return 0;
}

static int why_text(struct rs_ctx *x, const struct ow_resolve_report *r,
                    struct ow_resolve_spread *sp)
{
	struct ow_str names[WHY_KINDS] = {{0}}, why = {0};
	const char *rp = "";
	int rc = sort_why(x, r, sp, names, &rp);
	const char *top = sp->versions[0].version;
	if (names[WHY_NO_WHEEL].n)
		ow_str_printf(&why, "%s %s has no wheel for %s", sp->project, top,
		              names[WHY_NO_WHEEL].p);
	if (names[WHY_PYTHON].n)
		ow_str_printf(&why, "%s%s %s requires Python %s (not %s)", why.n ? "; " : "",
		              sp->project, top, rp, names[WHY_PYTHON].p);
	if (names[WHY_HELD].n)
		ow_str_printf(&why, "%s%s %s is held back on %s (its held-back line says why)",
		              why.n ? "; " : "", sp->project, top, names[WHY_HELD].p);
	for (size_t i = 0; i < WHY_KINDS; i++) {
		if (!rc && names[i].err)
			rc = ow_err(names[i].err, "resolve: out of memory");
		ow_str_dispose(&names[i]);
	}
	if (!rc && why.n && (rc = ow_str_take(&why, &sp->why)) < 0)
		rc = ow_err(rc, "resolve: out of memory");
	ow_str_dispose(&why);
	return rc;
}

int rs_spread(struct rs_ctx *x, struct ow_resolve_report *r)
{
	int rc = collect(r);
	for (size_t i = 0; i < r->nspread && rc == 0; i++)
		rc = why_text(x, r, &r->spread[i]);
	return rc;
}
