/* fatbin.c - ELF/PE section headers and CUDA fatbin container headers.
 *
 * Every read goes through src_read(), which bounds-checks against the input
 * size with overflow-safe arithmetic; file inputs are read with pread of the
 * headers only, so listing a 500 MB library touches a few hundred kB. */
#include "offwheel/fatbin.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "array.h"
#include "bytes.h"
#include "fbstream.h"
#include "offwheel/error.h"

#define CONTAINER_HDR 16u
#define ENTRY_HDR 64u
#define MAX_MODULES 1000000u
#define MAX_ENTRIES 10000000u
#define MAX_SECTIONS 100000u
#define MAX_SHSTRTAB (16u << 20)
#define SCAN_WINDOW (1u << 20)
/* Small reads (a container header, then its first entry header right after
 * it) are served from one read of HDR_CACHE bytes: half the syscalls of
 * reading each header alone, measured on libcublasLt (5.7k containers). */
#define HDR_CACHE 256u

struct src {
	const uint8_t *buf; /* whole input in memory, or NULL for fd or sp */
	struct fb_sparse *sp; /* the bytes a stream kept (fbstream.h), or NULL */
	int fd;
	uint64_t base;      /* where this view starts in the input (an archive member) */
	uint64_t size;      /* of the view */
	uint64_t bytes_read;
	uint8_t *win;       /* file mode scan window */
	uint64_t win_off, win_len;
	uint8_t hc[HDR_CACHE]; /* file mode: the bytes after the last small read */
	uint64_t hc_off, hc_len;
};

struct ctx {
	struct src *s;
	struct ow_fatbin *fb;
	size_t cap_modules, cap_entries;
	unsigned opts;
	uint8_t *peek; /* file mode: a small cubin read whole */
};

static uint64_t align8(uint64_t v) { return v > UINT64_MAX - 7 ? UINT64_MAX : (v + 7) & ~(uint64_t)7; }

/* off + n <= size without overflow. */
static int in_bounds(uint64_t off, uint64_t n, uint64_t size)
{
	return off <= size && n <= size - off;
}

static int fd_read(struct src *s, uint64_t off, void *dst, size_t n);

/* The kept piece holding [off, off+n), or a miss (sp->missed is set: the
 * caller lists the input again, whole). */
static const struct fb_piece *sparse_piece(const struct fb_sparse *sp, uint64_t off, size_t n)
{
	size_t lo = 0, hi = sp->n_pieces;
	while (lo < hi) { /* the last piece starting at or before off */
		size_t mid = lo + (hi - lo) / 2;
		if (sp->pieces[mid].off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct fb_piece *p = lo ? &sp->pieces[lo - 1] : NULL;
	return p && in_bounds(off - p->off, n, p->len) ? p : NULL;
}

static int sparse_read(struct fb_sparse *sp, uint64_t off, void *dst, size_t n)
{
	const struct fb_piece *p = sparse_piece(sp, off, n);
	if (!p) {
		if (!__atomic_exchange_n(&sp->missed, 1, __ATOMIC_RELAXED)) {
			sp->miss_off = off; /* the first miss: a second pass keeps it */
			sp->miss_len = n;
		}
		return ow_err(OW_EUNSUPPORTED, "%zu bytes at offset %" PRIu64
			      " were not kept while the input streamed", n, off);
	}
	memcpy(dst, sp->bytes + p->at + (off - p->off), n);
	return 0;
}

static int src_read(struct src *s, uint64_t off, void *dst, size_t n)
{
	if (!in_bounds(off, n, s->size))
		return ow_err(OW_EPARSE, "truncated input: %zu bytes needed at offset %" PRIu64
			      " of a %" PRIu64 "-byte file — the file is cut short or corrupt",
			      n, off, s->size);
	if (s->buf) {
		memcpy(dst, s->buf + s->base + off, n);
		return 0;
	}
	if (s->sp)
		return sparse_read(s->sp, s->base + off, dst, n);
	if (n <= HDR_CACHE / 2) {
		if (!(off >= s->hc_off && in_bounds(off - s->hc_off, n, s->hc_len))) {
			uint64_t want = s->size - off < HDR_CACHE ? s->size - off : HDR_CACHE;
			s->hc_len = 0;
			int rc = fd_read(s, off, s->hc, (size_t)want);
			if (rc)
				return rc;
			s->hc_off = off;
			s->hc_len = want;
		}
		memcpy(dst, s->hc + (off - s->hc_off), n);
		return 0;
	}
	return fd_read(s, off, dst, n);
}

static int fd_read(struct src *s, uint64_t off, void *dst, size_t n)
{
	size_t done = 0;
	while (done < n) {
		ssize_t r = pread(s->fd, (uint8_t *)dst + done, n - done,
				  (off_t)(s->base + off + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return ow_err(OW_EIO, "read at offset %" PRIu64 ": %s", off + done, strerror(errno));
		if (r == 0)
			return ow_err(OW_EIO, "read at offset %" PRIu64 ": file shrank while reading",
				      off + done);
		done += (size_t)r;
	}
	s->bytes_read += n;
	return 0;
}

/* The bytes from `off` on, at most up to `end`, for a scan: in memory, or
 * through a window of SCAN_WINDOW bytes that is reused while `off` is in it. */
static int src_view(struct src *s, uint64_t off, uint64_t end, const uint8_t **p, uint64_t *len)
{
	if (off >= end || end > s->size)
		return ow_err(OW_EPARSE, "truncated input at offset %" PRIu64, off);
	if (s->buf) {
		*p = s->buf + s->base + off;
		*len = end - off;
		return 0;
	}
	uint64_t have = off >= s->win_off && off < s->win_off + s->win_len
				? s->win_off + s->win_len - off : 0;
	if (have < CONTAINER_HDR && have < end - off && end - off >= CONTAINER_HDR) {
		/* containers back to back, or a little padding apart (libcufft: 270
		 * MB of them in .rodata): the next one found by a small read, their
		 * payloads never read */
		uint8_t h[CONTAINER_HDR];
		int rc = src_read(s, off, h, sizeof h);
		if (rc)
			return rc;
		uint64_t at = off - s->hc_off, in_hc = s->hc_len - at; /* src_read left off in hc */
		in_hc = in_hc < end - off ? in_hc : end - off;
		for (uint64_t i = 0; i + 4 <= in_hc; i += 8)
			if (ow_le32(s->hc + at + i) == OW_FATBIN_MAGIC) {
				*p = s->hc + at;
				*len = in_hc;
				return 0;
			}
	}
	if (have < CONTAINER_HDR && have < end - off) {
		if (!s->win && !(s->win = malloc(SCAN_WINDOW)))
			return ow_err(OW_ENOMEM, "fatbin scan window: out of memory");
		uint64_t n = end - off < SCAN_WINDOW ? end - off : SCAN_WINDOW;
		int rc = src_read(s, off, s->win, (size_t)n);
		if (rc)
			return rc;
		s->win_off = off;
		s->win_len = n;
	}
	uint64_t wend = s->win_off + s->win_len;
	*p = s->win + (off - s->win_off);
	*len = (wend < end ? wend : end) - off;
	return 0;
}

/* arr with room for one more than its n items, at most max; NULL with *rc
 * set when there are max already ("more than max <what> — refusing the
 * input") or memory ran out (arr is then unchanged). */
static void *one_more(void *arr, size_t *cap, size_t n, size_t size, unsigned max,
		      const char *what, int *rc)
{
	void *g = n < max ? ow_array_reserve(arr, cap, n + 1, size) : NULL;
	if (n >= max)
		*rc = ow_err(OW_ETOOBIG, "more than %u fatbin %s — refusing the input", max, what);
	else if (!g)
		*rc = ow_err(OW_ENOMEM, "fatbin %s: out of memory", what);
	return g;
}

static int add_module(struct ctx *c, const char *section, int reloc, int scanned,
		      uint64_t off, struct ow_fatbin_module **out)
{
	struct ow_fatbin *fb = c->fb;
	int rc = 0;
	struct ow_fatbin_module *g = one_more(fb->modules, &c->cap_modules, fb->n_modules,
					      sizeof *g, MAX_MODULES, "containers", &rc);
	if (!g)
		return rc;
	fb->modules = g;
	struct ow_fatbin_module *m = &fb->modules[fb->n_modules++];
	memset(m, 0, sizeof *m);
	snprintf(m->section, sizeof m->section, "%s", section);
	m->relocatable = reloc;
	m->scanned = scanned;
	m->offset = c->s->base + off;
	m->first = fb->n_entries;
	*out = m;
	return 0;
}

static int add_entry(struct ctx *c, const struct ow_fatbin_entry *e)
{
	int rc = 0;
	struct ow_fatbin *fb = c->fb;
	struct ow_fatbin_entry *g = one_more(fb->entries, &c->cap_entries, fb->n_entries,
					     sizeof *g, MAX_ENTRIES, "entries", &rc);
	if (!g)
		return rc;
	fb->entries = g;
	fb->entries[fb->n_entries] = *e;
	fb->entries[fb->n_entries++].offset += c->s->base; /* offsets are the input's */
	return 0;
}

/* Kernels of a small uncompressed cubin: its sections named .text.<kernel>.
 * -1 when it is not a readable ELF64 (then nothing is concluded). */
static int32_t cubin_kernels(const uint8_t *p, uint64_t n);

int32_t ow_fatbin_cubin_kernels(const void *cubin, uint64_t n)
{
	return cubin ? cubin_kernels(cubin, n) : -1;
}

static int32_t cubin_kernels(const uint8_t *p, uint64_t n)
{
	if (n < 64 || memcmp(p, "\x7f" "ELF", 4) || p[4] != 2 || p[5] != 1)
		return -1;
	uint64_t shoff = ow_le64(p + 0x28);
	uint16_t shentsize = ow_le16(p + 0x3A), shnum = ow_le16(p + 0x3C), shstrndx = ow_le16(p + 0x3E);
	if (shentsize < 64 || shstrndx >= shnum || !in_bounds(shoff, (uint64_t)shnum * shentsize, n))
		return -1;
	const uint8_t *str = p + shoff + (uint64_t)shstrndx * shentsize;
	uint64_t stroff = ow_le64(str + 0x18), strsize = ow_le64(str + 0x20);
	if (!in_bounds(stroff, strsize, n))
		return -1;
	int32_t kernels = 0;
	for (uint16_t i = 0; i < shnum; i++) {
		uint32_t name = ow_le32(p + shoff + (uint64_t)i * shentsize);
		static const char text[] = ".text.";
		if (name < strsize && strsize - name >= sizeof text - 1 &&
		    !memcmp(p + stroff + name, text, sizeof text - 1))
			kernels++;
	}
	return kernels;
}

#define CUBIN_PEEK_MAX (64u << 10)

/* A small uncompressed SASS payload is read whole (rare: NVIDIA compresses
 * nearly all; libcufftw's single module is one of them) to tell a cubin
 * without kernels from one with. */
static int peek_kernels(struct ctx *c, uint64_t at, struct ow_fatbin_entry *e)
{
	e->kernels = -1;
	if (e->kind != OW_FB_SASS || e->compression != OW_FB_COMP_NONE ||
	    e->payload_size > CUBIN_PEEK_MAX || e->payload_size < 64)
		return 0;
	if (c->s->buf) {
		e->kernels = cubin_kernels(c->s->buf + c->s->base + at, e->payload_size);
		return 0;
	}
	if (!c->peek && !(c->peek = malloc(CUBIN_PEEK_MAX)))
		return ow_err(OW_ENOMEM, "fatbin: out of memory");
	int rc = src_read(c->s, at, c->peek, (size_t)e->payload_size);
	if (!rc)
		e->kernels = cubin_kernels(c->peek, e->payload_size);
	return rc;
}

static int known_kind(uint16_t kind)
{
	return kind == OW_FB_PTX || kind == OW_FB_SASS || kind == OW_FB_OLDCUBIN ||
	       kind == OW_FB_LTOIR;
}

static void decode_entry(const uint8_t *h, uint64_t off, struct ow_fatbin_entry *e)
{
	memset(e, 0, sizeof *e);
	e->kind = ow_le16(h);
	e->header_size = ow_le32(h + 4);
	e->payload_size = ow_le64(h + 8);
	e->ver_minor = ow_le16(h + 0x18);
	e->ver_major = ow_le16(h + 0x1A);
	uint32_t arch = ow_le32(h + 0x1C);
	e->arch = arch > UINT16_MAX ? UINT16_MAX : (uint16_t)arch;
	e->flags = ow_le64(h + 0x28);
	e->uncompressed_size = ow_le64(h + 0x38);
	e->compressed_size = ow_le32(h + 0x10);
	e->offset = off;
	if (e->flags & OW_FB_FLAG_ARCH_A)
		e->variant = 'a';
	else if (e->flags & OW_FB_FLAG_FAMILY_F)
		e->variant = 'f';
	int lz4 = !!(e->flags & OW_FB_FLAG_LZ4), zstd = !!(e->flags & OW_FB_FLAG_ZSTD);
	if (lz4 && zstd)
		e->compression = OW_FB_COMP_UNKNOWN;
	else if (lz4)
		e->compression = OW_FB_COMP_LZ4;
	else if (zstd)
		e->compression = OW_FB_COMP_ZSTD;
	else if (ow_le32(h + 0x10) != 0)
		e->compression = OW_FB_COMP_UNKNOWN;
}

/* The entries of the container whose header is at `off`, which must end by
 * `limit`.  *end gets the offset after its body. */
static int walk_entries(struct ctx *c, uint64_t off, uint64_t limit, int scanned,
			uint64_t *end)
{
	uint8_t h[ENTRY_HDR];
	int rc = src_read(c->s, off, h, CONTAINER_HDR);
	if (rc)
		return rc;
	uint16_t version = ow_le16(h + 4), hsize = ow_le16(h + 6);
	uint64_t body = ow_le64(h + 8);
	if (ow_le32(h) != OW_FATBIN_MAGIC)
		return ow_err(OW_EPARSE, "no fatbin magic at offset %" PRIu64, off);
	if (version != 1 || hsize < CONTAINER_HDR)
		return ow_err(OW_EPARSE, "fatbin container at offset %" PRIu64
			      ": unknown version %u or header size %u", off, version, hsize);
	if (!in_bounds(off, hsize, limit) || !in_bounds(off + hsize, body, limit))
		return ow_err(OW_EPARSE, "fatbin container at offset %" PRIu64 ": body of %" PRIu64
			      " bytes runs past the end of its section (offset %" PRIu64 ")",
			      off, body, limit);
	uint64_t cend = off + hsize + body;
	for (uint64_t e = off + hsize; e < cend;) {
		if (!in_bounds(e, ENTRY_HDR, cend))
			return ow_err(OW_EPARSE, "fatbin entry at offset %" PRIu64
				      ": header cut by the end of its container", e);
		if ((rc = src_read(c->s, e, h, ENTRY_HDR)))
			return rc;
		struct ow_fatbin_entry ent;
		decode_entry(h, e, &ent);
		if (ent.header_size < ENTRY_HDR || !in_bounds(e, ent.header_size, cend) ||
		    !in_bounds(e + ent.header_size, ent.payload_size, cend))
			return ow_err(OW_EPARSE, "fatbin entry at offset %" PRIu64
				      ": header size %u or payload size %" PRIu64
				      " runs past its container", e, ent.header_size, ent.payload_size);
		if (scanned && !known_kind(ent.kind))
			return ow_err(OW_EPARSE, "fatbin entry at offset %" PRIu64 ": unknown kind %u",
				      e, ent.kind);
		if ((rc = peek_kernels(c, e + ent.header_size, &ent)) || (rc = add_entry(c, &ent)))
			return rc;
		e += ent.header_size + ent.payload_size;
	}
	*end = cend;
	return 0;
}

/* One container at `off` as a module; on a parse failure nothing is kept. */
static int take_container(struct ctx *c, const char *section, int reloc, int scanned,
			  uint64_t off, uint64_t limit, uint64_t *end)
{
	size_t nm = c->fb->n_modules, ne = c->fb->n_entries;
	struct ow_fatbin_module *m;
	int rc = add_module(c, section, reloc, scanned, off, &m);
	if (rc)
		return rc;
	rc = walk_entries(c, off, limit, scanned, end);
	if (rc) {
		c->fb->n_modules = nm;
		c->fb->n_entries = ne;
		return rc;
	}
	m = &c->fb->modules[nm];
	m->size = *end - off;
	m->count = c->fb->n_entries - ne;
	m->no_kernels = m->count > 0;
	for (size_t i = ne; i < c->fb->n_entries; i++)
		m->no_kernels &= c->fb->entries[i].kind == OW_FB_SASS && c->fb->entries[i].kernels == 0;
	return 0;
}

static int all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

static int section_in_file(const struct ctx *c, const char *name, uint64_t start, uint64_t size)
{
	if (in_bounds(start, size, c->s->size))
		return 0;
	return ow_err(OW_EPARSE, "section %s (offset %" PRIu64 ", %" PRIu64
		      " bytes) lies past the end of the file — truncated or corrupt",
		      name, start, size);
}

/* A fatbin section: containers back to back at 8-aligned steps; zero
 * padding may end it. */
static int walk_section(struct ctx *c, const char *name, uint64_t start, uint64_t size)
{
	int rc = section_in_file(c, name, start, size);
	if (rc)
		return rc;
	int reloc = strcmp(name, "__nv_relfatbin") == 0;
	uint64_t end = start + size, pos = start;
	while (end - pos >= CONTAINER_HDR) {
		uint8_t h[CONTAINER_HDR];
		rc = src_read(c->s, pos, h, sizeof h);
		if (rc)
			return rc;
		if (ow_le32(h) != OW_FATBIN_MAGIC) {
			if (all_zero(h, sizeof h))
				return 0;
			return ow_err(OW_EPARSE, "section %s: no fatbin container at offset %" PRIu64
				      " (found 0x%08x) — corrupt fatbin", name, pos, ow_le32(h));
		}
		uint64_t cend;
		if ((rc = take_container(c, name, reloc, 0, pos, end, &cend)))
			return ow_err_prefix(rc, "section %s: ", name);
		pos = align8(cend);
		if (pos > end)
			break;
	}
	return 0;
}

/* The first kept magic at or after pos that ends by end (index *i on). */
static uint64_t next_magic(const struct fb_sparse *sp, size_t *i, uint64_t pos, uint64_t end)
{
	while (*i < sp->n_magic && sp->magic[*i] < pos)
		(*i)++;
	if (*i < sp->n_magic && sp->magic[*i] <= end - 4)
		return sp->magic[*i];
	return UINT64_MAX;
}

/* A magic found by a scan at `hit`: its container is taken, and *pos moves
 * past it; a false magic is counted and *pos moves 8 bytes on.  Only the
 * errors a scan cannot go on after are returned. */
static int take_at(struct ctx *c, const char *name, uint64_t hit, uint64_t end, uint64_t *pos)
{
	uint64_t cend;
	int rc = take_container(c, name, 0, 1, hit, end, &cend);
	if (rc == OW_ENOMEM || rc == OW_ETOOBIG || rc == OW_EIO)
		return rc;
	if (rc) {
		c->fb->n_false_magic++;
		ow_err_clear();
		*pos = hit + 8;
	} else {
		*pos = align8(cend);
	}
	return 0;
}

/* scan_range over a stream's kept magics: the same containers in the same
 * order as scanning the bytes (a stream keeps every 8-aligned magic). */
static int scan_kept(struct ctx *c, const char *name, uint64_t start, uint64_t end)
{
	const struct fb_sparse *sp = c->s->sp;
	uint64_t pos = align8(start);
	size_t i = 0;
	while (pos < end && end - pos >= CONTAINER_HDR) {
		uint64_t hit = next_magic(sp, &i, pos, end);
		if (hit == UINT64_MAX)
			break;
		int rc = take_at(c, name, hit, end, &pos);
		if (rc)
			return rc;
	}
	return 0;
}

/* Magic scan of [start, start+size) at 8-aligned file offsets. */
static int scan_range(struct ctx *c, const char *name, uint64_t start, uint64_t size)
{
	int rc = section_in_file(c, name, start, size);
	if (rc)
		return rc;
	if (c->s->sp && !c->s->base)
		return scan_kept(c, name, start, start + size);
	if (c->s->sp) { /* kept magics are 8-aligned in the whole input only */
		__atomic_store_n(&c->s->sp->missed, 1, __ATOMIC_RELAXED);
		return ow_err(OW_EUNSUPPORTED, "a scan inside an archive member is not kept");
	}
	uint64_t end = start + size, pos = align8(start);
	while (pos < end && end - pos >= CONTAINER_HDR) {
		uint64_t len = 0;
		const uint8_t *p = NULL;
		rc = src_view(c->s, pos, end, &p, &len);
		if (rc)
			return rc;
		uint64_t i = 0, hit = UINT64_MAX;
		for (; i + 4 <= len; i += 8)
			if (p[i] == 0x50 && ow_le32(p + i) == OW_FATBIN_MAGIC) {
				hit = pos + i;
				break;
			}
		if (hit == UINT64_MAX) {
			pos += len >= 16 ? len & ~(uint64_t)7 : 8;
			continue;
		}
		if ((rc = take_at(c, name, hit, end, &pos)))
			return rc;
	}
	return 0;
}

/* ---- ELF64 -------------------------------------------------------------- */

struct shdr {
	uint32_t name, type;
	uint64_t flags, offset, size, link;
};

static void decode_shdr(const uint8_t *p, struct shdr *sh)
{
	sh->name = ow_le32(p);
	sh->type = ow_le32(p + 4);
	sh->flags = ow_le64(p + 8);
	sh->offset = ow_le64(p + 0x18);
	sh->size = ow_le64(p + 0x20);
	sh->link = ow_le32(p + 0x28);
}

static int is_scannable(const struct shdr *sh, const char *name)
{
	return sh->type == 1 /* PROGBITS */ && !(sh->flags & 0x4 /* EXECINSTR */) &&
	       strcmp(name, ".nvFatBinSegment") != 0 && strcmp(name, "__nv_module_id") != 0;
}

static int elf_sections(struct ctx *c, const uint8_t *eh, uint8_t **tab, uint64_t *n,
			uint64_t *strndx)
{
	uint64_t shoff = ow_le64(eh + 0x28);
	uint16_t entsize = ow_le16(eh + 0x3A);
	*n = ow_le16(eh + 0x3C);
	*strndx = ow_le16(eh + 0x3E);
	if (shoff == 0)
		return 0; /* no section headers: nothing to list */
	if (entsize < 64)
		return ow_err(OW_EPARSE, "ELF section header size %u is too small (64 expected)",
			      entsize);
	uint8_t first[64];
	int rc = src_read(c->s, shoff, first, sizeof first);
	if (rc)
		return ow_err_prefix(rc, "ELF section headers: ");
	if (*n == 0)
		*n = ow_le64(first + 0x20); /* extended numbering */
	if (*strndx == 0xFFFF)
		*strndx = ow_le32(first + 0x28);
	if (*n > MAX_SECTIONS)
		return ow_err(OW_ETOOBIG, "ELF file claims %" PRIu64 " sections — corrupt", *n);
	if (*n == 0 || !in_bounds(shoff, *n * entsize, c->s->size))
		return ow_err(OW_EPARSE, "ELF section header table (%" PRIu64 " x %u bytes at %" PRIu64
			      ") runs past the end of the file — truncated", *n, entsize, shoff);
	if (!(*tab = malloc(*n * entsize)))
		return ow_err(OW_ENOMEM, "ELF section headers: out of memory");
	return src_read(c->s, shoff, *tab, (size_t)(*n * entsize));
}

static int elf_strtab(struct ctx *c, const uint8_t *tab, uint16_t entsize, uint64_t n,
		      uint64_t strndx, char **str, uint64_t *len)
{
	if (strndx >= n)
		return ow_err(OW_EPARSE, "ELF section name table index %" PRIu64 " out of range", strndx);
	struct shdr sh;
	decode_shdr(tab + strndx * entsize, &sh);
	if (sh.size > MAX_SHSTRTAB)
		return ow_err(OW_ETOOBIG, "ELF section name table of %" PRIu64 " bytes — corrupt", sh.size);
	if (!(*str = malloc(sh.size + 1)))
		return ow_err(OW_ENOMEM, "ELF section names: out of memory");
	(*str)[sh.size] = 0;
	*len = sh.size;
	int rc = src_read(c->s, sh.offset, *str, (size_t)sh.size);
	return rc ? ow_err_prefix(rc, "ELF section name table: ") : 0;
}

static const char *sec_name(const char *str, uint64_t len, uint32_t off)
{
	return off < len ? str + off : "";
}

/* An ELF's section header table and section names, as read. */
struct elf_tabs {
	uint8_t *tab; /* NULL: the ELF has no section headers */
	char *str;
	uint64_t n, len;
	uint16_t entsize;
};

static int elf_tabs_read(struct ctx *c, const uint8_t *eh, struct elf_tabs *t)
{
	uint64_t strndx = 0;
	memset(t, 0, sizeof *t);
	t->entsize = ow_le16(eh + 0x3A);
	int rc = elf_sections(c, eh, &t->tab, &t->n, &strndx);
	if (!rc && t->tab)
		rc = elf_strtab(c, t->tab, t->entsize, t->n, strndx, &t->str, &t->len);
	return rc;
}

static void elf_tabs_dispose(struct elf_tabs *t)
{
	free(t->tab);
	free(t->str);
}

static int elf_walk(struct ctx *c, const struct elf_tabs *t)
{
	const uint8_t *tab = t->tab;
	const char *str = t->str;
	uint64_t n = t->n, len = t->len;
	uint16_t entsize = t->entsize;
	for (uint64_t i = 0; i < n; i++) {
		struct shdr sh;
		decode_shdr(tab + i * entsize, &sh);
		const char *name = sec_name(str, len, sh.name);
		int rc = 0;
		if (sh.type == 8 /* NOBITS */)
			continue;
		if (!strcmp(name, ".nv_fatbin") || !strcmp(name, "__nv_relfatbin"))
			rc = walk_section(c, name, sh.offset, sh.size);
		else if ((c->opts & OW_FATBIN_SCAN_DATA) && is_scannable(&sh, name))
			rc = scan_range(c, name, sh.offset, sh.size);
		if (rc)
			return rc;
	}
	return 0;
}

#define PHDR_SIZE 56u
#define PT_LOAD 1u

/* One PT_LOAD segment, scanned from where the previous one ended (*done):
 * segments may share a page of the file. */
static int scan_segment(struct ctx *c, const uint8_t *ph, uint64_t *done)
{
	uint64_t off = ow_le64(ph + 0x08), size = ow_le64(ph + 0x20);
	if (!in_bounds(off, size, c->s->size))
		return ow_err(OW_EPARSE, "ELF segment (offset %" PRIu64 ", %" PRIu64
			      " bytes) lies past the end of the file — truncated or corrupt", off, size);
	uint64_t start = off > *done ? off : *done, end = off + size;
	if (end > *done)
		*done = end;
	return end > start ? scan_range(c, "(PT_LOAD)", start, end - start) : 0;
}

/* An ELF without section headers (e_shoff 0, a stripped table): what the
 * loader maps, its PT_LOAD segments, magic-scanned; the listing says so. */
static int elf_segments(struct ctx *c, const uint8_t *eh)
{
	uint64_t phoff = ow_le64(eh + 0x20), done = 0;
	uint16_t entsize = ow_le16(eh + 0x36), n = ow_le16(eh + 0x38);
	c->fb->no_section_headers = 1;
	if (!phoff || !n)
		return 0;
	if (entsize < PHDR_SIZE)
		return ow_err(OW_EPARSE, "ELF program header size %u is too small (56 expected)",
			      entsize);
	if (!in_bounds(phoff, (uint64_t)n * entsize, c->s->size))
		return ow_err(OW_EPARSE, "ELF program header table (%u x %u bytes at %" PRIu64
			      ") runs past the end of the file — truncated", n, entsize, phoff);
	uint8_t *tab = malloc((size_t)n * entsize);
	if (!tab)
		return ow_err(OW_ENOMEM, "ELF program headers: out of memory");
	int rc = src_read(c->s, phoff, tab, (size_t)n * entsize);
	for (uint16_t i = 0; i < n && !rc; i++)
		if (ow_le32(tab + (size_t)i * entsize) == PT_LOAD)
			rc = scan_segment(c, tab + (size_t)i * entsize, &done);
	free(tab);
	return rc ? ow_err_prefix(rc, "ELF segments: ") : 0;
}

/* ---- the SONAME: what a shared library calls itself --------------------- */

#define SHT_DYNAMIC 6u
#define DT_SONAME 14u
#define DYN_MAX 4096u   /* dynamic entries looked at */
#define SONAME_MAX 256u /* a longer SONAME is not read (never cut) */
#define SONAME_HEAD (64u << 10) /* what a stream keeps first (fbstream.c HEAD_KEEP) */

/* Bytes for a fact nothing else depends on: from a stream only where they
 * were kept, never a miss that would list the member again. */
static int src_peek(struct src *s, uint64_t off, void *dst, size_t n)
{
	if (s->sp && (!in_bounds(off, n, s->size) || !sparse_piece(s->sp, s->base + off, n)))
		return OW_EUNSUPPORTED;
	return src_read(s, off, dst, n);
}

/* The string at off (at most max bytes to its table's end) where a stream
 * keeps it (fbstream.c), so that a member streamed and held whole list
 * alike: in the first 64 KiB, or after the dynamic section (dyn_end). */
static void soname_at(struct ctx *c, uint64_t off, uint64_t max, uint64_t dyn_end)
{
	char b[SONAME_MAX];
	size_t n = max < sizeof b ? (size_t)max : sizeof b;
	if (off >= c->s->size)
		return;
	n = c->s->size - off < n ? (size_t)(c->s->size - off) : n;
	if (n < 2 || (off + n > SONAME_HEAD && off < dyn_end) || src_peek(c->s, off, b, n))
		return;
	const char *z = memchr(b, 0, n);
	if (z && z > b)
		c->fb->soname = strdup(b); /* out of memory: no SONAME, a fact less */
}

static void dyn_soname(struct ctx *c, const struct shdr *dyn, const struct shdr *str)
{
	uint64_t n = dyn->size / 16;
	n = n < DYN_MAX ? n : DYN_MAX;
	uint8_t *d = n ? malloc((size_t)n * 16) : NULL;
	if (!d || src_peek(c->s, dyn->offset, d, (size_t)n * 16)) {
		free(d);
		return;
	}
	for (uint64_t k = 0; k < n && ow_le64(d + k * 16) != 0 /* DT_NULL */; k++) {
		uint64_t val = ow_le64(d + k * 16 + 8);
		if (ow_le64(d + k * 16) == DT_SONAME && val < str->size) {
			soname_at(c, str->offset + val, str->size - val, dyn->offset + dyn->size);
			break;
		}
	}
	free(d);
}

/* DT_SONAME from the dynamic section and the string table it links to; a
 * renamed copy keeps it (audit.h: NVIDIA's libraries told by content).
 * Missing or unreadable: none, and no error. */
static void elf_soname(struct ctx *c, const struct elf_tabs *t)
{
	for (uint64_t i = 0; i < t->n && !c->fb->soname; i++) {
		struct shdr sh, st;
		decode_shdr(t->tab + i * t->entsize, &sh);
		if (sh.type != SHT_DYNAMIC || sh.link >= t->n)
			continue;
		decode_shdr(t->tab + sh.link * t->entsize, &st);
		dyn_soname(c, &sh, &st);
	}
	ow_err_clear();
}

static int elf_list(struct ctx *c, const uint8_t *eh)
{
	if (eh[4] != 2 || eh[5] != 1)
		return ow_err(OW_EUNSUPPORTED, "ELF class %u / data %u: only little-endian ELF64 is read",
			      eh[4], eh[5]);
	struct elf_tabs t;
	int rc = elf_tabs_read(c, eh, &t);
	if (!rc && t.tab) {
		rc = elf_walk(c, &t);
		if (!rc)
			elf_soname(c, &t);
	} else if (!rc)
		rc = elf_segments(c, eh);
	elf_tabs_dispose(&t);
	return rc;
}

/* ---- PE ----------------------------------------------------------------- */

static int pe_list(struct ctx *c, uint32_t lfanew)
{
	uint8_t coff[24];
	int rc = src_read(c->s, lfanew, coff, sizeof coff);
	if (rc)
		return ow_err_prefix(rc, "PE header: ");
	if (memcmp(coff, "PE\0\0", 4) != 0)
		return ow_err(OW_EPARSE, "PE signature missing at offset %u", lfanew);
	uint16_t nsec = ow_le16(coff + 6), optsize = ow_le16(coff + 20);
	uint64_t tab = (uint64_t)lfanew + 24 + optsize;
	uint8_t *secs = malloc((size_t)nsec * 40 + 1);
	if (!secs)
		return ow_err(OW_ENOMEM, "PE sections: out of memory");
	if ((rc = src_read(c->s, tab, secs, (size_t)nsec * 40))) {
		free(secs);
		return ow_err_prefix(rc, "PE section table: ");
	}
	int have_nvf = 0;
	for (unsigned i = 0; i < nsec; i++)
		have_nvf |= memcmp(secs + i * 40, ".nv_fatb", 8) == 0;
	for (unsigned i = 0; i < nsec && !rc; i++) {
		const uint8_t *p = secs + i * 40;
		char name[9] = {0};
		memcpy(name, p, 8);
		uint64_t size = ow_le32(p + 16), off = ow_le32(p + 20);
		if (!strcmp(name, ".nv_fatb"))
			rc = walk_section(c, name, off, size);
		else if (!have_nvf || (c->opts & OW_FATBIN_SCAN_DATA))
			rc = scan_range(c, name, off, size);
	}
	free(secs);
	return rc;
}

/* ---- device code outside a host binary: cubin, PTX, fatbin ------------ */

#define COMPAT_MAX 4096u
#define PTX_HEAD 4096u

/* The whole input as one module of one entry (a cubin or PTX file). */
static int one_module(struct ctx *c, const char *name, const struct ow_fatbin_entry *e)
{
	struct ow_fatbin_module *m = NULL;
	int rc = add_module(c, name, 0, 0, 0, &m);
	if (!m) /* add_module sets m exactly when it succeeds */
		return rc;
	m->size = c->s->size;
	m->count = 1;
	m->no_kernels = e->kernels == 0;
	return add_entry(c, e);
}

/* A cubin's section names: its kernels (.text.<kernel>), and whether
 * .nv.compat says arch-specific. */
static int cubin_names(struct ctx *c, const struct elf_tabs *t, struct ow_fatbin_entry *e)
{
	const uint8_t *tab = t->tab;
	const char *str = t->str;
	uint64_t n = t->n, len = t->len;
	uint16_t entsize = t->entsize;
	e->kernels = 0;
	for (uint64_t i = 0; i < n; i++) {
		struct shdr sh;
		decode_shdr(tab + i * entsize, &sh);
		const char *name = sec_name(str, len, sh.name);
		if (!strncmp(name, ".text.", 6) && e->kernels < INT32_MAX)
			e->kernels++;
		if (strcmp(name, ".nv.compat") || sh.type == 8 || sh.size > COMPAT_MAX)
			continue;
		uint8_t compat[COMPAT_MAX];
		int rc = src_read(c->s, sh.offset, compat, (size_t)sh.size);
		if (rc)
			return rc;
		if (ow_fatbin_compat_arch_specific(compat, (size_t)sh.size))
			e->variant = 'a';
	}
	return 0;
}

/* Section headers only, as for a host ELF: no payload byte is read. */
static int cubin_sections(struct ctx *c, const uint8_t *eh, struct ow_fatbin_entry *e)
{
	struct elf_tabs t;
	int rc = elf_tabs_read(c, eh, &t);
	if (!rc && t.tab)
		rc = cubin_names(c, &t, e);
	elf_tabs_dispose(&t);
	return rc;
}

static int cubin_list(struct ctx *c, const uint8_t *eh)
{
	struct ow_fatbin_entry e = {.kind = OW_FB_SASS, .payload_size = c->s->size,
				    .flags = OW_FB_FLAG_64BIT, .kernels = -1};
	int rc = ow_fatbin_cubin_arch(eh, 64, &e.arch, &e.variant);
	if (!rc)
		rc = cubin_sections(c, eh, &e);
	if (rc)
		return ow_err_prefix(rc, "cubin: ");
	if (e.variant == 'a')
		e.flags |= OW_FB_FLAG_ARCH_A;
	return one_module(c, "(cubin)", &e);
}

/* 1 when the input starts as PTX does (then *e is its entry), else 0. */
static int ptx_sniff(struct ctx *c, struct ow_fatbin_entry *e)
{
	char head[PTX_HEAD];
	size_t n = c->s->size < PTX_HEAD ? (size_t)c->s->size : PTX_HEAD;
	if (n < 16 || src_read(c->s, 0, head, n) || ow_fatbin_ptx_header(head, n, e)) {
		ow_err_clear();
		return 0;
	}
	e->payload_size = c->s->size;
	return 1;
}

static int ptx_list(struct ctx *c, const struct ow_fatbin_entry *e)
{
	return one_module(c, "(ptx)", e);
}

/* ---- static archives ----------------------------------------------------- */

#define AR_MAGIC "!<arch>\n"
#define AR_HDR 60u

/* A decimal field of an archive header, space padded. */
static int ar_decimal(const uint8_t *p, size_t n, uint64_t *v)
{
	size_t i = 0;
	*v = 0;
	while (i < n && p[i] >= '0' && p[i] <= '9')
		*v = *v * 10 + (uint64_t)(p[i++] - '0');
	int digits = i > 0;
	while (i < n && p[i] == ' ')
		i++;
	return digits && i == n;
}

/* Member size and, for BSD "#1/N" names, the N name bytes that open its data. */
static int ar_header(const uint8_t *h, uint64_t at, uint64_t *size, uint64_t *skip)
{
	*skip = 0;
	if (h[58] != '`' || h[59] != '\n' || !ar_decimal(h + 48, 10, size) ||
	    (!memcmp(h, "#1/", 3) && (!ar_decimal(h + 3, 13, skip) || *skip > *size)))
		return ow_err(OW_EPARSE, "archive member header at offset %" PRIu64
			      " is corrupt — the archive is damaged", at);
	return 0;
}

static int list_by_content(struct ctx *c, int member);

/* A fatbin file is one whose first container validates (its bytes are then
 * walked strictly); other bytes with the magic first are magic-scanned. */
static int fatbin_file(struct ctx *c)
{
	size_t nm = c->fb->n_modules, ne = c->fb->n_entries;
	uint64_t end;
	int rc = take_container(c, "(fatbin)", 0, 1, 0, c->s->size, &end);
	c->fb->n_modules = nm;
	c->fb->n_entries = ne;
	ow_err_clear();
	return rc == 0;
}

/* One member, as a view of the input of its own: what it holds decides. */
static int ar_member(struct ctx *c, uint64_t off, uint64_t size)
{
	struct src *whole = c->s;
	struct src sub = {.buf = whole->buf, .sp = whole->sp, .fd = whole->fd,
			  .base = whole->base + off, .size = size};
	c->s = &sub;
	int rc = list_by_content(c, 1);
	c->s = whole;
	whole->bytes_read += sub.bytes_read;
	free(sub.win);
	return rc;
}

/* Members start at even offsets, so their fatbins need not be 8-aligned in
 * the file: each member is read as a file of its own. */
static int ar_list(struct ctx *c)
{
	uint64_t pos = sizeof AR_MAGIC - 1, size = 0, skip = 0;
	int rc = 0;
	while (!rc && pos < c->s->size && c->s->size - pos >= AR_HDR) {
		uint8_t h[AR_HDR];
		if ((rc = src_read(c->s, pos, h, sizeof h)) || (rc = ar_header(h, pos, &size, &skip)))
			break;
		if (!in_bounds(pos + AR_HDR, size, c->s->size))
			return ow_err(OW_EPARSE, "archive member at offset %" PRIu64 " (%" PRIu64
				      " bytes) runs past the end — truncated", pos, size);
		rc = ar_member(c, pos + AR_HDR + skip, size - skip);
		pos += AR_HDR + size + (size & 1);
	}
	return rc;
}

/* ---- entry points ------------------------------------------------------- */

/* What the bytes are, from their start: a cubin, a host ELF, an archive, a
 * fatbin, a PE, PTX; anything else is magic-scanned (not in an archive's
 * members: their symbol tables and host objects without ELF). */
static int list_by_content(struct ctx *c, int member)
{
	struct ow_fatbin *fb = c->fb;
	struct ow_fatbin_entry ptx;
	uint8_t h[64] = {0};
	size_t hn = c->s->size < sizeof h ? (size_t)c->s->size : sizeof h;
	int rc = src_read(c->s, 0, h, hn);
	int elf = !rc && hn >= 4 && !memcmp(h, "\x7f" "ELF", 4);
	if (rc || (elf && hn < 64))
		return rc ? rc : ow_err(OW_EPARSE, "ELF header truncated (%zu of 64 bytes)", hn);
	if (elf && ow_fatbin_is_cubin(h, hn)) {
		fb->format = member ? fb->format : OW_FB_FMT_CUBIN;
		return cubin_list(c, h);
	}
	if (elf) {
		fb->format = member ? fb->format : OW_FB_FMT_ELF;
		fb->object = member ? fb->object : ow_le16(h + 0x10) == 1 /* ET_REL */;
		return elf_list(c, h);
	}
	if (hn >= CONTAINER_HDR && ow_le32(h) == OW_FATBIN_MAGIC && fatbin_file(c)) {
		fb->format = member ? fb->format : OW_FB_FMT_FATBIN;
		return walk_section(c, "(fatbin)", 0, c->s->size);
	}
	if (member)
		return 0;
	if (hn >= sizeof AR_MAGIC - 1 && !memcmp(h, AR_MAGIC, sizeof AR_MAGIC - 1)) {
		fb->format = OW_FB_FMT_AR;
		return ar_list(c);
	}
	if (hn >= 64 && h[0] == 'M' && h[1] == 'Z') {
		fb->format = OW_FB_FMT_PE;
		return pe_list(c, ow_le32(h + 0x3C));
	}
	if (ptx_sniff(c, &ptx)) {
		fb->format = OW_FB_FMT_PTX;
		return ptx_list(c, &ptx);
	}
	fb->format = OW_FB_FMT_RAW;
	return scan_range(c, "(scan)", 0, c->s->size);
}

static int list_any(struct src *s, unsigned opts, struct ow_fatbin **out)
{
	*out = NULL;
	struct ow_fatbin *fb = calloc(1, sizeof *fb);
	if (!fb)
		return ow_err(OW_ENOMEM, "fatbin listing: out of memory");
	struct ctx c = {.s = s, .fb = fb, .opts = opts};
	int rc = list_by_content(&c, 0);
	fb->bytes_read = s->bytes_read;
	free(c.peek);
	free(s->win);
	s->win = NULL;
	if (rc) {
		ow_fatbin_free(fb);
		return rc;
	}
	*out = fb;
	return 0;
}

int ow_fatbin_scan_buffer(const void *buf, size_t len, unsigned opts, struct ow_fatbin **out)
{
	if (!out || (!buf && len))
		return ow_err(OW_EINVAL, "ow_fatbin_scan_buffer: NULL argument");
	static const uint8_t empty[1];
	struct src s = {.buf = buf ? buf : empty, .fd = -1, .size = len};
	return list_any(&s, opts, out);
}

int fb_scan_sparse(struct fb_sparse *sp, unsigned opts, struct ow_fatbin **out)
{
	if (!sp || !out)
		return ow_err(OW_EINVAL, "fb_scan_sparse: NULL argument");
	struct src s = {.sp = sp, .fd = -1, .size = sp->size};
	return list_any(&s, opts, out);
}

int ow_fatbin_read_fd(int fd, unsigned opts, struct ow_fatbin **out)
{
	struct stat st;
	if (!out)
		return ow_err(OW_EINVAL, "ow_fatbin_read_fd: NULL argument");
	if (fstat(fd, &st) != 0)
		return ow_err(OW_EIO, "fstat: %s", strerror(errno));
	if (!S_ISREG(st.st_mode))
		return ow_err(OW_EINVAL, "not a regular file");
	struct src s = {.fd = fd, .size = (uint64_t)st.st_size};
	return list_any(&s, opts, out);
}

int ow_fatbin_read_file(const char *path, unsigned opts, struct ow_fatbin **out)
{
	if (!path || !out)
		return ow_err(OW_EINVAL, "ow_fatbin_read_file: NULL argument");
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC); /* a FIFO never blocks */
	if (fd < 0)
		return ow_err(errno == ENOENT ? OW_ENOENT : OW_EIO, "%s: %s", path, strerror(errno));
	int rc = ow_fatbin_read_fd(fd, opts, out);
	close(fd);
	return rc ? ow_err_prefix(rc, "%s: ", path) : 0;
}

void ow_fatbin_free(struct ow_fatbin *fb)
{
	if (!fb)
		return;
	free(fb->modules);
	free(fb->entries);
	free(fb->soname);
	free(fb);
}

/* ---- names and listings ------------------------------------------------- */

int ow_fatbin_entry_name(const struct ow_fatbin_entry *e, char *buf, size_t size)
{
	const char *prefix;
	char other[16];
	switch (e->kind) {
	case OW_FB_SASS: prefix = "sm_"; break;
	case OW_FB_PTX: prefix = "compute_"; break;
	case OW_FB_LTOIR: prefix = "lto_"; break;
	case OW_FB_OLDCUBIN: prefix = "cubin_"; break;
	default:
		snprintf(other, sizeof other, "kind%u_", e->kind);
		prefix = other;
	}
	int n = e->variant ? snprintf(buf, size, "%s%u%c", prefix, e->arch, e->variant)
			   : snprintf(buf, size, "%s%u", prefix, e->arch);
	if (n < 0 || (size_t)n >= size)
		return ow_err(OW_ERANGE, "fatbin entry name: buffer too small");
	return 0;
}

const char *ow_fatbin_compression_name(int compression)
{
	switch (compression) {
	case OW_FB_COMP_NONE: return "none";
	case OW_FB_COMP_LZ4: return "lz4";
	case OW_FB_COMP_ZSTD: return "zstd";
	default: return "unknown";
	}
}

static int kind_rank(uint16_t kind)
{
	switch (kind) {
	case OW_FB_SASS: return 0;
	case OW_FB_PTX: return 1;
	case OW_FB_LTOIR: return 2;
	case OW_FB_OLDCUBIN: return 3;
	default: return 4 + kind;
	}
}

static int cmp_entry(const void *a, const void *b)
{
	const struct ow_fatbin_entry *x = *(const struct ow_fatbin_entry *const *)a;
	const struct ow_fatbin_entry *y = *(const struct ow_fatbin_entry *const *)b;
	int d = kind_rank(x->kind) - kind_rank(y->kind);
	if (!d)
		d = (int)x->arch - (int)y->arch;
	if (!d)
		d = (int)x->variant - (int)y->variant;
	if (!d)
		d = (x->offset > y->offset) - (x->offset < y->offset);
	return d;
}

static int format_entry(const struct ow_fatbin_entry *e, char *buf, size_t size, size_t *at)
{
	char name[32], isa[24] = "", comp[16] = "";
	int rc = ow_fatbin_entry_name(e, name, sizeof name);
	if (rc)
		return rc;
	if (e->kind == OW_FB_PTX)
		snprintf(isa, sizeof isa, "@%u.%u", e->ver_major, e->ver_minor);
	if (e->compression != OW_FB_COMP_NONE)
		snprintf(comp, sizeof comp, ":%s", ow_fatbin_compression_name(e->compression));
	int n = snprintf(buf + *at, size - *at, "%s%s%s%s", *at ? " " : "", name, isa, comp);
	if (n < 0 || (size_t)n >= size - *at)
		return ow_err(OW_ERANGE, "fatbin module listing: buffer too small");
	*at += (size_t)n;
	return 0;
}

int ow_fatbin_module_format(const struct ow_fatbin *fb, const struct ow_fatbin_module *m,
			    char *buf, size_t size)
{
	if (!size)
		return ow_err(OW_ERANGE, "fatbin module listing: empty buffer");
	buf[0] = 0;
	if (m->count == 0) {
		if (size < sizeof "empty")
			return ow_err(OW_ERANGE, "fatbin module listing: buffer too small");
		memcpy(buf, "empty", sizeof "empty");
		return 0;
	}
	const struct ow_fatbin_entry **v = malloc(m->count * sizeof *v);
	if (!v)
		return ow_err(OW_ENOMEM, "fatbin module listing: out of memory");
	for (size_t i = 0; i < m->count; i++)
		v[i] = &fb->entries[m->first + i];
	qsort(v, m->count, sizeof *v, cmp_entry);
	size_t at = 0;
	int rc = 0;
	for (size_t i = 0; i < m->count && !rc; i++)
		rc = format_entry(v[i], buf, size, &at);
	free(v);
	return rc;
}
