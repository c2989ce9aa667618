/* resolve.c - the driver: every target advances as far as what is known
 * allows, then one batch of crawls and metadata fetches serves them all,
 * until every target is decided. */
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

#define RS_WINDOW0 2
#define RS_ROUNDS_MAX 256 /* rounds of fetching; a search back through a project's
                           * releases asks for more of them each round (BT_PREFETCH_MAX) */

static const char *const default_projects[] = {"torch", "torchvision", "torchaudio"};



/* The user's requirements decide first, as pip and uv decide them: newest
 * first, in the order written, torch among the others only as they require
 * it — so a project that pins torch (vllm 0.21.0: torch==2.11.0) chooses
 * the torch, instead of the newest torch walking that project back to an
 * old release that pins none.  The stack alone is resolved once per target
 * (torch as a dependency like any other); the torch it lands on bounds the
 * torches tried, and the pairing rule then takes torchvision/torchaudio.
 * A stack that fails alone, or names no torch at all, leaves torch free. */
static int stack_first(struct rs_ctx *x, struct rs_tstate *ts, bool *wait)
{
	if (ts->first_done || !x->nstack || x->o->no_deps || x->o->version || x->o->date)
		return 0;
	struct rs_closure cl = {0};
	int rc = rs_closure(x, &ts->t, ts->variant, NULL, 0, &cl);
	if (rc < 0)
		return rc;
	if (cl.need) {
		*wait = true;
		rs_closure_dispose(&cl);
		return 0;
	}
	ts->first_done = true;
	if (cl.error && (rc = rs_named_missing(x, ts)) < 0) {
		rs_closure_dispose(&cl);
		return rc;
	}
	if (cl.error && !ts->no_project && !cl.build_error && !cl.fatal) { /* no torch can give it one */
		ts->stack_error = cl.error;
		ow_causes_free(ts->causes, ts->ncauses);
		ts->causes = cl.causes, ts->ncauses = cl.ncauses;
		cl.error = NULL, cl.causes = NULL, cl.ncauses = 0;
	} else if (cl.error)
		ow_log(OW_LOG_INFO, "%s: the stack alone has no answer (%s): torch is chosen as "
		                    "without it",
		       ts->out->describe, cl.error);
	for (size_t i = 0; !cl.error && i < cl.n && rc == 0; i++) {
		if (strcmp(cl.picks[i].project, x->o->projects[0]))
			continue;
		ts->first_torch = cl.picks[i].c->v;
		ts->has_first = true;
		ow_log(OW_LOG_INFO, "%s: the stack, decided first, takes %s %s (required by %s)",
		       ts->out->describe, cl.picks[i].project, cl.picks[i].c->version_text,
		       cl.picks[i].required_by ? cl.picks[i].required_by : "the stack");
		rc = rs_note_newer(x, ts, &cl.picks[i]);
	}
	rs_closure_dispose(&cl);
	return rc;
}

/* A target of a variant folder asks for that folder's torch page with the
 * stack's first pages (in the same round: no round is added where the
 * folder is there); once the page is known missing, on an index without
 * the folder (PyPI, a mirror of it: every default variant's folder is
 * asked for first), the target ends there, no such variant, instead of
 * deciding the whole stack under a folder that is not there (every
 * dependency's page asked for there too) before the index is read again
 * as one root. */
static int folder_first(struct rs_ctx *x, struct rs_tstate *ts)
{
	struct rs_list *l;
	if (ts->first_done || !x->nstack || x->o->flat || !*ts->variant)
		return 0;
	int rc = rs_list_get(x, x->o->projects[0], ts->variant, false, &l);
	if (rc < 0)
		return rc;
	if (l->state == RS_LIST_MISSING && !l->unreachable && !l->absent)
		ts->first_done = true; /* nothing to decide: no_variant says why */
	return 0;
}

/* One target as far as it goes: 0 with ts->done or *wait, < 0 error. */
static int step(struct rs_ctx *x, struct rs_tstate *ts, bool *wait)
{
	size_t np = x->o->nprojects;
	int rc;
	do {
		struct rs_pview pv[OW_RESOLVE_MAX_PROJECTS] = {{0}};
		rs_target_reset(ts->out);
		ow_str_dispose(&x->gap);
		x->ngap = 0;
		*wait = false;
		rc = folder_first(x, ts);
		if (rc == 0)
			rc = stack_first(x, ts, wait);
		if (rc == 0 && !*wait && !ts->stack_error && !ts->no_project)
			rc = rs_views(x, ts, pv, np, wait);
		if (rc == 0 && !*wait && !ts->stack_error && !ts->no_project) {
			rs_torch_mc(x, ts, &pv[0], false);
			rc = rs_decide(x, ts, pv, wait);
		}
		rs_views_free(pv, np);
	} while (rc == RS_CHOOSE_AGAIN);
	/* no torch left because one could not be read: say why, not only that
	 * none fits */
	struct ow_resolve_target *o = ts->out;
	if (rc == 0 && !*wait && ts->no_project) { /* nothing chosen: the project is the answer */
		o->stack_conflict = true;
		o->missing[0] = o->alternative[0] = '\0';
		for (size_t p = 0; p < OW_RESOLVE_MAX_PROJECTS; p++)
			o->versions[p][0] = '\0';
		if (!(o->error = strdup(ts->no_project)))
			rc = ow_err(OW_ENOMEM, "resolve: out of memory");
	}
	if (rc == 0 && !*wait && !*o->versions[0] && !o->error && ts->bad_why &&
	    !(o->error = strdup(ts->bad_why)))
		rc = ow_err(OW_ENOMEM, "resolve: out of memory");
	/* the stack has no answer, or every torch was passed over for it */
	if (rc == 0 && !*wait && !*o->versions[0] && !o->error && (ts->npassed || ts->stack_error))
		rc = rs_stack_conflict_text(ts, o);
	if (rc == 0 && *wait && x->o->offline) {
		*wait = false;
		rc = rs_offline_gap(x, ts);
	}
	ts->done = rc == 0 && !*wait;
	if (ts->done)
		rc = rs_platform_hint(x, ts);
	return rc;
}

static int check_opts(const struct ow_resolve_opts *o)
{
	if (!o->index_url || !o->io || !o->nvariants || !o->ntargets)
		return ow_err(OW_EINVAL, "resolve: an index, variants and targets are needed");
	if (o->flat && o->nvariants != 1)
		return ow_err(OW_EINVAL, "resolve: a flat root has one variant (its own), not %zu",
		              o->nvariants);
	if (o->nprojects > OW_RESOLVE_MAX_PROJECTS || (o->nprojects && strcmp(o->projects[0], "torch")))
		return ow_err(OW_EINVAL, "resolve: --project must start with torch and name at most %d "
		                         "projects",
		              OW_RESOLVE_MAX_PROJECTS);
	if (o->date && (strlen(o->date) != 8 || strspn(o->date, "0123456789") != 8 ||
	                !rs_version_date(&(struct ow_version){.has_dev = true,
	                                                     .dev = strtoull(o->date, NULL, 10)})))
		return ow_err(OW_EINVAL, "--date: '%s' is not a date like 20251021", o->date);
	struct ow_version v;
	if (o->version && ow_pep440_parse(&v, o->version) < 0)
		return ow_err(OW_EINVAL, "--version: '%s' is not a version like 2.10.0: %s", o->version,
		              ow_err_detail());
	return 0;
}

/* buf is sized OW_RESOLVE_SELECTOR_MAX: room for any version check_opts
 * accepts; a longer text is refused, never cut. */
static int selector_text(const struct ow_resolve_opts *o, char *buf, size_t n)
{
	const char *pair = o->pair == OW_PAIR_NEWEST ? ",pair:newest" : "";
	int rc;
	if (o->date)
		rc = ow_fmt(buf, n, "date:%s%s", o->date, pair);
	else if (o->version)
		rc = ow_fmt(buf, n, "version:%s%s", o->version, pair);
	else
		rc = ow_fmt(buf, n, "latest%s", pair);
	return rc < 0 ? ow_err_prefix(rc, "resolve: the selector text: ") : 0;
}

/* A target's describe, variant, python and platform texts; a label (the
 * user's --variant) too long for them is refused, never cut. */
static int target_texts(struct ow_resolve_target *rt, const struct ow_target *t,
                        const char *label)
{
	char desc[128];
	int rc = ow_target_describe(t, desc, sizeof desc);
	size_t py = strcspn(desc, "-");
	if (!rc)
		rc = ow_fmt(rt->describe, sizeof rt->describe, "%s%s%s", label, *label ? " " : "",
		            desc);
	if (!rc)
		rc = ow_fmt(rt->variant, sizeof rt->variant, "%s", label);
	if (!rc)
		rc = ow_fmt(rt->python, sizeof rt->python, "%.*s", (int)py, desc);
	if (!rc)
		rc = ow_fmt(rt->platform, sizeof rt->platform, "%s", desc + py + (desc[py] != '\0'));
	return rc < 0 ? ow_err_prefix(rc, "resolve: target %s: ", desc) : 0;
}

static int init_targets(const struct ow_resolve_opts *o, struct ow_resolve_report *r,
                        struct rs_tstate **out)
{
	size_t n = o->nvariants * o->ntargets;
	struct rs_tstate *ts = calloc(n + 1, sizeof *ts);
	r->targets = calloc(n + 1, sizeof *r->targets);
	if (!ts || !r->targets) {
		free(ts);
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	}
	for (size_t v = 0; v < o->nvariants; v++)
		for (size_t t = 0; t < o->ntargets; t++) {
			size_t i = v * o->ntargets + t;
			struct ow_resolve_target *rt = &r->targets[i];
			const char *label = o->variants[v];
			/* a flat root has no variant folder: every page at {index}/{project}/ */
			ts[i] = (struct rs_tstate){.t = o->targets[t], .variant = o->flat ? "" : label,
			                        .out = rt, .window = RS_WINDOW0};
			rt->variant_from = !o->flat ? "folder" : *label ? "root" : NULL;
			int rc = target_texts(rt, &o->targets[t], label);
			if (rc < 0) {
				free(ts);
				return rc;
			}
		}
	r->ntargets = n;
	*out = ts;
	return 0;
}

/* The rounds ran out (or nothing is left to fetch) with targets waiting:
 * name the first, what it waits on, and the bound. */
static int still_waiting(const struct rs_ctx *x, const struct rs_tstate *ts, size_t n,
                         size_t waiting, size_t round)
{
	size_t i = 0;
	while (i + 1 < n && (ts[i].done || !*ts[i].waits_on))
		i++;
	const char *what = *ts[i].waits_on ? ts[i].waits_on : "a project";
	if (!x->nneed && x->ncrawl <= x->crawl_done)
		return ow_err(OW_EINTERNAL, "resolve: target %s waits on %s, with nothing left to "
		                            "fetch (after %zu rounds); %zu target(s) wait in all",
		              ts[i].out->describe, what, round, waiting);
	return ow_err(OW_ETOOBIG, "resolve: target %s still waits on the metadata of %s after %d "
	                          "rounds of fetching (the most one resolve runs); name the version "
	                          "of %s (--with) to shorten the search; %zu target(s) wait in all",
	              ts[i].out->describe, what, RS_ROUNDS_MAX, what, waiting);
}

/* Step every undecided target; then one round of crawls and fetches. */
static int run_rounds(struct rs_ctx *x, struct rs_tstate *ts, size_t n, struct ow_resolve_report *r)
{
	for (size_t round = 0;; round++) {
		size_t waiting = 0;
		for (size_t i = 0; i < n; i++) {
			bool wait = false;
			x->waits_on[0] = '\0';
			int rc = ts[i].done ? 0 : step(x, &ts[i], &wait);
			if (rc < 0)
				return rc;
			if (wait)
				memcpy(ts[i].waits_on, x->waits_on, sizeof ts[i].waits_on);
			waiting += wait;
		}
		if (!waiting)
			return 0;
		bool work = x->nneed || x->ncrawl > x->crawl_done;
		if (!work || round == RS_ROUNDS_MAX)
			return still_waiting(x, ts, n, waiting, round);
		ow_log(OW_LOG_INFO, "resolve round %zu: %zu page(s), %zu metadata file(s) for %zu "
		                    "target(s)",
		       round + 1, x->ncrawl - x->crawl_done, x->nneed, waiting);
		int rc = rs_round(x);
		if (rc < 0)
			return rc;
		r->rounds++;
	}
}

static int add_report_note(struct ow_resolve_report *r, const char *variant)
{
	for (size_t i = 0; i < r->nnotes; i++)
		if (!strncmp(r->notes[i], variant, strlen(variant)) &&
		    r->notes[i][strlen(variant)] == ':')
			return 0;
	char **g = ow_array_more(r->notes, r->nnotes, sizeof *g);
	if (!g)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	r->notes = g;
	if (asprintf(&g[r->nnotes], "%s: no such variant on this index; left out (a default "
	                            "variant: name --variant to choose)",
	             variant) < 0)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	r->nnotes++;
	return 0;
}

/* Default variants the index does not have are not the user's targets:
 * drop their targets, one note per variant. */
static int drop_absent_defaults(const struct ow_resolve_opts *o, struct ow_resolve_report *r)
{
	size_t k = 0, absent = 0;
	for (size_t i = 0; i < r->ntargets; i++)
		absent += r->targets[i].no_variant;
	/* none of the defaults there: every target stays, each saying why */
	if (!o->variants_default || absent == r->ntargets)
		return 0;
	for (size_t i = 0; i < r->ntargets; i++) {
		struct ow_resolve_target *t = &r->targets[i];
		if (!t->no_variant) {
			if (k != i)
				r->targets[k] = *t;
			k++;
			continue;
		}
		int rc = add_report_note(r, t->variant);
		rs_target_reset(t);
		if (rc < 0)
			return rc;
	}
	r->ntargets = k;
	return 0;
}

static int store_all(ow_store *s, const struct ow_resolve_opts *o, struct ow_resolve_report *r)
{
	for (size_t i = 0; i < r->ntargets; i++) {
		/* a target with no torch at all holds nothing to fetch or export:
		 * recording it would only fill 'ls sets' with failed resolves */
		if (!*r->targets[i].versions[0])
			continue;
		int rc = rs_store_target(s, o->index_url, r->selector, !o->no_deps, &r->targets[i]);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Every target found no folder of its default variant: the index is one
 * root (PyPI, a devpi or Artifactory mirror), not a PyTorch channel. */
static bool all_absent(const struct ow_resolve_opts *o, const struct ow_resolve_report *r)
{
	size_t absent = 0;
	for (size_t i = 0; i < r->ntargets; i++)
		absent += r->targets[i].no_variant;
	return o->variants_default && !o->flat && r->ntargets && absent == r->ntargets;
}

/* Whether the index root itself lists the first project ({index}/torch/):
 * then it is one root without variant folders (PyPI, a mirror of it). */
static bool root_lists_torch(struct rs_ctx *x)
{
	struct rs_list *l;
	if (rs_list_get(x, x->o->projects[0], "", false, &l) < 0)
		return false;
	if (l->state == RS_LIST_NOT_CRAWLED && !x->o->offline &&
	    (rs_round(x) < 0 || rs_list_get(x, x->o->projects[0], "", false, &l) < 0))
		return false;
	return l->state == RS_LIST_LOADED && l->n > 0;
}

/* Variants the user named, none of them a folder of the index, and the
 * index root lists torch itself: one root (an export served back, a devpi
 * index) that may hold several variants' builds side by side. */
static bool named_absent(struct rs_ctx *x, const struct ow_resolve_report *r)
{
	size_t absent = 0;
	for (size_t i = 0; i < r->ntargets; i++)
		absent += r->targets[i].no_variant;
	return !x->o->variants_default && !x->o->flat && r->ntargets && absent == r->ntargets &&
	       root_lists_torch(x);
}

/* Variants the user named on an index that has no variant folders at all:
 * say what the index is and how its variant is chosen there. */
static int explain_one_root(struct rs_ctx *x, struct ow_resolve_report *r)
{
	size_t absent = 0;
	for (size_t i = 0; i < r->ntargets; i++)
		absent += r->targets[i].no_variant;
	if (x->o->variants_default || x->o->flat || !r->ntargets || absent != r->ntargets ||
	    !root_lists_torch(x))
		return 0;
	for (size_t i = 0; i < r->ntargets; i++) {
		struct ow_resolve_target *t = &r->targets[i];
		char *e = NULL;
		if (asprintf(&e, "%s; this index has no variant folders: it is one root (as PyPI "
		                 "and its mirrors are) with every project at %s/{project}/, and "
		                 "the variant is the one its torch is built for (its +cu128 "
		                 "local version, else the CUDA it requires) — leave --variant/--cuda "
		                 "out to read it so, or use a PyTorch variant root such as "
		                 "--index-url https://download.pytorch.org/whl/%s",
		             t->error ? t->error : "no such variant", x->o->index_url, t->variant) < 0)
			return ow_err(OW_ENOMEM, "resolve: out of memory");
		free(t->error);
		t->error = e;
	}
	return 0;
}

/* What a target's state holds of its own (not the state array). */
static void tstate_dispose(struct rs_tstate *ts)
{
	for (size_t i = 0; i < ts->npassed; i++)
		free(ts->passed[i].why);
	free(ts->bad_torch), free(ts->bad_why), free(ts->passed), free(ts->no_project);
	free(ts->stack_error);
	ow_causes_free(ts->causes, ts->ncauses);
}

static void targets_free(struct ow_resolve_report *r, struct rs_tstate *ts, size_t nts)
{
	for (size_t i = 0; ts && i < nts; i++)
		tstate_dispose(&ts[i]);
	free(ts);
	for (size_t i = 0; i < r->ntargets; i++)
		rs_target_reset(&r->targets[i]);
	free(r->targets);
	r->targets = NULL;
	r->ntargets = 0;
}

static const char *const flat_unnamed[] = {""};

/* Default variants on a root the workspace knows as one root (an earlier
 * crawl, resolve or sync found none of their folders): read it as one root
 * at once, asking for no folder. */
static int remembered_flat(ow_store *s, struct ow_resolve_opts *o, struct ow_resolve_report *r)
{
	enum ow_root_layout known = OW_ROOT_UNKNOWN;
	if (!o->variants_default || o->flat)
		return 0;
	int rc = ow_root_layout_get(s, o->index_url, &known);
	if (rc < 0 || known != OW_ROOT_FLAT)
		return rc;
	o->flat = true;
	o->variants = flat_unnamed;
	o->nvariants = 1;
	r->layout_remembered = true;
	return 0;
}

/* The stack's lines, parsed once; a line that is not a requirement names
 * where it came from. */
static int parse_stack(struct rs_ctx *x)
{
	if (!x->o->nstack)
		return 0;
	if (!(x->stack = calloc(x->o->nstack, sizeof *x->stack)))
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	for (size_t i = 0; i < x->o->nstack; i++) {
		const struct ow_stack_line *l = &x->o->stack[i];
		int rc = ow_requirement_parse(&x->stack[i].req, l->line);
		if (rc < 0)
			return ow_err_prefix(OW_EINVAL, "%s: ", l->where ? l->where : "the stack");
		x->nstack++;
		x->stack[i].where = l->where ? l->where : "the stack";
		x->stack[i].constraint = l->constraint;
		x->stack[i].hashes = l->hashes;
		x->stack[i].nhashes = l->nhashes;
		if (x->stack[i].req.has_url)
			return ow_err(OW_EINVAL, "%s: %s: a direct URL cannot be resolved from an index; "
			                         "name the version instead",
			              x->stack[i].where, l->line);
	}
	return 0;
}

/* No folder of any default variant at the index: resolve again with it
 * read as one flat root (and remember that it is one). */
static int again_flat(struct rs_ctx *x, struct ow_resolve_opts *o, struct ow_resolve_report *r,
                      struct rs_tstate **ts, size_t *nts)
{
	ow_log(OW_LOG_INFO, "%s has no folder for any default variant: read as one "
	                    "root, every project at {index}/{project}/",
	       o->index_url);
	targets_free(r, *ts, *nts);
	*ts = NULL;
	*nts = 0;
	o->flat = true;
	o->variants = flat_unnamed;
	o->nvariants = 1;
	int rc = ow_root_layout_put(x->s, o->index_url, OW_ROOT_FLAT);
	if (rc == 0 && (rc = init_targets(o, r, ts)) == 0) {
		*nts = r->ntargets;
		rc = run_rounds(x, *ts, r->ntargets, r);
	}
	return rc;
}

/* Resolve again with the root read as one flat root where each named
 * variant is the local label its torch carries (--variant cu126 takes
 * 2.10.0+cu126 and the torchvision/torchaudio built for it). */
static int again_by_label(struct rs_ctx *x, struct ow_resolve_opts *o,
                          struct ow_resolve_report *r, struct rs_tstate **ts, size_t *nts)
{
	ow_log(OW_LOG_INFO, "%s has no variant folders: read as one root, each variant's "
	                    "torch by its local label (--variant %s takes +%s)",
	       o->index_url, o->variants[0], o->variants[0]);
	targets_free(r, *ts, *nts);
	*ts = NULL;
	*nts = 0;
	o->flat = true;
	int rc = ow_root_layout_put(x->s, o->index_url, OW_ROOT_FLAT);
	if (rc == 0 && (rc = init_targets(o, r, ts)) == 0) {
		*nts = r->ntargets;
		for (size_t i = 0; i < r->ntargets; i++) {
			(*ts)[i].label = r->targets[i].variant;
			r->targets[i].variant_from = "local-version";
		}
		rc = run_rounds(x, *ts, r->ntargets, r);
	}
	return rc;
}

/* The run's figures into the report; what the run held is freed. */
static void finish_report(struct rs_ctx *x, struct ow_resolve_report *r, struct rs_tstate *ts,
                          size_t nts)
{
	r->flat = x->o->flat;
	r->metadata_read = x->metadata_read;
	r->metadata_cached = x->metadata_cached;
	r->pages_used = x->nused;
	r->pages_oldest = rs_pages_oldest(x);
	r->pages_revalidated = x->nstale;
	for (size_t i = 0; ts && i < nts; i++)
		tstate_dispose(&ts[i]);
	for (size_t i = 0; i < x->nstack; i++)
		ow_requirement_dispose(&x->stack[i].req);
	free(x->stack);
	for (size_t i = 0; i < r->ntargets; i++) {
		r->incomplete += !r->targets[i].complete;
		r->unreachable += r->targets[i].unreachable;
		r->not_in_workspace += r->targets[i].not_in_workspace;
	}
	free(ts);
	rs_ctx_dispose(x);
}

int ow_resolve(ow_store *s, const struct ow_resolve_opts *in, struct ow_resolve_report *r)
{
	memset(r, 0, sizeof *r);
	struct ow_resolve_opts o = *in;
	if (!o.nprojects) {
		o.projects = default_projects;
		o.nprojects = 3;
	}
	int rc = check_opts(&o);
	if (rc < 0)
		return rc;
	for (size_t p = 0; p < o.nprojects; p++) {
		if (!(r->projects[r->nprojects] = strdup(o.projects[p]))) {
			ow_resolve_report_dispose(r); /* no half-filled report */
			return ow_err(OW_ENOMEM, "resolve: out of memory");
		}
		r->nprojects++;
	}
	if ((rc = selector_text(&o, r->selector, sizeof r->selector)) < 0) {
		ow_resolve_report_dispose(r);
		return rc;
	}
	struct rs_tstate *ts = NULL;
	struct rs_ctx x = {.s = s, .o = &o, .now = (int64_t)time(NULL)};
	size_t nts = 0;
	if ((rc = parse_stack(&x)) == 0 && (rc = remembered_flat(s, &o, r)) == 0 &&
	    (rc = init_targets(&o, r, &ts)) == 0) {
		nts = r->ntargets;
		rc = run_rounds(&x, ts, r->ntargets, r);
		if (rc == 0 && all_absent(&o, r))
			rc = again_flat(&x, &o, r, &ts, &nts);
		else if (rc == 0 && named_absent(&x, r))
			rc = again_by_label(&x, &o, r, &ts, &nts);
		if (rc == 0)
			rc = explain_one_root(&x, r);
		if (rc == 0)
			rc = drop_absent_defaults(&o, r);
		if (rc == 0)
			rc = rs_spread(&x, r);
		/* an interrupted run's targets are what it got to, not answers */
		if (rc == 0 && ow_interrupted())
			rc = ow_err(OW_EINTERRUPTED, "resolve: interrupted — nothing was recorded");
		if (rc == 0 && !o.no_store)
			rc = store_all(s, &o, r);
	}
	finish_report(&x, r, ts, nts);
	if (rc < 0) {
		ow_resolve_report_dispose(r);
		return rc;
	}
	return r->incomplete ? OW_EINCOMPLETE : 0;
}

void ow_resolve_report_dispose(struct ow_resolve_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->ntargets; i++)
		rs_target_reset(&r->targets[i]);
	free(r->targets);
	for (size_t p = 0; p < r->nprojects; p++)
		free(r->projects[p]);
	for (size_t i = 0; i < r->nnotes; i++)
		free(r->notes[i]);
	free(r->notes);
	rs_spread_free(r->spread, r->nspread);
	memset(r, 0, sizeof *r);
}
