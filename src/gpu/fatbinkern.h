/* fatbinkern.h - which fatbin modules hold no kernel at all, from the
 * payloads the header-only listing (fatbin.h) leaves closed.
 *
 * A module none of whose cubins has a .text.<kernel> section and none of
 * whose PTX has an .entry cannot fail a launch for want of an image: the
 * audit counts it as no-code (libcudnn_ext.so.9: 22 such modules, all
 * compressed; libcublasLt: 931 of 2,617).  Most cubins are compressed (LZ4
 * or zstd, decompress.h), so finding out costs a decompression; it is done
 * as little as possible:
 *   - relocatable modules (no verdict) and modules already decided are
 *     skipped;
 *   - a module is decided by its first cubin that has a kernel: only a
 *     prefix of it is decompressed (a 2 KiB prefix holds the section name
 *     table that nvcc writes right after the ELF header; a ".text." name in
 *     it means a kernel);
 *   - only when every cubin looks kernel-less is each decompressed whole and
 *     its section headers read, and then the PTX searched for .entry;
 *   - a compressed cubin whose stored bytes equal one already looked into
 *     in the same call (compared byte for byte) takes its result.
 * The result is kept in the listing (entries' kernels, modules' no_kernels),
 * so a cached audit (audits.listing, flag k) never decompresses again. */
#ifndef OW_FATBINKERN_H
#define OW_FATBINKERN_H

#include <stdint.h>

#include "offwheel/fatbin.h"

/* Only when a verdict depends on it: with cc (10 * major + minor) > 0,
 * every module that does not run natively on that device (no image, PTX
 * to JIT, or PTX too new for `driver`, 0 = unknown) is looked into, since
 * each counts only if it has a kernel; of the modules that run natively,
 * only as many as it takes to find one with a kernel (that one decides
 * between "none"/"no-code" and "partial"/"native"; the rest change no
 * verdict and no count of modules without an image) — those are marked
 * unchecked and counted as code.  Modules to JIT count only by whether one
 * has a kernel and the newest driver such a one needs: those needing the
 * newest driver are opened until one has a kernel, and every module to JIT
 * needing no newer driver is then left unchecked, counted as code.
 * cc 0 looks into every module (a listing, or a listing kept in a cache).
 * Payloads come from `buf` (len bytes, the listed input in memory) or, when
 * buf is NULL, from `fd` with pread.  The listing must be fresh (offsets
 * valid), from that same input.  *bytes_read (may be NULL) grows by what was
 * read from fd.  A payload that does not decompress is an OW_EPARSE naming
 * the entry; OW_EIO, OW_ENOMEM. */
struct ow_kern_ask {
	int cc, driver;  /* the device (0: every module) and the driver (0: unknown) */
	int any_native;  /* an NVIDIA library, whose partial counts as native: modules
	                  * without an image are opened only where no native module
	                  * of their part (fatbin or data sections) has a kernel */
};
int ow_fatbin_count_kernels(struct ow_fatbin *fb, const void *buf, uint64_t len, int fd,
			    const struct ow_kern_ask *ask, uint64_t *bytes_read);

/* The same, with each module's decision taken from `oracle` instead of its
 * payloads (fbstream.h: decisions made while the input streamed past).
 * The oracle fills the module as decide would (entries' kernels,
 * no_kernels) or fails; it is asked only for modules that need a decision. */
int ow_fatbin_count_kernels_oracle(struct ow_fatbin *fb, const struct ow_kern_ask *ask,
				   int (*oracle)(void *ud, struct ow_fatbin *fb,
						 struct ow_fatbin_module *m),
				   void *ud);

/* One module decided as ow_fatbin_count_kernels decides each it looks
 * into, its payloads read from buf: `len` bytes standing at offset `base`
 * of the input (entry offsets are the input's).  A decider keeps one
 * decoder and its scratch from call to call; one thread at a time. */
typedef struct ow_fatbin_decider ow_fatbin_decider;
ow_fatbin_decider *ow_fatbin_decider_new(void);
int ow_fatbin_decide(ow_fatbin_decider *d, struct ow_fatbin *fb, struct ow_fatbin_module *m,
		     const void *buf, uint64_t base, uint64_t len);
void ow_fatbin_decider_free(ow_fatbin_decider *d);

/* The .entry directives of a PTX text (a kernel each). */
int32_t ow_fatbin_ptx_kernels(const char *ptx, uint64_t n);

#endif
