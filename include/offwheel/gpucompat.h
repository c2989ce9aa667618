/* gpucompat.h - can a device of compute capability X.Y run these images?
 *
 * The driver's image-selection rules (docs/fatbin.md), applied to listings from fatbin.h.
 * Compute capabilities are ints 10 * major + minor (12.0 -> 120, 8.6 -> 86),
 * the same numbering as the fatbin `arch` field.  Driver versions are
 * cuDriverGetVersion() numbers, 1000 * major + 10 * minor (12.8 -> 12080);
 * 0 means "driver not known" (static audit). */
#ifndef OW_GPUCOMPAT_H
#define OW_GPUCOMPAT_H

#include <stddef.h>

#include "offwheel/fatbin.h"

/* "12.0", "sm_120", "120", "8.6", "sm_86", "86" -> 120 / 86. OW_EINVAL else. */
int ow_gpu_parse_device(const char *s, int *cc);
/* "12.8", "13.0", or a raw cuDriverGetVersion number "12080" -> 12080. */
int ow_gpu_parse_driver(const char *s, int *driver);
/* "12.0" for 120 (buf of >= 8 bytes). */
void ow_gpu_format_cc(int cc, char *buf, size_t size);
/* "12.8" for 12080. */
void ow_gpu_format_driver(int driver, char *buf, size_t size);

/* The first driver able to JIT PTX ISA major.minor (9.0 -> 13000).
 * OW_ENOENT for an ISA newer than the table knows (*driver = 0): such PTX
 * needs a driver newer than ow_gpu_ptx_newest_driver(), and that is all
 * offwheel can say of it. */
int ow_gpu_ptx_isa_driver(unsigned isa_major, unsigned isa_minor, int *driver);
/* The driver of the newest PTX ISA the table knows (13050 for ISA 9.5). */
int ow_gpu_ptx_newest_driver(void);

enum ow_gpu_image {
	OW_GPU_IMG_NO = 0, /* this entry cannot run on the device */
	OW_GPU_IMG_SASS,   /* runs natively */
	OW_GPU_IMG_PTX,    /* runs through the JIT (driver permitting) */
};
/* Whether one entry can run on device `cc`, ignoring the driver: SASS sm_MN
 * same major and N <= minor; sm_MNa exact; sm_MNf same family; PTX
 * compute_MN any device >= M.N, compute_MNa exact, compute_MNf same family.
 * LTO-IR and unknown kinds never run. */
int ow_gpu_entry_image(const struct ow_fatbin_entry *e, int cc);

enum ow_gpu_verdict {
	OW_GPU_SKIP = 0,     /* no code to load (empty or relocatable module) */
	OW_GPU_NATIVE,       /* compatible SASS */
	OW_GPU_JIT,          /* PTX only; needs driver >= driver_needed */
	OW_GPU_PTX_TOO_NEW,  /* only PTX the (known) driver cannot JIT: error 222 */
	OW_GPU_NONE,         /* no image: error 209, "no kernel image is available" */
};

struct ow_gpu_module_verdict {
	int verdict;             /* enum ow_gpu_verdict */
	int driver_needed;       /* JIT / PTX_TOO_NEW: first driver for the PTX; 0 unknown */
	const struct ow_fatbin_entry *image; /* the entry the driver would pick, or NULL */
};
/* driver: the device's driver version, or 0 when not known. */
int ow_gpu_module_verdict(const struct ow_fatbin *fb, const struct ow_fatbin_module *m,
			  int cc, int driver, struct ow_gpu_module_verdict *out);

enum ow_gpu_lib_verdict {
	OW_GPU_LIB_NO_CODE = 0, /* no module with code */
	OW_GPU_LIB_NATIVE,      /* every module with code has SASS for the device */
	OW_GPU_LIB_JIT,         /* every module runs, some only through PTX JIT */
	OW_GPU_LIB_PARTIAL,     /* some modules run, some have no usable image */
	OW_GPU_LIB_NONE,        /* no module runs */
};

struct ow_gpu_library_verdict {
	int verdict;           /* enum ow_gpu_lib_verdict */
	size_t n_native, n_jit, n_ptx_too_new, n_none, n_skipped;
	/* highest driver_needed of the JIT modules; 0 when none, and 0 too when
	 * a JIT module's PTX ISA is newer than the table (n_jit > 0: the library
	 * needs a driver newer than ow_gpu_ptx_newest_driver()) */
	int driver_needed;
};
int ow_gpu_library_verdict(const struct ow_fatbin *fb, int cc, int driver,
			   struct ow_gpu_library_verdict *out);
/* The same over part of the modules: those in fatbin sections (the ones the
 * runtime registers at start-up), or those only the data scan found. */
enum ow_gpu_part { OW_GPU_ALL = 0, OW_GPU_SECTIONS, OW_GPU_DATA };
int ow_gpu_library_verdict_part(const struct ow_fatbin *fb, int cc, int driver, int part,
				struct ow_gpu_library_verdict *out);

/* "skip", "native", "jit", "ptx-too-new", "none". */
const char *ow_gpu_verdict_name(int verdict);
/* "no-code", "native", "jit", "partial", "none". */
const char *ow_gpu_lib_verdict_name(int verdict);

#endif
