/* auditverdict.c - per library summaries and verdicts, per audit verdicts,
 * and the name rules (which files can hold device code, which are NVIDIA's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "auditint.h"
#include "offwheel/error.h"

#define MAX_DISTINCT 128

/* ---- names ------------------------------------------------------------------ */

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

/* "libfoo.so", "libfoo.so.12", "libfoo.so.12.8.1". */
static int is_shared_object(const char *name)
{
	const char *so = strstr(name, ".so");
	while (so) {
		const char *p = so + 3;
		while (*p == '.' && p[1] >= '0' && p[1] <= '9') {
			p++;
			while (*p >= '0' && *p <= '9')
				p++;
		}
		if (!*p)
			return 1;
		so = strstr(so + 1, ".so");
	}
	return 0;
}

int ow_audit_is_candidate(const char *name)
{
	/* by name, so that a wheel member is inflated only when it may hold device
	 * code; what it holds is then told by content (fatbin.h) */
	static const char *const exts[] = {".dll", ".pyd", ".dylib", ".cubin", ".fatbin",
	                                   ".ptx", ".a", ".o"};
	const char *b = base_name(name);
	if (is_shared_object(b))
		return 1;
	for (size_t i = 0; i < sizeof exts / sizeof *exts; i++)
		if (ends_with(b, exts[i]))
			return 1;
	return 0;
}

static int in_vendor_dir(const char *path)
{
	if (!strncmp(path, "nvidia/", 7) || strstr(path, "/nvidia/"))
		return 1;
	for (const char *p = strstr(path, ".libs/"); p; p = strstr(p + 1, ".libs/"))
		if (p > path && p[-1] != '/')
			return 1;
	return 0;
}

int ow_audit_is_vendor(const char *path)
{
	static const char *const prefixes[] = {
		"libcublas", "libcudnn", "libcufft", "libcurand", "libcusolver", "libcusparse",
		"libnccl", "libnvjpeg", "libnvrtc", "libnvJitLink", "libcupti", "libcudart",
		"libnvToolsExt", "libcufile", "libnvshmem", "libnvblas", "libnvperf", "libnvvm",
		"libnpp", "libcudss", "libcutensor", "libcheckpoint", "libcuda.", "libnvidia",
		"libcudadevrt", "libculibos", "libpcsamplingutil", "libnvfatbin", "libnvptxcompiler",
	};
	const char *b = base_name(path);
	for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
		if (!strncmp(b, prefixes[i], strlen(prefixes[i])))
			return 1;
	return in_vendor_dir(path);
}

int ow_audit_is_vendor_lib(const char *path, const struct ow_fatbin *fb)
{
	/* a SONAME has no folder: only its name can tell */
	return ow_audit_is_vendor(path) || (fb && fb->soname && !strchr(fb->soname, '/') &&
	                                    ow_audit_is_vendor(fb->soname));
}

/* ---- summary ---------------------------------------------------------------- */

static int cmp_entry(const void *pa, const void *pb)
{
	const struct ow_fatbin_entry *a = pa, *b = pb;
	if (a->arch != b->arch)
		return a->arch < b->arch ? -1 : 1;
	if (a->variant != b->variant)
		return a->variant < b->variant ? -1 : 1;
	if (a->ver_major != b->ver_major)
		return a->ver_major < b->ver_major ? -1 : 1;
	return (a->ver_minor > b->ver_minor) - (a->ver_minor < b->ver_minor);
}

/* Same kind, arch and variant; PTX also the same ISA. */
static int same_name(const struct ow_fatbin_entry *a, const struct ow_fatbin_entry *b)
{
	return a->kind == b->kind && a->arch == b->arch && a->variant == b->variant &&
	       (a->kind != OW_FB_PTX ||
	        (a->ver_major == b->ver_major && a->ver_minor == b->ver_minor));
}

/* Which list a module's images go to: what the runtime registers at
 * start-up, link-time (-rdc) modules, or modules only the data scan found. */
enum { LIST_MAIN, LIST_RDC, LIST_DATA };

static int module_list_of(const struct ow_fatbin_module *m, int data_in_main)
{
	if (m->relocatable)
		return LIST_RDC;
	return m->scanned && !data_in_main ? LIST_DATA : LIST_MAIN;
}

static size_t distinct(const struct ow_fatbin *fb, int list, int data_in_main,
                       struct ow_fatbin_entry *d)
{
	size_t n = 0;
	for (size_t k = 0; k < fb->n_modules; k++) {
		const struct ow_fatbin_module *m = &fb->modules[k];
		if (module_list_of(m, data_in_main) != list)
			continue;
		for (size_t i = m->first; i < m->first + m->count && i < fb->n_entries; i++) {
			const struct ow_fatbin_entry *e = &fb->entries[i];
			size_t j = 0;
			while (j < n && !same_name(&d[j], e))
				j++;
			if (j == n && n < MAX_DISTINCT)
				d[n++] = *e;
		}
	}
	qsort(d, n, sizeof *d, cmp_entry);
	return n;
}

static void append(char *dst, size_t size, const char *word)
{
	/* a word that does not fit is never cut: the list ends with one "..." */
	size_t at = strlen(dst), wl = strlen(word);
	if (at + wl + 5 >= size) {
		if (at + 4 < size && !strstr(dst, "...")) {
			if (at)
				dst[at++] = ' ';
			memcpy(dst + at, "...", 4);
		}
		return;
	}
	if (at)
		dst[at++] = ' ';
	memcpy(dst + at, word, wl + 1);
}

static void list_kind(const struct ow_fatbin_entry *d, size_t n, int ptx, int lto, char *dst,
                      size_t size)
{
	dst[0] = 0;
	for (size_t i = 0; i < n; i++) {
		int is_ptx = d[i].kind == OW_FB_PTX, is_lto = d[i].kind == OW_FB_LTOIR;
		if (is_ptx != ptx || is_lto != lto)
			continue;
		char name[40], word[64];
		ow_fatbin_entry_name(&d[i], name, sizeof name);
		if (ptx)
			snprintf(word, sizeof word, "%s@%u.%u", name, d[i].ver_major, d[i].ver_minor);
		else
			snprintf(word, sizeof word, "%s", name);
		append(dst, size, word);
	}
}

void ow_audit_lib_summary(const struct ow_audit_lib *l, struct ow_audit_summary *out)
{
	memset(out, 0, sizeof *out);
	const struct ow_fatbin *fb = l->fb;
	for (size_t i = 0; i < fb->n_modules; i++) {
		const struct ow_fatbin_module *m = &fb->modules[i];
		out->n_reloc += m->relocatable != 0;
		out->n_empty += !m->relocatable && (m->count == 0 || m->no_kernels);
		out->n_code += !m->relocatable && m->count > 0 && !m->no_kernels;
		out->n_unchecked += !m->relocatable && m->count > 0 && !m->no_kernels && m->unchecked;
		out->n_scanned += m->scanned != 0;
	}
	out->n_modules = fb->n_modules;
	out->n_entries = fb->n_entries;
	/* data-scan modules are listed apart unless they are all the code */
	int data_in_main = 1;
	for (size_t i = 0; i < fb->n_modules; i++)
		if (!fb->modules[i].relocatable && !fb->modules[i].scanned && fb->modules[i].count)
			data_in_main = 0;
	struct ow_fatbin_entry d[MAX_DISTINCT];
	size_t n = distinct(fb, LIST_MAIN, data_in_main, d);
	list_kind(d, n, 0, 0, out->sass, sizeof out->sass);
	list_kind(d, n, 1, 0, out->ptx, sizeof out->ptx);
	list_kind(d, n, 0, 1, out->lto, sizeof out->lto);
	char part[512];
	static const int lists[2] = {LIST_RDC, LIST_DATA};
	char *dst[2] = {out->rdc, out->data};
	for (int k = 0; k < 2; k++) {
		n = distinct(fb, lists[k], data_in_main, d);
		dst[k][0] = 0;
		for (int kind = 0; kind < 3; kind++) {
			list_kind(d, n, kind == 1, kind == 2, part, sizeof part);
			if (*part)
				append(dst[k], sizeof out->rdc, part);
		}
	}
}

/* ---- verdicts --------------------------------------------------------------- */

/* SASS for an arch- or family-specific target (sm_90a, sm_100f): code that
 * uses the features of one architecture (family) and runs nowhere else. */
static int specific_sass(const struct ow_fatbin_entry *e)
{
	return e->kind == OW_FB_SASS && (e->variant == 'a' || e->variant == 'f');
}

/* A raw .ptx, .cubin or .fatbin file: device code a package loads itself. */
static int device_file(const struct ow_fatbin *fb)
{
	return fb->format == OW_FB_FMT_PTX || fb->format == OW_FB_FMT_CUBIN ||
	       fb->format == OW_FB_FMT_FATBIN;
}

/* In a raw device file, arch/family-specific PTX (compute_103a) counts too:
 * a package that ships it JITs it on that device only. */
static int specific_image(const struct ow_fatbin_entry *e, int devfile)
{
	return specific_sass(e) ||
	       (devfile && e->kind == OW_FB_PTX && (e->variant == 'a' || e->variant == 'f'));
}

int ow_audit_is_link_time(const struct ow_audit_lib *l)
{
	return l->fb->format == OW_FB_FMT_AR || l->fb->object;
}

/* Every image of its loadable modules with kernels is SASS for an arch- or
 * family-specific target (or, in a raw device file, such PTX): it runs on
 * those devices only. */
static int arch_specific_only(const struct ow_fatbin *fb)
{
	int code = 0, devfile = device_file(fb);
	for (size_t k = 0; k < fb->n_modules; k++) {
		const struct ow_fatbin_module *m = &fb->modules[k];
		if (m->relocatable || m->count == 0 || m->no_kernels)
			continue;
		for (size_t i = m->first; i < m->first + m->count && i < fb->n_entries; i++)
			if (!specific_image(&fb->entries[i], devfile))
				return 0;
		code = 1;
	}
	return code;
}

/* A module built for one architecture on purpose: no PTX, and one SASS
 * image, or only arch/family-specific ones (vllm's sm_75-only and
 * sm_90a-only kernels beside its all-architecture ones). */
static int per_arch_module(const struct ow_fatbin *fb, const struct ow_fatbin_module *m)
{
	size_t sass = 0, specific = 0;
	for (size_t i = m->first; i < m->first + m->count && i < fb->n_entries; i++) {
		if (fb->entries[i].kind != OW_FB_SASS)
			return 0;
		sass++;
		specific += specific_sass(&fb->entries[i]);
	}
	return sass == 1 || (sass && specific == sass);
}

/* The modules of the judged part without an image that are per-arch modules. */
static size_t count_per_arch_none(const struct ow_fatbin *fb, int cc, int driver, int data)
{
	size_t n = 0;
	for (size_t k = 0; k < fb->n_modules; k++) {
		const struct ow_fatbin_module *m = &fb->modules[k];
		struct ow_gpu_module_verdict mv;
		if ((m->scanned != 0) != data || ow_gpu_module_verdict(fb, m, cc, driver, &mv))
			continue;
		n += mv.verdict == OW_GPU_NONE && per_arch_module(fb, m);
	}
	return n;
}

int ow_audit_lib_verdict(const struct ow_audit_lib *l, int cc, int driver,
                         struct ow_audit_lib_verdict *out)
{
	memset(out, 0, sizeof *out);
	struct ow_gpu_library_verdict data;
	int rc = ow_gpu_library_verdict_part(l->fb, cc, driver, OW_GPU_SECTIONS, &out->v);
	if (!rc)
		rc = ow_gpu_library_verdict_part(l->fb, cc, driver, OW_GPU_DATA, &data);
	if (rc)
		return rc;
	if (out->v.verdict == OW_GPU_LIB_NO_CODE && data.verdict != OW_GPU_LIB_NO_CODE) {
		out->v = data; /* all of its code is in data sections */
		out->data_judged = 1;
	} else {
		out->data_modules = data.n_native + data.n_jit + data.n_none + data.n_ptx_too_new;
		out->data_no_image = data.n_none + data.n_ptx_too_new;
	}
	out->effective = out->v.verdict;
	if (l->vendor && out->v.verdict == OW_GPU_LIB_PARTIAL)
		out->effective = out->v.n_native ? OW_GPU_LIB_NATIVE : OW_GPU_LIB_JIT;
	out->fatal = out->effective == OW_GPU_LIB_NONE || out->effective == OW_GPU_LIB_PARTIAL;
	out->isa_unknown = out->v.n_jit && !out->v.driver_needed;
	out->extension = arch_specific_only(l->fb);
	if (out->v.n_none)
		out->per_arch_none = count_per_arch_none(l->fb, cc, driver, out->data_judged);
	return 0;
}

/* ---- roles: extensions and per-CUDA families ---------------------------------- */

/* "…/libbitsandbytes_cuda128.so": 128, and *stem the length of
 * "…/libbitsandbytes_cuda"; 0 for any other name. */
static int family_member(const char *path, size_t *stem)
{
	const char *b = base_name(path), *hit = NULL;
	for (const char *p = strstr(b, "_cuda"); p; p = strstr(p + 1, "_cuda"))
		hit = p;
	if (!hit)
		return 0;
	const char *d = hit + 5, *e = d;
	int n = 0;
	while (*e >= '0' && *e <= '9' && e - d < 4)
		n = n * 10 + (*e++ - '0');
	if (e - d < 2 || e - d > 3 || *e != '.')
		return 0;
	*stem = (size_t)(d - path);
	return n;
}

int ow_audit_family_cuda(const char *path)
{
	size_t stem;
	return family_member(path, &stem);
}

static int same_family(const char *a, size_t stem_a, const char *b)
{
	size_t stem_b;
	return family_member(b, &stem_b) && stem_a == stem_b && !strncmp(a, b, stem_a);
}

/* The member a family loads: the set's CUDA if a member has it, else the
 * newest member not above it, else (CUDA unknown, or all above it) the newest. */
static int better(int cand, int best, int cuda)
{
	if (!best)
		return 1;
	if (cuda && (cand == cuda) != (best == cuda))
		return cand == cuda;
	if (cuda && (cand <= cuda) != (best <= cuda))
		return cand <= cuda;
	return cand > best;
}

static int family_loaded(const struct ow_audit *a, size_t i, int cuda)
{
	size_t stem;
	int own = family_member(a->libs[i].path, &stem), best = 0, members = 0;
	for (size_t j = 0; j < a->n_libs; j++) {
		if (!same_family(a->libs[i].path, stem, a->libs[j].path))
			continue;
		members++;
		int n = family_member(a->libs[j].path, &stem);
		if (better(n, best, cuda))
			best = n;
	}
	return members < 2 || own == best;
}

static int runs(const struct ow_audit_lib_verdict *lv)
{
	return lv->role == OW_AUDIT_ROLE_REQUIRED &&
	       (lv->effective == OW_GPU_LIB_NATIVE || lv->effective == OW_GPU_LIB_JIT);
}

/* A library that runs natively here, whose only modules without an image
 * are per-arch modules, dispatches by architecture: it runs. */
static void apply_per_arch(const struct ow_audit *a, struct ow_audit_lib_verdict *lv)
{
	for (size_t i = 0; i < a->n_libs; i++) {
		struct ow_audit_lib_verdict *v = &lv[i];
		if (a->libs[i].vendor || v->extension || v->effective != OW_GPU_LIB_PARTIAL ||
		    !v->v.n_native || v->v.n_ptx_too_new || v->per_arch_none != v->v.n_none)
			continue;
		v->effective = v->v.n_jit ? OW_GPU_LIB_JIT : OW_GPU_LIB_NATIVE;
		v->fatal = 0;
		v->per_arch = 1;
	}
}

/* Extensions: some modules run is enough (one arch-specific module per
 * target is how they are built); none runs is "not for this device" when
 * another library of the target runs, or when it is a raw device file (a
 * package that compiles its kernels at run time ships them so). */
static void apply_extensions(const struct ow_audit *a, struct ow_audit_lib_verdict *lv)
{
	int any = 0;
	for (size_t i = 0; i < a->n_libs; i++) {
		if (lv[i].extension && !a->libs[i].vendor && lv[i].v.verdict == OW_GPU_LIB_PARTIAL) {
			lv[i].effective = OW_GPU_LIB_NATIVE;
			lv[i].fatal = 0;
		}
		any |= runs(&lv[i]);
	}
	for (size_t i = 0; i < a->n_libs; i++)
		if (lv[i].extension && lv[i].role == OW_AUDIT_ROLE_REQUIRED &&
		    lv[i].effective == OW_GPU_LIB_NONE && (any || device_file(a->libs[i].fb))) {
			lv[i].role = OW_AUDIT_ROLE_NOT_FOR_DEVICE;
			lv[i].fatal = 0;
		}
}

/* "libcupti.so.2026.2.0": the length of "libcupti" (the name up to ".so"). */
static size_t stem_len(const char *base)
{
	const char *so = strstr(base, ".so");
	return so ? (size_t)(so - base) : strlen(base);
}

/* Another copy of library i (its name, another folder) runs here. */
static int other_copy_runs(const struct ow_audit *a, const struct ow_audit_lib_verdict *lv,
                           size_t i)
{
	const char *p = a->libs[i].path, *b = base_name(p);
	size_t n = stem_len(b), dir = (size_t)(b - p);
	for (size_t j = 0; j < a->n_libs; j++) {
		const char *pj = a->libs[j].path, *bj = base_name(pj);
		size_t dj = (size_t)(bj - pj);
		if (j != i && runs(&lv[j]) && stem_len(bj) == n && !strncmp(b, bj, n) &&
		    (dj != dir || strncmp(p, pj, dir)))
			return 1;
	}
	return 0;
}

/* NVIDIA libraries shipped in several builds, one per device generation
 * (triton's cupti/ and cupti-blackwell/): the copy that cannot run here is
 * not the one loaded when another copy runs. */
static void apply_other_copies(const struct ow_audit *a, struct ow_audit_lib_verdict *lv)
{
	for (size_t i = 0; i < a->n_libs; i++)
		if (a->libs[i].vendor && lv[i].role == OW_AUDIT_ROLE_REQUIRED &&
		    lv[i].effective == OW_GPU_LIB_NONE && other_copy_runs(a, lv, i)) {
			lv[i].role = OW_AUDIT_ROLE_OTHER_COPY;
			lv[i].fatal = 0;
		}
}

int ow_audit_lib_verdicts(const struct ow_audit *a, int cc, int driver,
                          const struct ow_audit_rules *rules, struct ow_audit_lib_verdict **out)
{
	struct ow_audit_lib_verdict *lv = calloc(a->n_libs ? a->n_libs : 1, sizeof *lv);
	*out = NULL;
	if (!lv)
		return ow_err(OW_ENOMEM, "audit verdicts: out of memory");
	for (size_t i = 0; i < a->n_libs; i++) {
		int rc = ow_audit_lib_verdict(&a->libs[i], cc, driver, &lv[i]);
		if (rc) {
			free(lv);
			return rc;
		}
	}
	for (size_t i = 0; i < a->n_libs; i++)
		if (ow_audit_is_link_time(&a->libs[i])) { /* linked, never loaded */
			lv[i].role = OW_AUDIT_ROLE_LINK_TIME;
			lv[i].fatal = 0;
		}
	if (!rules || !rules->strict) {
		for (size_t i = 0; i < a->n_libs; i++)
			if (lv[i].role == OW_AUDIT_ROLE_REQUIRED &&
			    !family_loaded(a, i, rules ? rules->cuda : 0)) {
				lv[i].role = OW_AUDIT_ROLE_OTHER_CUDA;
				lv[i].fatal = 0;
			}
		apply_per_arch(a, lv);
		apply_extensions(a, lv);
		apply_other_copies(a, lv);
	}
	*out = lv;
	return 0;
}

static void count_lib(struct ow_audit_result *r, const struct ow_audit_lib_verdict *lv)
{
	if (lv->role != OW_AUDIT_ROLE_REQUIRED) {
		r->n_not_for_device += lv->role == OW_AUDIT_ROLE_NOT_FOR_DEVICE;
		r->n_other_cuda += lv->role == OW_AUDIT_ROLE_OTHER_CUDA;
		r->n_link_time += lv->role == OW_AUDIT_ROLE_LINK_TIME;
		r->n_other_copy += lv->role == OW_AUDIT_ROLE_OTHER_COPY;
		return;
	}
	switch (lv->effective) {
	case OW_GPU_LIB_NATIVE: r->n_native++; break;
	case OW_GPU_LIB_JIT: r->n_jit++; break;
	case OW_GPU_LIB_PARTIAL: r->n_partial++; break;
	case OW_GPU_LIB_NONE: r->n_none++; break;
	default: r->n_no_code++; break;
	}
	if (lv->effective == OW_GPU_LIB_JIT || lv->effective == OW_GPU_LIB_NATIVE) {
		if (lv->v.driver_needed > r->driver_needed)
			r->driver_needed = lv->v.driver_needed;
		r->isa_unknown |= lv->isa_unknown;
	}
	r->fatal |= lv->fatal;
}

static int overall(const struct ow_audit_result *r)
{
	size_t code = r->n_native + r->n_jit + r->n_partial + r->n_none;
	if (!code)
		return OW_AUDIT_NO_CODE;
	if (r->n_none == code)
		return OW_AUDIT_NONE;
	if (r->n_none || r->n_partial)
		return OW_AUDIT_PARTIAL;
	return r->n_jit ? OW_AUDIT_JIT : OW_AUDIT_NATIVE;
}

int ow_audit_verdict(const struct ow_audit *a, int cc, int driver, struct ow_audit_result *out)
{
	return ow_audit_verdict_rules(a, cc, driver, NULL, out);
}

int ow_audit_verdict_rules(const struct ow_audit *a, int cc, int driver,
                           const struct ow_audit_rules *rules, struct ow_audit_result *out)
{
	struct ow_audit_lib_verdict *lv;
	memset(out, 0, sizeof *out);
	int rc = ow_audit_lib_verdicts(a, cc, driver, rules, &lv);
	if (rc)
		return rc;
	size_t files_left_out = 0; /* raw device files not for this device */
	for (size_t i = 0; i < a->n_libs; i++) {
		count_lib(out, &lv[i]);
		files_left_out += lv[i].role == OW_AUDIT_ROLE_NOT_FOR_DEVICE &&
		                  device_file(a->libs[i].fb);
	}
	free(lv);
	out->verdict = overall(out);
	out->runtime_only = out->verdict == OW_AUDIT_NO_CODE && files_left_out &&
	                    files_left_out == out->n_not_for_device;
	if (out->isa_unknown)
		out->driver_needed = 0; /* only "newer than the table" is known */
	return 0;
}

const char *ow_audit_verdict_name(int verdict)
{
	static const char *const names[] = {"no-code", "native", "jit", "partial", "none"};
	return verdict >= 0 && verdict <= OW_AUDIT_NONE ? names[verdict] : "unknown";
}
