/* cuda.c - the Driver API through dlopen (see cuda.h).  No CUDA header is
 * used: the few types below are the driver ABI's. */
#include "offwheel/cuda.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "embedded.h"
#include "offwheel/error.h"
#include "offwheel/fatbin.h"
#include "offwheel/gpucompat.h"
#include "clock.h"

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUmodule;
typedef void *CUfunction;
typedef void *CUstream;
typedef unsigned long long CUdeviceptr;

enum { CU_ATTR_CC_MAJOR = 75, CU_ATTR_CC_MINOR = 76 };
enum { CU_JIT_ERROR_LOG_BUFFER = 5, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6 };

#define OW_CUDA_MAX_DEVICES 64
#define SMOKE_N (1u << 22)
#define SMOKE_BLOCK 256u
#define SMOKE_MAX_GRID 1024u

struct cu_api {
	CUresult (*init)(unsigned);
	CUresult (*driver_get_version)(int *);
	CUresult (*device_get_count)(int *);
	CUresult (*device_get)(CUdevice *, int);
	CUresult (*device_get_name)(char *, int, CUdevice);
	CUresult (*device_get_attribute)(int *, int, CUdevice);
	CUresult (*primary_ctx_retain)(CUcontext *, CUdevice);
	CUresult (*primary_ctx_release)(CUdevice);
	CUresult (*ctx_set_current)(CUcontext);
	CUresult (*module_load_data)(CUmodule *, const void *);
	CUresult (*module_load_data_ex)(CUmodule *, const void *, unsigned, int *, void **);
	CUresult (*module_get_function)(CUfunction *, CUmodule, const char *);
	CUresult (*module_unload)(CUmodule);
	CUresult (*mem_alloc)(CUdeviceptr *, size_t);
	CUresult (*mem_free)(CUdeviceptr);
	CUresult (*memcpy_htod)(CUdeviceptr, const void *, size_t);
	CUresult (*memcpy_dtoh)(void *, CUdeviceptr, size_t);
	CUresult (*launch_kernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
				  unsigned, unsigned, CUstream, void **, void **);
	CUresult (*ctx_synchronize)(void);
	CUresult (*get_error_name)(CUresult, const char **);
};

struct sym {
	const char *name;
	const char *fallback; /* older name, or NULL */
	size_t offset;
};

#define SYM(n, f, m) {n, f, offsetof(struct cu_api, m)}
static const struct sym syms[] = {
	SYM("cuInit", NULL, init),
	SYM("cuDriverGetVersion", NULL, driver_get_version),
	SYM("cuDeviceGetCount", NULL, device_get_count),
	SYM("cuDeviceGet", NULL, device_get),
	SYM("cuDeviceGetName", NULL, device_get_name),
	SYM("cuDeviceGetAttribute", NULL, device_get_attribute),
	SYM("cuDevicePrimaryCtxRetain", NULL, primary_ctx_retain),
	SYM("cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease", primary_ctx_release),
	SYM("cuCtxSetCurrent", NULL, ctx_set_current),
	SYM("cuModuleLoadData", NULL, module_load_data),
	SYM("cuModuleLoadDataEx", NULL, module_load_data_ex),
	SYM("cuModuleGetFunction", NULL, module_get_function),
	SYM("cuModuleUnload", NULL, module_unload),
	SYM("cuMemAlloc_v2", NULL, mem_alloc),
	SYM("cuMemFree_v2", NULL, mem_free),
	SYM("cuMemcpyHtoD_v2", NULL, memcpy_htod),
	SYM("cuMemcpyDtoH_v2", NULL, memcpy_dtoh),
	SYM("cuLaunchKernel", NULL, launch_kernel),
	SYM("cuCtxSynchronize", NULL, ctx_synchronize),
	SYM("cuGetErrorName", NULL, get_error_name),
};
#undef SYM

struct ow_cuda {
	void *dl;
	char path[4096];
	struct cu_api f;
	int n_devices;
	CUcontext ctx[OW_CUDA_MAX_DEVICES];
	char unknown_name[40];
};

static const struct {
	int res;
	const char *name;
} known_results[] = {
	{0, "CUDA_SUCCESS"},
	{1, "CUDA_ERROR_INVALID_VALUE"},
	{2, "CUDA_ERROR_OUT_OF_MEMORY"},
	{3, "CUDA_ERROR_NOT_INITIALIZED"},
	{34, "CUDA_ERROR_STUB_LIBRARY"},
	{35, "CUDA_ERROR_INSUFFICIENT_DRIVER"},
	{100, "CUDA_ERROR_NO_DEVICE"},
	{101, "CUDA_ERROR_INVALID_DEVICE"},
	{200, "CUDA_ERROR_INVALID_IMAGE"},
	{209, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
	{218, "CUDA_ERROR_INVALID_PTX"},
	{222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"},
	{500, "CUDA_ERROR_NOT_FOUND"},
	{719, "CUDA_ERROR_LAUNCH_FAILED"},
	{801, "CUDA_ERROR_NOT_SUPPORTED"},
	{999, "CUDA_ERROR_UNKNOWN"},
};

const char *ow_cuda_result_name(const ow_cuda *cu, int res)
{
	const char *s = NULL;
	if (cu && cu->f.get_error_name && cu->f.get_error_name(res, &s) == 0 && s)
		return s;
	for (size_t i = 0; i < sizeof known_results / sizeof known_results[0]; i++)
		if (known_results[i].res == res)
			return known_results[i].name;
	return "CUDA_ERROR_UNRECOGNIZED";
}

/* Record a failed driver call: "cuX: CUDA_ERROR_Y (n)". */
static int cu_fail(const ow_cuda *cu, int code, const char *call, CUresult r)
{
	return ow_err(code, "%s: %s (%d)", call, ow_cuda_result_name(cu, r), r);
}

static int resolve_symbols(ow_cuda *cu)
{
	for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
		void *p = dlsym(cu->dl, syms[i].name);
		if (!p && syms[i].fallback)
			p = dlsym(cu->dl, syms[i].fallback);
		if (!p)
			return ow_err(OW_ENODRIVER,
				      "%s has no %s: not a CUDA driver, or one too old — install a "
				      "current NVIDIA driver",
				      cu->path, syms[i].name);
		memcpy((char *)&cu->f + syms[i].offset, &p, sizeof p);
	}
	return 0;
}

static int load_library(ow_cuda *cu)
{
	cu->dl = dlopen(cu->path, RTLD_NOW | RTLD_LOCAL);
	if (!cu->dl) {
		const char *why = dlerror();
		return ow_err(OW_ENODRIVER,
			      "no CUDA driver: cannot load %s (%s) — install the NVIDIA driver for "
			      "this GPU (it provides libcuda.so.1; e.g. 'apt install nvidia-driver' or "
			      "the driver from nvidia.com; in a container use the NVIDIA Container "
			      "Toolkit, '--gpus all'), or set OFFWHEEL_LIBCUDA to its path",
			      cu->path, why ? why : "unknown error");
	}
	return resolve_symbols(cu);
}

static int init_driver(ow_cuda *cu)
{
	CUresult r = cu->f.init(0);
	if (r == OW_CU_STUB_LIBRARY)
		return ow_err(OW_ENODRIVER,
			      "%s: cuInit: CUDA_ERROR_STUB_LIBRARY (34): this is the CUDA stub "
			      "library, not a driver — install the NVIDIA driver, and do not put "
			      "the toolkit's lib64/stubs directory on the library path",
			      cu->path);
	if (r == OW_CU_NO_DEVICE)
		return ow_err(OW_ENODRIVER,
			      "%s: cuInit: CUDA_ERROR_NO_DEVICE (100): the driver sees no CUDA "
			      "device — check 'nvidia-smi', CUDA_VISIBLE_DEVICES, or the container's "
			      "GPU access",
			      cu->path);
	if (r) {
		int code = r == 35 ? OW_ENODRIVER : OW_ECUDA; /* 35: driver older than the library */
		return ow_err_prefix(cu_fail(cu, code, "cuInit", r), "%s: ", cu->path);
	}
	return 0;
}

int ow_cuda_open_path(const char *path, ow_cuda **out)
{
	*out = NULL;
	ow_cuda *cu = calloc(1, sizeof *cu);
	if (!cu)
		return ow_err(OW_ENOMEM, "cuda: out of memory");
	if (!path || !*path)
		path = "libcuda.so.1";
	snprintf(cu->path, sizeof cu->path, "%s", path);
	/* load each module fully, so a load proves the code reached the device */
	setenv("CUDA_MODULE_LOADING", "EAGER", 0);
	int rc = load_library(cu);
	if (!rc)
		rc = init_driver(cu);
	if (rc) {
		ow_cuda_close(cu);
		return rc;
	}
	*out = cu;
	return 0;
}

int ow_cuda_open(ow_cuda **out)
{
	return ow_cuda_open_path(getenv("OFFWHEEL_LIBCUDA"), out);
}

void ow_cuda_close(ow_cuda *cu)
{
	if (!cu)
		return;
	for (int i = 0; i < OW_CUDA_MAX_DEVICES && cu->f.primary_ctx_release; i++) {
		CUdevice d;
		if (cu->ctx[i] && cu->f.device_get(&d, i) == 0)
			cu->f.primary_ctx_release(d);
	}
	if (cu->dl)
		dlclose(cu->dl);
	free(cu);
}

const char *ow_cuda_path(const ow_cuda *cu) { return cu->path; }

int ow_cuda_driver_version(ow_cuda *cu, int *version)
{
	CUresult r = cu->f.driver_get_version(version);
	return r ? cu_fail(cu, OW_ECUDA, "cuDriverGetVersion", r) : 0;
}

int ow_cuda_device_count(ow_cuda *cu, int *count)
{
	CUresult r = cu->f.device_get_count(count);
	if (r)
		return cu_fail(cu, r == OW_CU_NO_DEVICE ? OW_ENODRIVER : OW_ECUDA, "cuDeviceGetCount", r);
	cu->n_devices = *count;
	return 0;
}

static int get_device(ow_cuda *cu, int ordinal, CUdevice *d)
{
	if (ordinal < 0 || ordinal >= OW_CUDA_MAX_DEVICES)
		return ow_err(OW_EINVAL, "device %d: offwheel handles devices 0 to %d", ordinal,
			      OW_CUDA_MAX_DEVICES - 1);
	CUresult r = cu->f.device_get(d, ordinal);
	if (r)
		return ow_err_prefix(cu_fail(cu, r == 101 ? OW_EINVAL : OW_ECUDA, "cuDeviceGet", r),
				     "device %d: ", ordinal);
	return 0;
}

int ow_cuda_device(ow_cuda *cu, int ordinal, struct ow_cuda_device *out)
{
	CUdevice d;
	int major = 0, minor = 0;
	int rc = get_device(cu, ordinal, &d);
	if (rc)
		return rc;
	memset(out, 0, sizeof *out);
	out->ordinal = ordinal;
	CUresult r = cu->f.device_get_name(out->name, (int)sizeof out->name - 1, d);
	if (r)
		return cu_fail(cu, OW_ECUDA, "cuDeviceGetName", r);
	if ((r = cu->f.device_get_attribute(&major, CU_ATTR_CC_MAJOR, d)) ||
	    (r = cu->f.device_get_attribute(&minor, CU_ATTR_CC_MINOR, d)))
		return cu_fail(cu, OW_ECUDA, "cuDeviceGetAttribute", r);
	out->cc = major * 10 + minor;
	return 0;
}

int ow_cuda_select(ow_cuda *cu, int ordinal)
{
	CUdevice d;
	int rc = get_device(cu, ordinal, &d);
	if (rc)
		return rc;
	CUresult r;
	if (!cu->ctx[ordinal] && (r = cu->f.primary_ctx_retain(&cu->ctx[ordinal], d)))
		return cu_fail(cu, OW_ECUDA, "cuDevicePrimaryCtxRetain", r);
	if ((r = cu->f.ctx_set_current(cu->ctx[ordinal])))
		return cu_fail(cu, OW_ECUDA, "cuCtxSetCurrent", r);
	return 0;
}

int ow_cuda_try_load(ow_cuda *cu, const void *image, int *res)
{
	CUmodule m = NULL;
	*res = cu->f.module_load_data(&m, image);
	if (*res == 0 && m)
		cu->f.module_unload(m);
	return 0;
}

/* ---- the smoke kernel ---------------------------------------------------- */

const char *ow_smoke_status_name(int status)
{
	static const char *const names[] = {"passed", "load-failed", "launch-failed", "not-run",
					    "wrong-result"};
	if (status < 0 || status > OW_SMOKE_WRONG_RESULT)
		return "unknown";
	return names[status];
}

static const struct ow_embedded *find_blob(const char *name)
{
	for (const struct ow_embedded *b = ow_kernel_blobs; b->name; b++)
		if (!strcmp(b->name, name))
			return b;
	return NULL;
}

/* Does the embedded fatbin hold SASS this device runs natively? */
static int fatbin_has_sass(const struct ow_embedded *fat, int cc)
{
	struct ow_fatbin *fb = NULL;
	struct ow_gpu_module_verdict v = {0};
	if (ow_fatbin_scan_buffer(fat->data, fat->size, 0, &fb) || fb->n_modules != 1) {
		ow_fatbin_free(fb);
		return 0;
	}
	int ok = ow_gpu_module_verdict(fb, &fb->modules[0], cc, 0, &v) == 0 &&
		 v.verdict == OW_GPU_NATIVE;
	ow_fatbin_free(fb);
	return ok;
}

/* The image to load: a private copy (8-aligned) of the fatbin, or the PTX. */
static int pick_smoke_image(int cc, struct ow_smoke_result *out, void **image)
{
	const struct ow_embedded *fat = find_blob("smoke.fatbin");
	const struct ow_embedded *ptx = find_blob("smoke.ptx");
	const struct ow_embedded *use = fat && fatbin_has_sass(fat, cc) ? fat : ptx;
	if (!use)
		return ow_err(OW_EINTERNAL, "smoke: kernels/smoke.ptx is not embedded in this build");
	out->image = use == fat ? OW_GPU_IMG_SASS : OW_GPU_IMG_PTX;
	*image = malloc(use->size + 1);
	if (!*image)
		return ow_err(OW_ENOMEM, "smoke: out of memory");
	memcpy(*image, use->data, use->size);
	((char *)*image)[use->size] = '\0';
	return 0;
}

struct smoke_run {
	ow_cuda *cu;
	struct ow_smoke_result *out;
	CUmodule mod;
	CUfunction fn;
	CUdeviceptr dx, dy, dsum;
	float *x, *y;
};

/* Record the failing call; the error class follows the step and result. */
static int step_fail(struct smoke_run *s, int status, const char *call, CUresult r)
{
	s->out->status = status;
	s->out->res = r;
	snprintf(s->out->call, sizeof s->out->call, "%s", call);
	int code = r == OW_CU_NOT_SUPPORTED && status == OW_SMOKE_LAUNCH_FAILED ? OW_EUNSUPPORTED
										  : OW_ECUDA;
	if (code == OW_EUNSUPPORTED)
		s->out->status = OW_SMOKE_NOT_RUN;
	return cu_fail(s->cu, code, call, r);
}

static int load_smoke_module(struct smoke_run *s, const void *image)
{
	char log[4096] = "";
	int opts[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
	void *vals[2] = {log, (void *)(uintptr_t)sizeof log};
	CUresult r = s->cu->f.module_load_data_ex(&s->mod, image, 2, opts, vals);
	if (r) {
		int rc = step_fail(s, OW_SMOKE_LOAD_FAILED, "cuModuleLoadDataEx", r);
		log[sizeof log - 1] = '\0';
		return log[0] ? ow_err_prefix(rc, "smoke kernel (JIT log: %.400s): ", log)
			      : ow_err_prefix(rc, "smoke kernel: ");
	}
	r = s->cu->f.module_get_function(&s->fn, s->mod, "ow_smoke");
	return r ? step_fail(s, OW_SMOKE_LOAD_FAILED, "cuModuleGetFunction", r) : 0;
}

static void fill_inputs(float *x, float *y, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		x[i] = (float)(i % 1000u);
		y[i] = (float)(i % 7u);
	}
}

/* The kernel's contract (kernels/smoke.cu) on the CPU, exactly. */
static uint64_t expected_sum(unsigned n)
{
	uint64_t sum = 0;
	for (unsigned i = 0; i < n; i++)
		sum += (uint64_t)(2u * (i % 1000u) + i % 7u) * (i % 13u + 1u);
	return sum;
}

static int alloc_and_copy(struct smoke_run *s, size_t bytes)
{
	struct ow_cu_copy {
		CUdeviceptr *dst;
		size_t size;
		const void *src;
	};
	uint64_t zero = 0;
	const struct ow_cu_copy copies[] = {
		{&s->dx, bytes, s->x}, {&s->dy, bytes, s->y}, {&s->dsum, sizeof zero, &zero}};
	for (size_t i = 0; i < 3; i++) {
		CUresult r = s->cu->f.mem_alloc(copies[i].dst, copies[i].size);
		if (r)
			return step_fail(s, OW_SMOKE_LAUNCH_FAILED, "cuMemAlloc_v2", r);
		r = s->cu->f.memcpy_htod(*copies[i].dst, copies[i].src, copies[i].size);
		if (r)
			return step_fail(s, OW_SMOKE_LAUNCH_FAILED, "cuMemcpyHtoD_v2", r);
	}
	return 0;
}

static int launch_and_sync(struct smoke_run *s)
{
	float a = 2.0f;
	unsigned n = s->out->n;
	unsigned grid = (n + SMOKE_BLOCK - 1) / SMOKE_BLOCK;
	if (grid > SMOKE_MAX_GRID)
		grid = SMOKE_MAX_GRID;
	void *args[] = {&s->dx, &s->dy, &a, &n, &s->dsum};
	CUresult r = s->cu->f.launch_kernel(s->fn, grid, 1, 1, SMOKE_BLOCK, 1, 1, 0, NULL, args,
					    NULL);
	if (r)
		return step_fail(s, OW_SMOKE_LAUNCH_FAILED, "cuLaunchKernel", r);
	r = s->cu->f.ctx_synchronize();
	return r ? step_fail(s, OW_SMOKE_LAUNCH_FAILED, "cuCtxSynchronize", r) : 0;
}

static int copy_back(struct smoke_run *s, size_t bytes)
{
	CUresult r = s->cu->f.memcpy_dtoh(s->y, s->dy, bytes);
	if (!r)
		r = s->cu->f.memcpy_dtoh(&s->out->got, s->dsum, sizeof s->out->got);
	return r ? step_fail(s, OW_SMOKE_LAUNCH_FAILED, "cuMemcpyDtoH_v2", r) : 0;
}

static int check_result(struct smoke_run *s)
{
	struct ow_smoke_result *o = s->out;
	for (unsigned i = 0; i < o->n; i++)
		if (s->y[i] != (float)(2u * (i % 1000u) + i % 7u) && o->n_bad++ == 0)
			o->first_bad = i;
	o->expected = expected_sum(o->n);
	if (!o->n_bad && o->got == o->expected)
		return 0;
	o->status = OW_SMOKE_WRONG_RESULT;
	return ow_err(OW_EVERIFY,
		      "smoke kernel: wrong result — checksum %llu, expected %llu; %zu of %u "
		      "elements differ — the device or driver computes incorrectly",
		      (unsigned long long)o->got, (unsigned long long)o->expected, o->n_bad, o->n);
}

static void release_run(struct smoke_run *s)
{
	CUdeviceptr p[] = {s->dx, s->dy, s->dsum};
	for (size_t i = 0; i < 3; i++)
		if (p[i])
			s->cu->f.mem_free(p[i]);
	if (s->mod)
		s->cu->f.module_unload(s->mod);
	free(s->x);
	free(s->y);
}


static int smoke_steps(struct smoke_run *s, const void *image)
{
	size_t bytes = (size_t)s->out->n * sizeof(float);
	s->x = malloc(bytes);
	s->y = malloc(bytes);
	if (!s->x || !s->y)
		return ow_err(OW_ENOMEM, "smoke: out of memory");
	fill_inputs(s->x, s->y, s->out->n);
	int rc = load_smoke_module(s, image);
	if (!rc)
		rc = alloc_and_copy(s, bytes);
	if (!rc)
		rc = launch_and_sync(s);
	if (!rc)
		rc = copy_back(s, bytes);
	return rc ? rc : check_result(s);
}

int ow_cuda_smoke(ow_cuda *cu, int ordinal, struct ow_smoke_result *out)
{
	struct ow_cuda_device dev;
	void *image = NULL;
	memset(out, 0, sizeof *out);
	out->n = SMOKE_N;
	out->status = OW_SMOKE_LOAD_FAILED;
	int rc = ow_cuda_device(cu, ordinal, &dev);
	if (!rc)
		rc = ow_cuda_select(cu, ordinal);
	if (!rc)
		rc = pick_smoke_image(dev.cc, out, &image);
	if (rc)
		return rc;
	struct smoke_run s = {.cu = cu, .out = out};
	double t0 = ow_mono_s();
	rc = smoke_steps(&s, image);
	out->seconds = ow_mono_s() - t0;
	release_run(&s);
	free(image);
	if (!rc)
		out->status = OW_SMOKE_PASSED;
	return rc;
}
