/* doctor.c - diagnose "no kernel image" and print the fix (see doctor.h). */
#include "offwheel/doctor.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "fmt.h"
#include "offwheel/error.h"
#include "offwheel/gpucompat.h"

/* PyTorch's published CUDA builds, in order of preference (docs/index-quirks.md):
 * stable cu128 carries sm_75..sm_120 (+ compute_120 PTX) since 2.7.0, the
 * first release with Blackwell; stable cu126 stops at sm_90 but keeps the
 * older architectures; the nightly cu130 builds add sm_110 (Thor).  The
 * check below applies gpucompat's rules to these lists, so the advice
 * follows the same rules as the audit. */
struct build {
	const char *channel, *variant, *since;
	int cuda;             /* driver version the CUDA runtime wants */
	const char *sass;     /* space-separated sm_ numbers */
	int ptx;              /* compute_ arch of the PTX, 0 none */
};


/* A report text that may be NULL (out of memory when it was kept) as "". */
static const char *nz(const char *s) { return s ? s : ""; }
static const struct build builds[] = {
	{"stable", "cu128", "2.7.0", 12080, "75 80 86 90 100 120", 120},
	{"stable", "cu126", "2.6.0", 12060, "50 60 70 75 80 86 90", 0},
	{"nightly", "cu130", "latest", 13000, "75 80 86 90 100 110 120", 120},
};

const char *ow_step_state_name(int state)
{
	return state == OW_STEP_PASS ? "pass" : state == OW_STEP_FAIL ? "FAIL" : "not checked";
}

/* ---- the suggestion ---------------------------------------------------------- */

static int build_runs(const struct build *b, int cc)
{
	const char *p = b->sass;
	while (*p) {
		char *end;
		long arch = strtol(p, &end, 10);
		struct ow_fatbin_entry e = {.kind = OW_FB_SASS, .arch = (uint16_t)arch};
		if (ow_gpu_entry_image(&e, cc) == OW_GPU_IMG_SASS)
			return 1;
		p = end + strspn(end, " ");
	}
	struct ow_fatbin_entry ptx = {.kind = OW_FB_PTX, .arch = (uint16_t)b->ptx};
	return b->ptx && ow_gpu_entry_image(&ptx, cc) == OW_GPU_IMG_PTX;
}

static void host_platform(char *buf, size_t size)
{
	struct utsname u;
	const char *m = uname(&u) == 0 ? u.machine : "x86_64";
	if (!strcmp(m, "arm64"))
		m = "aarch64";
	snprintf(buf, size, "manylinux_2_28_%.32s", m);
}

/* One command, whole or refused (OW_ETOOBIG: never a shortened command). */
static int add_cmd(struct ow_doctor_fix *f, const char *label, const char *fmt, ...)
	OW_PRINTF(3, 4);
static int add_cmd(struct ow_doctor_fix *f, const char *label, const char *fmt, ...)
{
	va_list ap;
	if (f->n_commands >= OW_FIX_MAX_CMDS)
		return ow_err(OW_EINTERNAL, "doctor: more than %d commands", OW_FIX_MAX_CMDS);
	char *cmd = f->commands[f->n_commands];
	va_start(ap, fmt);
	int w = vsnprintf(cmd, sizeof f->commands[0], fmt, ap);
	va_end(ap);
	if (w < 0 || (size_t)w >= sizeof f->commands[0]) {
		cmd[0] = '\0';
		return ow_err(OW_ETOOBIG, "doctor: the command \"%s\" would be %d bytes, more than %zu",
		              label, w, sizeof f->commands[0] - 1);
	}
	f->labels[f->n_commands++] = label;
	return 0;
}

/* "3.12" -> "cp312", "3.13t" -> "cp313t": the python part of a target name. */
static void cp_tag(const char *python, char *buf, size_t n)
{
	size_t o = 0;
	if (n < 3)
		return;
	buf[o++] = 'c';
	buf[o++] = 'p';
	for (const char *p = python; *p && o + 1 < n; p++)
		if (*p != '.')
			buf[o++] = *p;
	buf[o] = '\0';
}

static int fix_commands(struct ow_doctor_fix *f)
{
	int nightly = !strcmp(f->channel, "nightly");
	char cp[sizeof f->python + 2];
	cp_tag(f->python, cp, sizeof cp);
	/* the names resolve and export give a target: "cu128 cp312-manylinux_2_28_x86_64",
	 * requirements/cu128-cp312-manylinux_2_28_x86_64.txt */
	int rc = add_cmd(f, "online, straight from PyTorch's index",
			 "pip install %s--index-url https://download.pytorch.org/whl/%s%s torch "
			 "torchvision torchaudio",
			 nightly ? "--pre " : "", nightly ? "nightly/" : "", f->variant);
	if (!rc)
		rc = add_cmd(f, "with offwheel, on a machine with internet",
			     "offwheel sync --channel %s --variant %s --python %s --platform %s",
			     f->channel, f->variant, f->python, f->platform);
	if (!rc)
		rc = add_cmd(f, "then write it to a stick or file server (keygen once: offwheel "
				"keygen lab.sec)",
			     "offwheel export DIR --target '%s %s-%s' --sign lab.sec", f->variant, cp,
			     f->platform);
	if (!rc)
		rc = add_cmd(f, "on this machine, from the stick", "offwheel check DIR --pubkey lab.pub");
	if (!rc)
		rc = add_cmd(f, "and install", "pip install --no-index --find-links DIR/wheels "
			     "--require-hashes -r DIR/requirements/%s-%s-%s.txt", f->variant, cp,
			     f->platform);
	return rc;
}

static int fix_note(struct ow_doctor_fix *f, const struct build *b, int driver)
{
	char have[16], want[16];
	if (!driver || driver >= b->cuda)
		return 0;
	ow_gpu_format_driver(driver, have, sizeof have);
	ow_gpu_format_driver(b->cuda, want, sizeof want);
	return ow_fmt(f->note, sizeof f->note,
		      "the driver supports CUDA %s; %s wheels are built for CUDA %s — update the "
		      "NVIDIA driver to one for CUDA %s or newer as well",
		      have, b->variant, want, want);
}

/* The build's words and the target's python and platform, each whole. */
static int fill_fix(struct ow_doctor_fix *fix, const struct build *b, const char *python,
		    const char *platform)
{
	fix->needed = 1;
	snprintf(fix->channel, sizeof fix->channel, "%s", b->channel);
	snprintf(fix->variant, sizeof fix->variant, "%s", b->variant);
	snprintf(fix->since, sizeof fix->since, "%s", b->since);
	int rc = ow_fmt(fix->python, sizeof fix->python, "%s", python && *python ? python : "X.Y");
	if (rc)
		return ow_err_prefix(rc, "doctor: python version: ");
	if (!platform || !*platform) {
		host_platform(fix->platform, sizeof fix->platform);
		return 0;
	}
	rc = ow_fmt(fix->platform, sizeof fix->platform, "%s", platform);
	return rc ? ow_err_prefix(rc, "doctor: platform: ") : 0;
}

int ow_doctor_suggest(int cc, int driver, const char *python, const char *platform,
		      struct ow_doctor_fix *fix)
{
	char ccs[16];
	memset(fix, 0, sizeof *fix);
	ow_gpu_format_cc(cc, ccs, sizeof ccs);
	const struct build *b = NULL;
	for (size_t i = 0; !b && i < sizeof builds / sizeof builds[0]; i++)
		if (build_runs(&builds[i], cc))
			b = &builds[i];
	if (!b)
		return ow_err(OW_ENOENT, "no PyTorch build offwheel knows of carries images for "
					 "compute capability %s — try the newest nightly variant",
			      ccs);
	int rc = fill_fix(fix, b, python, platform);
	if (!rc)
		rc = ow_fmt(fix->why, sizeof fix->why,
			    "%s %s wheels%s%s carry images for compute capability %s%s", b->channel,
			    b->variant, strcmp(b->since, "latest") ? " since torch " : "",
			    strcmp(b->since, "latest") ? b->since : "", ccs,
			    strcmp(b->channel, "stable") ? " (no stable build does yet)" : "");
	if (!rc)
		rc = fix_note(fix, b, driver);
	if (!rc)
		rc = fix_commands(fix);
	if (rc) /* a python or platform longer than any known one: no fix, never a cut one */
		memset(fix, 0, sizeof *fix);
	return rc;
}

/* ---- the steps ---------------------------------------------------------------- */

static void step(struct ow_doctor_report *r, int id, int state, const char *fmt, ...)
	OW_PRINTF(4, 5);
static void step(struct ow_doctor_report *r, int id, int state, const char *fmt, ...)
{
	static const char *const names[OW_DOC_NSTEPS] = {"driver", "devices", "smoke-kernel",
							 "install", "images", "verdict"};
	va_list ap;
	r->steps[id].name = names[id];
	r->steps[id].state = state;
	free(r->steps[id].text);
	va_start(ap, fmt);
	if (vasprintf(&r->steps[id].text, fmt, ap) < 0)
		r->steps[id].text = NULL;
	va_end(ap);
}

/* A step's text, "" when it has none. */
static const char *step_text(const struct ow_doctor_report *r, int id)
{
	return r->steps[id].text ? r->steps[id].text : "";
}

static void step_driver(struct ow_doctor_report *r)
{
	const struct ow_smoke_report *s = r->smoke;
	char v[16];
	if (s->driver_rc && !s->driver)
		step(r, OW_DOC_DRIVER, OW_STEP_FAIL, "%s", nz(s->driver_detail));
	else
		step(r, OW_DOC_DRIVER, OW_STEP_PASS, "%s, CUDA driver version %s", nz(s->libcuda),
		     s->driver ? (ow_gpu_format_driver(s->driver, v, sizeof v), v) : "unknown");
}

static void step_devices(struct ow_doctor_report *r)
{
	const struct ow_smoke_report *s = r->smoke;
	char text[1024] = "", cc[16];
	size_t used = 0;
	if (s->driver_rc || !s->n_devs) {
		step(r, OW_DOC_DEVICES, s->driver ? OW_STEP_FAIL : OW_STEP_SKIP, "%s",
		     s->driver ? nz(s->driver_detail) : "no driver to ask");
		return;
	}
	for (size_t i = 0; i < s->n_devs; i++) {
		ow_gpu_format_cc(s->devs[i].dev.cc, cc, sizeof cc);
		if (ow_fmt_append(text, sizeof text, &used, "%s%d: %s (compute capability %s)",
		                  i ? "; " : "", s->devs[i].dev.ordinal, s->devs[i].dev.name, cc)) {
			ow_fmt_append(text, sizeof text, &used, "; ...");
			break;
		}
	}
	step(r, OW_DOC_DEVICES, OW_STEP_PASS, "%s", text);
}

static void step_kernel(struct ow_doctor_report *r)
{
	const struct ow_smoke_report *s = r->smoke;
	for (size_t i = 0; i < s->n_devs; i++)
		if (s->devs[i].kernel_rc) {
			step(r, OW_DOC_KERNEL, OW_STEP_FAIL, "device %d: %s", s->devs[i].dev.ordinal,
			     nz(s->devs[i].kernel_detail));
			return;
		}
	if (!s->n_devs)
		step(r, OW_DOC_KERNEL, OW_STEP_SKIP, "no device to run it on");
	else
		step(r, OW_DOC_KERNEL, OW_STEP_PASS, "ran on %zu device(s), results exact (%s)",
		     s->n_devs, s->devs[0].kernel.image == OW_GPU_IMG_SASS ? "SASS" : "PTX JIT");
}

static void step_install(struct ow_doctor_report *r)
{
	const struct ow_torch_install *in = r->smoke->install;
	if (!in) {
		step(r, OW_DOC_INSTALL, OW_STEP_FAIL, "%s", nz(r->smoke->install_detail));
		return;
	}
	step(r, OW_DOC_INSTALL, OW_STEP_PASS,
	     "torch %s (CUDA %s, %s), torchvision %s, torchaudio %s, Python %s, in %s",
	     in->pkgs[0].version[0] ? in->pkgs[0].version : "?", in->cuda[0] ? in->cuda : "none",
	     in->variant[0] ? in->variant : "?",
	     in->pkgs[1].found ? in->pkgs[1].version : "not installed",
	     in->pkgs[2].found ? in->pkgs[2].version : "not installed",
	     in->python[0] ? in->python : "?", in->site);
}

/* The checks to judge: loaded on the GPU when it is the device judged,
 * else the static audit for --device. */
static int pick_libs(struct ow_doctor_report *r)
{
	const struct ow_smoke_report *s = r->smoke;
	size_t without = 0;
	if (r->cc_from_gpu && s->n_devs) {
		r->libs = s->devs[0].libs;
		r->n_libs = s->devs[0].n_libs;
		return 0;
	}
	r->libs_owned = 1;
	return ow_smoke_check_static(s->install, r->cc, r->driver, &r->libs, &r->n_libs, &without);
}

static size_t torch_code_libs(const struct ow_doctor_report *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->n_libs; i++)
		n += !strcmp(r->libs[i].pkg, "torch");
	return n;
}

static void step_images(struct ow_doctor_report *r)
{
	char cc[16];
	size_t bad = 0;
	const char *first = NULL, *archs = "";
	if (!r->smoke->install || !r->cc) {
		step(r, OW_DOC_IMAGES, OW_STEP_SKIP, "%s",
		     !r->smoke->install ? "no torch to audit"
					: "no GPU: give --device CC to audit for a device");
		return;
	}
	if (pick_libs(r)) {
		step(r, OW_DOC_IMAGES, OW_STEP_FAIL, "%s", ow_err_detail());
		return;
	}
	for (size_t i = 0; i < r->n_libs; i++) {
		if (!strcmp(r->libs[i].pkg, "torch") && !archs[0])
			archs = r->libs[i].archs;
		if (!r->libs[i].ok && bad++ == 0)
			first = r->libs[i].path;
	}
	ow_gpu_format_cc(r->cc, cc, sizeof cc);
	if (!torch_code_libs(r))
		step(r, OW_DOC_IMAGES, OW_STEP_FAIL, "the installed torch has no CUDA code (a CPU "
		     "build): it cannot use the GPU");
	else if (bad)
		step(r, OW_DOC_IMAGES, OW_STEP_FAIL, "%zu of %zu libraries have no image for compute "
		     "capability %s (first: %s); torch carries %s", bad, r->n_libs, cc, first, archs);
	else
		step(r, OW_DOC_IMAGES, OW_STEP_PASS, "%zu libraries with device code, all run on "
		     "compute capability %s%s; torch carries %s", r->n_libs, cc,
		     r->cc_from_gpu ? " (loaded by the driver)" : " (static rules)", archs);
}

/* ---- the verdict ---------------------------------------------------------------- */

static int verdict_rc(struct ow_doctor_report *r)
{
	const struct ow_smoke_report *s = r->smoke;
	if (r->steps[OW_DOC_IMAGES].state == OW_STEP_FAIL && s->install)
		return ow_err(OW_ENOIMAGE, "%s", step_text(r, OW_DOC_IMAGES));
	if (!s->install)
		return ow_err(s->install_rc ? s->install_rc : OW_ENOENT, "%s", nz(s->install_detail));
	if (!r->cc)
		return ow_err(OW_ENODRIVER, "%s — without a GPU give --device CC to audit the "
					    "installed set for a device", nz(s->driver_detail));
	if (r->steps[OW_DOC_DRIVER].state == OW_STEP_FAIL) { /* --device without a driver */
		char cc[16];
		ow_gpu_format_cc(r->cc, cc, sizeof cc);
		return ow_err(OW_ENODRIVER, "the installed set has images for compute capability %s "
		                            "(static audit), but the driver and the GPU were not "
		                            "checked: %s", cc, nz(s->driver_detail));
	}
	if (r->steps[OW_DOC_KERNEL].state == OW_STEP_FAIL)
		return ow_err(s->devs[0].kernel_rc ? s->devs[0].kernel_rc : OW_ECUDA, "%s",
			      step_text(r, OW_DOC_KERNEL));
	return 0;
}

static void step_verdict(struct ow_doctor_report *r)
{
	char cc[16];
	r->verdict_rc = verdict_rc(r);
	if (r->verdict_rc) {
		step(r, OW_DOC_VERDICT, OW_STEP_FAIL, "%s", ow_err_detail());
		return;
	}
	ow_gpu_format_cc(r->cc, cc, sizeof cc);
	step(r, OW_DOC_VERDICT, OW_STEP_PASS, "the installed set runs on compute capability %s%s",
	     cc, r->cc_from_gpu ? "" : " (static audit; the GPU itself was not checked)");
}

static int needs_fix(const struct ow_doctor_report *r)
{
	return r->cc && (r->verdict_rc == OW_ENOIMAGE || !r->smoke->install);
}

int ow_doctor_run(const struct ow_doctor_opts *o, struct ow_doctor_report **out)
{
	struct ow_doctor_report *r = calloc(1, sizeof *r);
	*out = r;
	if (!r)
		return ow_err(OW_ENOMEM, "out of memory");
	struct ow_smoke_opts so = {.python = o->python, .site = o->site, .device = -1};
	ow_smoke_run(&so, &r->smoke);
	if (!r->smoke)
		return ow_err(OW_ENOMEM, "out of memory");
	r->cc_from_gpu = !o->cc && r->smoke->n_devs > 0;
	r->cc = o->cc ? o->cc : r->cc_from_gpu ? r->smoke->devs[0].dev.cc : 0;
	r->driver = o->driver ? o->driver : r->smoke->driver;
	step_driver(r);
	step_devices(r);
	step_kernel(r);
	step_install(r);
	step_images(r);
	step_verdict(r);
	int rc = r->verdict_rc;
	if (needs_fix(r))
		ow_doctor_suggest(r->cc, r->driver,
				  r->smoke->install ? r->smoke->install->python : NULL, NULL, &r->fix);
	return rc ? ow_err(rc, "%s", step_text(r, OW_DOC_VERDICT)) : 0;
}

void ow_doctor_report_free(struct ow_doctor_report *r)
{
	if (!r)
		return;
	if (r->libs_owned)
		ow_lib_checks_free(r->libs, r->n_libs);
	ow_smoke_report_free(r->smoke);
	for (size_t i = 0; i < OW_DOC_NSTEPS; i++)
		free(r->steps[i].text);
	free(r);
}
