/* cmd_doctor.c - offwheel doctor: "no kernel image" diagnosed end to end. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "offwheel/doctor.h"
#include "offwheel/gpucompat.h"
#include "offwheel/str.h"
#include "gpurender.h"
#include "targetopts.h"

static const char usage[] = "doctor [--python PY | --site-packages DIR] [--device CC[,CC]] "
                            "[--driver VER]";
static const char description[] =
	"Walk the whole path behind \"no kernel image is available for execution on the\n"
	"device\", step by step with pass / FAIL: the driver and its version; the devices\n"
	"and their compute capabilities; the smoke kernel; the installed torch, its CUDA\n"
	"variant and architectures; the verdict.  When it fails, print the fix: which\n"
	"channel and CUDA variant carry images for the device (a stable release first,\n"
	"the nightly channel only when no stable build does) and the exact commands,\n"
	"online or through 'offwheel export' on a stick.  Without a GPU, --device CC\n"
	"audits the installed set for that device statically.\n"
	"Exit status: 0 the set runs; 3 it cannot; 5 no GPU and no --device; 1 errors.";

enum { OPT_PYTHON = 256, OPT_SITE, OPT_DEVICE, OPT_DRIVER };
static const struct cli_opt opts[] = {
	{"python", OPT_PYTHON, required_argument, "PY", "the Python whose torch to check (default python3; given up after 60 s without an answer, $OFFWHEEL_PYTHON_TIMEOUT seconds when set)"},
	{"site-packages", OPT_SITE, required_argument, "DIR", "check the torch installed in DIR instead"},
	{"device", OPT_DEVICE, required_argument, "CC[,CC]", "judge for compute capability CC (12.0, sm_86; 12.0,8.0: each in turn)"},
	{"driver", OPT_DRIVER, required_argument, "VER", "driver version for the static rules (12.8)"},
	{NULL, 0, 0, NULL, NULL},
};

struct doc_args {
	struct ow_doctor_opts o;
	int ccs[CLI_MAX_DEVICES]; /* --device 12.0,8.0: each judged in turn */
	size_t nccs;
};

static int on_opt(struct cli *c, int key, const char *arg, void *ud)
{
	struct doc_args *a = ud;
	struct ow_doctor_opts *o = &a->o;
	switch (key) {
	case OPT_PYTHON: o->python = arg; return 0;
	case OPT_SITE: o->site = arg; return 0;
	case OPT_DEVICE: {
		int rc = cli_parse_devices(c, arg, a->ccs, &a->nccs);
		o->cc = rc ? 0 : a->ccs[0];
		return rc;
	}
	case OPT_DRIVER:
		if (ow_gpu_parse_driver(arg, &o->driver))
			return cli_usage_error(c, "--driver: '%s' is not a driver version (12.8, 12080)", arg);
		return 0;
	}
	return 2;
}

static json_t *fix_json(const struct ow_doctor_fix *f)
{
	if (!f->needed)
		return json_null();
	json_t *cmds = json_array();
	for (size_t i = 0; i < f->n_commands; i++)
		json_array_append_new(cmds, json_pack("{s:s, s:s}", "label", f->labels[i], "command",
		                                      f->commands[i]));
	return json_pack("{s:s, s:s, s:s, s:s, s:o, s:s, s:s, s:o}", "channel", f->channel,
	                 "variant", f->variant, "since", f->since, "why", f->why, "note",
	                 f->note[0] ? json_string(f->note) : json_null(), "python", f->python,
	                 "platform", f->platform, "commands", cmds);
}

static json_t *doctor_doc(const struct ow_doctor_report *r, int rc)
{
	char cc[16], drv[16];
	json_t *steps = json_array();
	for (int i = 0; i < OW_DOC_NSTEPS; i++)
		json_array_append_new(steps, json_pack("{s:s, s:s, s:s}", "step", r->steps[i].name,
		                                       "state", ow_step_state_name(r->steps[i].state),
		                                       "text", r->steps[i].text ? r->steps[i].text : ""));
	return json_pack(
	        "{s:s, s:b, s:i, s:o, s:o, s:o, s:b, s:o, s:o, s:o, s:o}", "command", "doctor", "ok",
	        rc == 0, "exit_code", ow_err_exit_code(rc), "error", cli_gpu_error_json(rc, ow_err_detail()),
	        "cc", r->cc ? json_string(cli_gpu_cc(r->cc, cc, sizeof cc)) : json_null(), "driver",
	        r->driver ? json_string(cli_gpu_driver(r->driver, drv, sizeof drv)) : json_null(),
	        "cc_from_gpu", r->cc_from_gpu, "steps", steps, "install",
	        cli_gpu_install_json(r->smoke->install, r->smoke->install_rc, r->smoke->install_detail),
	        "libraries", cli_gpu_libs_json(r->libs, r->n_libs), "fix", fix_json(&r->fix));
}

static void render_fix(const struct ow_doctor_fix *f)
{
	cli_wrapf(stdout, "\nfix: install %s %s wheels: %s.\n", f->channel, f->variant, f->why);
	if (f->note[0])
		cli_wrapf(stdout, "note: %s.\n", f->note);
	for (size_t i = 0; i < f->n_commands; i++) {
		cli_wrapf(stdout, "  # %s\n  ", f->labels[i]);
		cli_wrap_command(stdout, f->commands[i]);
		cli_wrap(stdout, "\n");
	}
	if (!strcmp(f->python, "X.Y"))
		cli_wrap(stdout, "(replace X.Y with the target's Python version)\n");
}

/* A step's line: "[FAIL       ] driver       TEXT". */
static void step_line(const struct ow_doctor_step *st, const char *text)
{
	char head[64];
	snprintf(head, sizeof head, "[%-11s] %-12s ", ow_step_state_name(st->state), st->name);
	cli_wrapped(stdout, head, text);
}

/* Each thing is said once: a failed step whose text the verdict repeats
 * (the driver's five lines, a missing torch) is said in its row by its
 * first clause, and whole in the verdict, the last line. */
static void step_row(const struct ow_doctor_report *r, int i)
{
	const char *t = r->steps[i].text ? r->steps[i].text : "";
	const char *v = r->steps[OW_DOC_VERDICT].text;
	if (r->steps[i].state != OW_STEP_FAIL || !*t || !v || !strstr(v, t)) {
		step_line(&r->steps[i], t);
		return;
	}
	const char *colon = strstr(t, ": "), *dash = strstr(t, " — ");
	const char *end = colon && (!dash || colon < dash) ? colon : dash;
	size_t n = end ? (size_t)(end - t) : strlen(t);
	char *brief = ow_aprintf("%.*s (the verdict below says why and what to do)", (int)n, t);
	step_line(&r->steps[i], brief ? brief : t);
	free(brief);
}

static void render_text(const struct cli *c, const struct ow_doctor_report *r, int rc)
{
	if (c->verbosity >= 0) {
		for (int i = 0; i < OW_DOC_VERDICT; i++)
			step_row(r, i);
		if (r->n_libs) {
			printf("\nlibraries:\n");
			cli_gpu_libs_lines(stdout, r->smoke->install, r->libs, r->n_libs, "  ");
		}
		if (r->fix.needed)
			render_fix(&r->fix);
	}
	/* the answer, last (and alone with -q) */
	step_line(&r->steps[OW_DOC_VERDICT], r->steps[OW_DOC_VERDICT].text ?
	                                          r->steps[OW_DOC_VERDICT].text : "");
	if (rc && rc != r->verdict_rc) /* an error the verdict does not say */
		cli_wrapped(stderr, "offwheel doctor: ", ow_err_detail());
}

/* One device's answer, for the JSON of several ("devices"). */
static json_t *device_json(const struct ow_doctor_report *r, int rc)
{
	char cc[16];
	return json_pack("{s:o, s:b, s:i, s:s, s:o}", "cc",
	                 r->cc ? json_string(cli_gpu_cc(r->cc, cc, sizeof cc)) : json_null(), "ok",
	                 rc == 0, "exit_code", ow_err_exit_code(rc), "verdict",
	                 r->steps[OW_DOC_VERDICT].text ? r->steps[OW_DOC_VERDICT].text : "", "fix",
	                 fix_json(&r->fix));
}

/* --device 12.0,8.0: the walk for each device in turn; the JSON is the
 * first device's document with every device's answer in "devices"; the
 * last line says whether the set runs on every device named. */
static int run_devices(struct cli *c, struct doc_args *a)
{
	json_t *devs = json_array(), *first = NULL;
	int worst = 0;
	struct ow_str names = {0};
	for (size_t d = 0; d < a->nccs; d++) {
		struct ow_doctor_report *r = NULL;
		a->o.cc = a->ccs[d];
		int rc = ow_doctor_run(&a->o, &r);
		if (!r || !r->smoke) {
			ow_doctor_report_free(r);
			json_decref(devs);
			ow_str_dispose(&names);
			return cli_fail(c, rc);
		}
		char cc[16];
		ow_str_printf(&names, "%s%s", d ? ", " : "", cli_gpu_cc(a->ccs[d], cc, sizeof cc));
		json_array_append_new(devs, device_json(r, rc));
		if (c->json && !first)
			first = doctor_doc(r, rc);
		else if (!c->json) {
			if (c->verbosity >= 0)
				cli_wrapf(stdout, "%s== for compute capability %s\n", d ? "\n" : "", cc);
			render_text(c, r, rc);
		}
		worst = cli_worse_exit(worst, ow_err_exit_code(rc));
		ow_doctor_report_free(r);
	}
	if (first) {
		json_object_set_new(first, "devices", devs);
		json_object_set_new(first, "ok", json_boolean(worst == 0));
		json_object_set_new(first, "exit_code", json_integer(worst));
		cli_json_out(first);
	} else {
		json_decref(devs);
		cli_wrapf(stdout, "doctor: the installed set %s every device named (%s)\n",
		          worst == 0 ? "runs on" : "does NOT run on", names.p ? names.p : "");
	}
	ow_str_dispose(&names);
	return worst;
}

int cmd_doctor(struct cli *c, int argc, char **argv)
{
	struct doc_args a = {0};
	const struct cli_spec cs = {opts, usage, description, on_opt, &a};
	int exitc;
	if (!cli_parse_no_operands(c, argc, argv, &cs, &exitc))
		return exitc;
	if (a.o.python && a.o.site)
		return cli_usage_error(c, "doctor: give --python or --site-packages, not both");
	if (a.nccs > 1)
		return run_devices(c, &a);
	struct ow_doctor_report *r = NULL;
	int rc = ow_doctor_run(&a.o, &r);
	if (!r || !r->smoke) {
		ow_doctor_report_free(r);
		return cli_fail(c, rc);
	}
	if (c->json)
		cli_json_out(doctor_doc(r, rc));
	else
		render_text(c, r, rc);
	ow_doctor_report_free(r);
	return ow_err_exit_code(rc);
}
