/* fatbinkern.c - kernel-less modules found by decompressing as little as
 * possible (the order of the checks is in fatbinkern.h). */
#include "fatbinkern.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array.h"
#include "decompress.h"
#include "bytes.h"
#include "offwheel/error.h"
#include "offwheel/gpucompat.h"
#include "pool.h"

#define PREFIX_OUT 2048u          /* decompressed bytes looked at first */
#define PREFIX_IN 8192u           /* compressed bytes read for them */
#define FULL_MAX (512ull << 20)   /* a payload bigger than this is not opened: code */
#define ELF_HDR 64u
#define ZSTD_BLOCK_MAX (128u << 10) /* zstd's largest block */

/* Cubins already looked into during one call, by their compressed bytes:
 * NVIDIA's libraries hold the same cubin many times over (libcublasLt:
 * 1,194 compressed cubins to look into at 12.0, 140 distinct), and
 * comparing stored bytes is far cheaper than decompressing them again.
 * A hit needs equal method, sizes, a hash of the first bytes and then every
 * stored byte equal: never a guess. */
#define MEMO_HEAD 4096u
struct memo_ent {
	uint64_t head, at, stored, full;
	int compression, quick;
	int32_t kernels;
};
struct memo {
	pthread_mutex_t mu;
	struct memo_ent *v;
	size_t n, cap;
};

typedef int (*oracle_fn)(void *ud, struct ow_fatbin *fb, struct ow_fatbin_module *m);

struct rd {
	const uint8_t *buf; /* the input in memory, or NULL: pread fd */
	uint64_t base;      /* the input offset buf[0] stands at */
	uint64_t len;       /* bytes at buf */
	int fd;
	uint64_t *bytes;
	uint8_t *in, *out; /* scratch: bytes read, bytes decompressed */
	size_t in_cap, out_cap;
	uint8_t *cmp;      /* scratch: a remembered cubin's bytes, to compare */
	size_t cmp_cap;
	ow_decomp *dec; /* made on first use */
	struct memo *memo;     /* shared by the threads of one call, or NULL */
	oracle_fn oracle;      /* decisions made earlier (fbstream.h), or NULL */
	void *oracle_ud;
};

static int grow(uint8_t **p, size_t *cap, uint64_t need)
{
	if (need <= *cap)
		return 0;
	if (need > SIZE_MAX)
		return ow_err(OW_ETOOBIG, "fatbin payload of %" PRIu64 " bytes", need);
	free(*p);
	*cap = 0;
	if (!(*p = malloc((size_t)need ? (size_t)need : 1)))
		return ow_err(OW_ENOMEM, "fatbin payload: out of memory for %" PRIu64 " bytes", need);
	*cap = (size_t)need;
	return 0;
}

static void rd_free(struct rd *r)
{
	free(r->in);
	free(r->out);
	free(r->cmp);
	ow_decomp_free(r->dec);
}

/* n bytes at off of the input, in memory or read into r->in. */
static int get(struct rd *r, uint64_t off, uint64_t n, const uint8_t **p)
{
	if (off < r->base || off - r->base > r->len || n > r->len - (off - r->base))
		return ow_err(OW_EPARSE, "fatbin payload at offset %" PRIu64 " runs past the input",
			      off);
	if (r->buf) {
		*p = r->buf + (off - r->base);
		return 0;
	}
	int rc = grow(&r->in, &r->in_cap, n);
	for (uint64_t done = 0; !rc && done < n;) {
		ssize_t k = pread(r->fd, r->in + done, (size_t)(n - done), (off_t)(off + done));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return ow_err(OW_EIO, "read at offset %" PRIu64 ": %s", off + done,
				      k < 0 ? strerror(errno) : "file shrank while reading");
		done += (uint64_t)k;
	}
	if (!rc && r->bytes)
		*r->bytes += n;
	*p = r->in;
	return rc;
}

static uint64_t hash_bytes(const uint8_t *p, uint64_t n)
{
	uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
	uint64_t i = 0;
	for (; i + 8 <= n; i += 8) {
		h ^= ow_le64(p + i);
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	for (; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/* n stored bytes at `a` and at `b` equal? (both read when from a file) */
static int same_bytes(struct rd *r, uint64_t a, uint64_t b, uint64_t n)
{
	const uint8_t *pa, *pb;
	if (r->buf)
		return !get(r, a, n, &pa) && !get(r, b, n, &pb) && !memcmp(pa, pb, (size_t)n);
	if (get(r, b, n, &pb) || grow(&r->cmp, &r->cmp_cap, n)) /* b into r->in */
		return 0;
	for (uint64_t done = 0; done < n;) {
		ssize_t k = pread(r->fd, r->cmp + done, (size_t)(n - done), (off_t)(a + done));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return 0;
		done += (uint64_t)k;
	}
	if (r->bytes)
		*r->bytes += n;
	return !memcmp(r->cmp, pb, (size_t)n);
}

/* A remembered result for the cubin stored at `at` (stored bytes, whole
 * size full): 1 with *kernels set, 0 none.  *head gets the key to remember
 * it by. */
static int memo_find(struct rd *r, const struct ow_fatbin_entry *e, uint64_t at, uint64_t stored,
		     int quick, uint64_t *head, int32_t *kernels)
{
	const uint8_t *p;
	uint64_t hn = stored < MEMO_HEAD ? stored : MEMO_HEAD;
	if (!r->memo || get(r, at, hn, &p))
		return 0;
	*head = hash_bytes(p, hn);
	struct memo_ent c[8];
	size_t nc = 0;
	pthread_mutex_lock(&r->memo->mu);
	for (size_t i = 0; i < r->memo->n && nc < 8; i++) {
		const struct memo_ent *m = &r->memo->v[i];
		if (m->head == *head && m->stored == stored && m->full == e->uncompressed_size &&
		    m->compression == e->compression && m->quick == quick)
			c[nc++] = *m;
	}
	pthread_mutex_unlock(&r->memo->mu);
	for (size_t i = 0; i < nc; i++)
		if (c[i].at != at && same_bytes(r, c[i].at, at, stored)) {
			*kernels = c[i].kernels;
			return 1;
		}
	return 0;
}

static void memo_add(struct rd *r, const struct ow_fatbin_entry *e, uint64_t at, uint64_t stored,
		     int quick, uint64_t head, int32_t kernels)
{
	if (!r->memo)
		return;
	pthread_mutex_lock(&r->memo->mu);
	struct memo *m = r->memo;
	struct memo_ent *v = ow_array_reserve(m->v, &m->cap, m->n + 1 < 256 ? 256 : m->n + 1,
					      sizeof *v);
	if (v) /* out of memory: this one is not remembered, which costs time only */
		m->v = v;
	if (m->n < m->cap)
		m->v[m->n++] = (struct memo_ent){head, at, stored, e->uncompressed_size,
						 e->compression, quick, kernels};
	pthread_mutex_unlock(&m->mu);
}

/* Reads for ow_zstd_prefix: bytes of one entry's stored stream. */
struct frame_rd {
	struct rd *r;
	uint64_t at;
};

static int frame_read(void *ud, unsigned long long off, size_t n, const unsigned char **p)
{
	struct frame_rd *f = ud;
	return get(f->r, f->at + off, n, p);
}

static int method(const struct ow_fatbin_entry *e)
{
	return e->compression == OW_FB_COMP_LZ4 ? OW_DECOMP_LZ4
	     : e->compression == OW_FB_COMP_ZSTD ? OW_DECOMP_ZSTD : 0;
}

/* The stored stream of e: its compressed length when the header gives one. */
static uint64_t stream_size(const struct ow_fatbin_entry *e)
{
	if (e->compression != OW_FB_COMP_NONE && e->compressed_size &&
	    e->compressed_size <= e->payload_size)
		return e->compressed_size;
	return e->payload_size;
}

/* What payload() gives beside a negative error. */
enum payload_got {
	PAYLOAD_READ = 0, /* the bytes are in *p, *n of them */
	PAYLOAD_SEALED,   /* an unknown compression or size: it cannot be opened,
	                   * and the caller counts it as code */
};

/* The first `want` bytes of e's payload, decompressed (want 0: all of it).
 * *n gets how many came out. */
static int payload(struct rd *r, const struct ow_fatbin_entry *e, uint64_t want,
		   const uint8_t **p, uint64_t *n)
{
	uint64_t at = e->offset + e->header_size, stored = stream_size(e);
	int rc;
	if (e->compression == OW_FB_COMP_NONE) {
		*n = want && want < stored ? want : stored;
		return get(r, at, *n, p);
	}
	if (e->compression == OW_FB_COMP_UNKNOWN || !e->uncompressed_size ||
	    e->uncompressed_size > FULL_MAX)
		return PAYLOAD_SEALED;
	uint64_t full = e->uncompressed_size, out = want && want < full ? want : full;
	const uint8_t *src = NULL;
	size_t got = 0;
	if ((rc = grow(&r->out, &r->out_cap, out)))
		return rc;
	if (!r->dec && !(r->dec = ow_decomp_new()))
		return ow_err(OW_ENOMEM, "fatbin payload: out of memory for a decoder");
	if (e->compression == OW_FB_COMP_ZSTD && out < full) {
		struct frame_rd fr = {r, at};
		if ((rc = ow_zstd_prefix(r->dec, frame_read, &fr, stored, r->out, (size_t)out, &got)))
			return ow_err_prefix(rc, "fatbin entry at offset %" PRIu64 ": ", e->offset);
		*p = r->out;
		*n = got;
		return PAYLOAD_READ;
	}
	/* A prefix is decoded from a prefix of the stream, grown until it gives
	 * the bytes asked for (a zstd block decodes only once it is whole). */
	for (uint64_t in = out < full ? PREFIX_IN : stored;; in *= 8) {
		in = in < stored ? in : stored;
		if ((rc = get(r, at, in, &src)))
			return rc;
		const struct ow_decomp_job job = {method(e), src, (size_t)in, r->out, (size_t)full,
						  (size_t)out};
		rc = ow_decompress_with(r->dec, &job, &got);
		if ((!rc && got == out) || in == stored)
			break;
	}
	if (rc)
		return ow_err_prefix(rc, "fatbin entry at offset %" PRIu64 ": ", e->offset);
	*p = r->out;
	*n = got;
	return PAYLOAD_READ;
}


/* A ".text." name in the section name table nvcc writes at 0x40, right
 * after the ELF header, when the section headers are at the end: 1 yes,
 * 0 or -1 not seen (then the whole cubin is read). */
static int prefix_has_text(const uint8_t *p, uint64_t n)
{
	static const char text[] = ".text.";
	if (n < ELF_HDR + 2 || p[ELF_HDR] != 0)
		return -1;
	uint64_t i = ELF_HDR + 1;
	while (i < n) {
		uint64_t s = i;
		while (i < n && p[i] > ' ' && p[i] <= '~')
			i++;
		if (i == n || p[i] != 0 || i == s || p[s] != '.')
			return -1;
		if (i - s >= sizeof text - 1 && !memcmp(p + s, text, sizeof text - 1))
			return 1;
		i++;
	}
	return -1;
}

/* What the first n bytes of a cubin say: its kernels (>= 0; 1 may mean "at
 * least one"), or -1 with *need = the prefix that would tell (the section
 * headers and their name table, when both lie early: nvcc puts the headers
 * either right after the ELF header or at the end), 0 = the whole cubin. */
static int32_t probe(const uint8_t *p, uint64_t n, uint64_t *need)
{
	*need = 0;
	if (n < ELF_HDR || memcmp(p, "\x7f" "ELF", 4))
		return -1;
	uint64_t shoff = ow_le64(p + 0x28);
	uint16_t entsize = ow_le16(p + 0x3A), shnum = ow_le16(p + 0x3C), strndx = ow_le16(p + 0x3E);
	if (entsize < 64 || strndx >= shnum || shoff > UINT64_MAX / 2)
		return -1;
	uint64_t tab_end = shoff + (uint64_t)shnum * entsize;
	if (tab_end <= n) {
		const uint8_t *sh = p + shoff + (uint64_t)strndx * entsize;
		uint64_t str_end = ow_le64(sh + 0x18) + ow_le64(sh + 0x20);
		if (str_end <= n)
			return ow_fatbin_cubin_kernels(p, n);
		*need = str_end;
		return -1;
	}
	if (prefix_has_text(p, n) == 1)
		return 1;
	*need = tab_end;
	return -1;
}

/* Kernels of one SASS entry: from a prefix only when `quick`, else from as
 * much of the cubin as it takes.  Leaves e->kernels -1 when nothing can be
 * said. */
static int sass_kernels_once(struct rd *r, struct ow_fatbin_entry *e, int quick);

static int sass_kernels(struct rd *r, struct ow_fatbin_entry *e, int quick)
{
	uint64_t at = e->offset + e->header_size, stored = stream_size(e), head = 0;
	int32_t k;
	if (e->compression == OW_FB_COMP_NONE)
		return sass_kernels_once(r, e, quick);
	if (memo_find(r, e, at, stored, quick, &head, &k)) {
		e->kernels = k;
		return 0;
	}
	int rc = sass_kernels_once(r, e, quick);
	if (!rc && head)
		memo_add(r, e, at, stored, quick, head, e->kernels);
	return rc;
}

static int sass_kernels_once(struct rd *r, struct ow_fatbin_entry *e, int quick)
{
	const uint8_t *p;
	uint64_t n, need = PREFIX_OUT;
	/* zstd decodes a whole block (up to 128 KiB) to give any of it: take it
	 * all, so that one decode settles the cubin as often as it can */
	if (e->compression == OW_FB_COMP_ZSTD)
		need = ZSTD_BLOCK_MAX;
	for (int round = 0; round < 3; round++) {
		int rc = payload(r, e, need, &p, &n);
		if (rc != PAYLOAD_READ)
			return rc == PAYLOAD_SEALED ? 0 : rc;
		int32_t k = probe(p, n, &need);
		if (k >= 0 || quick || need <= n) {
			e->kernels = k >= 0 || quick ? k : ow_fatbin_cubin_kernels(p, n);
			return 0;
		}
	}
	return 0;
}

int32_t ow_fatbin_ptx_kernels(const char *ptx, uint64_t n)
{
	static const char entry[] = ".entry";
	int32_t k = 0;
	const char *p = ptx, *end = ptx + n;
	while (p && (uint64_t)(end - p) >= sizeof entry - 1 &&
	       (p = memmem(p, (size_t)(end - p), entry, sizeof entry - 1))) {
		const char *after = p + sizeof entry - 1;
		int starts = p == ptx || p[-1] == ' ' || p[-1] == '\t' || p[-1] == '\n';
		int ends = after == end || *after == ' ' || *after == '\t' || *after == '\n';
		if (starts && ends && k < INT32_MAX)
			k++;
		p = after;
	}
	return k;
}

static int ptx_kernels(struct rd *r, struct ow_fatbin_entry *e)
{
	const uint8_t *p;
	uint64_t n;
	int rc = payload(r, e, 0, &p, &n);
	if (rc != PAYLOAD_READ)
		return rc == PAYLOAD_SEALED ? 0 : rc;
	e->kernels = ow_fatbin_ptx_kernels((const char *)p, n);
	return 0;
}

enum { UNDECIDED = 0, CODE = 1 };

/* CODE when some entry is known to hold a kernel or cannot be looked into. */
static int known_code(const struct ow_fatbin *fb, const struct ow_fatbin_module *m)
{
	for (size_t i = 0; i < m->count; i++) {
		const struct ow_fatbin_entry *e = &fb->entries[m->first + i];
		if (e->kernels > 0 || (e->kind != OW_FB_SASS && e->kind != OW_FB_PTX))
			return CODE;
	}
	return UNDECIDED;
}

/* One pass over the module's entries of `kind`: quick (prefix) or whole. */
static int pass(struct rd *r, struct ow_fatbin *fb, const struct ow_fatbin_module *m,
		int kind, int quick, int *code)
{
	for (size_t i = 0; i < m->count && !*code; i++) {
		struct ow_fatbin_entry *e = &fb->entries[m->first + i];
		if (e->kind != kind || e->kernels >= 0)
			continue;
		int rc = kind == OW_FB_SASS ? sass_kernels(r, e, quick) : ptx_kernels(r, e);
		if (rc)
			return rc;
		*code = e->kernels > 0 || (!quick && e->kernels < 0);
	}
	return 0;
}

static int decide(struct rd *r, struct ow_fatbin *fb, struct ow_fatbin_module *m)
{
	if (m->relocatable || m->count == 0 || m->no_kernels)
		return 0;
	int code = known_code(fb, m), rc = 0;
	if (!code && r->oracle)
		return r->oracle(r->oracle_ud, fb, m);
	if (!code)
		rc = pass(r, fb, m, OW_FB_SASS, 1, &code);
	if (!rc && !code)
		rc = pass(r, fb, m, OW_FB_SASS, 0, &code);
	if (!rc && !code)
		rc = pass(r, fb, m, OW_FB_PTX, 0, &code);
	if (!rc && !code)
		m->no_kernels = 1;
	return rc;
}

/* Does module m run on cc from SASS built for it?  Only those may stay
 * unopened: a module that needs JIT, or has no image, counts in the verdict
 * (none / partial / jit and the driver it needs) only if it has a kernel. */
static int verdict_is(const struct ow_fatbin *fb, const struct ow_fatbin_module *m,
		      const struct ow_kern_ask *ask, int verdict)
{
	struct ow_gpu_module_verdict v;
	return !ow_gpu_module_verdict(fb, m, ask->cc, ask->driver, &v) && v.verdict == verdict;
}

/* Of the native modules, one with a kernel is enough: it makes the library
 * carry code that runs here (native or partial, not none or no-code).  They
 * are opened in order until one is found; the rest stay unchecked.  Nearly
 * always the first one settles it. */
static int one_native_with_code(struct ow_fatbin *fb, const struct rd *tmpl, int part,
				int *found_out)
{
	struct rd r = *tmpl;
	int rc = 0, found = 0;
	for (size_t i = 0; !rc && !found && i < fb->n_modules; i++) {
		struct ow_fatbin_module *m = &fb->modules[i];
		if (!m->unchecked || (part >= 0 && (m->scanned != 0) != part))
			continue;
		m->unchecked = 0;
		rc = decide(&r, fb, m);
		found = !m->no_kernels;
	}
	rd_free(&r);
	if (found_out)
		*found_out = found;
	return rc;
}

/* ask->any_native (an NVIDIA library, whose partial counts as native): in a
 * part (fatbin sections, data sections) where a native module has a
 * kernel, a module without an image changes no verdict — it stays
 * unopened, unchecked, counted as code.  Modules to JIT are still opened
 * (the driver they need is part of the verdict). */
static int skip_no_image(struct ow_fatbin *fb, const struct rd *tmpl,
			 const struct ow_kern_ask *ask, size_t *todo, size_t *ntodo)
{
	int found[2] = {0, 0}, rc = 0;
	for (int part = 0; part < 2 && !rc; part++)
		rc = one_native_with_code(fb, tmpl, part, &found[part]);
	size_t n = 0;
	for (size_t i = 0; !rc && i < *ntodo; i++) {
		struct ow_fatbin_module *m = &fb->modules[todo[i]];
		if (found[m->scanned != 0] && verdict_is(fb, m, ask, OW_GPU_NONE))
			m->unchecked = 1;
		else
			todo[n++] = todo[i];
	}
	if (!rc)
		*ntodo = n;
	return rc;
}

/* The driver a module to JIT needs, as a rank (PTX newer than the table:
 * above every known driver); -1 when it is not a module to JIT. */
static int jit_rank(const struct ow_fatbin *fb, const struct ow_fatbin_module *m,
		    const struct ow_kern_ask *ask)
{
	struct ow_gpu_module_verdict v;
	if (ow_gpu_module_verdict(fb, m, ask->cc, ask->driver, &v) || v.verdict != OW_GPU_JIT)
		return -1;
	return v.driver_needed ? v.driver_needed : INT_MAX;
}

/* The highest rank among the part's modules to JIT still in todo that have
 * not been found kernel-less; -1 when none. */
static int top_jit_rank(const struct ow_fatbin *fb, const struct ow_kern_ask *ask,
			const size_t *todo, size_t ntodo, int part)
{
	int top = -1;
	for (size_t i = 0; i < ntodo; i++) {
		const struct ow_fatbin_module *m = &fb->modules[todo[i]];
		int rk = (m->scanned != 0) == part && !m->no_kernels ? jit_rank(fb, m, ask) : -1;
		top = rk > top ? rk : top;
	}
	return top;
}

/* In one part, the modules of the highest rank opened in turn until one has
 * a kernel: its rank (-1 when none of any rank has one). */
static int jit_with_code(struct ow_fatbin *fb, struct rd *r, const struct ow_kern_ask *ask,
			 const size_t *todo, size_t ntodo, int part, int *rank)
{
	int rc = 0;
	*rank = -1;
	for (int top; !rc && *rank < 0 && (top = top_jit_rank(fb, ask, todo, ntodo, part)) >= 0;)
		for (size_t i = 0; !rc && *rank < 0 && i < ntodo; i++) {
			struct ow_fatbin_module *m = &fb->modules[todo[i]];
			if ((m->scanned != 0) != part || m->no_kernels || jit_rank(fb, m, ask) != top)
				continue;
			rc = decide(r, fb, m);
			*rank = !rc && !m->no_kernels ? top : -1;
		}
	return rc;
}

/* Modules to JIT count in a verdict by two things only: that some module to
 * JIT has a kernel (jit rather than native) and the newest driver such a
 * module needs.  So in each part the modules needing the newest driver are
 * opened until one has a kernel; every module to JIT that needs no newer
 * driver changes no verdict then: it stays unopened, unchecked, counted as
 * code (libcufft: 8,132 modules to JIT on 12.0, one opened). */
static int skip_jit(struct ow_fatbin *fb, const struct rd *tmpl, const struct ow_kern_ask *ask,
		    size_t *todo, size_t *ntodo)
{
	struct rd r = *tmpl;
	int rank[2] = {-1, -1}, rc = 0;
	for (int part = 0; part < 2 && !rc; part++)
		rc = jit_with_code(fb, &r, ask, todo, *ntodo, part, &rank[part]);
	rd_free(&r);
	size_t n = 0;
	for (size_t i = 0; !rc && i < *ntodo; i++) {
		struct ow_fatbin_module *m = &fb->modules[todo[i]];
		int rk = m->no_kernels ? -1 : jit_rank(fb, m, ask);
		if (rk >= 0 && rk <= rank[m->scanned != 0] && known_code(fb, m) == UNDECIDED)
			m->unchecked = 1;
		else if (!m->no_kernels && known_code(fb, m) == UNDECIDED)
			todo[n++] = todo[i];
	}
	if (!rc)
		*ntodo = n;
	return rc;
}

/* The modules to look into, split in chunks: one decoder and scratch per
 * chunk, chunks on threads (a library has thousands of small payloads). */
struct chunks {
	struct rd tmpl; /* input, memo and oracle of every chunk's reader */
	struct ow_fatbin *fb;
	size_t *todo, ntodo, nchunks;
	uint64_t *bytes; /* per chunk */
	int *rc;
	char **err;
};

static int chunk_worker(void *ud, size_t c)
{
	struct chunks *k = ud;
	struct rd r = k->tmpl;
	r.bytes = &k->bytes[c];
	size_t lo = k->ntodo * c / k->nchunks, hi = k->ntodo * (c + 1) / k->nchunks;
	int rc = 0;
	for (size_t i = lo; !rc && i < hi; i++)
		rc = decide(&r, k->fb, &k->fb->modules[k->todo[i]]);
	rd_free(&r);
	if (rc && !(k->err[c] = strdup(ow_err_detail())))
		rc = OW_ENOMEM;
	k->rc[c] = rc;
	return rc != 0;
}

static int run_chunks(struct chunks *k, uint64_t *bytes_read)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t jobs = cpus > 1 ? (size_t)cpus : 1;
	jobs = jobs > 16 ? 16 : jobs;
	/* a chunk is worth a thread from about 32 modules */
	k->nchunks = k->ntodo / 32 < jobs * 4 ? k->ntodo / 32 : jobs * 4;
	k->nchunks = k->nchunks && !k->tmpl.oracle ? k->nchunks : 1; /* lookups: one */
	k->bytes = calloc(k->nchunks, sizeof *k->bytes);
	k->rc = calloc(k->nchunks, sizeof *k->rc);
	k->err = calloc(k->nchunks, sizeof *k->err);
	int rc = 0;
	if (!k->bytes || !k->rc || !k->err)
		rc = ow_err(OW_ENOMEM, "fatbin: out of memory");
	else
		ow_parallel_for(k->nchunks, (int)jobs, chunk_worker, k);
	for (size_t c = 0; !rc && k->rc && c < k->nchunks; c++) {
		if (k->rc[c])
			rc = ow_err(k->rc[c], "%s", k->err[c] ? k->err[c] : "out of memory");
		if (bytes_read)
			*bytes_read += k->bytes[c];
	}
	for (size_t c = 0; k->err && c < k->nchunks; c++)
		free(k->err[c]);
	free(k->bytes);
	free(k->rc);
	free(k->err);
	return rc;
}

static int count_with(struct ow_fatbin *fb, const struct rd *tmpl, const struct ow_kern_ask *ask,
		      uint64_t *bytes_read)
{
	int cc = ask ? ask->cc : 0;
	struct memo memo = {.n = 0};
	struct chunks k = {.tmpl = *tmpl, .fb = fb};
	k.tmpl.memo = tmpl->oracle ? NULL : &memo;
	if (fb->n_modules && !(k.todo = malloc(fb->n_modules * sizeof *k.todo)))
		return ow_err(OW_ENOMEM, "fatbin: out of memory");
	pthread_mutex_init(&memo.mu, NULL);
	for (size_t i = 0; i < fb->n_modules; i++) {
		struct ow_fatbin_module *m = &fb->modules[i];
		m->unchecked = 0;
		if (m->relocatable || m->count == 0 || m->no_kernels || known_code(fb, m))
			continue;
		if (cc > 0 && verdict_is(fb, m, ask, OW_GPU_NATIVE))
			m->unchecked = 1;
		else
			k.todo[k.ntodo++] = i;
	}
	struct rd one = k.tmpl;
	one.bytes = bytes_read;
	int rc = cc > 0 && ask->any_native ? skip_no_image(fb, &one, ask, k.todo, &k.ntodo) : 0;
	if (!rc && cc > 0)
		rc = skip_jit(fb, &one, ask, k.todo, &k.ntodo);
	if (!rc && k.ntodo)
		rc = run_chunks(&k, bytes_read);
	free(k.todo);
	if (!rc && cc > 0 && !ask->any_native)
		rc = one_native_with_code(fb, &one, -1, NULL);
	free(memo.v);
	pthread_mutex_destroy(&memo.mu);
	return rc;
}

int ow_fatbin_count_kernels(struct ow_fatbin *fb, const void *buf, uint64_t len, int fd,
			    const struct ow_kern_ask *ask, uint64_t *bytes_read)
{
	if (!fb || (!buf && fd < 0))
		return ow_err(OW_EINVAL, "ow_fatbin_count_kernels: no input");
	struct rd tmpl = {.buf = buf, .len = len, .fd = fd};
	return count_with(fb, &tmpl, ask, bytes_read);
}

int ow_fatbin_count_kernels_oracle(struct ow_fatbin *fb, const struct ow_kern_ask *ask,
				   int (*oracle)(void *ud, struct ow_fatbin *fb,
						 struct ow_fatbin_module *m),
				   void *ud)
{
	if (!fb || !oracle)
		return ow_err(OW_EINVAL, "ow_fatbin_count_kernels_oracle: no input");
	struct rd tmpl = {.fd = -1, .oracle = oracle, .oracle_ud = ud};
	return count_with(fb, &tmpl, ask, NULL);
}

struct ow_fatbin_decider {
	struct rd r;
};

ow_fatbin_decider *ow_fatbin_decider_new(void)
{
	ow_fatbin_decider *d = calloc(1, sizeof *d);
	if (d)
		d->r.fd = -1;
	return d;
}

void ow_fatbin_decider_free(ow_fatbin_decider *d)
{
	if (!d)
		return;
	rd_free(&d->r);
	free(d);
}

int ow_fatbin_decide(ow_fatbin_decider *d, struct ow_fatbin *fb, struct ow_fatbin_module *m,
		     const void *buf, uint64_t base, uint64_t len)
{
	d->r.buf = buf;
	d->r.base = base;
	d->r.len = len;
	int rc = decide(&d->r, fb, m);
	d->r.buf = NULL;
	return rc;
}
