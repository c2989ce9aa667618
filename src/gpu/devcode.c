/* devcode.c - the headers of device code kept outside a fatbin: a
 * standalone cubin (a CUDA ELF, e_machine EM_CUDA) and PTX text.
 *
 * Cubin, as measured on nvcc 12.8, 12.9 and 13.0 output (docs/fatbin.md):
 * ELF ABI version 7 keeps the SASS arch in the low byte of e_flags, ABI
 * version 8 in bits 8..15; the arch-specific `a` is bit 0x800 (ABI 7) or
 * 0x8 (ABI 8), and nvcc 13.0 writes it instead as attribute 9 = 1 of the
 * .nv.compat section.  The family `f` is not in the cubin at all (nvcc 13.0's
 * sm_100 and sm_100f cubins differ only in the command line it records). */
#include <string.h>

#include "bytes.h"
#include "offwheel/error.h"
#include "offwheel/fatbin.h"

#define EM_CUDA 190
#define ABI_V7 7
#define ABI_V8 8
#define V7_ARCH_SPECIFIC 0x800u
#define V8_ARCH_SPECIFIC 0x8u
#define COMPAT_ARCH_SPECIFIC 9 /* .nv.compat attribute */
#define PTX_HEAD_MAX 4096

int ow_fatbin_is_cubin(const void *elf_header, size_t n)
{
	const uint8_t *h = elf_header;
	return h && n >= 64 && !memcmp(h, "\x7f" "ELF", 4) && h[4] == 2 && h[5] == 1 &&
	       ow_le16(h + 18) == EM_CUDA;
}

int ow_fatbin_cubin_arch(const void *elf_header, size_t n, uint16_t *arch, char *variant)
{
	const uint8_t *h = elf_header;
	if (!ow_fatbin_is_cubin(h, n))
		return ow_err(OW_EPARSE, "not a little-endian ELF64 cubin (e_machine %u)",
			      h && n >= 20 ? ow_le16(h + 18) : 0);
	uint32_t flags = ow_le32(h + 0x30);
	uint8_t abi = h[8];
	if (abi == ABI_V8) {
		*arch = (uint16_t)((flags >> 8) & 0xFF);
		*variant = flags & V8_ARCH_SPECIFIC ? 'a' : 0;
	} else if (abi <= ABI_V7) {
		*arch = (uint16_t)(flags & 0xFF);
		*variant = flags & V7_ARCH_SPECIFIC ? 'a' : 0;
	} else {
		return ow_err(OW_EUNSUPPORTED, "cubin ELF ABI version %u: only 7 and 8 are known",
			      abi);
	}
	if (*arch == 0)
		return ow_err(OW_EPARSE, "cubin e_flags 0x%08x name no architecture", flags);
	return 0;
}

/* .nv.compat is a list of attributes as in .nv.info: a format byte, an
 * attribute byte, then a byte (format 2) or a u16 (format 3) value in the
 * rest of 4 bytes, or (format 4) a u16 size and that many bytes. */
int ow_fatbin_compat_arch_specific(const void *compat, size_t n)
{
	const uint8_t *p = compat;
	size_t at = 0;
	while (p && at < n && n - at >= 4) {
		uint8_t fmt = p[at], attr = p[at + 1];
		if (fmt == 2 || fmt == 3) {
			unsigned v = fmt == 2 ? p[at + 2] : ow_le16(p + at + 2);
			if (attr == COMPAT_ARCH_SPECIFIC)
				return v == 1;
			at += 4;
		} else if (fmt == 4) {
			size_t len = ow_le16(p + at + 2);
			if (len > n - at - 4)
				return 0;
			at += 4 + len;
		} else if (fmt == 1) {
			at += 4;
		} else {
			return 0;
		}
	}
	return 0;
}

/* ---- PTX ---------------------------------------------------------------- */

struct ptx_rd {
	const char *p, *end;
};

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* Skip white space and comments (// to the line's end, block comments). */
static void skip_blank(struct ptx_rd *r)
{
	for (;;) {
		while (r->p < r->end && is_space(*r->p))
			r->p++;
		if (r->end - r->p >= 2 && r->p[0] == '/' && r->p[1] == '/') {
			while (r->p < r->end && *r->p != '\n')
				r->p++;
		} else if (r->end - r->p >= 2 && r->p[0] == '/' && r->p[1] == '*') {
			const char *e = memmem(r->p + 2, (size_t)(r->end - r->p - 2), "*/", 2);
			r->p = e ? e + 2 : r->end;
		} else {
			return;
		}
	}
}

/* The directive `word` then at least one blank. */
static int directive(struct ptx_rd *r, const char *word)
{
	size_t n = strlen(word);
	skip_blank(r);
	if ((size_t)(r->end - r->p) <= n || memcmp(r->p, word, n) || !is_space(r->p[n]))
		return 0;
	r->p += n;
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t'))
		r->p++;
	return 1;
}

/* A decimal of 1..4 digits. */
static int number(struct ptx_rd *r, uint16_t *v)
{
	unsigned n = 0, digits = 0;
	while (r->p < r->end && *r->p >= '0' && *r->p <= '9' && digits < 5) {
		n = n * 10 + (unsigned)(*r->p++ - '0');
		digits++;
	}
	*v = (uint16_t)n;
	return digits >= 1 && digits <= 4;
}

static int version(struct ptx_rd *r, uint16_t *major, uint16_t *minor)
{
	if (!number(r, major) || r->p == r->end || *r->p++ != '.' || !number(r, minor))
		return 0;
	return r->p == r->end || is_space(*r->p);
}

/* "sm_90a", "sm_100f", "sm_80" (then ',' more target options, or a blank). */
static int target(struct ptx_rd *r, uint16_t *arch, char *variant)
{
	if (r->end - r->p < 4 || memcmp(r->p, "sm_", 3))
		return 0;
	r->p += 3;
	if (!number(r, arch) || *arch == 0)
		return 0;
	*variant = 0;
	if (r->p < r->end && (*r->p == 'a' || *r->p == 'f'))
		*variant = *r->p++;
	return r->p == r->end || is_space(*r->p) || *r->p == ',';
}

int ow_fatbin_ptx_header(const void *text, size_t n, struct ow_fatbin_entry *e)
{
	struct ptx_rd r = {text, (const char *)text + (n < PTX_HEAD_MAX ? n : PTX_HEAD_MAX)};
	uint16_t major, minor, arch;
	char variant;
	if (!text || !directive(&r, ".version") || !version(&r, &major, &minor))
		return ow_err(OW_EPARSE, "not PTX: no \".version X.Y\" first");
	if (!directive(&r, ".target") || !target(&r, &arch, &variant))
		return ow_err(OW_EPARSE, "PTX: no \".target sm_XY\" after .version");
	memset(e, 0, sizeof *e);
	e->kind = OW_FB_PTX;
	e->arch = arch;
	e->variant = variant;
	e->ver_major = major;
	e->ver_minor = minor;
	e->flags = (variant == 'a' ? OW_FB_FLAG_ARCH_A : 0) | (variant == 'f' ? OW_FB_FLAG_FAMILY_F : 0);
	e->payload_size = n;
	e->kernels = -1;
	return 0;
}
