/* cmd_install.c - offwheel install: on a lab machine, install its set from
 * the stick and write what happened back onto it (docs/fleet.md). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "clitext.h"
#include "fleetinstall.h"
#include "fleetjson.h"
#include "fleetstick.h"
#include "mixedargs.h"
#include "offwheel/export.h"
#include "offwheel/smoke.h"
#include "offwheel/str.h"

static const char usage[] =
	"install STICK --pubkey KEY.pub (--venv DIR | --python PY) [--name NAME] [--state FILE]";
static const char description[] =
	"On a lab machine: check the stick (signature, hashes, rollback: as 'check'),\n"
	"probe this machine (as 'probe'), pick its set (machines.json by the machine's\n"
	"name, the host name by default; else by matching the probe against the sets'\n"
	"targets and the devices they were audited for, as 'sync --probes' picks),\n"
	"install it offline with pip exactly as INSTALL.txt says (--no-index\n"
	"--require-hashes --find-links STICK/wheels -r STICK/requirements/...) into a\n"
	"new venv (made with the interpreter the set is for) or the given Python's\n"
	"environment, run 'smoke' against it when there is an NVIDIA driver, and write\n"
	"STICK/reports/NAME.json (what was installed, the smoke result, the driver's\n"
	"answer per library) when the stick is writable; 'offwheel fleet STICK' shows\n"
	"them all.  Exit 0 installed (and the smoke passed); 3 the stick is not valid,\n"
	"no set fits this machine, or the smoke found the set cannot run; 5 the driver\n"
	"could not run the smoke; 1 pip or the venv failed.";

enum { OPT_PUBKEY = 400, OPT_NAME, OPT_VENV, OPT_PYTHON, OPT_STATE };
static const struct cli_opt opts[] = {
	{"pubkey", OPT_PUBKEY, required_argument, "KEY.pub", "the trusted public key (required)"},
	{"venv", OPT_VENV, required_argument, "DIR", "install into this venv (made when it is not one yet)"},
	{"python", OPT_PYTHON, required_argument, "PY", "install into this interpreter's environment instead"},
	{"name", OPT_NAME, required_argument, "NAME", "this machine's name in machines.json (default: the host name)"},
	{"state", OPT_STATE, required_argument, "FILE", "the accepted-sequence state file (as check)"},
	{NULL, 0, 0, NULL, NULL},
};

struct install_args {
	const char *pubkey, *name, *venv, *python, *state;
};

struct install_run {
	const char *stick;
	struct ow_check_report chk;
	struct ow_probe *p;
	struct stick st;
	struct stick_pick pk;
	char *python; /* the environment's interpreter */
	json_t *installed;
	int install_rc;
	char *install_err;
	struct ow_smoke_report *smoke;
	int smoke_rc;
	char *smoke_err;
	long long started, finished;
	char *report_path, *report_err;
};

static int on_opt(struct cli *c, int key, const char *arg, void *ud)
{
	struct install_args *a = ud;
	(void)c;
	switch (key) {
	case OPT_PUBKEY: a->pubkey = arg; return 0;
	case OPT_NAME: a->name = arg; return 0;
	case OPT_VENV: a->venv = arg; return 0;
	case OPT_PYTHON: a->python = arg; return 0;
	case OPT_STATE: a->state = arg; return 0;
	}
	return 2;
}

/* check, as 'offwheel check': 0, or the exit code (3: not valid) */
static int check_stick(struct cli *c, const struct install_args *a, struct install_run *r)
{
	struct ow_signify_pub pub;
	int rc = ow_signify_load_pub(a->pubkey, &pub);
	if (rc)
		return cli_fail(c, rc);
	struct ow_check_opts o = {.dir = r->stick, .pub = &pub, .state_path = a->state, .jobs = c->jobs};
	rc = ow_export_check(&o, &r->chk);
	if (rc && rc != OW_EVERIFY)
		return cli_fail(c, rc);
	char *dir = cli_printable_dup(r->stick);
	if (rc)
		cli_check_problem_lines(&r->chk);
	if (rc)
		rc = cli_fail(c, ow_err(OW_EVERIFY, "%s: NOT valid — %zu problem%s; nothing was "
		                                    "installed ('offwheel check' says the same)",
		                        dir ? dir : "", r->chk.n, r->chk.n == 1 ? "" : "s"));
	else
		cli_say(c, "%s: valid — '%s', sequence %lld signed by key %s\n", dir ? dir : "",
		        r->chk.name, (long long)r->chk.sequence, r->chk.key_id);
	free(dir);
	return rc;
}

/* ---- the report (docs/json/report.schema.json) ---- */

static json_t *opt_str(const char *s)
{
	return s ? cli_json_bytes(s, NULL) : json_null();
}

static json_t *lib_json(const struct ow_smoke_report *s, const struct ow_lib_check *l)
{
	const char *path = l->path ? l->path : "";
	if (s->install && s->install->site[0] && !strncmp(path, s->install->site, strlen(s->install->site)))
		path += strlen(s->install->site) + (path[strlen(s->install->site)] == '/');
	return json_pack("{s:s, s:o, s:s, s:I, s:I, s:I, s:b}", "package", l->pkg ? l->pkg : "",
	                 "path", cli_json_bytes(path, NULL), "answer", ow_load_status_name(l->status),
	                 "modules", (json_int_t)l->n_modules, "tried", (json_int_t)l->n_tried,
	                 "loaded", (json_int_t)l->n_loaded, "ok", l->ok);
}

static json_t *device_json(const struct ow_smoke_report *s, const struct ow_smoke_dev *d)
{
	const struct ow_smoke_dev *libs_of = d->same_as >= 0 ? &s->devs[d->same_as] : d;
	json_t *libs = json_array();
	char cc[16];
	for (size_t i = 0; i < libs_of->n_libs; i++)
		json_array_append_new(libs, lib_json(s, &libs_of->libs[i]));
	snprintf(cc, sizeof cc, "%d.%d", d->dev.cc / 10, d->dev.cc % 10);
	return json_pack("{s:i, s:o, s:s, s:s, s:b, s:o, s:o}", "ordinal", d->dev.ordinal, "name",
	                 cli_json_bytes(d->dev.name, NULL), "cc", cc, "kernel",
	                 d->kernel_run ? ow_smoke_status_name(d->kernel.status) : "skipped", "ok",
	                 d->rc == 0, "libraries", libs, "detail", opt_str(d->detail));
}

static const char *smoke_verdict(const struct install_run *r)
{
	if (!r->smoke)
		return r->install_rc || !r->pk.set ? "not-run" : "no-driver";
	return r->smoke_rc == 0 ? "passed" : r->smoke_rc == OW_ENODRIVER ? "no-driver" : "failed";
}

static json_t *smoke_json(const struct install_run *r)
{
	const struct ow_smoke_report *s = r->smoke;
	json_t *devs = json_array();
	char v[16];
	for (size_t i = 0; s && i < s->n_devs; i++)
		json_array_append_new(devs, device_json(s, &s->devs[i]));
	int drv = s ? s->driver : r->p->driver;
	json_t *driver = json_pack("{s:o, s:i, s:o, s:o}", "version",
	                           drv ? json_string(fleet_driver_text(drv, v, sizeof v)) : json_null(),
	                           "version_raw", drv, "library",
	                           opt_str(s ? s->libcuda : r->p->libcuda), "error",
	                           opt_str(s ? s->driver_detail : r->p->driver_error));
	return json_pack("{s:s, s:i, s:o, s:o, s:o}", "verdict", smoke_verdict(r), "exit_code",
	                 s ? ow_err_exit_code(r->smoke_rc) : 0, "detail", opt_str(r->smoke_err),
	                 "driver", driver, "devices", devs);
}

static json_t *set_json(const struct install_run *r)
{
	const struct stick_set *s = r->pk.set;
	if (!s)
		return json_null();
	return json_pack("{s:I, s:o, s:s, s:o}", "id", (json_int_t)s->id, "target",
	                 cli_json_bytes(s->target, NULL), "variant", s->parts.variant,
	                 "requirements", opt_str(s->req));
}

static json_t *python_json(const struct install_run *r)
{
	const struct ow_probe_python *py = r->pk.py;
	if (!py)
		return json_null();
	return json_pack("{s:o, s:s, s:s, s:o}", "path", cli_json_bytes(py->path, NULL), "version",
	                 py->version, "abi", py->nabis ? py->abis[0] : "", "environment",
	                 opt_str(r->python));
}

static json_t *report_json(const struct install_run *r)
{
	json_t *stick = json_pack("{s:o, s:I, s:s}", "name", cli_json_bytes(r->chk.name, NULL),
	                          "sequence", (json_int_t)r->chk.sequence, "key_id", r->chk.key_id);
	return json_pack("{s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:{s:b, s:o}, s:o, "
	                 "s:I, s:I}",
	                 "format", FLEET_REPORT_FORMAT, "tool", "offwheel " OW_VERSION, "machine",
	                 r->p->name, "stick", stick, "chosen_by",
	                 r->pk.set ? json_string(r->pk.by_name ? "name" : "probe") : json_null(),
	                 "set", set_json(r), "why", opt_str(r->pk.set ? NULL : r->pk.why), "python",
	                 python_json(r), "installed", r->installed ? json_incref(r->installed)
	                                                          : json_array(),
	                 "install", "ok", r->pk.set && !r->install_rc, "error", opt_str(r->install_err),
	                 "smoke", smoke_json(r), "started_unix", (json_int_t)r->started,
	                 "finished_unix", (json_int_t)r->finished);
}

/* ---- the steps ---- */

static int install_set(struct cli *c, const struct install_args *a, struct install_run *r)
{
	int rc = 0;
	if (a->venv)
		rc = fleet_make_venv(r->pk.py->executable && *r->pk.py->executable
		                             ? r->pk.py->executable : r->pk.py->path,
		                     a->venv, &r->python);
	else if (!(r->python = strdup(a->python)))
		rc = ow_err(OW_ENOMEM, "out of memory");
	if (!rc) {
		char *env = cli_printable_dup(a->venv ? a->venv : a->python);
		cli_say(c, "installing %s into %s\n", r->pk.set->req, env ? env : "");
		free(env);
		rc = fleet_pip_install(r->python, r->stick, r->pk.set->req, c->verbosity > 0);
	}
	if (!rc)
		rc = fleet_pip_list(r->python, &r->installed);
	if (rc)
		r->install_err = ow_err_detail_dup();
	return rc;
}

static void smoke_step(struct install_run *r)
{
	struct ow_smoke_opts o = {.python = r->python, .device = -1};
	r->smoke_rc = ow_smoke_run(&o, &r->smoke);
	if (r->smoke_rc)
		r->smoke_err = ow_err_detail_dup();
}

static void installed_line(const struct cli *c, const struct install_run *r)
{
	struct ow_str b = {0};
	size_t i;
	json_t *o;
	char *text = NULL;
	json_array_foreach(r->installed, i, o) {
		const char *n = json_string_value(json_object_get(o, "name"));
		if (n && (!strcmp(n, "torch") || !strcmp(n, "torchvision") || !strcmp(n, "torchaudio")))
			ow_str_printf(&b, "%s%s %s", b.n ? ", " : "", n,
			              json_string_value(json_object_get(o, "version")));
	}
	ow_str_printf(&b, " (%zu packages in the environment)", json_array_size(r->installed));
	char *safe = ow_str_take(&b, &text) ? NULL : cli_terminal_dup(text);
	cli_say(c, "installed: %s\n", safe ? safe : "");
	free(safe);
	free(text);
}

static void say_pick(const struct cli *c, const struct install_run *r)
{
	char *t = cli_printable_dup(r->pk.set->target);
	cli_say(c, "%s: set %lld, %s (%s) for %s\n", r->p->name, (long long)r->pk.set->id,
	        t ? t : "", r->pk.by_name ? "machines.json names this machine"
	                                  : "not in machines.json: matched by its probe",
	        r->pk.py->path);
	free(t);
}

static void say_end(struct cli *c, const struct install_run *r)
{
	if (r->smoke && !r->smoke_rc)
		cli_say(c, "smoke: PASSED — the installed set runs on %zu device(s)\n", r->smoke->n_devs);
	else if (r->smoke && r->smoke_err)
		cli_wrapped(stderr, "offwheel install: smoke: ", r->smoke_err);
	else if (r->pk.set && !r->install_rc)
		cli_say(c, "smoke: not run (no NVIDIA driver or GPU on this machine)\n");
	if (r->report_path) {
		char *p = cli_printable_dup(r->report_path);
		cli_say(c, "report written to %s\n", p ? p : "");
		free(p);
	} else if (r->report_err) {
		cli_wrapped(stderr, "offwheel install: warning: no report on the stick: ", r->report_err);
	}
}

static int finish(struct cli *c, struct install_run *r, int rc)
{
	r->finished = (long long)time(NULL);
	json_t *doc = report_json(r);
	if (fleet_write_report(r->stick, r->p->name, doc, &r->report_path))
		r->report_err = ow_err_detail_dup();
	if (c->json) {
		json_t *out = json_deep_copy(doc);
		json_object_set_new(out, "command", json_string("install"));
		json_object_set_new(out, "exit_code", json_integer(rc));
		json_object_set_new(out, "report_file", opt_str(r->report_path));
		json_object_set_new(out, "report_error", opt_str(r->report_err));
		cli_json_out(out);
	}
	json_decref(doc);
	say_end(c, r);
	return rc;
}

static int run(struct cli *c, const struct install_args *a, struct install_run *r)
{
	struct ow_probe_opts po = {.name = a->name, .pythons = &a->python, .npythons = a->python != NULL};
	int rc = check_stick(c, a, r);
	if (!rc && (rc = ow_probe_run(&po, &r->p)))
		return cli_fail(c, rc);
	if (!rc && (rc = stick_load(r->stick, &r->st)))
		return cli_fail(c, rc);
	if (!rc && (rc = stick_pick_for(&r->st, r->p, &r->pk)))
		return cli_fail(c, rc);
	if (rc)
		return rc;
	if (!r->pk.set) {
		char *why = cli_terminal_dup(r->pk.why ? r->pk.why : "");
		rc = cli_fail(c, ow_err(OW_ENOIMAGE, "%s: nothing on this stick fits it%s: %s",
		                        r->p->name, r->pk.by_name ? " (machines.json)" : "",
		                        why ? why : ""));
		free(why);
		return finish(c, r, rc);
	}
	say_pick(c, r);
	if ((r->install_rc = install_set(c, a, r)))
		return finish(c, r, cli_fail(c, r->install_rc));
	installed_line(c, r);
	if (r->p->driver && r->p->ngpus)
		smoke_step(r);
	return finish(c, r, r->smoke ? ow_err_exit_code(r->smoke_rc) : 0);
}

int cmd_install(struct cli *c, int argc, char **argv)
{
	struct install_args a = {0};
	const struct cli_spec cs = {opts, usage, description, on_opt, &a};
	int nops, first = cli_parse_mixed(c, argc, argv, &cs, &nops);
	if (first < 0)
		return cli_parse_exit(first);
	if (nops != 1)
		return cli_usage_error(c, "install: name one stick (the export's directory)");
	if (!a.pubkey)
		return cli_usage_error(c, "install: --pubkey KEY.pub is required (the key you trust)");
	if (!a.venv == !a.python)
		return cli_usage_error(c, "install: give --venv DIR (a new venv) or --python PY (its "
		                          "environment), one of them");
	if (a.name && ow_probe_name_problem(a.name))
		return cli_usage_error(c, "install: --name: %s", ow_probe_name_problem(a.name));
	struct install_run r = {.stick = argv[1], .started = (long long)time(NULL)};
	int rc = run(c, &a, &r);
	ow_check_report_dispose(&r.chk);
	stick_pick_dispose(&r.pk);
	stick_dispose(&r.st);
	ow_smoke_report_free(r.smoke);
	ow_probe_free(r.p);
	json_decref(r.installed);
	free(r.python);
	free(r.install_err);
	free(r.smoke_err);
	free(r.report_path);
	free(r.report_err);
	return rc;
}
