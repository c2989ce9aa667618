/* libcuda_standin.c - a libcuda.so.1 look-alike for machines without a GPU.
 *
 * offwheel loads it through OFFWHEEL_LIBCUDA.  It answers like the real
 * driver for what offwheel asks, configured by the environment (read at
 * cuInit):
 *   OW_STANDIN_CC       compute capability per device, "12.0" or "9.0,12.0"
 *                       (the last one repeats; default 12.0)
 *   OW_STANDIN_DRIVER   cuDriverGetVersion number or "12.8" (default 13000)
 *   OW_STANDIN_DEVICES  number of devices (default 1)
 *   OW_STANDIN_NAME     device name (default "offwheel stand-in (no GPU)")
 *   OW_STANDIN_MODE     ok | stub (every call answers 34, as the toolkit's
 *                       stub library) | no-device (cuInit 100) |
 *                       launch-fail (cuLaunchKernel 719) | no-launch
 *                       (cuLaunchKernel 801 NOT_SUPPORTED) | wrong-result
 *                       (the kernel runs, one element and the sum are off)
 *
 * cuModuleLoadData parses what it is given - a fatbin container
 * (0xBA55ED50), an ELF cubin, or NUL-terminated PTX - and selects an image
 * by the driver's rules (docs/fatbin.md), coded here on their own rather
 * than through src/gpu/gpucompat.c so that the tests compare offwheel's
 * static verdicts with an independent implementation: exact or compatible
 * SASS (same major, minor <=; `a` exact; `f` same family), else PTX for a
 * CC <= the device's (`a` exact, `f` family) whose ISA the configured
 * driver can JIT (else 222 UNSUPPORTED_PTX_VERSION), else 209
 * NO_BINARY_FOR_GPU.  Container headers are read with src/gpu/fatbin.c
 * (compiled into this library with hidden visibility).
 *
 * Device memory is host memory; cuLaunchKernel runs the smoke kernel
 * (kernels/smoke.cu, "ow_smoke") on the CPU so offwheel's exact result
 * check is exercised.  This library never proves anything about a real GPU:
 * its device name says so. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "offwheel/fatbin.h"

#define API __attribute__((visibility("default")))

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUmodule;
typedef void *CUfunction;
typedef void *CUstream;
typedef unsigned long long CUdeviceptr;

enum {
	R_OK = 0,
	R_INVALID_VALUE = 1,
	R_OUT_OF_MEMORY = 2,
	R_NOT_INITIALIZED = 3,
	R_STUB = 34,
	R_NO_DEVICE = 100,
	R_INVALID_DEVICE = 101,
	R_INVALID_CONTEXT = 201,
	R_INVALID_IMAGE = 200,
	R_NO_BINARY = 209,
	R_INVALID_PTX = 218,
	R_PTX_VERSION = 222,
	R_INVALID_HANDLE = 400,
	R_NOT_FOUND = 500,
	R_LAUNCH_FAILED = 719,
	R_NOT_SUPPORTED = 801,
};

enum mode { M_OK, M_STUB, M_NO_DEVICE, M_LAUNCH_FAIL, M_NO_LAUNCH, M_WRONG };

#define MAX_DEV 16

static struct {
	int initialized;
	enum mode mode;
	int driver;
	int n_devices;
	int cc[MAX_DEV];
	const char *name;
	int current; /* device of the current context, -1 none */
} st = {.current = -1};

static char ctx_tokens[MAX_DEV];
static char fn_token;

/* ---- configuration ------------------------------------------------------- */

static enum mode parse_mode(const char *s)
{
	static const char *const names[] = {"ok", "stub", "no-device", "launch-fail", "no-launch",
					    "wrong-result"};
	for (int i = 0; s && i < 6; i++)
		if (!strcmp(s, names[i]))
			return (enum mode)i;
	return M_OK;
}

/* "12.0" / "120" / "12080" -> 10*major+minor or the raw number */
static int parse_dotted(const char *s, int scale, int dflt)
{
	char *end;
	if (!s || !*s)
		return dflt;
	long major = strtol(s, &end, 10);
	if (*end != '.')
		return (int)major;
	long minor = strtol(end + 1, &end, 10);
	return (int)(major * scale + minor * (scale == 10 ? 1 : 10));
}

static void parse_ccs(const char *s)
{
	int last = 120, i = 0;
	while (s && *s && i < MAX_DEV) {
		last = parse_dotted(s, 10, 120);
		st.cc[i++] = last;
		s = strchr(s, ',');
		s = s ? s + 1 : NULL;
	}
	for (; i < MAX_DEV; i++)
		st.cc[i] = last;
}

static void configure(void)
{
	st.mode = parse_mode(getenv("OW_STANDIN_MODE"));
	st.driver = parse_dotted(getenv("OW_STANDIN_DRIVER"), 1000, 13000);
	const char *n = getenv("OW_STANDIN_DEVICES");
	st.n_devices = n ? (int)strtol(n, NULL, 10) : 1;
	if (st.n_devices < 0 || st.n_devices > MAX_DEV)
		st.n_devices = 1;
	parse_ccs(getenv("OW_STANDIN_CC"));
	st.name = getenv("OW_STANDIN_NAME");
	if (!st.name)
		st.name = "offwheel stand-in (no GPU)";
}

/* ---- the selection rules -------------------------------------------------- */

/* 12.x = {12.0, 12.1}, 10.x = {10.0, 10.3}, 11.0 alone */
static int same_family(int img, int dev) { return img / 10 == dev / 10; }

static int sass_runs(int arch, char variant, int cc)
{
	if (variant == 'a')
		return arch == cc;
	if (variant == 'f')
		return same_family(arch, cc) && arch % 10 <= cc % 10;
	return arch / 10 == cc / 10 && arch % 10 <= cc % 10;
}

static int ptx_fits(int arch, char variant, int cc)
{
	if (variant == 'a')
		return arch == cc;
	if (variant == 'f')
		return same_family(arch, cc) && arch <= cc;
	return arch <= cc;
}

/* First driver able to JIT PTX ISA major.minor; 0 = unknown (too new). */
static int ptx_isa_driver(int major, int minor)
{
	if (major == 7 && minor <= 8)
		return 11000 + 10 * minor;
	if (major == 8 && minor <= 5)
		return 12000 + 10 * minor;
	if (major == 8 && minor <= 8)
		return 12070 + 10 * (minor - 6);
	if (major == 9 && minor <= 5) /* measured to CUDA 13.5: docs/ptx-isa.md */
		return 13000 + 10 * minor;
	return major < 7 ? 10000 : 0;
}

static int ptx_jittable(int major, int minor)
{
	int need = ptx_isa_driver(major, minor);
	return need && need <= st.driver;
}

static int device_cc(void) { return st.current >= 0 ? st.cc[st.current] : 0; }

/* The driver's choice for one container: SASS first, then PTX. */
static CUresult choose_in_container(const struct ow_fatbin *fb)
{
	int cc = device_cc(), ptx_seen = 0;
	if (fb->n_modules != 1 || fb->modules[0].count == 0)
		return R_INVALID_IMAGE;
	const struct ow_fatbin_entry *e = fb->entries + fb->modules[0].first;
	for (size_t i = 0; i < fb->modules[0].count; i++)
		if (e[i].kind == OW_FB_SASS && sass_runs(e[i].arch, e[i].variant, cc))
			return R_OK;
	for (size_t i = 0; i < fb->modules[0].count; i++) {
		if (e[i].kind != OW_FB_PTX || !ptx_fits(e[i].arch, e[i].variant, cc))
			continue;
		if (ptx_jittable(e[i].ver_major, e[i].ver_minor))
			return R_OK;
		ptx_seen = 1;
	}
	return ptx_seen ? R_PTX_VERSION : R_NO_BINARY;
}

static CUresult load_container(const unsigned char *p)
{
	uint64_t body;
	memcpy(&body, p + 8, sizeof body);
	if (body > ((uint64_t)1 << 32))
		return R_INVALID_IMAGE;
	struct ow_fatbin *fb = NULL;
	if (ow_fatbin_scan_buffer(p, (size_t)(16 + body), 0, &fb))
		return R_INVALID_IMAGE;
	CUresult r = choose_in_container(fb);
	ow_fatbin_free(fb);
	return r;
}

/* ELF cubin: the SM is in e_flags (ABI version 8: bits 8-15, before: 0-7). */
static CUresult load_cubin(const unsigned char *p)
{
	uint32_t flags;
	if (p[4] != 2)
		return R_INVALID_IMAGE;
	memcpy(&flags, p + 0x30, sizeof flags);
	int sm = p[8] >= 8 ? (int)((flags >> 8) & 0xff) : (int)(flags & 0xff);
	return sass_runs(sm, 0, device_cc()) ? R_OK : R_NO_BINARY;
}

static const char *ptx_directive(const char *text, const char *name)
{
	const char *d = strstr(text, name);
	return d ? d + strlen(name) : NULL;
}

/* PTX text: `.version X.Y` and `.target sm_XY[a|f]`. */
static CUresult load_ptx(const char *text)
{
	const char *v = ptx_directive(text, ".version");
	const char *t = ptx_directive(text, ".target");
	if (!v || !t)
		return R_INVALID_PTX;
	char *end;
	long major = strtol(v, &end, 10);
	long minor = *end == '.' ? strtol(end + 1, &end, 10) : -1;
	while (*t == ' ' || *t == '\t')
		t++;
	if (minor < 0 || strncmp(t, "sm_", 3))
		return R_INVALID_PTX;
	long arch = strtol(t + 3, &end, 10);
	char variant = *end == 'a' || *end == 'f' ? *end : 0;
	if (!ptx_fits((int)arch, variant, device_cc()))
		return R_NO_BINARY;
	return ptx_jittable((int)major, (int)minor) ? R_OK : R_PTX_VERSION;
}

static CUresult load_image(const void *image)
{
	const unsigned char *p = image;
	uint32_t magic;
	memcpy(&magic, p, sizeof magic);
	if (magic == OW_FATBIN_MAGIC)
		return load_container(p);
	if (!memcmp(p, "\177ELF", 4))
		return load_cubin(p);
	return load_ptx(image);
}

/* ---- the API --------------------------------------------------------------- */

API CUresult cuInit(unsigned flags);
API CUresult cuDriverGetVersion(int *v);
API CUresult cuDeviceGetCount(int *n);
API CUresult cuDeviceGet(CUdevice *d, int ordinal);
API CUresult cuDeviceGetName(char *name, int len, CUdevice d);
API CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d);
API CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d);
API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d);
API CUresult cuCtxSetCurrent(CUcontext c);
API CUresult cuModuleLoadData(CUmodule *m, const void *image);
API CUresult cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned n, int *opts,
				void **vals);
API CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name);
API CUresult cuModuleUnload(CUmodule m);
API CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t size);
API CUresult cuMemFree_v2(CUdeviceptr p);
API CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t size);
API CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t size);
API CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			    unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params,
			    void **extra);
API CUresult cuCtxSynchronize(void);
API CUresult cuGetErrorName(CUresult r, const char **name);

/* Every call but cuInit and cuDriverGetVersion: initialized and not a stub. */
static CUresult ready(void)
{
	if (st.mode == M_STUB)
		return R_STUB;
	return st.initialized ? R_OK : R_NOT_INITIALIZED;
}

API CUresult cuInit(unsigned flags)
{
	(void)flags;
	configure();
	if (st.mode == M_STUB)
		return R_STUB;
	if (st.mode == M_NO_DEVICE || st.n_devices == 0)
		return R_NO_DEVICE;
	st.initialized = 1;
	return R_OK;
}

API CUresult cuDriverGetVersion(int *v)
{
	if (!v)
		return R_INVALID_VALUE;
	if (!st.driver)
		configure();
	*v = st.mode == M_STUB ? 0 : st.driver;
	return st.mode == M_STUB ? R_STUB : R_OK;
}

API CUresult cuDeviceGetCount(int *n)
{
	CUresult r = ready();
	if (!r)
		*n = st.n_devices;
	return r;
}

API CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
	CUresult r = ready();
	if (r)
		return r;
	if (ordinal < 0 || ordinal >= st.n_devices)
		return R_INVALID_DEVICE;
	*d = ordinal;
	return R_OK;
}

static CUresult valid_device(CUdevice d)
{
	CUresult r = ready();
	return r ? r : d < 0 || d >= st.n_devices ? R_INVALID_DEVICE : R_OK;
}

API CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
	CUresult r = valid_device(d);
	if (r || len <= 0)
		return r ? r : R_INVALID_VALUE;
	size_t n = strnlen(st.name, (size_t)len - 1);
	memcpy(name, st.name, n);
	name[n] = '\0';
	return R_OK;
}

API CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d)
{
	CUresult r = valid_device(d);
	if (r)
		return r;
	if (attr != 75 && attr != 76)
		return R_INVALID_VALUE;
	*v = attr == 75 ? st.cc[d] / 10 : st.cc[d] % 10;
	return R_OK;
}

API CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
	CUresult r = valid_device(d);
	if (!r)
		*c = &ctx_tokens[d];
	return r;
}

API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) { return valid_device(d); }

API CUresult cuCtxSetCurrent(CUcontext c)
{
	CUresult r = ready();
	if (r)
		return r;
	if (!c) {
		st.current = -1;
		return R_OK;
	}
	ptrdiff_t i = (char *)c - ctx_tokens;
	if (i < 0 || i >= st.n_devices)
		return R_INVALID_CONTEXT;
	st.current = (int)i;
	return R_OK;
}

API CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
	CUresult r = ready();
	if (r)
		return r;
	if (st.current < 0)
		return R_INVALID_CONTEXT;
	if (!m || !image)
		return R_INVALID_VALUE;
	r = load_image(image);
	if (!r && !(*m = malloc(1)))
		return R_OUT_OF_MEMORY;
	return r;
}

API CUresult cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned n, int *opts,
				void **vals)
{
	(void)n;
	(void)opts;
	(void)vals;
	return cuModuleLoadData(m, image);
}

API CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
	CUresult r = ready();
	if (r)
		return r;
	if (!m || !f || !name)
		return R_INVALID_HANDLE;
	if (strcmp(name, "ow_smoke"))
		return R_NOT_FOUND;
	*f = &fn_token;
	return R_OK;
}

API CUresult cuModuleUnload(CUmodule m)
{
	CUresult r = ready();
	if (!r)
		free(m);
	return r;
}

API CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t size)
{
	CUresult r = ready();
	if (r)
		return r;
	void *mem = malloc(size ? size : 1);
	if (!mem)
		return R_OUT_OF_MEMORY;
	*p = (CUdeviceptr)(uintptr_t)mem;
	return R_OK;
}

API CUresult cuMemFree_v2(CUdeviceptr p)
{
	CUresult r = ready();
	if (!r)
		free((void *)(uintptr_t)p);
	return r;
}

API CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t size)
{
	CUresult r = ready();
	if (!r)
		memcpy((void *)(uintptr_t)dst, src, size);
	return r;
}

API CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t size)
{
	CUresult r = ready();
	if (!r)
		memcpy(dst, (const void *)(uintptr_t)src, size);
	return r;
}

/* kernels/smoke.cu, on the CPU: y = a*x + y; sum += y * (i % 13 + 1). */
static void run_smoke(void **params)
{
	const float *x = (const float *)(uintptr_t) * (CUdeviceptr *)params[0];
	float *y = (float *)(uintptr_t) * (CUdeviceptr *)params[1];
	float a = *(float *)params[2];
	unsigned n = *(unsigned *)params[3];
	unsigned long long *sum = (unsigned long long *)(uintptr_t) * (CUdeviceptr *)params[4];
	for (unsigned i = 0; i < n; i++) {
		float v = a * x[i] + y[i];
		y[i] = v;
		*sum += (unsigned long long)v * (i % 13u + 1u);
	}
	if (st.mode == M_WRONG && n > 1) {
		y[n / 2] += 1.0f;
		*sum += 1;
	}
}

API CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			    unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params,
			    void **extra)
{
	(void)gy, (void)gz, (void)by, (void)bz, (void)shmem, (void)s, (void)extra;
	CUresult r = ready();
	if (r)
		return r;
	if (f != &fn_token || !params || !gx || !bx)
		return R_INVALID_HANDLE;
	if (st.mode == M_LAUNCH_FAIL)
		return R_LAUNCH_FAILED;
	if (st.mode == M_NO_LAUNCH)
		return R_NOT_SUPPORTED;
	run_smoke(params);
	return R_OK;
}

API CUresult cuCtxSynchronize(void) { return ready(); }

API CUresult cuGetErrorName(CUresult r, const char **name)
{
	static const struct {
		CUresult r;
		const char *name;
	} t[] = {
		{R_OK, "CUDA_SUCCESS"},
		{R_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE"},
		{R_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY"},
		{R_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED"},
		{R_STUB, "CUDA_ERROR_STUB_LIBRARY"},
		{R_NO_DEVICE, "CUDA_ERROR_NO_DEVICE"},
		{R_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE"},
		{R_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE"},
		{R_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT"},
		{R_NO_BINARY, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
		{R_INVALID_PTX, "CUDA_ERROR_INVALID_PTX"},
		{R_PTX_VERSION, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"},
		{R_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE"},
		{R_NOT_FOUND, "CUDA_ERROR_NOT_FOUND"},
		{R_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED"},
		{R_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED"},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (t[i].r == r) {
			*name = t[i].name;
			return R_OK;
		}
	*name = NULL;
	return R_INVALID_VALUE;
}
