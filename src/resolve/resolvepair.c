/* resolvepair.c - torch pairing: the views of each project's candidates for
 * a target, the choice of a torch and the torchvision/torchaudio that pin
 * it, the set completed by its closure, and what the target says when
 * none is (the driver, resolve.c, steps it). */
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

static enum ow_member_role role_of(const char *project)
{
	return !strcmp(project, "torch")         ? OW_ROLE_TORCH
	       : !strcmp(project, "torchvision") ? OW_ROLE_VISION
	       : !strcmp(project, "torchaudio")  ? OW_ROLE_AUDIO
	                                         : OW_ROLE_PROJECT;
}

/* The Requires-Dist specifier on torch, NULL when there is none. */
static const char *torch_pin(const struct rs_meta *m, char *buf, size_t n)
{
	for (size_t i = 0; i < m->nreqs; i++) {
		struct ow_requirement r;
		memset(&r, 0, sizeof r);
		if (ow_requirement_parse(&r, m->reqs[i]) < 0)
			continue;
		bool named = !strcmp(r.name, "torch");
		if (named && ow_spec_format(&r.spec, buf, n) < 0)
			buf[0] = '\0';
		ow_requirement_dispose(&r);
		if (named)
			return buf;
	}
	return NULL;
}

static bool torch_selected(const struct ow_resolve_opts *o, const struct rs_cand *c)
{
	if (o->date && rs_version_date(&c->v) != (uint32_t)strtoul(o->date, NULL, 10))
		return false;
	if (o->version) {
		struct ow_specset set;
		char spec[OW_VER_TEXT_MAX + 4];
		snprintf(spec, sizeof spec, "==%s", o->version);
		if (ow_spec_parse(&set, spec) < 0 || !ow_spec_contains(&set, &c->v, true))
			return false;
	}
	return true;
}

/* Whether every requirement of the stack on torch that applies to the
 * target admits this torch (`torch<2.12`, `torch==2.9.0`). */
static bool stack_admits_torch(const struct rs_ctx *x, const struct rs_tstate *ts,
                               const struct rs_cand *c)
{
	struct ow_marker_env env;
	ow_marker_env_for_target(&env, &ts->t);
	for (size_t i = 0; i < x->nstack; i++) {
		bool yes = true;
		if (strcmp(x->stack[i].req.name, "torch"))
			continue;
		if (ow_requirement_applies(&x->stack[i].req, &env, NULL, &yes) < 0)
			yes = false;
		if (yes && !ow_spec_contains(&x->stack[i].req.spec, &c->v, true))
			return false;
	}
	return true;
}

static bool is_bad(const struct rs_tstate *ts, int64_t id)
{
	for (size_t i = 0; i < ts->nbad; i++)
		if (ts->bad_torch[i] == id)
			return true;
	return false;
}

static int mark_bad(struct rs_tstate *ts, int64_t id)
{
	int64_t *g = ow_array_more(ts->bad_torch, ts->nbad, sizeof *g);
	if (!g)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	ts->bad_torch = g;
	g[ts->nbad++] = id;
	return 0;
}

/* Local labels compare as PEP 440 normalises them (cpu-cxx11-abi is the
 * folder of +cpu.cxx11.abi). */
static bool same_label(const char *folder, const char *local)
{
	for (; *folder && *local; folder++, local++)
		if (*folder != *local && !(strchr("-_.", *folder) && *local == '.'))
			return false;
	return !*folder && !*local;
}

/* On one root read by label: the torch built for the target's variant.
 * PyTorch's macOS wheels are its cpu build and carry no label. */
bool rs_label_selected(const struct rs_tstate *ts, const struct rs_cand *c)
{
	if (!ts->label)
		return true;
	if (!c->v.local[0] && !strcmp(ts->label, "cpu") && ts->t.os == OW_OS_MACOS)
		return true;
	return same_label(ts->label, c->v.local);
}

/* No newer torch than the one the stack decided first (public versions:
 * the label picks the build). */
bool rs_first_admits(const struct rs_tstate *ts, const struct rs_cand *c)
{
	if (!ts->has_first)
		return true;
	struct ow_version a = c->v, b = ts->first_torch;
	a.local[0] = b.local[0] = '\0';
	return ow_pep440_cmp(&a, &b) <= 0;
}

/* Torch view: filtered by --date / --version unless `all`, and by the
 * target's label. */
void rs_torch_mc(struct rs_ctx *x, struct rs_tstate *ts, struct rs_pview *pv, bool all)
{
	size_t k = 0;
	for (size_t i = 0; i < pv->n; i++) {
		struct rs_cand *c = pv->c[i];
		if ((!all && !torch_selected(x->o, c)) || !rs_label_selected(ts, c) ||
		    !rs_first_admits(ts, c))
			continue;
		const struct rs_meta *m = rs_meta_peek(x, c);
		bool ok = !is_bad(ts, c->id) && !c->yanked && (all || stack_admits_torch(x, ts, c)) &&
		          (!m || m->state == RS_META_NONE || rs_python_ok(&ts->t, m->requires_python));
		pv->c[k] = c;
		pv->mc[k++] = (struct rs_mc){&c->v, c->date, m ? m->state : 0, NULL, ok, c->uploaded};
	}
	pv->n = k;
	/* a torch's upload day is its version's first file's (a rebuild with a
	 * build tag, uploaded months later, does not move it) */
	for (size_t i = 0; i < k; i++)
		for (size_t j = 0; j < k; j++)
			if (j != i && pv->mc[j].uploaded &&
			    (!pv->mc[i].uploaded || pv->mc[j].uploaded < pv->mc[i].uploaded) &&
			    ow_pep440_cmp(pv->mc[i].v, pv->mc[j].v) == 0)
				pv->mc[i].uploaded = pv->mc[j].uploaded;
}

/* Other projects: metadata of the candidates in the scope of
 * torches[0..window); pins kept in `pins` (one slot each).  What is not
 * known yet is asked for newest first, RS_META_BATCH at a time: the newest
 * torchvision usually pins the torch exactly, and then none older is ever
 * read (PyPI's torchvision page has every release since 0.1.6; the matcher
 * waits on an unknown candidate only while no newer one settles it). */
#define RS_META_BATCH 4
static void proj_mc(struct rs_ctx *x, const struct rs_tstate *ts, struct rs_pview *pv, uint32_t oldest,
                    bool queue)
{
	size_t asked = queue ? 0 : RS_META_BATCH;
	for (size_t i = 0; i < pv->n; i++) {
		struct rs_cand *c = pv->c[i];
		struct rs_mc *mc = &pv->mc[i];
		*mc = (struct rs_mc){&c->v, c->date, 0, NULL, !c->yanked, c->uploaded};
		/* a yanked file is never a set member, and one out of the dates'
		 * scope cannot pin these torches: their metadata is not read */
		if (c->yanked || !rs_in_scope(oldest, c->date))
			continue;
		const struct rs_meta *m = asked < RS_META_BATCH ? rs_meta_get(x, c) : rs_meta_peek(x, c);
		if (!m || m->state == RS_META_QUEUED) {
			asked++; /* unknown (mc->meta stays QUEUED): the matcher waits if it gets here */
			continue;
		}
		mc->meta = m->state;
		if (m->state == RS_META_PARSED) {
			mc->pin = torch_pin(m, pv->pins[i], sizeof pv->pins[i]);
			mc->usable &= rs_python_ok(&ts->t, m->requires_python);
		}
	}
}

int rs_views(struct rs_ctx *x, struct rs_tstate *ts, struct rs_pview *pv, size_t np, bool *wait)
{
	for (size_t p = 0; p < np; p++) {
		struct rs_list *l;
		int rc = rs_list_get(x, x->o->projects[p], ts->variant, false, &l);
		if (rc < 0)
			return rc;
		if (l->state == RS_LIST_NOT_CRAWLED) {
			*wait = true;
			continue;
		}
		/* offline, a member's page the workspace lacks: named, never
		 * taken as "no such project" (which would pick another torch) */
		if (l->absent) {
			if ((rc = rs_note_gap(x, "%s: %s", l->project, l->why)) < 0)
				return rc;
			*wait = true;
			continue;
		}
		if ((rc = rs_view(x, l, &ts->t, &pv[p].c, &pv[p].n)) < 0)
			return rc;
		pv[p].mc = calloc(pv[p].n + 1, sizeof *pv[p].mc);
		/* analyzer: pv[p] is the caller's view, freed by rs_views_free on every path */
		pv[p].pins = calloc(pv[p].n + 1, sizeof *pv[p].pins);
		/* analyzer: pv[p] is the caller's view, freed by rs_views_free on every path */
		if (!pv[p].mc || !pv[p].pins)
			return ow_err(OW_ENOMEM, "resolve: out of memory");
	}
	return 0;
}

void rs_views_free(struct rs_pview *pv, size_t np)
{
	for (size_t p = 0; p < np; p++)
		free(pv[p].c), free(pv[p].mc), free(pv[p].pins);
}

/* The projects named in `bits`, comma-separated; buf is sized
 * OW_RESOLVE_MISSING_MAX, room for all of them. */
static int missing_text(const struct rs_ctx *x, uint32_t bits, char *buf, size_t n)
{
	struct ow_str b = {0};
	for (size_t p = 1; p < x->o->nprojects; p++)
		if (bits >> (p - 1) & 1)
			ow_str_printf(&b, "%s%s", b.n ? "," : "", x->o->projects[p]);
	int rc = b.err ? b.err : ow_fmt(buf, n, "%s", b.p ? b.p : "");
	ow_str_dispose(&b);
	return rc < 0 ? ow_err_prefix(rc, "resolve: missing projects: ") : 0;
}

static int add_skip(struct ow_resolve_target *o, const char *torch, const char *missing)
{
	struct ow_resolve_skip *g = ow_array_more(o->skipped, o->nskipped, sizeof *g);
	if (!g)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	o->skipped = g;
	g[o->nskipped].why = NULL;
	snprintf(g[o->nskipped].torch, sizeof g->torch, "%s", torch);
	snprintf(g[o->nskipped++].missing, sizeof g->missing, "%s", missing);
	return 0;
}

/* Choose among torches[0..window); RS_NEED when metadata was queued. */
static void choose(struct rs_ctx *x, struct rs_tstate *ts, struct rs_pview *pv, size_t window,
                   struct rs_choice *ch)
{
	size_t np = x->o->nprojects - 1;
	const struct rs_mc *projs[OW_RESOLVE_MAX_PROJECTS] = {0};
	size_t n[OW_RESOLVE_MAX_PROJECTS] = {0};
	uint32_t oldest = 0;
	for (size_t i = 0; i < window; i++)
		if (pv[0].mc[i].date && (!oldest || pv[0].mc[i].date < oldest))
			oldest = pv[0].mc[i].date;
	/* first with what is known (the index database included); only when
	 * that cannot decide, the next unknown candidates are queued */
	for (size_t p = 0; p < np; p++) {
		proj_mc(x, ts, &pv[p + 1], oldest, false);
		projs[p] = pv[p + 1].mc;
		n[p] = pv[p + 1].n;
	}
	rs_choose(pv[0].mc, window, projs, n, np, x->o->pair == OW_PAIR_NEWEST, ch);
	if (ch->torch != RS_NEED)
		return;
	for (size_t p = 0; p < np; p++)
		proj_mc(x, ts, &pv[p + 1], oldest, true);
}

static int add_member(struct ow_resolve_target *o, const struct rs_pick *p)
{
	struct ow_resolve_member *g = ow_array_more(o->members, o->nmembers, sizeof *g);
	if (!g)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	o->members = g;
	struct ow_resolve_member *m = &g[o->nmembers++];
	memset(m, 0, sizeof *m);
	m->file_id = p->c->id;
	m->role = p->role;
	snprintf(m->project, sizeof m->project, "%s", p->project);
	snprintf(m->version, sizeof m->version, "%s", p->c->version_text);
	snprintf(m->filename, sizeof m->filename, "%s", p->c->filename);
	m->url = strdup(p->c->url);
	/* analyzer: m is o->members[o->nmembers - 1], freed by rs_target_reset */
	m->required_by = p->required_by ? strdup(p->required_by) : NULL;
	if (!m->url || (p->required_by && !m->required_by))
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	const char *h = p->c->sha256 ? p->c->sha256 : p->c->object_sha256;
	snprintf(m->sha256, sizeof m->sha256, "%s", h ? h : "");
	m->sha256_source = p->c->sha256 ? "published" : h ? "stored" : NULL;
	return 0;
}

static int add_note(struct ow_resolve_target *o, const char *fmt, ...) OW_PRINTF(2, 3);
static int add_note(struct ow_resolve_target *o, const char *fmt, ...)
{
	char **g = ow_array_more(o->notes, o->nnotes, sizeof *g);
	if (!g)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	o->notes = g;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&g[o->nnotes], fmt, ap);
	va_end(ap);
	if (n < 0)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	o->nnotes++;
	return 0;
}

/* The set's own members: torch and what matched it (index p of pv). */
static size_t set_roots(const struct rs_ctx *x, struct rs_pview *pv, long torch, const long *pick,
                        struct rs_pick *roots)
{
	size_t n = 0;
	for (size_t p = 0; p < x->o->nprojects; p++) {
		long i = p == 0 ? torch : pick[p - 1];
		if (i < 0)
			continue;
		roots[n] = (struct rs_pick){.c = pv[p].c[i], .role = role_of(x->o->projects[p]),
		                            .extras = x->o->project_extras ? x->o->project_extras[p]
		                                                           : NULL};
		snprintf(roots[n++].project, sizeof roots->project, "%s", x->o->projects[p]);
	}
	return n;
}

static void fill_versions(const struct rs_ctx *x, struct ow_resolve_target *o,
                          const struct rs_pick *roots, size_t n)
{
	for (size_t p = 0; p < x->o->nprojects; p++) {
		o->versions[p][0] = '\0';
		for (size_t i = 0; i < n; i++)
			if (!strcmp(roots[i].project, x->o->projects[p]))
				snprintf(o->versions[p], sizeof o->versions[p], "%s", roots[i].c->version_text);
	}
}

static int add_skips(const struct rs_ctx *x, struct ow_resolve_target *o, const struct rs_pview *pv,
                     const struct rs_choice *ch, size_t upto)
{
	char miss[OW_RESOLVE_MISSING_MAX];
	for (size_t i = 0; i < upto && i < ch->examined; i++) {
		if (!ch->missing[i])
			continue;
		int rc = missing_text(x, ch->missing[i], miss, sizeof miss);
		if (rc < 0 || (rc = add_skip(o, pv[0].c[i]->version_text, miss)) < 0)
			return rc;
	}
	return 0;
}

/* The chosen torch needs its own metadata: Requires-Python and the closure.
 * An enum torch_check, or a negative error code. */
enum torch_check { TORCH_WAIT = 0, TORCH_OK = 1, TORCH_RULED_OUT = 2 };
static int check_torch(struct rs_ctx *x, struct rs_tstate *ts, const struct rs_cand *c)
{
	const struct rs_meta *m = rs_meta_get(x, c);
	if (!m)
		return TORCH_WAIT;
	if (m->state == RS_META_PARSED && rs_python_ok(&ts->t, m->requires_python))
		return TORCH_OK;
	if (add_note(ts->out, "%s: %s", c->filename,
	             m->state == RS_META_PARSED ? "Requires-Python excludes the target"
	             : m->why     ? m->why
	                          : "no metadata could be read"))
		return OW_ENOMEM;
	/* the notes go with the next choice: this stays for the target's error */
	if (m->state != RS_META_PARSED && !ts->bad_why &&
	    asprintf(&ts->bad_why, "%s", ts->out->notes[ts->out->nnotes - 1]) < 0) {
		ts->bad_why = NULL;
		return OW_ENOMEM;
	}
	return mark_bad(ts, c->id) < 0 ? OW_ENOMEM : TORCH_RULED_OUT;
}

/* The CUDA a requirement names for this target, as a variant ("cu132"):
 * cuda-toolkit==13.2.2 (torch >= 2.12 on PyPI), nvidia-cuda-runtime==13.0.96
 * or nvidia-cuda-runtime-cu12==12.8.90; 0 when it names none. */
static int cuda_of_req(const struct ow_requirement *r, char *buf, size_t n)
{
	if (strcmp(r->name, "cuda-toolkit") && strcmp(r->name, "nvidia-cuda-runtime") &&
	    strncmp(r->name, "nvidia-cuda-runtime-cu", 22))
		return 0;
	for (size_t i = 0; i < r->spec.n; i++) {
		const struct ow_spec *sp = &r->spec.specs[i];
		if ((sp->op == OW_OP_EQ || sp->op == OW_OP_COMPATIBLE || sp->op == OW_OP_GE) &&
		    sp->version.nrelease >= 2 && sp->version.release[0] < 100 &&
		    sp->version.release[1] < 10) {
			snprintf(buf, n, "cu%u%u", (unsigned)sp->version.release[0],
			         (unsigned)sp->version.release[1]);
			return 1;
		}
	}
	return 0;
}

/* A flat root's target is named by the torch taken: its local version
 * (2.9.0+cu128 -> cu128, +cpu, +rocm6.4, +xpu), else the CUDA that its
 * requirements that apply to the target ask for, else (no CUDA at all, as
 * PyPI's macOS and Windows torch) cpu.  The describe text follows. */
static void name_variant(struct rs_ctx *x, struct rs_tstate *ts, const struct rs_cand *torch)
{
	struct ow_resolve_target *o = ts->out;
	if (!x->o->flat || *x->o->variants[0])
		return;
	/* a local label (at most 63), " " and a target text (desc, at most 127)
	 * fill describe[OW_RESOLVE_DESCRIBE_MAX] at most */
	char v[OW_VER_LOCAL_MAX] = "";
	const char *from = "local-version";
	const char *local = torch->v.local;
	if (*local && (!strncmp(local, "cu", 2) || !strncmp(local, "rocm", 4) ||
	               !strncmp(local, "cpu", 3) || !strcmp(local, "xpu")))
		snprintf(v, sizeof v, "%.*s", (int)strcspn(local, "."), local);
	const struct rs_meta *m = *v ? NULL : rs_meta_peek(x, torch);
	if (!*v && m && m->state == RS_META_PARSED) {
		struct ow_marker_env env;
		ow_marker_env_for_target(&env, &ts->t);
		from = "requirements";
		for (size_t i = 0; i < m->nreqs && !*v; i++) {
			struct ow_requirement r;
			bool yes = false;
			memset(&r, 0, sizeof r);
			if (ow_requirement_parse(&r, m->reqs[i]) < 0)
				continue;
			if (ow_requirement_applies(&r, &env, NULL, &yes) == 0 && yes)
				cuda_of_req(&r, v, sizeof v);
			ow_requirement_dispose(&r);
		}
		if (!*v)
			snprintf(v, sizeof v, "cpu");
	}
	if (!*v)
		return;
	char desc[128];
	ow_target_describe(&ts->t, desc, sizeof desc);
	snprintf(o->variant, sizeof o->variant, "%s", v);
	snprintf(o->describe, sizeof o->describe, "%s %s", v, desc);
	o->variant_from = from;
}

/* The stack's requirements rule this torch out: remember why, for the
 * target's report, and choose again without it. */
static int pass_over(struct rs_tstate *ts, const struct rs_cand *torch, const struct rs_closure *cl)
{
	const char *why = cl->error;
	if (!ts->npassed) { /* the newest torch's conflict: the one the target says */
		ow_causes_free(ts->causes, ts->ncauses);
		int rc = ow_causes_copy(cl->causes, cl->ncauses, &ts->causes);
		ts->ncauses = ts->causes ? cl->ncauses : 0;
		if (rc < 0)
			return rc;
	}
	int rc = mark_bad(ts, torch->id);
	if (rc < 0)
		return rc;
	struct ow_resolve_skip *g = ow_array_more(ts->passed, ts->npassed, sizeof *g);
	if (!g)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	ts->passed = g;
	struct ow_resolve_skip *k = &g[ts->npassed];
	*k = (struct ow_resolve_skip){.same_as = 0};
	snprintf(k->torch, sizeof k->torch, "%s", torch->version_text);
	/* analyzer: k is ts->passed[ts->npassed], freed with the target's state */
	if (!(k->why = strdup(why)))
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	ts->npassed++;
	return 0;
}

/* Whether two passed-over torches' whys are one text but for the torch each
 * names (its version, with or without the local label). */
static bool same_but_torch(const struct ow_resolve_skip *a, const struct ow_resolve_skip *b)
{
	const char *p = a->why, *q = b->why;
	size_t na = strlen(a->torch), nb = strlen(b->torch);
	size_t pa = strcspn(a->torch, "+"), pb = strcspn(b->torch, "+");
	if (!pa || !pb)
		return !strcmp(p, q);
	while (*p && *q) {
		if (!strncmp(p, a->torch, na) && !strncmp(q, b->torch, nb))
			p += na, q += nb;
		else if (!strncmp(p, a->torch, pa) && !strncmp(q, b->torch, pb))
			p += pa, q += pb;
		else if (*p++ != *q++)
			return false;
	}
	return !*p && !*q;
}

/* " (the same for torch 2.13.0, 2.12.0)": the entries after v[i] whose why
 * is v[i]'s but for the torch, so that a long cause is said once. */
void rs_same_for(const struct ow_resolve_skip *v, size_t n, size_t i, struct ow_str *out)
{
	size_t k = 0;
	for (size_t j = i + 1; j < n; j++)
		if (v[j].why && same_but_torch(&v[i], &v[j]))
			ow_str_printf(out, "%s%s", k++ ? ", " : " (the same for torch ", v[j].torch);
	ow_str_puts(out, k ? ")" : "");
}

/* The torches the stack passed over, after those the pairing did: each
 * whose why repeats an earlier one's but for the torch points to it. */
static int add_passed(const struct rs_tstate *ts, struct ow_resolve_target *o)
{
	size_t first = o->nskipped;
	for (size_t i = 0; i < ts->npassed; i++) {
		struct ow_resolve_skip *g = ow_array_more(o->skipped, o->nskipped, sizeof *g);
		if (!g)
			return ow_err(OW_ENOMEM, "resolve: out of memory");
		o->skipped = g;
		g[o->nskipped] = ts->passed[i];
		g[o->nskipped].same_as = 0;
		for (size_t j = first; j < o->nskipped && !g[o->nskipped].same_as; j++)
			if (!g[j].same_as && same_but_torch(&g[j], &ts->passed[i]))
				g[o->nskipped].same_as = j + 1;
		if (!(g[o->nskipped++].why = strdup(ts->passed[i].why)))
			return ow_err(OW_ENOMEM, "resolve: out of memory");
	}
	return 0;
}

static int complete_set(struct rs_ctx *x, struct rs_tstate *ts, struct rs_pview *pv,
                        const struct rs_choice *ch, bool *wait)
{
	struct rs_pick roots[OW_RESOLVE_MAX_PROJECTS];
	size_t n = set_roots(x, pv, ch->torch, ch->pick, roots);
	struct ow_resolve_target *o = ts->out;
	struct rs_closure cl = {0};
	int rc = 0;
	if (!x->o->no_deps) {
		if ((rc = rs_closure(x, &ts->t, ts->variant, roots, n, &cl)) < 0)
			return rc;
		if (cl.need) {
			*wait = true;
			rs_closure_dispose(&cl);
			return 0;
		}
		if (cl.error && !cl.build_error && x->nstack) { /* nothing chosen after the last */
			rc = pass_over(ts, roots[0].c, &cl);
			rs_closure_dispose(&cl);
			ts->passes_out = ts->npassed >= RS_STACK_PASSES;
			return rc < 0 ? rc : ts->passes_out ? RS_DECIDED : RS_CHOOSE_AGAIN;
		}
		struct rs_held_in hin = {&ts->t, ts->variant, roots, n, o};
		if (!cl.error && x->nstack && (rc = rs_held_back(x, &hin, &cl, wait)) == 0 && *wait) {
			rs_closure_dispose(&cl);
			return 0;
		}
		if (rc < 0) {
			rs_closure_dispose(&cl);
			return rc;
		}
	}
	fill_versions(x, o, roots, n);
	name_variant(x, ts, pv[0].c[ch->torch]);
	o->complete = !cl.error;
	o->error = cl.error ? strdup(cl.error) : NULL;
	/* analyzer: o is ts->out, a target of the report, emptied by rs_target_reset */
	if (cl.error && (rc = ow_causes_copy(cl.causes, cl.ncauses, &o->causes)) == 0)
		o->ncauses = cl.ncauses;
	const struct rs_pick *all = x->o->no_deps || cl.error ? roots : cl.picks;
	size_t nall = x->o->no_deps || cl.error ? n : cl.n;
	for (size_t i = 0; i < nall && rc == 0; i++)
		rc = add_member(o, &all[i]);
	for (size_t i = 0; i < cl.nnotes && rc == 0; i++)
		rc = add_note(o, "%s", cl.notes[i]);
	if (rc == 0)
		rc = add_skips(x, o, pv, ch, (size_t)ch->torch);
	if (rc == 0)
		rc = add_passed(ts, o);
	rs_closure_dispose(&cl);
	return rc;
}

/* A target with no torch at all because the index has no such variant
 * folder: say that, not "no torch wheel fits". */
static int no_variant(struct rs_ctx *x, struct rs_tstate *ts)
{
	struct rs_list *l;
	int rc = rs_list_get(x, x->o->projects[0], ts->variant, false, &l);
	if (rc < 0 || l->state != -1 || (!*ts->variant && !l->unreachable && !l->absent))
		return rc < 0 ? rc : 0;
	ts->out->no_variant = !l->unreachable;
	ts->out->unreachable = l->unreachable;
	free(ts->out->error);
	/* the transfer's own cause may already say "network": one hint, not two */
	bool net = l->why && strstr(l->why, "network");
	int n = l->unreachable
	            ? asprintf(&ts->out->error, "the index could not be reached: %s%s",
	                       l->why ? l->why : "",
	                       rs_index_stored(x) ? " — offline? resolve from what the workspace holds "
	                                         "with --offline"
	                       : net ? "; check the --index-url too (the workspace holds no page of "
	                               "this index yet)"
	                             : " — check the network or the --index-url; the "
	                               "workspace holds no page of this index yet")
	            : asprintf(&ts->out->error, "%s: no such variant on this index: %s", ts->variant,
	                       l->why ? l->why : "no torch page");
	if (n < 0) {
		ts->out->error = NULL;
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	}
	return 0;
}

/* The local labels of the torches a root lists, each once, comma-separated. */
static char *labels_listed(const struct rs_list *l)
{
	struct ow_str b = {0};
	for (size_t i = 0; i < l->n; i++) {
		const char *lab = l->c[i].v.local;
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = !strcmp(l->c[j].v.local, lab);
		if (!seen)
			ow_str_printf(&b, "%s%s%s", b.n ? ", " : "", *lab ? "+" : "", *lab ? lab : "none");
	}
	if (b.err) {
		ow_str_dispose(&b);
		return NULL;
	}
	return b.p ? b.p : strdup("no torch at all");
}

/* One root read by label and no torch for this target carries it: say what
 * the index is and which labels its torches do carry. */
static int no_label(struct rs_ctx *x, struct rs_tstate *ts)
{
	struct rs_list *l;
	int rc = rs_list_get(x, x->o->projects[0], "", false, &l);
	if (rc < 0 || l->state != RS_LIST_LOADED)
		return rc < 0 ? rc : no_variant(x, ts);
	char *labels = labels_listed(l);
	free(ts->out->error);
	ts->out->error = labels ? ow_aprintf(
	        "%s: no such variant on this index: no page at %s/%s/%s/ (HTTP 404); this index "
	        "has no variant folders: it is one root (as PyPI and its mirrors are) with "
	        "every project at %s/{project}/, where a variant is the local version its "
	        "torch carries (+%s), and none of its %s wheels for this target carries it "
	        "(their labels: %s) — leave --variant/--cuda out to read it so, or use a PyTorch "
	        "variant root such as --index-url https://download.pytorch.org/whl/%s",
	        ts->label, x->o->index_url, ts->label, x->o->projects[0], x->o->index_url,
	        ts->label, x->o->projects[0], labels, ts->label) : NULL;
	free(labels);
	ts->out->no_variant = true;
	return ts->out->error ? 0 : ow_err(OW_ENOMEM, "resolve: out of memory");
}

/* No complete set among the torches: report the newest with what it lacks. */
static int incomplete(struct rs_ctx *x, struct rs_tstate *ts, struct rs_pview *pv,
                      const struct rs_choice *ch)
{
	struct ow_resolve_target *o = ts->out;
	long first = RS_NONE, pick[OW_RESOLVE_MAX_PROJECTS];
	for (size_t i = 0; i < pv[0].n && first == RS_NONE; i++)
		if (pv[0].mc[i].usable)
			first = (long)i;
	if (first == RS_NONE) {
		snprintf(o->missing, sizeof o->missing, "%s", x->o->projects[0]);
		return ts->label ? no_label(x, ts) : no_variant(x, ts);
	}
	for (size_t p = 1; p < x->o->nprojects; p++)
		pick[p - 1] = rs_match_one(pv[0].mc[first].v, pv[0].mc[first].date,
		                           pv[0].mc[first].uploaded, pv[p].mc,
		                           pv[p].n, x->o->pair == OW_PAIR_NEWEST);
	struct rs_pick roots[OW_RESOLVE_MAX_PROJECTS];
	size_t n = set_roots(x, pv, first, pick, roots);
	fill_versions(x, o, roots, n);
	name_variant(x, ts, pv[0].c[first]);
	int rc = missing_text(x, ch->missing[first], o->missing, sizeof o->missing);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = add_member(o, &roots[i]);
	return rc ? rc : add_skips(x, o, pv, ch, ch->examined);
}

/* With --date / --version and no complete set: the newest complete one. */
static int alternative(struct rs_ctx *x, struct rs_tstate *ts, struct rs_pview *pv, bool *wait)
{
	struct rs_pview all[OW_RESOLVE_MAX_PROJECTS] = {{0}};
	size_t np = x->o->nprojects;
	int rc = rs_views(x, ts, all, np, wait);
	if (rc == 0 && !*wait) {
		rs_torch_mc(x, ts, &all[0], true);
		struct rs_choice ch = {0};
		ch.missing = calloc(all[0].n + 1, sizeof *ch.missing);
		if (!ch.missing)
			rc = ow_err(OW_ENOMEM, "resolve: out of memory");
		else
			choose(x, ts, all, all[0].n, &ch);
		if (rc == 0 && ch.torch == RS_NEED)
			*wait = true;
		else if (rc == 0 && ch.torch >= 0)
			snprintf(ts->out->alternative, sizeof ts->out->alternative, "%s",
			         all[0].c[ch.torch]->version_text);
		free(ch.missing);
	}
	rs_views_free(all, np);
	(void)pv;
	return rc;
	/* analyzer: all's views were freed by rs_views_free just above */
}

int rs_decide(struct rs_ctx *x, struct rs_tstate *ts, struct rs_pview *pv, bool *wait)
{
	for (;;) {
		size_t window = ts->window < pv[0].n ? ts->window : pv[0].n;
		struct rs_choice ch = {0};
		if (!(ch.missing = calloc(window + 1, sizeof *ch.missing)))
			return ow_err(OW_ENOMEM, "resolve: out of memory");
		choose(x, ts, pv, window, &ch);
		int rc = 0;
		if (ch.torch == RS_NEED)
			*wait = true;
		else if (ch.torch == RS_NONE && window < pv[0].n) {
			ts->window *= 2;
			free(ch.missing);
			continue;
		} else if (ch.torch == RS_NONE) {
			rc = incomplete(x, ts, pv, &ch);
			if (rc == 0 && (x->o->date || x->o->version))
				rc = alternative(x, ts, pv, wait);
		} else if ((rc = check_torch(x, ts, pv[0].c[ch.torch])) == TORCH_WAIT)
			*wait = true;
		else if (rc == TORCH_OK)
			rc = complete_set(x, ts, pv, &ch, wait);
		else if (rc == TORCH_RULED_OUT)
			rc = RS_CHOOSE_AGAIN;
		free(ch.missing);
		return rc;
	}
}

/* Empty what the target says, for a step from the start. */
void rs_target_reset(struct ow_resolve_target *o)
{
	for (size_t i = 0; i < o->nmembers; i++)
		free(o->members[i].url), free(o->members[i].required_by);
	free(o->members);
	for (size_t i = 0; i < o->nnotes; i++)
		free(o->notes[i]);
	free(o->notes);
	for (size_t i = 0; i < o->nskipped; i++)
		free(o->skipped[i].why);
	free(o->skipped);
	for (size_t i = 0; i < o->nheld; i++)
		free(o->held[i].why);
	free(o->held);
	o->held = NULL;
	o->nheld = 0;
	free(o->error);
	free(o->hint);
	ow_causes_free(o->causes, o->ncauses);
	o->causes = NULL;
	o->ncauses = 0;
	o->members = NULL, o->notes = NULL, o->skipped = NULL, o->error = NULL, o->hint = NULL;
	o->nmembers = o->nnotes = o->nskipped = 0;
	o->complete = false;
	o->missing[0] = o->alternative[0] = '\0';
	o->no_variant = o->unreachable = o->not_in_workspace = o->stack_conflict = false;
}
