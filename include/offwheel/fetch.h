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
 * disk and asks for the rest with Range + If-Range. */
#ifndef OW_FETCH_H
#define OW_FETCH_H

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
	int recheck; /* re-hash a stored object before trusting it (fetch --force) */
};

enum ow_fetch_outcome {
	OW_FETCH_DONE,     /* downloaded and verified now */
	OW_FETCH_HAD,      /* already in the store, verified before */
	OW_FETCH_REJECTED, /* downloaded but failed verification: not stored */
	OW_FETCH_FAILED    /* could not be downloaded (partial kept for resume) */
};

struct ow_fetch_item {
	int64_t file_id;
	char filename[256];
	char url[2048];
	enum ow_fetch_outcome outcome;
	int rc;
	uint64_t bytes;    /* size of the verified file */
	uint64_t received; /* bytes that came over the network this run */
	int resumed;
	char sha256[OW_SHA256_HEX];
	const char *trust; /* OW_TRUST_* or NULL */
	char detail[1024];
};

struct ow_fetch_report {
	struct ow_fetch_item *items;
	size_t n;
	size_t done, had, rejected, failed;
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
 * downloaded (the rest is stored either way); *r tells per file. */
int ow_fetch_files(ow_store *s, const struct ow_fetch_opts *o, const int64_t *ids, size_t n,
                   struct ow_fetch_report *r);
/* Download the PEP 658 metadata files of `ids` (those whose page announced
 * one), verify each against the published core-metadata hash, store them as
 * objects and record files.meta_object.  Same return rules. */
int ow_fetch_metadata(ow_store *s, const struct ow_fetch_opts *o, const int64_t *ids, size_t n,
                      struct ow_fetch_report *r);
void ow_fetch_report_free(struct ow_fetch_report *r);

/* The core metadata of a file: its stored .metadata object, else the
 * METADATA member of its stored wheel (verified on the way).  OW_ENOENT
 * when neither has been fetched.  *text is malloc'd, NUL-terminated. */
int ow_file_metadata(ow_store *s, int64_t file_id, char **text, size_t *len);

const char *ow_fetch_outcome_name(enum ow_fetch_outcome o);

/* verify --deep: the stored wheels among `rows` pass the strict zip
 * validation, every RECORD hash and METADATA name/version against the file
 * name they were fetched as; `jobs` threads.  results[i] for rows[i]
 * (objects that are not wheels are left as they are).  Returns how many
 * failed. */
size_t ow_verify_wheels(ow_store *s, const struct ow_obj_row *rows, size_t n, int jobs,
                        struct ow_verify_result *results);

#endif
