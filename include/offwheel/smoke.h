/* smoke.h - prove on the machine that the installed set runs on its GPU.
 *
 * One run: open the driver (cuda.h), list the devices, run the smoke kernel
 * on each, find the installed torch / torchvision / torchaudio
 * (torchsite.h), and load their libraries' modules (fatbin containers of
 * .nv_fatbin, one at a time, as a program does) into each device's context,
 * beside the static verdict of gpucompat.h for the same device and driver.
 * Devices of the same compute capability share one library check.
 *
 * A library passes when every module tried loaded and, unless all modules
 * were tried, its static verdict is native or JIT for the device.  Each
 * tried module's driver answer is also compared with the static prediction
 * for that module (n_disagree). */
#ifndef OW_SMOKE_H
#define OW_SMOKE_H

#include <stdbool.h>
#include <stddef.h>

#include "offwheel/cuda.h"
#include "offwheel/gpucompat.h"
#include "offwheel/torchsite.h"

#define OW_SMOKE_DEFAULT_SAMPLE 8

enum ow_load_status {
	OW_LOAD_OK = 0,       /* every module tried loaded */
	OW_LOAD_NO_BINARY,    /* some module: 209 CUDA_ERROR_NO_BINARY_FOR_GPU */
	OW_LOAD_PTX_VERSION,  /* some module: 222 CUDA_ERROR_UNSUPPORTED_PTX_VERSION */
	OW_LOAD_ERROR,        /* some module: another driver error */
	OW_LOAD_STATIC_ONLY,  /* not loaded (no driver): static verdict only */
	OW_LOAD_UNREADABLE,   /* the file could not be read */
};

struct ow_lib_check {
	char *path;
	const char *pkg;          /* "torch", "torchvision", "torchaudio" */
	int read_rc;              /* OW_E* when unreadable (detail in read_detail) */
	char *read_detail;        /* owned; NULL when read_rc is 0 */
	size_t n_modules;         /* modules with code (.nv_fatbin, not empty) */
	char archs[512];          /* union: "sm_75 sm_80 sm_90a compute_120@9.0" */
	struct ow_gpu_library_verdict stat; /* for the device's cc and driver */
	size_t n_tried, n_loaded, n_no_binary, n_ptx_version, n_error;
	int error_res;            /* first CUresult counted in n_error */
	size_t n_disagree;        /* driver answers that differ from the static rules */
	int status;               /* enum ow_load_status */
	bool ok;                   /* this library runs on the device */
};

struct ow_smoke_dev {
	struct ow_cuda_device dev;
	bool kernel_run;           /* 0 with no_kernel, or when selecting failed */
	int kernel_rc;
	struct ow_smoke_result kernel;
	char *kernel_detail;      /* owned; NULL when kernel_rc is 0 */
	struct ow_lib_check *libs; /* owned when same_as < 0 */
	size_t n_libs;
	int same_as;              /* index in devs of the device whose check is shared, or -1 */
	int rc;                   /* 0 when this device runs the set */
	char *detail;             /* why not: owned, NULL when rc is 0 */
};

struct ow_smoke_opts {
	const char *python;       /* ask this interpreter (default "python3" when no site) */
	const char *site;         /* or read this site-packages */
	int device;               /* ordinal, -1 = every device */
	int all;                  /* load every module, not a sample */
	bool no_kernel;            /* skip the smoke kernel */
	size_t sample;            /* modules per library when !all (0 = default) */
};

struct ow_smoke_report {
	char *libcuda;            /* owned: $OFFWHEEL_LIBCUDA or "libcuda.so.1" */
	int driver_rc;            /* 0, or why the driver could not be used */
	char *driver_detail;      /* owned; NULL when driver_rc is 0 */
	int driver;               /* cuDriverGetVersion */
	int n_devices;            /* devices the driver reports */
	struct ow_smoke_dev *devs;
	size_t n_devs;
	struct ow_torch_install *install;
	int install_rc;
	char *install_detail;     /* owned; NULL when install_rc is 0 */
	size_t n_libs_without_code; /* libraries of the set with no device code */
};

/* Run the whole check.  *out is filled as far as it got (free it with
 * ow_smoke_report_free) even on failure.  Returns 0 when every selected
 * device runs the set; OW_ENODRIVER (no driver, stub, no device);
 * OW_ENOIMAGE (some library has no image: 209/222); OW_EVERIFY (the smoke
 * kernel computed a wrong result); OW_ECUDA / OW_EUNSUPPORTED (the kernel
 * could not run); OW_ENOENT (no installed torch); OW_EINVAL (bad --device). */
int ow_smoke_run(const struct ow_smoke_opts *o, struct ow_smoke_report **out);
void ow_smoke_report_free(struct ow_smoke_report *r);

/* Find the install as ow_smoke_run does (python, else site, else "python3"). */
int ow_smoke_find_install(const struct ow_smoke_opts *o, struct ow_torch_install **out);

/* The static half alone (no driver): every library of `in` with device code,
 * its architectures and verdict for cc / driver (0 = unknown). */
int ow_smoke_check_static(const struct ow_torch_install *in, int cc, int driver,
			  struct ow_lib_check **libs, size_t *n, size_t *n_without_code);
void ow_lib_checks_free(struct ow_lib_check *libs, size_t n);

/* "loaded", "no-binary-for-gpu", "unsupported-ptx-version", "error",
 * "static-only", "unreadable". */
const char *ow_load_status_name(int status);

#endif
