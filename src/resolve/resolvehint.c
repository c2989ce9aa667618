/* resolvehint.c - the texts a target says beside its set: the --platform
 * that takes a newer torch, what --offline lacks, the stack's conflict, the
 * newer torch the stack passed over, a project no index has. */
#include "offwheel/resolve.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "array.h"
#include "offwheel/crawl.h"
#include "offwheel/error.h"
#include "event.h"
#include "fmt.h"
#include "resolveint.h"
#include "tags.h"

/* The oldest OS release a platform tag set needs ("macosx_14_0_arm64" ->
 * 14.0, "manylinux_2_34_x86_64" -> 2.34), for the target's OS; 0 when none. */
static int os_needed(const struct ow_target *t, const char *platform, int *major, int *minor)
{
	const char *pre = t->os == OW_OS_MACOS ? "macosx_" : t->os == OW_OS_LINUX ? "manylinux_" : NULL;
	int found = 0;
	for (const char *p = pre ? strstr(platform, pre) : NULL; p; p = strstr(p + 1, pre)) {
		int a, b;
		if (sscanf(p + strlen(pre), "%d_%d", &a, &b) == 2 &&
		    (!found || a < *major || (a == *major && b < *minor)))
			*major = a, *minor = b, found = 1;
	}
	return found;
}

/* A torch newer than the one taken that has wheels for this target's
 * python but only for a newer OS release than the target names (PyPI's
 * torch >= 2.12 for macOS is macosx_14_0_arm64; macos-arm64 means 11.0):
 * say so, with the --platform that would take it. */
int rs_platform_hint(struct rs_ctx *x, struct rs_tstate *ts)
{
	struct ow_resolve_target *o = ts->out;
	struct rs_list *l;
	int rc = rs_list_get(x, x->o->projects[0], ts->variant, false, &l);
	if (rc < 0 || l->state <= 0 || ts->t.os == OW_OS_WINDOWS)
		return rc;
	struct ow_version taken;
	bool have = *o->versions[0] && ow_pep440_parse(&taken, o->versions[0]) == 0;
	struct ow_target any = ts->t;
	any.macos_major = 40; /* the newest either parses or lists */
	any.glibc_minor = 60;
	const struct rs_cand *best = NULL;
	int bmaj = 0, bmin = 0;
	/* per tag triple of the page (few), not per file (many): whether only a
	 * newer OS release than the target's takes it */
	ow_tagorder *mine = ow_tagorder_new(&ts->t), *newer = ow_tagorder_new(&any);
	bool *later = calloc(l->ntags + 1, sizeof *later);
	if (!mine || !newer || !later) {
		ow_tagorder_free(mine), ow_tagorder_free(newer), free(later);
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	}
	for (size_t i = 0; i < l->ntags; i++) {
		const char *const *tg = (const char *const *)&l->tags[3 * i];
		later[i] = ow_tagorder_priority(mine, tg[0], tg[1], tg[2]) < 0 &&
		           ow_tagorder_priority(newer, tg[0], tg[1], tg[2]) >= 0;
	}
	ow_tagorder_free(mine);
	ow_tagorder_free(newer);
	for (size_t i = 0; i < l->n; i++) {
		const struct rs_cand *c = &l->c[i];
		int maj = 0, min = 0;
		if (c->yanked || !later[c->tag] || (have && ow_pep440_cmp(&c->v, &taken) <= 0) ||
		    (best && ow_pep440_cmp(&c->v, &best->v) < 0) ||
		    !os_needed(&ts->t, l->tags[3 * c->tag + 2], &maj, &min))
			continue;
		if (!best || ow_pep440_cmp(&c->v, &best->v) > 0 || maj < bmaj || (maj == bmaj && min < bmin))
			best = c, bmaj = maj, bmin = min;
	}
	free(later);
	if (!best)
		return 0;
	free(o->hint);
	int n;
	if (ts->t.os == OW_OS_MACOS)
		n = asprintf(&o->hint,
		         "torch %s needs macOS %d.%d (macosx_%d_%d wheels; this target is macosx_%d_%d): "
		         "try --platform macosx_%d_%d_%s",
		         best->version_text, bmaj, bmin, bmaj, bmin, ts->t.macos_major, ts->t.macos_minor,
		         bmaj, bmin, ts->t.arch);
	else
		n = asprintf(&o->hint,
		         "torch %s needs glibc %d.%d (manylinux_%d_%d wheels; this target is "
		         "manylinux_%d_%d): try --platform manylinux_%d_%d_%s",
		         best->version_text, bmaj, bmin, bmaj, bmin, ts->t.glibc_major,
		         ts->t.glibc_minor, bmaj, bmin, ts->t.arch);
	if (n < 0) {
		o->hint = NULL;
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	}
	return 0;
}

/* Offline, a target that waits for a page or metadata no round can bring:
 * incomplete, with what is missing (never another torch instead). */
int rs_offline_gap(struct rs_ctx *x, struct rs_tstate *ts)
{
	struct ow_resolve_target *o = ts->out;
	rs_target_reset(o);
	for (size_t p = 0; p < OW_RESOLVE_MAX_PROJECTS; p++)
		o->versions[p][0] = '\0';
	o->not_in_workspace = true;
	if (asprintf(&o->error, "%s — run without --offline to read it (or resolve or sync "
	                        "this target online first)",
	             x->gap.n ? x->gap.p : "pages or metadata this target needs are not in the "
	                                   "workspace") < 0) {
		o->error = NULL;
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	}
	return 0;
}

/* No set for the stack: nothing is chosen and no project is missing (the
 * columns show none; the error says why).  The stack alone had no answer:
 * that is the conflict, whichever torch.  Else every torch tried was passed
 * over: when torch has no part in the conflict (each one met the same one,
 * and it names no torch), say the conflict as it is; else with the newest
 * torch, whose conflict it is. */
int rs_stack_conflict_text(const struct rs_tstate *ts, struct ow_resolve_target *o)
{
	o->stack_conflict = true;
	o->missing[0] = '\0';
	o->alternative[0] = '\0';
	for (size_t p = 0; p < OW_RESOLVE_MAX_PROJECTS; p++)
		o->versions[p][0] = '\0';
	bool same = !ts->stack_error && !strstr(ts->passed[0].why, "torch");
	for (size_t i = 1; same && i < ts->npassed; i++)
		same = !strcmp(ts->passed[i].why, ts->passed[0].why);
	const char *older = ts->passes_out ? "; older ones were not tried" : "";
	struct ow_str also = {0};
	if (!ts->stack_error && !same)
		rs_same_for(ts->passed, ts->npassed, 0, &also);
	int n = ts->stack_error
	            ? asprintf(&o->error, "no set fits the stack on this target, whichever torch: %s",
	                       ts->stack_error)
	        : same ? asprintf(&o->error, "no set fits the stack on this target: %s (the same with "
	                                     "each of the %zu torch release%s tried%s)",
	                          ts->passed[0].why, ts->npassed, ts->npassed == 1 ? "" : "s", older)
	             : asprintf(&o->error, "the stack fits none of the %zu torch release%s tried on "
	                                   "this target (the newest first%s); with torch %s: %s%s",
	                        ts->npassed, ts->npassed == 1 ? "" : "s", older, ts->passed[0].torch,
	                        ts->passed[0].why, also.p ? also.p : "");
	ow_str_dispose(&also);
	if (n < 0) {
		o->error = NULL;
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	}
	int rc = ow_causes_copy(ts->causes, ts->ncauses, &o->causes);
	o->ncauses = o->causes ? ts->ncauses : 0;
	return rc;
}

/* The newest torch for the target above the one the stack decided: passed
 * over, saying who chose the older one (one entry, counting the others). */
int rs_note_newer(struct rs_ctx *x, struct rs_tstate *ts, const struct rs_pick *taken)
{
	for (size_t i = 0; i < x->nstack; i++)
		if (!strcmp(x->stack[i].req.name, x->o->projects[0]))
			return 0; /* torch named by the user: its own words chose, as before */
	struct rs_list *l;
	struct rs_cand **v = NULL;
	size_t nv = 0, newer = 0;
	int rc = rs_list_get(x, x->o->projects[0], ts->variant, false, &l);
	if (rc < 0 || l->state != RS_LIST_LOADED || (rc = rs_view(x, l, &ts->t, &v, &nv)) < 0)
		return rc < 0 ? rc : 0;
	const struct rs_cand *newest = NULL;
	for (size_t i = 0; i < nv; i++)
		if (!v[i]->yanked && rs_label_selected(ts, v[i]) && !rs_first_admits(ts, v[i])) {
			newest = newest ? newest : v[i];
			newer++;
		}
	free(v);
	if (!newest)
		return 0;
	char *why = ow_aprintf("the stack decides first (newest first, in its order) and takes "
	                       "%s %s (required by %s)%s",
	                       x->o->projects[0], taken->c->version_text,
	                       taken->required_by ? taken->required_by : "the stack",
	                       newer > 1 ? "; the same for the other newer releases" : "");
	if (!why)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	struct ow_resolve_skip *g = ow_array_more(ts->passed, ts->npassed, sizeof *g);
	if (!g) {
		free(why);
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	}
	ts->passed = g;
	g[ts->npassed] = (struct ow_resolve_skip){.why = why};
	snprintf(g[ts->npassed].torch, sizeof g->torch, "%s", newest->version_text);
	ts->npassed++;
	return 0;
}

/* The closest name this run has a page of, "" when none is near. */
static const char *did_you_mean(const struct rs_ctx *x, const char *name)
{
	const char *best = "";
	int d = 3;
	for (size_t i = 0; i < x->nlists; i++) {
		const struct rs_list *l = &x->lists[i];
		int k = l->state == RS_LIST_LOADED && l->n ? ow_str_distance(name, l->project, 3) : 3;
		if (k && k < d)
			d = k, best = l->project;
	}
	return best;
}

/* A project a stack line names that no index has a page of (a typo such as
 * "transfomers"): that is the target's answer, said as such — torch is not
 * walked back for it. */
int rs_named_missing(struct rs_ctx *x, struct rs_tstate *ts)
{
	for (size_t i = 0; i < x->nstack && !ts->no_project; i++) {
		struct rs_list *l;
		const struct rs_stack_req *q = &x->stack[i];
		if (q->constraint)
			continue;
		int rc = rs_list_get(x, q->req.name, ts->variant, true, &l);
		if (rc < 0)
			return rc;
		if (l->state != RS_LIST_MISSING || l->unreachable || l->absent)
			continue;
		const char *dym = did_you_mean(x, q->req.name);
		ts->no_project = ow_aprintf("%s (required by %s): no such project on the indexes "
		                            "asked — %s%s%s%s",
		                            q->req.name, q->where, l->why ? l->why : "no page",
		                            *dym ? "; did you mean " : "", dym, *dym ? "?" : "");
		if (!ts->no_project)
			return ow_err(OW_ENOMEM, "resolve: out of memory");
	}
	return 0;
}
