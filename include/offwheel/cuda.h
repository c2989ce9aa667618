/* cuda.h - the CUDA Driver API through dlopen: the only module that touches
 * the driver.
 *
 * libcuda.so.1 is opened at run time ($OFFWHEEL_LIBCUDA overrides the path),
 * so building and running offwheel never needs CUDA.  Three failures are told
 * apart: no driver (dlopen fails: OW_ENODRIVER, says what to install), the
 * CUDA stub library (cuInit answers 34: OW_ENODRIVER, "stub"), and real
 * driver errors (OW_ECUDA, or OW_ENODRIVER for "no device"), whose detail
 * always names the driver call and cuGetErrorName's answer.
 *
 * Modules are loaded eagerly (CUDA_MODULE_LOADING=EAGER unless the
 * environment says otherwise), so a load really places the code on the
 * device.  Compute capabilities are ints 10 * major + minor (12.0 -> 120),
 * driver versions cuDriverGetVersion numbers (12.8 -> 12080), as gpucompat.h. */
#ifndef OW_CUDA_H
#define OW_CUDA_H

#include <stddef.h>
#include <stdint.h>

/* CUresult values offwheel reports by name (the driver's numbering). */
enum ow_cu_result {
	OW_CU_SUCCESS = 0,
	OW_CU_STUB_LIBRARY = 34,
	OW_CU_NO_DEVICE = 100,
	OW_CU_INVALID_IMAGE = 200,
	OW_CU_NO_BINARY_FOR_GPU = 209,
	OW_CU_UNSUPPORTED_PTX_VERSION = 222,
	OW_CU_NOT_FOUND = 500,
	OW_CU_LAUNCH_FAILED = 719,
	OW_CU_NOT_SUPPORTED = 801,
};

typedef struct ow_cuda ow_cuda;

#define OW_CUDA_NAME_MAX 256

struct ow_cuda_device {
	int ordinal;
	char name[OW_CUDA_NAME_MAX];
	int cc; /* 90 for 9.0 */
};

/* Open the driver: $OFFWHEEL_LIBCUDA, else "libcuda.so.1"; then cuInit(0).
 * OW_ENODRIVER for no driver, the stub library, or no device; OW_ECUDA for
 * other cuInit failures; OW_ENOMEM. */
int ow_cuda_open(ow_cuda **out);
/* The same with an explicit path (NULL = as ow_cuda_open). */
int ow_cuda_open_path(const char *path, ow_cuda **out);
/* Releases the primary contexts retained and closes the library. */
void ow_cuda_close(ow_cuda *cu);
/* The path that was opened. */
const char *ow_cuda_path(const ow_cuda *cu);

int ow_cuda_driver_version(ow_cuda *cu, int *version);
int ow_cuda_device_count(ow_cuda *cu, int *count);
int ow_cuda_device(ow_cuda *cu, int ordinal, struct ow_cuda_device *out);
/* Make the primary context of device `ordinal` current (retained once). */
int ow_cuda_select(ow_cuda *cu, int ordinal);

/* "CUDA_ERROR_NO_BINARY_FOR_GPU" (the driver's answer when it has one,
 * else offwheel's own table, else "CUDA_ERROR_<n>"). */
const char *ow_cuda_result_name(const ow_cuda *cu, int res);

/* Load one module image into the current context and unload it again, as a
 * program does: a fatbin container (0xBA55ED50, the driver picks the
 * image), an ELF cubin, or NUL-terminated PTX (JIT).  Returns 0 when the
 * call was made and stores the CUresult in *res (0 loaded, 209, 222, ...);
 * a negative OW_E* code only when no call could be made. */
int ow_cuda_try_load(ow_cuda *cu, const void *image, int *res);

enum ow_smoke_status {
	OW_SMOKE_PASSED = 0,
	OW_SMOKE_LOAD_FAILED,   /* the smoke module did not load */
	OW_SMOKE_LAUNCH_FAILED, /* alloc / copy / launch / sync failed */
	OW_SMOKE_NOT_RUN,       /* the driver cannot launch (CUDA_ERROR_NOT_SUPPORTED) */
	OW_SMOKE_WRONG_RESULT,  /* ran, but the result differs from the CPU's */
};

struct ow_smoke_result {
	int status;           /* enum ow_smoke_status */
	int image;            /* OW_GPU_IMG_SASS (the fatbin) or OW_GPU_IMG_PTX (JIT) */
	int res;              /* CUresult of the failing call, 0 when none */
	char call[32];        /* the failing driver call, "" when none */
	unsigned n;           /* elements */
	uint64_t expected;    /* checksum computed on the CPU */
	uint64_t got;         /* checksum read back */
	size_t n_bad;         /* elements of y that differ */
	size_t first_bad;     /* first differing index (when n_bad > 0) */
	double seconds;       /* load + run + copy back */
};

/* Run the embedded smoke kernel on device `ordinal`: the SASS fatbin when
 * it has an image for the device (gpucompat rules), else kernels/smoke.ptx
 * through the JIT; allocate, copy, launch, synchronize, copy back, and
 * compare every element and the checksum with the CPU's.  *out is filled in
 * every case.  0 passed; OW_EVERIFY wrong result; OW_ECUDA a failed call
 * (detail names it); OW_EUNSUPPORTED when the driver cannot launch. */
int ow_cuda_smoke(ow_cuda *cu, int ordinal, struct ow_smoke_result *out);
/* "passed", "load-failed", "launch-failed", "not-run", "wrong-result". */
const char *ow_smoke_status_name(int status);

#endif
