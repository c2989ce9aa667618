/* smoke.c - the installed set on the machine's GPU (see smoke.h). */
#include "offwheel/smoke.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fmt.h"
#include "offwheel/error.h"
#include "offwheel/fatbin.h"

#define MAX_CONTAINER ((uint64_t)1 << 30)
#define MAX_ARCH_KEYS 64

const char *ow_load_status_name(int status)
{
	static const char *const names[] = {"loaded", "no-binary-for-gpu", "unsupported-ptx-version",
					    "error", "static-only", "unreadable"};
	if (status < 0 || status > OW_LOAD_UNREADABLE)
		return "unknown";
	return names[status];
}

/* ---- static half ------------------------------------------------------------ */

static int module_has_code(const struct ow_fatbin_module *m)
{
	return !m->relocatable && m->count > 0;
}

struct arch_key {
	uint16_t kind, arch;
	char variant;
	uint16_t isa_major, isa_minor;
};

static int key_cmp(const void *pa, const void *pb)
{
	const struct arch_key *a = pa, *b = pb;
	static const int order[9] = {9, 1, 0, 9, 2, 9, 9, 9, 3}; /* SASS, PTX, cubin, LTO */
	int ka = a->kind < 9 ? order[a->kind] : 9, kb = b->kind < 9 ? order[b->kind] : 9;
	if (ka != kb)
		return ka - kb;
	if (a->arch != b->arch)
		return a->arch - b->arch;
	if (a->variant != b->variant)
		return a->variant - b->variant;
	return (a->isa_major * 100 + a->isa_minor) - (b->isa_major * 100 + b->isa_minor);
}

static size_t collect_keys(const struct ow_fatbin *fb, struct arch_key *keys)
{
	size_t n = 0;
	for (size_t m = 0; m < fb->n_modules; m++) {
		if (!module_has_code(&fb->modules[m]))
			continue;
		for (size_t i = 0; i < fb->modules[m].count; i++) {
			const struct ow_fatbin_entry *e = &fb->entries[fb->modules[m].first + i];
			int ptx = e->kind == OW_FB_PTX;
			struct arch_key k = {e->kind, e->arch, e->variant, ptx ? e->ver_major : 0,
					     ptx ? e->ver_minor : 0};
			size_t j = 0;
			while (j < n && key_cmp(&keys[j], &k))
				j++;
			if (j == n && n < MAX_ARCH_KEYS)
				keys[n++] = k;
		}
	}
	qsort(keys, n, sizeof *keys, key_cmp);
	return n;
}

static void format_archs(const struct ow_fatbin *fb, char *buf, size_t size)
{
	struct arch_key keys[MAX_ARCH_KEYS];
	size_t n = collect_keys(fb, keys), used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		struct ow_fatbin_entry e = {.kind = keys[i].kind, .arch = keys[i].arch,
					    .variant = keys[i].variant};
		char name[32];
		ow_fatbin_entry_name(&e, name, sizeof name);
		int rc = keys[i].kind == OW_FB_PTX
				? ow_fmt_append(buf, size, &used, "%s%s@%u.%u", used ? " " : "", name,
						keys[i].isa_major, keys[i].isa_minor)
				: ow_fmt_append(buf, size, &used, "%s%s", used ? " " : "", name);
		if (rc) {
			ow_fmt_append(buf, size, &used, " ...");
			break;
		}
	}
}

static size_t count_code_modules(const struct ow_fatbin *fb)
{
	size_t n = 0;
	for (size_t m = 0; m < fb->n_modules; m++)
		n += module_has_code(&fb->modules[m]) != 0;
	return n;
}

static int static_ok(const struct ow_lib_check *l)
{
	return l->stat.verdict == OW_GPU_LIB_NATIVE || l->stat.verdict == OW_GPU_LIB_JIT;
}

/* Fill the static part; *fb_out keeps the listing for the loads. */
static void check_file_static(struct ow_lib_check *l, int cc, int driver,
			      struct ow_fatbin **fb_out)
{
	struct ow_fatbin *fb = NULL;
	l->read_rc = ow_fatbin_read_file(l->path, 0, &fb);
	if (l->read_rc) {
		l->read_detail = ow_err_detail_dup();
		l->status = OW_LOAD_UNREADABLE;
		return;
	}
	l->n_modules = count_code_modules(fb);
	format_archs(fb, l->archs, sizeof l->archs);
	ow_gpu_library_verdict(fb, cc, driver, &l->stat);
	l->status = OW_LOAD_STATIC_ONLY;
	l->ok = static_ok(l);
	*fb_out = fb;
}

void ow_lib_checks_free(struct ow_lib_check *libs, size_t n)
{
	for (size_t i = 0; libs && i < n; i++) {
		free(libs[i].path);
		free(libs[i].read_detail);
	}
	free(libs);
}

static int peek_has_code(const char *path)
{
	struct ow_fatbin *fb = NULL;
	int has = ow_fatbin_read_file(path, 0, &fb) != 0 || count_code_modules(fb) > 0;
	ow_fatbin_free(fb);
	return has; /* unreadable files are kept, to be reported */
}

/* The libraries of the set that hold device code, as checks to fill. */
static int list_code_libs(const struct ow_torch_install *in, struct ow_lib_check **libs,
			  size_t *n, size_t *n_without)
{
	*libs = calloc(in->n_libs ? in->n_libs : 1, sizeof **libs);
	/* analyzer: *libs is r->devs[i].libs, freed with the report */
	*n = 0;
	*n_without = 0;
	if (!*libs)
		return ow_err(OW_ENOMEM, "out of memory");
	for (size_t i = 0; i < in->n_libs; i++) {
		if (!peek_has_code(in->libs[i].path)) {
			(*n_without)++;
			continue;
		}
		struct ow_lib_check *l = &(*libs)[(*n)++];
		l->path = strdup(in->libs[i].path);
		/* analyzer: l->path is (*libs)[*n - 1], freed with the report */
		l->pkg = in->pkgs[in->libs[i].pkg].name;
		if (!l->path)
			return ow_err(OW_ENOMEM, "out of memory");
	}
	return 0;
}

int ow_smoke_check_static(const struct ow_torch_install *in, int cc, int driver,
			  struct ow_lib_check **libs, size_t *n, size_t *n_without_code)
{
	int rc = list_code_libs(in, libs, n, n_without_code);
	for (size_t i = 0; !rc && i < *n; i++) {
		struct ow_fatbin *fb = NULL;
		check_file_static(&(*libs)[i], cc, driver, &fb);
		ow_fatbin_free(fb);
	}
	if (rc) {
		ow_lib_checks_free(*libs, *n);
		*libs = NULL;
		*n = 0;
	}
	return rc;
}

/* ---- loading with the driver -------------------------------------------------- */

/* The static prediction for one module as a CUresult. */
static int predicted_result(const struct ow_fatbin *fb, const struct ow_fatbin_module *m, int cc,
			    int driver)
{
	struct ow_gpu_module_verdict v = {0};
	ow_gpu_module_verdict(fb, m, cc, driver, &v);
	if (v.verdict == OW_GPU_NONE)
		return OW_CU_NO_BINARY_FOR_GPU;
	return v.verdict == OW_GPU_PTX_TOO_NEW ? OW_CU_UNSUPPORTED_PTX_VERSION : 0;
}

static void count_result(struct ow_lib_check *l, int res)
{
	l->n_tried++;
	if (res == 0)
		l->n_loaded++;
	else if (res == OW_CU_NO_BINARY_FOR_GPU)
		l->n_no_binary++;
	else if (res == OW_CU_UNSUPPORTED_PTX_VERSION)
		l->n_ptx_version++;
	else if (l->n_error++ == 0)
		l->error_res = res;
}

static int load_one(ow_cuda *cu, int fd, const struct ow_fatbin_module *m, int *res)
{
	if (m->size > MAX_CONTAINER)
		return ow_err(OW_ETOOBIG, "fatbin container of %llu bytes", (unsigned long long)m->size);
	void *buf = malloc((size_t)m->size);
	if (!buf)
		return ow_err(OW_ENOMEM, "out of memory reading a fatbin container");
	ssize_t got = pread(fd, buf, (size_t)m->size, (off_t)m->offset);
	int rc = got == (ssize_t)m->size ? ow_cuda_try_load(cu, buf, res)
					 : ow_err(OW_EIO, "short read of a fatbin container");
	free(buf);
	return rc;
}

/* Spread `sample` picks over the n code modules: first, last, evenly between. */
static int picked(size_t k, size_t n, size_t sample)
{
	if (!sample || n <= sample)
		return 1;
	for (size_t j = 0; j < sample; j++)
		if (j * (n - 1) / (sample - 1) == k)
			return 1;
	return 0;
}

static int load_modules(ow_cuda *cu, const struct ow_fatbin *fb, int cc, int driver,
			size_t sample, struct ow_lib_check *l)
{
	int fd = open(l->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* read as a fatbin before */
	if (fd < 0)
		return ow_err(OW_EIO, "%s: cannot open", l->path);
	int rc = 0;
	for (size_t m = 0, k = 0; !rc && m < fb->n_modules; m++) {
		if (!module_has_code(&fb->modules[m]) || !picked(k++, l->n_modules, sample))
			continue;
		int res = 0;
		rc = load_one(cu, fd, &fb->modules[m], &res);
		if (rc)
			break;
		count_result(l, res);
		l->n_disagree += res != predicted_result(fb, &fb->modules[m], cc, driver) &&
				 (res == 0 || res == OW_CU_NO_BINARY_FOR_GPU ||
				  res == OW_CU_UNSUPPORTED_PTX_VERSION);
	}
	close(fd);
	return rc;
}

static void summarize_loads(struct ow_lib_check *l, int all)
{
	l->status = l->n_no_binary ? OW_LOAD_NO_BINARY
		    : l->n_ptx_version ? OW_LOAD_PTX_VERSION
		    : l->n_error       ? OW_LOAD_ERROR
				       : OW_LOAD_OK;
	l->ok = l->status == OW_LOAD_OK && (all || static_ok(l));
}

static int check_lib_on_device(ow_cuda *cu, struct ow_lib_check *l, int cc, int driver,
			       const struct ow_smoke_opts *o)
{
	struct ow_fatbin *fb = NULL;
	check_file_static(l, cc, driver, &fb);
	if (l->read_rc)
		return 0;
	size_t sample = o->all ? 0 : o->sample ? o->sample : OW_SMOKE_DEFAULT_SAMPLE;
	int rc = load_modules(cu, fb, cc, driver, sample, l);
	ow_fatbin_free(fb);
	if (rc)
		return ow_err_prefix(rc, "%s: ", l->path);
	summarize_loads(l, o->all);
	return 0;
}

/* ---- the run ---------------------------------------------------------------- */

int ow_smoke_find_install(const struct ow_smoke_opts *o, struct ow_torch_install **out)
{
	if (o->site)
		return ow_torch_find_site(o->site, out);
	return ow_torch_find_python(o->python ? o->python : "python3", out);
}

void ow_smoke_report_free(struct ow_smoke_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_devs; i++) {
		if (r->devs[i].same_as < 0)
			ow_lib_checks_free(r->devs[i].libs, r->devs[i].n_libs);
		free(r->devs[i].kernel_detail);
		free(r->devs[i].detail);
	}
	free(r->devs);
	ow_torch_install_free(r->install);
	free(r->libcuda);
	free(r->driver_detail);
	free(r->install_detail);
	free(r);
}

static void find_install(const struct ow_smoke_opts *o, struct ow_smoke_report *r)
{
	r->install_rc = ow_smoke_find_install(o, &r->install);
	if (r->install_rc)
		r->install_detail = ow_err_detail_dup();
}

static int open_driver(struct ow_smoke_report *r, ow_cuda **cu)
{
	const char *env = getenv("OFFWHEEL_LIBCUDA");
	r->libcuda = strdup(env && *env ? env : "libcuda.so.1");
	int rc = r->libcuda ? ow_cuda_open(cu) : ow_err(OW_ENOMEM, "out of memory");
	if (!rc)
		rc = ow_cuda_driver_version(*cu, &r->driver);
	if (!rc)
		rc = ow_cuda_device_count(*cu, &r->n_devices);
	if (!rc && r->n_devices <= 0)
		rc = ow_err(OW_ENODRIVER, "the CUDA driver reports no device");
	if (rc)
		r->driver_detail = ow_err_detail_dup();
	r->driver_rc = rc;
	return rc;
}

static int select_devices(const struct ow_smoke_opts *o, struct ow_smoke_report *r)
{
	if (o->device >= r->n_devices)
		return ow_err(OW_EINVAL, "--device %d: the driver reports %d device(s), 0 to %d",
			      o->device, r->n_devices, r->n_devices - 1);
	r->n_devs = o->device >= 0 ? 1 : (size_t)r->n_devices;
	r->devs = calloc(r->n_devs, sizeof *r->devs);
	if (!r->devs)
		return ow_err(OW_ENOMEM, "out of memory");
	for (size_t i = 0; i < r->n_devs; i++)
		r->devs[i].same_as = -1;
	return 0;
}

static void run_kernel(ow_cuda *cu, struct ow_smoke_dev *d)
{
	d->kernel_run = 1;
	d->kernel_rc = ow_cuda_smoke(cu, d->dev.ordinal, &d->kernel);
	if (d->kernel_rc)
		d->kernel_detail = ow_err_detail_dup();
}

static int share_earlier_check(struct ow_smoke_report *r, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (r->devs[j].same_as < 0 && r->devs[j].dev.cc == r->devs[i].dev.cc &&
		    r->devs[j].libs) {
			r->devs[i].same_as = (int)j;
			r->devs[i].libs = r->devs[j].libs;
			r->devs[i].n_libs = r->devs[j].n_libs;
			return 1;
		}
	return 0;
}

static int check_libs(ow_cuda *cu, const struct ow_smoke_opts *o, struct ow_smoke_report *r,
		      size_t i)
{
	struct ow_smoke_dev *d = &r->devs[i];
	if (!r->install || share_earlier_check(r, i))
		return 0;
	int rc = list_code_libs(r->install, &d->libs, &d->n_libs, &r->n_libs_without_code);
	for (size_t k = 0; !rc && k < d->n_libs; k++)
		rc = check_lib_on_device(cu, &d->libs[k], d->dev.cc, r->driver, o);
	return rc;
}

/* This device's verdict, with the reason in d->detail. */
static int device_verdict(const struct ow_smoke_report *r, struct ow_smoke_dev *d)
{
	size_t bad = 0;
	const char *first = NULL;
	for (size_t k = 0; k < d->n_libs; k++)
		if (!d->libs[k].ok && bad++ == 0)
			first = d->libs[k].path;
	if (d->kernel_run && d->kernel_rc)
		return ow_err(d->kernel_rc, "%s", d->kernel_detail ? d->kernel_detail : "");
	if (bad)
		return ow_err(OW_ENOIMAGE, "%zu librar%s of the installed set cannot run on device "
					   "%d (first: %s)",
			      bad, bad == 1 ? "y" : "ies", d->dev.ordinal, first);
	if (!r->install)
		return ow_err(r->install_rc, "%s", r->install_detail ? r->install_detail : "");
	return 0;
}

static int rank(int rc)
{
	return rc == 0 ? 0 : rc == OW_ENOIMAGE ? 5 : rc == OW_EVERIFY ? 4 : rc == OW_ENOENT ? 2 : 3;
}

static int run_device(ow_cuda *cu, const struct ow_smoke_opts *o, struct ow_smoke_report *r,
		      size_t i)
{
	struct ow_smoke_dev *d = &r->devs[i];
	int ordinal = o->device >= 0 ? o->device : (int)i;
	int rc = ow_cuda_device(cu, ordinal, &d->dev);
	if (!rc)
		rc = ow_cuda_select(cu, ordinal);
	if (rc)
		return rc;
	if (!o->no_kernel)
		run_kernel(cu, d);
	if ((rc = check_libs(cu, o, r, i)))
		return rc;
	d->rc = device_verdict(r, d);
	if (d->rc)
		d->detail = ow_err_detail_dup();
	return 0;
}

static int run_devices(ow_cuda *cu, const struct ow_smoke_opts *o, struct ow_smoke_report *r)
{
	const struct ow_smoke_dev *worst = NULL;
	for (size_t i = 0; i < r->n_devs; i++) {
		int rc = run_device(cu, o, r, i);
		if (rc)
			return rc;
		if (rank(r->devs[i].rc) > rank(worst ? worst->rc : 0))
			worst = &r->devs[i];
	}
	return worst ? ow_err(worst->rc, "%s", worst->detail ? worst->detail : "") : 0;
}

int ow_smoke_run(const struct ow_smoke_opts *o, struct ow_smoke_report **out)
{
	struct ow_smoke_report *r = calloc(1, sizeof *r);
	ow_cuda *cu = NULL;
	*out = r;
	if (!r)
		return ow_err(OW_ENOMEM, "out of memory");
	find_install(o, r);
	int rc = open_driver(r, &cu);
	if (!rc)
		rc = select_devices(o, r);
	if (!rc)
		rc = run_devices(cu, o, r);
	ow_cuda_close(cu);
	return rc;
}
