/* cmd_smoke.c - offwheel smoke: on the GPU, run the smoke kernel and load
 * the installed set's own images. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gpurender.h"
#include "offwheel/smoke.h"

static const char usage[] = "smoke [--python PY | --site-packages DIR] [--device N] [--all] "
                            "[--no-kernel]";
static const char description[] =
	"On this machine's GPU: report the driver version and each device's name and\n"
	"compute capability, run offwheel's smoke kernel and check its result exactly,\n"
	"then find the installed torch, torchvision and torchaudio and load their\n"
	"libraries' CUDA modules with the Driver API (a sample of each library, every\n"
	"module with --all), reporting per library: loaded, NO_BINARY_FOR_GPU (209),\n"
	"UNSUPPORTED_PTX_VERSION (222) or another error, beside the static verdict.\n"
	"The driver is libcuda.so.1, or $OFFWHEEL_LIBCUDA.\n"
	"Exit status: 0 the device(s) can run the set; 3 they cannot (no image, or a\n"
	"wrong kernel result); 5 no GPU or driver; 1 other errors (a failed launch).";

enum { OPT_PYTHON = 256, OPT_SITE, OPT_DEVICE, OPT_ALL, OPT_NO_KERNEL, OPT_SAMPLE };
static const struct cli_opt opts[] = {
	{"python", OPT_PYTHON, required_argument, "PY", "the Python whose torch to check (default python3; given up after 60 s without an answer, $OFFWHEEL_PYTHON_TIMEOUT seconds when set)"},
	{"site-packages", OPT_SITE, required_argument, "DIR", "check the torch installed in DIR instead"},
	{"device", OPT_DEVICE, required_argument, "N", "only device N (default: every device)"},
	{"all", OPT_ALL, no_argument, NULL, "load every module, not a sample per library"},
	{"sample", OPT_SAMPLE, required_argument, "N", "modules per library without --all (default 8)"},
	{"no-kernel", OPT_NO_KERNEL, no_argument, NULL, "skip the smoke kernel; only load the images"},
	{NULL, 0, 0, NULL, NULL},
};

static int on_opt(struct cli *c, int key, const char *arg, void *ud)
{
	struct ow_smoke_opts *o = ud;
	int v = 0, rc = 0;
	switch (key) {
	case OPT_PYTHON: o->python = arg; return 0;
	case OPT_SITE: o->site = arg; return 0;
	case OPT_ALL: o->all = 1; return 0;
	case OPT_NO_KERNEL: o->no_kernel = 1; return 0;
	case OPT_DEVICE:
		rc = cli_int_arg(c, "--device", arg, 0, 63, &o->device);
		return rc;
	case OPT_SAMPLE:
		rc = cli_int_arg(c, "--sample", arg, 1, 100000, &v);
		o->sample = (size_t)v;
		return rc;
	}
	return 2;
}

static json_t *kernel_json(const struct ow_smoke_dev *d)
{
	const struct ow_smoke_result *k = &d->kernel;
	if (!d->kernel_run)
		return json_pack("{s:b, s:s}", "run", 0, "status", "skipped");
	return json_pack("{s:b, s:s, s:s, s:I, s:I, s:I, s:I, s:o, s:o, s:f, s:o}", "run", 1,
	                 "status", ow_smoke_status_name(k->status), "image",
	                 k->image == OW_GPU_IMG_SASS ? "sass" : "ptx", "elements", (json_int_t)k->n,
	                 "expected", (json_int_t)k->expected, "got", (json_int_t)k->got,
	                 "bad_elements", (json_int_t)k->n_bad, "call",
	                 k->call[0] ? json_string(k->call) : json_null(), "result",
	                 k->res ? json_string(ow_cuda_result_name(NULL, k->res)) : json_null(),
	                 "seconds", k->seconds, "error", cli_gpu_error_json(d->kernel_rc, d->kernel_detail));
}

static json_t *device_json(const struct ow_smoke_dev *d)
{
	char cc[16];
	return json_pack("{s:i, s:s, s:s, s:o, s:o, s:o, s:b, s:o}", "ordinal", d->dev.ordinal,
	                 "name", d->dev.name, "cc", cli_gpu_cc(d->dev.cc, cc, sizeof cc), "kernel",
	                 kernel_json(d), "libraries", cli_gpu_libs_json(d->libs, d->n_libs), "libraries_same_as",
	                 d->same_as >= 0 ? json_integer(d->same_as) : json_null(), "ok", d->rc == 0,
	                 "error", cli_gpu_error_json(d->rc, d->detail));
}

static void render_json(const struct ow_smoke_report *r, int rc)
{
	char drv[16];
	json_t *devs = json_array();
	for (size_t i = 0; i < r->n_devs; i++)
		json_array_append_new(devs, device_json(&r->devs[i]));
	json_t *driver = json_pack("{s:s, s:b, s:o, s:i, s:i, s:o}", "library", r->libcuda ? r->libcuda : "", "ok",
	                           r->driver_rc == 0, "version",
	                           r->driver ? json_string(cli_gpu_driver(r->driver, drv, sizeof drv))
	                                     : json_null(),
	                           "version_raw", r->driver, "devices", r->n_devices, "error",
	                           cli_gpu_error_json(r->driver_rc, r->driver_detail));
	cli_json_out(json_pack("{s:s, s:b, s:i, s:o, s:o, s:o, s:o, s:I}", "command", "smoke", "ok",
	                       rc == 0, "exit_code", ow_err_exit_code(rc), "error",
	                       cli_gpu_error_json(rc, ow_err_detail()), "driver", driver, "install",
	                       cli_gpu_install_json(r->install, r->install_rc, r->install_detail),
	                       "devices", devs, "libraries_without_device_code",
	                       (json_int_t)r->n_libs_without_code));
}

static void kernel_line(const struct ow_smoke_dev *d)
{
	const struct ow_smoke_result *k = &d->kernel;
	const char *img = k->image == OW_GPU_IMG_SASS ? "SASS from the fatbin" : "PTX through the JIT";
	if (!d->kernel_run)
		cli_wrapf(stdout, "  smoke kernel: skipped (--no-kernel)\n");
	else if (k->status == OW_SMOKE_PASSED)
		cli_wrapf(stdout, "  smoke kernel: passed (%s; %u elements, checksum %llu as computed on the CPU; "
		       "%.2f s)\n", img, k->n, (unsigned long long)k->got, k->seconds);
	else
		cli_wrapf(stdout, "  smoke kernel: %s (%s): %s\n",
		       k->status == OW_SMOKE_NOT_RUN ? "NOT RUN" : "FAILED", img,
		       d->kernel_detail ? d->kernel_detail : "");
}

/* The text the verdict line says at the end (NULL: none): said once, there. */
static const char *verdict_why;

static bool said_last(const char *text)
{
	return text && verdict_why && !strcmp(text, verdict_why);
}

static void render_device(const struct ow_smoke_report *r, const struct ow_smoke_dev *d)
{
	char cc[16];
	cli_wrapf(stdout, "device %d: %s, compute capability %s\n", d->dev.ordinal, d->dev.name,
	       cli_gpu_cc(d->dev.cc, cc, sizeof cc));
	kernel_line(d);
	if (d->same_as >= 0)
		cli_wrapf(stdout, "  libraries: as device %d (same compute capability)\n",
		       r->devs[d->same_as].dev.ordinal);
	else if (r->install)
		cli_gpu_libs_lines(stdout, r->install, d->libs, d->n_libs, "  ");
	cli_wrapped(stdout, "  => ", !d->rc ? "this device runs the installed set"
	                             : said_last(d->detail) ? "not judged (the last line says why)"
	                                                    : d->detail);
}

static void render_text(const struct cli *c, const struct ow_smoke_report *r, int rc)
{
	char drv[16];
	char *why = rc ? strdup(ow_err_detail()) : NULL; /* NULL: each says it */
	verdict_why = why;
	if (c->verbosity < 0)
		goto verdict;
	if (r->install) {
		cli_wrapf(stdout, "installed (%s): ", r->install->site);
		cli_gpu_install_line(stdout, r->install);
	} else if (said_last(r->install_detail)) {
		cli_wrap(stdout, "installed: not found (the last line says why)\n");
	} else {
		cli_wrapped(stdout, "installed: not found: ", r->install_detail);
	}
	if (r->driver_rc) {
		cli_wrapped(stdout, "driver: ", r->driver_detail);
		goto verdict;
	}
	cli_wrapf(stdout, "driver: %s, CUDA driver version %s, %d device(s)\n", r->libcuda ? r->libcuda : "",
	       cli_gpu_driver(r->driver, drv, sizeof drv), r->n_devices);
	for (size_t i = 0; i < r->n_devs; i++)
		render_device(r, &r->devs[i]);
	if (r->n_libs_without_code)
		cli_wrapf(stdout, "(%zu more librar%s of the set hold no device code)\n", r->n_libs_without_code,
		       r->n_libs_without_code == 1 ? "y" : "ies");
verdict:
	fflush(stdout);
	if (rc)
		cli_wrapped(stderr, "offwheel smoke: ", why ? why : ow_err_detail());
	else
		cli_wrapf(stdout, "smoke: PASSED — the installed set runs on %zu device(s)\n", r->n_devs);
	verdict_why = NULL;
	free(why);
}

int cmd_smoke(struct cli *c, int argc, char **argv)
{
	struct ow_smoke_opts o = {.device = -1};
	const struct cli_spec cs = {opts, usage, description, on_opt, &o};
	int exitc;
	if (!cli_parse_no_operands(c, argc, argv, &cs, &exitc))
		return exitc;
	if (o.python && o.site)
		return cli_usage_error(c, "smoke: give --python or --site-packages, not both");
	struct ow_smoke_report *r = NULL;
	int rc = ow_smoke_run(&o, &r);
	if (!r)
		return cli_fail(c, rc);
	if (c->json)
		render_json(r, rc);
	else
		render_text(c, r, rc);
	ow_smoke_report_free(r);
	return ow_err_exit_code(rc);
}
