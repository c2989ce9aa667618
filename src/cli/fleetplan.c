/* fleetplan.c - the machines and their sets (see fleetplan.h). */
#include "fleetplan.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fleetjson.h"
#include "offwheel/devicefit.h"
#include "offwheel/export.h"
#include "offwheel/fleet.h"
#include "offwheel/probe.h"
#include "offwheel/resolve.h"
#include "offwheel/str.h"
#include "offwheel/tags.h"

static void unplan(struct fleet_machine *m);

static int bad_probe(struct cli *c, const char *path, const char *why)
{
	return cli_fail(c, ow_err(OW_EINVAL, "%s: not a machine's probe (%s) — make it on the "
	                                     "machine with 'offwheel probe'", path, why));
}

static int parse_cc(const char *s)
{
	int major = 0, minor = 0;
	return sscanf(s, "%d.%d", &major, &minor) == 2 ? major * 10 + minor : 0;
}

/* cp312 / cp313t from the first interpreter that answered */
static void first_python(struct fleet_machine *m, json_t *pys)
{
	size_t i;
	json_t *py;
	json_array_foreach(pys, i, py) {
		const char *v = json_string_value(json_object_get(py, "version"));
		int major = 0, minor = 0;
		if (!v || sscanf(v, "%d.%d", &major, &minor) != 2 ||
		    strcmp(json_string_value(json_object_get(py, "implementation")) ?: "", "cpython"))
			continue;
		snprintf(m->python, sizeof m->python, "cp%d%d%s", major % 100, minor % 100,
		         json_is_true(json_object_get(py, "freethreaded")) ? "t" : "");
		return;
	}
}

static void machine_from(struct fleet_machine *m, json_t *doc)
{
	json_t *drv = json_object_get(doc, "driver"), *g;
	size_t i;
	m->driver = (int)json_integer_value(json_object_get(drv, "version_raw"));
	json_array_foreach(json_object_get(doc, "gpus"), i, g) {
		if (m->nccs < FLEET_MAX_GPUS)
			m->ccs[m->nccs++] = parse_cc(json_string_value(json_object_get(g, "cc")) ?: "");
	}
	first_python(m, json_object_get(doc, "pythons"));
	const char *plat = json_string_value(json_array_get(json_object_get(doc, "platforms"), 0));
	snprintf(m->platform, sizeof m->platform, "%s", plat && strlen(plat) < 64 ? plat : "");
	struct ow_target t;
	m->targetable = *m->python && *m->platform && ow_target_parse(&t, m->python, m->platform) == 0;
}

static int load_file(struct cli *c, const char *path, struct fleet *f)
{
	json_error_t e;
	json_t *doc = json_load_file(path, 0, &e);
	if (!doc)
		return bad_probe(c, path, e.text);
	const char *fmt = json_string_value(json_object_get(doc, "format"));
	const char *name = json_string_value(json_object_get(doc, "name"));
	int rc = 0;
	if (!fmt || strcmp(fmt, FLEET_PROBE_FORMAT))
		rc = bad_probe(c, path, "no format " FLEET_PROBE_FORMAT);
	else if (!name || ow_probe_name_problem(name))
		rc = bad_probe(c, path, "no valid machine name");
	for (size_t i = 0; !rc && i < f->n; i++)
		if (strcmp(f->m[i].name, name) == 0)
			rc = cli_fail(c, ow_err(OW_EINVAL, "%s: a second probe of machine '%s' (the "
			                                   "first: %s) — keep one", path, name, f->m[i].file));
	struct fleet_machine *nm = rc ? NULL : realloc(f->m, (f->n + 1) * sizeof *nm);
	if (!rc && !nm)
		rc = cli_fail(c, ow_err(OW_ENOMEM, "out of memory"));
	if (rc) {
		json_decref(doc);
		return rc;
	}
	f->m = nm;
	struct fleet_machine *m = &nm[f->n++];
	*m = (struct fleet_machine){.name = strdup(name), .file = strdup(path), .probe = doc};
	machine_from(m, doc);
	return m->name && m->file ? 0 : cli_fail(c, ow_err(OW_ENOMEM, "out of memory"));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int load_dir(struct cli *c, const char *dir, struct fleet *f)
{
	struct cli_strlist names = {0};
	DIR *d = opendir(dir);
	struct dirent *e;
	int rc = d ? 0 : cli_fail(c, ow_err(OW_ENOENT, "--probes %s: cannot read it", dir));
	while (!rc && (e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n > 5 && e->d_name[0] != '.' && strcmp(e->d_name + n - 5, ".json") == 0) {
			char *p = ow_aprintf("%s/%s", dir, e->d_name);
			rc = p ? cli_strlist_add_csv(&names, p) : 1;
			free(p);
		}
	}
	if (d)
		closedir(d);
	if (!rc && names.n)
		qsort(names.v, names.n, sizeof *names.v, cmp_str);
	for (size_t i = 0; !rc && i < names.n; i++)
		rc = load_file(c, names.v[i], f);
	cli_strlist_dispose(&names);
	return rc;
}

int fleet_load(struct cli *c, const struct cli_strlist *paths, struct fleet *f)
{
	int rc = 0;
	for (size_t i = 0; !rc && i < paths->n; i++) {
		struct stat st;
		if (stat(paths->v[i], &st))
			rc = cli_fail(c, ow_err(OW_ENOENT, "--probes %s: no such file or directory",
			                        paths->v[i]));
		else
			rc = S_ISDIR(st.st_mode) ? load_dir(c, paths->v[i], f)
			                         : load_file(c, paths->v[i], f);
	}
	if (!rc && !f->n)
		rc = cli_fail(c, ow_err(OW_ENOENT, "--probes: no probe found — run 'offwheel "
		                                   "probe' on each machine first"));
	return rc;
}

void fleet_dispose(struct fleet *f)
{
	for (size_t i = 0; i < f->n; i++) {
		struct fleet_machine *m = &f->m[i];
		free(m->name);
		free(m->file);
		unplan(m);
		json_decref(m->probe);
	}
	free(f->m);
	*f = (struct fleet){0};
}

static int add_once(struct cli_strlist *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			return 0;
	return cli_strlist_add_csv(l, s);
}

int fleet_targets(const struct fleet *f, struct cli_strlist *pythons, struct cli_strlist *platforms)
{
	int rc = 0;
	for (size_t i = 0; !rc && i < f->n; i++)
		if (f->m[i].targetable && !(rc = add_once(pythons, f->m[i].python)))
			rc = add_once(platforms, f->m[i].platform);
	return rc;
}

/* The audits of one set for every GPU of m: o->runs, and *why when not. */
static int judge(ow_store *s, const struct fleet_machine *m, const struct fleet_set *set,
                 struct ow_fleet_option *o, char **why)
{
	o->variant = set->variant;
	o->runs = 1;
	if (!m->driver || ow_variant_min_driver(set->variant) <= 0)
		return 0;
	for (size_t g = 0; g < m->nccs && o->runs != 0; g++) {
		struct ow_device_fit fit = {0};
		int rc = ow_device_fit_set(s, set->id, m->ccs[g], m->driver, &fit);
		if (rc == 0 && fit.runs == 0) {
			o->runs = 0;
			*why = ow_aprintf("%d.%d: %s", m->ccs[g] / 10, m->ccs[g] % 10,
			                  fit.detail ? fit.detail : fit.verdict);
		} else if (rc || fit.runs < 0) {
			o->runs = -1;
		}
		ow_device_fit_dispose(&fit);
	}
	return 0;
}

static bool for_machine(const struct fleet_machine *m, const struct fleet_set *set)
{
	return set->complete && set->id > 0 && set->python && set->platform &&
	       strcmp(set->python, m->python) == 0 && strcmp(set->platform, m->platform) == 0;
}

static int set_pick(struct fleet_machine *m, const struct fleet_set *set)
{
	char *t = strdup(set->target), *v = strdup(set->variant);
	char *r = set->req ? strdup(set->req) : NULL;
	if (!t || !v || (set->req && !r)) {
		free(t);
		free(v);
		free(r);
		return OW_ENOMEM;
	}
	m->set_id = set->id;
	m->target = t, m->variant = v, m->req = r;
	/* analyzer: t, v and r are kept in the machine (f->m[i]), freed by unplan */
	return 0;
}

static int plan_one(ow_store *s, struct fleet_machine *m, const struct fleet_set *sets, size_t n)
{
	struct ow_fleet_option *opts = calloc(n + 1, sizeof *opts);
	size_t *idx = calloc(n + 1, sizeof *idx), k = 0;
	char **whys = calloc(n + 1, sizeof *whys);
	int chosen = -1, rc = opts && idx && whys ? 0 : OW_ENOMEM;
	for (size_t i = 0; !rc && i < n; i++)
		if (for_machine(m, &sets[i])) {
			rc = judge(s, m, &sets[i], &opts[k], &whys[k]);
			opts[k].why_not = whys[k];
			idx[k++] = i;
		}
	if (!rc)
		rc = ow_fleet_pick(m->driver, m->nccs, opts, k, &chosen, &m->why);
	if (!rc && chosen >= 0)
		rc = set_pick(m, &sets[idx[chosen]]);
	else if (!rc && !k) {
		free(m->why);
		m->why = ow_aprintf("no complete set for %s-%s: no wheel for its Python or libc "
		                    "(sync --probes adds its target)", m->python, m->platform);
	}
	for (size_t i = 0; whys && i < k; i++)
		free(whys[i]);
	free(whys);
	free(idx);
	free(opts);
	return rc;
}

static char *untargetable_why(const struct fleet_machine *m)
{
	if (!*m->python)
		return ow_aprintf("no CPython interpreter in its probe (probe --python PY names one)");
	return ow_aprintf("no wheel for its libc: its platform %s is not one offwheel makes sets "
	                  "for (manylinux, Windows, macOS)", *m->platform ? m->platform : "(none)");
}

static void unplan(struct fleet_machine *m)
{
	free(m->target);
	free(m->variant);
	free(m->req);
	free(m->why);
	m->target = m->variant = m->req = m->why = NULL;
	m->set_id = 0;
}

int fleet_plan(ow_store *s, struct fleet *f, const struct fleet_set *sets, size_t n)
{
	int rc = 0;
	for (size_t i = 0; !rc && i < f->n; i++) {
		struct fleet_machine *m = &f->m[i];
		unplan(m);
		if (!m->targetable)
			rc = (m->why = untargetable_why(m)) ? 0 : OW_ENOMEM;
		else
			rc = plan_one(s, m, sets, n);
	}
	return rc ? ow_err(OW_ENOMEM, "out of memory") : 0;
}

int fleet_plan_resolved(ow_store *s, struct fleet *f, const struct ow_resolve_report *r)
{
	struct fleet_set *sets = calloc(r->ntargets + 1, sizeof *sets);
	if (!sets)
		return ow_err(OW_ENOMEM, "out of memory");
	for (size_t i = 0; i < r->ntargets; i++) {
		const struct ow_resolve_target *t = &r->targets[i];
		sets[i] = (struct fleet_set){.id = t->set_id, .target = t->describe, .variant = t->variant,
		                             .python = t->python, .platform = t->platform,
		                             .complete = t->complete};
	}
	int rc = fleet_plan(s, f, sets, r->ntargets);
	free(sets);
	return rc;
}

/* "12.0,8.0", "no GPU" (owned; NULL out of memory) */
static char *gpus_text(const struct fleet_machine *m)
{
	struct ow_str b = {0};
	char *out = NULL;
	for (size_t g = 0; g < m->nccs; g++)
		ow_str_printf(&b, "%s%d.%d", g ? "," : "", m->ccs[g] / 10, m->ccs[g] % 10);
	if (!m->nccs)
		ow_str_puts(&b, "no GPU");
	return ow_str_take(&b, &out) ? NULL : out;
}

void fleet_plan_text(const struct cli *c, const struct fleet *f)
{
	char drv[16];
	cli_out(c, "machines:\n");
	for (size_t i = 0; i < f->n; i++) {
		const struct fleet_machine *m = &f->m[i];
		char *gpus = gpus_text(m);
		cli_out(c, "  %s (%s, %s, GPU %s, %s): ", m->name, *m->python ? m->python : "no python",
		        m->platform, gpus ? gpus : "?",
		        m->driver ? fleet_driver_text(m->driver, drv, sizeof drv) : "no driver");
		free(gpus);
		if (m->set_id)
			cli_out(c, "set %lld, %s\n", (long long)m->set_id, m->target);
		else
			cli_out(c, "NOTHING: %s\n", m->why ? m->why : "no set fits");
	}
}

static json_t *opt_str(const char *s)
{
	return s ? json_string(s) : json_null();
}

json_t *fleet_plan_json(const struct fleet *f)
{
	json_t *a = json_array();
	char drv[16], cc[16];
	for (size_t i = 0; i < f->n; i++) {
		const struct fleet_machine *m = &f->m[i];
		json_t *gpus = json_array();
		for (size_t g = 0; g < m->nccs; g++) {
			snprintf(cc, sizeof cc, "%d.%d", m->ccs[g] / 10, m->ccs[g] % 10);
			json_array_append_new(gpus, json_string(cc));
		}
		json_array_append_new(
			a, json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "name",
			             m->name, "probe", m->file, "python", opt_str(*m->python ? m->python : NULL),
			             "platform", opt_str(*m->platform ? m->platform : NULL), "gpus", gpus,
			             "driver", m->driver ? json_string(fleet_driver_text(m->driver, drv, sizeof drv)) : json_null(),
			             "set", m->set_id ? json_integer(m->set_id) : json_null(), "target",
			             opt_str(m->target), "variant", opt_str(m->variant), "requirements",
			             opt_str(m->req), "why", opt_str(m->why)));
	}
	return a;
}

/* ---- export --probes: machines.json and INSTALL.txt's lines ---------------------- */

int fleet_split_target(const char *t, struct fleet_target_parts *out)
{
	size_t a = strcspn(t, " -");
	if (!t[a] || a >= sizeof out->variant)
		return -1;
	const char *py = t + a + 1;
	size_t b = strcspn(py, "-");
	if (!py[b] || b >= sizeof out->python || strlen(py + b + 1) >= sizeof out->platform)
		return -1;
	snprintf(out->variant, sizeof out->variant, "%.*s", (int)a, t);
	snprintf(out->python, sizeof out->python, "%.*s", (int)b, py);
	snprintf(out->platform, sizeof out->platform, "%s", py + b + 1);
	return 0;
}

static char *install_note(const struct fleet *f)
{
	struct ow_str b = {0};
	char *out = NULL;
	ow_str_puts(&b, "3. The lab's machines (machines.json, from their probes): on each,\n"
	                "    offwheel install . --pubkey KEY.pub --venv DIR\n"
	                "   picks its set by the machine's name; by hand, the file it uses:\n");
	for (size_t i = 0; i < f->n; i++) {
		const struct fleet_machine *m = &f->m[i];
		if (m->set_id)
			ow_str_printf(&b, "    %s: %s\n", m->name, m->req ? m->req : m->target);
		else
			ow_str_printf(&b, "    %s: NOTHING on this stick fits it: %s\n", m->name,
			              m->why ? m->why : "no set fits");
	}
	return ow_str_take(&b, &out) ? NULL : out;
}

int fleet_export_texts(ow_store *s, struct fleet *f, const struct ow_export_plan *p, char **json,
                       char **note)
{
	struct fleet_set *sets = calloc(p->nsets + 1, sizeof *sets);
	struct fleet_target_parts *parts = calloc(p->nsets + 1, sizeof *parts);
	char **reqs = calloc(p->nsets + 1, sizeof *reqs);
	int rc = sets && parts && reqs ? 0 : OW_ENOMEM;
	for (size_t i = 0; !rc && i < p->nsets; i++) {
		const struct ow_export_set *e = &p->sets[i];
		bool ok = e->id > 0 && e->target && !fleet_split_target(e->target, &parts[i]);
		reqs[i] = ow_aprintf("requirements/%s.txt", e->req_name);
		sets[i] = (struct fleet_set){.id = e->id, .target = e->target ? e->target : "",
		                             .variant = parts[i].variant, .python = parts[i].python,
		                             .platform = parts[i].platform, .req = reqs[i],
		                             .complete = ok && e->complete};
		rc = reqs[i] ? 0 : OW_ENOMEM;
	}
	if (!rc)
		rc = fleet_plan(s, f, sets, p->nsets);
	json_t *doc = rc ? NULL : json_pack("{s:s, s:o}", "format", "offwheel-machines-1",
	                                    "machines", fleet_plan_json(f));
	*json = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_ENSURE_ASCII | JSON_SORT_KEYS) : NULL;
	*note = *json ? install_note(f) : NULL;
	json_decref(doc);
	for (size_t i = 0; reqs && i < p->nsets; i++)
		free(reqs[i]);
	free(reqs);
	free(parts);
	free(sets);
	return !rc && *note ? 0 : ow_err(OW_ENOMEM, "out of memory");
}
