/* auditobj.c - the audit object: made empty, libraries appended, sorted,
 * freed.  The scanner (audit.c) and the cache (auditdb.c) both build
 * audits with it, so neither calls into the other for that: audit.c uses
 * auditdb.c, never the reverse. */
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "auditint.h"
#include "offwheel/error.h"

#define MAX_LIBS 1000000u

int au_new(const char *source, const char *label, int kind, struct ow_audit **out)
{
	struct ow_audit *a = calloc(1, sizeof *a);
	*out = NULL;
	if (!a || !(a->source = strdup(source)) || !(a->label = strdup(label))) {
		ow_audit_free(a);
		return ow_err(OW_ENOMEM, "audit: out of memory");
	}
	a->kind = kind;
	*out = a;
	return 0;
}

int au_add_lib(struct ow_audit *a, const char *path, uint64_t size, int scanned,
                     struct ow_fatbin *fb)
{
	struct ow_audit_lib *libs = NULL;
	char *p = NULL;
	if (a->n_libs < MAX_LIBS)
		libs = ow_array_more(a->libs, a->n_libs, sizeof *libs);
	if (libs)
		a->libs = libs;
	if (!libs || !(p = strdup(path))) {
		ow_fatbin_free(fb);
		return a->n_libs >= MAX_LIBS ? ow_err(OW_ETOOBIG, "%s: more than %u libraries",
		                                      a->label, MAX_LIBS)
		                             : ow_err(OW_ENOMEM, "audit: out of memory");
	}
	int vendor = ow_audit_is_vendor_lib(path, fb);
	a->libs[a->n_libs++] = (struct ow_audit_lib){
		.path = p, .size = size, .scanned = scanned, .vendor = vendor, .fb = fb};
	return 0;
}

static int cmp_lib(const void *x, const void *y)
{
	return strcmp(((const struct ow_audit_lib *)x)->path, ((const struct ow_audit_lib *)y)->path);
}

void au_sort(struct ow_audit *a)
{
	if (a->n_libs > 1)
		qsort(a->libs, a->n_libs, sizeof *a->libs, cmp_lib);
}

void ow_audit_free(struct ow_audit *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n_libs; i++) {
		free(a->libs[i].path);
		free(a->libs[i].reread);
		ow_fatbin_free(a->libs[i].fb);
	}
	free(a->libs);
	free(a->source);
	free(a->label);
	free(a);
}
