/* fetch.h - downloads into the verified store (docs/workspace.md).
 *
 * Files recorded by the crawl are downloaded in parallel through the http
 * engine, streamed into HOME/tmp/part-* while hashed, and published only
 * when they verify:
 *   - a published #sha256 must match, else the bytes are discarded;
 *   - without one (the nightly channel), the wheel must pass the strict zip
 *     validation, every RECORD hash and size, METADATA name/version equal to
 *     the file name, and the page's core-metadata hash where given; then its
 *     own hash is pinned (trust "record-pinned").
 * A partial download survives a crash: the next run re-hashes the bytes on
 * disk and asks for the rest (the resume rule): with a plain Range when the
 * file's sha256 is known (published, or pinned by an earlier fetch) — the
 * final hash decides, and a resumed file that does not match is downloaded
 * once more from zero; else with Range + If-Range when the server gave a
 * validator; else not at all. */
#ifndef OW_FETCH_H
#define OW_FETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "offwheel/common.h"
#include "offwheel/http.h"
#include "offwheel/store.h"
#include "offwheel/url.h"

#define OW_TRUST_PUBLISHED "published-hash"
#define OW_TRUST_PINNED "record-pinned"
#define OW_FETCH_DEFAULT_CAP ((uint64_t)8 << 30) /* Windows CUDA wheels reach 3.5 GB */
#define OW_METADATA_CAP ((size_t)16 << 20)

struct ow_fetch_opts {
	const struct ow_url_policy *policy; /* every hop is checked against it */
	const struct ow_http_opts *http;    /* NULL: defaults */
	uint64_t max_size;                  /* per file; 0 = OW_FETCH_DEFAULT_CAP */
	bool recheck; /* re-hash a stored object before trusting it (fetch --force) */
};

enum ow_fetch_outcome {
	OW_FETCH_DONE,     /* downloaded and verified now */
	OW_FETCH_HAD,      /* already in the store, verified before */
	OW_FETCH_REJECTED, /* downloaded but failed verification: not stored */
	OW_FETCH_FAILED    /* could not be downloaded (partial kept for resume) */
};

/* What became of bytes held from before: a partial an earlier run left, or
 * a transfer of this run that broke off. */
enum ow_fetch_resume {
	OW_FETCH_RESUME_NONE,      /* nothing held, or nothing to say */
	OW_FETCH_RESUMED,          /* continued at resumed_from (resume_basis) */
	OW_FETCH_RESUME_REFUSED,   /* a partial not resumed: no known sha256 and
	                            * no validator to judge its bytes by */
	OW_FETCH_RESUME_IGNORED,   /* asked to continue, the server sent the
	                            * whole file (or not the range asked for):
	                            * downloaded from zero */
	OW_FETCH_RESUME_DISCARDED  /* continued, but the whole did not match its
	                            * sha256: downloaded once more from zero */
};

/* What vouched for the bytes a resume continued. */
enum ow_fetch_resume_basis {
	OW_FETCH_BASIS_NONE,
	OW_FETCH_BASIS_IF_RANGE,  /* the server's validator (If-Range) */
	OW_FETCH_BASIS_PUBLISHED, /* a plain Range; the published sha256 decides */
	OW_FETCH_BASIS_PINNED     /* a plain Range; the pinned sha256 decides */
};

struct ow_fetch_item {
	int64_t file_id;
	char filename[256];
	char *url;         /* owned, whole (an index may list URLs up to OW_URL_MAX_LEN);
	                    * NULL when the file's row could not be read */
	enum ow_fetch_outcome outcome;
	int rc;
	uint64_t bytes;    /* size of the verified file */
	uint64_t received; /* bytes that came over the network this run */
	int resumed;       /* the bytes stored continued bytes held before */
	uint64_t partial;  /* bytes of a partial an earlier run left (0 none) */
	uint64_t resumed_from; /* resumed: the offset it continued at */
	enum ow_fetch_resume resume;
	enum ow_fetch_resume_basis resume_basis;
	char validator[256]; /* OW_FETCH_BASIS_IF_RANGE: the validator sent */
	int restarted;     /* bytes held were discarded and downloaded again */
	bool no_range; /* range metadata: the server does not serve ranges (or the
	               * URL is not http(s)): read the whole wheel instead */
	bool whole;    /* range metadata: the server answered the first range with
	               * the whole wheel, which was taken (verified, stored as
	               * the file's object when the outcome is DONE) */
	int meta_replaced; /* the wheel's own METADATA was not what range requests
	                    * had given: the wheel's replaced it, and the sets
	                    * resolved with it are marked (OW_SET_META_WRONG) */
	char sha256[OW_SHA256_HEX];
	const char *trust; /* OW_TRUST_* or NULL */
	char *detail;      /* why it was rejected or failed; NULL none (ow_fetch_item_detail) */
};

/* An item's detail, "" when it has none. */
static inline const char *ow_fetch_item_detail(const struct ow_fetch_item *it)
{
	return it->detail ? it->detail : "";
}

struct ow_fetch_report {
	struct ow_fetch_item *items;
	size_t n;
	size_t done, had, rejected, failed;
	size_t no_range; /* range metadata: items flagged no_range (not in failed) */
	size_t whole;    /* range metadata: wheels sent whole and stored (in done) */
	uint64_t whole_bytes; /* ... the bytes they brought (in received) */
	size_t meta_replaced; /* items with meta_replaced */
	uint64_t received;
	double seconds;
};

/* The file row an item names: for a URL its row; for a wheel file name the
 * one row to download it from when several URLs have it (the same file on
 * two hosts is one download): one with a published hash first, then one
 * still listed, then the oldest.  *ids is malloc'd and *n is 1; OW_ENOENT
 * (with a hint) when nothing matches. */
int ow_fetch_lookup(ow_store *s, const char *item, int64_t **ids, size_t *n);

/* Download and verify the wheels `ids`.  0 when all are in the store,
 * OW_EVERIFY when some were rejected, OW_EINCOMPLETE when some could not be
 * downloaded, OW_EINTERRUPTED when the process was interrupted (ow_interrupt:
 * partials kept for a resume); the rest is stored either way, and *r tells
 * per file. */
int ow_fetch_files(ow_store *s, const struct ow_fetch_opts *o, const int64_t *ids, size_t n,
                   struct ow_fetch_report *r);
/* Download the PEP 658 metadata files of `ids` (those whose page announced
 * one), verify each against the published core-metadata hash, store them as
 * objects and record files.meta_object.  Same return rules. */
int ow_fetch_metadata(ow_store *s, const struct ow_fetch_opts *o, const int64_t *ids, size_t n,
                      struct ow_fetch_report *r);
/* Read the METADATA of the wheels `ids` with HTTP range requests (the
 * zip's tail, its central directory if the tail lacks it, the METADATA
 * member; fetchrange.c) through the strict checks of rangemeta.h, and keep
 * it parsed (ow_file_meta_record, source OW_META_RANGE).  Files with a
 * .metadata, kept metadata or a stored wheel are passed over (HAD).  Where
 * a server answers the first range with the whole file (HTTP 200: it does
 * not serve ranges), that answer is taken as a download: streamed through
 * the hash into the workspace's tmp/, verified as ow_fetch_files verifies,
 * and stored as the file's object (flagged no_range and whole; its METADATA
 * is then read from the stored wheel, and fetch finds it stored).  One that
 * could not be completed stays flagged no_range, FAILED, for the caller to
 * download again (its partial kept for a resume).  A file: URL (a local
 * index) is read the same way with pread on the file, its size from fstat
 * (received counts the bytes read); one that is a symlink is flagged
 * no_range.  Returns as ow_fetch_files, the no_range items not counted as
 * failures. */
int ow_fetch_range_metadata(ow_store *s, const struct ow_fetch_opts *o, const int64_t *ids,
                            size_t n, struct ow_fetch_report *r);
/* The start of sets.missing for a set resolved from metadata that the
 * wheel's own METADATA later contradicted: incomplete, and export refuses
 * it until its target is resolved again. */
#define OW_SET_META_WRONG "resolved from wrong metadata: "

/* A whole wheel just verified (`fd`, `size` bytes) whose metadata was read
 * by range requests before (bytes no hash covers): its own METADATA must be
 * the same.  0 when it is (or there is nothing to compare), 1 when it was
 * not: a warning says so, the wheel's own is kept instead and every set
 * with the file as a member is marked incomplete (OW_SET_META_WRONG); < 0
 * error. */
int ow_fetch_check_range_meta(ow_store *s, int64_t file_id, const char *filename, int fd,
                              uint64_t size);
/* The host (with its port) of `url`, as messages name it: 0, or
 * OW_ETOOBIG (buf empty) when it does not fit in n, never a cut host. */
int ow_fetch_host(const char *url, char *buf, size_t n);
void ow_fetch_report_dispose(struct ow_fetch_report *r);

/* The core metadata of a file: its stored .metadata object, else the
 * METADATA member of its stored wheel (verified on the way).  OW_ENOENT
 * when neither has been fetched.  *text is malloc'd, NUL-terminated. */
int ow_file_metadata(ow_store *s, int64_t file_id, char **text, size_t *len);
/* The same for a stored sdist (object `object`): its PKG-INFO, read once and
 * kept parsed with its build requirements (ow_file_meta_get). */
int ow_sdist_metadata(ow_store *s, int64_t file_id, const char *object, const char *filename,
                      char **text, size_t *len);

const char *ow_fetch_outcome_name(enum ow_fetch_outcome o);
/* "none", "resumed", "not-resumed", "server-restarted", "discarded" */
const char *ow_fetch_resume_name(enum ow_fetch_resume r);
/* NULL, "if-range", "published-sha256", "pinned-sha256" */
const char *ow_fetch_resume_basis_name(enum ow_fetch_resume_basis b);

/* ---- core metadata kept parsed in the index database (filemeta.c) ----
 * What resolve needs of a file's METADATA (Name, Version, Requires-Python,
 * Requires-Dist, Provides-Extra), parsed once and kept with where it came
 * from and the sha256 of the bytes: a later resolve reads only this. */
#define OW_META_PEP658 "pep658" /* the index's .metadata file */
#define OW_META_RANGE "range"   /* read from the remote wheel by range requests */
#define OW_META_WHEEL "wheel"   /* read from the stored wheel */
#define OW_META_SDIST "sdist"   /* PKG-INFO of the stored sdist */

struct ow_metadata;
struct ow_file_meta {
	char source[8];             /* OW_META_* */
	char sha256[OW_SHA256_HEX]; /* of the METADATA bytes */
	struct ow_metadata *md;     /* the fields above (no Metadata-Version, Summary) */
	/* an sdist's (source OW_META_SDIST): what building it needs, one PEP 508
	 * line each; and whether PKG-INFO leaves its dependencies to the build
	 * (PEP 643).  NULL / 0 / false for a wheel. */
	char **build_requires;
	size_t nbuild_requires;
	bool deps_dynamic;
};
/* Parse `text` and keep it as the metadata of file_id (replacing any). */
int ow_file_meta_record(ow_store *s, int64_t file_id, const char *source, const char *text,
                        size_t len);
/* Keep an sdist's build requirements beside its parsed PKG-INFO. */
int ow_file_meta_set_build(ow_store *s, int64_t file_id, char *const *reqs, size_t n,
                           bool deps_dynamic);
/* 1 with *out filled (free with ow_file_meta_clear), 0 when none is kept. */
int ow_file_meta_get(ow_store *s, int64_t file_id, struct ow_file_meta *out);
void ow_file_meta_clear(struct ow_file_meta *m);

/* verify --deep: the stored wheels among `rows` pass the strict zip
 * validation, every RECORD hash and METADATA name/version against the file
 * name they were fetched as; `jobs` threads.  results[i] for rows[i]
 * (objects that are not wheels are left as they are).  Returns how many
 * failed. */
size_t ow_verify_wheels(ow_store *s, const struct ow_obj_row *rows, size_t n, int jobs,
                        struct ow_verify_result *results);

#endif
