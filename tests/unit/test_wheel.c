/* test_wheel.c - the zip validator, the libarchive pass and the wheel checks.
 * Hostile archives are built byte by byte by the small zip writer below;
 * valid ones also come from Python's zipfile (tests/tools/mkwheel.py). */
#include "testutil.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "clock.h"
#include "digest.h"
#include "offwheel/error.h"
#include "wheel.h"

/* ---- a tiny zip writer ----------------------------------------------------- */

struct zb_opt {
	uint16_t method; /* 0 stored, 8 deflate (stored blocks); others as claimed */
	uint16_t flags;
	size_t name_len;        /* 0: strlen(name) (set it to embed a NUL) */
	const char *local_name; /* local header name differs */
	int local_method;       /* >= 0: local header method differs */
	uint32_t local_crc_xor;
	uint64_t local_usize; /* != 0: local header size differs */
	uint16_t made_by;     /* 0: 0x031e (Unix) */
	uint32_t ext_attr;    /* 0: regular 0644 */
	const char *cd_extra; /* raw bytes */
	size_t cd_extra_len;
	uint64_t claim_usize; /* != 0: declared uncompressed size */
	int hidden;           /* left out of the central directory */
	int descriptor;       /* bit 3 and a data descriptor */
	int zip64;            /* ZIP64 extra fields */
	int cd_at;            /* != 0: central entry points at entry cd_at-1 */
};

struct zb_ent {
	char name[5000];
	size_t nlen;
	struct zb_opt o;
	uint32_t crc;
	uint64_t csize, usize, off;
};

struct zb {
	uint8_t *b;
	size_t len, cap;
	struct zb_ent e[32];
	size_t n;
};

static void zb_put(struct zb *z, const void *p, size_t n)
{
	if (n == 0)
		return;
	if (z->len + n > z->cap) {
		z->cap = (z->len + n) * 2 + 4096;
		z->b = realloc(z->b, z->cap);
		assert_non_null(z->b);
	}
	memcpy(z->b + z->len, p, n);
	z->len += n;
}

static void zb_u16(struct zb *z, uint64_t v)
{
	uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
	zb_put(z, b, 2);
}

static void zb_u32(struct zb *z, uint64_t v)
{
	zb_u16(z, v & 0xffff);
	zb_u16(z, (v >> 16) & 0xffff);
}

static void zb_u64(struct zb *z, uint64_t v)
{
	zb_u32(z, v & 0xffffffffu);
	zb_u32(z, v >> 32);
}

static uint32_t crc32_of(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
	}
	return ~c;
}

/* Deflate made of stored blocks (RFC 1951 BTYPE 00). */
static uint8_t *deflate_stored(const uint8_t *p, size_t n, size_t *out_len)
{
	size_t blocks = n / 65535 + 1, o = 0;
	uint8_t *out = malloc(n + blocks * 5);
	for (size_t i = 0; i < blocks; i++) {
		size_t k = n - i * 65535 < 65535 ? n - i * 65535 : 65535;
		out[o++] = i + 1 == blocks;
		out[o++] = (uint8_t)k, out[o++] = (uint8_t)(k >> 8);
		out[o++] = (uint8_t)~k, out[o++] = (uint8_t)(~k >> 8);
		memcpy(out + o, p + i * 65535, k);
		o += k;
	}
	*out_len = o;
	return out;
}

static void zb_local(struct zb *z, struct zb_ent *e)
{
	const struct zb_opt *o = &e->o;
	const char *lname = o->local_name ? o->local_name : e->name;
	size_t lnlen = o->local_name ? strlen(o->local_name) : e->nlen;
	uint64_t us = o->local_usize ? o->local_usize : e->usize;
	int dd = o->descriptor;
	zb_u32(z, 0x04034b50);
	zb_u16(z, o->zip64 ? 45 : 20);
	zb_u16(z, e->o.flags);
	zb_u16(z, o->local_method >= 0 ? (uint64_t)o->local_method : o->method);
	zb_u32(z, 0);
	zb_u32(z, dd ? 0 : e->crc ^ o->local_crc_xor);
	zb_u32(z, dd ? 0 : o->zip64 ? 0xffffffffu : e->csize);
	zb_u32(z, dd ? 0 : o->zip64 ? 0xffffffffu : us);
	zb_u16(z, lnlen);
	zb_u16(z, o->zip64 ? 20 : 0);
	zb_put(z, lname, lnlen);
	if (o->zip64) {
		zb_u16(z, 1), zb_u16(z, 16), zb_u64(z, us), zb_u64(z, e->csize);
	}
}

static void zb_add(struct zb *z, const char *name, const void *data, size_t len,
                   const struct zb_opt *opt)
{
	struct zb_ent *e = &z->e[z->n++];
	struct zb_opt def = {.local_method = -1};
	e->o = opt ? *opt : def;
	e->nlen = e->o.name_len ? e->o.name_len : strlen(name);
	memcpy(e->name, name, e->nlen);
	if (e->o.descriptor)
		e->o.flags |= 8;
	size_t clen = len;
	uint8_t *comp = e->o.method == 8 ? deflate_stored(data, len, &clen) : NULL;
	e->crc = crc32_of(data, len);
	e->csize = clen;
	e->usize = e->o.claim_usize ? e->o.claim_usize : len;
	e->off = z->len;
	zb_local(z, e);
	zb_put(z, comp ? comp : data, clen);
	if (e->o.descriptor) {
		zb_u32(z, 0x08074b50), zb_u32(z, e->crc);
		if (e->o.zip64)
			zb_u64(z, e->csize), zb_u64(z, e->usize);
		else
			zb_u32(z, e->csize), zb_u32(z, e->usize);
	}
	free(comp);
}

static void zb_central(struct zb *z, const struct zb_ent *e)
{
	const struct zb_opt *o = &e->o;
	uint64_t off = o->cd_at ? z->e[o->cd_at - 1].off : e->off;
	zb_u32(z, 0x02014b50);
	zb_u16(z, o->made_by ? o->made_by : 0x031e);
	zb_u16(z, o->zip64 ? 45 : 20);
	zb_u16(z, o->flags);
	zb_u16(z, o->method);
	zb_u32(z, 0);
	zb_u32(z, e->crc);
	zb_u32(z, o->zip64 ? 0xffffffffu : e->csize);
	zb_u32(z, o->zip64 ? 0xffffffffu : e->usize);
	zb_u16(z, e->nlen);
	zb_u16(z, o->cd_extra_len + (o->zip64 ? 28 : 0));
	zb_u16(z, 0);
	zb_u16(z, 0);
	zb_u16(z, 0);
	zb_u32(z, o->ext_attr ? o->ext_attr : 0100644u << 16);
	zb_u32(z, o->zip64 ? 0xffffffffu : off);
	zb_put(z, e->name, e->nlen);
	if (o->zip64) {
		zb_u16(z, 1), zb_u16(z, 24);
		zb_u64(z, e->usize), zb_u64(z, e->csize), zb_u64(z, off);
	}
	zb_put(z, o->cd_extra, o->cd_extra_len);
}

struct zb_end {
	int zip64; /* ZIP64 end record and locator */
	const char *comment;
	const char *trailing;
};

static void zb_finish(struct zb *z, const struct zb_end *end)
{
	uint64_t cd = z->len, n = 0;
	for (size_t i = 0; i < z->n; i++)
		if (!z->e[i].o.hidden) {
			zb_central(z, &z->e[i]);
			n++;
		}
	uint64_t cd_size = z->len - cd, z64 = z->len;
	int zip64 = end && end->zip64;
	if (zip64) {
		zb_u32(z, 0x06064b50), zb_u64(z, 44), zb_u16(z, 45), zb_u16(z, 45);
		zb_u32(z, 0), zb_u32(z, 0), zb_u64(z, n), zb_u64(z, n), zb_u64(z, cd_size),
		    zb_u64(z, cd);
		zb_u32(z, 0x07064b50), zb_u32(z, 0), zb_u64(z, z64), zb_u32(z, 1);
	}
	size_t clen = end && end->comment ? strlen(end->comment) : 0;
	zb_u32(z, 0x06054b50), zb_u16(z, 0), zb_u16(z, 0);
	zb_u16(z, zip64 ? 0xffff : n), zb_u16(z, zip64 ? 0xffff : n);
	zb_u32(z, zip64 ? 0xffffffffu : cd_size), zb_u32(z, zip64 ? 0xffffffffu : cd);
	zb_u16(z, clen);
	if (clen)
		zb_put(z, end->comment, clen);
	if (end && end->trailing)
		zb_put(z, end->trailing, strlen(end->trailing));
}

static int mem_fd(const void *p, size_t n)
{
	int fd = memfd_create("wheel", 0);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, p, n), (ssize_t)n);
	return fd;
}

/* ---- wheels from the writer ------------------------------------------------ */

#define DI "demo-1.0.dist-info"
#define WHL "demo-1.0-py3-none-any.whl"
#define METADATA_TEXT "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n\nBody.\n"
#define WHEEL_TEXT "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"

struct file {
	const char *name;
	const char *data;
};

static const struct file base_files[] = {
    {"demo/__init__.py", "x = 1\n"},
    {"demo/sub/mod.py", "y = 2\n"},
    {DI "/METADATA", METADATA_TEXT},
    {DI "/WHEEL", WHEEL_TEXT},
};
#define N_BASE (sizeof base_files / sizeof base_files[0])

static void record_line(char *rec, size_t cap, const char *name, const char *data)
{
	uint8_t d[32];
	char b64[48];
	size_t o = strlen(rec);
	ow_sha256_buf(data, strlen(data), d);
	ow_b64url_nopad(d, 32, b64, sizeof b64);
	tu_fmt(rec + o, cap - o, "%s,sha256=%s,%zu\n", name, b64, strlen(data));
}

/* The correct RECORD of base_files. */
static void base_record(char *rec, size_t cap)
{
	rec[0] = '\0';
	for (size_t i = 0; i < N_BASE; i++)
		record_line(rec, cap, base_files[i].name, base_files[i].data);
	size_t o = strlen(rec);
	tu_fmt(rec + o, cap - o, DI "/RECORD,,\n");
}

/* base_files plus RECORD text `rec`, plus one more member when `extra`. */
static void build_wheel(struct zb *z, const char *rec, const struct file *extra, int method)
{
	struct zb_opt o = {.local_method = -1, .method = (uint16_t)method};
	memset(z, 0, sizeof *z);
	for (size_t i = 0; i < N_BASE; i++)
		zb_add(z, base_files[i].name, base_files[i].data, strlen(base_files[i].data), &o);
	if (extra)
		zb_add(z, extra->name, extra->data, strlen(extra->data), &o);
	if (rec)
		zb_add(z, DI "/RECORD", rec, strlen(rec), &o);
	zb_finish(z, NULL);
}

static int verify_bytes(const struct zb *z, const char *fname, struct ow_wheel_info **info)
{
	int fd = mem_fd(z->b, z->len);
	ow_err_clear();
	int rc = ow_wheel_verify_fd(fd, fname, NULL, NULL, info);
	close(fd);
	return rc;
}

static void expect_fail(int rc, int code, const char *phrase)
{
	if (rc != code || !strstr(ow_err_detail(), phrase))
		fail_msg("expected %s with '%s', got %s: %s", ow_err_name(code), phrase,
		         ow_err_name(rc), ow_err_detail());
}

/* ---- structural cases: a valid wheel with one member made hostile ---------- */

struct zcase {
	const char *what;
	const char *name; /* the hostile member's name */
	size_t name_len;
	struct zb_opt opt;
	const char *phrase;
};

static const char unicode_extra[] = "\x75\x70\x09\x00\x01\x00\x00\x00\x00"
                                    "evil";
static const char long_seg[300] = {[0 ... 298] = 'a'};

static const struct zcase zcases[] = {
    {"abs", "/etc/passwd", 0, {.local_method = -1}, "absolute member name"},
    {"dotdot", "demo/../../evil", 0, {.local_method = -1}, "'..' in a member name"},
    {"backslash", "demo\\evil.py", 0, {.local_method = -1}, "backslash"},
    {"drive", "C:/evil.py", 0, {.local_method = -1}, "drive letter"},
    {"nul", "demo/a\0.py", 10, {.local_method = -1}, "NUL byte"},
    {"ctrl", "demo/a\n.py", 0, {.local_method = -1}, "control character"},
    {"longseg", long_seg, 0, {.local_method = -1}, "segment over 255"},
    {"badutf8", "demo/\xff.py", 0, {.local_method = -1}, "not valid UTF-8"},
    {"unicode-path",
     "demo/x.py",
     0,
     {.local_method = -1, .cd_extra = unicode_extra, .cd_extra_len = sizeof unicode_extra - 1},
     "Unicode-path extra field"},
    {"symlink", "demo/link", 0, {.local_method = -1, .ext_attr = 0120777u << 16}, "symbolic link"},
    {"device", "demo/dev", 0, {.local_method = -1, .ext_attr = 0020644u << 16}, "device"},
    {"fifo", "demo/fifo", 0, {.local_method = -1, .ext_attr = 0010644u << 16}, "special file"},
    {"encrypted", "demo/x.py", 0, {.local_method = -1, .flags = 1}, "encrypted member"},
    {"bzip2", "demo/x.py", 0, {.local_method = -1, .method = 12}, "compression method 12"},
    {"ratio",
     "demo/bomb",
     0,
     {.local_method = -1, .method = 8, .claim_usize = 100u << 20},
     "compression ratio"},
    {"local-name",
     "demo/x.py",
     0,
     {.local_method = -1, .local_name = "demo/../x.py"},
     "name differs between local header and central directory"},
    {"local-size",
     "demo/x.py",
     0,
     {.local_method = -1, .local_usize = 7},
     "size differs between local header"},
    {"local-crc",
     "demo/x.py",
     0,
     {.local_method = -1, .local_crc_xor = 1},
     "CRC differs between local header"},
    {"local-method", "demo/x.py", 0, {.local_method = 8}, "compression method differs"},
    {"hidden",
     "demo/hidden.py",
     0,
     {.local_method = -1, .hidden = 1},
     "not listed in the central directory"},
    {"overlap", "demo/x.py", 0, {.local_method = -1, .cd_at = 1}, "overlaps"},
    {"dup", "demo/__init__.py", 0, {.local_method = -1}, "duplicate member name"},
    {"dup-case", "DEMO/__init__.py", 0, {.local_method = -1}, "when case is ignored"},
    {"file-as-dir", "demo/__init__.py/x", 0, {.local_method = -1}, "parent is a file"},
    {"dot", "demo/./x.py", 0, {.local_method = -1}, "'.' segment"},
};

static void run_zcase(const struct zcase *c)
{
	struct zb z = {0};
	char rec[4096];
	const char *data = "payload payload payload\n";
	base_record(rec, sizeof rec);
	for (size_t i = 0; i < N_BASE; i++)
		zb_add(&z, base_files[i].name, base_files[i].data, strlen(base_files[i].data),
		       NULL);
	struct zb_opt o = c->opt;
	o.name_len = c->name_len;
	zb_add(&z, c->name, data, strlen(data), &o);
	zb_add(&z, DI "/RECORD", rec, strlen(rec), NULL);
	zb_finish(&z, NULL);
	int rc = verify_bytes(&z, WHL, NULL);
	if (rc != OW_EZIP || !strstr(ow_err_detail(), c->phrase))
		fail_msg("case %s: expected EZIP with '%s', got %s: %s", c->what, c->phrase,
		         ow_err_name(rc), ow_err_detail());
	free(z.b);
}

static void test_structural_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof zcases / sizeof zcases[0]; i++)
		run_zcase(&zcases[i]);
}

static void test_long_name(void **state)
{
	(void)state;
	char *name = malloc(5000);
	for (size_t i = 0; i < 4999; i++)
		name[i] = i % 100 == 99 ? '/' : 'a';
	name[4999] = '\0';
	struct zcase c = {"long", name, 0, {.local_method = -1}, "longer than 4096"};
	run_zcase(&c);
	free(name);
}

static void end_case(const struct zb_end *end, const char *phrase)
{
	struct zb z;
	char rec[4096];
	base_record(rec, sizeof rec);
	build_wheel(&z, rec, NULL, 0);
	/* rewrite the end with the requested twist */
	free(z.b);
	memset(&z, 0, sizeof z);
	for (size_t i = 0; i < N_BASE; i++)
		zb_add(&z, base_files[i].name, base_files[i].data, strlen(base_files[i].data),
		       NULL);
	zb_add(&z, DI "/RECORD", rec, strlen(rec), NULL);
	zb_finish(&z, end);
	expect_fail(verify_bytes(&z, WHL, NULL), OW_EZIP, phrase);
	free(z.b);
}

static void test_trailing_data(void **state)
{
	(void)state;
	struct zb_end t = {.trailing = "GARBAGE"};
	end_case(&t, "7 bytes of data after the end-of-central-directory record");
	struct zb_end t2 = {.trailing = "PK\5\6"};
	end_case(&t2, "4 bytes of data after");
	struct zb_end c = {.comment = "hello PK\3\4 world"};
	end_case(&c, "comment contains zip record signatures");
}

static void test_truncated_and_prefixed(void **state)
{
	(void)state;
	struct zb z;
	char rec[4096];
	base_record(rec, sizeof rec);
	build_wheel(&z, rec, NULL, 0);
	expect_fail(verify_bytes(&(struct zb){.b = z.b, .len = z.len - 30}, WHL, NULL), OW_EZIP,
	            "end-of-central-directory");
	uint8_t *pre = malloc(z.len + 5);
	memcpy(pre, "JUNK!", 5);
	memcpy(pre + 5, z.b, z.len);
	/* offsets now point 5 bytes early: the first member is not where listed */
	expect_fail(verify_bytes(&(struct zb){.b = pre, .len = z.len + 5}, WHL, NULL), OW_EZIP,
	            "central directory does not end where the end record begins");
	free(pre);
	free(z.b);
}

static void test_total_size_cap(void **state)
{
	(void)state;
	struct zb z;
	char rec[4096];
	struct ow_wheel_limits lim;
	base_record(rec, sizeof rec);
	build_wheel(&z, rec, NULL, 0);
	ow_wheel_limits_default(&lim);
	lim.zip.max_total_size = 100;
	int fd = mem_fd(z.b, z.len);
	expect_fail(ow_wheel_verify_fd(fd, WHL, &lim, NULL, NULL), OW_EZIP,
	            "uncompressed in total");
	ow_wheel_limits_default(&lim);
	lim.zip.max_entries = 3;
	expect_fail(ow_wheel_verify_fd(fd, WHL, &lim, NULL, NULL), OW_EZIP,
	            "members, over the cap");
	close(fd);
	free(z.b);
}

/* ---- the libarchive pass: CRC wrong everywhere (local and central agree) --- */

static void test_bad_crc_caught_by_libarchive(void **state)
{
	(void)state;
	struct zb z;
	char rec[4096];
	base_record(rec, sizeof rec);
	build_wheel(&z, rec, NULL, 8);
	/* flip one payload byte of the first member: its CRC no longer matches */
	size_t off = 30 + strlen(base_files[0].name) + 5;
	z.b[off] ^= 1;
	expect_fail(verify_bytes(&z, WHL, NULL), OW_EZIP, "CRC");
	free(z.b);
}

/* ---- wheel semantics -------------------------------------------------------- */

static void test_valid_c_wheel(void **state)
{
	(void)state;
	for (int method = 0; method <= 8; method += 8) {
		struct zb z;
		char rec[4096];
		struct ow_wheel_info *info = NULL;
		base_record(rec, sizeof rec);
		build_wheel(&z, rec, NULL, method);
		int rc = verify_bytes(&z, "/some/dir/" WHL, &info);
		if (rc)
			fail_msg("%s", ow_err_detail());
		assert_string_equal(info->dist_info, DI);
		assert_string_equal(info->metadata->name, "demo");
		assert_int_equal(info->n_members, N_BASE + 1);
		assert_non_null(strstr(info->wheel_text, "Wheel-Version: 1.0"));
		ow_wheel_info_free(info);
		free(z.b);
	}
}

static void record_case(const char *rec, const struct file *extra, const char *phrase)
{
	struct zb z;
	build_wheel(&z, rec, extra, 8);
	expect_fail(verify_bytes(&z, WHL, NULL), OW_ERECORD, phrase);
	free(z.b);
}

static void test_record_missing(void **state)
{
	(void)state;
	record_case(NULL, NULL, "no " DI "/RECORD");
}

static void test_record_wrong_hash(void **state)
{
	(void)state;
	char rec[4096];
	base_record(rec, sizeof rec);
	char *h = strstr(rec, "sha256=") + 7;
	*h = *h == 'A' ? 'B' : 'A';
	record_case(rec, NULL, "but RECORD says sha256=");
}

static void test_record_wrong_size(void **state)
{
	(void)state;
	char rec[4096];
	base_record(rec, sizeof rec);
	char *nl = strchr(rec, '\n');
	nl[-1] = '9'; /* "x = 1\n" is 6 bytes: now 9 */
	record_case(rec, NULL, "is 6 bytes but RECORD says 9");
}

static void test_record_extra_member(void **state)
{
	(void)state;
	char rec[4096];
	struct file extra = {"demo/sneaky.py", "import os\n"};
	base_record(rec, sizeof rec);
	record_case(rec, &extra, "'demo/sneaky.py' is not listed in RECORD");
}

static void test_record_missing_member(void **state)
{
	(void)state;
	char rec[4096];
	base_record(rec, sizeof rec);
	record_line(rec, sizeof rec, "demo/gone.py", "gone\n");
	record_case(rec, NULL, "RECORD lists 'demo/gone.py' but the archive has no such member");
}

static void test_record_dotdot(void **state)
{
	(void)state;
	char rec[4096];
	base_record(rec, sizeof rec);
	record_line(rec, sizeof rec, "demo/../../etc/passwd", "x\n");
	record_case(rec, NULL, "'..' in a member name");
	base_record(rec, sizeof rec);
	record_line(rec, sizeof rec, "/etc/passwd", "x\n");
	record_case(rec, NULL, "absolute member name");
}

static void test_record_no_hash(void **state)
{
	(void)state;
	char rec[4096];
	struct file extra = {"demo/nohash.py", "z\n"};
	base_record(rec, sizeof rec);
	size_t o = strlen(rec);
	tu_fmt(rec + o, sizeof rec - o, "demo/nohash.py,,\n");
	record_case(rec, &extra, "no hash or size for 'demo/nohash.py'");
}

static void test_dist_info_mismatch(void **state)
{
	(void)state;
	struct zb z;
	char rec[4096];
	base_record(rec, sizeof rec);
	build_wheel(&z, rec, NULL, 0);
	expect_fail(verify_bytes(&z, "other-1.0-py3-none-any.whl", NULL), OW_EZIP,
	            "does not match the filename");
	expect_fail(verify_bytes(&z, "demo-2.0-py3-none-any.whl", NULL), OW_EZIP,
	            "does not match the filename");
	/* PEP 503 normalization and the escaped form are the same project */
	assert_int_equal(verify_bytes(&z, "Demo-1.0-py3-none-any.whl", NULL), 0);
	expect_fail(verify_bytes(&z, "demo-1.0.whl", NULL), OW_EINVAL, "not a wheel filename");
	free(z.b);
}

static void test_two_dist_info(void **state)
{
	(void)state;
	char rec[4096];
	struct file extra = {"evil-6.6.dist-info/METADATA", METADATA_TEXT};
	base_record(rec, sizeof rec);
	record_line(rec, sizeof rec, extra.name, extra.data);
	struct zb z;
	build_wheel(&z, rec, &extra, 0);
	expect_fail(verify_bytes(&z, WHL, NULL), OW_EZIP, "two .dist-info directories");
	free(z.b);
}

static void test_metadata_name_mismatch(void **state)
{
	(void)state;
	/* dist-info matches the filename, METADATA does not */
	static const struct file files[] = {
	    {"demo/__init__.py", "x = 1\n"},
	    {DI "/METADATA", "Metadata-Version: 2.1\nName: other\nVersion: 1.0\n"},
	    {DI "/WHEEL", WHEEL_TEXT},
	};
	char rec[4096] = "";
	struct zb z = {0};
	for (size_t i = 0; i < 3; i++) {
		record_line(rec, sizeof rec, files[i].name, files[i].data);
		zb_add(&z, files[i].name, files[i].data, strlen(files[i].data), NULL);
	}
	size_t o = strlen(rec);
	tu_fmt(rec + o, sizeof rec - o, DI "/RECORD,,\n");
	zb_add(&z, DI "/RECORD", rec, strlen(rec), NULL);
	zb_finish(&z, NULL);
	expect_fail(verify_bytes(&z, WHL, NULL), OW_ERECORD, "METADATA says other 1.0");
	free(z.b);
}

/* ---- streaming -------------------------------------------------------------- */

struct collect {
	char name[256];
	uint8_t *buf;
	size_t len;
	int ends;
};

static int want_bin(const char *name, uint64_t size, void *ud)
{
	(void)size;
	(void)ud;
	return strstr(name, ".bin") != NULL;
}

static int collect_data(const char *name, const void *data, size_t len, void *ud)
{
	struct collect *c = ud;
	snprintf(c->name, sizeof c->name, "%s", name);
	if (!data) {
		c->ends++;
		return 0;
	}
	c->buf = realloc(c->buf, c->len + len);
	memcpy(c->buf + c->len, data, len);
	c->len += len;
	return 0;
}

static uint8_t *pattern(size_t n)
{
	uint8_t *p = malloc(n);
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)((i * 7 + i / 253) % 256);
	return p;
}

static void test_stream_exact_bytes(void **state)
{
	(void)state;
	struct zb z = {0};
	char rec[4096];
	size_t n = 300000;
	uint8_t *pat = pattern(n);
	struct zb_opt o = {.local_method = -1, .method = 8};
	base_record(rec, sizeof rec);
	zb_add(&z, "demo/data.bin", pat, n, &o);
	zb_add(&z, "demo/x.py", "x", 1, &o);
	zb_finish(&z, NULL);
	int fd = mem_fd(z.b, z.len);
	ow_wheel *w = NULL;
	struct collect c = {0};
	assert_int_equal(ow_wheel_open_fd(fd, "t.zip", NULL, &w), 0);
	assert_int_equal(ow_wheel_each_member(w, want_bin, collect_data, &c), 0);
	assert_string_equal(c.name, "demo/data.bin");
	assert_int_equal(c.ends, 1);
	assert_int_equal(c.len, n);
	assert_memory_equal(c.buf, pat, n);
	ow_wheel_close(w);
	close(fd);
	free(c.buf);
	free(pat);
	free(z.b);
}

static void test_zip64_c_builder(void **state)
{
	(void)state;
	struct zb z = {0};
	char rec[4096];
	struct zb_opt o = {.local_method = -1, .method = 8, .zip64 = 1};
	struct zb_end end = {.zip64 = 1};
	base_record(rec, sizeof rec);
	for (size_t i = 0; i < N_BASE; i++)
		zb_add(&z, base_files[i].name, base_files[i].data, strlen(base_files[i].data), &o);
	o.descriptor = 1;
	zb_add(&z, DI "/RECORD", rec, strlen(rec), &o);
	zb_finish(&z, &end);
	int rc = verify_bytes(&z, WHL, NULL);
	if (rc)
		fail_msg("%s", ow_err_detail());
	free(z.b);
}

static void test_descriptor_mismatch(void **state)
{
	(void)state;
	struct zb z = {0};
	struct zb_opt o = {.local_method = -1, .descriptor = 1};
	zb_add(&z, "demo/x.py", "hello\n", 6, &o);
	z.b[z.len - 1] ^= 1; /* the descriptor's uncompressed size */
	zb_finish(&z, NULL);
	expect_fail(verify_bytes(&z, WHL, NULL), OW_EZIP, "data descriptor");
	free(z.b);
}

/* ---- wheels built by Python's zipfile ---------------------------------------- */

static int python_wheel(const char *mode, char *path, size_t pathsz, char **dir)
{
	const char *src = getenv("OW_SOURCE_DIR");
	char cmd[8192];
	*dir = tu_mkdtemp();
	snprintf(path, pathsz, "%s/" WHL, *dir);
	snprintf(cmd, sizeof cmd, "python3 %s/tests/tools/mkwheel.py '%s' %s", src ? src : ".",
	         path, mode);
	return system(cmd);
}

static void python_case(const char *mode)
{
	char path[4096], *dir;
	struct collect c = {0};
	struct ow_wheel_consumer cons = {want_bin, collect_data, &c};
	struct ow_wheel_info *info = NULL;
	if (python_wheel(mode, path, sizeof path, &dir) != 0) {
		tu_rmtree(dir);
		free(dir);
		skip();
	}
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	int rc = ow_wheel_verify_fd(fd, path, NULL, &cons, &info);
	if (rc)
		fail_msg("%s: %s", mode, ow_err_detail());
	uint8_t *pat = pattern(300000);
	assert_int_equal(c.len, 300000);
	assert_memory_equal(c.buf, pat, 300000);
	assert_int_equal(info->metadata->n_requires_dist, 1);
	assert_int_equal(info->n_members, 6);
	ow_wheel_info_free(info);
	free(pat);
	free(c.buf);
	close(fd);
	tu_rmtree(dir);
	free(dir);
}

static void test_python_deflate(void **state)
{
	(void)state;
	python_case("deflate");
}

static void test_python_zip64(void **state)
{
	(void)state;
	python_case("zip64");
}

static void test_python_descriptor(void **state)
{
	(void)state;
	python_case("descriptor");
}

/* The fuzz seeds named valid-*.whl are valid wheels; the others are not. */
static void test_corpus_seeds(void **state)
{
	(void)state;
	static const char *const seeds[] = {"valid-deflate",    "valid-stored", "valid-zip64",
	                                    "valid-descriptor", "trailing",     "truncated",
	                                    "dotdot",           "local-name",   "flipped"};
	const char *src = getenv("OW_SOURCE_DIR");
	for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/tests/fuzz/corpus/zip/%s.whl", src ? src : ".",
		         seeds[i]);
		int fd = open(path, O_RDONLY);
		assert_true(fd >= 0);
		int rc = ow_wheel_verify_fd(fd, WHL, NULL, NULL, NULL);
		close(fd);
		if ((rc == 0) != (i < 4))
			fail_msg("%s: %s %s", seeds[i], ow_err_name(rc), ow_err_detail());
	}
}

/* ---- METADATA and RECORD parsers ---------------------------------------------- */

static const char torch_metadata[] =
    "Metadata-Version: 2.1\r\n"
    "Name: torch\r\n"
    "Version: 2.7.0+cu128\r\n"
    "Summary: Tensors and Dynamic neural networks in Python with strong GPU acceleration\r\n"
    "Home-page: https://pytorch.org/\r\n"
    "Author: PyTorch Team\r\n"
    "License: BSD-3-Clause\r\n"
    "Keywords: pytorch,machine learning\r\n"
    "Classifier: Programming Language :: Python :: 3\r\n"
    "Requires-Python: >=3.9.0\r\n"
    "Description-Content-Type: text/markdown\r\n"
    "License-File: LICENSE\r\n"
    "Requires-Dist: filelock\r\n"
    "Requires-Dist: typing-extensions>=4.10.0\r\n"
    "Requires-Dist: setuptools; python_version >= \"3.12\"\r\n"
    "Requires-Dist: sympy>=1.13.3\r\n"
    "Requires-Dist: networkx\r\n"
    "Requires-Dist: jinja2\r\n"
    "Requires-Dist: fsspec\r\n"
    "Requires-Dist: nvidia-cuda-nvrtc-cu12==12.8.61; platform_system == \"Linux\" and "
    "platform_machine == \"x86_64\"\r\n"
    "Requires-Dist: nvidia-cudnn-cu12==9.7.1.26; platform_system == \"Linux\" and "
    "platform_machine == \"x86_64\"\r\n"
    "Requires-Dist: triton==3.3.0; platform_system == \"Linux\" and platform_machine == "
    "\"x86_64\"\r\n"
    "Provides-Extra: opt-einsum\r\n"
    "Requires-Dist: opt-einsum>=3.3; extra == \"opt-einsum\"\r\n"
    "Provides-Extra: optree\r\n"
    "Requires-Dist: optree>=0.13.0; extra == \"optree\"\r\n"
    "\r\n"
    "![PyTorch Logo](https://github.com/pytorch/pytorch/raw/main/docs/source/_static/img/"
    "pytorch-logo-dark.png)\r\n"
    "Name: not-a-header\r\n";

static void test_metadata_torch(void **state)
{
	(void)state;
	struct ow_metadata *md = NULL;
	assert_int_equal(ow_metadata_parse(torch_metadata, sizeof torch_metadata - 1, &md), 0);
	assert_string_equal(md->name, "torch");
	assert_string_equal(md->version, "2.7.0+cu128");
	assert_string_equal(md->requires_python, ">=3.9.0");
	assert_int_equal(md->n_requires_dist, 12);
	assert_string_equal(md->requires_dist[2], "setuptools; python_version >= \"3.12\"");
	assert_string_equal(md->requires_dist[11], "optree>=0.13.0; extra == \"optree\"");
	assert_int_equal(md->n_provides_extra, 2);
	assert_string_equal(md->provides_extra[1], "optree");
	ow_metadata_free(md);
}

static void test_metadata_folded(void **state)
{
	(void)state;
	static const char t[] = "Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n"
	                        "Requires-Dist: a>=1;\n  python_version<'3.12'\n"
	                        "Description: line one\n        |line two\n"
	                        "Requires-Dist: b\n";
	struct ow_metadata *md = NULL;
	assert_int_equal(ow_metadata_parse(t, sizeof t - 1, &md), 0);
	assert_int_equal(md->n_requires_dist, 2);
	assert_string_equal(md->requires_dist[0], "a>=1;  python_version<'3.12'");
	assert_string_equal(md->requires_dist[1], "b");
	assert_null(md->requires_python);
	ow_metadata_free(md);
}

static void test_metadata_bad(void **state)
{
	(void)state;
	static const struct {
		const char *t;
		size_t n;
		const char *phrase;
	} bad[] = {
	    {"Metadata-Version: 2.1\nVersion: 1\n", 0, "Name missing"},
	    {"Metadata-Version: 2.1\nName: a\nName: b\nVersion: 1\n", 0, "Name given twice"},
	    {"Metadata-Version: 2.1\nName: a b\nVersion: 1\n", 0, "not a valid distribution name"},
	    {"Metadata-Version: 2.1\nName: a\nVersion: 1\0\n", 42, "NUL"},
	    {" folded\nName: a\n", 0, "continuation line without a field"},
	    {"", 0, "missing"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct ow_metadata *md = NULL;
		size_t n = bad[i].n ? bad[i].n : strlen(bad[i].t);
		expect_fail(ow_metadata_parse(bad[i].t, n, &md), OW_EPARSE, bad[i].phrase);
		assert_null(md);
	}
}

/* METADATA with n lines "Requires-Dist: dep<i> (>=1.0)" (malloc'd). */
static char *many_requires(size_t n, const char *field, size_t *len)
{
	char *b = malloc(n * 48 + 100);
	assert_non_null(b);
	size_t l = (size_t)sprintf(b, "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n");
	for (size_t i = 0; i < n; i++)
		l += (size_t)sprintf(b + l, "%s: dep%zu (>=1.0)\n", field, i);
	*len = l;
	return b;
}

/* Every Requires-Dist line is a constraint for the resolver: 700,000 of
 * them (15 MiB) stalled it for minutes.  Past OW_METADATA_MAX_REQUIRES the
 * metadata is refused, quickly, naming the line and the cap. */
static void test_metadata_requires_cap(void **state)
{
	(void)state;
	struct ow_metadata *md = NULL;
	size_t len;
	char *b = many_requires(OW_METADATA_MAX_REQUIRES, "Requires-Dist", &len);
	assert_int_equal(ow_metadata_parse(b, len, &md), 0);
	assert_int_equal(md->n_requires_dist, OW_METADATA_MAX_REQUIRES);
	ow_metadata_free(md);
	free(b);
	static const struct {
		size_t n;
		const char *field;
	} over[] = {{OW_METADATA_MAX_REQUIRES + 1, "Requires-Dist"},
	            {8000, "Requires-Dist"},
	            {700000, "Requires-Dist"},
	            {OW_METADATA_MAX_REQUIRES + 1, "Provides-Extra"}};
	for (size_t i = 0; i < sizeof over / sizeof over[0]; i++) {
		char want[120];
		b = many_requires(over[i].n, over[i].field, &len);
		double t0 = ow_mono_s();
		expect_fail(ow_metadata_parse(b, len, &md), OW_ETOOBIG, "more than 2000");
		double took = ow_mono_s() - t0;
		snprintf(want, sizeof want, "line %u: more than %u %s lines",
		         OW_METADATA_MAX_REQUIRES + 4, OW_METADATA_MAX_REQUIRES, over[i].field);
		expect_fail(ow_metadata_parse(b, len, &md), OW_ETOOBIG, want);
		assert_null(md);
		if (took > 1.0)
			fail_msg("%zu lines took %.1f s to refuse", over[i].n, took);
		free(b);
	}
}

static void test_record_csv(void **state)
{
	(void)state;
	static const char t[] =
	    "\"demo/a,b.py\",sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0\r\n"
	    "\"demo/q\"\"uote.py\",,\r\n"
	    "\n"
	    "demo/plain.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,12";
	struct ow_record *r = NULL;
	uint8_t empty[32];
	ow_sha256_buf("", 0, empty);
	assert_int_equal(ow_record_parse(t, sizeof t - 1, &r), 0);
	assert_int_equal(r->n, 3);
	assert_string_equal(r->rows[0].path, "demo/a,b.py");
	assert_memory_equal(r->rows[0].sha256, empty, 32);
	assert_string_equal(r->rows[1].path, "demo/q\"uote.py");
	assert_false(r->rows[1].has_hash);
	assert_int_equal(r->rows[2].size, 12);
	assert_int_equal(r->rows[2].line, 4);
	ow_record_free(r);
}

static void test_record_csv_bad(void **state)
{
	(void)state;
	static const struct {
		const char *t;
		const char *phrase;
	} bad[] = {
	    {"a.py,sha256=x,1\n", "malformed sha256"},
	    {"a.py,md5=abc,1\n", "is not sha256="},
	    {"a.py,,1,extra\n", "more than 3 fields"},
	    {"a.py,,\nb.py\n", "1 fields"},
	    {"\"a.py,,\n", "unterminated quoted field"},
	    {"\"a.py\"x,,\n", "text after a closing quote"},
	    {"a.py,,-1\n", "is not a number"},
	    {"a.py,,99999999999999999999\n", "out of range"},
	    {"../a.py,,\n", "'..'"},
	    {"a\\b.py,,\n", "backslash"},
	    {"a.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFV,0\n", "malformed sha256"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct ow_record *r = NULL;
		expect_fail(ow_record_parse(bad[i].t, strlen(bad[i].t), &r), OW_ERECORD,
		            bad[i].phrase);
		assert_null(r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_structural_cases),
	    cmocka_unit_test(test_long_name),
	    cmocka_unit_test(test_trailing_data),
	    cmocka_unit_test(test_truncated_and_prefixed),
	    cmocka_unit_test(test_total_size_cap),
	    cmocka_unit_test(test_bad_crc_caught_by_libarchive),
	    cmocka_unit_test(test_valid_c_wheel),
	    cmocka_unit_test(test_record_missing),
	    cmocka_unit_test(test_record_wrong_hash),
	    cmocka_unit_test(test_record_wrong_size),
	    cmocka_unit_test(test_record_extra_member),
	    cmocka_unit_test(test_record_missing_member),
	    cmocka_unit_test(test_record_dotdot),
	    cmocka_unit_test(test_record_no_hash),
	    cmocka_unit_test(test_dist_info_mismatch),
	    cmocka_unit_test(test_two_dist_info),
	    cmocka_unit_test(test_metadata_name_mismatch),
	    cmocka_unit_test(test_stream_exact_bytes),
	    cmocka_unit_test(test_zip64_c_builder),
	    cmocka_unit_test(test_descriptor_mismatch),
	    cmocka_unit_test(test_python_deflate),
	    cmocka_unit_test(test_python_zip64),
	    cmocka_unit_test(test_python_descriptor),
	    cmocka_unit_test(test_corpus_seeds),
	    cmocka_unit_test(test_metadata_torch),
	    cmocka_unit_test(test_metadata_folded),
	    cmocka_unit_test(test_metadata_bad),
	    cmocka_unit_test(test_metadata_requires_cap),
	    cmocka_unit_test(test_record_csv),
	    cmocka_unit_test(test_record_csv_bad),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
