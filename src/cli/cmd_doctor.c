/* cmd_doctor.c - offwheel doctor: "no kernel image" diagnosed end to end. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "offwheel/doctor.h"
#include "offwheel/gpucompat.h"
#include "offwheel/str.h"
#include "gpurender.h"

static const char usage[] = "doctor [--python PY | --site-packages DIR] [--device CC] "
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
	{"device", OPT_DEVICE, required_argument, "CC", "judge for compute capability CC (12.0, sm_86)"},
	{"driver", OPT_DRIVER, required_argument, "VER", "driver version for the static rules (12.8)"},
	{NULL, 0, 0, NULL, NULL},
};

static int on_opt(struct cli *c, int key, const char *arg, void *ud)
{
	struct ow_doctor_opts *o = ud;
	switch (key) {
	case OPT_PYTHON: o->python = arg; return 0;
	case OPT_SITE: o->site = arg; return 0;
	case OPT_DEVICE:
		if (ow_gpu_parse_device(arg, &o->cc))
			return cli_usage_error(c, "--device: '%s' is not a compute capability (12.0, sm_86)", arg);
		return 0;
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

static void render_json(const struct ow_doctor_report *r, int rc)
{
	char cc[16], drv[16];
	json_t *steps = json_array();
	for (int i = 0; i < OW_DOC_NSTEPS; i++)
		json_array_append_new(steps, json_pack("{s:s, s:s, s:s}", "step", r->steps[i].name,
		                                       "state", ow_step_state_name(r->steps[i].state),
		                                       "text", r->steps[i].text ? r->steps[i].text : ""));
	cli_json_out(json_pack(
	        "{s:s, s:b, s:i, s:o, s:o, s:o, s:b, s:o, s:o, s:o, s:o}", "command", "doctor", "ok",
	        rc == 0, "exit_code", ow_err_exit_code(rc), "error", cli_gpu_error_json(rc, ow_err_detail()),
	        "cc", r->cc ? json_string(cli_gpu_cc(r->cc, cc, sizeof cc)) : json_null(), "driver",
	        r->driver ? json_string(cli_gpu_driver(r->driver, drv, sizeof drv)) : json_null(),
	        "cc_from_gpu", r->cc_from_gpu, "steps", steps, "install",
	        cli_gpu_install_json(r->smoke->install, r->smoke->install_rc, r->smoke->install_detail),
	        "libraries", cli_gpu_libs_json(r->libs, r->n_libs), "fix", fix_json(&r->fix)));
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

int cmd_doctor(struct cli *c, int argc, char **argv)
{
	struct ow_doctor_opts o = {0};
	const struct cli_spec cs = {opts, usage, description, on_opt, &o};
	int exitc;
	if (!cli_parse_no_operands(c, argc, argv, &cs, &exitc))
		return exitc;
	if (o.python && o.site)
		return cli_usage_error(c, "doctor: give --python or --site-packages, not both");
	struct ow_doctor_report *r = NULL;
	int rc = ow_doctor_run(&o, &r);
	if (!r || !r->smoke) {
		ow_doctor_report_free(r);
		return cli_fail(c, rc);
	}
	if (c->json)
		render_json(r, rc);
	else
		render_text(c, r, rc);
	ow_doctor_report_free(r);
	return ow_err_exit_code(rc);
}
