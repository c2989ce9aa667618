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

struct tstate {
	struct ow_target t;
	const char *variant;
	const char *label; /* one root holding several variants: the local label
	                    * (+cu126) its torch must carry, NULL for any */
	struct ow_resolve_target *out;
	size_t window;
	bool done;
	int64_t *bad_torch; /* torches whose metadata rules them out */
	size_t nbad;
	char *bad_why; /* the first torch ruled out for want of metadata, and why */
	char waits_on[OW_NAME_MAX]; /* the project it waited on last, "" none */
	struct ow_resolve_skip *passed; /* newer torches the stack ruled out */
	size_t npassed;
	/* the stack decided first (stack_first): the torch its requirements,
	 * taken newest first in their order, lead to — no newer torch is tried
	 * — and what chose it; none when the stack leaves torch free */
	bool first_done;
	bool has_first;
	struct ow_version first_torch;
	char *no_project; /* a project the stack names that no index has: the
	                   * target's error, and no torch is walked back for it */
	/* the stack alone has no answer: why (no torch can give it one, so none
	 * is tried and none is shown) */
	char *stack_error;
	/* stack_error's causes, else those of the first torch passed over */
	struct ow_cause *causes;
	size_t ncauses;
	bool passes_out; /* RS_STACK_PASSES torches passed over: older ones untried */
};

/* Torches a whole stack may pass over in one target before its conflict is
 * reported: each costs a closure (and maybe a round of metadata). */
#define RS_STACK_PASSES 8

struct pview {
	struct rs_cand **c;
	size_t n;
	struct rs_mc *mc;
	char (*pins)[256]; /* torch specifier text per candidate */
};

const char *ow_member_role_name(enum ow_member_role r)
{
	static const char *const n[] = {"torch", "torchvision", "torchaudio", "project", "dep",
	                                  "build"};
	return (unsigned)r < sizeof n / sizeof n[0] ? n[r] : "?";
}

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
static bool stack_admits_torch(const struct rs_ctx *x, const struct tstate *ts,
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

static bool is_bad(const struct tstate *ts, int64_t id)
{
	for (size_t i = 0; i < ts->nbad; i++)
		if (ts->bad_torch[i] == id)
			return true;
	return false;
}

static int mark_bad(struct tstate *ts, int64_t id)
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
static bool label_selected(const struct tstate *ts, const struct rs_cand *c)
{
	if (!ts->label)
		return true;
	if (!c->v.local[0] && !strcmp(ts->label, "cpu") && ts->t.os == OW_OS_MACOS)
		return true;
	return same_label(ts->label, c->v.local);
}

/* No newer torch than the one the stack decided first (public versions:
 * the label picks the build). */
static bool first_admits(const struct tstate *ts, const struct rs_cand *c)
{
	if (!ts->has_first)
		return true;
	struct ow_version a = c->v, b = ts->first_torch;
	a.local[0] = b.local[0] = '\0';
	return ow_pep440_cmp(&a, &b) <= 0;
}

/* Torch view: filtered by --date / --version unless `all`, and by the
 * target's label. */
static void torch_mc(struct rs_ctx *x, struct tstate *ts, struct pview *pv, bool all)
{
	size_t k = 0;
	for (size_t i = 0; i < pv->n; i++) {
		struct rs_cand *c = pv->c[i];
		if ((!all && !torch_selected(x->o, c)) || !label_selected(ts, c) ||
		    !first_admits(ts, c))
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
static void proj_mc(struct rs_ctx *x, const struct tstate *ts, struct pview *pv, uint32_t oldest,
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

static int views(struct rs_ctx *x, struct tstate *ts, struct pview *pv, size_t np, bool *wait)
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
		pv[p].pins = calloc(pv[p].n + 1, sizeof *pv[p].pins);
		if (!pv[p].mc || !pv[p].pins)
			return ow_err(OW_ENOMEM, "resolve: out of memory");
	}
	return 0;
}

static void views_free(struct pview *pv, size_t np)
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
static void choose(struct rs_ctx *x, struct tstate *ts, struct pview *pv, size_t window,
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
static size_t set_roots(const struct rs_ctx *x, struct pview *pv, long torch, const long *pick,
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

static int add_skips(const struct rs_ctx *x, struct ow_resolve_target *o, const struct pview *pv,
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
static int check_torch(struct rs_ctx *x, struct tstate *ts, const struct rs_cand *c)
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
static void name_variant(struct rs_ctx *x, struct tstate *ts, const struct rs_cand *torch)
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
static int pass_over(struct tstate *ts, const struct rs_cand *torch, const struct rs_closure *cl)
{
	const char *why = cl->error;
	if (!ts->npassed) { /* the newest torch's conflict: the one the target says */
		ow_causes_free(ts->causes, ts->ncauses);
		int rc = ow_causes_copy(cl->causes, cl->ncauses, &ts->causes);
		ts->ncauses = ts->causes ? cl->ncauses : 0;
		if (rc < 0)
			return rc;
	}
	struct ow_resolve_skip *g = ow_array_more(ts->passed, ts->npassed, sizeof *g);
	if (!g)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	ts->passed = g;
	char *text = strdup(why);
	if (!text)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	struct ow_resolve_skip *k = &g[ts->npassed++];
	snprintf(k->torch, sizeof k->torch, "%s", torch->version_text);
	k->missing[0] = '\0';
	k->why = text;
	return mark_bad(ts, torch->id);
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
static void same_for(const struct ow_resolve_skip *v, size_t n, size_t i, struct ow_str *out)
{
	size_t k = 0;
	for (size_t j = i + 1; j < n; j++)
		if (v[j].why && same_but_torch(&v[i], &v[j]))
			ow_str_printf(out, "%s%s", k++ ? ", " : " (the same for torch ", v[j].torch);
	ow_str_puts(out, k ? ")" : "");
}

/* The torches the stack passed over, after those the pairing did: each
 * whose why repeats an earlier one's but for the torch points to it. */
static int add_passed(const struct tstate *ts, struct ow_resolve_target *o)
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

/* What decide() did: an enum decision, or a negative error code. */
enum decision {
	DECIDED = 0,     /* the target is settled, or waits for pages/metadata (*wait) */
	CHOOSE_AGAIN = 1 /* the chosen torch was ruled out: views and choice again now */
};

static int complete_set(struct rs_ctx *x, struct tstate *ts, struct pview *pv,
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
			return rc < 0 ? rc : ts->passes_out ? DECIDED : CHOOSE_AGAIN;
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
static int no_variant(struct rs_ctx *x, struct tstate *ts)
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
static int no_label(struct rs_ctx *x, struct tstate *ts)
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
static int incomplete(struct rs_ctx *x, struct tstate *ts, struct pview *pv,
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
static int alternative(struct rs_ctx *x, struct tstate *ts, struct pview *pv, bool *wait)
{
	struct pview all[OW_RESOLVE_MAX_PROJECTS] = {{0}};
	size_t np = x->o->nprojects;
	int rc = views(x, ts, all, np, wait);
	if (rc == 0 && !*wait) {
		torch_mc(x, ts, &all[0], true);
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
	views_free(all, np);
	(void)pv;
	return rc;
}

static int decide(struct rs_ctx *x, struct tstate *ts, struct pview *pv, bool *wait)
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
			rc = CHOOSE_AGAIN;
		free(ch.missing);
		return rc;
	}
}

static void target_reset(struct ow_resolve_target *o)
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
static int platform_hint(struct rs_ctx *x, struct tstate *ts)
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
static int offline_gap(struct rs_ctx *x, struct tstate *ts)
{
	struct ow_resolve_target *o = ts->out;
	target_reset(o);
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
static int stack_conflict_text(const struct tstate *ts, struct ow_resolve_target *o)
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
		same_for(ts->passed, ts->npassed, 0, &also);
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
static int note_newer(struct rs_ctx *x, struct tstate *ts, const struct rs_pick *taken)
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
		if (!v[i]->yanked && label_selected(ts, v[i]) && !first_admits(ts, v[i])) {
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
static int named_missing(struct rs_ctx *x, struct tstate *ts)
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

/* The user's requirements decide first, as pip and uv decide them: newest
 * first, in the order written, torch among the others only as they require
 * it — so a project that pins torch (vllm 0.21.0: torch==2.11.0) chooses
 * the torch, instead of the newest torch walking that project back to an
 * old release that pins none.  The stack alone is resolved once per target
 * (torch as a dependency like any other); the torch it lands on bounds the
 * torches tried, and the pairing rule then takes torchvision/torchaudio.
 * A stack that fails alone, or names no torch at all, leaves torch free. */
static int stack_first(struct rs_ctx *x, struct tstate *ts, bool *wait)
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
	if (cl.error && (rc = named_missing(x, ts)) < 0) {
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
		rc = note_newer(x, ts, &cl.picks[i]);
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
static int folder_first(struct rs_ctx *x, struct tstate *ts)
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
static int step(struct rs_ctx *x, struct tstate *ts, bool *wait)
{
	size_t np = x->o->nprojects;
	int rc;
	do {
		struct pview pv[OW_RESOLVE_MAX_PROJECTS] = {{0}};
		target_reset(ts->out);
		ow_str_dispose(&x->gap);
		x->ngap = 0;
		*wait = false;
		rc = folder_first(x, ts);
		if (rc == 0)
			rc = stack_first(x, ts, wait);
		if (rc == 0 && !*wait && !ts->stack_error && !ts->no_project)
			rc = views(x, ts, pv, np, wait);
		if (rc == 0 && !*wait && !ts->stack_error && !ts->no_project) {
			torch_mc(x, ts, &pv[0], false);
			rc = decide(x, ts, pv, wait);
		}
		views_free(pv, np);
	} while (rc == CHOOSE_AGAIN);
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
		rc = stack_conflict_text(ts, o);
	if (rc == 0 && *wait && x->o->offline) {
		*wait = false;
		rc = offline_gap(x, ts);
	}
	ts->done = rc == 0 && !*wait;
	if (ts->done)
		rc = platform_hint(x, ts);
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
                        struct tstate **out)
{
	size_t n = o->nvariants * o->ntargets;
	struct tstate *ts = calloc(n + 1, sizeof *ts);
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
			ts[i] = (struct tstate){.t = o->targets[t], .variant = o->flat ? "" : label,
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
static int still_waiting(const struct rs_ctx *x, const struct tstate *ts, size_t n,
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
static int run_rounds(struct rs_ctx *x, struct tstate *ts, size_t n, struct ow_resolve_report *r)
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
		target_reset(t);
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
static void tstate_dispose(struct tstate *ts)
{
	for (size_t i = 0; i < ts->npassed; i++)
		free(ts->passed[i].why);
	free(ts->bad_torch), free(ts->bad_why), free(ts->passed), free(ts->no_project);
	free(ts->stack_error);
	ow_causes_free(ts->causes, ts->ncauses);
}

static void targets_free(struct ow_resolve_report *r, struct tstate *ts, size_t nts)
{
	for (size_t i = 0; ts && i < nts; i++)
		tstate_dispose(&ts[i]);
	free(ts);
	for (size_t i = 0; i < r->ntargets; i++)
		target_reset(&r->targets[i]);
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
                      struct tstate **ts, size_t *nts)
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
                          struct ow_resolve_report *r, struct tstate **ts, size_t *nts)
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
static void finish_report(struct rs_ctx *x, struct ow_resolve_report *r, struct tstate *ts,
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
	struct tstate *ts = NULL;
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
		if (rc == 0 && ow_http_interrupted())
			rc = ow_err(OW_EINCOMPLETE, "resolve: interrupted — nothing was recorded");
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
		target_reset(&r->targets[i]);
	free(r->targets);
	for (size_t p = 0; p < r->nprojects; p++)
		free(r->projects[p]);
	for (size_t i = 0; i < r->nnotes; i++)
		free(r->notes[i]);
	free(r->notes);
	rs_spread_free(r->spread, r->nspread);
	memset(r, 0, sizeof *r);
}
