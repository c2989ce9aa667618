/* exportdevice.c - the device rule of an export: a set the workspace knows
 * fails a device is never shipped without being asked to (export.h,
 * struct ow_export_devices), and the verdicts go into the manifest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "db.h"
#include "exportint.h"
#include "fmt.h"
#include "offwheel/str.h"
#include "store.h"

void ex_devices_free(struct ow_export_device *d, size_t n)
{
	for (size_t i = 0; d && i < n; i++) {
		free(d[i].wheel);
		free(d[i].library);
		free(d[i].detail);
	}
	free(d);
}

void ex_cc_text(int cc, char *buf, size_t n)
{
	snprintf(buf, n, "%d.%d", cc / 10, cc % 10);
}

void ex_driver_text(int driver, char *buf, size_t n)
{
	snprintf(buf, n, "%d.%d", driver / 1000, driver % 1000 / 10);
}

static char *dup_or_null(ow_stmt *st, int col)
{
	return ow_col_is_null(st, col) ? NULL : strdup(ow_col_text(st, col));
}

/* Columns: cc, driver, verdict, runs, predicted, wheel, library, modules,
 * no_image, detail, judged_at. */
static int device_row(ow_stmt *st, struct ow_export_device *d)
{
	memset(d, 0, sizeof *d);
	d->cc = (int)ow_col_int(st, 0);
	d->driver = (int)ow_col_int(st, 1);
	snprintf(d->verdict, sizeof d->verdict, "%s", ow_col_text(st, 2));
	d->runs = ow_col_is_null(st, 3) ? -1 : (int)ow_col_int(st, 3);
	d->predicted = (int)ow_col_int(st, 4);
	d->wheel = dup_or_null(st, 5);
	/* analyzer: d->wheel is in (*out)[*n - 1], freed by ex_devices_free */
	d->library = dup_or_null(st, 6);
	/* analyzer: d->library is kept in (*out)[*n - 1], freed by ex_devices_free */
	d->modules = ow_col_int(st, 7);
	d->no_image = ow_col_int(st, 8);
	d->detail = dup_or_null(st, 9);
	/* analyzer: d->detail is kept in (*out)[*n - 1], freed by ex_devices_free */
	d->judged_at = ow_col_int(st, 10);
	if ((!ow_col_is_null(st, 5) && !d->wheel) || (!ow_col_is_null(st, 6) && !d->library) ||
	    (!ow_col_is_null(st, 9) && !d->detail))
		return ow_err(OW_ENOMEM, "export: out of memory");
	return 0;
}

int ex_devices_load(ow_store *s, int64_t set_id, struct ow_export_device **out, size_t *n)
{
	ow_stmt *st = ow_db_stmt(ow_store_db(s), OW_SQL_EXP_SET_DEVICES);
	int row = 0, rc = 0;
	*out = NULL;
	*n = 0;
	if (!st)
		return OW_EDB;
	ow_stmt_int(st, 1, set_id);
	while (!rc && (row = ow_stmt_step(st)) == 1) {
		struct ow_export_device *g = ow_array_more(*out, *n, sizeof *g);
		if (!g) {
			rc = ow_err(OW_ENOMEM, "export: out of memory");
			break;
		}
		*out = g;
		rc = device_row(st, &g[(*n)++]); /* a half-filled row is freed with the rest */
	}
	if (rc)
		ow_stmt_run(st);
	else if (row < 0)
		rc = row;
	if (rc) {
		ex_devices_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

/* A verdict for cc that was not a prediction. */
static int judged(const struct ow_export_device *d, size_t n, int cc)
{
	for (size_t i = 0; i < n; i++)
		if (d[i].cc == cc && !d[i].predicted && d[i].runs >= 0)
			return 1;
	return 0;
}

/* Every device asked for (and every one recorded only as a prediction)
 * judged from what the store holds, then the verdicts read back. */
static int judge_missing(ow_store *s, const struct ow_export_devices *rule, int64_t id,
                         struct ow_export_device **d, size_t *n)
{
	int rc = 0, again = 0;
	if (!rule || !rule->judge)
		return 0;
	for (size_t i = 0; !rc && i < rule->n; i++)
		if (!judged(*d, *n, rule->ccs[i]) && !(rc = rule->judge(rule->ud, s, id, rule->ccs[i])))
			again = 1;
	for (size_t i = 0; !rc && i < *n; i++)
		if ((*d)[i].predicted && !judged(*d, *n, (*d)[i].cc) &&
		    !(rc = rule->judge(rule->ud, s, id, (*d)[i].cc)))
			again = 1;
	if (rc || !again)
		return rc;
	ex_devices_free(*d, *n);
	return ex_devices_load(s, id, d, n);
}

/* "torch/lib/libtorch_cuda.so: 12 of 12 modules have no sm_120 image" */
static void cause_text(const struct ow_export_device *d, char *buf, size_t n)
{
	if (d->library)
		snprintf(buf, n, "%s: %lld of %lld modules have no sm_%d image", d->library,
		         (long long)d->no_image, (long long)d->modules, d->cc);
	else
		snprintf(buf, n, "%s", d->detail ? d->detail : d->verdict);
}

/* The verdict of the set on cc when asked for it: the first recorded
 * failure, else a run, else NULL (nothing known). */
static const struct ow_export_device *verdict_on(const struct ow_export_device *d, size_t n,
                                                 int cc)
{
	const struct ow_export_device *ok = NULL;
	for (size_t i = 0; i < n; i++) {
		if (d[i].cc != cc)
			continue;
		if (d[i].runs == 0)
			return &d[i];
		if (d[i].runs > 0)
			ok = &d[i];
	}
	return ok;
}

int ow_export_refused_on(ow_store *s, int64_t set_id, char *out, size_t n)
{
	struct ow_export_device *d = NULL;
	size_t nd = 0;
	struct ow_str b = {0};
	*out = 0;
	int rc = ex_devices_load(s, set_id, &d, &nd);
	for (size_t i = 0; !rc && i < nd; i++) {
		char cc[16];
		ex_cc_text(d[i].cc, cc, sizeof cc);
		if (d[i].runs == 0 && !(b.p && strstr(b.p, cc)))
			ow_str_printf(&b, "%s%s", b.n ? ", " : "", cc);
	}
	ex_devices_free(d, nd);
	if (!rc && b.err)
		rc = ow_err(OW_ENOMEM, "export: out of memory");
	if (!rc && b.n && ow_fmt(out, n, "%s", b.p))
		rc = ow_err(OW_ETOOBIG, "set %lld: its devices do not fit in %zu bytes",
		            (long long)set_id, n);
	ow_str_dispose(&b);
	return rc ? rc : *out != 0;
}

static void left_out(const struct ow_export_device *d, size_t n, const int *ccs, size_t nccs,
                     int64_t id, char *why, size_t why_n)
{
	char cc[16], cause[400];
	for (size_t i = 0; !*why && i < nccs; i++) {
		const struct ow_export_device *v = verdict_on(d, n, ccs[i]);
		ex_cc_text(ccs[i], cc, sizeof cc);
		if (!v)
			snprintf(why, why_n, "could not be audited for %s — run 'offwheel fetch set:%lld', "
			         "then 'offwheel audit set:%lld --device %s'", cc, (long long)id,
			         (long long)id, cc);
		else if (v->runs == 0) {
			cause_text(v, cause, sizeof cause);
			snprintf(why, why_n, "would not run on %s (%s): %s", cc, v->verdict, cause);
		}
	}
}

static const struct ow_export_device *first_failure(const struct ow_export_device *d, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (d[i].runs == 0)
			return &d[i];
	return NULL;
}

int ex_device_rule(ow_store *s, const struct ow_export_devices *rule, int64_t id,
                   const char *target, struct ex_rule_result *r)
{
	struct ow_export_device **d = &r->d;
	size_t *n = &r->n;
	char *why = r->why;
	size_t why_n = r->why_n;
	*why = 0;
	r->fail_cc = 0;
	int rc = ex_devices_load(s, id, d, n);
	if (!rc)
		rc = judge_missing(s, rule, id, d, n);
	if (rc || (rule && rule->force && !rule->n))
		return rc;
	if (rule && rule->n) {
		left_out(*d, *n, rule->ccs, rule->n, id, why, why_n);
		return 0;
	}
	const struct ow_export_device *f = first_failure(*d, *n);
	char cc[16], cause[400];
	if (!f)
		return 0;
	ex_cc_text(f->cc, cc, sizeof cc);
	cause_text(f, cause, sizeof cause);
	r->fail_cc = f->cc;
	return ow_err(OW_ENOIMAGE, "set %lld (%s) would not run on %s (%s%s): %s", (long long)id,
	              target, cc, f->verdict, f->predicted ? ", predicted from torchvision" : "",
	              cause);
}

int ow_export_plan_devices_done(const struct ow_export_plan *p)
{
	struct ow_str b = {0};
	char *text = NULL;
	size_t dev = 0;
	for (size_t i = 0; i < p->nskipped; i++)
		dev += p->skipped[i].device;
	if (p->nsets || !dev)
		return 0;
	for (size_t i = 0; i < p->nskipped; i++)
		ow_str_printf(&b, "%sset %lld (%s): %s", i ? "; " : "", (long long)p->skipped[i].id,
		              p->skipped[i].target, p->skipped[i].reason);
	if (ow_str_take(&b, &text))
		return ow_err(OW_ENOIMAGE, "no set asked for runs on every --device");
	int rc = ow_err(OW_ENOIMAGE, "no set asked for runs on every --device: %s — sync or resolve "
	                "for the device ('offwheel sync --device CC' fetches the sets that run)",
	                text);
	free(text);
	return rc;
}
