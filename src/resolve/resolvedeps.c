/* resolvedeps.c - the dependency closure of one set for one target: markers
 * for the target, the highest fitting version, no backtracking (a pick that
 * a later requirement rules out restarts the target knowing it), conflicts
 * reported with their chains. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "offwheel/error.h"
#include "resolveint.h"

#define RS_RESTARTS_MAX 8

struct cons {
	char project[OW_NAME_MAX];
	char *spec; /* as parsed and re-formatted */
	char *by;   /* "torch 2.10.0 -> sympy 1.14.0" */
};

struct item {
	const char *line;
	size_t parent; /* index into picks */
	const char *extra;
};

struct dstate {
	struct rs_ctx *x;
	const struct ow_target *t;
	const char *variant;
	struct ow_marker_env env;
	struct rs_closure *out;
	struct cons *cons;
	size_t ncons, nlearned;
	struct item *q;
	size_t qhead, qn, qcap;
	char **extras; /* per pick: ",a,b," the extras asked for ("" none) */
	char **pool;   /* extra names the queue points into, owned here */
	size_t npool;
	int64_t *excluded;
	size_t nexcluded;
	bool restart;
};

static int fail(struct dstate *d, const char *fmt, ...) OW_PRINTF(2, 3);
static int fail(struct dstate *d, const char *fmt, ...)
{
	if (d->out->error)
		return 0;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&d->out->error, fmt, ap);
	va_end(ap);
	if (n < 0) {
		d->out->error = NULL;
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	}
	return 0;
}

static char *chain_of(const struct rs_pick *p)
{
	char *s = NULL;
	if (asprintf(&s, "%s%s%s %s", p->required_by ? p->required_by : "",
	             p->required_by ? " -> " : "", p->project, p->c->version_text) < 0)
		return NULL;
	return s;
}

/* A stable copy of an extra name for the queue: the requirement it came
 * from is parsed into a stack variable that is gone before the item is
 * taken. */
static const char *intern(struct dstate *d, const char *extra)
{
	if (!*extra)
		return "";
	for (size_t i = 0; i < d->npool; i++)
		if (!strcmp(d->pool[i], extra))
			return d->pool[i];
	char **g = ow_array_more(d->pool, d->npool, sizeof *g);
	if (!g)
		return NULL;
	d->pool = g;
	if (!(g[d->npool] = strdup(extra)))
		return NULL;
	return g[d->npool++];
}

/* Whether ",a,b," holds the extra (names are normalized: exact compare). */
static bool has_extra(const char *list, const char *extra)
{
	size_t n = strlen(extra);
	for (const char *p = strstr(list, extra); p; p = strstr(p + 1, extra))
		if (p > list && p[-1] == ',' && p[n] == ',')
			return true;
	return false;
}

/* Record that pick i is asked for `extra`: 1 when new, 0 when it was. */
static int add_extra(struct dstate *d, size_t i, const char *extra)
{
	char *have = d->extras[i], *n = NULL;
	if (has_extra(have, extra))
		return 0;
	if (asprintf(&n, "%s%s,", *have ? have : ",", extra) < 0)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	free(have);
	d->extras[i] = n;
	return 1;
}

static int push(struct dstate *d, const char *line, size_t parent, const char *extra)
{
	struct item *g = ow_array_reserve(d->q, &d->qcap, d->qn + 1, sizeof *g);
	if (!g)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	d->q = g;
	d->q[d->qn++] = (struct item){line, parent, extra};
	return 0;
}

/* Queue the requirements of pick i (under `extra`, "" = the plain ones). */
static int expand(struct dstate *d, size_t i, const char *extra_in)
{
	const char *extra = intern(d, extra_in);
	if (!extra)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	const struct rs_meta *m = rs_meta_get(d->x, d->out->picks[i].c);
	if (!m) {
		d->out->need = true;
		return 0;
	}
	if (m->state == RS_META_NONE && m->why)
		return fail(d, "%s: %s", d->out->picks[i].c->filename, m->why);
	if (m->state == RS_META_NONE)
		return fail(d, "%s: its metadata could not be read (no .metadata file and the wheel "
		               "could not be fetched) — re-run, or check the index",
		            d->out->picks[i].c->filename);
	if (!rs_python_ok(d->t, m->requires_python)) {
		if (d->out->picks[i].role != OW_ROLE_DEP)
			return fail(d, "%s: Requires-Python '%s' excludes the target",
			            d->out->picks[i].c->filename, m->requires_python);
		int64_t *g = ow_array_more(d->excluded, d->nexcluded, sizeof *g);
		if (!g)
			return ow_err(OW_ENOMEM, "resolve: out of memory");
		d->excluded = g;
		g[d->nexcluded++] = d->out->picks[i].c->id;
		d->restart = true;
		return 0;
	}
	for (size_t k = 0; k < m->nreqs; k++)
		if (push(d, m->reqs[k], i, extra) < 0)
			return OW_ENOMEM;
	return 0;
}

static long find_pick(const struct rs_closure *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->picks[i].project, name))
			return (long)i;
	return -1;
}

static int add_cons(struct dstate *d, const char *name, const struct ow_specset *spec,
                    const char *by)
{
	char buf[1024];
	if (ow_spec_format(spec, buf, sizeof buf) < 0)
		buf[0] = '\0';
	struct cons *g = ow_array_more(d->cons, d->ncons, sizeof *g);
	if (!g)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	d->cons = g;
	struct cons *c = &g[d->ncons++];
	snprintf(c->project, sizeof c->project, "%s", name);
	c->spec = strdup(buf);
	c->by = strdup(by ? by : "");
	return 0;
}

static bool excluded(const struct dstate *d, int64_t id)
{
	for (size_t i = 0; i < d->nexcluded; i++)
		if (d->excluded[i] == id)
			return true;
	return false;
}

/* Whether every constraint on `name` admits c; *exact when one pins it ==. */
static bool admits(const struct dstate *d, const char *name, const struct rs_cand *c, bool pre,
                   bool *exact)
{
	struct ow_specset set;
	*exact = false;
	for (size_t i = 0; i < d->ncons; i++) {
		if (strcmp(d->cons[i].project, name))
			continue;
		if (ow_spec_parse(&set, d->cons[i].spec) < 0 || !ow_spec_contains(&set, &c->v, pre))
			return false;
		for (size_t k = 0; k < set.n; k++)
			*exact |= set.specs[k].op == OW_OP_EQ && !set.specs[k].wildcard;
	}
	return pre || !ow_pep440_is_prerelease(&c->v);
}

static const struct rs_cand *choose(const struct dstate *d, const char *name,
                                    struct rs_cand *const *v, size_t n)
{
	for (int pass = 0; pass < 2; pass++) {
		bool pre = pass == 1 || d->x->o->pre;
		for (size_t i = 0; i < n; i++) {
			bool exact;
			if (excluded(d, v[i]->id) || !admits(d, name, v[i], pre, &exact))
				continue;
			if (!v[i]->yanked || exact)
				return v[i];
		}
		if (d->x->o->pre)
			break;
	}
	return NULL;
}

/* "sympy: no version satisfies ==1.13.1 (torch 2.5.1), >=1.14 (x 1.0); ..." */
static int conflict(struct dstate *d, const char *name, size_t navail)
{
	char *msg = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&msg, &len);
	if (!f)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	fprintf(f, "%s: no version satisfies", name);
	const char *sep = " ";
	for (size_t i = 0; i < d->ncons; i++)
		if (!strcmp(d->cons[i].project, name)) {
			fprintf(f, "%s'%s' (required by %s)", sep, *d->cons[i].spec ? d->cons[i].spec : "any",
			        *d->cons[i].by ? d->cons[i].by : "the request");
			sep = " and ";
		}
	fprintf(f, " among %zu version(s) with a wheel for %s", navail, d->variant);
	fclose(f);
	int rc = fail(d, "%s", msg);
	free(msg);
	return rc;
}

/* The extras a requirement asks of pick i: each new one queues the lines
 * gated by `extra == "name"` (extras are normalized, PEP 685). */
static int want_extras(struct dstate *d, size_t i, const struct ow_requirement *r)
{
	for (size_t k = 0; k < r->nextras; k++) {
		int rc = add_extra(d, i, r->extras[k]);
		if (rc > 0)
			rc = expand(d, i, r->extras[k]);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int new_pick(struct dstate *d, const struct ow_requirement *r, size_t parent)
{
	struct rs_list *l;
	int rc = rs_list_get(d->x, r->name, d->variant, true, &l);
	if (rc < 0)
		return rc;
	if (l->state == RS_LIST_NOT_CRAWLED) {
		d->out->need = true;
		return 0;
	}
	if (l->state == RS_LIST_MISSING && l->absent) {
		/* offline: not known, so neither a conflict nor another pick */
		char *by = chain_of(&d->out->picks[parent]);
		rc = rs_note_gap(d->x, "%s (required by %s): %s", r->name, by ? by : "?", l->why);
		free(by);
		d->out->need = true;
		return rc;
	}
	if (l->state == RS_LIST_MISSING) {
		char *by = chain_of(&d->out->picks[parent]);
		rc = fail(d, "%s (required by %s): %s", r->name, by ? by : "?",
		          l->why ? l->why : "no page on the index");
		free(by);
		return rc;
	}
	struct rs_cand **v = NULL;
	size_t n = 0;
	if ((rc = rs_view(d->x, l, d->t, &v, &n)) < 0)
		return rc;
	const struct rs_cand *c = choose(d, r->name, v, n);
	free(v);
	if (!c)
		return conflict(d, r->name, n);
	struct rs_pick *g = ow_array_more(d->out->picks, d->out->n, sizeof *g);
	char **ge = ow_array_more(d->extras, d->out->n, sizeof *ge);
	if (g)
		d->out->picks = g;
	if (ge)
		d->extras = ge;
	if (!g || !ge)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	if (!(d->extras[d->out->n] = strdup("")))
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	struct rs_pick *p = &g[d->out->n];
	*p = (struct rs_pick){.c = c, .role = OW_ROLE_DEP};
	snprintf(p->project, sizeof p->project, "%s", r->name);
	p->required_by = chain_of(&d->out->picks[parent]);
	size_t i = d->out->n++;
	if ((rc = expand(d, i, "")) < 0)
		return rc;
	return want_extras(d, i, r);
}

/* A later requirement on an existing pick: new extras, or a restart. */
static int recheck(struct dstate *d, const struct ow_requirement *r, size_t i, const char *by)
{
	struct rs_pick *p = &d->out->picks[i];
	if (!ow_spec_contains(&r->spec, &p->c->v, true)) {
		if (p->role != OW_ROLE_DEP)
			return fail(d, "%s %s: %s requires %s%s, which the set does not have", p->project,
			            p->c->version_text, by, r->name,
			            r->spec.n ? "" : " (any)");
		/* keep this constraint (the last one added) and start over */
		struct cons keep = d->cons[d->ncons - 1];
		d->cons[d->ncons - 1] = d->cons[d->nlearned];
		d->cons[d->nlearned++] = keep;
		d->restart = true;
		return 0;
	}
	return want_extras(d, i, r);
}

/* Whether the requirement line applies under `extra` and not already
 * without one (each line is taken once per extra it needs). */
static int applies(struct dstate *d, const struct ow_requirement *r, const char *extra, bool *yes)
{
	int rc = ow_requirement_applies(r, &d->env, extra, yes);
	if (rc < 0 || !*yes || !*extra)
		return rc;
	bool plain;
	if ((rc = ow_requirement_applies(r, &d->env, "", &plain)) < 0)
		return rc;
	*yes = !plain;
	return 0;
}

static int take(struct dstate *d, const struct item *it, struct ow_requirement *r)
{
	bool yes;
	memset(r, 0, sizeof *r);
	int rc = ow_requirement_parse(r, it->line);
	if (rc < 0)
		return fail(d, "%s: bad Requires-Dist '%s': %s", d->out->picks[it->parent].c->filename,
		            it->line, ow_err_detail());
	if ((rc = applies(d, r, it->extra, &yes)) < 0 || !yes)
		return rc < 0 ? fail(d, "%s: marker of '%s': %s",
		                     d->out->picks[it->parent].c->filename, it->line, ow_err_detail())
		              : 0;
	char *by = chain_of(&d->out->picks[it->parent]);
	if (r->has_url)
		rc = fail(d, "%s requires %s by direct URL (%s); refused", by, r->name, r->url);
	else if ((rc = add_cons(d, r->name, &r->spec, by)) == 0) {
		long i = find_pick(d->out, r->name);
		rc = i >= 0 ? recheck(d, r, (size_t)i, by) : new_pick(d, r, it->parent);
	}
	free(by);
	return rc;
}

/* The extras asked for a set member (--project torch[opt-einsum]): "a,b". */
static int root_extras(struct dstate *d, size_t i, const char *list)
{
	while (list && *list) {
		char name[OW_NAME_MAX];
		size_t n = strcspn(list, ",");
		int rc = ow_name_normalize(list, n, name, sizeof name);
		if (rc < 0)
			return rc;
		if ((rc = add_extra(d, i, name)) > 0)
			rc = expand(d, i, name);
		if (rc < 0)
			return rc;
		list += n + (list[n] == ',');
	}
	return 0;
}

static void reset(struct dstate *d, size_t nroots)
{
	for (size_t i = nroots; i < d->out->n; i++)
		free(d->out->picks[i].required_by);
	for (size_t i = 0; i < d->out->n; i++)
		free(d->extras[i]);
	d->out->n = nroots;
	for (size_t i = d->nlearned; i < d->ncons; i++)
		free(d->cons[i].spec), free(d->cons[i].by);
	d->ncons = d->nlearned;
	d->qhead = d->qn = 0;
	d->restart = false;
	d->out->need = false;
}

static int one_pass(struct dstate *d, const struct rs_pick *roots, size_t nroots)
{
	int rc = 0;
	reset(d, 0);
	for (size_t i = 0; i < nroots; i++) {
		d->out->picks[i] = roots[i];
		d->out->picks[i].required_by = NULL;
		if (!(d->extras[i] = strdup("")) && !rc)
			rc = ow_err(OW_ENOMEM, "resolve: out of memory");
	}
	d->out->n = nroots;
	for (size_t i = 0; i < nroots && rc == 0; i++)
		rc = expand(d, i, "");
	for (size_t i = 0; i < nroots && rc == 0; i++)
		rc = root_extras(d, i, roots[i].extras);
	while (rc == 0 && !d->out->error && !d->restart && d->qhead < d->qn) {
		struct ow_requirement r;
		struct item it = d->q[d->qhead++];
		rc = take(d, &it, &r);
		ow_requirement_free(&r);
	}
	return rc;
}

static void dstate_free(struct dstate *d)
{
	for (size_t i = 0; i < d->ncons; i++)
		free(d->cons[i].spec), free(d->cons[i].by);
	free(d->cons);
	free(d->q);
	for (size_t i = 0; i < d->out->n; i++)
		free(d->extras[i]);
	free(d->extras);
	free(d->excluded);
	for (size_t i = 0; i < d->npool; i++)
		free(d->pool[i]);
	free(d->pool);
}

int rs_closure(struct rs_ctx *x, const struct ow_target *t, const char *variant,
               const struct rs_pick *roots, size_t nroots, struct rs_closure *out)
{
	memset(out, 0, sizeof *out);
	struct dstate d = {.x = x, .t = t, .variant = variant, .out = out};
	ow_marker_env_for_target(&d.env, t);
	/* grown by ow_array_more later: blocks of the capacity it implies */
	out->picks = calloc(ow_array_capacity(nroots + 1), sizeof *out->picks);
	d.extras = calloc(ow_array_capacity(nroots + 1), sizeof *d.extras);
	if (!out->picks || !d.extras) {
		free(d.extras);
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	}
	int rc = 0;
	for (int n = 0; rc == 0; n++) {
		rc = one_pass(&d, roots, nroots);
		if (rc < 0 || !d.restart)
			break;
		if (n == RS_RESTARTS_MAX) {
			fail(&d, "the closure did not settle after %d restarts", RS_RESTARTS_MAX);
			break;
		}
	}
	dstate_free(&d);
	if (out->error || out->need) {
		for (size_t i = nroots; i < out->n; i++)
			free(out->picks[i].required_by);
		out->n = nroots;
	}
	return rc;
}

void rs_closure_free(struct rs_closure *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		free(c->picks[i].required_by);
	free(c->picks);
	free(c->error);
	for (size_t i = 0; i < c->nnotes; i++)
		free(c->notes[i]);
	free(c->notes);
	memset(c, 0, sizeof *c);
}
