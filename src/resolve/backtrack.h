/* backtrack.h - a backtracking dependency resolver for one target, over a
 * provider that lists candidates and their requirements (not a public API;
 * the unit test drives it with a provider of its own).
 *
 * The search: depth-first, one project decided per level, each project's
 * candidates tried best first (the provider's order: newest first).  A
 * candidate is taken when it meets every requirement on its project so far,
 * when none of its own requirements contradicts a project already decided,
 * and when every project it requires still has a candidate left (forward
 * checking).  When a project has no candidate left, the search jumps back
 * to the most recent decision that took part in the conflict (conflict-
 * directed backjumping), not merely one level, so decisions that had
 * nothing to do with it are kept.  The next project to decide: one pinned
 * exactly (==) first, else the one required first (breadth first), so with
 * no conflict the answer is the newest of everything, as pip and uv give.
 *
 * Extras are projects of their own, as pip's resolver treats them:
 * "transformers[torch]" has the same candidates as "transformers", and its
 * candidate V requires "transformers==V" plus the requirements that the
 * extra switches on; so the extra and its base always agree.
 *
 * Requirements a provider cannot give yet (metadata not fetched) are
 * BT_PENDING: the search goes on as if that candidate required nothing, to
 * find everything else it will need in the same round, and the result says
 * `pending` — the caller fetches what its provider queued and resolves
 * again.  Deterministic: the same provider answers give the same result. */
#ifndef OW_BACKTRACK_H
#define OW_BACKTRACK_H

#include <stdbool.h>
#include <stddef.h>

#include "pep440.h"
#include "pep508.h"
#include "offwheel/resolve.h"
#include "offwheel/str.h"

#define BT_NODES_MAX 2048      /* projects and project[extra]s of one target */
#define BT_STEPS_MAX 200000    /* candidates tried before giving up */
/* What a provider may answer besides 0 (and negative errors). */
enum bt_answer {
	BT_PENDING = 1,  /* not known yet: queued; resolve again after fetching */
	BT_UNUSABLE = 2, /* this candidate cannot be used for the target (why says) */
	BT_FAIL = 3,     /* the target cannot be resolved: why says, verbatim */
};

struct bt_cand {
	const struct ow_version *v;
	const char *version_text;
	bool yanked;     /* used only when a requirement pins it exactly (PEP 592) */
	const void *ref; /* the provider's own */
};

struct bt_provider {
	/* The candidates of project `name` for the target, best first, kept
	 * valid until the resolve ends; *n = 0 when the project has none, and
	 * then *why may say why ("no page at ..."); BT_PENDING when the list is
	 * not known yet (the project is then left undecided this round). */
	int (*candidates)(void *ud, const char *name, const struct bt_cand **out, size_t *n,
	                  const char **why);
	/* The requirement lines (Requires-Dist) of candidate c of `name`, kept
	 * valid until the resolve ends; BT_PENDING when not known yet;
	 * BT_UNUSABLE with *why when c cannot be used (Requires-Python): the
	 * search takes the next candidate; BT_FAIL with *why when the search
	 * must stop (metadata refused as broken): the result's conflict. */
	int (*requires)(void *ud, const char *name, const struct bt_cand *c,
	                const char *const **lines, size_t *n, const char **why);
	/* Optional (NULL: none): when project `name` has no candidate that
	 * meets every criterion, append to out what the target lacks — a
	 * release the criteria admit that has files for other targets only. */
	int (*unfit)(void *ud, const char *name, const struct ow_specset *const *specs, size_t n,
	             struct ow_str *out);
	void *ud;
	/* Optional (NULL: none): a hint that candidate c of `name` will be
	 * asked for next, once the search went back past a release it rejected:
	 * the provider may queue its requirements with this round's.  The
	 * search names only candidates that every criterion on `name` admits at
	 * that moment, so nothing the requirements rule out is read. */
	void (*prefetch)(void *ud, const char *name, const struct bt_cand *c);
};

/* A requirement from outside: the user's (a root) or a constraint, with
 * where it came from ("requirements.txt:3", "--with"). */
struct bt_input {
	const struct ow_requirement *req;
	const char *where;
};

struct bt_opts {
	const struct ow_marker_env *env; /* the target's marker values */
	bool pre;                        /* admit pre-releases everywhere */
	size_t max_steps;                /* 0: BT_STEPS_MAX */
};

struct bt_pin {
	char *name;    /* normalized project name */
	char *extras;  /* "a,b" the extras asked for, "" when none */
	const struct bt_cand *c;
	char *required_by; /* the chain that first asked for it ("torch 2.10.0 ->
	                    * sympy 1.14.0"), or the input's `where` */
	bool input;        /* asked for by an input, not by another pin */
};

struct bt_result {
	struct bt_pin *pins; /* in the order decided */
	size_t npins;
	bool pending;   /* some requirements were not known: resolve again */
	char *conflict; /* no solution: why, as a chain a person can follow (causes,
	                 * rendered by ow_causes_render) */
	struct ow_cause *causes; /* the same as data (offwheel/resolve.h) */
	size_t ncauses;
	bool fatal;     /* conflict: the search stopped on the way (metadata refused, a
	                 * required project with no page), so another input might not
	                 * meet it; else no answer exists under these inputs */
	size_t steps;   /* candidates tried */
};

/* 0 with out->pins, or out->conflict (no solution: still 0); a negative
 * OW_E* code on an error (out of memory, a provider's failure, too many
 * steps).  Free out with bt_result_dispose either way. */
int bt_resolve(const struct bt_provider *p, const struct bt_opts *o, const struct bt_input *roots,
               size_t nroots, const struct bt_input *cons, size_t ncons, struct bt_result *out);
void bt_result_dispose(struct bt_result *r);

#endif
