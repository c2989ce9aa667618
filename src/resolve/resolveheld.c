/* resolveheld.c - what the stack got below its newest release, and why.
 *
 * A project the user named can land on an old release for a reason the
 * answer alone does not show: hydra-core 1.3.8 needs antlr4-python3-runtime,
 * which has only an sdist, so without --allow-sdist the resolver walks back
 * to hydra-core 0.11.3 (2019).  The answer is valid, but not what the lab
 * asked for; so every project a stack line names is compared with the
 * newest release its lines admit for the target, and where it is lower the
 * closure is resolved once more with that newest release pinned: the
 * conflict that gives is the reason, said beside the set. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "offwheel/error.h"
#include "resolveint.h"

/* Whether every stack line on `name` (requirements and constraints) admits v. */
static bool lines_admit(const struct rs_ctx *x, const char *name, const struct rs_cand *c)
{
	bool named = false;
	if (ow_pep440_is_prerelease(&c->v) && !x->o->pre)
		return false; /* the resolver took none either, unless a pin names it */
	for (size_t i = 0; i < x->nstack; i++) {
		const struct ow_requirement *r = &x->stack[i].req;
		if (strcmp(r->name, name))
			continue;
		named |= !x->stack[i].constraint;
		if (!ow_spec_contains(&r->spec, &c->v, x->o->pre))
			return false;
	}
	return named;
}

/* The newest candidate of `name` for the target that the stack's lines
 * admit: NULL when none is newer than `taken` (or the list is not known). */
static const struct rs_cand *newer_admitted(struct rs_ctx *x, const struct ow_target *t,
                                            const char *variant, const struct rs_pick *taken)
{
	struct rs_list *l;
	struct rs_cand **v = NULL;
	size_t nv = 0;
	if (rs_list_get(x, taken->project, variant, true, &l) < 0 || l->state != RS_LIST_LOADED ||
	    rs_view(x, l, t, &v, &nv) < 0)
		return NULL;
	const struct rs_cand *best = NULL;
	for (size_t i = 0; i < nv && !best; i++)
		if (!v[i]->yanked && !v[i]->sdist && lines_admit(x, taken->project, v[i]))
			best = v[i];
	free(v);
	return best && ow_pep440_cmp(&best->v, &taken->c->v) > 0 ? best : NULL;
}

static int add_held(struct ow_resolve_target *o, const struct rs_pick *taken,
                    const struct rs_cand *newest, const char *why)
{
	struct ow_resolve_held *g = ow_array_more(o->held, o->nheld, sizeof *g);
	if (!g)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	o->held = g;
	struct ow_resolve_held *h = &g[o->nheld];
	memset(h, 0, sizeof *h);
	snprintf(h->project, sizeof h->project, "%s", taken->project);
	snprintf(h->version, sizeof h->version, "%s", taken->c->version_text);
	snprintf(h->newest, sizeof h->newest, "%s", newest->version_text);
	h->sdist = strstr(why, "--allow-sdist") != NULL;
	/* analyzer: h is o->held[o->nheld], whose why is freed with the target */
	if (!(h->why = strdup(why)))
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	o->nheld++;
	return 0;
}

/* Resolve again with `newest` pinned beside the set's roots; its conflict
 * is the reason (none: the older one was a tie-break, not held back). */
static int why_not(struct rs_ctx *x, const struct rs_held_in *in, const struct rs_pick *taken,
                   const struct rs_cand *newest, bool *wait)
{
	struct rs_pick *roots = calloc(in->nroots + 1, sizeof *roots);
	if (!roots)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	memcpy(roots, in->roots, in->nroots * sizeof *roots);
	roots[in->nroots] = (struct rs_pick){.c = newest, .role = OW_ROLE_PROJECT};
	snprintf(roots[in->nroots].project, sizeof roots->project, "%s", taken->project);
	struct rs_closure cl;
	int rc = rs_closure(x, in->t, in->variant, roots, in->nroots + 1, &cl);
	free(roots);
	if (rc < 0)
		return rc;
	if (cl.need)
		*wait = true;
	else if (cl.error)
		rc = add_held(in->out, taken, newest, cl.error);
	rs_closure_dispose(&cl);
	return rc;
}

int rs_held_back(struct rs_ctx *x, const struct rs_held_in *in, const struct rs_closure *cl,
                 bool *wait)
{
	int rc = 0;
	for (size_t i = 0; i < cl->n && rc == 0 && !*wait; i++) {
		const struct rs_pick *p = &cl->picks[i];
		if (p->role != OW_ROLE_PROJECT && p->role != OW_ROLE_DEP)
			continue;
		const struct rs_cand *newest = newer_admitted(x, in->t, in->variant, p);
		if (newest)
			rc = why_not(x, in, p, newest, wait);
	}
	return rc;
}
