/* fsck.h - check every invariant of the workspace (DESIGN.md §3), and gc of
 * what the checks call garbage. */
#ifndef OW_FSCK_H
#define OW_FSCK_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

enum ow_fsck_kind {
	OW_FSCK_MISSING,  /* a row whose object file is not there (error) */
	OW_FSCK_CORRUPT,  /* an object whose bytes do not hash to its name (error) */
	OW_FSCK_DB,       /* sqlite integrity / foreign key problem (error) */
	OW_FSCK_ORPHAN,   /* an object file without a row: garbage, gc removes it */
	OW_FSCK_STRAY,    /* a file in objects/ that is not an object name: garbage */
	OW_FSCK_PARTIAL,  /* a file in tmp/: a resumable download or a leftover */
};

struct ow_fsck_issue {
	enum ow_fsck_kind kind;
	int resumable; /* PARTIAL: a download a re-run resumes */
	char what[320]; /* the object hash or the path */
	char detail[320];
};

struct ow_fsck_report {
	size_t rows;      /* object rows checked */
	uint64_t bytes;   /* bytes hashed */
	size_t errors;    /* MISSING + CORRUPT + DB */
	size_t garbage;   /* ORPHAN + STRAY */
	size_t partials;
	struct ow_fsck_issue *issues;
	size_t nissues;
};

/* Runs every check; hashes every object (rows and orphans) with `jobs`
 * threads.  Returns 0 when it could run (look at r->errors), < 0 when it
 * could not. */
int ow_fsck(ow_store *s, int jobs, struct ow_fsck_report *r);
void ow_fsck_report_free(struct ow_fsck_report *r);
const char *ow_fsck_kind_name(enum ow_fsck_kind k);

struct ow_gc_result {
	size_t removed_objects; /* orphans and strays */
	size_t removed_tmp;     /* store temp files, and partials if asked */
	uint64_t freed;         /* bytes */
};
/* Remove garbage: orphan objects, stray files in objects/, store temp
 * files; partial downloads too when `drop_partials`.  Needs a store opened
 * for writing (the lock guarantees no writer is mid-publish). */
int ow_gc_garbage(ow_store *s, int drop_partials, struct ow_gc_result *res);

#endif
