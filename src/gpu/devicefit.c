/* devicefit.c - audit a set's torch (or predict from its torchvision). */
#include "offwheel/devicefit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "offwheel/audit.h"
#include "offwheel/error.h"

static const struct ow_resolve_member *member(const struct ow_resolve_target *t,
                                              enum ow_member_role role)
{
	for (size_t i = 0; i < t->nmembers; i++)
		if (t->members[i].role == role)
			return &t->members[i];
	return NULL;
}

/* Audit one fetched wheel for the device: 1 runs, 0 not, < 0 error. */
static int judge(ow_store *s, const char *filename, int cc, int driver, struct ow_device_fit *f)
{
	struct ow_audit *a = NULL;
	struct ow_audit_opts ao = {0};
	struct ow_audit_result res;
	int rc = ow_audit_object(s, filename, &ao, &a);
	if (!rc)
		rc = ow_audit_verdict(a, cc, driver, &res);
	ow_audit_free(a);
	if (rc)
		return rc;
	snprintf(f->from, sizeof f->from, "%s", filename);
	snprintf(f->verdict, sizeof f->verdict, "%s", ow_audit_verdict_name(res.verdict));
	/* a CPU build "runs" nowhere on the GPU: no device code is no fit */
	f->runs = !res.fatal && strcmp(f->verdict, "no-code") != 0;
	return 0;
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
	ow_fetch_report_free(&fr);
	free(ids);
	return rc == OW_EINCOMPLETE || rc == OW_EVERIFY ? 0 : rc; /* judged per target below */
}

static void fit_one(ow_store *s, const struct ow_resolve_target *t, int cc, int driver,
                    struct ow_device_fit *f)
{
	const struct ow_resolve_member *torch = member(t, OW_ROLE_TORCH);
	const struct ow_resolve_member *vision = member(t, OW_ROLE_VISION);
	memset(f, 0, sizeof *f);
	f->runs = -1;
	snprintf(f->verdict, sizeof f->verdict, "unknown");
	if (!t->complete || !torch)
		return;
	if (judge(s, torch->filename, cc, driver, f) == 0)
		return;
	if (vision && judge(s, vision->filename, cc, driver, f) == 0) {
		f->predicted = 1;
		snprintf(f->detail, sizeof f->detail,
		         "predicted from %s (same build); torch itself is audited once fetched",
		         vision->filename);
		return;
	}
	snprintf(f->detail, sizeof f->detail, "nothing of this set could be audited: %s",
	         ow_err_detail());
}

int ow_device_fit_all(ow_store *s, const struct ow_fetch_opts *fo, const struct ow_resolve_report *r,
                      int cc, int driver, struct ow_device_fit *fits)
{
	int rc = fetch_needed(s, fo, r);
	if (rc)
		return rc;
	for (size_t i = 0; i < r->ntargets; i++)
		fit_one(s, &r->targets[i], cc, driver, &fits[i]);
	return 0;
}
