/* zipcheck.c - structural ZIP validation before libarchive sees the bytes.
 * APPNOTE 6.3: end record (4.3.16), ZIP64 locator/record (4.3.14-15),
 * central directory (4.3.12), local header (4.3.7), data descriptor (4.3.9),
 * ZIP64 extra field (4.5.3).  Every byte before the central directory must
 * belong to exactly one listed member; everything else is rejected. */
#include "zipcheck.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bytes.h"
#include "offwheel/error.h"

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_EOCD 0x06054b50u
#define SIG_Z64_EOCD 0x06064b50u
#define SIG_Z64_LOC 0x07064b50u
#define SIG_DESC 0x08074b50u
#define EOCD_LEN 22
#define CD_LEN 46
#define LOCAL_LEN 30
#define Z64_LOC_LEN 20
#define Z64_EOCD_LEN 56
#define MAX_COMMENT 65535
#define X_ZIP64 0x0001
#define X_UNICODE_PATH 0x7075
#define FLAG_ENCRYPTED 0x0001
#define FLAG_DESCRIPTOR 0x0008
#define FLAG_STRONG_ENC 0x0040
#define FLAGS_ALLOWED 0x080e /* deflate level bits, descriptor, UTF-8 */
#define NAME_MAX_LEN 4096
#define SEG_MAX_LEN 255
#define U16MAX 0xffffu
#define U32MAX 0xffffffffu
#define TAIL "the file is not a valid wheel"

struct zctx {
	int fd;
	const char *label;
	const struct ow_zip_limits *lim;
	uint64_t size;
	struct ow_zip *z;
	uint8_t *hbuf; /* local header name + extra, 2 * 65535 */
};

/* What the extra fields of one header carry. */
struct extra {
	const uint8_t *z64;
	size_t z64_len;
	int unicode_path;
};

void ow_zip_limits_default(struct ow_zip_limits *lim)
{
	lim->max_entries = 200000;
	lim->max_total_size = 16ull << 30;
	lim->max_entry_size = 8ull << 30;
	lim->max_ratio = 1000;
	lim->ratio_min_size = 1u << 20;
	lim->max_cd_size = 64u << 20;
}

static const char *lbl(const struct zctx *c)
{
	return c->label ? c->label : "archive";
}

static int zfail(const struct zctx *c, const char *fmt, ...) OW_PRINTF(2, 3);
static int zfail(const struct zctx *c, const char *fmt, ...)
{
	char why[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	return ow_err(OW_EZIP, "%s: %s — " TAIL, lbl(c), why);
}

static int mfail(const struct zctx *c, const char *name, size_t len, const char *fmt, ...)
    OW_PRINTF(4, 5);
static int mfail(const struct zctx *c, const char *name, size_t len, const char *fmt, ...)
{
	char why[1024], shown[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	ow_zip_name_show(name, len, shown, sizeof shown);
	return ow_err(OW_EZIP, "%s: member '%s': %s — " TAIL, lbl(c), shown, why);
}

void ow_zip_name_show(const char *name, size_t len, char *out, size_t outsz)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;
	for (size_t i = 0; i < len && o + 8 < outsz; i++) {
		unsigned char ch = (unsigned char)name[i];
		if (ch >= 0x20 && ch < 0x7f && ch != '\\' && ch != '\'') {
			out[o++] = (char)ch;
			continue;
		}
		out[o++] = '\\';
		out[o++] = 'x';
		out[o++] = hex[ch >> 4];
		out[o++] = hex[ch & 15];
	}
	if (o + 8 >= outsz && outsz >= 4) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	if (outsz)
		out[o < outsz ? o : outsz - 1] = '\0';
}

static int read_at(const struct zctx *c, void *buf, size_t len, uint64_t off)
{
	size_t got = 0;
	if (off > c->size || len > c->size - off)
		return zfail(c, "a record at offset %llu runs past the end of the file",
		             (unsigned long long)off);
	while (got < len) {
		ssize_t r = pread(c->fd, (char *)buf + got, len - got, (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return ow_err(OW_EIO, "%s: read failed at offset %llu: %s", lbl(c),
			              (unsigned long long)(off + got),
			              r < 0 ? strerror(errno) : "short read");
		got += (size_t)r;
	}
	return 0;
}

/* ---- names --------------------------------------------------------------- */

static size_t utf8_seq_len(const unsigned char *s, size_t left)
{
	unsigned char b = s[0];
	size_t n = b >= 0xf0 && b <= 0xf4 ? 4 : b >= 0xe0 ? 3 : b >= 0xc2 && b < 0xe0 ? 2 : 0;
	if (b >= 0xf5 || n == 0 || n > left)
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((b == 0xe0 && s[1] < 0xa0) || (b == 0xed && s[1] > 0x9f) ||
	    (b == 0xf0 && s[1] < 0x90) || (b == 0xf4 && s[1] > 0x8f))
		return 0;
	return n;
}

static const char *bad_byte(const char *name, size_t len)
{
	const unsigned char *s = (const unsigned char *)name;
	for (size_t i = 0; i < len;) {
		if (s[i] == 0)
			return "NUL byte in a member name";
		if (s[i] < 0x20 || s[i] == 0x7f)
			return "control character in a member name";
		if (s[i] == '\\')
			return "backslash in a member name";
		if (s[i] == ':')
			return "':' in a member name (drive letter or stream name)";
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		size_t n = utf8_seq_len(s + i, len - i);
		if (!n)
			return "member name is not valid UTF-8";
		i += n;
	}
	return NULL;
}

static const char *bad_segment(const char *seg, size_t n)
{
	if (n == 0)
		return "empty path segment in a member name";
	if (n == 1 && seg[0] == '.')
		return "'.' segment in a member name";
	if (n == 2 && seg[0] == '.' && seg[1] == '.')
		return "'..' in a member name";
	if (n > SEG_MAX_LEN)
		return "member name has a path segment over 255 bytes";
	return NULL;
}

static const char *bad_segments(const char *name, size_t len)
{
	size_t start = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && name[i] != '/')
			continue;
		const char *why = bad_segment(name + start, i - start);
		if (why)
			return why;
		start = i + 1;
	}
	return NULL;
}

int ow_zip_name_check(const char *name, size_t len, int allow_dir, const char **why)
{
	const char *w = NULL;
	if (len == 0)
		w = "empty member name";
	else if (len > NAME_MAX_LEN)
		w = "member name longer than 4096 bytes";
	else if (name[0] == '/')
		w = "absolute member name";
	else if (len >= 2 && name[1] == ':')
		w = "drive letter in a member name";
	if (!w)
		w = bad_byte(name, len);
	if (!w && allow_dir && len > 1 && name[len - 1] == '/')
		len--;
	if (!w)
		w = bad_segments(name, len);
	if (why)
		*why = w;
	return w ? OW_EZIP : 0;
}

/* ---- end record ---------------------------------------------------------- */

static const char *const sigs_in_comment[] = {"PK\1\2", "PK\3\4", "PK\5\6", "PK\6\6", "PK\6\7"};

static int check_comment(const struct zctx *c, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < sizeof sigs_in_comment / sizeof sigs_in_comment[0]; i++)
		if (memmem(p, n, sigs_in_comment[i], 4))
			return zfail(c, "the archive comment contains zip record signatures");
	return 0;
}

static int find_eocd(struct zctx *c, uint8_t *buf, size_t tail, uint64_t *eocd_off)
{
	uint64_t base = c->size - tail;
	int rc = read_at(c, buf, tail, base);
	if (rc)
		return rc;
	for (size_t pos = tail - EOCD_LEN + 1; pos-- > 0;) {
		if (ow_le32(buf + pos) != SIG_EOCD)
			continue;
		size_t end = pos + EOCD_LEN + ow_le16(buf + pos + 20);
		if (end < tail)
			return zfail(c,
			             "%zu bytes of data after the end-of-central-directory record",
			             tail - end);
		if (end > tail)
			return zfail(
			    c,
			    "the end record's comment runs past the end of the file (truncated?)");
		*eocd_off = base + pos;
		return check_comment(c, buf + pos + EOCD_LEN, end - pos - EOCD_LEN);
	}
	return zfail(c, "no end-of-central-directory record (not a zip file, or truncated)");
}

struct eocd {
	uint64_t off, n_entries, cd_off, cd_size, cd_limit;
};

static int read_z64_record(struct zctx *c, uint64_t loc_off, struct eocd *e)
{
	uint8_t loc[Z64_LOC_LEN], r[Z64_EOCD_LEN];
	int rc = read_at(c, loc, sizeof loc, loc_off);
	if (rc)
		return rc;
	uint64_t roff = ow_le64(loc + 8);
	if (ow_le32(loc + 4) != 0 || ow_le32(loc + 16) > 1)
		return zfail(c, "multi-disk archives are not supported");
	if (roff > loc_off || loc_off - roff < Z64_EOCD_LEN)
		return zfail(c, "the ZIP64 locator points outside the file");
	if ((rc = read_at(c, r, sizeof r, roff)))
		return rc;
	if (ow_le32(r) != SIG_Z64_EOCD)
		return zfail(c, "no ZIP64 end record where the locator points");
	if (ow_le64(r + 4) != loc_off - roff - 12)
		return zfail(c, "data between the ZIP64 end record and its locator");
	if (ow_le32(r + 16) != 0 || ow_le32(r + 20) != 0 || ow_le64(r + 24) != ow_le64(r + 32))
		return zfail(c, "multi-disk archives are not supported");
	e->n_entries = ow_le64(r + 32);
	e->cd_size = ow_le64(r + 40);
	e->cd_off = ow_le64(r + 48);
	e->cd_limit = roff;
	c->z->zip64 = 1;
	return 0;
}

/* A 16/32-bit field of the classic end record must be the sentinel or agree
 * with the ZIP64 record. */
static int agrees(uint64_t classic, uint64_t sentinel, uint64_t z64)
{
	return classic == sentinel || classic == z64;
}

static int parse_eocd(struct zctx *c, const uint8_t *p, struct eocd *e)
{
	uint64_t n_disk = ow_le16(p + 8), n = ow_le16(p + 10), size = ow_le32(p + 12), off = ow_le32(p + 16);
	uint8_t sig[4];
	e->n_entries = n, e->cd_size = size, e->cd_off = off, e->cd_limit = e->off;
	if (e->off >= Z64_LOC_LEN && read_at(c, sig, 4, e->off - Z64_LOC_LEN) == 0 &&
	    ow_le32(sig) == SIG_Z64_LOC) {
		int rc = read_z64_record(c, e->off - Z64_LOC_LEN, e);
		if (rc)
			return rc;
		if (!agrees(n, U16MAX, e->n_entries) || !agrees(n_disk, U16MAX, e->n_entries) ||
		    !agrees(size, U32MAX, e->cd_size) || !agrees(off, U32MAX, e->cd_off))
			return zfail(c, "the end record and the ZIP64 end record disagree");
		return 0;
	}
	if (ow_le16(p + 4) != 0 || ow_le16(p + 6) != 0 || n_disk != n)
		return zfail(c, "multi-disk archives are not supported");
	return 0;
}

static int locate_cd(struct zctx *c, struct eocd *e)
{
	size_t tail = c->size < EOCD_LEN + MAX_COMMENT ? (size_t)c->size : EOCD_LEN + MAX_COMMENT;
	uint8_t *buf = malloc(tail ? tail : 1);
	if (!buf)
		return ow_err(OW_ENOMEM, "%s: out of memory reading the end record", lbl(c));
	int rc = find_eocd(c, buf, tail, &e->off);
	if (!rc)
		rc = parse_eocd(c, buf + (e->off - (c->size - tail)), e);
	free(buf);
	return rc;
}

static int check_cd_bounds(struct zctx *c, const struct eocd *e)
{
	const struct ow_zip_limits *l = c->lim;
	if (e->cd_off > e->cd_limit || e->cd_size != e->cd_limit - e->cd_off)
		return zfail(c, "the central directory does not end where the end record begins "
		                "(data hidden between them, or a corrupt end record)");
	if (e->n_entries == 0)
		return zfail(c, "the archive has no members");
	if (e->n_entries > l->max_entries)
		return zfail(c, "%llu members, over the cap of %llu",
		             (unsigned long long)e->n_entries, (unsigned long long)l->max_entries);
	if (e->cd_size > l->max_cd_size)
		return zfail(c, "central directory of %llu bytes, over the cap of %llu",
		             (unsigned long long)e->cd_size, (unsigned long long)l->max_cd_size);
	if (e->cd_size / CD_LEN < e->n_entries)
		return zfail(c, "the central directory is too small for %llu members",
		             (unsigned long long)e->n_entries);
	return 0;
}

/* ---- extra fields -------------------------------------------------------- */

static int walk_extra(const uint8_t *p, size_t len, struct extra *x)
{
	memset(x, 0, sizeof *x);
	while (len > 0) {
		if (len < 4 || (size_t)ow_le16(p + 2) > len - 4)
			return -1;
		uint16_t id = ow_le16(p), n = ow_le16(p + 2);
		if (id == X_ZIP64 && !x->z64) {
			x->z64 = p + 4;
			x->z64_len = n;
		} else if (id == X_ZIP64) {
			return -1;
		}
		if (id == X_UNICODE_PATH)
			x->unicode_path = 1;
		p += 4 + n;
		len -= 4 + (size_t)n;
	}
	return 0;
}

/* Take the next 8-byte ZIP64 value for a field that holds the sentinel. */
static int z64_take(const struct extra *x, size_t *used, uint64_t *v)
{
	if (!x->z64 || x->z64_len < *used + 8)
		return -1;
	*v = ow_le64(x->z64 + *used);
	*used += 8;
	return 0;
}

/* ---- central directory --------------------------------------------------- */

static int cd_entry_sizes(const struct zctx *c, struct ow_zip_entry *en, const struct extra *x,
                          uint16_t disk)
{
	size_t used = 0;
	uint64_t d = disk;
	if (en->usize == U32MAX && z64_take(x, &used, &en->usize))
		goto bad;
	if (en->csize == U32MAX && z64_take(x, &used, &en->csize))
		goto bad;
	if (en->local_off == U32MAX && z64_take(x, &used, &en->local_off))
		goto bad;
	if (disk == U16MAX && x->z64_len >= used + 4) {
		d = ow_le32(x->z64 + used);
		used += 4;
	}
	if (d != 0)
		return mfail(c, en->name, en->name_len,
		             "member on another disk (multi-disk archive)");
	return 0;
bad:
	return mfail(c, en->name, en->name_len,
	             "0xFFFFFFFF size or offset without a matching ZIP64 extra field");
}

static int check_kind(const struct zctx *c, const struct ow_zip_entry *en, uint16_t made_by,
                      uint32_t attr)
{
	unsigned type = (attr >> 16) & 0170000u;
	if (made_by >> 8 != 3)
		return 0; /* attributes mean something else on other hosts */
	if (type == 0120000u)
		return mfail(c, en->name, en->name_len, "symbolic link in a wheel");
	if (type != 0 && type != 0100000u && type != 040000u)
		return mfail(c, en->name, en->name_len,
		             "device or special file in a wheel (mode %06o)", type);
	if (type == 040000u && !en->is_dir)
		return mfail(c, en->name, en->name_len, "directory attributes on a file name");
	return 0;
}

static int check_method(const struct zctx *c, const struct ow_zip_entry *en)
{
	if (en->flags & (FLAG_ENCRYPTED | FLAG_STRONG_ENC))
		return mfail(c, en->name, en->name_len, "encrypted member");
	if (en->flags & ~FLAGS_ALLOWED)
		return mfail(c, en->name, en->name_len, "unexpected general-purpose flags 0x%04x",
		             en->flags);
	if (en->method != 0 && en->method != 8)
		return mfail(c, en->name, en->name_len,
		             "compression method %u (only stored and deflate are allowed)",
		             en->method);
	if (en->method == 0 && en->csize != en->usize)
		return mfail(c, en->name, en->name_len,
		             "stored member whose compressed and uncompressed sizes differ");
	if (en->is_dir && en->usize != 0)
		return mfail(c, en->name, en->name_len, "directory entry with data");
	return 0;
}

static int check_sizes(struct zctx *c, const struct ow_zip_entry *en)
{
	const struct ow_zip_limits *l = c->lim;
	if (en->usize > l->max_entry_size)
		return mfail(c, en->name, en->name_len,
		             "%llu bytes uncompressed, over the cap of %llu",
		             (unsigned long long)en->usize, (unsigned long long)l->max_entry_size);
	if (en->usize > l->ratio_min_size &&
	    (en->csize == 0 || en->usize / en->csize > l->max_ratio))
		return mfail(c, en->name, en->name_len,
		             "compression ratio over %llu:1 (%llu bytes from %llu; a zip bomb?)",
		             (unsigned long long)l->max_ratio, (unsigned long long)en->usize,
		             (unsigned long long)en->csize);
	if (__builtin_add_overflow(c->z->total_usize, en->usize, &c->z->total_usize) ||
	    c->z->total_usize > l->max_total_size)
		return zfail(c, "more than %llu bytes uncompressed in total, over the cap",
		             (unsigned long long)l->max_total_size);
	return 0;
}

static int check_entry(struct zctx *c, struct ow_zip_entry *en, const struct extra *x,
                       uint16_t made_by, uint32_t attr)
{
	const char *why = NULL;
	if (ow_zip_name_check(en->name, en->name_len, 1, &why))
		return mfail(c, en->name, en->name_len, "%s", why);
	if (x->unicode_path)
		return mfail(c, en->name, en->name_len,
		             "Unicode-path extra field (0x7075) could rename the member");
	int rc = check_kind(c, en, made_by, attr);
	if (!rc)
		rc = check_method(c, en);
	if (!rc)
		rc = check_sizes(c, en);
	return rc;
}

static int parse_cd_entry(struct zctx *c, const uint8_t *p, size_t left, size_t *used,
                          struct ow_zip_entry *en)
{
	if (left < CD_LEN || ow_le32(p) != SIG_CENTRAL)
		return zfail(c, "malformed central directory");
	size_t nlen = ow_le16(p + 28), xlen = ow_le16(p + 30), clen = ow_le16(p + 32);
	if (left - CD_LEN < nlen + xlen + clen)
		return zfail(c, "a central directory entry runs past the directory");
	struct extra x;
	en->name = malloc(nlen + 1);
	if (!en->name)
		return ow_err(OW_ENOMEM, "%s: out of memory", lbl(c));
	memcpy(en->name, p + CD_LEN, nlen);
	en->name[nlen] = '\0';
	en->name_len = nlen;
	en->flags = ow_le16(p + 8), en->method = ow_le16(p + 10), en->crc = ow_le32(p + 16);
	en->csize = ow_le32(p + 20), en->usize = ow_le32(p + 24), en->local_off = ow_le32(p + 42);
	en->is_dir = nlen > 0 && p[CD_LEN + nlen - 1] == '/';
	*used = CD_LEN + nlen + xlen + clen;
	if (walk_extra(p + CD_LEN + nlen, xlen, &x))
		return mfail(c, en->name, nlen, "malformed extra field in the central directory");
	int rc = cd_entry_sizes(c, en, &x, ow_le16(p + 34));
	return rc ? rc : check_entry(c, en, &x, ow_le16(p + 4), ow_le32(p + 38));
}

static int read_cd(struct zctx *c, const struct eocd *e)
{
	struct ow_zip *z = c->z;
	uint8_t *cd = malloc(e->cd_size);
	z->e = calloc(e->n_entries, sizeof *z->e);
	if (!cd || !z->e) {
		free(cd);
		return ow_err(OW_ENOMEM, "%s: out of memory for the central directory", lbl(c));
	}
	int rc = read_at(c, cd, e->cd_size, e->cd_off);
	size_t pos = 0;
	for (; !rc && z->n < e->n_entries; z->n++) {
		size_t used = 0;
		rc = parse_cd_entry(c, cd + pos, e->cd_size - pos, &used, &z->e[z->n]);
		pos += used;
	}
	if (!rc && pos != e->cd_size)
		rc = zfail(c, "%llu bytes of the central directory belong to no listed member",
		           (unsigned long long)(e->cd_size - pos));
	free(cd);
	return rc;
}

/* ---- duplicates ---------------------------------------------------------- */

static unsigned char fold(unsigned char ch)
{
	return ch >= 'A' && ch <= 'Z' ? ch + 32 : ch;
}

static uint64_t fold_hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ fold((unsigned char)s[i])) * 1099511628211ull;
	return h;
}

static int fold_eq(const char *a, size_t an, const char *b, size_t bn)
{
	if (an != bn)
		return 0;
	for (size_t i = 0; i < an; i++)
		if (fold((unsigned char)a[i]) != fold((unsigned char)b[i]))
			return 0;
	return 1;
}

struct nameset {
	size_t *slot; /* entry index + 1, 0 empty */
	size_t mask;
	const struct ow_zip *z;
};

static size_t key_len(const struct ow_zip_entry *en)
{
	return en->name_len - (en->is_dir ? 1 : 0);
}

/* Index of the entry whose folded key equals (s, n), or SIZE_MAX; with
 * `insert` the slot is taken when free. */
static size_t set_find(struct nameset *s, const char *k, size_t n, size_t insert)
{
	for (size_t i = fold_hash(k, n) & s->mask;; i = (i + 1) & s->mask) {
		if (!s->slot[i]) {
			if (insert != SIZE_MAX)
				s->slot[i] = insert + 1;
			return SIZE_MAX;
		}
		const struct ow_zip_entry *o = &s->z->e[s->slot[i] - 1];
		if (fold_eq(o->name, key_len(o), k, n))
			return s->slot[i] - 1;
	}
}

static int dup_fail(const struct zctx *c, const struct ow_zip_entry *a,
                    const struct ow_zip_entry *b)
{
	char shown[600];
	ow_zip_name_show(b->name, b->name_len, shown, sizeof shown);
	if (a->name_len == b->name_len && memcmp(a->name, b->name, a->name_len) == 0)
		return mfail(c, a->name, a->name_len, "duplicate member name");
	return mfail(c, a->name, a->name_len,
	             "duplicate of '%s' when case is ignored (a case-insensitive file system "
	             "would merge them)",
	             shown);
}

/* A member path whose parent is a file of the archive. */
static int check_parents(const struct zctx *c, struct nameset *s, const struct ow_zip_entry *en)
{
	for (size_t i = 1; i < en->name_len; i++) {
		if (en->name[i] != '/')
			continue;
		size_t j = set_find(s, en->name, i, SIZE_MAX);
		if (j != SIZE_MAX && !c->z->e[j].is_dir)
			return mfail(c, en->name, en->name_len,
			             "its parent is a file of the archive");
	}
	return 0;
}

static int check_duplicates(struct zctx *c)
{
	struct ow_zip *z = c->z;
	struct nameset s = {.z = z};
	size_t cap = 16;
	while (cap < z->n * 2)
		cap <<= 1;
	s.slot = calloc(cap, sizeof *s.slot);
	s.mask = cap - 1;
	if (!s.slot)
		return ow_err(OW_ENOMEM, "%s: out of memory", lbl(c));
	int rc = 0;
	for (size_t i = 0; !rc && i < z->n; i++) {
		size_t j = set_find(&s, z->e[i].name, key_len(&z->e[i]), i);
		if (j != SIZE_MAX)
			rc = dup_fail(c, &z->e[i], &z->e[j]);
	}
	for (size_t i = 0; !rc && i < z->n; i++)
		rc = check_parents(c, &s, &z->e[i]);
	free(s.slot);
	return rc;
}

/* ---- local headers and layout -------------------------------------------- */

static int by_offset(const void *a, const void *b)
{
	const struct ow_zip_entry *x = a, *y = b;
	return x->local_off < y->local_off ? -1 : x->local_off > y->local_off;
}

struct local {
	uint16_t flags, method;
	uint32_t crc;
	uint64_t csize, usize;
	int z64;
};

static int local_sizes(const struct zctx *c, const struct ow_zip_entry *en, struct local *l,
                       const struct extra *x)
{
	size_t used = 0;
	l->z64 = x->z64 != NULL;
	if (l->usize != U32MAX && l->csize != U32MAX)
		return 0;
	/* In a local header the ZIP64 field holds both sizes, uncompressed first. */
	if (z64_take(x, &used, &l->usize) || z64_take(x, &used, &l->csize))
		return mfail(c, en->name, en->name_len,
		             "local header has 0xFFFFFFFF sizes without a ZIP64 extra field");
	return 0;
}

static int compare_local(const struct zctx *c, const struct ow_zip_entry *en, const struct local *l)
{
	if (l->method != en->method)
		return mfail(c, en->name, en->name_len,
		             "compression method differs between local header (%u) and central "
		             "directory (%u)",
		             l->method, en->method);
	if (l->flags != en->flags)
		return mfail(c, en->name, en->name_len,
		             "flags differ between local header and central directory");
	if (en->flags & FLAG_DESCRIPTOR) {
		if ((l->crc && l->crc != en->crc) || (l->csize && l->csize != en->csize) ||
		    (l->usize && l->usize != en->usize))
			return mfail(
			    c, en->name, en->name_len,
			    "CRC or size differs between local header and central directory");
		return 0;
	}
	if (l->crc != en->crc)
		return mfail(c, en->name, en->name_len,
		             "CRC differs between local header and central directory");
	if (l->csize != en->csize || l->usize != en->usize)
		return mfail(c, en->name, en->name_len,
		             "size differs between local header and central directory");
	return 0;
}

static int read_local(struct zctx *c, struct ow_zip_entry *en, struct local *l)
{
	uint8_t h[LOCAL_LEN];
	int rc = read_at(c, h, sizeof h, en->local_off);
	if (rc)
		return rc;
	if (ow_le32(h) != SIG_LOCAL)
		return mfail(c, en->name, en->name_len,
		             "no local header where the central directory points");
	size_t nlen = ow_le16(h + 26), xlen = ow_le16(h + 28);
	l->flags = ow_le16(h + 6), l->method = ow_le16(h + 8), l->crc = ow_le32(h + 14);
	l->csize = ow_le32(h + 18), l->usize = ow_le32(h + 22);
	if ((rc = read_at(c, c->hbuf, nlen + xlen, en->local_off + LOCAL_LEN)))
		return rc;
	if (nlen != en->name_len || memcmp(c->hbuf, en->name, nlen) != 0)
		return mfail(c, en->name, en->name_len,
		             "name differs between local header and central directory");
	struct extra x;
	if (walk_extra(c->hbuf + nlen, xlen, &x))
		return mfail(c, en->name, en->name_len,
		             "malformed extra field in the local header");
	if (x.unicode_path)
		return mfail(c, en->name, en->name_len,
		             "Unicode-path extra field (0x7075) in the local header");
	en->data_off = en->local_off + LOCAL_LEN + nlen + xlen;
	return local_sizes(c, en, l, &x);
}

/* Length of the data descriptor after the data of `en` whose values agree
 * with the central directory, or 0 when none does. */
static size_t match_descriptor(const struct ow_zip_entry *en, const uint8_t *d, size_t avail,
                               int z64)
{
	static const size_t widths[2][2] = {{4, 8}, {8, 4}};
	for (int w = 0; w < 2; w++) {
		size_t sw = widths[z64][w];
		for (int sig = 1; sig >= 0; sig--) {
			size_t len = (size_t)(sig * 4) + 4 + 2 * sw;
			const uint8_t *p = d + sig * 4;
			if (len > avail || (sig && ow_le32(d) != SIG_DESC))
				continue;
			uint64_t cs = sw == 8 ? ow_le64(p + 4) : ow_le32(p + 4);
			uint64_t us = sw == 8 ? ow_le64(p + 4 + sw) : ow_le32(p + 4 + sw);
			if (ow_le32(p) == en->crc && cs == en->csize && us == en->usize)
				return len;
		}
	}
	return 0;
}

static int read_descriptor(struct zctx *c, struct ow_zip_entry *en, const struct local *l,
                           uint64_t data_end)
{
	uint8_t d[24];
	uint64_t room = c->z->cd_off - data_end;
	size_t avail = room < sizeof d ? (size_t)room : sizeof d;
	int rc = read_at(c, d, avail, data_end);
	if (rc)
		return rc;
	size_t len = match_descriptor(en, d, avail, l->z64);
	if (!len)
		return mfail(c, en->name, en->name_len,
		             "data descriptor missing or disagrees with the central directory");
	en->end_off = data_end + len;
	return 0;
}

static int check_gap(const struct zctx *c, size_t i, uint64_t prev_end)
{
	const struct ow_zip *z = c->z;
	const struct ow_zip_entry *en = &z->e[i];
	if (en->local_off < prev_end)
		return mfail(c, en->name, en->name_len, "overlaps the previous member%s%s%s",
		             i ? " '" : "", i ? z->e[i - 1].name : "", i ? "'" : "");
	if (en->local_off == prev_end)
		return 0;
	if (i == 0)
		return zfail(c, "%llu bytes before the first member",
		             (unsigned long long)en->local_off);
	return mfail(
	    c, en->name, en->name_len,
	    "%llu bytes before it are not listed in the central directory (a hidden entry?)",
	    (unsigned long long)(en->local_off - prev_end));
}

static int check_member_layout(struct zctx *c, size_t i, uint64_t prev_end)
{
	struct ow_zip_entry *en = &c->z->e[i];
	struct local l = {0};
	int rc = check_gap(c, i, prev_end);
	if (!rc && !ow_span_within(en->local_off, LOCAL_LEN, c->z->cd_off))
		rc = mfail(c, en->name, en->name_len,
		           "its local header lies past the member area (offset %llu)",
		           (unsigned long long)en->local_off);
	if (!rc)
		rc = read_local(c, en, &l);
	if (!rc)
		rc = compare_local(c, en, &l);
	if (rc)
		return rc;
	if (en->data_off > c->z->cd_off || en->csize > c->z->cd_off - en->data_off)
		return mfail(c, en->name, en->name_len,
		             "member data runs into the central directory");
	en->end_off = en->data_off + en->csize;
	if (en->flags & FLAG_DESCRIPTOR)
		return read_descriptor(c, en, &l, en->end_off);
	return 0;
}

static int check_layout(struct zctx *c)
{
	struct ow_zip *z = c->z;
	uint64_t end = 0;
	qsort(z->e, z->n, sizeof *z->e, by_offset);
	for (size_t i = 1; i < z->n; i++)
		if (z->e[i].local_off == z->e[i - 1].local_off)
			return mfail(c, z->e[i].name, z->e[i].name_len,
			             "overlaps member '%s' (both use one local header)",
			             z->e[i - 1].name);
	c->hbuf = malloc(2 * (size_t)U16MAX);
	if (!c->hbuf)
		return ow_err(OW_ENOMEM, "%s: out of memory", lbl(c));
	for (size_t i = 0; i < z->n; i++) {
		int rc = check_member_layout(c, i, end);
		if (rc)
			return rc;
		end = z->e[i].end_off;
	}
	if (end != z->cd_off)
		return zfail(c,
		             "%llu bytes between the last member and the central directory are not "
		             "listed in it (a hidden entry?)",
		             (unsigned long long)(z->cd_off - end));
	return 0;
}

/* ---- entry point --------------------------------------------------------- */

static int check_all(struct zctx *c)
{
	struct eocd e = {0};
	struct stat st;
	if (fstat(c->fd, &st) != 0)
		return ow_err(OW_EIO, "%s: cannot stat: %s", lbl(c), strerror(errno));
	if (!S_ISREG(st.st_mode))
		return ow_err(OW_EINVAL, "%s: not a regular file", lbl(c));
	c->size = c->z->file_size = (uint64_t)st.st_size;
	if (c->size < EOCD_LEN)
		return zfail(c, "too small to be a zip file");
	int rc = locate_cd(c, &e);
	if (!rc)
		rc = check_cd_bounds(c, &e);
	if (rc)
		return rc;
	c->z->cd_off = e.cd_off;
	c->z->cd_size = e.cd_size;
	rc = read_cd(c, &e);
	if (!rc)
		rc = check_duplicates(c);
	if (!rc)
		rc = check_layout(c);
	return rc;
}

int ow_zip_check_fd(int fd, const char *label, const struct ow_zip_limits *lim, struct ow_zip **out)
{
	struct ow_zip_limits def;
	if (!lim) {
		ow_zip_limits_default(&def);
		lim = &def;
	}
	*out = NULL;
	struct zctx c = {.fd = fd, .label = label, .lim = lim};
	c.z = calloc(1, sizeof *c.z);
	if (!c.z)
		return ow_err(OW_ENOMEM, "out of memory");
	int rc = check_all(&c);
	free(c.hbuf);
	if (rc) {
		ow_zip_free(c.z);
		return rc;
	}
	*out = c.z;
	return 0;
}

void ow_zip_free(struct ow_zip *z)
{
	if (!z)
		return;
	for (size_t i = 0; i < z->n; i++)
		free(z->e[i].name);
	free(z->e);
	free(z);
}
