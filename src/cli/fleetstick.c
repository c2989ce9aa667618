/* fleetstick.c - the stick's sets and the pick for this machine (see
 * fleetstick.h). */
#include "fleetstick.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "offwheel/export.h"
#include "offwheel/fleet.h"
#include "offwheel/str.h"

static int load_doc(const char *dir, const char *name, bool optional, json_t **out)
{
	char *path = ow_aprintf("%s/%s", dir, name);
	json_error_t e;
	FILE *f = path ? fopen(path, "rb") : NULL;
	int rc = 0;
	*out = NULL;
	if (!path)
		rc = ow_err(OW_ENOMEM, "out of memory");
	else if (!f && !optional)
		rc = ow_err(OW_ENOENT, "%s: cannot read it — is %s an offwheel stick?", path, dir);
	else if (f && !(*out = json_loadf(f, JSON_REJECT_DUPLICATES, &e)))
		rc = ow_err(OW_EINVAL, "%s: not JSON (%s, line %d) — export the stick again", path,
		            e.text, e.line);
	else if (*out && !json_is_object(*out))
		rc = ow_err(OW_EINVAL, "%s: not a JSON object — export the stick again", path);
	if (f)
		fclose(f);
	free(path);
	if (rc) {
		json_decref(*out);
		*out = NULL;
	}
	return rc;
}

static void set_from(struct stick_set *s, json_t *o)
{
	s->id = json_integer_value(json_object_get(o, "id"));
	s->target = json_string_value(json_object_get(o, "target"));
	s->req = json_string_value(json_object_get(o, "requirements"));
	s->complete = json_is_true(json_object_get(o, "complete"));
	s->devices = json_object_get(o, "devices");
	s->parsed = s->target && fleet_split_target(s->target, &s->parts) == 0;
}

static int machines_from(const char *dir, struct stick *st)
{
	json_t *doc;
	int rc = load_doc(dir, "machines.json", true, &doc);
	if (rc || !doc)
		return rc;
	const char *fmt = json_string_value(json_object_get(doc, "format"));
	json_t *m = json_object_get(doc, "machines");
	if (!fmt || strcmp(fmt, FLEET_MACHINES_FORMAT) || !json_is_array(m))
		rc = ow_err(OW_EINVAL, "%s/machines.json: not an " FLEET_MACHINES_FORMAT
		                       " document — export the stick again with --probes", dir);
	else
		st->machines = json_incref(m);
	json_decref(doc);
	return rc;
}

int stick_load(const char *dir, struct stick *st)
{
	*st = (struct stick){0};
	int rc = load_doc(dir, OW_EXPORT_MANIFEST, false, &st->manifest);
	json_t *sets = rc ? NULL : json_object_get(st->manifest, "sets"), *o;
	size_t i;
	if (!rc && !json_is_array(sets))
		rc = ow_err(OW_EINVAL, "%s/%s: it has no sets", dir, OW_EXPORT_MANIFEST);
	if (!rc && !(st->sets = calloc(json_array_size(sets) + 1, sizeof *st->sets)))
		rc = ow_err(OW_ENOMEM, "out of memory");
	if (!rc)
		json_array_foreach(sets, i, o)
			set_from(&st->sets[st->nsets++], o);
	if (!rc)
		rc = machines_from(dir, st);
	if (rc)
		stick_dispose(st);
	return rc;
}

void stick_dispose(struct stick *st)
{
	free(st->sets);
	json_decref(st->manifest);
	json_decref(st->machines);
	*st = (struct stick){0};
}

json_t *stick_machine(const struct stick *st, const char *name)
{
	size_t i;
	json_t *m;
	json_array_foreach(st->machines, i, m) {
		const char *n = json_string_value(json_object_get(m, "name"));
		if (n && strcmp(n, name) == 0)
			return m;
	}
	return NULL;
}

void stick_pick_dispose(struct stick_pick *pk)
{
	free(pk->why);
	*pk = (struct stick_pick){0};
}

/* The manifest's verdicts for the machine's GPUs: o->runs, o->why_not
 * (owned by *why). */
static void judge(const struct stick_set *s, const struct ow_probe *p, struct ow_fleet_option *o,
                  char **why)
{
	o->variant = s->parts.variant;
	o->runs = 1;
	for (size_t g = 0; g < p->ngpus && o->runs != 0 && ow_variant_min_driver(o->variant) > 0; g++) {
		char cc[16];
		int runs = -1;
		size_t i;
		json_t *d;
		snprintf(cc, sizeof cc, "%d.%d", p->gpus[g].cc / 10, p->gpus[g].cc % 10);
		json_array_foreach(s->devices, i, d) {
			const char *dcc = json_string_value(json_object_get(d, "cc"));
			json_t *r = json_object_get(d, "runs");
			if (dcc && strcmp(dcc, cc) == 0 && json_is_boolean(r))
				runs = runs == 0 ? 0 : json_is_true(r);
			if (runs == 0 && !*why) {
				const char *det = json_string_value(json_object_get(d, "detail"));
				*why = ow_aprintf("%s: %s", cc, det ? det : "the audit says it would not run");
			}
		}
		o->runs = runs == 0 ? 0 : runs < 0 || o->runs < 0 ? -1 : 1;
	}
	o->why_not = *why;
}

static const struct ow_probe_python *python_for(const struct ow_probe *p, const char *tag)
{
	for (size_t i = 0; i < p->npythons; i++)
		if (!p->pythons[i].error && p->pythons[i].nabis &&
		    strcmp(p->pythons[i].abis[0], tag) == 0)
			return &p->pythons[i];
	return NULL;
}

/* machines.json names the machine: its set, still fitting this machine */
static int by_name(const struct stick *st, const struct ow_probe *p, json_t *m,
                   struct stick_pick *out)
{
	const char *req = json_string_value(json_object_get(m, "requirements"));
	const char *why = json_string_value(json_object_get(m, "why"));
	out->by_name = true;
	for (size_t i = 0; req && i < st->nsets && !out->set; i++)
		if (st->sets[i].req && strcmp(st->sets[i].req, req) == 0 && st->sets[i].parsed)
			out->set = &st->sets[i];
	if (!out->set) {
		out->why = req ? ow_aprintf("machines.json gives it %s, which is not a set of this "
		                            "stick's manifest — export the stick again", req)
		               : ow_aprintf("%s", why ? why : "machines.json gives it no set");
		return out->why ? 0 : OW_ENOMEM;
	}
	const struct stick_set *s = out->set;
	struct ow_fleet_option o;
	char *judged = NULL, *no = NULL;
	int chosen = -1;
	judge(s, p, &o, &judged);
	int rc = ow_fleet_pick(p->driver, p->ngpus, &o, 1, &chosen, &no);
	if (!rc && chosen == 0 && !(out->py = python_for(p, s->parts.python)))
		no = ow_aprintf("no interpreter here is %s (probe --python PY, or install --python "
		                "PY, names one)", s->parts.python);
	if (!rc && (chosen != 0 || !out->py)) {
		out->why = ow_aprintf("machines.json gives it %s, but on this machine: %s", s->target,
		                      no ? no : "it does not fit");
		out->set = NULL;
		out->py = NULL;
		rc = out->why ? 0 : OW_ENOMEM;
	}
	free(judged);
	free(no);
	return rc;
}

static bool platform_of(const struct ow_probe *p, const char *plat)
{
	for (size_t i = 0; i < p->nplatforms; i++)
		if (strcmp(p->platforms[i], plat) == 0)
			return true;
	return false;
}

/* One interpreter: the sets for its ABI tag and the machine's platforms;
 * *chosen an index of st->sets or -1 with *why. */
static int pick_python(const struct stick *st, const struct ow_probe *p,
                       const struct ow_probe_python *py, int *chosen, char **why)
{
	struct ow_fleet_option *opts = calloc(st->nsets + 1, sizeof *opts);
	char **whys = calloc(st->nsets + 1, sizeof *whys);
	size_t *idx = calloc(st->nsets + 1, sizeof *idx), k = 0;
	int pick = -1, rc = opts && whys && idx ? 0 : OW_ENOMEM;
	for (size_t i = 0; !rc && i < st->nsets; i++) {
		const struct stick_set *s = &st->sets[i];
		if (!s->parsed || !s->complete || !s->req || strcmp(s->parts.python, py->abis[0]) ||
		    !platform_of(p, s->parts.platform))
			continue;
		judge(s, p, &opts[k], &whys[k]);
		idx[k++] = i;
	}
	*chosen = -1;
	*why = NULL;
	if (!rc && k)
		rc = ow_fleet_pick(p->driver, p->ngpus, opts, k, &pick, why);
	if (!rc && pick >= 0)
		*chosen = (int)idx[pick];
	for (size_t i = 0; whys && i < k; i++)
		free(whys[i]);
	free(whys);
	free(idx);
	free(opts);
	return rc;
}

static int by_probe(const struct stick *st, const struct ow_probe *p, struct stick_pick *out)
{
	struct ow_str b = {0};
	int rc = 0;
	for (size_t i = 0; !rc && i < p->npythons && !out->set; i++) {
		const struct ow_probe_python *py = &p->pythons[i];
		int chosen = -1;
		char *why = NULL;
		if (py->error || !py->nabis || strcmp(py->impl, "cpython"))
			continue;
		rc = pick_python(st, p, py, &chosen, &why);
		if (chosen >= 0) {
			out->set = &st->sets[chosen];
			out->py = py;
		} else if (why) {
			ow_str_printf(&b, "%s%s (%s): %s", b.n ? "; " : "", py->abis[0], py->path, why);
		}
		free(why);
	}
	if (!rc && !out->set && !b.n)
		ow_str_printf(&b, "no set on this stick is for its Pythons and platform (%s); run "
		              "'offwheel probe' on it and make the stick with --probes",
		              p->nplatforms ? p->platforms[0] : "no platform tag");
	if (!rc && !out->set)
		rc = ow_str_take(&b, &out->why) ? OW_ENOMEM : 0;
	ow_str_dispose(&b);
	return rc;
}

int stick_pick_for(const struct stick *st, const struct ow_probe *p, struct stick_pick *out)
{
	*out = (struct stick_pick){0};
	json_t *m = stick_machine(st, p->name);
	int rc = m ? by_name(st, p, m, out) : by_probe(st, p, out);
	if (rc) {
		stick_pick_dispose(out);
		return ow_err(OW_ENOMEM, "out of memory");
	}
	return 0;
}
