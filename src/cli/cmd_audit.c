/* cmd_audit.c - offwheel audit: which GPU architectures do wheels, libraries
 * and directories carry, and can a given device run them? */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "offwheel/audit.h"
#include "cli.h"
#include "offwheel/cuda.h"
#include "offwheel/devicefit.h"
#include "offwheel/export.h"
#include "offwheel/resolve.h"
#include "offwheel/str.h"
#include "targetopts.h"

static const char usage[] = "audit PATH|SHA256|FILENAME|set:ID... [--device CC[,CC]|auto] [--driver X.Y] [--strict]";
static const char description[] =
	"List the CUDA code (SASS architectures, PTX with its ISA, LTO-IR, module counts)\n"
	"of wheels (read from the zip, only members that can hold device code, never\n"
	"extracted), libraries, directories (site-packages), or stored objects given by\n"
	"sha256 or by a fetched file name (cached in the index: read once), or every\n"
	"fetched member of a resolved set (set:ID, see 'offwheel ls sets'; exit 4 when\n"
	"some members are not fetched yet).\n"
	"With --device, a verdict per library and per target: native, jit (PTX only;\n"
	"--driver checks the driver can JIT it), partial, none (\"no kernel image is\n"
	"available for execution on the device\"), no-code.\n"
	"Exit 3 when the device cannot run a target: a library with no image at all,\n"
	"or a non-NVIDIA library (torch, torchvision, ...) with a module that has no\n"
	"image.  NVIDIA's libraries (cuBLAS, cuDNN, ... often one architecture per\n"
	"module) count as runnable when some of their modules run.  A library built only\n"
	"for arch-specific targets (sm_90a ...) that this device cannot run is \"not for\n"
	"this device\" while the target's other libraries run, and of a family of\n"
	"per-CUDA builds (libbitsandbytes_cudaXYZ.so) only the one loaded counts (the\n"
	"set's CUDA, else the newest); --strict judges every library alike.\n"
	"-v lists modules.\n"
	"The verdict on a stored torch wheel (set:ID, or by name) is recorded for each\n"
	"set it belongs to: export refuses a set recorded as not running.";

enum { OPT_DEVICE = 256, OPT_DRIVER, OPT_SCAN, OPT_NO_CACHE, OPT_STRICT };
static const struct cli_opt opts[] = {
	{"device", OPT_DEVICE, required_argument, "X.Y|auto",
	 "compute capability to judge for (12.0, sm_86; auto: this machine's GPU 0)"},
	{"driver", OPT_DRIVER, required_argument, "X.Y", "driver version for PTX JIT (12.8)"},
	{"scan-data", OPT_SCAN, required_argument, "WHEN",
	 "auto|always|never: magic-scan data sections for fatbins (default auto)"},
	{"no-cache", OPT_NO_CACHE, no_argument, NULL, "read stored objects again, ignore the index"},
	{"strict", OPT_STRICT, no_argument, NULL,
	 "every library counts: no arch-specific extensions, no per-CUDA families"},
	{NULL, 0, 0, NULL, NULL},
};

struct args {
	const char *device, *driver;
	int cc, drv;
	int ccs[CLI_MAX_DEVICES]; /* --device 12.0,8.0: each judged in turn */
	size_t nccs;
	struct ow_audit_opts ao;
	struct ow_audit_rules rules;
};

static int on_opt(struct cli *c, int key, const char *arg, void *ud)
{
	struct args *a = ud;
	switch (key) {
	case OPT_DEVICE: a->device = arg; return 0;
	case OPT_DRIVER: a->driver = arg; return 0;
	case OPT_NO_CACHE: a->ao.no_cache = 1; return 0;
	case OPT_STRICT: a->rules.strict = 1; return 0;
	case OPT_SCAN:
		if (!strcmp(arg, "auto") || !strcmp(arg, "always") || !strcmp(arg, "never")) {
			a->ao.scan = arg[1] == 'u' ? OW_AUDIT_SCAN_AUTO
			             : arg[1] == 'l' ? OW_AUDIT_SCAN_ALWAYS : OW_AUDIT_SCAN_NEVER;
			return 0;
		}
		return cli_usage_error(c, "audit: --scan-data takes auto, always or never");
	default: return 2;
	}
}

/* --device auto: GPU 0 of this machine, and its driver unless --driver. */
static int device_auto(struct cli *c, struct args *a)
{
	ow_cuda *cu;
	struct ow_cuda_device dev;
	int drv = 0;
	int rc = ow_cuda_open(&cu);
	if (rc)
		return ow_err_prefix(rc, "--device auto needs a GPU and its driver (or give "
		                     "--device X.Y): ");
	rc = ow_cuda_device(cu, 0, &dev);
	if (!rc)
		rc = ow_cuda_driver_version(cu, &drv);
	ow_cuda_close(cu);
	if (rc)
		return rc;
	a->cc = dev.cc;
	if (!a->driver)
		a->drv = drv;
	cli_say(c, "device 0: %s, compute capability %d.%d\n", dev.name, dev.cc / 10, dev.cc % 10);
	return 0;
}

static int parse_device(struct cli *c, struct args *a)
{
	if (a->driver && ow_gpu_parse_driver(a->driver, &a->drv))
		return cli_usage_error(c, "audit: --driver '%s' is not a version like 12.8", a->driver);
	if (!a->device)
		return 0;
	if (!strcmp(a->device, "auto")) {
		int rc = device_auto(c, a);
		return rc ? cli_fail(c, rc) : 0;
	}
	int rc = cli_parse_devices(c, a->device, a->ccs, &a->nccs);
	a->cc = rc ? 0 : a->ccs[0];
	return rc;
}

/* ---- JSON ------------------------------------------------------------------ */

static json_t *words(const char *s)
{
	json_t *arr = json_array();
	while (*s) {
		size_t n = strcspn(s, " ");
		if (n)
			json_array_append_new(arr, json_stringn(s, n));
		s += n + (s[n] == ' ');
	}
	return arr;
}

static json_t *driver_json(int drv)
{
	char b[16];
	if (!drv)
		return json_null();
	ow_gpu_format_driver(drv, b, sizeof b);
	return json_string(b);
}

/* "driver_newer_than": the newest driver of the table where all that is known
 * of the need is that it is newer, else null. */
static json_t *newer_json(int isa_unknown)
{
	return isa_unknown ? driver_json(ow_gpu_ptx_newest_driver()) : json_null();
}

static json_t *ptx_json(const char *s)
{
	json_t *arr = json_array(), *names = words(s);
	size_t i;
	json_t *v;
	json_array_foreach(names, i, v) {
		const char *w = json_string_value(v), *at = strchr(w, '@');
		char *end = NULL;
		unsigned long maj = at ? strtoul(at + 1, &end, 10) : 0;
		unsigned long min = end && *end == '.' ? strtoul(end + 1, NULL, 10) : 0;
		int drv = 0;
		if (at && maj < 100 && min < 100)
			ow_gpu_ptx_isa_driver((unsigned)maj, (unsigned)min, &drv);
		json_array_append_new(arr, json_pack("{s:s%, s:s, s:o, s:o}", "name", w,
		                                     at ? (size_t)(at - w) : strlen(w), "isa",
		                                     at ? at + 1 : "", "driver", driver_json(drv),
		                                     "driver_newer_than", newer_json(at && !drv)));
	}
	json_decref(names);
	ow_err_clear();
	return arr;
}

/* The device a module is judged on. */
struct dev_ask {
	int cc, drv;
};

/* Module i of l: its entries as one line, and its verdict on the device
 * when one is given (dev NULL: none). */
static const struct ow_fatbin_module *module_line(const struct ow_audit_lib *l, size_t i,
                                                  const struct dev_ask *dev, char *line,
                                                  size_t n, struct ow_gpu_module_verdict *mv)
{
	const struct ow_fatbin_module *m = &l->fb->modules[i];
	*mv = (struct ow_gpu_module_verdict){0};
	if (ow_fatbin_module_format(l->fb, m, line, n))
		snprintf(line, n, "(too long)");
	if (dev)
		ow_gpu_module_verdict(l->fb, m, dev->cc, dev->drv, mv);
	return m;
}

static json_t *modules_json(const struct ow_audit_lib *l, int cc, int drv, int have_device)
{
	json_t *arr = json_array();
	char line[4096];
	const struct dev_ask dev = {cc, drv};
	for (size_t i = 0; i < l->fb->n_modules; i++) {
		struct ow_gpu_module_verdict mv;
		const struct ow_fatbin_module *m =
		    module_line(l, i, have_device ? &dev : NULL, line, sizeof line, &mv);
		/* kernels: null when not looked into (it has an image for the device) */
		json_array_append_new(arr, json_pack("{s:s, s:b, s:b, s:o, s:s, s:o}", "section",
		                                     m->section, "relocatable", m->relocatable,
		                                     "scanned", m->scanned, "kernels",
		                                     m->unchecked ? json_null()
		                                                  : json_boolean(!m->no_kernels),
		                                     "entries", line, "verdict", have_device ?
		                                     json_string(ow_gpu_verdict_name(mv.verdict)) :
		                                     json_null()));
	}
	return arr;
}

static const char *role_name(int role)
{
	static const char *const names[] = {"required", "not-for-device", "other-cuda",
	                                    "link-time", "other-copy"};
	return role >= 0 && role <= OW_AUDIT_ROLE_OTHER_COPY ? names[role] : "required";
}

static json_t *verdict_json(const struct ow_audit_lib_verdict *p)
{
	if (!p)
		return json_null();
	struct ow_audit_lib_verdict lv = *p;
	json_t *o = json_pack("{s:s, s:s, s:b, s:o, s:o, s:{s:I, s:I, s:I, s:I, s:I}, "
	                 "s:{s:I, s:I, s:b}}", "verdict",
	                 ow_gpu_lib_verdict_name(lv.v.verdict), "effective",
	                 ow_gpu_lib_verdict_name(lv.effective), "fatal", lv.fatal, "driver_needed",
	                 driver_json(lv.v.driver_needed), "driver_newer_than",
	                 newer_json(lv.isa_unknown), "modules", "native",
	                 (json_int_t)lv.v.n_native, "jit", (json_int_t)lv.v.n_jit, "ptx_too_new",
	                 (json_int_t)lv.v.n_ptx_too_new, "none", (json_int_t)lv.v.n_none, "skipped",
	                 (json_int_t)lv.v.n_skipped, "data_sections", "modules",
	                 (json_int_t)lv.data_modules, "no_image", (json_int_t)lv.data_no_image,
	                 "judged_by", lv.data_judged);
	json_object_set_new(o, "extension", json_boolean(lv.extension));
	json_object_set_new(o, "per_arch_modules", json_integer((json_int_t)lv.per_arch_none));
	json_object_set_new(o, "per_arch", json_boolean(lv.per_arch));
	json_object_set_new(o, "role", json_string(role_name(lv.role)));
	return o;
}

/* What the file is (fatbin.h's formats), as the JSON says it. */
static const char *format_name(int format)
{
	static const char *const names[] = {"unknown", "elf", "pe", "cubin", "ptx", "fatbin",
	                                    "archive"};
	return format >= 0 && format <= OW_FB_FMT_LAST ? names[format] : "unknown";
}

static json_t *lib_json(const struct ow_audit_lib *l, int cc, int drv, int have_device,
                        const struct ow_audit_lib_verdict *lv)
{
	struct ow_audit_summary s;
	ow_audit_lib_summary(l, &s);
	json_t *o = json_pack("{s:s, s:I, s:b, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o, s:o}",
	                      "path", l->path, "size", (json_int_t)l->size, "vendor", l->vendor,
	                      "data_scanned", l->scanned, "modules", (json_int_t)s.n_modules,
	                      "modules_with_code", (json_int_t)s.n_code, "modules_empty",
	                      (json_int_t)s.n_empty, "modules_relocatable", (json_int_t)s.n_reloc,
	                      "modules_scanned", (json_int_t)s.n_scanned, "entries",
	                      (json_int_t)s.n_entries, "sass", words(s.sass), "ptx", ptx_json(s.ptx),
	                      "lto", words(s.lto));
	json_object_set_new(o, "modules_unchecked", json_integer((json_int_t)s.n_unchecked));
	json_object_set_new(o, "format", json_string(format_name(l->fb->format)));
	json_object_set_new(o, "link_time", json_boolean(ow_audit_is_link_time(l)));
	json_object_set_new(o, "reread", l->reread ? json_string(l->reread) : json_null());
	json_object_set_new(o, "soname", l->fb->soname ? json_string(l->fb->soname) : json_null());
	json_object_set_new(o, "section_headers_missing",
	                    json_boolean(l->fb->no_section_headers));
	json_object_set_new(o, "rdc_only", words(s.rdc));
	json_object_set_new(o, "data_sections_only", words(s.data));
	json_object_set_new(o, "device", have_device ? verdict_json(lv) : json_null());
	json_object_set_new(o, "module_list", modules_json(l, cc, drv, have_device));
	return o;
}

static const char *kind_name(int kind)
{
	return kind == OW_AUDIT_WHEEL ? "wheel" : kind == OW_AUDIT_DIRECTORY ? "directory" : "library";
}

static json_t *target_json(const struct ow_audit *a, const struct args *g,
                           const struct ow_audit_result *r, const struct ow_audit_lib_verdict *lvs)
{
	int dev = g->device != NULL;
	json_t *libs = json_array();
	int unknown = dev && r->isa_unknown; /* then no known driver_needed */
	for (size_t i = 0; i < a->n_libs; i++)
		json_array_append_new(libs, lib_json(&a->libs[i], g->cc, g->drv, dev,
		                                     lvs ? &lvs[i] : NULL));
	json_t *t = json_pack("{s:s, s:s, s:s, s:o, s:b, s:I, s:I, s:o, s:b, s:o, s:o, s:o}", "source",
	                 a->source, "label", a->label, "kind", kind_name(a->kind), "sha256",
	                 a->sha256[0] ? json_string(a->sha256) : json_null(), "cached",
	                 a->from_cache, "bytes_read", (json_int_t)a->bytes_in, "skipped",
	                 (json_int_t)a->n_skipped, "verdict",
	                 dev ? json_string(ow_audit_verdict_name(r->verdict)) : json_null(), "fatal",
	                 dev && r->fatal, "driver_needed",
	                 driver_json(dev && !unknown ? r->driver_needed : 0), "driver_newer_than",
	                 newer_json(unknown), "libraries", libs);
	json_object_set_new(t, "runtime_only", json_boolean(dev && r->runtime_only));
	return t;
}

static json_t *error_json(const char *ref, int rc)
{
	return json_pack("{s:s, s:{s:s, s:s}}", "source", ref, "error", "code", ow_err_name(rc),
	                 "detail", ow_err_detail());
}

/* ---- human output --------------------------------------------------------------- */

/* The PTX ISAs of a summary's "compute_90@9.0 compute_120@9.9" that the
 * table does not know, as "9.9" (into b, n >= 1). */
static const char *unknown_isas(const char *ptx, char *b, size_t n)
{
	b[0] = 0;
	for (const char *at = strchr(ptx, '@'); at; at = strchr(at + 1, '@')) {
		char *end, isa[48]; /* ", " and two unsigned longs */
		unsigned long maj = strtoul(at + 1, &end, 10), min = 0;
		int drv;
		if (*end == '.')
			min = strtoul(end + 1, NULL, 10);
		if (maj < 100 && min < 100 &&
		    !ow_gpu_ptx_isa_driver((unsigned)maj, (unsigned)min, &drv))
			continue;
		snprintf(isa, sizeof isa, "%s%lu.%lu", b[0] ? ", " : "", maj, min);
		size_t used = strlen(b);
		size_t il = strlen(isa);
		if (!strstr(b, isa + (b[0] ? 2 : 0)) && used + il < n)
			memcpy(b + used, isa, il + 1);
	}
	ow_err_clear();
	return b;
}

static const char *lib_verdict_text(const struct ow_audit_lib_verdict *lv, const char *ptx,
                                    char *b, size_t n)
{
	char d[16], isas[64];
	if (lv->role == OW_AUDIT_ROLE_NOT_FOR_DEVICE)
		return "not for this device (built only for arch- or family-specific targets: "
		       "loaded only where it fits)";
	if (lv->role == OW_AUDIT_ROLE_OTHER_CUDA)
		return "not loaded (a build for another CUDA runtime than its family's chosen one)";
	if (lv->role == OW_AUDIT_ROLE_LINK_TIME)
		return "link-time code (a static archive or object: linked into programs, never "
		       "loaded; not judged)";
	if (lv->role == OW_AUDIT_ROLE_OTHER_COPY)
		return "not for this device (another copy of this NVIDIA library runs here: the "
		       "package loads the copy that fits)";
	if (lv->extension && lv->v.verdict == OW_GPU_LIB_PARTIAL && !lv->fatal) {
		snprintf(b, n, "native: %zu of %zu modules run here (arch-specific, one target "
		         "per module: normal)", lv->v.n_native,
		         lv->v.n_native + lv->v.n_none + lv->v.n_ptx_too_new);
		return b;
	}
	if (lv->per_arch && !lv->fatal) {
		snprintf(b, n, "%s: %zu of %zu modules run here; the %zu others are each built for "
		         "one other architecture (dispatched by architecture: normal)",
		         lv->v.n_jit ? "JIT" : "native", lv->v.n_native + lv->v.n_jit,
		         lv->v.n_native + lv->v.n_jit + lv->v.n_none, lv->v.n_none);
		return b;
	}
	ow_gpu_format_driver(lv->v.driver_needed, d, sizeof d);
	switch (lv->v.verdict) {
	case OW_GPU_LIB_NATIVE: return "native";
	case OW_GPU_LIB_JIT:
		if (lv->v.driver_needed) {
			snprintf(b, n, "JIT only (PTX; driver >= %s)", d);
			return b;
		}
		/* only a bound: newer than the table's newest ISA's driver */
		ow_gpu_format_driver(ow_gpu_ptx_newest_driver(), d, sizeof d);
		unknown_isas(ptx, isas, sizeof isas);
		snprintf(b, n, "JIT only (PTX ISA %s%snewer than this offwheel knows; needs a "
		         "driver newer than %s)", isas, isas[0] ? ": " : "", d);
		return b;
	case OW_GPU_LIB_PARTIAL:
		if (!lv->fatal) { /* say what "normal" means in the same line */
			snprintf(b, n, "runs: %zu of %zu modules have an image for this device, the "
			         "other %zu are built for other GPUs (an NVIDIA library, one "
			         "architecture per module: the runtime picks this device's)",
			         lv->v.n_native + lv->v.n_jit,
			         lv->v.n_native + lv->v.n_jit + lv->v.n_none + lv->v.n_ptx_too_new,
			         lv->v.n_none + lv->v.n_ptx_too_new);
			return b;
		}
		snprintf(b, n, "partial: %zu of %zu modules have no usable image — FATAL",
		         lv->v.n_none + lv->v.n_ptx_too_new,
		         lv->v.n_native + lv->v.n_jit + lv->v.n_none + lv->v.n_ptx_too_new);
		return b;
	case OW_GPU_LIB_NONE: return "NO IMAGE (\"no kernel image is available\") — FATAL";
	default: return "no device code";
	}
}

/* The data-section modules, apart: "; 58 of 58 modules found in data
 * sections have no usable image (not registered at start-up: not counted)" */
static const char *data_text(const struct ow_audit_lib_verdict *lv, char *b, size_t n)
{
	if (!lv->data_no_image)
		return "";
	snprintf(b, n, "; %zu of %zu modules found only in data sections have no usable image "
	         "(not registered at start-up: counted apart)", lv->data_no_image, lv->data_modules);
	return b;
}

static void say_modules(struct cli *c, const struct ow_audit_lib *l, const struct args *g)
{
	char line[4096];
	const struct dev_ask dev = {g->cc, g->drv};
	for (size_t i = 0; i < l->fb->n_modules; i++) {
		struct ow_gpu_module_verdict mv;
		const struct ow_fatbin_module *m =
		    module_line(l, i, g->device ? &dev : NULL, line, sizeof line, &mv);
		cli_say(c, "      #%zu %s%s%s: %s%s%s\n", i, m->section, m->relocatable ? " (rdc)" : "",
		        m->no_kernels ? " (no kernels)" : "", line, g->device ? " -> " : "",
		        g->device ? ow_gpu_verdict_name(mv.verdict) : "");
	}
}

/* A library that is partial and fatal: which modules have no image here (the
 * first few; -v lists every module), so that a user can judge them. */
static void say_no_image(struct cli *c, const struct ow_audit_lib *l, const struct args *g,
                         const struct ow_audit_lib_verdict *lv)
{
	enum { SHOWN = 8 };
	char line[4096];
	const struct dev_ask dev = {g->cc, g->drv};
	size_t n = 0;
	for (size_t i = 0; i < l->fb->n_modules; i++) {
		struct ow_gpu_module_verdict mv;
		const struct ow_fatbin_module *m = module_line(l, i, &dev, line, sizeof line, &mv);
		if ((mv.verdict != OW_GPU_NONE && mv.verdict != OW_GPU_PTX_TOO_NEW) ||
		    (m->scanned != 0) != (lv->data_judged != 0)) /* the judged part only */
			continue;
		if (n++ >= SHOWN)
			continue;
		if (m->size)
			cli_say(c, "    no image here: module #%zu in %s at offset %" PRIu64 ", %" PRIu64
			        " bytes: %s\n", i, m->section, m->offset, m->size, line);
		else /* from the index: no offsets kept */
			cli_say(c, "    no image here: module #%zu in %s: %s\n", i, m->section, line);
	}
	if (n > SHOWN && c->verbosity < 1)
		cli_say(c, "    ... and %zu more modules without an image here (-v lists every "
		        "module)\n", n - SHOWN);
}

/* Modules left unopened for kernels that do not run natively here: n[0]
 * to JIT (as new a driver as one opened needs, or older), n[1] with no
 * image (an NVIDIA library with a native module that has a kernel):
 * fatbinkern.h. */
static void unchecked_not_native(const struct ow_audit_lib *l, const struct args *g, size_t n[2])
{
	n[0] = n[1] = 0;
	for (size_t i = 0; i < l->fb->n_modules; i++) {
		const struct ow_fatbin_module *m = &l->fb->modules[i];
		struct ow_gpu_module_verdict mv;
		if (m->unchecked && !m->relocatable && m->count &&
		    !ow_gpu_module_verdict(l->fb, m, g->cc, g->drv, &mv) && mv.verdict != OW_GPU_NATIVE)
			n[mv.verdict != OW_GPU_JIT]++;
	}
}

/* "; 419 of these native here, 8130 to JIT here and 2704 without an image
 * here not opened for kernels (...)" */
static void unchecked_text(const struct ow_audit_lib *l, const struct args *g,
                           const struct ow_audit_summary *s, char *b, size_t n)
{
	size_t no[2] = {0, 0};
	if (g->device)
		unchecked_not_native(l, g, no);
	size_t count[3] = {s->n_unchecked - no[0] - no[1], no[0], no[1]};
	static const char *const what[3] = {"native here", "to JIT here", "without an image here"};
	struct ow_str t = {0};
	for (int i = 0, said = 0, left = !!count[0] + !!count[1] + !!count[2]; i < 3; i++)
		if (count[i]) {
			ow_str_printf(&t, "%s%zu%s %s", !said ? "; " : left == 1 ? " and " : ", ",
			              count[i], said ? "" : " of these", what[i]);
			said++, left--;
		}
	*b = 0;
	if (no[0] || no[1])
		snprintf(b, n, "%s%s not opened for kernels (%sno verdict depends on them)",
		         t.p ? t.p : "", no[1] ? "" : ",", no[1] ? "an NVIDIA library that runs: " : "");
	else if (s->n_unchecked)
		snprintf(b, n, g->device ? "; %zu of these native here, not opened for kernels"
		         : "; %zu of these not opened for kernels (-v counts them)", s->n_unchecked);
	ow_str_dispose(&t);
}

static void say_lib(struct cli *c, const struct ow_audit_lib *l, const struct args *g,
                    const struct ow_audit_lib_verdict *lv)
{
	struct ow_audit_summary s;
	char b[320];
	ow_audit_lib_summary(l, &s);
	if (!s.n_modules && c->verbosity < 1)
		return;
	const char *v = g->device && lv ? lib_verdict_text(lv, s.ptx, b, sizeof b) : NULL;
	char db[200];
	cli_say(c, "  %s%s%s%s\n", l->path, v ? ": " : "", v ? v : "",
	        v ? data_text(lv, db, sizeof db) : "");
	char unch[240];
	unchecked_text(l, g, &s, unch, sizeof unch);
	int noshdr = l->fb->no_section_headers;
	cli_say(c, "    %zu modules (%zu with code, %zu empty, %zu rdc%s)%s%s\n", s.n_modules,
	        s.n_code, s.n_empty, s.n_reloc,
	        s.n_scanned && !noshdr ? ", some found in data sections" : "",
	        l->scanned ? ", data sections scanned" : "", unch);
	if (noshdr)
		cli_say(c, "    no section headers (e_shoff 0): fatbins found by scanning its "
		        "loadable segments\n");
	if (s.sass[0])
		cli_say(c, "    SASS %s\n", s.sass);
	if (s.ptx[0])
		cli_say(c, "    PTX  %s\n", s.ptx);
	if (s.rdc[0])
		cli_say(c, "    only in link-time (rdc) modules: %s\n", s.rdc);
	if (s.data[0])
		cli_say(c, "    only in modules found in data sections: %s\n", s.data);
	if (s.lto[0])
		cli_say(c, "    LTO  %s (not loadable)\n", s.lto);
	if (g->device && lv && lv->fatal && lv->effective == OW_GPU_LIB_PARTIAL)
		say_no_image(c, l, g, lv);
	if (c->verbosity >= 1 && l->reread)
		cli_say(c, "    %s\n", l->reread);
	if (c->verbosity >= 1)
		say_modules(c, l, g);
}

/* How many of the target's libraries carry device code. */
static size_t libs_with_code(const struct ow_audit *a)
{
	size_t with_code = 0;
	for (size_t i = 0; i < a->n_libs; i++) {
		struct ow_audit_summary s;
		ow_audit_lib_summary(&a->libs[i], &s);
		with_code += s.n_code > 0;
	}
	return with_code;
}

/* ", 1130 arch-specific not for this device, 6 built for other CUDA runtimes, 2
 * link-time (static archives, not judged)" into b (n >= 256) */
static const char *left_out_text(const struct ow_audit_result *r, char *b, size_t n)
{
	const size_t counts[4] = {r->n_not_for_device, r->n_other_cuda, r->n_other_copy,
	                          r->n_link_time};
	static const char *const what[4] = {
		"arch-specific not for this device", "built for other CUDA runtimes",
		"other copies of NVIDIA libraries", "link-time (static archives, not judged)"};
	b[0] = 0;
	for (int i = 0; i < 4; i++) {
		char one[96]; /* each holds its text with any %zu */
		if (!counts[i])
			continue;
		snprintf(one, sizeof one, ", %zu %s", counts[i], what[i]);
		size_t used = strlen(b), l = strlen(one);
		if (used + l < n)
			memcpy(b + used, one, l + 1);
	}
	return b;
}

/* `brief`: a set's member judged for a device without -v, said in the
 * line of its verdict and the libraries that do not simply run. */
static void say_target(struct cli *c, const struct ow_audit *a, const struct args *g,
                       const struct ow_audit_result *r, const struct ow_audit_lib_verdict *lvs,
                       bool brief)
{
	char left[320];
	size_t with_code = libs_with_code(a);
	char cc[8], d[16], tail[64] = "";
	ow_gpu_format_cc(g->cc, cc, sizeof cc);
	ow_gpu_format_driver(r->driver_needed, d, sizeof d);
	if (g->device && r->verdict == OW_AUDIT_JIT && r->isa_unknown) {
		ow_gpu_format_driver(ow_gpu_ptx_newest_driver(), d, sizeof d);
		snprintf(tail, sizeof tail, ", needs a driver newer than %s", d);
	} else if (g->device && r->verdict == OW_AUDIT_JIT && r->driver_needed) {
		snprintf(tail, sizeof tail, ", needs driver >= %s", d);
	}
	if (g->device && r->runtime_only)
		cli_say(c, "%s: no code here for %s: this package compiles its kernels at run time "
		        "or does not support the device — %zu of %zu libraries carry device code%s\n",
		        a->label, cc, with_code, a->n_libs, left_out_text(r, left, sizeof left));
	else if (g->device)
		cli_say(c, "%s: %s on CC %s%s — %zu of %zu libraries carry device code%s%s\n",
		        a->label, ow_audit_verdict_name(r->verdict), cc, tail, with_code, a->n_libs,
		        left_out_text(r, left, sizeof left), r->fatal ? " — CANNOT RUN" : "");
	else
		cli_say(c, "%s: %zu of %zu libraries carry device code\n", a->label, with_code,
		        a->n_libs);
	size_t quiet = 0;
	for (size_t i = 0; i < a->n_libs; i++) {
		/* a set's member on a device: only what does not simply run (-v: all) */
		if (brief && lvs && !lvs[i].fatal && lvs[i].effective != OW_GPU_LIB_JIT) {
			quiet++;
			continue;
		}
		say_lib(c, &a->libs[i], g, lvs ? &lvs[i] : NULL);
	}
	if (quiet && quiet < a->n_libs)
		cli_say(c, "  %zu more libraries run (-v lists them)\n", quiet);
}

/* ---- the verdict line -------------------------------------------------------- */

/* What the targets judged for the device came to: the command's last line
 * says it ("set 7 cu128 cp312-…: runs on 8.0 (native)"), and -q prints
 * only that line. */
struct tally {
	size_t judged, code, fatal, failed; /* targets judged, carrying code, fatal, errors */
	size_t missing;    /* a set's members not fetched */
	int worst;         /* OW_AUDIT_NATIVE or OW_AUDIT_JIT, over those that run */
	int driver_needed, isa_unknown;
	char *why;         /* the first fatal target: "LABEL: LIB: 3 of 3 modules ..." */
	char *label;       /* the first target judged */
};

static void tally_dispose(struct tally *t)
{
	free(t->why);
	free(t->label);
	*t = (struct tally){0};
}

static void tally_add(struct tally *t, const struct ow_audit *a, const struct ow_audit_result *r,
                      const struct ow_audit_lib_verdict *lvs, const char *ccs)
{
	if (!t->judged++)
		t->label = strdup(a->label); /* NULL (out of memory): the operand names it */
	t->code += r->verdict != OW_AUDIT_NO_CODE;
	if (r->fatal && !t->fatal++) {
		for (size_t i = 0; i < a->n_libs && !t->why; i++)
			if (lvs[i].fatal)
				t->why = ow_aprintf("%s: %s: %zu of %zu modules have no image for %s",
				                    a->label, a->libs[i].path,
				                    lvs[i].v.n_none + lvs[i].v.n_ptx_too_new,
				                    lvs[i].v.n_native + lvs[i].v.n_jit + lvs[i].v.n_none +
				                        lvs[i].v.n_ptx_too_new, ccs);
		if (!t->why)
			t->why = ow_aprintf("%s: %s", a->label, ow_audit_verdict_name(r->verdict));
	}
	if (!r->fatal && r->verdict == OW_AUDIT_JIT)
		t->worst = OW_AUDIT_JIT;
	else if (!r->fatal && r->verdict == OW_AUDIT_NATIVE && !t->worst)
		t->worst = OW_AUDIT_NATIVE;
	if (r->driver_needed > t->driver_needed)
		t->driver_needed = r->driver_needed;
	t->isa_unknown |= r->isa_unknown;
}

/* "runs on 8.0 (native)", "WOULD NOT RUN on 12.0 — torch-…whl: …" */
static void verdict_text(const struct tally *t, const char *ccs, struct ow_str *b)
{
	char d[16];
	if (t->fatal) {
		ow_str_printf(b, "WOULD NOT RUN on %s — %s", ccs, t->why ? t->why : "");
		if (t->fatal > 1)
			ow_str_printf(b, " (and %zu more)", t->fatal - 1);
		return;
	}
	if (!t->code) {
		ow_str_printf(b, "carries no device code: nothing of it runs on the GPU %s (a CPU "
		              "build)", ccs);
		return;
	}
	if (t->worst != OW_AUDIT_JIT) {
		ow_str_printf(b, "runs on %s (native)", ccs);
		return;
	}
	ow_gpu_format_driver(t->isa_unknown ? ow_gpu_ptx_newest_driver() : t->driver_needed, d,
	                     sizeof d);
	ow_str_printf(b, "runs on %s (JIT from PTX: needs a driver %s %s)", ccs,
	              t->isa_unknown ? "newer than" : ">=", d);
}

/* The verdict line of one target or set: `what` names it, `missing`
 * members of set `ref` were not fetched (of `n`).  Nothing without a device. */
static void say_verdict(struct cli *c, const struct args *g, const char *what,
                        const struct tally *t, const char *ref, size_t missing, size_t n)
{
	char ccs[8];
	struct ow_str b = {0};
	if (!g->device || (!t->judged && !missing))
		return;
	ow_gpu_format_cc(g->cc, ccs, sizeof ccs);
	/* the answer first: what is fetched and cannot run decides the set */
	if (t->fatal)
		verdict_text(t, ccs, &b);
	if (missing)
		ow_str_printf(&b, "%s%zu of %zu members not fetched: run 'offwheel fetch %s' to judge "
		              "them%s", t->fatal ? "; " : "", missing, n, ref,
		              t->fatal ? "" : t->judged ? "; what is fetched " : ": nothing judged");
	if (t->judged && !t->fatal)
		verdict_text(t, ccs, &b);
	cli_out(c, "%s: %s\n", what, b.err ? "(out of memory)" : b.p);
	ow_str_dispose(&b);
}

/* ---- the command ----------------------------------------------------------------- */

/* An operand that is no file is a stored object's sha256 or file name or a
 * set:ID — none of which holds a '/': such an operand is a path, and a
 * missing one is said so, not looked up in the workspace. */
static int need_store(int argc, char **argv, int first)
{
	for (int i = first; i < argc; i++)
		if (access(argv[i], F_OK) != 0 && !strchr(argv[i], '/'))
			return 1;
	return 0;
}

/* The operands that are paths, audited before any is said (ow_audit_paths:
 * the libraries on threads); audit_one takes each from here. */
struct prefetch {
	struct ow_audit **a;
	int *rc;
	char **err;
	int first, n;
};

/* Where audit_one is: the rules, the JSON targets (NULL: text), and the set
 * (> 0) whose member it is; `plain` counts the members said in one line;
 * pf (or NULL) holds operand `arg`'s audit. */
struct one_ctx {
	const struct ow_audit_rules *rules;
	json_t *out;
	int64_t set;
	size_t plain;
	struct tally *t;
	struct prefetch *pf;
	int arg;
};

/* Operand x->arg's audit: prefetched, else audited now. */
static int audit_ref(ow_store *s, const char *ref, const struct args *g, struct one_ctx *x,
                     struct ow_audit **a)
{
	struct prefetch *pf = x->pf;
	int i = x->pf ? x->arg - pf->first : -1;
	if (i < 0 || i >= pf->n || pf->rc[i] == 1)
		return ow_audit_any(s, ref, &g->ao, a);
	int rc = pf->rc[i];
	*a = pf->a[i];
	pf->a[i] = NULL;
	pf->rc[i] = 1; /* taken */
	if (!rc)
		return 0;
	return ow_err(rc, "%s", pf->err[i] ? pf->err[i] : "(the detail was lost: out of memory)");
}

static void prefetch_dispose(struct prefetch *pf)
{
	for (int i = 0; i < pf->n; i++) {
		ow_audit_free(pf->a[i]);
		free(pf->err[i]);
	}
	free(pf->a);
	free(pf->rc);
	free(pf->err);
	*pf = (struct prefetch){0};
}

/* More than one operand: those that are paths audited at once.  Out of
 * memory here only means one at a time, as without. */
static void prefetch_paths(int argc, char **argv, int first, const struct args *g,
                           struct prefetch *pf)
{
	int n = argc - first;
	*pf = (struct prefetch){.first = first};
	if (n < 2)
		return;
	const char **paths = calloc((size_t)n, sizeof *paths);
	pf->a = calloc((size_t)n, sizeof *pf->a);
	pf->rc = calloc((size_t)n, sizeof *pf->rc);
	pf->err = calloc((size_t)n, sizeof *pf->err);
	pf->n = n;
	struct stat st;
	for (int i = 0; paths && i < n; i++)
		if (strncmp(argv[first + i], "set:", 4) && stat(argv[first + i], &st) == 0)
			paths[i] = argv[first + i];
	if (!paths || !pf->a || !pf->rc || !pf->err ||
	    ow_audit_paths(paths, (size_t)n, &g->ao, pf->a, pf->rc, pf->err)) {
		ow_err_clear();
		prefetch_dispose(pf);
		pf->first = first;
	}
	free(paths);
}

/* One target: 0, 3 (cannot run) or an error's exit code.  A member of a set
 * is said in one line when it carries no device code. */
static int audit_one(struct cli *c, ow_store *s, const char *ref, const struct args *g,
                     struct one_ctx *x)
{
	const struct ow_audit_rules *rules = x->rules;
	json_t *out = x->out;
	int64_t set = x->set;
	struct ow_audit *a;
	struct ow_audit_result r = {0};
	struct ow_audit_lib_verdict *lvs = NULL;
	int rc = audit_ref(s, ref, g, x, &a);
	if (!rc && g->device)
		rc = ow_audit_verdict_rules(a, g->cc, g->drv, rules, &r);
	if (!rc && g->device)
		rc = ow_audit_lib_verdicts(a, g->cc, g->drv, rules, &lvs);
	if (!rc && g->device && s)
		ow_device_fit_record_torch(s, a, g->cc, g->drv); /* export reads it */
	if (rc) {
		if (x->t)
			x->t->failed++;
		if (out)
			json_array_append_new(out, error_json(ref, rc));
		return cli_fail(c, rc);
	}
	if (g->device && x->t) {
		char ccs[8];
		ow_gpu_format_cc(g->cc, ccs, sizeof ccs);
		tally_add(x->t, a, &r, lvs, ccs);
	}
	if (out) {
		json_t *t = target_json(a, g, &r, lvs);
		if (set > 0)
			json_object_set_new(t, "set", json_integer(set));
		json_array_append_new(out, t);
	} else if (set > 0 && c->verbosity < 1 && libs_with_code(a) == 0) {
		x->plain++;
	} else {
		say_target(c, a, g, &r, lvs, set > 0 && c->verbosity < 1);
	}
	free(lvs);
	ow_audit_free(a);
	return g->device && r.fatal ? 3 : 0;
}

/* The set's CUDA runtime, from its torch wheel's local version: "+cu128" is
 * 128; 0 when the set has no such torch. */
static int set_cuda(const struct ow_resolve_member *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *cu = strncmp(m[i].filename, "torch-", 6) ? NULL : strstr(m[i].filename, "+cu");
		int v = 0, digits = 0;
		for (cu = cu ? cu + 3 : NULL; cu && *cu >= '0' && *cu <= '9' && digits < 4; cu++, digits++)
			v = v * 10 + (*cu - '0');
		if (digits >= 2 && digits <= 3)
			return v;
	}
	return 0;
}

/* "set 7 cu128 cp312-manylinux_2_28_x86_64" (owned; NULL out of memory). */
static char *set_name(ow_store *s, int64_t id)
{
	struct ow_set_row *rows = NULL;
	size_t n = 0;
	char *name = NULL;
	if (ow_sets_list(s, NULL, &rows, &n) == 0)
		for (size_t i = 0; i < n && !name; i++)
			if (rows[i].id == id)
				name = ow_aprintf("set %lld %s", (long long)id, rows[i].target);
	free(rows);
	ow_err_clear(); /* the id alone names it as well */
	return name ? name : ow_aprintf("set %lld", (long long)id);
}

static void not_fetched(struct cli *c, const char *ref, int64_t id, const char *file, json_t *out)
{
	cli_say(c, "%s: not fetched\n", file);
	if (out)
		json_array_append_new(out, json_pack("{s:s, s:s, s:I, s:{s:s, s:s}}", "source", ref,
		                                     "label", file, "set", (json_int_t)id, "error",
		                                     "code", "ENOENT", "detail", "not fetched"));
}

/* A set's members are audited one by one, a torch wheel for seconds: on a
 * terminal, "3 of 18 member audits done" meanwhile (m NULL ends it). */
static void members_plan(const struct ow_resolve_member *m, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; m && i < n; i++)
		k += m[i].object[0] && !ow_export_is_sdist(m[i].filename);
	struct ow_event ev = {.kind = OW_EV_PLAN, .level = OW_LOG_INFO,
	                      .what = m ? "member audits" : "", .done = k};
	if (k || !m)
		cli_progress_event(&ev);
}

static void members_item(const char *filename)
{
	struct ow_event ev = {.kind = OW_EV_ITEM, .level = OW_LOG_INFO, .what = filename};
	cli_progress_event(&ev);
}

/* set:ID: every fetched member (those without device code in one line) and
 * what is not fetched yet (exit 4 unless something worse); with a device,
 * the set's verdict line.  `t` gets what was judged. */
static int audit_set(struct cli *c, ow_store *s, const char *ref, const struct args *g,
                     json_t *out, struct tally *t)
{
	struct ow_resolve_member *m = NULL;
	size_t n = 0, missing = 0;
	int64_t id = 0;
	int rc = ow_set_ref_members(s, ref, &id, &m, &n), worst = 0;
	if (rc) {
		t->failed++;
		if (out)
			json_array_append_new(out, error_json(ref, rc));
		return cli_fail(c, rc);
	}
	cli_say(c, "%s: %zu members\n", ref, n);
	struct ow_audit_rules rules = g->rules;
	rules.cuda = set_cuda(m, n);
	struct one_ctx x = {&rules, out, id, 0, t, NULL, 0};
	members_plan(m, n);
	for (size_t i = 0; i < n; i++) {
		if (ow_export_is_sdist(m[i].filename))
			cli_say(c, "%s: an sdist, built on the target: what it carries is known only "
			           "once built\n", m[i].filename);
		else if (!m[i].object[0] && ++missing)
			not_fetched(c, ref, id, m[i].filename, out);
		else {
			worst = cli_worse_exit(worst, audit_one(c, s, m[i].object, g, &x));
			members_item(m[i].filename);
		}
	}
	members_plan(NULL, 0);
	if (x.plain)
		cli_say(c, "%zu more members carry no device code (-v lists them)\n", x.plain);
	if (missing && !g->device)
		cli_say(c, "%zu members not fetched: run 'offwheel fetch %s' to audit them\n", missing,
		        ref);
	worst = missing ? cli_worse_exit(worst, 4) : worst;
	char *name = set_name(s, id);
	say_verdict(c, g, name ? name : ref, t, ref, missing, n);
	free(name);
	t->missing = missing;
	ow_set_members_free(m, n);
	return worst;
}

/* More than one target: how many run ("audit: 2 of 3 targets run on 8.0"). */
struct overall {
	size_t judged, run;
};

static void overall_add(struct overall *o, const struct tally *t)
{
	o->judged += t->judged > 0 || t->missing;
	o->run += t->judged > 0 && !t->fatal && !t->failed && !t->missing && t->code;
}

/* Every operand judged on one device (g->cc); with several devices each
 * JSON target names the device it was judged on. */
static int run_device(struct cli *c, ow_store *s, int argc, char **argv, int first,
                      const struct args *g, json_t *targets)
{
	int worst = 0;
	struct overall o = {0};
	size_t had = targets ? json_array_size(targets) : 0;
	char cc[8];
	ow_gpu_format_cc(g->cc, cc, sizeof cc);
	struct prefetch pf;
	prefetch_paths(argc, argv, first, g, &pf);
	for (int i = first; i < argc; i++) {
		struct tally t = {0};
		struct one_ctx x = {&g->rules, targets, 0, 0, &t, &pf, i};
		int set = !strncmp(argv[i], "set:", 4);
		worst = cli_worse_exit(worst, set ? audit_set(c, s, argv[i], g, targets, &t)
		                         : audit_one(c, s, argv[i], g, &x));
		if (!set)
			say_verdict(c, g, t.label ? t.label : argv[i], &t, argv[i], 0, 0);
		overall_add(&o, &t);
		tally_dispose(&t);
	}
	prefetch_dispose(&pf);
	if (g->device && argc - first > 1)
		cli_out(c, "audit: %zu of %d targets run on %s\n", o.run, argc - first, cc);
	for (size_t k = had; g->nccs > 1 && k < (targets ? json_array_size(targets) : 0); k++)
		json_object_set_new(json_array_get(targets, k), "device", json_string(cc));
	return worst;
}

static json_t *devices_json(const struct args *g)
{
	json_t *a = json_array();
	char cc[8];
	for (size_t i = 0; i < (g->nccs ? g->nccs : g->device ? 1 : 0); i++) {
		ow_gpu_format_cc(g->nccs ? g->ccs[i] : g->cc, cc, sizeof cc);
		json_array_append_new(a, json_string(cc));
	}
	return a;
}

/* --device 12.0,8.0: the operands judged on each device in turn, one
 * meaning as everywhere: a target must run on every device named. */
static int run_all(struct cli *c, ow_store *s, int argc, char **argv, int first,
                   const struct args *g)
{
	json_t *targets = c->json ? json_array() : NULL;
	int worst = 0;
	size_t nd = g->nccs ? g->nccs : 1;
	struct ow_str names = {0};
	for (size_t d = 0; d < nd; d++) {
		struct args one = *g;
		if (g->nccs)
			one.cc = one.ao.cc = g->ccs[d];
		char cc[8];
		ow_gpu_format_cc(one.cc, cc, sizeof cc);
		ow_str_printf(&names, "%s%s", d ? ", " : "", cc);
		worst = cli_worse_exit(worst, run_device(c, s, argc, argv, first, &one, targets));
	}
	if (nd > 1)
		cli_out(c, "audit: %s every device named (%s)\n",
		        worst == 0 ? "runs on" : "does NOT run on", names.p ? names.p : "");
	ow_str_dispose(&names);
	if (targets) {
		char cc[8];
		ow_gpu_format_cc(g->cc, cc, sizeof cc);
		static const char *const scans[] = {"auto", "always", "never"};
		cli_json_out(json_pack("{s:s, s:o, s:o, s:o, s:s, s:b, s:o}", "command", "audit",
		                       "device", g->device ? json_string(cc) : json_null(), "devices",
		                       devices_json(g), "driver", driver_json(g->drv), "scan_data",
		                       scans[g->ao.scan], "ok", worst == 0, "targets", targets));
	}
	return worst;
}

/* OFFWHEEL_AUDIT_STREAM_FROM=BYTES: wheel members of at least BYTES are listed
 * as they inflate (default 16 MiB; "never" holds every member whole).  For
 * the tests and the benchmark, which compare the two ways on the same wheel. */
static int stream_from_env(struct cli *c, uint64_t *out)
{
	const char *v = getenv("OFFWHEEL_AUDIT_STREAM_FROM");
	char *end;
	if (!v || !*v)
		return 0;
	if (!strcmp(v, "never")) {
		*out = UINT64_MAX;
		return 0;
	}
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	if (errno || *end || *v == '-')
		return cli_usage_error(c, "audit: OFFWHEEL_AUDIT_STREAM_FROM=%s is not a byte count "
		                       "or \"never\"", v);
	*out = n ? (uint64_t)n : 1;
	return 0;
}

int cmd_audit(struct cli *c, int argc, char **argv)
{
	struct args g = {0};
	const struct cli_spec cs = {opts, usage, description, on_opt, &g};
	int first = cli_parse(c, argc, argv, &cs);
	if (first < 0)
		return cli_parse_exit(first);
	if (first >= argc)
		return cli_usage_error(c, "audit: give at least one wheel, library, directory, "
		                       "sha256 or file name");
	int rc = parse_device(c, &g);
	if (rc)
		return rc;
	/* with a device, kernel-less modules are looked for only where it matters */
	g.ao.cc = g.cc;
	g.ao.driver = g.drv;
	/* a plain listing opens no payload: kernels only where a verdict or -v needs them */
	g.ao.no_kernels = !g.device && c->verbosity < 1 && !c->json;
	g.ao.jobs = c->jobs_given ? c->jobs : 0; /* default: the cores */
	if ((rc = stream_from_env(c, &g.ao.stream_from)))
		return rc;
	ow_store *s = NULL;
	if (need_store(argc, argv, first) && (rc = cli_open_store(c, OW_STORE_READ, &s)))
		return rc;
	rc = run_all(c, s, argc, argv, first, &g);
	ow_store_close(s);
	return rc;
}
