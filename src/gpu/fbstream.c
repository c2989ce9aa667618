/* fbstream.c - keep what the listing reads while an input streams past
 * (the rules are in fbstream.h).
 *
 * Bytes arrive in chunks into `lin`, a buffer that holds the stream from
 * lin_off to the current position; it is cut at the front to the oldest
 * byte something still needs: the magic scanner's next position, a
 * tracker's next header, or the start of a container held whole for its
 * kernel decision.  So it holds a few bytes, or one container. */
#include "fbstream.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "bytes.h"
#include "fatbinkern.h"
#include "offwheel/error.h"

#define HEAD_KEEP (64u << 10)    /* the first bytes: ELF/PE headers, PE sections */
#define SHSTR_MARGIN (1u << 20)  /* kept before the ELF section header table */
#define WINDOW_MAX (64ull << 20) /* a bigger container is not held for a decision */
#define PEEK_MAX (64u << 10)     /* fatbin.c reads small uncompressed cubins whole */
#define PEEK_MIN 64u
#define CONTAINER_HDR 16u
#define ENTRY_HDR 64u
#define MAX_KEPT (256ull << 20)  /* kept bytes beyond this: a corrupt input */
#define DYN_KEEP (64u << 10)     /* the dynamic segment kept (for the SONAME), at most */
#define SONAME_KEEP 256u         /* the SONAME's string (fatbin.c's SONAME_MAX) */
#define WANTS (4 + FB_STREAM_WANTS) /* the headers, the section table, the dynamic
                                     * segment, the SONAME, the asked */

enum trk_state { T_ENT, T_PEEK, T_DECIDE, T_AFTER };

/* A container being followed as fatbin.c's walk would follow it. */
struct trk {
	uint64_t off, cend;
	uint64_t next;      /* T_ENT: the next entry header; T_PEEK: the payload */
	uint64_t peek_len;
	uint32_t entries;
	int state;
	int hold;           /* its bytes stay in lin until its decision */
};

struct want { /* a fixed range kept as it passes */
	uint64_t off, len, at;
	int used;
};

struct fb_stream {
	uint64_t size, pos;
	int decide;
	int whole;          /* -1 not known, 0 streaming, 1 not for streaming */
	uint8_t *lin;
	size_t lin_cap, lin_len;
	uint64_t lin_off;
	uint64_t scan;      /* the next 8-aligned offset to look at */
	struct trk *trk;
	size_t n_trk, cap_trk;
	struct want wants[WANTS];
	int n_asked;        /* wants[4 ..]: ranges asked for (fb_stream_want) */
	int dyn;            /* the SONAME: 0 to ask, 1 dynamic segment asked, 2 done */
	/* what is kept, in the order it was found */
	struct fb_piece *pieces;
	size_t n_pieces, cap_pieces;
	uint8_t *bytes;
	uint64_t n_bytes;
	size_t cap_bytes;
	uint64_t *magic;
	size_t n_magic, cap_magic;
	struct fb_decision *dec;
	size_t n_dec, cap_dec;
	int32_t *kernels;
	size_t n_kernels, cap_kernels;
	ow_fatbin_decider *decider;
	uint64_t peak;
	struct fb_sparse sp;
};

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	void *q = ow_array_reserve(*p, cap, need, elem);
	if (!q)
		return ow_err(OW_ENOMEM, "streamed listing: out of memory");
	*p = q;
	return 0;
}

static int keep_bytes(fb_stream *st, uint64_t n, uint64_t *at)
{
	if (st->n_bytes + n > MAX_KEPT)
		return ow_err(OW_ETOOBIG, "streamed listing: more than %llu bytes of headers — corrupt",
			      (unsigned long long)MAX_KEPT);
	int rc = grow((void **)&st->bytes, &st->cap_bytes, (size_t)(st->n_bytes + n), 1);
	if (rc)
		return rc;
	*at = st->n_bytes;
	st->n_bytes += n;
	return 0;
}

/* Keep [off, off+n) from lin (where it must be). */
static int keep(fb_stream *st, uint64_t off, uint64_t n)
{
	uint64_t at = 0;
	int rc = grow((void **)&st->pieces, &st->cap_pieces, st->n_pieces + 1, sizeof *st->pieces);
	if (rc || (rc = keep_bytes(st, n, &at)))
		return rc;
	memcpy(st->bytes + at, st->lin + (off - st->lin_off), (size_t)n);
	st->pieces[st->n_pieces++] = (struct fb_piece){.off = off, .len = n, .at = at};
	return 0;
}

static int have(const fb_stream *st, uint64_t off, uint64_t n)
{
	return off >= st->lin_off && n <= st->pos && off <= st->pos - n;
}

/* ---- the kernel decision of a container held whole ---------------------- */

static int record(fb_stream *st, uint64_t off, struct ow_fatbin *fb, int rc)
{
	const struct ow_fatbin_module *m = &fb->modules[0];
	int e = grow((void **)&st->dec, &st->cap_dec, st->n_dec + 1, sizeof *st->dec);
	if (e || (e = grow((void **)&st->kernels, &st->cap_kernels, st->n_kernels + m->count,
			   sizeof *st->kernels)))
		return e;
	struct fb_decision *d = &st->dec[st->n_dec];
	*d = (struct fb_decision){.off = off, .count = (uint32_t)m->count,
				  .first = (uint32_t)st->n_kernels, .no_kernels = (uint8_t)m->no_kernels,
				  .rc = rc};
	if (rc && !(d->err = strdup(ow_err_detail())))
		return ow_err(OW_ENOMEM, "streamed listing: out of memory");
	for (size_t i = 0; i < m->count; i++)
		st->kernels[st->n_kernels++] = fb->entries[m->first + i].kernels;
	st->n_dec++;
	return 0;
}

/* The container [t->off, t->cend) is in lin: list it alone (a fatbin of one
 * container), its offsets moved to the input's, and decide it. */
static int decide_held(fb_stream *st, const struct trk *t)
{
	const uint8_t *win = st->lin + (t->off - st->lin_off);
	uint64_t len = t->cend - t->off;
	struct ow_fatbin *fb = NULL;
	if (!st->decider && !(st->decider = ow_fatbin_decider_new()))
		return ow_err(OW_ENOMEM, "streamed listing: out of memory");
	int rc = ow_fatbin_scan_buffer(win, (size_t)len, 0, &fb);
	if (rc == OW_ENOMEM)
		return rc;
	if (rc || fb->n_modules != 1 || fb->modules[0].offset != 0 ||
	    fb->modules[0].count != t->entries) {
		/* not a container the listing takes whole (an entry of unknown kind:
		 * then it counts as code and no decision is asked for) */
		ow_err_clear();
		ow_fatbin_free(fb);
		return 0;
	}
	struct ow_fatbin_module *m = &fb->modules[0];
	m->offset += t->off;
	for (size_t i = 0; i < fb->n_entries; i++)
		fb->entries[i].offset += t->off;
	rc = ow_fatbin_decide(st->decider, fb, m, win, t->off, len);
	if (rc == OW_ENOMEM || rc == OW_EIO) {
		ow_fatbin_free(fb);
		return rc;
	}
	rc = record(st, t->off, fb, rc);
	ow_err_clear();
	ow_fatbin_free(fb);
	return rc;
}

/* ---- trackers ----------------------------------------------------------- */

/* A magic at off: its header is in lin.  0 and *t filled when the listing
 * would walk on into its entries; 1 when it stops at the header. */
static int open_container(fb_stream *st, uint64_t off, struct trk *t)
{
	const uint8_t *h = st->lin + (off - st->lin_off);
	uint16_t version = ow_le16(h + 4), hsize = ow_le16(h + 6);
	uint64_t body = ow_le64(h + 8), size = st->size;
	if (version != 1 || hsize < CONTAINER_HDR || hsize > size - off ||
	    body > size - off - hsize)
		return 1;
	*t = (struct trk){.off = off, .cend = off + hsize + body, .next = off + hsize,
			  .state = T_ENT};
	t->hold = st->decide && t->cend - off <= WINDOW_MAX;
	return 0;
}

static uint64_t align8(uint64_t v) { return v > UINT64_MAX - 7 ? UINT64_MAX : (v + 7) & ~(uint64_t)7; }

/* One entry header at t->next (in lin): 0 walk on, 1 the walk stops. */
static int entry(fb_stream *st, struct trk *t)
{
	const uint8_t *h = st->lin + (t->next - st->lin_off);
	uint32_t hs = ow_le32(h + 4);
	uint64_t ps = ow_le64(h + 8), flags = ow_le64(h + 0x28), e = t->next;
	if (hs < ENTRY_HDR || hs > t->cend - e || ps > t->cend - e - hs)
		return 1;
	int plain = !(flags & (OW_FB_FLAG_LZ4 | OW_FB_FLAG_ZSTD)) && ow_le32(h + 0x10) == 0;
	t->entries++;
	t->next = e + hs + ps;
	if (ow_le16(h) == OW_FB_SASS && plain && ps >= PEEK_MIN && ps <= PEEK_MAX) {
		t->state = T_PEEK;
		t->peek_len = ps;
		t->next = e + hs;
	}
	return 0;
}

/* Move t on while its bytes are here: 1 when it is done. */
static int step(fb_stream *st, struct trk *t, int *rc)
{
	for (;;) {
		if (t->state == T_PEEK) {
			if (!have(st, t->next, t->peek_len))
				return 0;
			if ((*rc = keep(st, t->next, t->peek_len)))
				return 1;
			t->next += t->peek_len;
			t->state = T_ENT;
		}
		if (t->state == T_ENT && t->next >= t->cend) {
			t->state = t->hold ? T_DECIDE : T_AFTER;
			t->next = t->hold ? t->cend : align8(t->cend);
		}
		if (t->state == T_ENT) {
			if (t->cend - t->next < ENTRY_HDR)
				return 1; /* a header cut by the container's end: the walk fails */
			if (!have(st, t->next, ENTRY_HDR))
				return 0;
			if ((*rc = keep(st, t->next, ENTRY_HDR)) || entry(st, t))
				return 1;
			continue;
		}
		if (t->state == T_DECIDE) {
			if (!have(st, t->off, t->cend - t->off))
				return 0;
			if ((*rc = decide_held(st, t)))
				return 1;
			t->hold = 0;
			t->state = T_AFTER;
			t->next = align8(t->cend);
		}
		/* T_AFTER: a section walk reads the 16 bytes after a container */
		if (t->next > st->size || st->size - t->next < CONTAINER_HDR)
			return 1;
		if (!have(st, t->next, CONTAINER_HDR))
			return 0;
		*rc = keep(st, t->next, CONTAINER_HDR);
		return 1;
	}
}

static int run_trackers(fb_stream *st)
{
	int rc = 0;
	for (size_t i = 0; i < st->n_trk;) {
		if (step(st, &st->trk[i], &rc)) {
			if (rc)
				return rc;
			st->trk[i] = st->trk[--st->n_trk];
			continue;
		}
		i++;
	}
	return 0;
}

/* The magic at every 8-aligned offset whose 16-byte header is here. */
static int scan(fb_stream *st)
{
	int rc = 0;
	while (!rc && st->scan <= st->pos && st->pos - st->scan >= 4) {
		const uint8_t *p = st->lin + (st->scan - st->lin_off);
		uint64_t avail = st->pos - st->scan, i = 0;
		while (i + 4 <= avail && !(p[i] == 0x50 && ow_le32(p + i) == OW_FATBIN_MAGIC))
			i += 8;
		if (i + 4 > avail) {
			st->scan += i;
			break;
		}
		uint64_t off = st->scan + i;
		if (st->pos - off < CONTAINER_HDR && st->pos < st->size) {
			st->scan = off; /* its header is not all here yet */
			break;
		}
		if ((rc = grow((void **)&st->magic, &st->cap_magic, st->n_magic + 1, sizeof *st->magic)))
			break;
		st->magic[st->n_magic++] = off;
		st->scan = off + 8;
		if (st->pos - off < CONTAINER_HDR)
			continue; /* cut by the end: the listing's read fails at its bounds */
		struct trk t;
		if ((rc = keep(st, off, CONTAINER_HDR)) || open_container(st, off, &t))
			continue;
		if (!(rc = grow((void **)&st->trk, &st->cap_trk, st->n_trk + 1, sizeof *st->trk)))
			st->trk[st->n_trk++] = t;
	}
	return rc;
}

/* ---- the stream --------------------------------------------------------- */

fb_stream *fb_stream_new(uint64_t size, int decide)
{
	fb_stream *st = calloc(1, sizeof *st);
	if (!st)
		return NULL;
	st->size = size;
	st->decide = decide;
	st->whole = -1;
	return st;
}

static int add_want(fb_stream *st, int i, uint64_t off, uint64_t end);

int fb_stream_want(fb_stream *st, uint64_t off, uint64_t len)
{
	if (st->n_asked >= FB_STREAM_WANTS || st->pos || off > st->size || len > st->size - off)
		return ow_err(OW_EINVAL, "fb_stream_want: %" PRIu64 " bytes at %" PRIu64
			      " cannot be asked for", len, off);
	return add_want(st, 4 + st->n_asked++, off, off + len);
}

static int add_want(fb_stream *st, int i, uint64_t off, uint64_t end)
{
	end = end < st->size ? end : st->size;
	if (off >= end)
		return 0;
	struct want *w = &st->wants[i];
	int rc = keep_bytes(st, end - off, &w->at);
	if (rc)
		return rc;
	w->off = off;
	w->len = end - off;
	w->used = 1;
	return 0;
}

/* Copy into the wants what [off, off+n) of data holds. */
static void fill_wants(fb_stream *st, uint64_t off, const uint8_t *data, uint64_t n)
{
	for (int i = 0; i < WANTS; i++) {
		struct want *w = &st->wants[i];
		if (!w->used || off >= w->off + w->len || off + n <= w->off)
			continue;
		uint64_t a = off > w->off ? off : w->off;
		uint64_t b = off + n < w->off + w->len ? off + n : w->off + w->len;
		memcpy(st->bytes + w->at + (a - w->off), data + (a - off), (size_t)(b - a));
	}
}

static int soname_wants(fb_stream *st, uint64_t at0, const uint8_t *data, uint64_t len);

/* The first bytes are here: what the input is, and the ranges to keep. */
static int classify(fb_stream *st)
{
	const uint8_t *h = st->lin;
	int elf = st->lin_len >= 64 && !memcmp(h, "\x7f" "ELF", 4) && !ow_fatbin_is_cubin(h, 64);
	int pe = st->lin_len >= 64 && h[0] == 'M' && h[1] == 'Z';
	st->whole = !(elf || pe);
	if (st->whole)
		return 0;
	int rc = add_want(st, 0, 0, HEAD_KEEP);
	uint64_t shoff = elf ? ow_le64(h + 0x28) : 0;
	if (!rc && shoff) {
		uint64_t n = ow_le16(h + 0x3C) ? ow_le16(h + 0x3C) : 1, tab = n * ow_le16(h + 0x3A);
		uint64_t from = shoff > SHSTR_MARGIN ? shoff - SHSTR_MARGIN : 0;
		rc = add_want(st, 1, from, shoff < st->size - tab ? shoff + tab : st->size);
	}
	st->dyn = elf ? 0 : 2;
	if (!rc)
		fill_wants(st, 0, st->lin, st->lin_len);
	if (!rc && elf) /* lin holds the input from its start */
		rc = soname_wants(st, 0, st->lin, st->lin_len);
	return rc;
}

/* ---- the SONAME (fatbin.c reads it where a stream keeps it) ------------- */

/* The kept bytes of want i, when [off, off+n) of it has passed. */
static const uint8_t *kept(const fb_stream *st, int i, uint64_t off, uint64_t n, uint64_t end)
{
	const struct want *w = &st->wants[i];
	if (!w->used || off < w->off || n > w->len || off - w->off > w->len - n || off + n > end)
		return NULL;
	return st->bytes + w->at + (off - w->off);
}

/* The file offset of virtual address va, by the PT_LOAD program headers. */
static uint64_t va_offset(const fb_stream *st, const uint8_t *ph, uint16_t n, uint16_t es,
			  uint64_t va)
{
	for (uint16_t i = 0; i < n; i++, ph += es) {
		uint64_t off = ow_le64(ph + 0x08), vaddr = ow_le64(ph + 0x10), sz = ow_le64(ph + 0x20);
		if (ow_le32(ph) == 1 /* PT_LOAD */ && va >= vaddr && va - vaddr < sz)
			return off + (va - vaddr) < st->size ? off + (va - vaddr) : UINT64_MAX;
	}
	return UINT64_MAX;
}

/* Once the program headers have passed: keep the dynamic segment; once it
 * has passed: keep the SONAME's string when it is still to come (patchelf
 * moves .dynstr to the end; else it lies in the first 64 KiB, kept). */
static int soname_wants(fb_stream *st, uint64_t at0, const uint8_t *data, uint64_t len)
{
	uint64_t end = at0 + len;
	const uint8_t *h = kept(st, 0, 0, 64, end), *ph;
	uint64_t phoff = h ? ow_le64(h + 0x20) : 0;
	uint16_t es = h ? ow_le16(h + 0x36) : 0, n = h ? ow_le16(h + 0x38) : 0;
	if (!h || es < 56 || !(ph = kept(st, 0, phoff, (uint64_t)n * es, end)))
		return 0; /* not yet (or not an ELF with program headers) */
	int rc = 0, ask = 0;
	for (uint16_t i = 0; st->dyn == 0 && i < n; i++) {
		const uint8_t *p = ph + (uint64_t)i * es;
		uint64_t off = ow_le64(p + 0x08), sz = ow_le64(p + 0x20);
		if (ow_le32(p) == 2 /* PT_DYNAMIC */ && sz <= DYN_KEEP && off >= at0)
			ask = 1, rc = add_want(st, 2, off, off + sz);
	}
	st->dyn = st->dyn == 0 ? (ask ? 1 : 2) : st->dyn;
	if (ask)
		fill_wants(st, at0, data, len);
	const struct want *d = &st->wants[2];
	const uint8_t *dyn = !rc && d->used ? kept(st, 2, d->off, d->len, end) : NULL;
	uint64_t str = UINT64_MAX, name = UINT64_MAX;
	for (uint64_t k = 0; dyn && k + 16 <= d->len && ow_le64(dyn + k); k += 16) {
		str = ow_le64(dyn + k) == 5 /* DT_STRTAB */ ? ow_le64(dyn + k + 8) : str;
		name = ow_le64(dyn + k) == 14 /* DT_SONAME */ ? ow_le64(dyn + k + 8) : name;
	}
	if (st->dyn == 1 && dyn) {
		st->dyn = 2;
		uint64_t at = str == UINT64_MAX || name == UINT64_MAX ? UINT64_MAX
			      : va_offset(st, ph, n, es, str);
		if (at != UINT64_MAX && at + name >= at && at + name >= d->off + d->len &&
		    at + name >= at0)
			ask = 1, rc = add_want(st, 3, at + name, at + name + SONAME_KEEP);
	}
	if (!rc && ask)
		fill_wants(st, at0, data, len); /* what this piece holds of them */
	return rc;
}

/* Cut lin at the front to the oldest byte still needed. */
static void trim(fb_stream *st)
{
	uint64_t from = st->scan < st->pos ? st->scan : st->pos;
	for (size_t i = 0; i < st->n_trk; i++) {
		const struct trk *t = &st->trk[i];
		uint64_t need = t->hold ? t->off : t->next;
		from = need < from ? need : from;
	}
	if (from <= st->lin_off)
		return;
	uint64_t cut = from - st->lin_off;
	memmove(st->lin, st->lin + cut, (size_t)(st->lin_len - cut));
	st->lin_len -= (size_t)cut;
	st->lin_off = from;
}

int fb_stream_feed(fb_stream *st, const void *data, size_t len)
{
	if (len > st->size - st->pos)
		return ow_err(OW_EZIP, "more bytes than the %" PRIu64 " declared", st->size);
	if (st->whole == 1)
		return ow_err(OW_EINVAL, "fb_stream_feed: the input is read whole");
	int rc = 0;
	if (st->whole == 0)
		fill_wants(st, st->pos, data, len);
	if (st->whole == 0 && st->dyn < 2)
		rc = soname_wants(st, st->pos, data, len);
	if (!rc)
		rc = grow((void **)&st->lin, &st->lin_cap, st->lin_len + len, 1);
	if (rc)
		return rc;
	if (len)
		memcpy(st->lin + st->lin_len, data, len);
	st->lin_len += len;
	st->pos += len;
	uint64_t held = st->lin_cap + st->cap_bytes;
	st->peak = held > st->peak ? held : st->peak;
	if (st->whole < 0 && (st->lin_len >= 64 || st->pos == st->size) && (rc = classify(st)))
		return rc;
	if (st->whole != 0)
		return 0;
	if ((rc = scan(st)) || (rc = run_trackers(st)))
		return rc;
	trim(st);
	return 0;
}

int fb_stream_whole(const fb_stream *st)
{
	return st->whole;
}

const uint8_t *fb_stream_head(const fb_stream *st, size_t *len)
{
	*len = st->lin_off == 0 ? st->lin_len : 0;
	return st->lin;
}

uint64_t fb_stream_peak(const fb_stream *st)
{
	return st->peak;
}

static int cmp_piece(const void *a, const void *b)
{
	const struct fb_piece *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off;
}

static int cmp_dec(const void *a, const void *b)
{
	const struct fb_decision *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* Sort the pieces and join those that overlap or touch, into new bytes. */
static int merge_pieces(fb_stream *st)
{
	for (int i = 0; i < WANTS; i++) {
		struct want *w = &st->wants[i];
		if (!w->used)
			continue;
		int rc = grow((void **)&st->pieces, &st->cap_pieces, st->n_pieces + 1,
			      sizeof *st->pieces);
		if (rc)
			return rc;
		st->pieces[st->n_pieces++] = (struct fb_piece){.off = w->off, .len = w->len, .at = w->at};
	}
	if (st->n_pieces > 1)
		qsort(st->pieces, st->n_pieces, sizeof *st->pieces, cmp_piece);
	uint8_t *out = malloc(st->n_bytes ? (size_t)st->n_bytes : 1);
	if (!out)
		return ow_err(OW_ENOMEM, "streamed listing: out of memory");
	size_t n = 0;
	uint64_t used = 0;
	for (size_t i = 0; i < st->n_pieces; i++) {
		struct fb_piece p = st->pieces[i];
		struct fb_piece *last = n ? &st->pieces[n - 1] : NULL;
		uint64_t end = p.off + p.len;
		if (last && p.off <= last->off + last->len) {
			if (end > last->off + last->len) {
				uint64_t skip = last->off + last->len - p.off;
				memcpy(out + used, st->bytes + p.at + skip, (size_t)(p.len - skip));
				used += p.len - skip;
				last->len = end - last->off;
			}
			continue;
		}
		memcpy(out + used, st->bytes + p.at, (size_t)p.len);
		st->pieces[n++] = (struct fb_piece){.off = p.off, .len = p.len, .at = used};
		used += p.len;
	}
	free(st->bytes);
	st->bytes = out;
	st->n_pieces = n;
	return 0;
}

int fb_stream_finish(fb_stream *st, struct fb_sparse **out)
{
	*out = NULL;
	if (st->pos != st->size)
		return ow_err(OW_EZIP, "%" PRIu64 " bytes of the %" PRIu64 " declared", st->pos, st->size);
	if (st->whole != 0)
		return ow_err(OW_EINVAL, "fb_stream_finish: the input is read whole");
	int rc = merge_pieces(st);
	if (rc)
		return rc;
	if (st->n_dec > 1)
		qsort(st->dec, st->n_dec, sizeof *st->dec, cmp_dec);
	free(st->lin);
	st->lin = NULL;
	st->lin_cap = st->lin_len = 0;
	st->sp = (struct fb_sparse){.size = st->size, .pieces = st->pieces, .n_pieces = st->n_pieces,
				    .bytes = st->bytes, .magic = st->magic, .n_magic = st->n_magic,
				    .dec = st->dec, .n_dec = st->n_dec, .kernels = st->kernels,
				    .decided = st->decide};
	*out = &st->sp;
	return 0;
}

int fb_sparse_decision(void *ud, struct ow_fatbin *fb, struct ow_fatbin_module *m)
{
	struct fb_sparse *sp = ud;
	size_t lo = 0, hi = sp->n_dec;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sp->dec[mid].off < m->offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct fb_decision *d = lo < sp->n_dec ? &sp->dec[lo] : NULL;
	if (!d || d->off != m->offset || d->count != m->count) {
		sp->missed = 1;
		return ow_err(OW_EUNSUPPORTED, "no kernel decision kept for the container at offset %"
			      PRIu64, m->offset);
	}
	if (d->rc)
		return ow_err(d->rc, "%s", d->err ? d->err : "kernel count failed");
	for (size_t i = 0; i < m->count; i++)
		fb->entries[m->first + i].kernels = sp->kernels[d->first + i];
	m->no_kernels = d->no_kernels;
	return 0;
}

void fb_stream_free(fb_stream *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->n_dec; i++)
		free(st->dec[i].err);
	free(st->dec);
	free(st->kernels);
	free(st->lin);
	free(st->trk);
	free(st->pieces);
	free(st->bytes);
	free(st->magic);
	ow_fatbin_decider_free(st->decider);
	free(st);
}
