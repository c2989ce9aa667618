/* fsck.h - check every invariant of the workspace (docs/workspace.md), and
 * gc of what the checks call garbage. */
#ifndef OW_FSCK_H
#define OW_FSCK_H

#include <stddef.h>
#include <stdint.h>

#include "offwheel/store.h"

enum ow_fsck_kind {
	OW_FSCK_MISSING,  /* a row whose object file is not there (error) */
	OW_FSCK_CORRUPT,  /* an object whose bytes do not hash to its name (error) */
	OW_FSCK_DB,       /* sqlite integrity / foreign key problem (error) */
	OW_FSCK_ORPHAN,   /* an object file without a row: garbage, gc removes it */
	OW_FSCK_STRAY,    /* a file in objects/ that is not an object name: garbage */
	OW_FSCK_PARTIAL,  /* a file in tmp/: a resumable download or a leftover */
	OW_FSCK_ASIDE,    /* tmp/damaged-*: a damaged object a repair moved aside (garbage) */
};

struct ow_fsck_issue {
	enum ow_fsck_kind kind;
	int resumable; /* PARTIAL: a download a re-run resumes */
	char *what;    /* the object hash or the path (owned, whole) */
	char *detail;  /* owned, never NULL */
};

struct ow_fsck_report {
	size_t rows;      /* object rows checked */
	uint64_t bytes;   /* bytes hashed */
	size_t errors;    /* MISSING + CORRUPT + DB */
	size_t garbage;   /* ORPHAN + STRAY + ASIDE */
	size_t partials;
	struct ow_fsck_issue *issues;
	size_t nissues;
};

/* Runs every check; hashes every object (rows and orphans) with `jobs`
 * threads.  Anything in objects/ that is not a regular file is damage,
 * never read.  Objects found damaged are marked on their row (when the
 * index is writable) so that fetch and sync repair them.  Returns 0 when it
 * could run (look at r->errors), < 0 when it could not. */
int ow_fsck(ow_store *s, int jobs, struct ow_fsck_report *r);
void ow_fsck_report_dispose(struct ow_fsck_report *r);
const char *ow_fsck_kind_name(enum ow_fsck_kind k);

/* gc keeps garbage younger than this (by mtime) unless told otherwise, as
 * git's gc.pruneExpire does: a file that is that fresh may belong to a
 * writer that is not done with it. */
#define OW_GC_PRUNE_DEFAULT_S 3600

struct ow_gc_opts {
	int drop_partials; /* partial downloads too */
	int64_t prune_s;   /* keep garbage younger than this many seconds; 0 = all goes */
};

struct ow_gc_result {
	size_t removed_objects; /* orphans, strays and damaged objects moved aside */
	size_t removed_tmp;     /* store temp files, and partials if asked */
	size_t kept_young;      /* garbage younger than the prune age, kept */
	size_t left;            /* what gc cannot or may not remove (a directory, ...): logged */
	uint64_t freed;         /* bytes */
};
/* Remove garbage: orphan objects, stray files in objects/, store temp
 * files, damaged objects moved aside; partial downloads too when asked.
 * Needs a store opened for writing (the lock guarantees no writer is
 * mid-publish).  A directory or a file it cannot remove is reported (a
 * warning event) and counted in `left`; gc goes on with the rest. */
int ow_gc_garbage(ow_store *s, const struct ow_gc_opts *o, struct ow_gc_result *res);

/* "now" -> 0; "90s", "30m", "2h", "7d", or plain seconds -> seconds.
 * OW_EINVAL for anything else. */
int ow_gc_parse_prune(const char *text, int64_t *seconds);

#endif
