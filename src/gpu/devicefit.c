/* devicefit.c - audit a set's torch (or predict from its torchvision), and
 * remember the verdict per set and device (table set_devices). */
#include "offwheel/devicefit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "array.h"
#include "db.h"
#include "offwheel/error.h"
#include "offwheel/str.h"
#include "event.h"
#include "store.h"

static const struct ow_resolve_member *member_of(const struct ow_resolve_member *m, size_t n,
                                                 enum ow_member_role role)
{
	for (size_t i = 0; i < n; i++)
		if (m[i].role == role)
			return &m[i];
	return NULL;
}

static const struct ow_resolve_member *member(const struct ow_resolve_target *t,
                                              enum ow_member_role role)
{
	return member_of(t->members, t->nmembers, role);
}

/* The library the device cannot run — the first of the wheel's own, else
 * the first of NVIDIA's — and how many more there are. */
static size_t first_fatal(const struct ow_audit *a, int cc, int driver, struct ow_device_fit *f)
{
	size_t fatal = 0;
	int chosen_vendor = 1;
	struct ow_audit_lib_verdict *all;
	if (ow_audit_lib_verdicts(a, cc, driver, NULL, &all))
		return 0;
	for (size_t i = 0; i < a->n_libs; i++) {
		struct ow_audit_lib_verdict lv = all[i];
		if (!lv.fatal)
			continue;
		fatal++;
		if (f->library && (chosen_vendor <= a->libs[i].vendor))
			continue;
		chosen_vendor = a->libs[i].vendor;
		free(f->library);
		f->library = strdup(a->libs[i].path); /* out of memory: no library named */
		f->modules = lv.v.n_native + lv.v.n_jit + lv.v.n_none + lv.v.n_ptx_too_new;
		f->no_image = lv.v.n_none + lv.v.n_ptx_too_new;
	}
	free(all);
	return fatal ? fatal - 1 : 0;
}

/* "torch/lib/libtorch_cuda_linalg.so: 32 of 33 modules have no sm_75 image
 * (and 2 more libraries)"; a CPU build says so. */
static void fault_text(struct ow_device_fit *f, size_t more, int cc)
{
	free(f->detail);
	f->detail = NULL;
	if (!strcmp(f->verdict, "no-code")) {
		f->detail = strdup("no library of it carries GPU code (a CPU build)");
		return;
	}
	if (!f->library)
		return;
	char tail[64] = "";
	if (more)
		snprintf(tail, sizeof tail, " (and %zu more librar%s)", more, more == 1 ? "y" : "ies");
	f->detail = ow_aprintf("%s: %zu of %zu modules have no sm_%d image%s", f->library,
	                       f->no_image, f->modules, cc, tail);
}

int ow_device_fit_audit(const struct ow_audit *a, const char *wheel, int cc, int driver,
                        struct ow_device_fit *f)
{
	struct ow_audit_result res;
	int rc = ow_audit_verdict(a, cc, driver, &res);
	if (rc)
		return rc;
	ow_device_fit_dispose(f);
	snprintf(f->from, sizeof f->from, "%s", wheel);
	snprintf(f->verdict, sizeof f->verdict, "%s", ow_audit_verdict_name(res.verdict));
	/* a CPU build "runs" nowhere on the GPU: no device code is no fit */
	f->runs = !res.fatal && strcmp(f->verdict, "no-code") != 0;
	if (!f->runs)
		fault_text(f, first_fatal(a, cc, driver, f), cc);
	return 0;
}

/* Audit one fetched wheel (a file name or an object's sha256) for the
 * device, labelled `filename`. */
static int judge(ow_store *s, const char *ref, const char *filename, int cc, int driver,
                 struct ow_device_fit *f)
{
	struct ow_audit *a = NULL;
	struct ow_audit_opts ao = {0};
	int rc = ow_audit_object(s, ref, &ao, &a);
	if (!rc)
		rc = ow_device_fit_audit(a, filename, cc, driver, f);
	ow_audit_free(a);
	return rc;
}

/* torchvision wheels of complete targets whose torch is not fetched. */
static int fetch_needed(ow_store *s, const struct ow_fetch_opts *fo, const struct ow_resolve_report *r)
{
	int64_t *ids = calloc(r->ntargets ? r->ntargets : 1, sizeof *ids);
	size_t n = 0;
	if (!ids)
		return ow_err(OW_ENOMEM, "out of memory");
	for (size_t i = 0; i < r->ntargets; i++) {
		const struct ow_resolve_member *torch = member(&r->targets[i], OW_ROLE_TORCH);
		const struct ow_resolve_member *vision = member(&r->targets[i], OW_ROLE_VISION);
		struct ow_audit *a = NULL;
		if (!r->targets[i].complete || !torch || !vision)
			continue;
		if (ow_audit_object(s, torch->filename, &(struct ow_audit_opts){0}, &a) == 0) {
			ow_audit_free(a);
			continue;
		}
		ids[n++] = vision->file_id;
	}
	struct ow_fetch_report fr = {0};
	int rc = n ? ow_fetch_files(s, fo, ids, n, &fr) : 0;
	ow_fetch_report_dispose(&fr);
	free(ids);
	return rc == OW_EINCOMPLETE || rc == OW_EVERIFY ? 0 : rc; /* judged per target below */
}

void ow_device_fit_dispose(struct ow_device_fit *f)
{
	free(f->detail);
	free(f->library);
	memset(f, 0, sizeof *f);
}

void ow_device_fits_free(struct ow_device_fit *fits, size_t n)
{
	for (size_t i = 0; fits && i < n; i++)
		ow_device_fit_dispose(&fits[i]);
	free(fits);
}

static void unknown(struct ow_device_fit *f)
{
	ow_device_fit_dispose(f);
	f->runs = -1;
	snprintf(f->verdict, sizeof f->verdict, "unknown");
}

/* "…; predicted from X (same build); torch itself is audited once fetched" */
static void predicted_note(struct ow_device_fit *f, const char *vision)
{
	f->predicted = 1;
	char *text = ow_aprintf("%s%spredicted from %s (same build); torch itself is audited once "
	                        "fetched", f->detail ? f->detail : "", f->detail ? "; " : "", vision);
	if (!text) /* out of memory: the fault alone */
		return;
	free(f->detail);
	f->detail = text;
}

/* A set member and how audit finds its wheel (a file name or an object). */
struct member_ref {
	const struct ow_resolve_member *m; /* NULL: not in the set */
	const char *ref;
};

/* torch by its ref, else torchvision by its ref (a prediction). */
static void fit_members(ow_store *s, const struct member_ref *t, const struct member_ref *v,
                        int cc, int driver, struct ow_device_fit *f)
{
	const struct ow_resolve_member *torch = t->m, *vision = v->m;
	const char *torch_ref = t->ref, *vision_ref = v->ref;
	unknown(f);
	if (!torch)
		return;
	if (judge(s, torch_ref, torch->filename, cc, driver, f) == 0)
		return;
	if (vision && judge(s, vision_ref, vision->filename, cc, driver, f) == 0) {
		predicted_note(f, vision->filename);
		return;
	}
	unknown(f);
	f->detail = ow_aprintf("nothing of this set could be audited: %s", ow_err_detail());
}

static void fit_one(ow_store *s, const struct ow_resolve_target *t, int cc, int driver,
                    struct ow_device_fit *f)
{
	const struct ow_resolve_member *torch = member(t, OW_ROLE_TORCH);
	const struct ow_resolve_member *vision = member(t, OW_ROLE_VISION);
	if (!t->complete) {
		unknown(f);
		return;
	}
	const struct member_ref tr = {torch, torch ? torch->filename : NULL};
	const struct member_ref vr = {vision, vision ? vision->filename : NULL};
	fit_members(s, &tr, &vr, cc, driver, f);
}

int ow_device_fit_all(ow_store *s, const struct ow_fetch_opts *fo, const struct ow_resolve_report *r,
                      int cc, int driver, struct ow_device_fit *fits)
{
	int rc = fetch_needed(s, fo, r);
	if (rc)
		return rc;
	/* an audit of a real torch takes seconds: a count the CLI can show */
	ow_progress_plan("device audits", r->ntargets, 0);
	for (size_t i = 0; i < r->ntargets; i++) {
		fit_one(s, &r->targets[i], cc, driver, &fits[i]);
		if (r->targets[i].set_id > 0 && r->targets[i].complete)
			ow_device_fit_record(s, r->targets[i].set_id, cc, driver, &fits[i]);
		ow_progress_item(r->targets[i].describe, 0);
	}
	ow_progress_plan(NULL, 0, 0);
	return 0;
}

int ow_device_fit_set(ow_store *s, int64_t set_id, int cc, int driver, struct ow_device_fit *f)
{
	struct ow_resolve_member *m = NULL;
	size_t n = 0;
	int rc = ow_set_members(s, set_id, &m, &n);
	if (rc)
		return rc;
	const struct ow_resolve_member *torch = member_of(m, n, OW_ROLE_TORCH);
	const struct ow_resolve_member *vision = member_of(m, n, OW_ROLE_VISION);
	/* by the stored object: only what is fetched is judged, nothing is downloaded */
	const struct member_ref tr = {torch, torch && torch->object[0] ? torch->object : "-"};
	const struct member_ref vr = {vision, vision && vision->object[0] ? vision->object : "-"};
	fit_members(s, &tr, &vr, cc, driver, f);
	char *why = NULL;
	if (f->runs < 0 && !torch)
		why = strdup("the set has no torch wheel to audit");
	else if (f->runs < 0 && !torch->object[0] && (!vision || !vision->object[0]))
		why = ow_aprintf("neither %s nor its torchvision is fetched — run 'offwheel fetch "
		                 "set:%lld'", torch->filename, (long long)set_id);
	if (why) {
		free(f->detail);
		f->detail = why;
	}
	ow_set_members_free(m, n);
	ow_err_clear();
	ow_device_fit_record(s, set_id, cc, driver, f);
	return 0;
}

static int put_row(ow_db *db, int64_t set_id, int cc, int driver, const struct ow_device_fit *f)
{
	ow_stmt *st = ow_db_stmt(db, OW_SQL_DEV_PUT);
	if (!st)
		return OW_EDB;
	ow_stmt_int(st, 1, set_id);
	ow_stmt_int(st, 2, cc);
	ow_stmt_int(st, 3, driver);
	ow_stmt_text(st, 4, f->verdict);
	if (f->runs < 0)
		ow_stmt_null(st, 5);
	else
		ow_stmt_int(st, 5, f->runs);
	ow_stmt_int(st, 6, f->predicted);
	ow_stmt_text(st, 7, f->from[0] ? f->from : NULL);
	ow_stmt_text(st, 8, f->library);
	if (f->library) {
		ow_stmt_int(st, 9, (int64_t)f->modules);
		ow_stmt_int(st, 10, (int64_t)f->no_image);
	}
	ow_stmt_text(st, 11, f->detail && *f->detail ? f->detail : NULL);
	ow_stmt_int(st, 12, (int64_t)time(NULL));
	return ow_stmt_run(st);
}

void ow_device_fit_record(ow_store *s, int64_t set_id, int cc, int driver,
                          const struct ow_device_fit *f)
{
	ow_db *db = ow_store_db(s);
	if (set_id <= 0 || ow_db_readonly(db))
		return;
	int rc = put_row(db, set_id, cc, driver, f);
	if (rc) {
		ow_log(OW_LOG_WARN, "could not record the device verdict of set %lld: %s",
		       (long long)set_id, ow_err_detail());
		ow_err_clear();
	}
}

void ow_device_fit_record_torch(ow_store *s, const struct ow_audit *a, int cc, int driver)
{
	struct ow_device_fit f = {0};
	ow_stmt *st = a->sha256[0] ? ow_db_stmt(ow_store_db(s), OW_SQL_DEV_SETS_OF_TORCH) : NULL;
	if (!st || ow_device_fit_audit(a, a->label, cc, driver, &f)) {
		ow_err_clear();
		return;
	}
	int64_t *ids = NULL, *grown;
	size_t n = 0;
	ow_stmt_text(st, 1, a->sha256);
	while (ow_stmt_step(st) == 1 && (grown = ow_array_more(ids, n, sizeof *ids))) {
		ids = grown;
		ids[n++] = ow_col_int(st, 0);
	}
	ow_stmt_run(st); /* done with it before the writes */
	for (size_t i = 0; i < n; i++)
		ow_device_fit_record(s, ids[i], cc, driver, &f);
	free(ids);
	ow_device_fit_dispose(&f);
}
