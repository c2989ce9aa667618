/* doctor.h - "no kernel image is available" diagnosed end to end.
 *
 * Steps, each pass / fail / not checked: the driver and its version; the
 * devices and their compute capabilities; the smoke kernel; the installed
 * torch (version, CUDA variant); its architectures against the device
 * (static rules, plus the driver's own answer when there is a GPU); the
 * verdict.  When the verdict fails, a fix: the channel and CUDA variant
 * whose wheels carry the device's architecture (a stable release first,
 * the nightly channel only when no stable build does) and the exact
 * commands that bring them, online or through an export on a stick.
 * Without a GPU the static audit runs for the device given in opts.cc. */
#ifndef OW_DOCTOR_H
#define OW_DOCTOR_H

#include <stddef.h>

#include "offwheel/smoke.h"

enum ow_step_state { OW_STEP_PASS = 0, OW_STEP_FAIL, OW_STEP_SKIP };

enum ow_doctor_step_id {
	OW_DOC_DRIVER = 0,
	OW_DOC_DEVICES,
	OW_DOC_KERNEL,
	OW_DOC_INSTALL,
	OW_DOC_IMAGES,
	OW_DOC_VERDICT,
	OW_DOC_NSTEPS
};

struct ow_doctor_step {
	const char *name;  /* "driver", "devices", "smoke-kernel", "install", "images", "verdict" */
	int state;         /* enum ow_step_state */
	char *text;        /* what it found (NULL: the step did not run, or out of memory) */
};

#define OW_FIX_MAX_CMDS 6

struct ow_doctor_fix {
	int needed;
	char channel[16];  /* "stable" / "nightly" */
	char variant[16];  /* "cu128" */
	char since[16];    /* first torch version of that build with the arch ("2.7.0"), or "latest" */
	char why[512];
	char note[512];    /* e.g. the driver is too old for that variant; "" if none */
	char python[16];   /* "3.12", or "X.Y" when unknown */
	char platform[64]; /* "manylinux_2_28_x86_64" */
	char commands[OW_FIX_MAX_CMDS][512];
	const char *labels[OW_FIX_MAX_CMDS];
	size_t n_commands;
};

struct ow_doctor_opts {
	const char *python;
	const char *site;
	int cc;     /* --device: compute capability to judge for (0 = the GPU's) */
	int driver; /* --driver for the static rules without a GPU (0 = unknown) */
};

struct ow_doctor_report {
	struct ow_doctor_step steps[OW_DOC_NSTEPS];
	int cc;              /* judged for; 0 unknown */
	int driver;          /* 0 unknown */
	int cc_from_gpu;     /* cc is the GPU's (device 0), not --device */
	struct ow_smoke_report *smoke;
	struct ow_lib_check *libs;   /* the checks judged (static or loaded) */
	size_t n_libs;
	int libs_owned;
	int verdict_rc;
	struct ow_doctor_fix fix;
};

/* Run every step.  *out is filled even on failure.  Returns 0 when the
 * installed set runs on the device; OW_ENOIMAGE when it cannot;
 * OW_ENODRIVER when there is no GPU and no --device to judge for; OW_ENOENT
 * when no torch is installed; other codes from the smoke kernel. */
int ow_doctor_run(const struct ow_doctor_opts *o, struct ow_doctor_report **out);
void ow_doctor_report_free(struct ow_doctor_report *r);

/* The build to install for compute capability cc (and driver, 0 unknown),
 * and the commands for python X.Y ("" unknown) on platform ("" = this
 * host).  OW_ENOENT when no known build carries the architecture;
 * OW_ETOOBIG (and fix->needed 0) when python or platform is longer than its
 * field, or a command would be longer than its: a fix is whole or none. */
int ow_doctor_suggest(int cc, int driver, const char *python, const char *platform,
		      struct ow_doctor_fix *fix);

/* "pass", "FAIL", "not checked". */
const char *ow_step_state_name(int state);

#endif
