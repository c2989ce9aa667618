/* gpucompat.c - which image of a fatbin module a device runs, by the CUDA
 * driver's rules (docs/fatbin.md). */
#include "offwheel/gpucompat.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "offwheel/error.h"

/* Digits only, a value in [lo, hi]; *end after the digits. */
static int parse_uint(const char *s, const char **end, long lo, long hi, long *v)
{
	if (*s < '0' || *s > '9')
		return -1;
	char *e;
	errno = 0;
	long x = strtol(s, &e, 10);
	if (errno || x < lo || x > hi || e - s > 6)
		return -1;
	*end = e;
	*v = x;
	return 0;
}

int ow_gpu_parse_device(const char *s, int *cc)
{
	const char *p, *e;
	long major, minor, whole;
	if (!s || !cc)
		return ow_err(OW_EINVAL, "device: NULL argument");
	p = strncmp(s, "sm_", 3) == 0 ? s + 3 : s;
	if (p == s && !parse_uint(p, &e, 1, 99, &major) && *e == '.' &&
	    !parse_uint(e + 1, &e, 0, 9, &minor) && !*e) {
		*cc = (int)(major * 10 + minor);
		return 0;
	}
	if (!parse_uint(p, &e, 30, 999, &whole) && !*e) {
		*cc = (int)whole;
		return 0;
	}
	return ow_err(OW_EINVAL, "device '%s': expected a compute capability such as 12.0, "
		      "sm_120 or 120", s);
}

int ow_gpu_parse_driver(const char *s, int *driver)
{
	const char *e;
	long major, minor, whole;
	if (!s || !driver)
		return ow_err(OW_EINVAL, "driver: NULL argument");
	if (!parse_uint(s, &e, 1, 99, &major) && *e == '.' &&
	    !parse_uint(e + 1, &e, 0, 99, &minor) && !*e && minor * 10 < 1000) {
		*driver = (int)(major * 1000 + minor * 10);
		return 0;
	}
	if (!parse_uint(s, &e, 1000, 999999, &whole) && !*e) {
		*driver = (int)whole;
		return 0;
	}
	return ow_err(OW_EINVAL, "driver version '%s': expected a CUDA version such as 12.8 "
		      "or 13.0", s);
}

void ow_gpu_format_cc(int cc, char *buf, size_t size)
{
	snprintf(buf, size, "%d.%d", cc / 10, cc % 10);
}

void ow_gpu_format_driver(int driver, char *buf, size_t size)
{
	snprintf(buf, size, "%d.%d", driver / 1000, driver % 1000 / 10);
}

/* PTX ISA (10 * major + minor) -> first CUDA driver that JITs it, sorted.
 * A driver JITs with the PTX compiler of its own CUDA release, so this is
 * the first toolkit that writes the ISA.  From 12.0 on measured by
 * scripts/ptx-isa-table on the nvidia-cuda-nvcc wheels of PyPI (13.x: the
 * .version nvcc writes and the newest one its ptxas accepts; 12.x: ptxas
 * only); docs/ptx-isa.md has the measurements.  8.6 is CUDA 12.7's, a
 * release PyPI never had (12.6 accepts 8.5, 12.8 accepts 8.7). */
static const struct {
	int isa, driver;
} ptx_table[] = {
	{60, 9000},  {61, 9010},  {62, 9020},  {63, 10000}, {64, 10010}, {65, 10020},
	{70, 11000}, {71, 11010}, {72, 11020}, {73, 11030}, {74, 11040}, {75, 11050},
	{76, 11060}, {77, 11070}, {78, 11080}, {80, 12000}, {81, 12010}, {82, 12020},
	{83, 12030}, {84, 12040}, {85, 12050}, {86, 12070}, {87, 12080}, {88, 12090},
	{90, 13000}, {91, 13010}, {92, 13020}, {93, 13030}, {94, 13040}, {95, 13050},
};

/* 1 and *driver when the table knows the ISA, else 0. */
static int isa_driver(unsigned isa_major, unsigned isa_minor, int *driver)
{
	size_t n = sizeof ptx_table / sizeof ptx_table[0];
	int isa = (int)(isa_major * 10 + isa_minor);
	*driver = 0;
	if (isa_minor > 9 || isa_major > 99 || isa > ptx_table[n - 1].isa)
		return 0;
	*driver = ptx_table[0].driver;
	for (size_t i = 0; i < n && ptx_table[i].isa <= isa; i++)
		*driver = ptx_table[i].driver;
	return 1;
}

int ow_gpu_ptx_newest_driver(void)
{
	return ptx_table[sizeof ptx_table / sizeof ptx_table[0] - 1].driver;
}

int ow_gpu_ptx_isa_driver(unsigned isa_major, unsigned isa_minor, int *driver)
{
	char newest[16];
	if (!driver)
		return ow_err(OW_EINVAL, "ow_gpu_ptx_isa_driver: NULL argument");
	if (!isa_driver(isa_major, isa_minor, driver)) {
		ow_gpu_format_driver(ow_gpu_ptx_newest_driver(), newest, sizeof newest);
		return ow_err(OW_ENOENT, "PTX ISA %u.%u: newer than this offwheel knows; needs a "
			      "driver newer than %s", isa_major, isa_minor, newest);
	}
	return 0;
}

/* Same family for 'f' targets: 10.x = {10.0, 10.3}, 11.0, 12.x = {12.0, 12.1}:
 * same major, minor not below the target's. */
static int same_family(int arch, int cc)
{
	return arch / 10 == cc / 10 && arch % 10 <= cc % 10;
}

int ow_gpu_entry_image(const struct ow_fatbin_entry *e, int cc)
{
	int arch = e->arch, ok;
	switch (e->kind) {
	case OW_FB_SASS:
		ok = e->variant == 'a' ? arch == cc : same_family(arch, cc);
		return ok ? OW_GPU_IMG_SASS : OW_GPU_IMG_NO;
	case OW_FB_PTX:
		if (e->variant == 'a')
			ok = arch == cc;
		else if (e->variant == 'f')
			ok = same_family(arch, cc);
		else
			ok = arch <= cc;
		return ok ? OW_GPU_IMG_PTX : OW_GPU_IMG_NO;
	default:
		return OW_GPU_IMG_NO;
	}
}

/* The better of two compatible SASS images: exact arch first, then the
 * newest. */
static int better_sass(const struct ow_fatbin_entry *a, const struct ow_fatbin_entry *b, int cc)
{
	if (!b)
		return 1;
	if ((a->arch == cc) != (b->arch == cc))
		return a->arch == cc;
	return a->arch > b->arch;
}

/* The compatible images of one module, as the driver sees them. */
struct pick {
	const struct ow_fatbin_entry *sass;     /* best compatible SASS */
	const struct ow_fatbin_entry *jit;      /* newest PTX the driver can JIT */
	int jit_need;
	const struct ow_fatbin_entry *easiest;  /* PTX needing the oldest driver */
	int easiest_need;                       /* 0: ISA unknown to the table */
};

static void consider_ptx(struct pick *p, const struct ow_fatbin_entry *e, int driver)
{
	int need = 0;
	int known = isa_driver(e->ver_major, e->ver_minor, &need);
	int runs = known ? driver >= need : driver > ow_gpu_ptx_newest_driver();
	if ((driver == 0 || runs) && (!p->jit || e->arch > p->jit->arch)) {
		p->jit = e;
		p->jit_need = need;
	}
	if (!p->easiest || (known && (p->easiest_need == 0 || need < p->easiest_need))) {
		p->easiest = e;
		p->easiest_need = need;
	}
}

int ow_gpu_module_verdict(const struct ow_fatbin *fb, const struct ow_fatbin_module *m,
			  int cc, int driver, struct ow_gpu_module_verdict *out)
{
	if (!fb || !m || !out || m->first > fb->n_entries || m->count > fb->n_entries - m->first)
		return ow_err(OW_EINVAL, "ow_gpu_module_verdict: bad module");
	memset(out, 0, sizeof *out);
	if (m->relocatable || m->count == 0 || m->no_kernels)
		return 0;
	struct pick p = {0};
	for (size_t i = 0; i < m->count; i++) {
		const struct ow_fatbin_entry *e = &fb->entries[m->first + i];
		int img = ow_gpu_entry_image(e, cc);
		if (img == OW_GPU_IMG_SASS && better_sass(e, p.sass, cc))
			p.sass = e;
		else if (img == OW_GPU_IMG_PTX)
			consider_ptx(&p, e, driver);
	}
	if (p.sass) {
		out->verdict = OW_GPU_NATIVE;
		out->image = p.sass;
	} else if (p.jit && driver) {
		out->verdict = OW_GPU_JIT;
		out->image = p.jit;
		out->driver_needed = p.jit_need;
	} else if (p.easiest) {
		/* driver unknown: the module runs on a driver that knows the
		 * oldest PTX ISA it carries */
		out->verdict = driver ? OW_GPU_PTX_TOO_NEW : OW_GPU_JIT;
		out->image = p.easiest;
		out->driver_needed = p.easiest_need;
	} else {
		out->verdict = OW_GPU_NONE;
	}
	return 0;
}

static int lib_verdict(const struct ow_gpu_library_verdict *v)
{
	size_t runs = v->n_native + v->n_jit, fails = v->n_none + v->n_ptx_too_new;
	if (runs + fails == 0)
		return OW_GPU_LIB_NO_CODE;
	if (runs == 0)
		return OW_GPU_LIB_NONE;
	if (fails)
		return OW_GPU_LIB_PARTIAL;
	return v->n_jit ? OW_GPU_LIB_JIT : OW_GPU_LIB_NATIVE;
}

int ow_gpu_library_verdict(const struct ow_fatbin *fb, int cc, int driver,
			   struct ow_gpu_library_verdict *out)
{
	return ow_gpu_library_verdict_part(fb, cc, driver, OW_GPU_ALL, out);
}

int ow_gpu_library_verdict_part(const struct ow_fatbin *fb, int cc, int driver, int part,
				struct ow_gpu_library_verdict *out)
{
	if (!fb || !out)
		return ow_err(OW_EINVAL, "ow_gpu_library_verdict: NULL argument");
	memset(out, 0, sizeof *out);
	int isa_unknown = 0;
	for (size_t i = 0; i < fb->n_modules; i++) {
		struct ow_gpu_module_verdict mv = {0};
		int scanned = fb->modules[i].scanned != 0;
		if ((part == OW_GPU_SECTIONS && scanned) || (part == OW_GPU_DATA && !scanned))
			continue;
		int rc = ow_gpu_module_verdict(fb, &fb->modules[i], cc, driver, &mv);
		if (rc)
			return rc;
		switch (mv.verdict) {
		case OW_GPU_SKIP: out->n_skipped++; break;
		case OW_GPU_NATIVE: out->n_native++; break;
		case OW_GPU_JIT:
			out->n_jit++;
			isa_unknown |= mv.driver_needed == 0;
			if (mv.driver_needed > out->driver_needed)
				out->driver_needed = mv.driver_needed;
			break;
		case OW_GPU_PTX_TOO_NEW: out->n_ptx_too_new++; break;
		default: out->n_none++; break;
		}
	}
	/* a module whose ISA the table does not know needs more than any known
	 * one: the known drivers of the others would understate it */
	if (isa_unknown)
		out->driver_needed = 0;
	out->verdict = lib_verdict(out);
	return 0;
}

const char *ow_gpu_verdict_name(int verdict)
{
	static const char *const names[] = {"skip", "native", "jit", "ptx-too-new", "none"};
	return verdict >= 0 && verdict <= OW_GPU_NONE ? names[verdict] : "unknown";
}

const char *ow_gpu_lib_verdict_name(int verdict)
{
	static const char *const names[] = {"no-code", "native", "jit", "partial", "none"};
	return verdict >= 0 && verdict <= OW_GPU_LIB_NONE ? names[verdict] : "unknown";
}
