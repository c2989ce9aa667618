/* resolveint.h - what the resolve files share (not a public API; the unit
 * test includes it to reach the pure matching logic). */
#ifndef OW_RESOLVEINT_H
#define OW_RESOLVEINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pep440.h"
#include "pep508.h"
#include "offwheel/str.h"
#include "offwheel/resolve.h"

/* ---- set matching (resolveset.c), pure ------------------------------------- */

/* A candidate wheel of torchvision / torchaudio (or a torch) as the matcher
 * sees it: the best-tagged file of one version for the target. */
struct rs_mc {
	const struct ow_version *v;
	uint32_t date; /* nightly date YYYYMMDD from .devYYYYMMDD, 0 when none */
	int meta;      /* enum rs_meta_state */
	const char *pin; /* its Requires-Dist torch specifier, NULL when unpinned */
	bool usable;   /* Requires-Python and metadata admit the target */
	uint32_t uploaded; /* YYYYMMDD the index says it was uploaded (a torch: the
	                    * first file of its version), 0 when it does not say */
};

/* The nightly date of a version (.devYYYYMMDD), 0 when it has none. */
uint32_t rs_version_date(const struct ow_version *v);
/* Whether a candidate of date `cd` can go with a torch of date `td`: dates
 * bound the search, a wheel built more than two days before torch cannot
 * pin it.  Undated on either side: always in scope. */
bool rs_in_scope(uint32_t td, uint32_t cd);

enum { RS_NEED = -2, RS_NONE = -1 };
/* The candidate of cs[0..n) (newest first) that goes with torch t: an exact
 * == pin first, else the newest whose pin admits t (unpinned admits all).
 * RS_NONE when none does, RS_NEED when a candidate in scope is not known
 * yet and could change the answer (nothing is decided then): one newer than
 * the answer so far, or one that could still pin t exactly.  A candidate
 * uploaded more than RS_PIN_DAYS days before torch (tu, the upload day of
 * torch's version; 0 unknown) cannot pin it exactly: no release pins a
 * torch that did not exist yet.  `newest`: pip's rule instead, the newest
 * whose pin admits t, exact or not. */
#define RS_PIN_DAYS 7
long rs_match_one(const struct ow_version *t, uint32_t td, uint32_t tu, const struct rs_mc *cs,
                  size_t n, bool newest);
/* "2026-10-28T15:21:34Z" -> 20261028; 0 for NULL or another shape. */
uint32_t rs_upload_day(const char *iso);

struct rs_choice {
	long torch;                           /* index of the chosen torch, RS_NONE, RS_NEED */
	long pick[OW_RESOLVE_MAX_PROJECTS];   /* per other project, for the chosen torch */
	size_t examined;                      /* torches looked at (newest first) */
	uint32_t *missing; /* caller's array of `window`: per examined torch, bit p = projs[p] missing */
};
/* Walk torches[0..window) newest first; the first one every project
 * matches is chosen.  Unusable torches are passed over (missing = 0). */
void rs_choose(const struct rs_mc *torches, size_t window, const struct rs_mc *const *projs,
               const size_t *nprojs, size_t np, bool newest, struct rs_choice *out);

/* ---- dates --------------------------------------------------------------- */
long rs_day_number(uint32_t yyyymmdd);

/* ---- candidates and metadata (resolvecand.c) ------------------------------- */

/* A wheel's build tag (PEP 427: digits then an optional string), compared
 * as pip does: (number, rest); none sorts below every tag. */
struct rs_build {
	long num; /* -1 when the file has no build tag */
	char rest[32];
};
void rs_build_parse(const char *tag, struct rs_build *b);
int rs_build_cmp(const struct rs_build *a, const struct rs_build *b);

struct rs_cand {
	int64_t id;
	char *filename, *url, *version_text, *sha256, *object_sha256, *requires_python;
	struct ow_version v;
	size_t tag; /* index into the list's tag triples */
	struct rs_build build;
	bool yanked, has_metadata;
	bool sdist; /* a source distribution (kind 'sdist'): its tags are empty */
	uint32_t date;
	uint32_t uploaded; /* YYYYMMDD of the index's upload-time, 0 none */
};

/* The files of one project listed on {index}/{variant}/{project}/ (variant
 * folder and root) or, for dependencies, the first of
 * {index}/{variant}/{project}/ and {index}/{project}/ that exists. */
/* A project's candidate list: loaded, its page not crawled yet (sync crawls
 * it and resolves again), or no such project on the index. */
enum rs_list_state { RS_LIST_MISSING = -1, RS_LIST_NOT_CRAWLED = 0, RS_LIST_LOADED = 1 };
/* A file's metadata: parsed, not available (no .metadata and the wheel
 * could not be read), or queued for this round's fetch. */
enum rs_meta_state { RS_META_NONE = -1, RS_META_QUEUED = 0, RS_META_PARSED = 1 };

struct rs_list {
	char *project, *variant;
	bool dep;  /* a dependency: page {index}/{project}/, files of the root or the variant */
	int state; /* enum rs_list_state */
	struct rs_cand *c;
	size_t n;
	char **tags; /* 3 per triple: python, abi, platform */
	size_t ntags;
	char *why;   /* state -1: "no page at ... (HTTP 404) ..." */
	bool unreachable; /* state -1 because the page could not be fetched, not a 404 */
	bool absent;      /* state -1 because offline the workspace has no such page */
};

struct rs_meta {
	int64_t id;
	int state; /* enum rs_meta_state */
	size_t queued; /* round number when queued for fetching */
	char *name, *requires_python;
	char **reqs;
	size_t nreqs;
	char *why; /* state -1: why the metadata could not be used */
	/* an sdist's: what building it needs, and whether its PKG-INFO leaves
	 * the dependencies to the build (PEP 643) */
	char **build;
	size_t nbuild;
	bool deps_dynamic;
};

/* A stack line parsed once (ow_resolve_opts.stack). */
struct rs_stack_req {
	struct ow_requirement req;
	const char *where;
	bool constraint;
	const char *const *hashes; /* the line's --hash pins */
	size_t nhashes;
};

struct rs_ctx {
	ow_store *s;
	const struct ow_resolve_opts *o;
	struct rs_stack_req *stack; /* o->stack parsed */
	size_t nstack;
	struct rs_list *lists;
	size_t nlists;
	struct rs_meta *meta; /* open addressing on id */
	size_t meta_cap, meta_count;
	int64_t *need; /* metadata to fetch this round */
	size_t nneed, need_cap;
	const char **crawl_r;      /* pages to crawl this round: root (the index or an
	                            * extra index, owned by the options), */
	char **crawl_v, **crawl_p; /* variant folder and project */
	size_t ncrawl, crawl_done; /* [0, crawl_done) were tried already */
	size_t round;
	size_t metadata_read;   /* documents parsed (a .metadata object, a wheel's METADATA) */
	size_t metadata_cached; /* taken parsed from the index database */
	int64_t now;            /* the run's start, for the pages' ages */
	struct rs_page_use *used; /* stored pages read, each once */
	size_t nused;
	char **stale; /* pages queued for revalidation, each once */
	size_t nstale;
	char waits_on[OW_NAME_MAX]; /* a project the target being stepped waits on, "" none */
	struct ow_str gap; /* offline: what the target being stepped lacks */
	size_t ngap;
};

struct rs_page_use {
	char *url;
	int64_t fetched_at;
};

/* The candidate list of (project, variant), loading it on first use.
 * NULL only on an error; check ->state (0 means: page asked for crawl). */
int rs_list_get(struct rs_ctx *x, const char *project, const char *variant, bool dep,
                struct rs_list **out);
/* The best-tagged usable file of every version for the target, newest first
 * (yanked files kept, flagged; the caller decides). *out is malloc'd. */
int rs_view(struct rs_ctx *x, const struct rs_list *l, const struct ow_target *t,
            struct rs_cand ***out, size_t *n);
/* Metadata of a file: NULL when not fetched yet (the id is queued for the
 * next round, once); state -1 when it could not be had. */
const struct rs_meta *rs_meta_get(struct rs_ctx *x, const struct rs_cand *c);
/* The same without queuing: what the store already has, NULL otherwise. */
const struct rs_meta *rs_meta_peek(struct rs_ctx *x, const struct rs_cand *c);
/* The target's Python as a version ("3.12.0") and whether a Requires-Python
 * text admits it (NULL or unparsable text: admitted). */
bool rs_python_ok(const struct ow_target *t, const char *requires_python);
/* Why no file of release v of list l is for target t, appended to out:
 * "it has only an sdist (...)", "its Requires-Python '<3.11' excludes this
 * target's Python 3.12", "its wheels are for manylinux_2_31_x86_64, not
 * this target's manylinux_2_28_x86_64; --platform manylinux_2_31_x86_64
 * would take it (...)" (resolveunfit.c).  0, or out->err / an error. */
int rs_unfit_why(const struct rs_list *l, const struct ow_version *v, const struct ow_target *t,
                 struct ow_str *out);
/* Whether a project, under any spelling (PEP 503), is taken from --index-url
 * only, never from an extra index: torch, torchvision, torchaudio and every
 * requested project, also when it comes as someone's dependency. */
bool rs_index_only(const struct ow_resolve_opts *o, const char *project);
/* Queue a crawl of {root}/{variant}/{project}/ (variant "" = {root}/{project}/),
 * once per run: 1 when it was tried already (and the page is still not there). */
int rs_need_crawl(struct rs_ctx *x, const char *root, const char *variant, const char *project);
/* Run the queued crawls and metadata fetches; forget lists that were not
 * crawled so they are loaded again. */
int rs_round(struct rs_ctx *x);
/* Offline: note what the target being stepped needs and the workspace lacks
 * (kept in x->gap, the first few, each once). */
int rs_note_gap(struct rs_ctx *x, const char *fmt, ...) OW_PRINTF(2, 3);
/* Whether the workspace holds pages of the index (--offline has something
 * to read). */
bool rs_index_stored(struct rs_ctx *x);
/* The oldest fetch time of the pages used, 0 when none. */
int64_t rs_pages_oldest(const struct rs_ctx *x);
void rs_ctx_dispose(struct rs_ctx *x);

/* ---- closure (resolvebt.c) ------------------------------------------------ */

struct rs_pick {
	const struct rs_cand *c;
	char project[OW_NAME_MAX];
	char *required_by; /* chain, NULL for roots */
	enum ow_member_role role;
	const char *extras; /* roots: the extras asked for, "a,b" (NULL none) */
};

struct rs_closure {
	struct rs_pick *picks;
	size_t n;
	char *error; /* conflict text, NULL when none */
	struct ow_cause *causes; /* the resolver's conflict in error, as data */
	size_t ncauses;
	bool need;   /* something was queued: run again after the round */
	bool build_error; /* error: an sdist's build requirements, not the stack */
	bool fatal;       /* error: the search stopped on the way (bt_result.fatal) */
	char **notes; /* for the target: the sdists it builds */
	size_t nnotes;
};

/* Resolve the closure of the roots (already chosen, with their roles). */
int rs_closure(struct rs_ctx *x, const struct ow_target *t, const char *variant,
               const struct rs_pick *roots, size_t nroots, struct rs_closure *out);
void rs_closure_dispose(struct rs_closure *c);

/* A target's set as rs_held_back needs it: the roots its closure had. */
struct rs_held_in {
	const struct ow_target *t;
	const char *variant;
	const struct rs_pick *roots;
	size_t nroots;
	struct ow_resolve_target *out; /* gets o->held */
};
/* Every project a stack line names that closure cl took below the newest
 * release the lines admit for the target: resolved again with that one
 * pinned, and the conflict kept as why (resolveheld.c).  *wait when
 * metadata was queued. */
int rs_held_back(struct rs_ctx *x, const struct rs_held_in *in, const struct rs_closure *cl,
                 bool *wait);

/* ---- one stack across the matrix (resolvesummary.c) ------------------------- */

/* r->spread: the projects the user named whose versions differ between the
 * complete targets, newest first, with why where the lists the run loaded
 * tell (call before x is disposed, after the targets are final). */
int rs_spread(struct rs_ctx *x, struct ow_resolve_report *r);
void rs_spread_free(struct ow_resolve_spread *sp, size_t n);

/* ---- one target as the driver steps it (resolve.c, resolvepair.c,
 * resolvehint.c) ------------------------------------------------------------ */

/* A target's state across the rounds. */
struct rs_tstate {
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

struct rs_pview {
	struct rs_cand **c;
	size_t n;
	struct rs_mc *mc;
	char (*pins)[256]; /* torch specifier text per candidate */
};

/* What rs_decide() did: an enum rs_decision, or a negative error code. */
enum rs_decision {
	RS_DECIDED = 0,     /* the target is settled, or waits for pages/metadata (*wait) */
	RS_CHOOSE_AGAIN = 1 /* the chosen torch was ruled out: views and choice again now */
};

/* ---- torch pairing (resolvepair.c) ---------------------------------------- */
/* The candidate views of the target's projects (torch first); *wait when a
 * page is not known yet. */
int rs_views(struct rs_ctx *x, struct rs_tstate *ts, struct rs_pview *pv, size_t np, bool *wait);
void rs_views_free(struct rs_pview *pv, size_t np);
/* Torch view: filtered by --date / --version unless `all`, and by the
 * target's label. */
void rs_torch_mc(struct rs_ctx *x, struct rs_tstate *ts, struct rs_pview *pv, bool all);
/* Choose the torch and its pair, complete the set: an enum rs_decision. */
int rs_decide(struct rs_ctx *x, struct rs_tstate *ts, struct rs_pview *pv, bool *wait);
/* " (the same for torch 2.13.0, 2.12.0)": the entries after v[i] whose why
 * is v[i]'s but for the torch. */
void rs_same_for(const struct ow_resolve_skip *v, size_t n, size_t i, struct ow_str *out);
/* On one root read by label: whether torch c is built for the target's
 * variant (PyTorch's macOS wheels are its cpu build and carry no label). */
bool rs_label_selected(const struct rs_tstate *ts, const struct rs_cand *c);
/* Whether c is no newer than the torch the stack decided first (public
 * versions: the label picks the build). */
bool rs_first_admits(const struct rs_tstate *ts, const struct rs_cand *c);
/* Empty what the target says, for a step from the start. */
void rs_target_reset(struct ow_resolve_target *o);

/* ---- hint texts (resolvehint.c) -------------------------------------------- */
/* The --platform that takes a newer torch than the one taken (o->hint). */
int rs_platform_hint(struct rs_ctx *x, struct rs_tstate *ts);
/* Offline: the page or metadata the target waits for, never read. */
int rs_offline_gap(struct rs_ctx *x, struct rs_tstate *ts);
/* No set for the stack: o->error (and its causes) say why. */
int rs_stack_conflict_text(const struct rs_tstate *ts, struct ow_resolve_target *o);
/* The newest torch above the one the stack decided, passed over. */
int rs_note_newer(struct rs_ctx *x, struct rs_tstate *ts, const struct rs_pick *taken);
/* A project the stack names that no index has: ts->no_project. */
int rs_named_missing(struct rs_ctx *x, struct rs_tstate *ts);

/* ---- storage (resolvedb.c) ------------------------------------------------ */
int rs_store_target(ow_store *s, const char *index_url, const char *selector, bool with_deps,
                    struct ow_resolve_target *t);

#endif
