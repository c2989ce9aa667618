/* fatbin.h - list the CUDA fat binaries inside ELF, PE and unknown files.
 *
 * Reads headers only: ELF64 section headers, the 16-byte container headers
 * (magic 0xBA55ED50) and the 64-byte entry headers; payloads are never
 * read, copied or decompressed.  What the input is comes from its first
 * bytes (docs/fatbin.md, "What a file is"): a standalone cubin (ELF with
 * e_machine EM_CUDA: one SASS module, arch from e_flags), a fatbin file
 * (walked from offset 0), a static archive (each member by its own first
 * bytes), PTX text (.version then .target: one PTX module), a host ELF or
 * PE.  Where the containers are in those:
 *   ELF  .nv_fatbin (loadable modules) and __nv_relfatbin (-rdc code, not
 *        loadable); with OW_FATBIN_SCAN_DATA also other PROGBITS data
 *        sections (.ldata, .rodata, .cask_resource ...) by a magic scan.
 *   PE   section .nv_fatb; other sections scanned with OW_FATBIN_SCAN_DATA,
 *        or always when there is no .nv_fatb.
 *   ELF without section headers (e_shoff 0): its PT_LOAD segments are
 *        magic-scanned (section "(PT_LOAD)", no_section_headers set).
 *   else the whole input is magic-scanned (section name "(scan)").
 * Containers walked from a fatbin section must be well-formed (an error
 * otherwise); in a magic scan (8-aligned) a magic whose container does not
 * validate is a false positive and is skipped (counted in n_false_magic).
 * Layout and flag bits: docs/fatbin.md (checked against nvcc 13.0). */
#ifndef OW_FATBIN_H
#define OW_FATBIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OW_FATBIN_MAGIC 0xBA55ED50u

enum ow_fatbin_kind {
	OW_FB_PTX = 1,
	OW_FB_SASS = 2,    /* ELF cubin */
	OW_FB_OLDCUBIN = 4,
	OW_FB_LTOIR = 8,   /* link-time IR: not loadable */
};

enum ow_fatbin_compression {
	OW_FB_COMP_NONE = 0,
	OW_FB_COMP_LZ4,
	OW_FB_COMP_ZSTD,
	OW_FB_COMP_UNKNOWN, /* compressed size set but no known method bit */
};

enum ow_fatbin_format {
	OW_FB_FMT_RAW = 0, /* unknown bytes, magic-scanned */
	OW_FB_FMT_ELF,     /* a host ELF: .nv_fatbin, or its loadable segments */
	OW_FB_FMT_PE,
	OW_FB_FMT_CUBIN,   /* a standalone cubin (ELF, e_machine EM_CUDA) */
	OW_FB_FMT_PTX,     /* PTX text: .version then .target */
	OW_FB_FMT_FATBIN,  /* a fatbin file: containers from offset 0 */
	OW_FB_FMT_AR,      /* a static archive (!<arch>): its members by content */
	OW_FB_FMT_LAST = OW_FB_FMT_AR,
};

/* Flag bits of the entry header (u64 at 0x28). */
#define OW_FB_FLAG_64BIT 0x1ull
#define OW_FB_FLAG_DEBUG 0x2ull
#define OW_FB_FLAG_LZ4 0x2000ull
#define OW_FB_FLAG_ZSTD 0x8000ull
#define OW_FB_FLAG_ARCH_A 0x100000ull   /* sm_90a */
#define OW_FB_FLAG_FAMILY_F 0x200000ull /* sm_100f */

/* Options for ow_fatbin_scan_buffer / ow_fatbin_read_*. */
#define OW_FATBIN_SCAN_DATA 0x1u /* also magic-scan ELF/PE data sections */

struct ow_fatbin_entry {
	uint16_t kind;        /* enum ow_fatbin_kind (other values kept as read) */
	uint16_t arch;        /* 10 * major + minor: 120 = sm_120 / CC 12.0 */
	char variant;         /* 0, 'a' (arch-specific) or 'f' (family) */
	uint8_t compression;  /* enum ow_fatbin_compression */
	uint16_t ver_major;   /* PTX: the PTX ISA (9.0); SASS: cubin version */
	uint16_t ver_minor;
	uint64_t flags;
	uint64_t offset;      /* of the entry header in the input */
	uint32_t header_size;
	uint64_t payload_size;      /* bytes stored */
	uint64_t uncompressed_size; /* 0 when not compressed */
	uint32_t compressed_size;   /* the compressed stream's own length (0x10): the
	                             * payload may be padded after it */
	int32_t kernels; /* SASS cubin read: its number of kernels (.text.* sections);
	                  * PTX read: its .entry directives; -1 not looked at.  The
	                  * listing reads only small uncompressed cubins (64 KiB);
	                  * fatbinkern.h decompresses the others (a count found in a
	                  * prefix of the cubin is at least 1, not exact) */
};

struct ow_fatbin_module {
	char section[32];   /* ".nv_fatbin", "__nv_relfatbin", ".nv_fatb", "(scan)" ... */
	bool relocatable;    /* from __nv_relfatbin: not loadable, no verdict */
	bool scanned;        /* found by the magic scan */
	uint64_t offset;    /* container header offset in the input */
	uint64_t size;      /* header + body */
	size_t first;       /* index of its first entry in ow_fatbin.entries */
	size_t count;       /* number of entries; 0 = nothing to load */
	bool no_kernels;     /* every entry is a cubin or PTX read with no kernel in it
	                     * (libcufftw's one module, libcudnn_ext's 22): no launch
	                     * can fail for want of an image */
	bool unchecked;      /* fatbinkern.h did not look (it has an image for the
	                     * device audited): may or may not hold kernels */
};

struct ow_fatbin {
	int format;         /* enum ow_fatbin_format */
	struct ow_fatbin_module *modules;
	size_t n_modules;
	struct ow_fatbin_entry *entries;
	size_t n_entries;
	size_t n_false_magic; /* magics skipped in scans */
	bool no_section_headers; /* an ELF with e_shoff 0: its PT_LOAD segments were
	                         * magic-scanned instead of its fatbin sections */
	bool object;          /* a relocatable object (ELF e_type ET_REL, a .o): like an
	                       * archive (OW_FB_FMT_AR), code for the linker, never loaded */
	uint64_t bytes_read;  /* file reader: bytes read from disk */
	char *soname;         /* an ELF shared library's DT_SONAME, or NULL (none, or
	                       * not among the bytes a streamed member kept) */
};

/* List the fatbins in `len` bytes of anything (ELF, PE, raw container, a
 * zip member streamed into memory).  *out is allocated; free it with
 * ow_fatbin_free.  An input without any container is success with zero
 * modules.  Errors: OW_EPARSE (malformed ELF/PE/container, with offset),
 * OW_ETOOBIG (more than 1,000,000 containers or 10,000,000 entries),
 * OW_ENOMEM. */
int ow_fatbin_scan_buffer(const void *buf, size_t len, unsigned opts,
			  struct ow_fatbin **out);
/* The same for a file, reading only headers with pread (plus the data
 * sections for OW_FATBIN_SCAN_DATA).  OW_EIO/OW_ENOENT when unreadable. */
int ow_fatbin_read_file(const char *path, unsigned opts, struct ow_fatbin **out);
int ow_fatbin_read_fd(int fd, unsigned opts, struct ow_fatbin **out);
void ow_fatbin_free(struct ow_fatbin *fb);

/* The kernels of a whole (decompressed) cubin: its sections named
 * .text.<kernel>; -1 when it is not a readable little-endian ELF64. */
int32_t ow_fatbin_cubin_kernels(const void *cubin, uint64_t n);

/* A standalone cubin: a little-endian ELF64 with e_machine EM_CUDA (190),
 * from its first 64 bytes. */
int ow_fatbin_is_cubin(const void *elf_header, size_t n);
/* Its SASS arch and 'a' (or 0) from e_flags (ELF ABI versions 7 and 8;
 * docs/fatbin.md).  OW_EPARSE / OW_EUNSUPPORTED otherwise. */
int ow_fatbin_cubin_arch(const void *elf_header, size_t n, uint16_t *arch, char *variant);
/* 1 when a cubin's .nv.compat section says arch-specific (nvcc 13's way of
 * writing the 'a'), else 0. */
int ow_fatbin_compat_arch_specific(const void *compat, size_t n);
/* PTX text of n bytes: after blanks and comments, ".version X.Y" then
 * ".target sm_XY[a|f]" (in its first 4 KiB).  Fills a PTX entry (kind, arch,
 * variant, ISA in ver_major/minor, payload_size n, kernels -1); OW_EPARSE
 * when the text is not PTX. */
int ow_fatbin_ptx_header(const void *text, size_t n, struct ow_fatbin_entry *e);

/* "sm_90a", "compute_120", "lto_100f", "cubin_80", "kind9_80". */
int ow_fatbin_entry_name(const struct ow_fatbin_entry *e, char *buf, size_t size);
/* "none", "lz4", "zstd", "unknown". */
const char *ow_fatbin_compression_name(int compression);
/* The canonical one-line listing of a module, as in the .expect files:
 * "sm_75 sm_90a:zstd compute_120@9.0:zstd" (SASS, PTX, LTO-IR, other, each
 * by arch then variant) or "empty".  OW_ERANGE if buf is too small. */
int ow_fatbin_module_format(const struct ow_fatbin *fb, const struct ow_fatbin_module *m,
			    char *buf, size_t size);

#endif
