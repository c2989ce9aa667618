/* auditint.h - what the audit files share (not a public header). */
#ifndef OW_AUDITINT_H
#define OW_AUDITINT_H

#include "offwheel/audit.h"
#include "fbstream.h"

/* The listing text format written into audits.listing. */
#define OW_AUDIT_FORMAT 5 /* 2: module flag k (cubins without kernels); 3: k also
                           * from compressed cubins and PTX (fatbinkern.h); 4: the
                           * cubin/PTX/fatbin/archive formats and the header's
                           * section-headers flag; 5: the SONAME */
#define AU_SONAME_MAX 255 /* longest SONAME a listing keeps */

/* A fresh audit of `kind` for `source` labelled `label`. */
int au_new(const char *source, const char *label, int kind, struct ow_audit **out);
/* Append a library; takes `fb` (freed on failure too). */
int au_add_lib(struct ow_audit *a, const char *path, uint64_t size, int scanned,
                     struct ow_fatbin *fb);
/* Sort the libraries by path (every audit lists them in one order). */
void au_sort(struct ow_audit *a);

/* Cache in the index: 1 = found and filled into `a`, 0 = not cached. */
int au_cache_load(ow_store *s, const char *hex, int scan, struct ow_audit *a);
int au_cache_save(ow_store *s, const struct ow_audit *a, int scan);
/* A ref (64 hex, or a file name recorded as fetched) to an object hash and
 * a label (the file name when the index knows one). */
int au_resolve(ow_store *s, const char *ref, char hex[65], char *label, size_t label_n);

/* Wheel members listed again (auditagain.c): the byte ranges a streamed
 * listing missed, kept on the next streamed pass, or (whole) held whole. */
struct au_again {
	char *name;
	uint64_t off[FB_STREAM_WANTS], len[FB_STREAM_WANTS];
	int n;        /* ranges to keep */
	int whole;    /* hold it whole: a miss without a range, or too many */
	int passes;   /* passes that missed */
	char *why;    /* the first miss (ow_err_detail), for -v */
};
struct au_again_list {
	struct au_again *v;
	size_t n;
};
const struct au_again *au_again_find(const struct au_again_list *l, const char *name);
/* The entry of the next pass for `name`, whose listing over sp missed
 * (prev: its entry in this pass, or NULL on the first). */
int au_again_push(struct au_again_list *next, const char *name, const struct au_again *prev,
                  const struct fb_sparse *sp, const char *why);
void au_again_free(struct au_again_list *l);
/* What -v says of a member listed again (malloc'd, NULL when out of memory). */
char *au_again_note(const struct au_again *ag);

#endif
