/* resolvebt.c - the dependency closure of one set for one target: the set's
 * members are the inputs, the backtracking resolver (backtrack.c) decides
 * every dependency, and this file is its provider over the workspace's
 * candidate lists and metadata (resolvecand.c).  What is not known yet (a
 * page to crawl, metadata to fetch) is queued by those lookups and makes
 * the closure `need` another round, as before. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "backtrack.h"
#include "offwheel/error.h"
#include "resolveint.h"

/* One project's candidates as the resolver sees them. */
struct pv_list {
	char name[OW_NAME_MAX];
	struct bt_cand *c;
	size_t n;
};

struct prov {
	struct rs_ctx *x;
	const struct ow_target *t;
	const char *variant;
	const struct rs_pick *roots;
	size_t nroots;
	struct pv_list *lists;
	size_t nlists;
	char *why; /* the last list's reason for having no candidates */
	char *unusable;
};

static int add_list(struct prov *p, const char *name, const struct rs_cand *const *v, size_t n,
                    const struct pv_list **out)
{
	struct pv_list *g = ow_array_more(p->lists, p->nlists, sizeof *g);
	if (!g)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	p->lists = g;
	struct pv_list *l = &g[p->nlists];
	memset(l, 0, sizeof *l);
	snprintf(l->name, sizeof l->name, "%s", name);
	if (!(l->c = calloc(n + 1, sizeof *l->c)))
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	for (size_t i = 0; i < n; i++)
		l->c[i] = (struct bt_cand){&v[i]->v, v[i]->version_text, v[i]->yanked, v[i]};
	l->n = n;
	p->nlists++;
	*out = l;
	return 0;
}

/* A member of the set: exactly the file chosen for it. */
static const struct rs_pick *root_pick(const struct prov *p, const char *name)
{
	for (size_t i = 0; i < p->nroots; i++)
		if (!strcmp(p->roots[i].project, name))
			return &p->roots[i];
	return NULL;
}

static int set_why(struct prov *p, const char *why)
{
	free(p->why);
	p->why = why ? strdup(why) : NULL;
	return why && !p->why ? ow_err(OW_ENOMEM, "resolve: out of memory") : 0;
}

static int p_candidates(void *ud, const char *name, const struct bt_cand **out, size_t *n,
                        const char **why)
{
	struct prov *p = ud;
	const struct pv_list *pl = NULL;
	*out = NULL, *n = 0, *why = NULL;
	const struct rs_pick *root = root_pick(p, name);
	if (root) {
		int rc = add_list(p, name, &root->c, 1, &pl);
		if (rc == 0 && pl)
			*out = pl->c, *n = pl->n;
		return rc;
	}
	struct rs_list *l;
	int rc = rs_list_get(p->x, name, p->variant, true, &l);
	if (rc < 0)
		return rc;
	if (l->state == RS_LIST_NOT_CRAWLED) {
		snprintf(p->x->waits_on, sizeof p->x->waits_on, "%s", name);
		return BT_PENDING;
	}
	if (l->state == RS_LIST_MISSING && l->absent) { /* offline: not known */
		if ((rc = rs_note_gap(p->x, "%s: %s", name, l->why ? l->why : "not in the workspace")) < 0)
			return rc;
		return BT_PENDING;
	}
	if (l->state == RS_LIST_MISSING) {
		if ((rc = set_why(p, l->why ? l->why : "no page on the index")) < 0)
			return rc;
		*why = p->why;
		return 0;
	}
	struct rs_cand **v = NULL;
	size_t nv = 0;
	if ((rc = rs_view(p->x, l, p->t, &v, &nv)) < 0)
		return rc;
	rc = add_list(p, name, (const struct rs_cand *const *)v, nv, &pl);
	free(v);
	if (rc == 0 && pl)
		*out = pl->c, *n = pl->n;
	return rc;
}

/* Answer `answer` (BT_UNUSABLE, BT_FAIL) with *why made from fmt. */
static int refuse(struct prov *p, const char **why, int answer, const char *fmt, ...)
	OW_PRINTF(4, 5);
static int refuse(struct prov *p, const char **why, int answer, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	free(p->unusable);
	int n = vasprintf(&p->unusable, fmt, ap);
	va_end(ap);
	if (n < 0) {
		p->unusable = NULL;
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	}
	*why = p->unusable;
	return answer;
}

/* The `where` of a stack line whose --hash pins on `name` this file's
 * published sha256 is not among; NULL when none refuses it (no pins, or
 * no published hash to compare: the download is verified either way). */
static const char *hash_pin_refuses(const struct rs_ctx *x, const char *name,
                                    const struct rs_cand *c)
{
	for (size_t i = 0; i < x->nstack; i++) {
		const struct rs_stack_req *s = &x->stack[i];
		if (!s->nhashes || strcmp(s->req.name, name) || !c->sha256 || !*c->sha256)
			continue;
		bool found = false;
		for (size_t h = 0; h < s->nhashes && !found; h++)
			found = !strncmp(s->hashes[h], "sha256:", 7) && !strcmp(s->hashes[h] + 7, c->sha256);
		if (!found)
			return s->where;
	}
	return NULL;
}

/* The search names a candidate it will ask for next (backtrack.h): its
 * metadata is queued with this round's. */
static void p_prefetch(void *ud, const char *name, const struct bt_cand *c)
{
	(void)name;
	(void)rs_meta_get(((struct prov *)ud)->x, c->ref);
}

static int p_requires(void *ud, const char *name, const struct bt_cand *c,
                      const char *const **lines, size_t *n, const char **why)
{
	struct prov *p = ud;
	const struct rs_cand *rc = c->ref;
	*lines = NULL, *n = 0, *why = NULL;
	const struct rs_meta *m = rs_meta_get(p->x, rc);
	if (!m) {
		snprintf(p->x->waits_on, sizeof p->x->waits_on, "%s", name);
		return BT_PENDING;
	}
	if (m->state == RS_META_NONE) /* broken metadata stops the target, as pip's error would */
		return refuse(p, why, BT_FAIL, "%s: %s", rc->filename,
		              m->why ? m->why
		                     : "its metadata could not be read (no .metadata file and the "
		                       "wheel could not be fetched) — re-run, or check the index");
	const char *pin = hash_pin_refuses(p->x, name, rc);
	if (pin)
		return refuse(p, why, BT_UNUSABLE, "%s: its sha256 is not among the --hash pins of %s",
		              rc->filename, pin);
	if (!rs_python_ok(p->t, m->requires_python))
		return refuse(p, why, BT_UNUSABLE, "Requires-Python '%s' excludes the target (%s)",
		              m->requires_python, rc->filename);
	*lines = (const char *const *)m->reqs;
	*n = m->nreqs;
	return 0;
}

static bool admitted(const struct ow_specset *const *specs, size_t n, const struct ow_version *v)
{
	for (size_t i = 0; i < n; i++)
		if (!ow_spec_contains(specs[i], v, false))
			return false;
	return true;
}

/* The newest release on name's page that specs admit, when it has no file
 * for the target, and why (resolveunfit.c): "numpy 1.26.4 meets them, but
 * its wheels are for cp39, cp310, cp311, cp312, not this target's cp313
 * (--python 3.12 would take it); the newest numpy with one is 2.4.6". */
static int p_unfit(void *ud, const char *name, const struct ow_specset *const *specs, size_t ns,
                   struct ow_str *out)
{
	struct prov *p = ud;
	struct rs_list *l;
	if (root_pick(p, name))
		return 0;
	int rc = rs_list_get(p->x, name, p->variant, true, &l);
	if (rc < 0 || l->state != RS_LIST_LOADED)
		return rc < 0 ? rc : 0;
	const struct rs_cand *best = NULL;
	for (size_t i = 0; i < l->n; i++)
		if (!l->c[i].yanked && admitted(specs, ns, &l->c[i].v) &&
		    (!best || ow_pep440_cmp(&l->c[i].v, &best->v) > 0))
			best = &l->c[i];
	struct rs_cand **v = NULL;
	size_t nv = 0;
	if (!best || (rc = rs_view(p->x, l, p->t, &v, &nv)) < 0)
		return rc;
	bool here = false;
	for (size_t i = 0; i < nv && !here; i++)
		here = !ow_pep440_cmp(&v[i]->v, &best->v);
	if (!here) {
		ow_str_printf(out, "; %s %s meets them, but ", name, best->version_text);
		rc = rs_unfit_why(l, &best->v, p->t, out);
	}
	if (rc == 0 && !here && nv)
		ow_str_printf(out, "; the newest %s with one is %s", name, v[0]->version_text);
	free(v);
	return rc;
}

/* ---- what building the sdists takes --------------------------------------
 * An sdist of the set is built on the target, by pip or uv, in an isolated
 * environment of its own: its [build-system] requires are resolved apart
 * from the set (they may pin what the set has at another version), for the
 * same target, and their files join the stick as OW_ROLE_BUILD.  A build
 * requirement that is itself an sdist brings its own, in turn. */

#define RS_SDISTS_MAX 64 /* sdists built for one target, build requirements' included */

static int add_note(struct rs_closure *out, const char *fmt, ...) OW_PRINTF(2, 3);
static int add_note(struct rs_closure *out, const char *fmt, ...)
{
	char **g = ow_array_more(out->notes, out->nnotes, sizeof *g);
	if (!g)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	out->notes = g;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&g[out->nnotes], fmt, ap);
	va_end(ap);
	if (n < 0)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	out->nnotes++;
	return 0;
}

static bool picked(const struct rs_closure *out, const struct rs_cand *c)
{
	for (size_t i = 0; i < out->n; i++)
		if (out->picks[i].c->id == c->id)
			return true;
	return false;
}

static int add_build_pick(struct rs_closure *out, const struct bt_pin *pin, const char *by)
{
	if (picked(out, pin->c->ref))
		return 0;
	struct rs_pick *g = ow_array_more(out->picks, out->n, sizeof *g);
	if (!g)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	out->picks = g;
	struct rs_pick *k = &g[out->n];
	*k = (struct rs_pick){.c = pin->c->ref, .role = OW_ROLE_BUILD};
	snprintf(k->project, sizeof k->project, "%s", pin->name);
	if (pin->input ? asprintf(&k->required_by, "%s", by) < 0
	               : asprintf(&k->required_by, "%s -> %s", by, pin->required_by) < 0) {
		k->required_by = NULL;
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	}
	out->n++;
	return 0;
}

static int build_taken(const struct rs_pick *sd, const struct rs_meta *m,
                       const struct bt_result *r, struct rs_closure *out)
{
	char by[OW_NAME_MAX + OW_VER_TEXT_MAX + 16];
	struct ow_str names = {0};
	snprintf(by, sizeof by, "building %s %s", sd->project, sd->c->version_text);
	for (size_t k = 0; k < r->npins; k++)
		ow_str_printf(&names, "%s%s %s", k ? ", " : "", r->pins[k].name,
		              r->pins[k].c->version_text);
	int rc = names.err ? names.err
	                   : add_note(out, "%s %s " OW_RESOLVE_SDIST_NOTE " (%s): the target builds "
	                                   "it at install, with %s from the stick (and a compiler "
	                                   "if it has native code)%s",
	                              sd->project, sd->c->version_text, sd->c->filename,
	                              names.p ? names.p : "nothing more",
	                              m->deps_dynamic ? "; its PKG-INFO does not promise its "
	                                                "dependencies (PEP 643): taken as written"
	                                              : "");
	ow_str_dispose(&names);
	for (size_t k = 0; rc == 0 && k < r->npins; k++)
		rc = add_build_pick(out, &r->pins[k], by);
	return rc;
}

/* Which sdist's build needs which other sdist (built first, on the
 * target): a cycle there (an sdist whose build requires itself, or two
 * that require each other) is one no installer can build offline. */
struct build_edge {
	const struct rs_cand *from, *to;
	char from_name[OW_NAME_MAX], to_name[OW_NAME_MAX];
};
struct build_graph {
	struct build_edge *e;
	size_t n;
	const struct rs_cand **seen; /* the search's visited sdists */
	size_t nseen;
};

/* Whether sdist `at` leads to `goal` (or is it): the edges on the way
 * written to s, each "-> name version". */
static bool leads_to(struct build_graph *g, const struct rs_cand *at, const struct rs_cand *goal,
                     struct ow_str *s)
{
	if (at->id == goal->id)
		return true;
	for (size_t i = 0; i < g->nseen; i++)
		if (g->seen[i]->id == at->id)
			return false;
	g->seen[g->nseen++] = at;
	for (size_t i = 0; i < g->n; i++) {
		const struct build_edge *e = &g->e[i];
		size_t mark = s->n;
		if (e->from->id != at->id)
			continue;
		ow_str_printf(s, " -> %s %s", e->to_name, e->to->version_text);
		if (leads_to(g, e->to, goal, s))
			return true;
		s->n = mark;
	}
	return false;
}

/* Edge sd -> to (an sdist sd's build takes); 0 or OW_ENOMEM. */
static int add_edge(struct build_graph *g, const struct rs_pick *sd, const char *name,
                    const struct rs_cand *to)
{
	struct build_edge *e = ow_array_more(g->e, g->n, sizeof *e);
	if (e)
		g->e = e;
	const struct rs_cand **v = e ? realloc(g->seen, (g->n + 2) * sizeof *v) : NULL;
	if (!v)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	g->seen = v;
	e[g->n] = (struct build_edge){.from = sd->c, .to = to};
	snprintf(e[g->n].from_name, OW_NAME_MAX, "%s", sd->project);
	snprintf(e[g->n].to_name, OW_NAME_MAX, "%s", name);
	g->n++;
	return 0;
}

/* The sdists sd's build takes, added to the graph; a cycle through sd
 * makes the target incomplete (out->error, build_error), naming it. */
static int build_cycle(struct build_graph *g, const struct rs_pick *sd, const struct bt_result *r,
                       struct rs_closure *out)
{
	for (size_t k = 0; k < r->npins; k++) {
		const struct rs_cand *to = r->pins[k].c->ref;
		if (!to->sdist)
			continue;
		int rc = add_edge(g, sd, r->pins[k].name, to);
		if (rc < 0)
			return rc;
		struct ow_str path = {0};
		ow_str_printf(&path, "%s %s -> %s %s", sd->project, sd->c->version_text,
		              r->pins[k].name, to->version_text);
		g->nseen = 0;
		if (!leads_to(g, to, sd->c, &path)) {
			ow_str_dispose(&path);
			continue;
		}
		out->build_error = true;
		if (path.err || asprintf(&out->error, "%s %s comes as an sdist whose build needs "
		                                      "itself, a build cycle (%s) that no installer "
		                                      "can build offline; name a version of %s that "
		                                      "has a wheel for this target",
		                         sd->project, sd->c->version_text, path.p, sd->project) < 0) {
			out->error = NULL;
			rc = ow_err(OW_ENOMEM, "resolve: out of memory");
		}
		ow_str_dispose(&path);
		return rc;
	}
	return 0;
}

/* Resolve one sdist's build requirements and add what they take. */
static int build_one(struct prov *p, const struct ow_marker_env *env, const struct rs_pick *sd,
                     struct build_graph *g, struct rs_closure *out)
{
	const struct rs_meta *m = rs_meta_peek(p->x, sd->c);
	if (!m || m->state != RS_META_PARSED)
		return ow_err(OW_EINTERNAL, "resolve: %s: its metadata went missing", sd->c->filename);
	struct ow_requirement *reqs = calloc(m->nbuild + 1, sizeof *reqs);
	struct bt_input *in = calloc(m->nbuild + 1, sizeof *in);
	struct bt_provider bp = {p_candidates, p_requires, p_unfit, p, p_prefetch};
	struct bt_opts o = {env, p->x->o->pre, 0};
	struct bt_result r = {0};
	size_t n = 0;
	int rc = reqs && in ? 0 : ow_err(OW_ENOMEM, "resolve: out of memory");
	for (; rc == 0 && n < m->nbuild; n++) {
		if ((rc = ow_requirement_parse(&reqs[n], m->build[n])) < 0)
			break;
		in[n] = (struct bt_input){&reqs[n], "[build-system] requires"};
	}
	if (rc == 0)
		rc = bt_resolve(&bp, &o, in, n, NULL, 0, &r);
	if (rc == 0 && r.pending)
		out->need = true;
	else if (rc == 0 && r.conflict) {
		out->build_error = true;
		if (asprintf(&out->error, "%s %s comes as an sdist, and what building it needs fits no "
		                          "set for this target: %s", sd->project, sd->c->version_text,
		             r.conflict) < 0)
			out->error = NULL, rc = ow_err(OW_ENOMEM, "resolve: out of memory");
		out->causes = r.causes, out->ncauses = r.ncauses;
		r.causes = NULL, r.ncauses = 0;
	} else if (rc == 0 && (rc = build_cycle(g, sd, &r, out)) == 0 && !out->error)
		rc = build_taken(sd, m, &r, out);
	bt_result_dispose(&r);
	for (size_t i = 0; i < n; i++)
		ow_requirement_dispose(&reqs[i]);
	free(reqs);
	free(in);
	return rc;
}

/* Every sdist taken, those of the build requirements included (appended
 * to out->picks as they are found, so the loop reaches them too). */
static int build_all(struct prov *p, const struct ow_marker_env *env, struct rs_closure *out)
{
	struct build_graph g = {0};
	size_t built = 0;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < out->n && !out->need && !out->error; i++) {
		if (!out->picks[i].c->sdist)
			continue;
		if (++built > RS_SDISTS_MAX) {
			rc = ow_err(OW_ETOOBIG, "resolve: more than %d sdists to build for one target",
			            RS_SDISTS_MAX);
			break;
		}
		struct rs_pick sd = out->picks[i]; /* out->picks may move */
		rc = build_one(p, env, &sd, &g, out);
	}
	free(g.e);
	free(g.seen);
	return rc;
}

/* The inputs: each member of the set, with the extras asked of it. */
static int inputs(const struct rs_pick *roots, size_t n, struct ow_requirement *reqs,
                  struct bt_input *in)
{
	for (size_t i = 0; i < n; i++) {
		char line[OW_NAME_MAX * 3];
		snprintf(line, sizeof line, "%s%s%s%s", roots[i].project, roots[i].extras ? "[" : "",
		         roots[i].extras ? roots[i].extras : "", roots[i].extras ? "]" : "");
		int rc = ow_requirement_parse(&reqs[i], line);
		if (rc < 0)
			return ow_err_prefix(rc, "resolve: %s: ", roots[i].project);
		in[i] = (struct bt_input){&reqs[i], ""};
	}
	return 0;
}

static int pick_from(struct rs_closure *out, const struct bt_pin *pin, const struct prov *p)
{
	const struct rs_pick *root = root_pick(p, pin->name);
	struct rs_pick *g = ow_array_more(out->picks, out->n, sizeof *g);
	if (!g)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	out->picks = g;
	struct rs_pick *k = &g[out->n];
	if (root) {
		*k = *root;
		k->required_by = NULL;
	} else {
		*k = (struct rs_pick){.c = pin->c->ref, .role = pin->input ? OW_ROLE_PROJECT : OW_ROLE_DEP};
		snprintf(k->project, sizeof k->project, "%s", pin->name);
		/* analyzer: k is out->picks[out->n], counted and freed with the closure */
		if (!(k->required_by = strdup(pin->required_by)))
			return ow_err(OW_ENOMEM, "resolve: out of memory");
	}
	out->n++;
	return 0;
}

/* The members first, in their order, then the dependencies as decided. */
static int fill(struct rs_closure *out, const struct bt_result *r, const struct prov *p)
{
	int rc = 0;
	for (size_t i = 0; i < p->nroots && rc == 0; i++)
		for (size_t k = 0; k < r->npins && rc == 0; k++)
			if (!strcmp(r->pins[k].name, p->roots[i].project))
				rc = pick_from(out, &r->pins[k], p);
	for (size_t k = 0; k < r->npins && rc == 0; k++)
		if (!root_pick(p, r->pins[k].name))
			rc = pick_from(out, &r->pins[k], p);
	return rc;
}

static void prov_free(struct prov *p)
{
	for (size_t i = 0; i < p->nlists; i++)
		free(p->lists[i].c);
	free(p->lists);
	free(p->why);
	free(p->unusable);
}

int rs_closure(struct rs_ctx *x, const struct ow_target *t, const char *variant,
               const struct rs_pick *roots, size_t nroots, struct rs_closure *out)
{
	memset(out, 0, sizeof *out);
	struct ow_marker_env env;
	ow_marker_env_for_target(&env, t);
	struct prov p = {.x = x, .t = t, .variant = variant, .roots = roots, .nroots = nroots};
	struct ow_requirement reqs[OW_RESOLVE_MAX_PROJECTS];
	struct bt_input *in = calloc(nroots + x->nstack + 1, sizeof *in);
	struct bt_input *cons = calloc(x->nstack + 1, sizeof *cons);
	struct bt_provider bp = {p_candidates, p_requires, p_unfit, &p, p_prefetch};
	struct bt_opts o = {&env, x->o->pre, 0};
	struct bt_result r;
	size_t nin = nroots, ncons = 0;
	memset(reqs, 0, sizeof reqs);
	int rc = in && cons ? inputs(roots, nroots, reqs, in) : ow_err(OW_ENOMEM, "resolve: out of memory");
	for (size_t i = 0; rc == 0 && i < x->nstack; i++) { /* the stack, as written */
		struct bt_input *dst = x->stack[i].constraint ? &cons[ncons++] : &in[nin++];
		*dst = (struct bt_input){&x->stack[i].req, x->stack[i].where};
	}
	if (rc == 0)
		rc = bt_resolve(&bp, &o, in, nin, cons, ncons, &r);
	for (size_t i = 0; i < nroots; i++)
		ow_requirement_dispose(&reqs[i]);
	free(in);
	free(cons);
	if (rc < 0) {
		prov_free(&p);
		return rc;
	}
	out->need = r.pending;
	if (r.conflict && !r.pending) {
		out->fatal = r.fatal;
		out->error = r.conflict;
		out->causes = r.causes, out->ncauses = r.ncauses;
		r.conflict = NULL, r.causes = NULL, r.ncauses = 0;
	} else if (!r.pending) {
		rc = fill(out, &r, &p);
	}
	bt_result_dispose(&r);
	if (rc == 0 && !out->need && !out->error && x->o->allow_sdist)
		rc = build_all(&p, &env, out);
	prov_free(&p);
	return rc;
}

void rs_closure_dispose(struct rs_closure *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		free(c->picks[i].required_by);
	free(c->picks);
	free(c->error);
	ow_causes_free(c->causes, c->ncauses);
	for (size_t i = 0; i < c->nnotes; i++)
		free(c->notes[i]);
	free(c->notes);
	memset(c, 0, sizeof *c);
}
