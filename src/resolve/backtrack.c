/* backtrack.c - depth-first resolution with conflict-directed backjumping
 * and forward checking (backtrack.h says the rules). */
#include "backtrack.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "offwheel/error.h"
#include "offwheel/str.h"

#define BT_WORDS (BT_NODES_MAX / 64)
#define BT_REASONS_SHOWN 4
/* How deep a conflict found under a decision is kept inside the reason that
 * names the decision ("with a 1.0: ..."): each level keeps BT_REASONS_SHOWN
 * reasons, so the causes kept stay bounded; whole causes, never cut text. */
#define BT_DEPTH_KEPT 3
/* What a step of the search came to, beside 0 (solved) and a negative
 * error.  The values follow the provider's answers (backtrack.h), so that
 * one never reads as the other. */
enum bt_outcome {
	/* a project required somewhere has no page at all: the target fails
	 * with that, as pip's "no matching distribution" would after searching */
	BT_FATAL = 4,
	BT_CONFLICT, /* no candidate works here; the decisions it depends on are in cs */
	BT_BACKJUMP, /* the failure does not depend on this level: back past it */
};

/* Causes as the search collects them (struct ow_cause, resolve.h); oom:
 * one could not be added (reported when the conflict is handed over). */
struct clist {
	struct ow_cause *v;
	size_t n;
	bool oom;
};

/* The decisions a failure depends on: bit d = the decision at depth d. */
struct bits {
	uint64_t w[BT_WORDS];
};

struct node {
	char name[OW_NAME_MAX];
	char extra[OW_NAME_MAX]; /* "" for the project itself */
	const struct bt_cand *c;
	size_t nc;
	bool loaded;
	bool unknown;    /* its candidates are not known yet this round */
	const char *why; /* no candidates: why, from the provider */
	long pin;     /* index into c, -1 while undecided */
	size_t first; /* when it was first required: the breadth-first order */
};

struct crit {
	size_t node;
	struct ow_specset spec;
	int parent;      /* depth of the decision that asked, -1 for an input */
	const char *by;  /* who asked: an input's `where` or a decision's label */
	bool constraint; /* limits the versions, requires nothing */
};

struct level {
	size_t node;
	size_t mark; /* ncrits before this decision's requirements */
	size_t seq;  /* b->seq before them: nodes first required later go back */
	char *label; /* "transformers 4.57.0" */
	char *chain; /* "torch 2.10.0 -> transformers 4.57.0": who asked, then it */
};

struct bt {
	const struct bt_provider *p;
	const struct bt_opts *o;
	struct node *nodes;
	size_t nnodes;
	struct crit *crits;
	size_t ncrits;
	struct level *lv;
	size_t nlv;
	size_t steps, seq, max_steps;
	bool pending;
	bool deeper; /* the last attempt failed below its decision, not at it */
	struct clist conflict; /* the conflict found last, as causes */
};

static void bits_set(struct bits *b, int d)
{
	if (d >= 0)
		b->w[d / 64] |= 1ull << (d % 64);
}

static bool bits_has(const struct bits *b, int d)
{
	return d >= 0 && (b->w[d / 64] >> (d % 64)) & 1;
}

static void bits_or(struct bits *a, const struct bits *b)
{
	for (size_t i = 0; i < BT_WORDS; i++)
		a->w[i] |= b->w[i];
}

/* ---- nodes and requirements ------------------------------------------------ */

static long find_node(const struct bt *b, const char *name, const char *extra)
{
	for (size_t i = 0; i < b->nnodes; i++)
		if (!strcmp(b->nodes[i].name, name) && !strcmp(b->nodes[i].extra, extra))
			return (long)i;
	return -1;
}

static int node_for(struct bt *b, const char *name, const char *extra, size_t *out)
{
	long i = find_node(b, name, extra);
	if (i >= 0) {
		*out = (size_t)i;
		return 0;
	}
	if (b->nnodes >= BT_NODES_MAX)
		return ow_err(OW_ETOOBIG, "resolve: more than %d projects and extras", BT_NODES_MAX);
	struct node *g = ow_array_more(b->nodes, b->nnodes, sizeof *g);
	if (!g)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	b->nodes = g;
	struct node *n = &g[b->nnodes];
	memset(n, 0, sizeof *n);
	snprintf(n->name, sizeof n->name, "%s", name);
	snprintf(n->extra, sizeof n->extra, "%s", extra);
	n->pin = -1;
	n->first = SIZE_MAX;
	*out = b->nnodes++;
	return 0;
}

static int load(struct bt *b, struct node *n)
{
	if (n->loaded)
		return 0;
	int rc = b->p->candidates(b->p->ud, n->name, &n->c, &n->nc, &n->why);
	if (rc < 0)
		return rc;
	n->loaded = true;
	if (rc == BT_PENDING) {
		n->unknown = true;
		n->nc = 0;
		b->pending = true;
	}
	return 0;
}

static int push_crit(struct bt *b, size_t node, const struct ow_specset *spec, int parent,
                     const char *by, bool constraint)
{
	struct crit *g = ow_array_more(b->crits, b->ncrits, sizeof *g);
	if (!g)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	b->crits = g;
	g[b->ncrits++] = (struct crit){node, *spec, parent, by, constraint};
	if (!constraint && b->nodes[node].first == SIZE_MAX)
		b->nodes[node].first = b->seq++;
	return 0;
}

/* Requirement r, asked by `by` at depth `parent`: a criterion on its
 * project and on each of its extras.  *added: the nodes touched. */
static int add_requirement(struct bt *b, const struct ow_requirement *r, int parent,
                           const char *by, bool constraint)
{
	size_t node;
	int rc = node_for(b, r->name, "", &node);
	if (rc == 0)
		rc = push_crit(b, node, &r->spec, parent, by, constraint);
	for (size_t e = 0; rc == 0 && e < r->nextras; e++)
		if ((rc = node_for(b, r->name, r->extras[e], &node)) == 0)
			rc = push_crit(b, node, &r->spec, parent, by, constraint);
	return rc;
}

static bool admits(const struct bt *b, const struct crit *k, const struct bt_cand *c)
{
	return ow_spec_contains(&k->spec, c->v, true); /* c is chosen already */
}

/* Whether a criterion on node n pins it exactly (==, not a wildcard). */
static bool pinned_exactly(const struct bt *b, size_t n)
{
	for (size_t k = 0; k < b->ncrits; k++)
		for (size_t s = 0; b->crits[k].node == n && s < b->crits[k].spec.n; s++)
			if (b->crits[k].spec.specs[s].op == OW_OP_EQ && !b->crits[k].spec.specs[s].wildcard)
				return true;
	return false;
}

/* Whether candidate i of node n meets every criterion on n, pre-releases
 * admitted when `pre`; when not, the decisions behind the failed criteria
 * go into cs.  A yanked candidate only when pinned exactly. */
static bool meets(const struct bt *b, size_t n, size_t i, bool pre, struct bits *cs)
{
	const struct bt_cand *c = &b->nodes[n].c[i];
	bool ok = true;
	for (size_t k = 0; k < b->ncrits; k++)
		if (b->crits[k].node == n && !ow_spec_contains(&b->crits[k].spec, c->v, pre)) {
			bits_set(cs, b->crits[k].parent);
			ok = false;
		}
	return ok && (!c->yanked || pinned_exactly(b, n));
}

/* Pre-releases of node n are admitted when asked for everywhere, or when
 * no final release meets its criteria (the rule of pip and packaging). */
static bool pre_ok(const struct bt *b, size_t n)
{
	struct bits ignore = {{0}};
	if (b->o->pre)
		return true;
	for (size_t i = 0; i < b->nodes[n].nc; i++)
		if (!ow_pep440_is_prerelease(b->nodes[n].c[i].v) && meets(b, n, i, false, &ignore))
			return false;
	return true;
}



/* The decisions that asked for node n: without them it would not be
 * needed, so every conflict on n depends on them too. */
static void askers(const struct bt *b, size_t n, struct bits *cs)
{
	for (size_t k = 0; k < b->ncrits; k++)
		if (b->crits[k].node == n)
			bits_set(cs, b->crits[k].parent);
}

static bool has_any(const struct bt *b, size_t n)
{
	struct bits ignore = {{0}};
	bool pre = pre_ok(b, n);
	for (size_t i = 0; i < b->nodes[n].nc; i++)
		if (meets(b, n, i, pre, &ignore))
			return true;
	return false;
}

/* ---- explaining a conflict: causes (resolverender.c words them) ------------ */

static void clist_dispose(struct clist *l)
{
	ow_causes_free(l->v, l->n);
	memset(l, 0, sizeof *l);
}

static char *dup_text(struct clist *l, const char *s)
{
	char *d = s ? strdup(s) : NULL;
	l->oom |= s && !d;
	return d;
}

/* A cause of kind k at depth 0, reason 0, its strings copied; NULL when
 * memory ran out (l->oom). */
static struct ow_cause *cause(struct clist *l, enum ow_cause_kind k, const char *project,
                              const char *spec, const char *by, const char *detail)
{
	struct ow_cause *g = ow_array_more(l->v, l->n, sizeof *g);
	if (!g) {
		l->oom = true;
		return NULL;
	}
	l->v = g;
	struct ow_cause *c = &g[l->n++];
	*c = (struct ow_cause){.kind = k};
	c->project = dup_text(l, project);
	c->spec = dup_text(l, spec);
	c->by = dup_text(l, by);
	c->detail = dup_text(l, detail);
	return c;
}

/* Append src's causes to dst, each `deeper` levels down, those of depth 0
 * given reason `reason` (0: kept); those that would sit deeper than
 * BT_DEPTH_KEPT are left out whole.  src is emptied when `move`. */
static void clist_append(struct clist *dst, struct clist *src, unsigned deeper, unsigned reason,
                         bool move)
{
	for (size_t i = 0; i < src->n; i++) {
		const struct ow_cause *c = &src->v[i];
		if (c->depth + deeper > BT_DEPTH_KEPT)
			continue;
		struct ow_cause *d = cause(dst, c->kind, c->project, c->spec, c->by, c->detail);
		if (!d)
			break;
		d->count = c->count;
		d->depth = c->depth + deeper;
		d->reason = reason && !c->depth ? reason : c->reason;
	}
	dst->oom |= src->oom;
	if (move)
		clist_dispose(src);
}

static void node_text(struct ow_str *s, const struct node *n)
{
	ow_str_printf(s, *n->extra ? "%s[%s]" : "%s%s", n->name, n->extra);
}

/* "x" or "x[extra]": the node's name as causes carry it. */
static const char *node_name(const struct node *n, char *buf, size_t cap)
{
	snprintf(buf, cap, *n->extra ? "%s[%s]" : "%s%s", n->name, n->extra);
	return buf;
}
#define NODE_NAME_MAX (2 * OW_NAME_MAX + 2)

/* "BY requires NODE SPEC" for criterion c. */
static void crit_cause(const struct bt *b, const struct crit *c, struct clist *l)
{
	char spec[512], name[NODE_NAME_MAX];
	if (ow_spec_format(&c->spec, spec, sizeof spec) < 0)
		spec[0] = '\0';
	(void)cause(l, c->constraint ? OW_CAUSE_LIMITS : OW_CAUSE_REQUIRES,
	            node_name(&b->nodes[c->node], name, sizeof name), spec, c->by, NULL);
}

/* The criteria on node n, but criterion `skip`. */
static void crits_causes(const struct bt *b, size_t n, size_t skip, struct clist *l)
{
	for (size_t k = 0; k < b->ncrits; k++)
		if (b->crits[k].node == n && k != skip)
			crit_cause(b, &b->crits[k], l);
}

/* "a 2.0 is yanked: only an exact == pin takes it" for the first yanked
 * candidate that every criterion on n admits. */
static void yanked_cause(const struct bt *b, size_t n, struct clist *l)
{
	const struct node *nd = &b->nodes[n];
	if (pinned_exactly(b, n)) /* then a yanked release is taken: not the reason */
		return;
	for (size_t i = 0; i < nd->nc; i++) {
		bool fits = nd->c[i].yanked;
		for (size_t k = 0; fits && k < b->ncrits; k++)
			fits = b->crits[k].node != n ||
			       ow_spec_contains(&b->crits[k].spec, nd->c[i].v, true);
		if (fits) {
			(void)cause(l, OW_CAUSE_YANKED, nd->name, nd->c[i].version_text, NULL, NULL);
			return;
		}
	}
}

/* What the provider knows of releases the criteria on n admit that have
 * no file for the target (numpy<2 on Python 3.13). */
static void unfit_cause(const struct bt *b, size_t n, struct clist *l)
{
	const struct ow_specset *specs[64];
	struct ow_str s = {0};
	size_t ns = 0;
	if (!b->p->unfit)
		return;
	for (size_t k = 0; k < b->ncrits && ns < 64; k++)
		if (b->crits[k].node == n)
			specs[ns++] = &b->crits[k].spec;
	(void)b->p->unfit(b->p->ud, b->nodes[n].name, specs, ns, &s);
	l->oom |= s.err != 0;
	if (s.p && *s.p) /* the provider's "; ..." as the renderer puts it */
		(void)cause(l, OW_CAUSE_UNFIT, b->nodes[n].name, NULL, NULL,
		            s.p + (strncmp(s.p, "; ", 2) ? 0 : 2));
	ow_str_dispose(&s);
}

/* Who first asked for node n: a decision's chain or an input's where. */
static const char *first_asker(const struct bt *b, size_t n)
{
	for (size_t k = 0; k < b->ncrits; k++)
		if (b->crits[k].node == n && !b->crits[k].constraint)
			return b->crits[k].by;
	return "?";
}

/* The conflict on node n, its reasons (moved) in front: "no version of P
 * fits: A 1.0 requires P<2, but ... requires P>=2; ...". */
static void explain(struct bt *b, size_t n, struct clist *reasons, size_t tried)
{
	struct clist l = {0};
	char name[NODE_NAME_MAX];
	const struct node *nd = &b->nodes[n];
	node_name(nd, name, sizeof name);
	if (!nd->nc && nd->why) { /* "x (required by a 1.0): no page at ..." */
		(void)cause(&l, OW_CAUSE_NO_PAGE, name, NULL, first_asker(b, n), nd->why);
	} else {
		bool why = nd->nc && reasons && reasons->n;
		struct ow_cause *h = cause(&l, !nd->nc ? OW_CAUSE_NO_VERSIONS
		                                       : why ? OW_CAUSE_NO_FIT : OW_CAUSE_NO_MATCH,
		                           name, NULL, NULL, NULL);
		if (h)
			h->count = tried;
		if (why)
			clist_append(&l, reasons, 0, 0, true);
		else
			crits_causes(b, n, SIZE_MAX, &l);
		yanked_cause(b, n, &l);
		unfit_cause(b, n, &l);
	}
	if (reasons)
		clist_dispose(reasons);
	clist_dispose(&b->conflict);
	b->conflict = l;
}

/* The conflict is one cause: the search stopped on it. */
static int stop_on(struct bt *b, enum ow_cause_kind k, const char *project, const char *spec,
                   const char *by, const char *detail)
{
	clist_dispose(&b->conflict);
	(void)cause(&b->conflict, k, project, spec, by, detail);
	return b->conflict.oom ? ow_err(OW_ENOMEM, "resolve: out of memory") : BT_FATAL;
}

/* ---- one decision --------------------------------------------------------------- */

/* A Requires-Dist line of candidate `who`; one that does not parse (a
 * malformed marker) stops this target, naming the package and the line, as
 * other broken metadata does (BT_FATAL, the cause in b->conflict): the run
 * and the other targets go on. */
static int parse_line(struct bt *b, const char *line, struct ow_requirement *r, const char *who)
{
	int rc = ow_requirement_parse(r, line);
	if (rc == OW_ENOMEM || rc >= 0)
		return rc;
	return stop_on(b, OW_CAUSE_METADATA, NULL, line, who, ow_err_detail());
}

/* Whether requirement r of the candidate applies for the target and extra. */
static int applies(const struct bt *b, const struct ow_requirement *r, const char *extra,
                   bool *yes)
{
	int rc = ow_requirement_applies(r, b->o->env, *extra ? extra : NULL, yes);
	if (rc < 0) /* a comparison the spec leaves undefined: pip takes it as false */
		*yes = false;
	return 0;
}

#define BT_PREFETCH 8       /* admitted candidates past the one asked for, at least */
#define BT_PREFETCH_MAX 1024 /* ... and at most: as many as were passed over, doubling */

/* Candidate i of node n is not known yet.  When an earlier candidate that
 * the criteria admit was passed over (the search is going back through the
 * releases, and each one it rejects would cost a round of its own), the
 * next ones the criteria admit are named to the provider, as uv prefetches:
 * as many as were passed over already (at least BT_PREFETCH, at most
 * BT_PREFETCH_MAX), so a search back through 10,000 releases takes some 20
 * rounds, not 1,000; one the criteria rule out (an exact pin admits one
 * release) never is. */
static void prefetch_next(const struct bt *b, size_t n, size_t i)
{
	struct bits ignore = {{0}};
	const struct node *nd = &b->nodes[n];
	if (!b->p->prefetch)
		return;
	bool pre = pre_ok(b, n);
	size_t passed = 0;
	for (size_t j = 0; j < i; j++)
		passed += meets(b, n, j, pre, &ignore);
	size_t want = passed < BT_PREFETCH ? BT_PREFETCH : passed;
	if (want > BT_PREFETCH_MAX)
		want = BT_PREFETCH_MAX;
	for (size_t j = i + 1, k = 0; passed && j < nd->nc && k < want; j++)
		if (meets(b, n, j, pre, &ignore)) {
			b->p->prefetch(b->p->ud, nd->name, &nd->c[j]);
			k++;
		}
}

/* The requirements candidate c of node n adds, pushed as criteria by the
 * decision at depth d: an extra's own "name==V" first, then the lines that
 * apply (for an extra: only those its marker switches on). */
static int push_requirements(struct bt *b, size_t n, const struct bt_cand *c, int d,
                             struct clist *reason)
{
	/* copies: adding requirements may grow (move) b->nodes */
	char name[OW_NAME_MAX], extra[OW_NAME_MAX];
	snprintf(name, sizeof name, "%s", b->nodes[n].name);
	snprintf(extra, sizeof extra, "%s", b->nodes[n].extra);
	const char *label = b->lv[d].chain;
	int rc = 0;
	if (*extra) {
		struct ow_requirement base = {0};
		snprintf(base.name, sizeof base.name, "%s", name);
		if ((rc = ow_spec_parse(&base.spec, "")) == 0) {
			base.spec.n = 1;
			base.spec.specs[0].op = OW_OP_EQ;
			base.spec.specs[0].version = *c->v;
			snprintf(base.spec.specs[0].text, sizeof base.spec.specs[0].text, "%s",
			         c->version_text);
			rc = add_requirement(b, &base, d, label, false);
		}
	}
	const char *const *lines = NULL, *why = NULL;
	size_t nl = 0;
	if (rc == 0)
		rc = b->p->requires(b->p->ud, name, c, &lines, &nl, &why);
	if (rc == BT_PENDING) {
		b->pending = true;
		prefetch_next(b, n, (size_t)(c - b->nodes[n].c));
		return 0;
	}
	char who[NODE_NAME_MAX];
	node_name(&b->nodes[n], who, sizeof who);
	if (rc == BT_UNUSABLE) {
		(void)cause(reason, OW_CAUSE_UNUSABLE, who, c->version_text, NULL,
		            why ? why : "cannot be used");
		return BT_UNUSABLE;
	}
	if (rc == BT_FAIL)
		return stop_on(b, OW_CAUSE_METADATA, who, NULL, b->lv[d].label,
		               why ? why : "the metadata could not be used");
	for (size_t i = 0; rc == 0 && i < nl; i++) {
		struct ow_requirement r;
		bool yes = false, base_yes = false;
		if ((rc = parse_line(b, lines[i], &r, b->lv[d].label)) != 0)
			break;
		applies(b, &r, extra, &yes);
		if (*extra) /* the extra adds only what the base does not have */
			applies(b, &r, "", &base_yes);
		if (yes && !base_yes)
			rc = add_requirement(b, &r, d, label, false);
		ow_requirement_dispose(&r);
	}
	return rc < 0 || rc == BT_FATAL ? rc : 0;
}

/* Whether a criterion on node n other than `skip` limits its versions. */
static bool constrained_elsewhere(const struct bt *b, size_t n, size_t skip)
{
	for (size_t k = 0; k < b->ncrits; k++)
		if (k != skip && b->crits[k].node == n && b->crits[k].spec.n)
			return true;
	return false;
}

/* What criterion k met on its node: the version chosen, the criteria
 * that rule out what it admits, or the versions there are. */
static void met(const struct bt *b, size_t k, struct clist *why)
{
	const struct crit *c = &b->crits[k];
	const struct node *m = &b->nodes[c->node];
	char name[NODE_NAME_MAX];
	node_name(m, name, sizeof name);
	if (m->pin >= 0) {
		(void)cause(why, OW_CAUSE_CHOSEN, name, m->c[m->pin].version_text, NULL, NULL);
	} else if (m->nc && constrained_elsewhere(b, c->node, k)) {
		crits_causes(b, c->node, k, why);
	} else if (m->nc) { /* nothing else limits it: name what there is */
		struct ow_str v = {0};
		for (size_t i = 0; i < m->nc && i < 3; i++)
			ow_str_printf(&v, "%s%s", i ? ", " : "", m->c[i].version_text);
		ow_str_puts(&v, m->nc > 3 ? ", ..." : "");
		why->oom |= v.err != 0;
		struct ow_cause *a = cause(why, OW_CAUSE_AVAILABLE, name, v.p, NULL, NULL);
		if (a)
			a->count = m->nc;
		ow_str_dispose(&v);
	} else {
		(void)cause(why, OW_CAUSE_NO_VERSIONS, name, NULL, NULL, NULL);
	}
	if (m->pin < 0) /* releases it admits with no file for the target: why */
		unfit_cause(b, c->node, why);
}

/* After decision d pushed its criteria (from `mark` on): a criterion on a
 * decided node its pin does not meet, or on an undecided node that has no
 * candidate left, rejects the decision; the decisions behind the conflict
 * go into cs and a reason into why. */
static int check_new(struct bt *b, size_t mark, struct bits *cs, struct clist *why)
{
	for (size_t k = mark; k < b->ncrits; k++) {
		const struct crit *c = &b->crits[k];
		struct node *m = &b->nodes[c->node];
		int rc = load(b, m);
		if (rc < 0)
			return rc;
		if (!m->nc && m->why && !c->constraint) {
			explain(b, c->node, NULL, 0);
			return b->conflict.oom ? ow_err(OW_ENOMEM, "resolve: out of memory") : BT_FATAL;
		}
		if (m->unknown || (m->pin >= 0 ? admits(b, c, &m->c[m->pin]) : has_any(b, c->node)))
			continue;
		struct bits causes = {{0}};
		if (m->pin >= 0) {
			for (size_t l = 0; l < b->nlv; l++)
				if (b->lv[l].node == c->node)
					bits_set(cs, (int)l);
		} else {
			bool pre = pre_ok(b, c->node);
			for (size_t i = 0; i < m->nc; i++)
				(void)meets(b, c->node, i, pre, &causes);
			askers(b, c->node, &causes);
			bits_or(cs, &causes);
		}
		crit_cause(b, c, why);
		met(b, k, why);
		return BT_CONFLICT;
	}
	return 0;
}

static int decide(struct bt *b, size_t n, size_t i)
{
	struct level *g = ow_array_more(b->lv, b->nlv, sizeof *g);
	if (!g)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	b->lv = g;
	struct level *l = &g[b->nlv];
	struct ow_str s = {0};
	node_text(&s, &b->nodes[n]);
	ow_str_printf(&s, " %s", b->nodes[n].c[i].version_text);
	int rc = ow_str_take(&s, &l->label);
	if (rc < 0)
		return rc;
	const struct crit *asker = NULL;
	for (size_t k = 0; k < b->ncrits && !asker; k++)
		if (b->crits[k].node == n && !b->crits[k].constraint)
			asker = &b->crits[k];
	if (asker && asker->parent >= 0)
		rc = asprintf(&l->chain, "%s -> %s", b->lv[asker->parent].chain, l->label) < 0 ? -1 : 0;
	else
		rc = (l->chain = strdup(l->label)) ? 0 : -1;
	if (rc < 0) {
		free(l->label);
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	}
	l->node = n;
	l->mark = b->ncrits;
	l->seq = b->seq;
	b->nlv++;
	b->nodes[n].pin = (long)i;
	return 0;
}

static void undo(struct bt *b)
{
	struct level *l = &b->lv[--b->nlv];
	b->nodes[l->node].pin = -1;
	b->ncrits = l->mark;
	free(l->label);
	free(l->chain);
	/* a node first required by this decision is not required any more */
	for (size_t i = 0; i < b->nnodes; i++)
		if (b->nodes[i].first != SIZE_MAX && b->nodes[i].first >= l->seq)
			b->nodes[i].first = SIZE_MAX;
	b->seq = l->seq;
}

/* ---- the search ------------------------------------------------------------------- */

static bool required(const struct bt *b, size_t n, bool *exact)
{
	bool req = false;
	*exact = false;
	for (size_t k = 0; k < b->ncrits; k++) {
		const struct crit *c = &b->crits[k];
		if (c->node != n || c->constraint)
			continue;
		req = true;
		for (size_t s = 0; s < c->spec.n; s++)
			*exact |= c->spec.specs[s].op == OW_OP_EQ && !c->spec.specs[s].wildcard;
	}
	return req;
}

/* The next node to decide: required and undecided; pinned exactly first,
 * then the one required first.  -1 when every required node is decided. */
static long choose(const struct bt *b)
{
	long best = -1;
	bool best_exact = false;
	for (size_t n = 0; n < b->nnodes; n++) {
		bool exact;
		if (b->nodes[n].pin >= 0 || b->nodes[n].unknown || !required(b, n, &exact))
			continue;
		if (best < 0 || (exact && !best_exact) ||
		    (exact == best_exact && b->nodes[n].first < b->nodes[best].first)) {
			best = (long)n;
			best_exact = exact;
		}
	}
	return best;
}

static int solve(struct bt *b, struct bits *cs_out);

/* Try candidate i of node n at the next depth: 0 solved, BT_CONFLICT (cs
 * filled, reason in why), BT_BACKJUMP, BT_FATAL, < 0 error. */
static int attempt(struct bt *b, size_t n, size_t i, struct bits *cs, struct clist *why)
{
	int d = (int)b->nlv;
	if (++b->steps > b->max_steps)
		return ow_err(OW_ETOOBIG, "resolve: gave up after trying %zu candidates; "
		                         "pin some versions to narrow the search",
		              b->max_steps);
	int rc = decide(b, n, i);
	if (rc < 0)
		return rc;
	size_t mark = b->ncrits;
	struct bits sub = {{0}};
	rc = push_requirements(b, n, &b->nodes[n].c[i], d, why);
	if (rc == BT_UNUSABLE) { /* no earlier decision could change that */
		undo(b);
		return BT_CONFLICT;
	}
	if (rc == BT_FATAL || (rc == 0 && (rc = check_new(b, mark, &sub, why)) == BT_FATAL))
		return rc;
	if (rc == BT_CONFLICT) { /* its own requirements conflict */
		undo(b);
		bits_or(cs, &sub);
		return BT_CONFLICT;
	}
	if (rc == 0)
		rc = solve(b, &sub);
	if (rc <= 0 || rc == BT_FATAL)
		return rc;
	if (b->conflict.n) { /* why the deeper search failed, with this decision */
		char name[NODE_NAME_MAX];
		(void)cause(why, OW_CAUSE_WITH, node_name(&b->nodes[n], name, sizeof name),
		            b->nodes[n].c[i].version_text, NULL, NULL);
		clist_append(why, &b->conflict, 1, 0, false);
	}
	b->deeper = true;
	undo(b);
	if (!bits_has(&sub, d)) { /* the failure does not depend on this decision */
		*cs = sub;
		return BT_BACKJUMP;
	}
	sub.w[d / 64] &= ~(1ull << (d % 64));
	bits_or(cs, &sub);
	return BT_CONFLICT;
}

static int solve(struct bt *b, struct bits *cs_out)
{
	long pick = choose(b);
	if (pick < 0)
		return 0;
	size_t n = (size_t)pick;
	int rc = load(b, &b->nodes[n]);
	if (rc < 0)
		return rc;
	/* not known this round: go on with the others, so that one round asks
	 * for every page and metadata file the search can see it needs (the
	 * result is pending either way; choose() passes unknown nodes over) */
	if (b->nodes[n].unknown)
		return solve(b, cs_out);
	struct bits cs = {{0}};
	struct clist why = {0};
	size_t tried = 0;
	bool pre = pre_ok(b, n);
	for (size_t i = 0; i < b->nodes[n].nc; i++) {
		if (!meets(b, n, i, pre, &cs))
			continue;
		struct clist one = {0};
		b->deeper = false;
		rc = attempt(b, n, i, &cs, &one);
		if (rc == BT_CONFLICT && tried++ < BT_REASONS_SHOWN && one.n)
			clist_append(&why, &one, 0, (unsigned)tried, false);
		why.oom |= one.oom;
		clist_dispose(&one);
		if (rc == BT_BACKJUMP) { /* jump back past this level */
			*cs_out = cs;
			clist_dispose(&why);
			return BT_CONFLICT;
		}
		if (rc != BT_CONFLICT) {
			clist_dispose(&why);
			return rc;
		}
	}
	struct ow_cause *more = tried > BT_REASONS_SHOWN
	                                ? cause(&why, OW_CAUSE_MORE, NULL, NULL, NULL, NULL)
	                                : NULL;
	if (more)
		more->count = tried - BT_REASONS_SHOWN;
	/* one candidate, failing further down: that failure says it all */
	if (!(tried == 1 && b->deeper && b->conflict.n))
		explain(b, n, &why, tried);
	clist_dispose(&why);
	askers(b, n, &cs);
	*cs_out = cs;
	return BT_CONFLICT;
}

/* ---- the entry point ----------------------------------------------------------------- */

static int add_inputs(struct bt *b, const struct bt_input *in, size_t n, bool constraint)
{
	for (size_t i = 0; i < n; i++) {
		bool yes = true;
		if (in[i].req->marker)
			applies(b, in[i].req, "", &yes);
		int rc = yes ? add_requirement(b, in[i].req, -1, in[i].where, constraint) : 0;
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* The extras of `name` decided, in name order: "a,b". */
static void extras_text(const struct bt *b, const char *name, struct ow_str *ex)
{
	const char *last = "";
	for (;;) {
		const char *next = NULL;
		for (size_t j = 0; j < b->nnodes; j++) {
			const struct node *e = &b->nodes[j];
			if (e->pin >= 0 && *e->extra && !strcmp(e->name, name) &&
			    strcmp(e->extra, last) > 0 && (!next || strcmp(e->extra, next) < 0))
				next = e->extra;
		}
		if (!next)
			return;
		ow_str_printf(ex, "%s%s", *last ? "," : "", next);
		last = next;
	}
}

static int collect(struct bt *b, struct bt_result *out)
{
	for (size_t l = 0; l < b->nlv; l++) {
		const struct node *n = &b->nodes[b->lv[l].node];
		if (*n->extra)
			continue;
		struct bt_pin *g = ow_array_more(out->pins, out->npins, sizeof *g);
		if (!g)
			return ow_err(OW_ENOMEM, "resolve: out of memory");
		out->pins = g;
		struct bt_pin *p = &g[out->npins++];
		memset(p, 0, sizeof *p);
		p->c = &n->c[n->pin];
		struct ow_str ex = {0}, by = {0};
		extras_text(b, n->name, &ex);
		for (size_t k = 0; k < b->ncrits && !by.p; k++)
			if (b->crits[k].node == b->lv[l].node && !b->crits[k].constraint) {
				ow_str_puts(&by, b->crits[k].by);
				p->input = b->crits[k].parent < 0;
			}
		ow_str_puts(&ex, "");
		ow_str_puts(&by, "");
		p->name = strdup(n->name);
		int rc = ow_str_take(&ex, &p->extras);
		if (rc == 0)
			rc = ow_str_take(&by, &p->required_by);
		if (rc < 0 || !p->name)
			return rc < 0 ? rc : ow_err(OW_ENOMEM, "resolve: out of memory");
	}
	return 0;
}

/* The conflict into out: its causes and their sentence. */
static int hand_over(struct bt *b, bool fatal, struct bt_result *out)
{
	if (b->conflict.oom)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	out->fatal = fatal;
	int rc = ow_causes_render(b->conflict.v, b->conflict.n, &out->conflict);
	if (rc < 0)
		return rc;
	out->causes = b->conflict.v;
	out->ncauses = b->conflict.n;
	memset(&b->conflict, 0, sizeof b->conflict);
	return 0;
}

int bt_resolve(const struct bt_provider *p, const struct bt_opts *o, const struct bt_input *roots,
               size_t nroots, const struct bt_input *cons, size_t ncons, struct bt_result *out)
{
	memset(out, 0, sizeof *out);
	struct bt b = {.p = p, .o = o, .max_steps = o->max_steps ? o->max_steps : BT_STEPS_MAX};
	struct bits cs = {{0}};
	int rc = add_inputs(&b, cons, ncons, true);
	if (rc == 0)
		rc = add_inputs(&b, roots, nroots, false);
	if (rc == 0)
		rc = solve(&b, &cs);
	if (rc == 0)
		rc = collect(&b, out);
	else if (rc == BT_CONFLICT || rc == BT_FATAL) /* no solution */
		rc = hand_over(&b, rc == BT_FATAL, out);
	out->pending = b.pending;
	out->steps = b.steps;
	while (b.nlv)
		undo(&b);
	free(b.lv);
	free(b.crits);
	free(b.nodes);
	clist_dispose(&b.conflict);
	return rc;
}

void bt_result_dispose(struct bt_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->npins; i++) {
		free(r->pins[i].name);
		free(r->pins[i].extras);
		free(r->pins[i].required_by);
	}
	free(r->pins);
	free(r->conflict);
	ow_causes_free(r->causes, r->ncauses);
	memset(r, 0, sizeof *r);
}
