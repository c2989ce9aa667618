/* audit.h - which GPU code do a library, a wheel, a directory or a stored
 * object carry, and can a device of compute capability X.Y run it?
 *
 * Listings come from fatbin.h (headers only) and verdicts from gpucompat.h.
 * A wheel is read through wheel.h: only members that can hold device code
 * (*.so, *.so.N, *.dll, *.pyd, *.dylib, *.cubin, *.fatbin, *.ptx, *.a) are
 * inflated into memory, and what each is then comes from its bytes; the
 * others are skipped without inflating; nothing is written to disk.  An audit is not a verification: RECORD
 * hashes are not checked (offwheel verify / fetch do that).
 *
 * Data sections (OW_AUDIT_SCAN_AUTO): a library of at least 8 MiB whose
 * fatbin sections hold less than 1/16 of its bytes (libcufft: 672 bytes in
 * .nv_fatbin, ~24,000 modules in .ldata; or none at all) is magic-scanned
 * again over its data sections.  Libraries whose .nv_fatbin is most of
 * their code (libtorch_cuda, libcublas) are not, which keeps a 541 MB
 * library to a few hundred kB of reads.  OW_AUDIT_SCAN_ALWAYS finds the
 * few extra modules such libraries also keep in data (cublasLt's
 * .cask_resource).
 *
 * Store objects are cached in the index (tables audit_objects and audits,
 * index/schema/0003_audits.sql) per object hash and member: the listing is
 * kept in a compact text from which every verdict can be recomputed, so a
 * stored wheel is read once. */
#ifndef OW_AUDIT_H
#define OW_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "offwheel/fatbin.h"
#include "offwheel/gpucompat.h"
#include "offwheel/store.h"

enum ow_audit_scan {
	OW_AUDIT_SCAN_AUTO = 0, /* the rule above */
	OW_AUDIT_SCAN_ALWAYS,   /* every library's data sections */
	OW_AUDIT_SCAN_NEVER,    /* fatbin sections only */
};

struct ow_audit_opts {
	int scan;            /* enum ow_audit_scan */
	uint64_t max_member; /* largest wheel member read into memory; 0 = 8 GiB */
	bool no_cache;        /* store objects: neither read nor write the cache */
	int jobs;            /* wheel members inflated at once; 0: the cores (at most 16) */
	int cc, driver;      /* the device audited for (0: none): files and wheels
	                      * given by path look for kernel-less modules only where
	                      * the verdict on it depends on it (fatbinkern.h); store
	                      * objects always look everywhere, once, for the cache */
	uint64_t stream_from; /* wheel members of at least this many bytes are listed
	                       * while they inflate, in bounded memory (docs/fatbin.md);
	                       * 0 = 16 MiB, UINT64_MAX = none (all held whole) */
	bool no_kernels;      /* a plain listing (no device, no module list): files and
	                      * wheels by path open no payload for kernels; the modules
	                      * left open are marked unchecked and counted as code */
};

enum ow_audit_kind { OW_AUDIT_LIBRARY = 0, OW_AUDIT_WHEEL, OW_AUDIT_DIRECTORY };

struct ow_audit_lib {
	char *path;           /* file path, or member path inside a wheel */
	uint64_t size;
	bool scanned;          /* data sections were magic-scanned */
	bool vendor;           /* an NVIDIA library (see ow_audit_is_vendor_lib) */
	struct ow_fatbin *fb; /* modules and entries; offsets are 0 when cached */
	char *reread;         /* why a wheel member was inflated more than once, and how
	                       * (its listing missed bytes streaming does not keep); NULL */
};

struct ow_audit {
	char *source;      /* as given: a path, a sha256 or a file name */
	char *label;       /* what to call it: path, or the wheel's file name */
	int kind;          /* enum ow_audit_kind */
	char sha256[65];   /* store object; "" for a path */
	int from_cache;    /* read back from the index, no byte of it re-read */
	struct ow_audit_lib *libs;
	size_t n_libs;
	size_t n_skipped;  /* wheel members / files that cannot hold device code */
	uint64_t bytes_in; /* bytes read (files) or inflated (wheels) */
};

/* Audit a path: a wheel (.whl or a zip), a directory walked for libraries
 * (symlinks are not followed), or any other file read as a library. */
int ow_audit_path(const char *path, const struct ow_audit_opts *o, struct ow_audit **out);
/* Audit a store object by sha256 or by a file name the files table records
 * as fetched; cached per object hash.  OW_ENOENT when neither matches. */
int ow_audit_object(ow_store *s, const char *ref, const struct ow_audit_opts *o,
                    struct ow_audit **out);
/* ow_audit_path when `ref` exists on disk, else ow_audit_object (s may be
 * NULL: then only paths work). */
int ow_audit_any(ow_store *s, const char *ref, const struct ow_audit_opts *o,
                 struct ow_audit **out);
void ow_audit_free(struct ow_audit *a);
/* ow_audit_path of each of paths[0..n) (auditmany.c): out[i], or rcs[i] an
 * OW_E* code and errs[i] its detail (malloc'd, NULL when out of memory; the
 * caller frees it).  Libraries are audited on up to o->jobs threads (0: the
 * cores, at most 16), then wheels and directories one at a time; a NULL
 * path is skipped (rcs[i] 1, out[i] NULL).  Returns
 * 0, or OW_ENOMEM with nothing audited. */
int ow_audit_paths(const char *const *paths, size_t n, const struct ow_audit_opts *o,
                   struct ow_audit **out, int *rcs, char **errs);

/* Can this member or file hold device code?  (by name) */
int ow_audit_is_candidate(const char *name);
/* NVIDIA's own libraries (libcublas*, libcudnn*, libnccl ..., anything under
 * nvidia/ or a *.libs/ folder of vendored copies) are often built one
 * architecture per module, so "partial" is normal for them. */
int ow_audit_is_vendor(const char *path);
/* The same, or by what the library calls itself: fb's SONAME names one of
 * NVIDIA's libraries (a renamed copy, or one vendored in another package's
 * folder, such as triton's CUPTI).  fb may be NULL. */
int ow_audit_is_vendor_lib(const char *path, const struct ow_fatbin *fb);

/* Per library: architectures and counts. */
struct ow_audit_summary {
	size_t n_modules, n_code, n_reloc, n_empty, n_scanned, n_entries;
	size_t n_unchecked; /* of n_code: not looked into for kernels (have an image) */
	size_t n_scanned_code; /* of n_code: found by the data scan */
	char sass[512]; /* "sm_75 sm_80 sm_90a" sorted by arch, unique */
	char ptx[512];  /* "compute_120@9.0" */
	char lto[256];  /* "lto_100" */
	/* Images only in link-time (-rdc) modules, and only in modules the data
	 * scan found (when the fatbin sections hold code too): apart, since
	 * neither is what the runtime loads at start-up. */
	char rdc[512];  /* "sm_89 compute_120@9.0" */
	char data[512]; /* "sm_90" */
};
void ow_audit_lib_summary(const struct ow_audit_lib *l, struct ow_audit_summary *out);

enum ow_audit_verdict {
	OW_AUDIT_NO_CODE = 0, /* no library with device code */
	OW_AUDIT_NATIVE,      /* every library runs natively */
	OW_AUDIT_JIT,         /* every library runs, some only through PTX JIT */
	OW_AUDIT_PARTIAL,     /* some libraries cannot run (or not all their modules) */
	OW_AUDIT_NONE,        /* no library with code can run */
};

struct ow_audit_lib_verdict {
	struct ow_gpu_library_verdict v; /* gpucompat's own verdict and counts */
	int effective; /* enum ow_gpu_lib_verdict after the vendor rule: a vendor
	                * library's "partial" counts as native (or jit) */
	int fatal;     /* the device cannot run this library: none or
	                * ptx-too-new everywhere, or partial outside vendor code */
	/* Modules only the data scan found (in .lrodata/.ldata, not registered at
	 * start-up) decide nothing when the fatbin sections hold code: v covers
	 * the sections, and these count apart.  A library whose code is all in
	 * data sections (libcufft's 29,342 modules) is judged by them. */
	size_t data_modules, data_no_image;
	int data_judged; /* v is from the data-section modules */
	int isa_unknown; /* its JIT needs PTX newer than the ISA table (driver_needed 0) */
	bool extension;   /* built only for arch- or family-specific targets: every image
	                  * SASS sm_XYa or sm_XYf, no PTX (vllm's _flashmla_C, flashinfer's
	                  * Sm103a cubins) */
	/* Of v.n_none, the per-arch modules: no PTX, and one SASS image or only
	 * arch/family-specific ones (vllm's sm_75-only, sm_90a-only kernels). */
	size_t per_arch_none;
	int per_arch;    /* partial, but every module without an image is a per-arch
	                  * one and some run natively: it dispatches by architecture,
	                  * and runs (not under --strict) */
	int role;        /* enum ow_audit_role, from ow_audit_lib_verdicts */
};
int ow_audit_lib_verdict(const struct ow_audit_lib *l, int cc, int driver,
                         struct ow_audit_lib_verdict *out);

/* How a library counts in its target's verdict (docs/gpu.md, "Optional
 * libraries"), unless the rules are strict. */
enum ow_audit_role {
	OW_AUDIT_ROLE_REQUIRED = 0, /* counts */
	OW_AUDIT_ROLE_NOT_FOR_DEVICE, /* an extension none of whose modules runs here while
	                               * another library of the target runs: not fatal */
	OW_AUDIT_ROLE_OTHER_CUDA,     /* one of a family of per-CUDA-runtime builds
	                               * (libbitsandbytes_cuda128.so, _cuda130.so ...) that
	                               * is not the one loaded: not judged */
	OW_AUDIT_ROLE_LINK_TIME,      /* a static archive or relocatable object: code for
	                               * the linker, never loaded: never judged (not even
	                               * under --strict) */
	OW_AUDIT_ROLE_OTHER_COPY,     /* an NVIDIA library none of whose modules runs here
	                               * while another copy of it (the same name in another
	                               * folder: triton's cupti/ and cupti-blackwell/) runs:
	                               * the package loads the copy that fits */
};
/* A static archive (.a) or relocatable object (ET_REL): link-time code. */
int ow_audit_is_link_time(const struct ow_audit_lib *l);

struct ow_audit_rules {
	bool strict; /* every library counts, as it is (no roles) */
	int cuda;   /* the CUDA runtime of the set (10 * major + minor: 128), which picks a
	             * family's member; 0 unknown: the newest member */
};
/* The verdict of every library of `a` (out: a->n_libs of them, malloc'd),
 * with the roles above applied; rules NULL: not strict, CUDA unknown. */
int ow_audit_lib_verdicts(const struct ow_audit *a, int cc, int driver,
                          const struct ow_audit_rules *rules, struct ow_audit_lib_verdict **out);
/* For a library of a family (OW_AUDIT_ROLE_OTHER_CUDA or the chosen one): its
 * CUDA number (128), else 0. */
int ow_audit_family_cuda(const char *path);

struct ow_audit_result {
	int verdict;   /* enum ow_audit_verdict */
	int fatal;     /* some library is fatal: exit 3 */
	size_t n_native, n_jit, n_partial, n_none, n_no_code; /* libraries, effective */
	size_t n_not_for_device, n_other_cuda; /* libraries left out by their role */
	size_t n_link_time, n_other_copy;      /* ... */
	bool runtime_only; /* every library with code is a raw .ptx/.cubin/.fatbin file not for
	                    * this device (arch-specific): the package compiles its kernels
	                    * at run time or does not support the device (not fatal) */
	int driver_needed; /* highest driver the JIT needs; 0 none/unknown */
	int isa_unknown;   /* a library that runs needs PTX newer than the ISA table: the
	                    * driver needed is newer than ow_gpu_ptx_newest_driver(),
	                    * and driver_needed (0) cannot say more */
};
int ow_audit_verdict(const struct ow_audit *a, int cc, int driver, struct ow_audit_result *out);
/* The same under explicit rules (NULL: as ow_audit_verdict). */
int ow_audit_verdict_rules(const struct ow_audit *a, int cc, int driver,
                           const struct ow_audit_rules *rules, struct ow_audit_result *out);
/* "no-code", "native", "jit", "partial", "none". */
const char *ow_audit_verdict_name(int verdict);

/* The cache text of a listing (format 1) and back: exposed for tests and
 * the fuzz target.  *out is malloc'd / ow_fatbin_free. */
int ow_audit_encode(const struct ow_fatbin *fb, char **out);
int ow_audit_decode(const char *text, size_t len, struct ow_fatbin **out);

#endif
