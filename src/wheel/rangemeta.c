/* rangemeta.c - a wheel's METADATA from byte ranges of it (rangemeta.h). */
#include "rangemeta.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "array.h"
#include "bytes.h"
#include "fsutil.h"
#include "offwheel/error.h"
#include "offwheel/fetch.h"
#include "wheel.h"

#define SIG_EOCD 0x06054b50u
#define SIG_Z64_LOC 0x07064b50u
#define SIG_Z64_EOCD 0x06064b50u
#define SIG_CD 0x02014b50u
#define SIG_LOCAL 0x04034b50u
#define CD_MAX ((uint64_t)64 << 20)
#define LOCAL_SLACK 1024u /* a local extra field longer than the central one */

static int bad(const struct ow_rangemeta *rm, const char *what)
{
	return ow_err(OW_EZIP, "%s: %s — not a valid wheel (its METADATA cannot be read by ranges)",
	              rm->filename, what);
}

static void want(struct ow_rangemeta *rm, enum ow_rangemeta_stage st, uint64_t off, uint64_t len)
{
	rm->stage = st;
	rm->want_off = off;
	if (off >= rm->size)
		rm->want_len = 0;
	else
		rm->want_len = ow_span_within(off, len, rm->size) ? len : rm->size - off;
}

/* "Foo.Bar" ~ "foo_bar": names compare after PEP 503 normalisation with '_'. */
static void norm(const char *s, size_t n, char *out, size_t outn)
{
	size_t o = 0;
	for (size_t i = 0; i < n && o + 1 < outn; i++) {
		char c = s[i];
		if (c == '-' || c == '.' || c == '_') {
			if (o && out[o - 1] == '_')
				continue;
			c = '_';
		}
		out[o++] = (char)tolower((unsigned char)c);
	}
	out[o] = '\0';
}

int ow_rangemeta_init(struct ow_rangemeta *rm, const char *filename, uint64_t size)
{
	return ow_rangemeta_init_tail(rm, filename, size, OW_RANGEMETA_TAIL);
}

int ow_rangemeta_init_tail(struct ow_rangemeta *rm, const char *filename, uint64_t size,
                           uint64_t tail_max)
{
	char name[200], version[96];
	memset(rm, 0, sizeof *rm);
	snprintf(rm->filename, sizeof rm->filename, "%s", filename);
	int rc = ow_wheel_filename_name_version(filename, name, sizeof name, version, sizeof version);
	if (rc)
		return rc;
	char nn[200];
	norm(name, strlen(name), nn, sizeof nn);
	if ((size_t)snprintf(rm->distinfo, sizeof rm->distinfo, "%.150s-%.90s.dist-info/METADATA",
	                     nn, version) >= sizeof rm->distinfo)
		return ow_err(OW_EINVAL, "%s: name too long", filename);
	rm->size = size;
	if (size < 22)
		return bad(rm, "shorter than a ZIP end record");
	uint64_t tail = size < tail_max ? size : tail_max < 22 ? 22 : tail_max;
	want(rm, OW_RM_TAIL, size - tail, tail);
	return 0;
}

/* Is `name` (n bytes) the wheel's own dist-info METADATA? */
static int is_metadata(const struct ow_rangemeta *rm, const char *name, size_t n)
{
	const char *dash = memchr(name, '-', n);
	static const char suffix[] = ".dist-info/METADATA";
	size_t sl = sizeof suffix - 1;
	if (!dash || n <= sl || memcmp(name + n - sl, suffix, sl) || memchr(name, '/', n - sl))
		return 0;
	char got[400], nn[200];
	norm(name, (size_t)(dash - name), nn, sizeof nn);
	int vl = (int)(n - sl - (size_t)(dash - name) - 1);
	if (vl > 150)
		return 0;
	snprintf(got, sizeof got, "%s-%.*s", nn, vl, dash + 1);
	size_t gl = strlen(got);
	return !strncasecmp(got, rm->distinfo, gl) && !strcmp(rm->distinfo + gl, suffix);
}

/* ZIP64 extra field (id 1): the 64-bit values of the fields that read as
 * 0xFFFFFFFF, in the order usize, csize, local offset. */
static int zip64_extra(struct ow_rangemeta *rm, const uint8_t *ex, size_t n)
{
	for (size_t i = 0; i + 4 <= n;) {
		uint16_t id = ow_le16(ex + i), len = ow_le16(ex + i + 2);
		if (i + 4 + len > n)
			return bad(rm, "an extra field runs past its entry");
		if (id == 1) {
			const uint8_t *p = ex + i + 4, *end = p + len;
			uint64_t *f[3] = {&rm->usize, &rm->csize, &rm->local_off};
			for (int k = 0; k < 3; k++) {
				if (*f[k] != 0xFFFFFFFFu)
					continue;
				if (p + 8 > end)
					return bad(rm, "a ZIP64 extra field is too short");
				*f[k] = ow_le64(p);
				p += 8;
			}
		}
		i += 4 + len;
	}
	return 0;
}

static int take_entry(struct ow_rangemeta *rm, const uint8_t *e, size_t name_len,
                      const uint8_t *ex, size_t ex_len)
{
	if (rm->name)
		return bad(rm, "two METADATA members for the same distribution");
	memcpy(rm->cd_entry, e, sizeof rm->cd_entry);
	rm->name = strndup((const char *)e + 46, name_len);
	if (!rm->name)
		return ow_err(OW_ENOMEM, "out of memory");
	rm->name_len = name_len;
	rm->csize = ow_le32(e + 20);
	rm->usize = ow_le32(e + 24);
	rm->local_off = ow_le32(e + 42);
	int rc = zip64_extra(rm, ex, ex_len);
	if (rc)
		return rc;
	uint16_t flags = ow_le16(e + 8), method = ow_le16(e + 10);
	if (flags & 1)
		return bad(rm, "its METADATA is encrypted");
	if (method != 0 && method != 8)
		return bad(rm, "its METADATA is neither stored nor deflated");
	if (rm->usize > OW_METADATA_CAP || rm->csize > OW_METADATA_CAP)
		return ow_err(OW_ETOOBIG, "%s: METADATA of %llu bytes, over the %zu allowed",
		              rm->filename, (unsigned long long)rm->usize, OW_METADATA_CAP);
	if (!ow_span_within(rm->local_off, 30 + name_len, rm->cd_off) ||
	    !ow_span_within(rm->local_off + 30 + name_len, rm->csize, rm->cd_off))
		return bad(rm, "its METADATA entry points past the member area");
	return 0;
}

/* Walk the central directory (cd_size bytes at buf) for the METADATA entry. */
static int scan_cd(struct ow_rangemeta *rm, const uint8_t *cd)
{
	uint64_t off = 0;
	for (uint64_t k = 0; k < rm->entries; k++) {
		if (!ow_span_within(off, 46, rm->cd_size) || ow_le32(cd + off) != SIG_CD)
			return bad(rm, "its central directory is damaged");
		size_t nl = ow_le16(cd + off + 28), el = ow_le16(cd + off + 30),
		       cl = ow_le16(cd + off + 32);
		if (!ow_span_within(off, 46 + nl + el + cl, rm->cd_size))
			return bad(rm, "a central directory entry runs past its end");
		const char *name = (const char *)cd + off + 46;
		if (is_metadata(rm, name, nl)) {
			int rc = take_entry(rm, cd + off, nl, cd + off + 46 + nl, el);
			if (rc)
				return rc;
		}
		off += 46 + nl + el + cl;
	}
	if (off != rm->cd_size)
		return bad(rm, "its central directory size does not match its entries");
	if (!rm->name)
		return ow_err(OW_EZIP, "%s: no %s in the wheel", rm->filename, rm->distinfo);
	want(rm, OW_RM_MEMBER, rm->local_off,
	     30 + rm->name_len + ow_le16(rm->cd_entry + 30) + LOCAL_SLACK + rm->csize);
	if (!ow_span_within(rm->local_off, rm->want_len, rm->cd_off))
		rm->want_len = rm->cd_off - rm->local_off; /* take_entry: local_off < cd_off */
	return OW_RM_WANT_MORE;
}

/* The end record, ZIP64 included, in the tail [base, base + n). */
static int read_end(struct ow_rangemeta *rm, const uint8_t *t, size_t n, uint64_t base)
{
	size_t i = n - 22, stop = n > 22 + 65535 ? n - 22 - 65535 : 0;
	for (;; i--) {
		if (ow_le32(t + i) == SIG_EOCD && i + 22 + ow_le16(t + i + 20) == n)
			break;
		if (i == stop)
			return bad(rm, "no ZIP end record at its end");
	}
	rm->entries = ow_le16(t + i + 10);
	rm->cd_size = ow_le32(t + i + 12);
	rm->cd_off = ow_le32(t + i + 16);
	uint64_t eocd = base + i;
	if (rm->entries == 0xFFFF || rm->cd_size == 0xFFFFFFFFu || rm->cd_off == 0xFFFFFFFFu) {
		if (i < 20 || ow_le32(t + i - 20) != SIG_Z64_LOC)
			return bad(rm, "a ZIP64 archive without its locator");
		uint64_t z = ow_le64(t + i - 12);
		if (z < base || !ow_span_within(z, 56, eocd - 20) ||
		    ow_le32(t + (z - base)) != SIG_Z64_EOCD)
			return bad(rm, "its ZIP64 end record is not where its locator says");
		const uint8_t *r = t + (z - base);
		rm->entries = ow_le64(r + 32);
		rm->cd_size = ow_le64(r + 40);
		rm->cd_off = ow_le64(r + 48);
		eocd = z;
	}
	if (!ow_span_within(rm->cd_off, rm->cd_size, eocd) || rm->cd_size > CD_MAX ||
	    rm->entries > 200000 || rm->entries * 46 > rm->cd_size)
		return bad(rm, "its end record gives an impossible central directory");
	return 0;
}

static int feed_tail(struct ow_rangemeta *rm, const uint8_t *buf, size_t n)
{
	uint64_t base = rm->want_off;
	if (n != rm->want_len)
		return bad(rm, "the server sent less than its tail");
	int rc = read_end(rm, buf, n, base);
	if (rc)
		return rc;
	if (rm->cd_off >= base) { /* the central directory is in the tail already */
		if ((rc = scan_cd(rm, buf + (rm->cd_off - base))) != OW_RM_WANT_MORE)
			return rc;
		/* and the member too (a small wheel): no second read */
		if (rm->want_off >= base && ow_span_within(rm->want_off - base, rm->want_len, n)) {
			rm->bytes_read -= rm->want_len; /* counted with the tail */
			return ow_rangemeta_feed(rm, buf + (rm->want_off - base), (size_t)rm->want_len);
		}
		return OW_RM_WANT_MORE;
	}
	want(rm, OW_RM_CD, rm->cd_off, rm->cd_size);
	return OW_RM_WANT_MORE;
}

/* A one-member ZIP of the METADATA (its central-directory fields, its
 * compressed bytes), in a memory file, read the way a stored wheel is read. */
static int repack(struct ow_rangemeta *rm, const uint8_t *data)
{
	const uint8_t *e = rm->cd_entry;
	uint8_t lh[30] = {0}, cd[46] = {0}, end[22] = {0};
	uint16_t flags = ow_le16(e + 8) & (uint16_t)~0x0008u; /* sizes are in the header */
	ow_put_le32(lh, SIG_LOCAL);
	ow_put_le16(lh + 4, 20);
	ow_put_le16(lh + 6, flags);
	memcpy(lh + 8, e + 10, 2 + 2 + 2 + 4); /* method, time, date, crc */
	ow_put_le32(lh + 18, (uint32_t)rm->csize);
	ow_put_le32(lh + 22, (uint32_t)rm->usize);
	ow_put_le16(lh + 26, (uint16_t)rm->name_len);
	ow_put_le32(cd, SIG_CD);
	memcpy(cd + 4, e + 4, 2);
	memcpy(cd + 6, lh + 4, 26);
	uint64_t cd_off = 30 + rm->name_len + rm->csize;
	ow_put_le32(end, SIG_EOCD);
	ow_put_le16(end + 8, 1);
	ow_put_le16(end + 10, 1);
	ow_put_le32(end + 12, (uint32_t)(46 + rm->name_len));
	ow_put_le32(end + 16, (uint32_t)cd_off);
	int fd = memfd_create("offwheel-metadata", MFD_CLOEXEC);
	if (fd < 0)
		return ow_err(OW_EIO, "memfd_create: %m");
	int rc = 0;
	if (write(fd, lh, 30) != 30 || write(fd, rm->name, rm->name_len) != (ssize_t)rm->name_len ||
	    write(fd, data, rm->csize) != (ssize_t)rm->csize || write(fd, cd, 46) != 46 ||
	    write(fd, rm->name, rm->name_len) != (ssize_t)rm->name_len || write(fd, end, 22) != 22)
		rc = ow_err(OW_EIO, "writing a memory file: %m");
	return rc ? (close(fd), rc) : fd;
}

static int keep_metadata(const char *name, uint64_t size, void *ud)
{
	(void)size;
	return !strcmp(name, ((struct ow_rangemeta *)ud)->name);
}

static int append_text(const char *name, const void *data, size_t len, void *ud)
{
	struct ow_rangemeta *rm = ud;
	(void)name;
	if (!data)
		return 0;
	if (rm->text_len + len > OW_METADATA_CAP)
		return ow_err(OW_ETOOBIG, "%s: METADATA over %zu bytes", rm->filename, OW_METADATA_CAP);
	char *g = ow_array_grow(rm->text, rm->text_len, len + 1, 1);
	if (!g)
		return ow_err(OW_ENOMEM, "out of memory");
	rm->text = g;
	memcpy(g + rm->text_len, data, len);
	rm->text_len += len;
	g[rm->text_len] = '\0';
	return 0;
}

static int feed_member(struct ow_rangemeta *rm, const uint8_t *buf, size_t n)
{
	if (n < 30 || ow_le32(buf) != SIG_LOCAL)
		return bad(rm, "no local header where its central directory points");
	size_t nl = ow_le16(buf + 26), el = ow_le16(buf + 28);
	if (nl != rm->name_len || (n >= 30 + nl && memcmp(buf + 30, rm->name, nl)))
		return bad(rm, "the local header of METADATA names another member");
	if (ow_le16(buf + 8) != ow_le16(rm->cd_entry + 10))
		return bad(rm, "the local header of METADATA disagrees on the method");
	uint64_t data = 30 + nl + el;
	if (data + rm->csize > n) { /* a longer local extra field than we guessed */
		if (!ow_span_within(rm->local_off, data, rm->cd_off) ||
		    !ow_span_within(rm->local_off + data, rm->csize, rm->cd_off) ||
		    n != rm->want_len)
			return bad(rm, "its METADATA runs into the central directory");
		want(rm, OW_RM_MEMBER, rm->local_off, data + rm->csize);
		return OW_RM_WANT_MORE;
	}
	int fd = repack(rm, buf + data);
	if (fd < 0)
		return fd;
	ow_wheel *w = NULL;
	int rc = ow_wheel_open_fd(fd, rm->filename, NULL, &w);
	if (!rc)
		rc = ow_wheel_each_member(w, keep_metadata, append_text, rm);
	ow_wheel_close(w);
	close(fd);
	if (!rc && !rm->text && !(rm->text = strdup("")))
		rc = ow_err(OW_ENOMEM, "out of memory");
	if (rc)
		return rc;
	rm->stage = OW_RM_DONE;
	rm->want_len = 0;
	return OW_RM_HAVE_TEXT;
}

int ow_rangemeta_feed(struct ow_rangemeta *rm, const uint8_t *buf, size_t n)
{
	rm->bytes_read += n;
	if (n > rm->want_len)
		return bad(rm, "the server sent more than was asked for");
	switch (rm->stage) {
	case OW_RM_TAIL:
		return feed_tail(rm, buf, n);
	case OW_RM_CD:
		if (n != rm->cd_size)
			return bad(rm, "the server sent less than its central directory");
		return scan_cd(rm, buf);
	case OW_RM_MEMBER:
		return feed_member(rm, buf, n);
	case OW_RM_DONE:
		break;
	}
	return ow_err(OW_EINVAL, "%s: METADATA already read", rm->filename);
}

void ow_rangemeta_clear(struct ow_rangemeta *rm)
{
	free(rm->name);
	free(rm->text);
	rm->name = rm->text = NULL;
}

/* The METADATA of the wheel in `fd` (`size` bytes), read the same way as a
 * remote one but with pread: a few kB, whatever the wheel's size. */
int ow_rangemeta_read_fd(int fd, const char *filename, uint64_t size, struct ow_rangemeta *rm)
{
	int rc = ow_rangemeta_init(rm, filename, size);
	uint8_t *buf = NULL;
	while (rc == 0 || rc == 1) {
		uint8_t *g = realloc(buf, rm->want_len ? (size_t)rm->want_len : 1);
		if (!g) {
			rc = ow_err(OW_ENOMEM, "out of memory");
			break;
		}
		buf = g;
		if ((rc = ow_pread_all(fd, buf, (size_t)rm->want_len, rm->want_off))) {
			ow_err_prefix(rc, "%s: ", filename);
			break;
		}
		if ((rc = ow_rangemeta_feed(rm, buf, (size_t)rm->want_len)) == OW_RM_HAVE_TEXT)
			break;
	}
	free(buf);
	return rc;
}
