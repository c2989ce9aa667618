/* resolve.h - the second stage: pick matched torch / torchvision /
 * torchaudio sets for a matrix of targets, with their dependency closure
 * (the index's habits it copes with: docs/index-quirks.md).
 *
 * A target is a variant folder × a CPython × a platform.  Its candidates are
 * the wheels the crawl recorded on {index}/{variant}/{project}/ (the variant
 * folder plus files lying in the channel root, as the real index mixes
 * them) whose tags fit the target (pip's priority: the best tag wins among
 * files of one version) and whose Requires-Python admits it.  An index
 * without variant folders (PyPI, a mirror, .../whl/cu128 itself) is one
 * root: every page at {index}/{project}/, the variant named from the torch
 * taken (see ow_resolve_opts.flat).
 *
 * Matching: torchvision and torchaudio say which torch they go with in their
 * core metadata (`Requires-Dist: torch==2.10.0.dev20251021`, `>=`, or
 * nothing).  Metadata comes from the PEP 658 .metadata files, else from the
 * wheel.  Nightly dates only bound the search (a wheel built more than two
 * days before a torch cannot pin it); the pin is the proof.  "latest" is the
 * newest torch that every requested project matches.
 *
 * Closure: the Requires-Dist of every member (and of a whole stack's
 * requirements, ow_resolve_opts.stack), markers evaluated for the target
 * (never the host), extras only when asked, dependency pages crawled on the
 * same index ({index}/{project}/), the highest versions that satisfy every
 * specifier together and have a fitting wheel; pre-releases only when asked
 * or when nothing else fits; yanked files only for an exact == pin.  A
 * backtracking resolver decides it (src/resolve/backtrack.h: newest first,
 * conflict-directed backjumping), and when nothing fits the target fails
 * with a conflict that names the chains.
 *
 * Metadata and pages are fetched in batches, one batch per round for all
 * targets together (struct ow_resolve_io: the real one uses crawl.h and
 * fetch.h; tests pass their own). */
#ifndef OW_RESOLVE_H
#define OW_RESOLVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "offwheel/crawl.h"
#include "offwheel/http.h"
#include "offwheel/store.h"
#include "offwheel/tags.h"
#include "offwheel/url.h"

#define OW_RESOLVE_MAX_PROJECTS 8
/* Bounds of the report's texts, so that none is ever cut: every project but
 * torch, comma-separated; a variant label (at most 63) + " " + a target text
 * (at most 127); "version:" + a version + ",pair:newest". */
#define OW_RESOLVE_MISSING_MAX ((OW_RESOLVE_MAX_PROJECTS - 1) * OW_NAME_MAX)
#define OW_RESOLVE_DESCRIBE_MAX 192
#define OW_RESOLVE_SELECTOR_MAX 160

/* Where pages and metadata come from.  crawl: fetch each page
 * {index}/{variant}/{project}/ (variant "" = {index}/{project}/), of any of
 * the roots, at once.  fetch_metadata:
 * make the core metadata of `ids` available (errors per file are allowed:
 * ow_resolve asks file_metadata afterwards and treats OW_ENOENT as "not
 * available").  file_metadata: as ow_file_metadata. */
struct ow_resolve_io {
	int (*crawl)(void *ud, ow_store *s, const struct ow_crawl_ref *pages, size_t n);
	int (*fetch_metadata)(void *ud, ow_store *s, const int64_t *ids, size_t n);
	int (*file_metadata)(void *ud, ow_store *s, int64_t id, char **text, size_t *len);
	/* Why pages could not be fetched this run ("GET URL: Could not resolve
	 * host ..."), "" when all were; may be NULL. */
	const char *(*fetch_error)(void *ud);
	void *ud;
	/* Why this page could not be fetched this run ("GET URL: ..."), NULL
	 * when it was not tried or could be; may be NULL (then fetch_error). */
	const char *(*page_error)(void *ud, const char *url);
};

/* The io through crawl.h and fetch.h: .metadata files where the page
 * announces them (ow_fetch_metadata), else the METADATA by HTTP range
 * requests, or pread on a local index's file (ow_fetch_range_metadata),
 * else (a server that ignores ranges) the whole wheel (ow_fetch_files).
 * `policy` and `http` must outlive the io.  `net` 0: no network at all
 * (crawl and fetch_metadata do nothing; only stored metadata is used). */
struct ow_resolve_netio {
	const struct ow_url_policy *policy;
	/* the find-links sources, as ow_resolve_opts.find_links */
	const char *const *find_links;
	size_t nfind_links;
	const struct ow_http_opts *http;
	/* for pages, .metadata files and range reads: many small transfers,
	 * each worth a round trip, run more at once (NULL: http) */
	const struct ow_http_opts *http_small;
	/* the connections those small transfers keep from one round to the
	 * next: made on first use, freed by ow_resolve_netio_clear */
	ow_http_pool *pool;
	int net;
	size_t crawled, fetched, failed; /* counters for the caller */
	size_t ranged;        /* wheels whose METADATA was read by ranges (or local reads) */
	uint64_t range_bytes; /* bytes those reads transferred (or read from the files) */
	size_t wheels;        /* whole wheels downloaded (and stored) for their METADATA */
	char *crawl_error; /* the first page that could not be fetched, and why; NULL none */
	struct ow_resolve_page_error *page_errors; /* every page that could not be, and why */
	size_t npage_errors;
	struct ow_link_refusals rejected; /* links the pages crawled on the way rejected */
	/* hosts found to ignore Range: their wheels are downloaded whole for
	 * their metadata (and kept), said once per host with what it cost */
	struct ow_resolve_norange *no_range_hosts;
	size_t n_no_range_hosts;
	/* per file whose metadata could not be had this run, the first reason
	 * (a refused range read, a failed download): what file_metadata says
	 * for it instead of "not fetched" */
	struct ow_resolve_cause *causes;
	size_t ncauses, causes_cap;
};
/* A host that answers Range requests with whole files, and what its
 * wheels' metadata cost: wheels read whole (stored, not fetched again). */
struct ow_resolve_norange {
	char *host;
	size_t files;
	uint64_t bytes;
};
struct ow_resolve_page_error {
	char *url, *detail;
};
struct ow_resolve_cause {
	int64_t file_id;
	int rc;
	char *detail;
};
void ow_resolve_io_net(struct ow_resolve_io *io, struct ow_resolve_netio *ctx);
/* Frees what the io kept in ctx (the causes); ctx can be used again. */
void ow_resolve_netio_clear(struct ow_resolve_netio *ctx);

/* How torchvision/torchaudio are paired with a torch. MATCHED: the release
 * made for it (an exact == pin), else the newest whose pin admits it. NEWEST:
 * pip's and uv's rule, the newest whose pin admits it. */
enum ow_pair_rule { OW_PAIR_MATCHED = 0, OW_PAIR_NEWEST };

/* One line of a whole stack (`-r FILE`, `-c FILE`, `--with SPEC`): a PEP 508
 * requirement, decided together with the set for every target; a
 * constraint only limits the versions of what something else requires.  A
 * requirement on torch (directly, `torch<2.12`, or through a project that
 * pins it, vllm's `torch==2.9.0`) selects which torch: a torch the stack
 * rules out is passed over for the next older one, as one a missing
 * torchvision rules out is. */
struct ow_stack_line {
	const char *line;
	const char *where; /* "requirements.txt:3", "--with" */
	bool constraint;
	/* --hash pins ("sha256:<hex>"): a file of the project is taken only
	 * when its published sha256 is one of them */
	const char *const *hashes;
	size_t nhashes;
};

struct ow_resolve_opts {
	const char *index_url; /* without trailing slash */
	const char *const *variants;
	size_t nvariants;
	/* One root (pip's --index-url): every page, members and dependencies, at
	 * {index}/{project}/ — PyPI, a mirror, a PyTorch variant folder such as
	 * .../whl/cu128.  `variants` is then one entry, the targets' variant:
	 * the folder the root is ("cu128"), or "" to name it per target from the
	 * torch taken (its +cu128 local version, else its CUDA requirements). */
	bool flat;
	/* pip's --extra-index-url: roots ({url}/{project}/) asked, in order, for
	 * a dependency the index does not have.  A project is taken from the
	 * first root that has a page for it and from no other (uv's
	 * first-index rule: an extra index cannot shadow a project of the
	 * primary); the requested projects only ever come from the index. */
	const char *const *extra_index_urls;
	size_t nextra_index_urls;
	/* pip's --find-links sources (docs/find-links.md): their files of a
	 * project ({source}/{project}/, as ow_crawl_opts.find_links records
	 * them) are candidates beside the index's, one pool as pip's, for set
	 * members and dependencies alike.  pip's --no-index: index_url is the
	 * first source (flat, variants {""}), which is then skipped here. */
	const char *const *find_links;
	size_t nfind_links;
	const struct ow_target *targets; /* pythons × platforms, crossed with variants */
	size_t ntargets;
	const char *const *projects; /* requested; torch must be first; NULL = the three */
	size_t nprojects;
	const char *const *project_extras; /* per project "a,b" asked for, "" none; NULL = none */
	const char *date;    /* "YYYYMMDD": the torch of that nightly date */
	const char *version; /* "2.10.0": the torch whose public release is that */
	bool no_deps;
	bool pre;       /* pre-releases allowed for dependencies */
	/* A dependency version with no wheel for the target may be taken as its
	 * sdist (pip's default; without it, pip's --only-binary :all:): the
	 * target builds it at install, so its build requirements join the set
	 * (role OW_ROLE_BUILD). */
	bool allow_sdist;
	/* (each sdist taken gets a target note with OW_RESOLVE_SDIST_NOTE in it) */
	bool no_store;  /* do not record sets */
	bool variants_default; /* the variants are the defaults, not the user's: one the index
	                          lacks is left out with a note instead of an incomplete
	                          target, and an index that has none of their folders is
	                          taken as one root (flat; the report says so) */
	enum ow_pair_rule pair;
	const struct ow_stack_line *stack; /* a whole stack; NULL = the set alone */
	size_t nstack;
	/* Freshness: a stored page (a member's or a dependency's) fetched
	 * max_age seconds ago or longer is revalidated (a conditional GET
	 * through io->crawl, with the round's other pages) before it is read;
	 * false: stored pages are read as they are. */
	bool revalidate;
	int64_t max_age;
	/* Only what the workspace holds: a page never crawled or metadata never
	 * read is not fetched and not passed over either; the target is
	 * incomplete with what is missing named (not_in_workspace). */
	bool offline;
	const struct ow_resolve_io *io;
};

#define OW_RESOLVE_SDIST_NOTE "ships as its sdist"

/* The default max_age of resolve and sync: a warm resolve an hour later
 * asks the server whether its pages changed (304s, in parallel). */
#define OW_RESOLVE_MAX_AGE_DEFAULT 3600

/* OW_ROLE_BUILD: needed only to build an sdist of the set on the target
 * (its [build-system] requires and their closure); on the stick, never in
 * its requirements file or lock file (pip and uv fetch build requirements
 * from the same --find-links directory themselves). */
enum ow_member_role {
	OW_ROLE_TORCH,
	OW_ROLE_VISION,
	OW_ROLE_AUDIO,
	OW_ROLE_PROJECT,
	OW_ROLE_DEP,
	OW_ROLE_BUILD
};
const char *ow_member_role_name(enum ow_member_role r);

struct ow_resolve_member {
	int64_t file_id;
	enum ow_member_role role;
	char project[OW_NAME_MAX];
	char version[OW_VER_TEXT_MAX + 1];
	char filename[OW_FILENAME_MAX + 1];
	char *url;
	char sha256[OW_SHA256_HEX]; /* published, else the stored object's, else "" */
	const char *sha256_source;  /* "published" | "stored" | NULL */
	char object[OW_SHA256_HEX]; /* the stored object; "" when not fetched (stored sets) */
	char *required_by;          /* "torch 2.10.0 -> sympy 1.14.0", NULL for the set's own */
};

/* A newer torch that could not be completed, and why. */
struct ow_resolve_skip {
	char torch[OW_VER_TEXT_MAX + 1];
	char missing[OW_RESOLVE_MISSING_MAX]; /* "torchvision,torchaudio" */
	char *why;         /* else: the stack rules it out ("no version of vllm fits: ..."),
	                    * owned and whole; NULL when missing says why */
	size_t same_as;    /* 1 + the index of an earlier entry whose why is this one's
	                    * but for the torch named (said once), 0 when none */
};

/* A project the stack names that landed below the newest release its
 * requirements admit for the target, and why that release does not fit. */
struct ow_resolve_held {
	char project[OW_NAME_MAX];
	char version[OW_VER_TEXT_MAX + 1]; /* taken */
	char newest[OW_VER_TEXT_MAX + 1];  /* passed over */
	char *why;   /* the resolver's conflict with `newest` pinned, owned */
	bool sdist;  /* a dependency on the way has only an sdist: --allow-sdist */
};

/* A conflict as data: the resolver's reasons why no version of a project
 * fits, each a cause; ow_causes_render says them as the sentence a person
 * reads (the target's error).  A conflict at depth d starts with its head
 * (no-fit, no-match, no-versions, no-page or metadata) and goes on with its
 * reasons: reason k (1, 2, ...) is the causes of depth d numbered k, the
 * first of them saying which requirement failed, the rest what it met; a
 * `with` reason is followed by the conflict found under that decision, one
 * deeper.  Reason 0 is about the conflict as a whole (its criteria, more,
 * yanked, unfit).  docs/resolving.md lists the kinds. */
enum ow_cause_kind {
	OW_CAUSE_NO_FIT,      /* head: no version of project fits; count: versions tried */
	OW_CAUSE_NO_MATCH,    /* head: no version of project meets every requirement */
	OW_CAUSE_NO_VERSIONS, /* project has no version for this target (a head, or what
	                       * a requirement met) */
	OW_CAUSE_NO_PAGE,     /* head: project (first required by `by`) has no page: detail */
	OW_CAUSE_METADATA,    /* head: `by`'s metadata cannot be used: spec the line, detail */
	OW_CAUSE_REQUIRES,    /* by requires project spec */
	OW_CAUSE_LIMITS,      /* by (a constraint) limits project to spec */
	OW_CAUSE_CHOSEN,      /* project spec (a version) is already chosen */
	OW_CAUSE_AVAILABLE,   /* only project spec ("1.0, 0.9, 0.8, ...") is available; count */
	OW_CAUSE_UNUSABLE,    /* project spec (a version) cannot be used: detail */
	OW_CAUSE_WITH,        /* with project spec (a version) chosen: the conflict below */
	OW_CAUSE_MORE,        /* count more versions fail the same way */
	OW_CAUSE_YANKED,      /* project spec (a version) is yanked: only == takes it */
	OW_CAUSE_UNFIT,       /* releases admitted with no file for the target: detail */
};
struct ow_cause {
	enum ow_cause_kind kind;
	char *project; /* "x" or "x[extra]", owned; NULL where none */
	char *spec;    /* a specifier, a version or a list, owned; NULL where none */
	char *by;      /* who asked: an input's "requirements.txt:3" or a chain, owned */
	char *detail;  /* the provider's words, owned; NULL where none */
	size_t count;
	unsigned depth;
	unsigned reason;
};
/* "no-fit", "requires", ... (the JSON's kind). */
const char *ow_cause_kind_name(enum ow_cause_kind k);
/* The sentence of causes c[0..n) (resolverender.c); *out owned. */
int ow_causes_render(const struct ow_cause *c, size_t n, char **out);
/* A copy of c[0..n) in *out (NULL when n is 0). */
int ow_causes_copy(const struct ow_cause *c, size_t n, struct ow_cause **out);
void ow_causes_free(struct ow_cause *c, size_t n);

struct ow_resolve_target {
	char describe[OW_RESOLVE_DESCRIBE_MAX]; /* "cu128 cp312-manylinux_2_28_x86_64" */
	char variant[OW_VARIANT_MAX]; /* "" when a flat root's torch did not say */
	const char *variant_from; /* "folder" (the variant's folder), "root" (the
	                           * flat root is that folder), "local-version" (the
	                           * torch's +cu128), "requirements" (its CUDA
	                           * dependencies; none: cpu), NULL before a pick */
	char python[16];    /* cp312, cp313t */
	char platform[64];  /* manylinux_2_28_x86_64 */
	bool complete;      /* every project matched and the closure resolved */
	char versions[OW_RESOLVE_MAX_PROJECTS][OW_VER_TEXT_MAX + 1]; /* per project, "" = missing */
	char missing[OW_RESOLVE_MISSING_MAX]; /* projects with no match for the chosen/newest torch */
	char alternative[OW_VER_TEXT_MAX + 1]; /* newest complete torch when incomplete, "" none */
	char *error;        /* conflict or fetch problem, NULL when none */
	struct ow_cause *causes; /* error's conflict as data, when it is one */
	size_t ncauses;
	char *hint;         /* "torch 2.15.0 needs macosx_14_0 ...; try --platform ...", NULL none */
	char **notes;       /* candidates left out (no metadata, Requires-Python, ...) */
	size_t nnotes;
	struct ow_resolve_skip *skipped; /* newer torches without a complete set */
	size_t nskipped;
	struct ow_resolve_member *members;
	size_t nmembers;
	struct ow_resolve_held *held; /* the stack's projects held back, and why */
	size_t nheld;
	int64_t set_id; /* 0 when not stored */
	bool no_variant; /* the index has no {variant}/torch/ page: error says where it looked */
	bool unreachable; /* its pages could not be fetched (network): error says why */
	bool not_in_workspace; /* offline: a page or metadata it needs was never read
	                        * into the workspace; error names them */
	bool stack_conflict;   /* the stack rules out every torch: error says why */
};

/* A project the user named (a member of role project: a stack line's, or
 * one of the requested projects past the set) that resolved to different
 * versions on different complete targets of one run (docs/resolving.md). */
struct ow_resolve_spread_version {
	char version[OW_VER_TEXT_MAX + 1];
	size_t *targets; /* indexes into the report's targets, in their order */
	size_t ntargets;
};
struct ow_resolve_spread {
	char project[OW_NAME_MAX];
	struct ow_resolve_spread_version *versions; /* newest first */
	size_t nversions;
	/* why the targets below the newest did not get it, where the candidate
	 * lists tell ("spreadx 2.0 has no wheel for cp311-manylinux_2_28_x86_64");
	 * NULL when they do not (a tie-break, another requirement) */
	char *why;
};

struct ow_resolve_report {
	char *projects[OW_RESOLVE_MAX_PROJECTS];
	size_t nprojects;
	char selector[OW_RESOLVE_SELECTOR_MAX];
	struct ow_resolve_target *targets;
	size_t ntargets;
	size_t incomplete;
	size_t rounds;        /* fetch rounds used */
	size_t metadata_read; /* metadata documents read and parsed (a .metadata
	                       * object, or a stored wheel's METADATA) */
	size_t metadata_cached; /* metadata taken parsed from the index database
	                         * (read before, by any run: no object read) */
	size_t unreachable;   /* targets whose pages could not be fetched */
	bool flat;            /* resolved as one root: the options said so, or the
	                       * default variants' folders were all missing */
	char **notes;         /* about the whole run: default variants the index lacks */
	size_t nnotes;
	/* the stored index pages the run read (members' and dependencies'), when
	 * the oldest of them was fetched (unix time, 0 when none was read), and
	 * how many were revalidated for being older than max_age */
	size_t pages_used;
	int64_t pages_oldest;
	size_t pages_revalidated;
	size_t not_in_workspace; /* targets with not_in_workspace */
	bool layout_remembered;  /* flat because the workspace knew the root as one */
	struct ow_resolve_spread *spread; /* the named projects whose versions differ */
	size_t nspread;
};

/* Resolve every variant × target.  0 when every target is complete,
 * OW_EINCOMPLETE when some are not (all are reported and stored), < 0 when
 * nothing could be done.  *r is filled in the first two cases. */
int ow_resolve(ow_store *s, const struct ow_resolve_opts *o, struct ow_resolve_report *r);
void ow_resolve_report_dispose(struct ow_resolve_report *r);
/* How target i is named in a summary: its text without the variant when
 * every target of the report has the same one ("cp311-manylinux_2_28_x86_64"),
 * else whole ("cu128 cp311-manylinux_2_28_x86_64"). */
const char *ow_resolve_target_name(const struct ow_resolve_report *r, size_t i);

/* ---- stored sets ---------------------------------------------------------- */

struct ow_set_row {
	int64_t id;
	char target[OW_RESOLVE_DESCRIBE_MAX];
	char index_url[1024];
	char selector[OW_RESOLVE_SELECTOR_MAX];
	char torch_version[OW_VER_TEXT_MAX + 1];
	bool complete;
	bool with_deps;
	char missing[OW_RESOLVE_MISSING_MAX];
	int64_t created_at, resolved_at;
	size_t nmembers;
};

/* Sets, newest first; `target` (a describe text) filters when not NULL. */
int ow_sets_list(ow_store *s, const char *target, struct ow_set_row **rows, size_t *n);
/* The members of one set (url, hash, role, required_by filled); none
 * (*m NULL, *n 0) on failure. */
int ow_set_members(ow_store *s, int64_t set_id, struct ow_resolve_member **m, size_t *n);
void ow_set_members_free(struct ow_resolve_member *m, size_t n);
/* "set:ID" (as the commands take it) -> the id and the members of that set;
 * an error that says what to write for a malformed or unknown one. */
int ow_set_ref_members(ow_store *s, const char *ref, int64_t *set_id,
                       struct ow_resolve_member **m, size_t *n);

struct ow_sets_gc_result {
	size_t removed_sets;
	size_t removed_objects; /* fetched wheels no kept set refers to */
	uint64_t freed;
};
/* Keep the `keep` most recently resolved sets of every (index, target),
 * delete the others, then remove the fetched wheels that no remaining set
 * refers to (the file rows stay, unfetched).  Store opened for writing. */
int ow_sets_gc(ow_store *s, int keep, struct ow_sets_gc_result *res);

#endif
