/* test_backtrack.c - the backtracking resolver over a provider made from a
 * small text: "name version: req & req | name version | ...", candidates
 * best first in the order written; after a version "!" for metadata not
 * known yet, "~" yanked, "^" unusable for the target; a version "?" for a
 * project whose list is not known yet, "-" for one with no page at all.  The cases are the shapes real stacks take: a newest pick a
 * later requirement rules out, extras, markers, constraints, no solution,
 * and a conflict far below unrelated decisions (backjumping keeps it short). */
#include "testutil.h"

#include <string.h>

#include "backtrack.h"
#include "offwheel/error.h"
#include "offwheel/tags.h"

#define FP_PROJ 32
#define FP_CAND 8
#define FP_REQ 8

struct fcand {
	struct ow_version v;
	char vt[32];
	char req[FP_REQ][128];
	const char *reqp[FP_REQ];
	size_t nreq;
	bool pending, unusable;
};

struct fproj {
	char name[64];
	bool unknown, missing;
	struct fcand c[FP_CAND];
	struct bt_cand bc[FP_CAND];
	size_t nc;
};

struct fprov {
	struct fproj p[FP_PROJ];
	size_t np;
	unsigned asked; /* requires() calls */
	char prefetched[256]; /* "name version," for each prefetch hint */
};

static struct fproj *proj(struct fprov *f, const char *name, size_t len)
{
	for (size_t i = 0; i < f->np; i++)
		if (strlen(f->p[i].name) == len && !strncmp(f->p[i].name, name, len))
			return &f->p[i];
	assert_true(f->np < FP_PROJ);
	struct fproj *p = &f->p[f->np++];
	memset(p, 0, sizeof *p);
	memcpy(p->name, name, len);
	return p;
}

static void add_reqs(struct fcand *c, const char *s)
{
	while (s && *s) {
		while (*s == ' ')
			s++;
		size_t n = strcspn(s, "&");
		assert_true(c->nreq < FP_REQ && n < sizeof c->req[0]);
		memcpy(c->req[c->nreq], s, n);
		c->reqp[c->nreq] = c->req[c->nreq];
		c->nreq++;
		s += n + (s[n] == '&');
	}
}

/* One "name version[!][: reqs]" entry. */
static void add_entry(struct fprov *f, const char *e, size_t len)
{
	char buf[512];
	assert_true(len < sizeof buf);
	memcpy(buf, e, len);
	buf[len] = '\0';
	char *colon = strchr(buf, ':');
	if (colon)
		*colon = '\0';
	char *s = buf;
	while (*s == ' ')
		s++;
	size_t nl = strcspn(s, " ");
	struct fproj *p = proj(f, s, nl);
	char *ver = s + nl + strspn(s + nl, " ");
	assert_true(p->nc < FP_CAND);
	if (*ver == '?' || *ver == '-') {
		p->unknown = *ver == '?';
		p->missing = *ver == '-';
		return;
	}
	struct fcand *c = &p->c[p->nc];
	size_t vl = strcspn(ver, " !~^");
	c->pending = ver[vl] == '!';
	c->unusable = ver[vl] == '^';
	bool yanked = ver[vl] == '~';
	ver[vl] = '\0';
	snprintf(c->vt, sizeof c->vt, "%s", ver);
	assert_int_equal(ow_pep440_parse(&c->v, c->vt), 0);
	add_reqs(c, colon ? colon + 1 : NULL);
	p->bc[p->nc] = (struct bt_cand){&c->v, c->vt, yanked, c};
	p->nc++;
}

static void fprov_init(struct fprov *f, const char *spec)
{
	memset(f, 0, sizeof *f);
	while (*spec) {
		size_t n = strcspn(spec, "|");
		add_entry(f, spec, n);
		spec += n + (spec[n] == '|');
	}
}

static int f_candidates(void *ud, const char *name, const struct bt_cand **out, size_t *n,
                        const char **why)
{
	*why = NULL;
	struct fprov *f = ud;
	for (size_t i = 0; i < f->np; i++)
		if (!strcmp(f->p[i].name, name)) {
			*out = f->p[i].bc;
			*n = f->p[i].nc;
			*why = f->p[i].missing ? "no page at https://example.org/simple/x/ (HTTP 404)" : NULL;
			return f->p[i].unknown ? BT_PENDING : 0;
		}
	*out = NULL;
	*n = 0;
	return 0;
}

static int f_requires(void *ud, const char *name, const struct bt_cand *c,
                      const char *const **lines, size_t *n, const char **why)
{
	*why = NULL;
	struct fprov *f = ud;
	const struct fcand *fc = c->ref;
	(void)name;
	f->asked++;
	if (fc->pending)
		return BT_PENDING;
	if (fc->unusable) {
		*why = "Requires-Python '>=3.13' excludes the target";
		return BT_UNUSABLE;
	}
	*lines = fc->reqp;
	*n = fc->nreq;
	return 0;
}

static void f_prefetch(void *ud, const char *name, const struct bt_cand *c)
{
	struct fprov *f = ud;
	size_t l = strlen(f->prefetched);
	snprintf(f->prefetched + l, sizeof f->prefetched - l, "%s %s,", name, c->version_text);
}

/* What the provider knows of releases with no file for the target (the
 * real one names their tags): here, the project and how many criteria. */
static int f_unfit(void *ud, const char *name, const struct ow_specset *const *specs, size_t n,
                   struct ow_str *out)
{
	(void)ud, (void)specs;
	ow_str_printf(out, "; [unfit %s, %zu criteria]", name, n);
	return 0;
}

/* Resolve `roots` (and constraints `cons`, both "&"-separated) for
 * CPython 3.12 on Linux x86_64 against `spec`. */
struct run {
	struct fprov f;
	struct bt_result r;
	int rc;
};

static void split(const char *s, struct ow_requirement *reqs, struct bt_input *in, size_t *n)
{
	*n = 0;
	while (s && *s) {
		char line[256];
		size_t len = strcspn(s, "&");
		memcpy(line, s, len);
		line[len] = '\0';
		assert_int_equal(ow_requirement_parse(&reqs[*n], line), 0);
		in[*n] = (struct bt_input){&reqs[*n], "requirements.txt"};
		(*n)++;
		s += len + (s[len] == '&');
	}
}

static void resolve(struct run *x, const char *spec, const char *roots, const char *cons,
                    bool pre)
{
	struct ow_requirement rr[16], cr[16];
	struct bt_input ri[16], ci[16];
	size_t nr, nc;
	struct ow_target t;
	struct ow_marker_env env;
	assert_int_equal(ow_target_parse(&t, "3.12", "linux-x86_64"), 0);
	ow_marker_env_for_target(&env, &t);
	fprov_init(&x->f, spec);
	split(roots, rr, ri, &nr);
	split(cons, cr, ci, &nc);
	struct bt_provider p = {f_candidates, f_requires, f_unfit, &x->f, f_prefetch};
	struct bt_opts o = {&env, pre, 0};
	x->rc = bt_resolve(&p, &o, ri, nr, ci, nc, &x->r);
	for (size_t i = 0; i < nr; i++)
		ow_requirement_dispose(&rr[i]);
	for (size_t i = 0; i < nc; i++)
		ow_requirement_dispose(&cr[i]);
}

/* "a 1.0, b 2.0" sorted by name, extras in brackets. */
static void pins_text(const struct bt_result *r, char *out, size_t cap)
{
	const struct bt_pin *s[64];
	size_t n = r->npins;
	assert_true(n <= 64);
	for (size_t i = 0; i < n; i++)
		s[i] = &r->pins[i];
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && strcmp(s[j - 1]->name, s[j]->name) > 0; j--) {
			const struct bt_pin *t = s[j];
			s[j] = s[j - 1];
			s[j - 1] = t;
		}
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(out);
		snprintf(out + l, cap - l, "%s%s%s%s%s %s", i ? ", " : "", s[i]->name,
		         *s[i]->extras ? "[" : "", s[i]->extras, *s[i]->extras ? "]" : "",
		         s[i]->c->version_text);
	}
}

static void expect(const char *spec, const char *roots, const char *cons, const char *want)
{
	struct run x;
	char got[1024];
	resolve(&x, spec, roots, cons, false);
	assert_int_equal(x.rc, 0);
	if (x.r.conflict)
		fail_msg("no solution: %s", x.r.conflict);
	pins_text(&x.r, got, sizeof got);
	assert_string_equal(got, want);
	assert_false(x.r.pending);
	bt_result_dispose(&x.r);
}

static void test_newest_of_everything_without_conflict(void **state)
{
	(void)state;
	expect("a 2.0: b>=1 | a 1.0 | b 3.0: c | b 1.0 | c 1.1 | c 1.0", "a", NULL,
	       "a 2.0, b 3.0, c 1.1");
}

static void test_backtracks_when_a_later_requirement_rules_the_newest_out(void **state)
{
	(void)state;
	/* a 2.0 wants b>=2, c wants b<2: a goes back to 1.0 */
	expect("a 2.0: b>=2 | a 1.0: b<2 | b 2.0 | b 1.0 | c 1.0: b<2", "a&c", NULL,
	       "a 1.0, b 1.0, c 1.0");
	/* the same with the conflict one level further down */
	expect("t 3.0: m>=2 | t 2.0: m<2 | m 2.0 | m 1.5 | x 1.0: y | y 1.0: m==1.5", "t&x", NULL,
	       "m 1.5, t 2.0, x 1.0, y 1.0");
}

static void test_extras_agree_with_their_project(void **state)
{
	(void)state;
	const char *spec = "tr 2.0: tok<1 & torch; extra == \"torch\" & sp; extra == \"sentencepiece\" | "
	                   "tr 1.0: tok | tok 1.0 | tok 0.9 | torch 2.9.0 | sp 0.2";
	expect(spec, "tr[torch]", NULL, "tok 0.9, torch 2.9.0, tr[torch] 2.0");
	expect(spec, "tr[torch,sentencepiece]", NULL, "sp 0.2, tok 0.9, torch 2.9.0, tr[sentencepiece,torch] 2.0");
	/* an extra and a pin of its project that only an older version meets:
	 * tr 1.0 has no extra "torch" (pip warns and installs it), so the extra
	 * adds nothing */
	expect(spec, "tr[torch]&tr<2", NULL, "tok 1.0, tr[torch] 1.0");
}

static void test_markers_are_the_targets(void **state)
{
	(void)state;
	expect("a 1.0: win; sys_platform == \"win32\" & old; python_version < \"3.9\" & "
	       "new; python_version >= \"3.12\" | win 1.0 | old 1.0 | new 1.0",
	       "a", NULL, "a 1.0, new 1.0");
	/* a root whose marker is false for the target asks for nothing */
	expect("a 1.0", "a&b; sys_platform == \"darwin\"", NULL, "a 1.0");
}

static void test_constraints_limit_and_add_nothing(void **state)
{
	(void)state;
	expect("a 1.0: numpy | numpy 2.1 | numpy 1.26 | scipy 1.0", "a", "numpy<2&scipy<2",
	       "a 1.0, numpy 1.26");
}

static void test_pre_releases_only_when_asked_or_named(void **state)
{
	(void)state;
	expect("a 2.0rc1 | a 1.0", "a", NULL, "a 1.0");
	expect("a 2.0rc1 | a 1.0", "a>=2.0rc1", NULL, "a 2.0rc1");
}

static void test_yanked_only_when_pinned_exactly(void **state)
{
	(void)state;
	expect("a 2.0~ | a 1.0", "a", NULL, "a 1.0");
	expect("a 2.0~ | a 1.0", "a==2.0", NULL, "a 2.0");
	struct run x;
	resolve(&x, "a 2.0~ | a 1.0", "a>=2", NULL, false);
	assert_non_null(x.r.conflict);
	assert_non_null(strstr(x.r.conflict, "a 2.0 is yanked: only an exact == pin takes it"));
	bt_result_dispose(&x.r);
}

static void test_pre_releases_when_no_final_release_fits(void **state)
{
	(void)state;
	/* packaging's rule: with no final release left, a pre-release is taken */
	expect("a 3.0b1 | a 2.0", "a>2", NULL, "a 3.0b1");
}

static void test_unusable_candidates_are_passed_over(void **state)
{
	(void)state;
	expect("a 2.0^ | a 1.0", "a", NULL, "a 1.0");
	struct run x;
	resolve(&x, "a 2.0^", "a", NULL, false);
	assert_non_null(x.r.conflict);
	assert_non_null(strstr(x.r.conflict, "a 2.0: Requires-Python '>=3.13' excludes the target"));
	bt_result_dispose(&x.r);
}

static void test_a_project_without_a_page_names_the_chain(void **state)
{
	(void)state;
	struct run x;
	resolve(&x, "torch 2.10.0: filelock | filelock 3.0: gone | gone -", "torch", NULL, false);
	assert_non_null(x.r.conflict);
	print_message("%s\n", x.r.conflict);
	/* as pip would say it after its search: the project has no page */
	assert_string_equal(x.r.conflict, "gone (required by torch 2.10.0 -> filelock 3.0): no page "
	                                  "at https://example.org/simple/x/ (HTTP 404)");
	bt_result_dispose(&x.r);
	/* a list not known yet: pending, and the rest decided */
	resolve(&x, "a 1.0: later & b | later ? | b 1.0", "a", NULL, false);
	assert_true(x.r.pending);
	assert_null(x.r.conflict);
	char got[256];
	pins_text(&x.r, got, sizeof got);
	assert_string_equal(got, "a 1.0, b 1.0");
	/* the chain each pin was asked for by */
	for (size_t i = 0; i < x.r.npins; i++)
		if (!strcmp(x.r.pins[i].name, "b"))
			assert_string_equal(x.r.pins[i].required_by, "a 1.0");
	bt_result_dispose(&x.r);
}

static void test_no_solution_says_why(void **state)
{
	(void)state;
	struct run x;
	resolve(&x, "transformers 4.57.0: tokenizers<0.22 | transformers 4.56.0: tokenizers<0.21 | "
	            "tokenizers 0.22.1 | tokenizers 0.20.0",
	        "transformers&tokenizers>=0.22", NULL, false);
	assert_int_equal(x.rc, 0);
	assert_non_null(x.r.conflict);
	assert_int_equal(x.r.npins, 0);
	print_message("%s\n", x.r.conflict);
	/* the chain a person can follow: who wants what */
	assert_non_null(strstr(x.r.conflict, "no version of transformers fits"));
	assert_non_null(strstr(x.r.conflict, "transformers 4.57.0 requires tokenizers<0.22, but "
	                                     "requirements.txt requires tokenizers>=0.22"));
	assert_non_null(strstr(x.r.conflict, "transformers 4.56.0 requires tokenizers<0.21"));
	bt_result_dispose(&x.r);
	/* nothing at all for the target */
	resolve(&x, "a 1.0: gone", "a", NULL, false);
	assert_non_null(x.r.conflict);
	print_message("%s\n", x.r.conflict);
	assert_non_null(strstr(x.r.conflict, "no version of a fits: a 1.0 requires gone, which has "
	                                     "no version for this target"));
	bt_result_dispose(&x.r);
}

static void test_backjumps_over_unrelated_decisions(void **state)
{
	(void)state;
	/* twelve projects of three versions each between the decision that
	 * causes the conflict (a) and the one that meets it (z): going back one
	 * level at a time would try 3^12 combinations */
	char spec[4096] = "a 2.0: q>=2 | a 1.0: q<2 | z 1.0: q<2 | q 2.0 | q 1.0";
	char roots[512] = "a";
	for (int i = 1; i <= 12; i++) {
		size_t l = strlen(spec);
		tu_fmt(spec + l, sizeof spec - l, " | p%d 3.0 | p%d 2.0 | p%d 1.0", i, i, i);
		l = strlen(roots);
		tu_fmt(roots + l, sizeof roots - l, "&p%d", i);
	}
	strcat(roots, "&z");
	struct run x;
	resolve(&x, spec, roots, NULL, false);
	assert_int_equal(x.rc, 0);
	assert_null(x.r.conflict);
	char got[1024];
	pins_text(&x.r, got, sizeof got);
	assert_non_null(strstr(got, "a 1.0"));
	assert_non_null(strstr(got, "p7 3.0"));
	assert_non_null(strstr(got, "q 1.0"));
	assert_true(x.r.steps < 60);
	bt_result_dispose(&x.r);
}

static void test_unknown_metadata_is_pending_and_the_search_goes_on(void **state)
{
	(void)state;
	struct run x;
	resolve(&x, "a 2.0!: b | a 1.0 | c 1.0: d | d 1.0", "a&c", NULL, false);
	assert_int_equal(x.rc, 0);
	assert_true(x.r.pending);
	char got[256];
	pins_text(&x.r, got, sizeof got);
	/* a's requirements are not known yet; c's closure was found anyway */
	assert_string_equal(got, "a 2.0, c 1.0, d 1.0");
	bt_result_dispose(&x.r);
}

/* Going back through dep's releases (5.0 cannot be used), the next ones
 * are prefetched, but only those every requirement on dep admits: b rules
 * out 4.5 and 2.0, and 1.0 is below a's dep>=1.5. */
static void test_prefetch_names_only_admitted_releases(void **state)
{
	(void)state;
	struct run x;
	resolve(&x, "a 1.0: dep>=1.5 | b 1.0: dep!=4.5,!=2.0 | dep 5.0^ | dep 4.5! | dep 3.0! | "
	            "dep 2.5! | dep 2.0! | dep 1.6! | dep 1.0!", "a&b", NULL, false);
	assert_int_equal(x.rc, 0);
	assert_true(x.r.pending);
	assert_string_equal(x.f.prefetched, "dep 2.5,dep 1.6,");
	bt_result_dispose(&x.r);
}

/* An exact pin admits one release: the first one asked is the only one,
 * and nothing is prefetched beside it (torch's nvidia-nccl==X). */
static void test_an_exact_pin_prefetches_nothing(void **state)
{
	(void)state;
	struct run x;
	resolve(&x, "torch 2.0: dep==1.0 | dep 9.0! | dep 8.0! | dep 7.0! | dep 6.0! | dep 5.0! | "
	            "dep 4.0! | dep 3.0! | dep 1.0!", "torch", NULL, false);
	assert_int_equal(x.rc, 0);
	assert_true(x.r.pending);
	assert_string_equal(x.f.prefetched, "");
	bt_result_dispose(&x.r);
	/* the same releases under dep>=1.0, the newest unusable: the next are */
	resolve(&x, "torch 2.0: dep>=1.0 | dep 9.0^ | dep 8.0! | dep 7.0! | dep 6.0! | dep 5.0! | "
	            "dep 4.0! | dep 3.0! | dep 1.0!", "torch", NULL, false);
	assert_string_equal(x.f.prefetched, "dep 7.0,dep 6.0,dep 5.0,dep 4.0,dep 3.0,dep 1.0,");
	bt_result_dispose(&x.r);
}

/* A dependency's requirement that only releases for other targets meet
 * (vllm -> llguidance>=1.7, whose 1.7 wheels are manylinux_2_31): what
 * there is for the target, then what the provider knows of the others.  A
 * conflict is a proof (not fatal); a search stopped on the way is not. */
static void test_a_requirement_only_other_targets_meet_says_so(void **state)
{
	(void)state;
	struct run x;
	resolve(&x, "a 1.0: llg>=1.7 | llg 1.6.1 | llg 1.6.0", "a", NULL, false);
	assert_non_null(x.r.conflict);
	print_message("%s\n", x.r.conflict);
	assert_string_equal(x.r.conflict, "no version of a fits: a 1.0 requires llg>=1.7, but only "
	                                  "llg 1.6.1, 1.6.0 are available for this target; [unfit "
	                                  "llg, 1 criteria]; [unfit a, 1 criteria]");
	/* (a's own: the real provider says nothing of a release the target has) */
	assert_false(x.r.fatal);
	bt_result_dispose(&x.r);
	resolve(&x, "a 1.0: gone | gone -", "a", NULL, false);
	assert_non_null(x.r.conflict);
	assert_true(x.r.fatal);
	bt_result_dispose(&x.r);
}

/* A Requires-Dist that does not parse stops this target (the result's
 * conflict, fatal), not the run: the caller's other targets go on. */
static void test_bad_metadata_stops_the_target_naming_the_candidate(void **state)
{
	(void)state;
	struct run x;
	resolve(&x, "a 1.0: b>>>1", "a", NULL, false);
	assert_int_equal(x.rc, 0);
	assert_true(x.r.fatal);
	assert_non_null(x.r.conflict);
	assert_non_null(strstr(x.r.conflict, "a 1.0: its metadata cannot be used: Requires-Dist "
	                                     "'b>>>1': "));
	bt_result_dispose(&x.r);
}

/* ---- the conflict as data: kinds, not words ---------------------------- */

/* The first cause of kind k from index `from` on, NULL when none. */
static const struct ow_cause *cause_of(const struct bt_result *r, enum ow_cause_kind k,
                                       size_t from)
{
	for (size_t i = from; i < r->ncauses; i++)
		if (r->causes[i].kind == k)
			return &r->causes[i];
	return NULL;
}

/* Every conflict's sentence is its causes rendered, word for word. */
static void assert_rendered(const struct bt_result *r)
{
	char *text = NULL;
	assert_int_equal(ow_causes_render(r->causes, r->ncauses, &text), 0);
	assert_string_equal(text, r->conflict);
	free(text);
}

static void test_a_conflict_is_causes(void **state)
{
	(void)state;
	struct run x;
	resolve(&x, "transformers 4.57.0: tokenizers<0.22 | transformers 4.56.0: tokenizers<0.21 | "
	            "tokenizers 0.22.1 | tokenizers 0.20.0",
	        "transformers&tokenizers>=0.22", NULL, false);
	assert_true(x.r.ncauses >= 5);
	assert_int_equal(x.r.causes[0].kind, OW_CAUSE_NO_FIT);
	assert_string_equal(x.r.causes[0].project, "transformers");
	assert_int_equal(x.r.causes[0].count, 2);
	/* reason 1: transformers 4.57.0's requirement, and the one it met */
	const struct ow_cause *a = &x.r.causes[1], *b = &x.r.causes[2];
	assert_int_equal(a->kind, OW_CAUSE_REQUIRES);
	assert_int_equal(a->reason, 1);
	assert_string_equal(a->by, "transformers 4.57.0");
	assert_string_equal(a->project, "tokenizers");
	assert_string_equal(a->spec, "<0.22");
	assert_int_equal(b->kind, OW_CAUSE_REQUIRES);
	assert_int_equal(b->reason, 1);
	assert_string_equal(b->by, "requirements.txt");
	assert_string_equal(b->spec, ">=0.22");
	const struct ow_cause *c = cause_of(&x.r, OW_CAUSE_REQUIRES, 3);
	assert_non_null(c);
	assert_int_equal(c->reason, 2);
	assert_string_equal(c->by, "transformers 4.56.0");
	assert_rendered(&x.r);
	bt_result_dispose(&x.r);
	/* no page: one cause, the chain that asked */
	resolve(&x, "torch 2.10.0: filelock | filelock 3.0: gone | gone -", "torch", NULL, false);
	assert_int_equal(x.r.ncauses, 1);
	assert_int_equal(x.r.causes[0].kind, OW_CAUSE_NO_PAGE);
	assert_string_equal(x.r.causes[0].project, "gone");
	assert_string_equal(x.r.causes[0].by, "torch 2.10.0 -> filelock 3.0");
	assert_non_null(strstr(x.r.causes[0].detail, "HTTP 404"));
	assert_rendered(&x.r);
	bt_result_dispose(&x.r);
}

static void test_each_kind_of_cause(void **state)
{
	(void)state;
	struct run x;
	resolve(&x, "a 2.0~ | a 1.0", "a>=2", NULL, false);
	assert_int_equal(x.r.causes[0].kind, OW_CAUSE_NO_MATCH);
	const struct ow_cause *y = cause_of(&x.r, OW_CAUSE_YANKED, 0);
	assert_non_null(y);
	assert_string_equal(y->spec, "2.0");
	assert_rendered(&x.r);
	bt_result_dispose(&x.r);
	resolve(&x, "a 2.0^", "a", NULL, false);
	const struct ow_cause *u = cause_of(&x.r, OW_CAUSE_UNUSABLE, 0);
	assert_non_null(u);
	assert_string_equal(u->project, "a");
	assert_string_equal(u->spec, "2.0");
	assert_non_null(strstr(u->detail, "Requires-Python"));
	bt_result_dispose(&x.r);
	resolve(&x, "a 1.0: llg>=1.7 | llg 1.6.1 | llg 1.6.0", "a", NULL, false);
	const struct ow_cause *v = cause_of(&x.r, OW_CAUSE_AVAILABLE, 0);
	assert_non_null(v);
	assert_int_equal(v->count, 2);
	assert_string_equal(v->spec, "1.6.1, 1.6.0");
	const struct ow_cause *f = cause_of(&x.r, OW_CAUSE_UNFIT, 0);
	assert_non_null(f);
	assert_string_equal(f->detail, "[unfit llg, 1 criteria]"); /* the "; " is the renderer's */
	assert_rendered(&x.r);
	bt_result_dispose(&x.r);
	resolve(&x, "a 1.0: gone", "a", NULL, false);
	assert_non_null(cause_of(&x.r, OW_CAUSE_NO_VERSIONS, 1));
	bt_result_dispose(&x.r);
	resolve(&x, "a 1.0: b>>>1", "a", NULL, false);
	assert_int_equal(x.r.ncauses, 1);
	assert_int_equal(x.r.causes[0].kind, OW_CAUSE_METADATA);
	assert_string_equal(x.r.causes[0].by, "a 1.0");
	assert_string_equal(x.r.causes[0].spec, "b>>>1");
	assert_rendered(&x.r);
	bt_result_dispose(&x.r);
	/* a pin a later requirement misses: chosen */
	resolve(&x, "a 1.0: c==1.0 | b 1.0: c==2.0 | c 2.0 | c 1.0", "b&a", NULL, false);
	const struct ow_cause *ch = cause_of(&x.r, OW_CAUSE_CHOSEN, 0);
	assert_non_null(ch);
	assert_string_equal(ch->project, "c");
	assert_string_equal(ch->spec, "2.0");
	assert_rendered(&x.r);
	bt_result_dispose(&x.r);
	/* five versions fail: four said, then how many more */
	resolve(&x, "a 5.0: z | a 4.0: z | a 3.0: z | a 2.0: z | a 1.0: z", "a", NULL, false);
	const struct ow_cause *m = cause_of(&x.r, OW_CAUSE_MORE, 0);
	assert_non_null(m);
	assert_int_equal(m->count, 1);
	assert_int_equal(m->reason, 0);
	assert_rendered(&x.r);
	bt_result_dispose(&x.r);
}

/* A conflict found under a decision nests under a `with`, one deeper and
 * whole: the deeper text is longer than the 300 bytes once kept. */
static void test_a_deeper_conflict_nests_whole(void **state)
{
	(void)state;
	char spec[2048];
	const char *b = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
	const char *c = "ccccccccccccccccccccccccccccccccccccccccccccccccccccccccc";
	tu_fmt(spec, sizeof spec, "a 2.0: %s | a 1.0: %s | %s 3.0: %s>=9 | %s 2.0: %s>=8 | "
	       "%s 1.0: %s>=7 | %s 1.0", b, b, b, c, b, c, b, c, c);
	struct run x;
	resolve(&x, spec, "a", NULL, false);
	assert_non_null(x.r.conflict);
	print_message("%s\n", x.r.conflict);
	assert_int_equal(x.r.causes[0].kind, OW_CAUSE_NO_FIT);
	assert_string_equal(x.r.causes[0].project, "a");
	const struct ow_cause *w = &x.r.causes[1];
	assert_int_equal(w->kind, OW_CAUSE_WITH);
	assert_string_equal(w->spec, "2.0");
	assert_int_equal(w->depth, 0);
	assert_int_equal(w->reason, 1);
	assert_int_equal(x.r.causes[2].kind, OW_CAUSE_NO_FIT);
	assert_string_equal(x.r.causes[2].project, b);
	assert_int_equal(x.r.causes[2].depth, 1);
	/* the second with, and the deeper conflict's last reason said whole */
	const struct ow_cause *w2 = cause_of(&x.r, OW_CAUSE_WITH, 2);
	assert_non_null(w2);
	assert_string_equal(w2->spec, "1.0");
	assert_int_equal(w2->reason, 2);
	char tail[512];
	tu_fmt(tail, sizeof tail, "a 1.0 -> %s 1.0 requires %s>=7, but only %s 1.0 is available for this "
	       "target; [unfit %s, 1 criteria]", b, c, c, c);
	assert_true(strlen(x.r.conflict) > 600);
	assert_non_null(strstr(x.r.conflict, tail));
	assert_rendered(&x.r);
	bt_result_dispose(&x.r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_newest_of_everything_without_conflict),
		cmocka_unit_test(test_a_requirement_only_other_targets_meet_says_so),
		cmocka_unit_test(test_backtracks_when_a_later_requirement_rules_the_newest_out),
		cmocka_unit_test(test_extras_agree_with_their_project),
		cmocka_unit_test(test_markers_are_the_targets),
		cmocka_unit_test(test_constraints_limit_and_add_nothing),
		cmocka_unit_test(test_pre_releases_only_when_asked_or_named),
		cmocka_unit_test(test_yanked_only_when_pinned_exactly),
		cmocka_unit_test(test_pre_releases_when_no_final_release_fits),
		cmocka_unit_test(test_unusable_candidates_are_passed_over),
		cmocka_unit_test(test_a_project_without_a_page_names_the_chain),
		cmocka_unit_test(test_no_solution_says_why),
		cmocka_unit_test(test_backjumps_over_unrelated_decisions),
		cmocka_unit_test(test_unknown_metadata_is_pending_and_the_search_goes_on),
		cmocka_unit_test(test_bad_metadata_stops_the_target_naming_the_candidate),
		cmocka_unit_test(test_prefetch_names_only_admitted_releases),
		cmocka_unit_test(test_an_exact_pin_prefetches_nothing),
		cmocka_unit_test(test_a_conflict_is_causes),
		cmocka_unit_test(test_each_kind_of_cause),
		cmocka_unit_test(test_a_deeper_conflict_nests_whole),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
