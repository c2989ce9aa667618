/* fleetrow.c - one machine's row of the lab: what the table shows, each
 * step's state and the fix for each one not done (see fleetlab.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fleetlab.h"
#include "offwheel/error.h"
#include "offwheel/str.h"

static const char *str_at(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* "12.0 NVIDIA GeForce RTX 5090, 8.0 ..." or "no GPU" */
static char *gpus_text(const struct lab_row *r)
{
	struct ow_str b = {0};
	size_t i;
	json_t *g;
	char *out = NULL;
	json_array_foreach(json_object_get(r->probe, "gpus"), i, g)
		ow_str_printf(&b, "%s%s %s", i ? ", " : "", str_at(g, "cc") ? str_at(g, "cc") : "?",
		              str_at(g, "name") ? str_at(g, "name") : "");
	if (!b.n)
		ow_str_puts(&b, r->probe ? "no GPU" : "");
	return ow_str_take(&b, &out) ? NULL : out;
}

static char *driver_text(const struct lab_row *r)
{
	json_t *d = json_object_get(r->probe, "driver");
	const char *v = str_at(d, "version"), *rel = str_at(d, "release");
	if (!r->probe)
		return strdup("");
	if (!v)
		return strdup("none");
	return rel ? ow_aprintf("%s (%s)", v, rel) : strdup(v);
}

/* the machines.json entry's Python, else the probe's first interpreter's */
static char *python_text(const struct lab_row *r)
{
	const char *py = str_at(r->entry, "python");
	json_t *p0 = json_array_get(json_object_get(r->probe, "pythons"), 0);
	const char *ver = str_at(json_object_get(r->report, "python"), "version");
	if (!ver)
		ver = str_at(p0, "version");
	if (!py)
		py = json_string_value(json_array_get(json_object_get(p0, "abis"), 0));
	if (py && ver)
		return ow_aprintf("%s (%s)", py, ver);
	return strdup(py ? py : ver ? ver : "");
}

static char *when_text(const struct lab_row *r)
{
	json_t *t = json_object_get(r->report, "finished_unix");
	char buf[32];
	struct tm tm;
	time_t when = (time_t)json_integer_value(t);
	if (!json_is_integer(t) || !gmtime_r(&when, &tm) ||
	    !strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm))
		return strdup("");
	return strdup(buf);
}

/* The set: the report's (what was installed), else machines.json's. */
static void set_step(struct lab_row *r)
{
	json_t *rs = json_object_get(r->report, "set");
	const char *t = str_at(rs, "target") ? str_at(rs, "target") : str_at(r->entry, "target");
	const char *why = str_at(r->report, "why") ? str_at(r->report, "why") : str_at(r->entry, "why");
	r->set = strdup(t ? t : "");
	if (t) {
		r->steps[LAB_SET] = LAB_OK;
	} else if (why) {
		r->steps[LAB_SET] = LAB_FAILED;
		r->fix[LAB_SET] = ow_aprintf("no set on the stick fits it: %s — update what the reason "
		                             "names (the driver, the Python), probe it again, and make "
		                             "the stick again with 'sync --probes' and 'export --probes'",
		                             why);
	} else {
		r->steps[LAB_SET] = LAB_PENDING;
		r->fix[LAB_SET] = ow_aprintf("the stick was made without this machine: make it again "
		                             "with 'sync --probes' and 'export --probes' (or run "
		                             "'offwheel install' on it: it matches by the probe)");
	}
}

static void install_step(struct lab_row *r)
{
	json_t *in = json_object_get(r->report, "install");
	const char *err = str_at(in, "error");
	if (!r->report) {
		r->steps[LAB_INSTALLED] = LAB_PENDING;
		r->fix[LAB_INSTALLED] = strdup("not installed yet: run 'offwheel install STICK "
		                               "--pubkey KEY.pub --venv DIR' on it");
		return;
	}
	r->installed = json_is_true(json_object_get(in, "ok"));
	r->steps[LAB_INSTALLED] = r->installed ? LAB_OK : LAB_FAILED;
	if (!r->installed && r->steps[LAB_SET] == LAB_FAILED)
		r->steps[LAB_INSTALLED] = LAB_NA; /* nothing to install: the set's fix says why */
	else if (!r->installed)
		r->fix[LAB_INSTALLED] = ow_aprintf("the install failed: %s — fix that and run "
		                                   "'offwheel install' again",
		                                   err ? err : "(no reason given)");
}

static void smoke_step(struct lab_row *r)
{
	json_t *sm = json_object_get(r->report, "smoke");
	const char *detail = str_at(sm, "detail");
	r->smoke = str_at(sm, "verdict");
	if (r->smoke && strcmp(r->smoke, "passed") == 0) {
		r->steps[LAB_SMOKE] = LAB_OK;
	} else if (r->smoke && strcmp(r->smoke, "failed") == 0) {
		r->steps[LAB_SMOKE] = LAB_FAILED;
		r->fix[LAB_SMOKE] = ow_aprintf("the GPU cannot run the installed set: %s — 'offwheel "
		                               "doctor' on the machine names the fix",
		                               detail ? detail : "(no detail)");
	} else if (r->smoke && strcmp(r->smoke, "no-driver") == 0) {
		r->steps[LAB_SMOKE] = LAB_NA; /* a CPU machine: nothing to run on */
	} else {
		r->steps[LAB_SMOKE] = r->steps[LAB_SET] == LAB_FAILED ? LAB_NA : LAB_PENDING;
	}
}

int lab_fill_row(struct lab_row *r)
{
	r->steps[LAB_PROBED] = r->probe ? LAB_OK : LAB_FAILED;
	if (!r->probe)
		r->fix[LAB_PROBED] = ow_aprintf("no probes/%s.json: run 'offwheel probe --name NAME' "
		                                "at the stick's root on the machine", "NAME");
	set_step(r);
	install_step(r);
	smoke_step(r);
	r->gpus = gpus_text(r);
	r->driver = driver_text(r);
	r->python = python_text(r);
	r->when = when_text(r);
	bool ok = r->gpus && r->driver && r->python && r->set && r->when &&
	          (r->probe || r->fix[LAB_PROBED]);
	for (int s = LAB_SET; s < LAB_NSTEPS; s++)
		ok = ok && (r->steps[s] == LAB_OK || r->steps[s] == LAB_NA || r->fix[s] ||
		            s == LAB_SMOKE);
	return ok ? 0 : OW_ENOMEM;
}
