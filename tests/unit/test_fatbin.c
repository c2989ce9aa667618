#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "offwheel/error.h"
#include "offwheel/fatbin.h"

#define CUDA_LIB "/usr/local/cuda/lib64"

/* The listing of a result in the .expect format, one line per module. */
static char *listing(const struct ow_fatbin *fb)
{
	size_t cap = 256 + fb->n_modules * 1024, at = 0;
	char *out = calloc(1, cap), line[4096];
	assert_non_null(out);
	for (size_t i = 0; i < fb->n_modules; i++) {
		assert_int_equal(ow_fatbin_module_format(fb, &fb->modules[i], line, sizeof line), 0);
		at += (size_t)snprintf(out + at, cap - at, "%s %zu: %s\n", fb->modules[i].section, i, line);
		assert_true(at < cap);
	}
	return out;
}

/* The .expect file without comment lines. */
static char *read_expect(const char *path)
{
	size_t len;
	char *raw = tu_read_file(path, &len), *out = calloc(1, len + 1), *p = raw;
	assert_non_null(raw);
	assert_non_null(out);
	size_t at = 0;
	while (*p) {
		char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p + 1) : strlen(p);
		if (*p != '#' && n > 1) {
			memcpy(out + at, p, n);
			at += n;
		}
		p += n;
	}
	free(raw);
	return out;
}

/* The data file next to NAME.expect: NAME.so, NAME.dll or NAME.bin. */
static char *data_file(const char *dir, const char *base)
{
	static const char *const exts[] = {".so", ".dll", ".bin"};
	for (size_t i = 0; i < 3; i++) {
		char *p;
		struct stat st;
		assert_true(asprintf(&p, "%s/%s%s", dir, base, exts[i]) > 0);
		if (stat(p, &st) == 0)
			return p;
		free(p);
	}
	fail_msg("no data file for %s.expect", base);
	return NULL;
}

static void check_fixture(const char *dir, const char *expect_name)
{
	char base[256], *exp_path;
	tu_fmt(base, sizeof base, "%.*s", (int)(strlen(expect_name) - 7), expect_name);
	assert_true(asprintf(&exp_path, "%s/%s", dir, expect_name) > 0);
	char *want = read_expect(exp_path), *path = data_file(dir, base);
	struct ow_fatbin *fb = NULL;
	int rc = ow_fatbin_read_file(path, 0, &fb);
	if (rc)
		fail_msg("%s: %s", path, ow_err_detail());
	char *got = listing(fb);
	if (strcmp(got, want) != 0)
		fail_msg("%s:\n--- expected\n%s--- got\n%s", base, want, got);
	/* the in-memory reader gives the same, also from an unaligned buffer */
	size_t len;
	char *bytes = tu_read_file(path, &len), *shifted = malloc(len + 1);
	assert_non_null(bytes);
	assert_non_null(shifted);
	memcpy(shifted + 1, bytes, len);
	struct ow_fatbin *fb2 = NULL;
	assert_int_equal(ow_fatbin_scan_buffer(shifted + 1, len, 0, &fb2), 0);
	char *got2 = listing(fb2);
	assert_string_equal(got2, want);
	/* (headers only on a big library: test_real_cublas; these small
	 * fixtures have their small uncompressed cubins read whole) */
	free(got2), free(shifted), free(bytes), free(got), free(want), free(path), free(exp_path);
	ow_fatbin_free(fb);
	ow_fatbin_free(fb2);
}

static void test_fixtures_match_expect(void **state)
{
	(void)state;
	char *dir = tu_fixture("fatbin");
	DIR *d = opendir(dir);
	assert_non_null(d);
	struct dirent *de;
	int n = 0;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l > 7 && strcmp(de->d_name + l - 7, ".expect") == 0) {
			check_fixture(dir, de->d_name);
			n++;
		}
	}
	closedir(d);
	free(dir);
	assert_true(n >= 27);
}

static void test_torch_fixture_details(void **state)
{
	(void)state;
	char *path = tu_fixture("fatbin/libtorch_cuda_cu128.so");
	struct ow_fatbin *fb;
	assert_int_equal(ow_fatbin_read_file(path, 0, &fb), 0);
	assert_int_equal(fb->format, OW_FB_FMT_ELF);
	assert_int_equal(fb->n_modules, 3);
	assert_int_equal(fb->n_entries, 21);
	const struct ow_fatbin_entry *e = &fb->entries[0];
	assert_int_equal(e->kind, OW_FB_SASS);
	assert_int_equal(e->arch, 75);
	assert_int_equal(e->compression, OW_FB_COMP_ZSTD);
	assert_true(e->uncompressed_size > e->payload_size);
	int ptx = 0;
	for (size_t i = 0; i < fb->n_entries; i++)
		if (fb->entries[i].kind == OW_FB_PTX) {
			ptx++;
			assert_int_equal(fb->entries[i].arch, 120);
			assert_int_equal(fb->entries[i].ver_major, 9);
			assert_int_equal(fb->entries[i].ver_minor, 0);
		}
	assert_int_equal(ptx, 3);
	char name[16];
	assert_int_equal(ow_fatbin_entry_name(e, name, sizeof name), 0);
	assert_string_equal(name, "sm_75");
	assert_int_equal(ow_fatbin_entry_name(e, name, 3), OW_ERANGE);
	ow_fatbin_free(fb);
	free(path);
	ow_fatbin_free(NULL);
}

/* A cubin with no kernel (nvcc-built: device data, host code) is told from
 * one with kernels by its sections; compressed cubins are not looked into. */
static int32_t first_sass_kernels(const struct ow_fatbin *fb)
{
	for (size_t i = 0; i < fb->modules[0].count; i++)
		if (fb->entries[fb->modules[0].first + i].kind == OW_FB_SASS)
			return fb->entries[fb->modules[0].first + i].kernels;
	fail_msg("module 0 has no SASS entry");
	return -2;
}

static void test_kernel_less_module(void **state)
{
	(void)state;
	static const struct {
		const char *lib;
		int no_kernels, kernels; /* of module 0 / its first SASS entry */
	} cases[] = {
		{"fatbin/nokernel.so", 1, 0},
		{"fatbin/sass_only.so", 0, 1},   /* uncompressed, one kernel per module */
		{"fatbin/uncompressed.so", 0, 1},
		{"fatbin/zstd.so", 0, -1},       /* compressed: not looked at */
		{"fatbin/sass_ptx.so", 0, 1},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *path = tu_fixture(cases[i].lib);
		struct ow_fatbin *fb;
		assert_int_equal(ow_fatbin_read_file(path, 0, &fb), 0);
		assert_true(fb->n_modules >= 1);
		if (fb->modules[0].no_kernels != cases[i].no_kernels ||
		    first_sass_kernels(fb) != cases[i].kernels)
			fail_msg("%s: no_kernels %d kernels %d", cases[i].lib, fb->modules[0].no_kernels,
			         first_sass_kernels(fb));
		/* the same from memory */
		size_t len;
		char *bytes = tu_read_file(path, &len);
		struct ow_fatbin *fm;
		assert_int_equal(ow_fatbin_scan_buffer(bytes, len, 0, &fm), 0);
		assert_int_equal(fm->modules[0].no_kernels, cases[i].no_kernels);
		assert_int_equal(first_sass_kernels(fm), cases[i].kernels);
		ow_fatbin_free(fm);
		free(bytes);
		ow_fatbin_free(fb);
		free(path);
	}
}

static void test_missing_file(void **state)
{
	(void)state;
	struct ow_fatbin *fb = (struct ow_fatbin *)1;
	assert_int_equal(ow_fatbin_read_file("/nonexistent/x.so", 0, &fb), OW_ENOENT);
	assert_null(fb == (struct ow_fatbin *)1 ? NULL : fb);
	assert_non_null(strstr(ow_err_detail(), "/nonexistent/x.so"));
	assert_int_equal(ow_fatbin_scan_buffer(NULL, 0, 0, &fb), 0);
	assert_int_equal(fb->n_modules, 0);
	ow_fatbin_free(fb);
}

/* Every prefix of a file: an error with a message or a clean listing. */
static void cut_everywhere(const char *rel, int elf)
{
	char *path = tu_fixture(rel);
	size_t len;
	unsigned char *bytes = (unsigned char *)tu_read_file(path, &len);
	assert_non_null(bytes);
	for (size_t cut = 0; cut < len; cut++) {
		unsigned char *copy = malloc(cut + 1);
		assert_non_null(copy);
		memcpy(copy, bytes, cut);
		struct ow_fatbin *fb = NULL;
		int rc = ow_fatbin_scan_buffer(copy, cut, OW_FATBIN_SCAN_DATA, &fb);
		if (rc) {
			assert_int_equal(rc, OW_EPARSE);
			assert_true(strlen(ow_err_detail()) > 10);
			assert_null(fb);
		} else {
			/* an ELF cut anywhere past its magic loses its section headers
			 * (they are at the end), which must be an error */
			if (elf && cut >= 4)
				fail_msg("%s cut at %zu parsed without error", rel, cut);
			ow_fatbin_free(fb);
		}
		free(copy);
	}
	free(bytes);
	free(path);
}

static void test_truncated_everywhere(void **state)
{
	(void)state;
	cut_everywhere("fatbin/uncompressed.so", 1);
	cut_everywhere("fatbin/pe_fatbin.dll", 0);
	cut_everywhere("fatbin/blob.bin", 0);
}

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

struct elf_case {
	const char *what;
	size_t at;      /* 0: patch the ELF header; else relative to .nv_fatbin */
	int width;      /* 2, 4 or 8 */
	uint64_t value;
	int in_fatbin;
	int want;       /* expected rc */
};

static void run_elf_case(const unsigned char *orig, size_t len, uint64_t fat_off,
			 const struct elf_case *c)
{
	unsigned char *b = malloc(len);
	assert_non_null(b);
	memcpy(b, orig, len);
	unsigned char *p = b + c->at + (c->in_fatbin ? fat_off : 0);
	if (c->width == 2) {
		p[0] = (unsigned char)c->value;
		p[1] = (unsigned char)(c->value >> 8);
	} else if (c->width == 4) {
		put32(p, (uint32_t)c->value);
	} else {
		put64(p, c->value);
	}
	struct ow_fatbin *fb = NULL;
	int rc = ow_fatbin_scan_buffer(b, len, 0, &fb);
	if (rc != c->want)
		fail_msg("%s: rc %s (%s), expected %s", c->what, ow_err_name(rc), ow_err_detail(),
			 ow_err_name(c->want));
	if (rc)
		assert_true(strlen(ow_err_detail()) > 10);
	ow_fatbin_free(fb);
	free(b);
}

static void test_hostile_elf_and_containers(void **state)
{
	(void)state;
	char *path = tu_fixture("fatbin/uncompressed.so");
	size_t len;
	unsigned char *bytes = (unsigned char *)tu_read_file(path, &len);
	struct ow_fatbin *fb;
	assert_int_equal(ow_fatbin_scan_buffer(bytes, len, 0, &fb), 0);
	assert_int_equal(fb->n_modules, 1);
	uint64_t fat = fb->modules[0].offset;
	uint64_t e0 = fb->entries[0].offset - fat;
	ow_fatbin_free(fb);
	const struct elf_case cases[] = {
		{"shoff past EOF", 0x28, 8, 0xFFFFFFFFFFFFFFF0ull, 0, OW_EPARSE},
		{"shoff just past EOF", 0x28, 8, 0, 0, OW_OK}, /* no section headers */
		{"shentsize too small", 0x3A, 2, 8, 0, OW_EPARSE},
		{"shentsize * shnum overflows", 0x3A, 2, 0xFFFF, 0, OW_EPARSE},
		{"shnum too large", 0x3C, 2, 0xFFFE, 0, OW_EPARSE},
		{"shstrndx out of range", 0x3E, 2, 0xFFFE, 0, OW_EPARSE},
		{"ELF32", 4, 2, 0x0101, 0, OW_EUNSUPPORTED},
		{"container body overflows", 8, 8, 0xFFFFFFFFFFFFFFF8ull, 1, OW_EPARSE},
		{"container body past section", 8, 8, 0x100000, 1, OW_EPARSE},
		{"container version", 4, 2, 7, 1, OW_EPARSE},
		{"container header size", 6, 2, 8, 1, OW_EPARSE},
		{"bad magic in .nv_fatbin", 0, 4, 0x12345678, 1, OW_EPARSE},
		{"zeroed magic, size left", 0, 8, 0, 1, OW_EPARSE},
		{"entry header size < 64", e0 + 4, 4, 16, 1, OW_EPARSE},
		{"entry header size huge", e0 + 4, 4, 0xFFFFFFFF, 1, OW_EPARSE},
		{"entry payload past container", e0 + 8, 8, 0x7FFFFFFFFFFFFFFFull, 1, OW_EPARSE},
		{"entry payload overflows", e0 + 8, 8, 0xFFFFFFFFFFFFFFC0ull, 1, OW_EPARSE},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		run_elf_case(bytes, len, fat, &cases[i]);
	/* 16 zero bytes where a container starts: padding, the walk ends */
	unsigned char *z = malloc(len);
	assert_non_null(z);
	memcpy(z, bytes, len);
	memset(z + fat, 0, 16);
	assert_int_equal(ow_fatbin_scan_buffer(z, len, 0, &fb), 0);
	assert_int_equal(fb->n_modules, 0);
	ow_fatbin_free(fb);
	free(z);
	/* a section whose offset lies past EOF: patch .nv_fatbin's section
	 * header, found by its offset value */
	uint64_t shoff = 0;
	for (int i = 0; i < 8; i++)
		shoff |= (uint64_t)bytes[0x28 + i] << (8 * i);
	unsigned shnum = bytes[0x3C] | bytes[0x3D] << 8;
	int patched = 0;
	for (unsigned i = 0; i < shnum; i++) {
		unsigned char *sh = bytes + shoff + 64 * i;
		uint64_t off = 0;
		for (int k = 0; k < 8; k++)
			off |= (uint64_t)sh[0x18 + k] << (8 * k);
		if (off == fat) {
			put64(sh + 0x18, (uint64_t)len + 8);
			patched = 1;
		}
	}
	assert_true(patched);
	assert_int_equal(ow_fatbin_scan_buffer(bytes, len, 0, &fb), OW_EPARSE);
	assert_non_null(strstr(ow_err_detail(), ".nv_fatbin"));
	free(bytes);
	free(path);
}

static void test_scan_skips_false_magic(void **state)
{
	(void)state;
	/* magics with invalid headers, unaligned magics, then one valid empty
	 * container and an entry-less one cut short */
	unsigned char b[128] = {0};
	put32(b + 0, 0xBA55ED50); /* version 0: invalid */
	put32(b + 20, 0xBA55ED50); /* unaligned: ignored */
	put32(b + 32, 0xBA55ED50);
	b[36] = 1, b[38] = 16; /* valid, body 0 */
	put32(b + 48, 0xBA55ED50);
	b[52] = 1, b[54] = 16;
	put64(b + 56, 64); /* body runs past the end */
	struct ow_fatbin *fb;
	assert_int_equal(ow_fatbin_scan_buffer(b, 112, 0, &fb), 0);
	assert_int_equal(fb->format, OW_FB_FMT_RAW);
	assert_int_equal(fb->n_modules, 1);
	assert_int_equal(fb->modules[0].offset, 32);
	assert_int_equal(fb->modules[0].count, 0);
	assert_int_equal(fb->n_false_magic, 2);
	char line[64];
	assert_int_equal(ow_fatbin_module_format(fb, &fb->modules[0], line, sizeof line), 0);
	assert_string_equal(line, "empty");
	ow_fatbin_free(fb);
}

/* ---- device code outside host libraries: cubin e_flags, .nv.compat, PTX -- */

static void hex_bytes(const char *hex, uint8_t *out, size_t n)
{
	assert_int_equal(strlen(hex), 2 * n);
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
}

/* The first 64 bytes of real cubins, as their files hold them. */
static void test_cubin_header_real(void **state)
{
	(void)state;
	static const struct {
		const char *head, *tail;
		uint16_t arch;
		char variant;
	} cases[] = {
		/* flashinfer-cubin 0.6.9 fmhaSm100aKernel_QkBfloat16..., toolkit 12.9 */
		{"7f454c460201014108000000000000000200be00010000000000000000000000",
		 "18cd01000000000018c30100000000000a640006400038000600400028000100", 100, 'a'},
		/* flashinfer-cubin 0.6.9 fmhaSm103aKernel_QkBfloat16..., toolkit 12.9 */
		{"7f454c460201014108000000000000000200be00010000000000000000000000",
		 "98cc01000000000098c20100000000000a670006400038000600400028000100", 103, 'a'},
		/* flashinfer-cubin 0.6.9 fmhaSm100aKernel_QE4m3...Causal..., toolkit 12.9 */
		{"7f454c460201014108000000000000000200be00010000000000000000000000",
		 "000000000000000040000000000000000c640010400038000000400018000200", 100, 'a'},
		/* flashinfer-cubin 0.6.9 Gemm_..._sm100f (f is not in the cubin) */
		{"7f454c460201014108000000000000000200be00010000000000000000000000",
		 "60c000000000000060b600000000000002640006400038000600400028000100", 100, 0},
		/* bitsandbytes 0.50.2 libbitsandbytes_cuda118 sm_90, ELF ABI 7 */
		{"7f454c460201013307000000000000000200be00760000000000000000000000",
		 "40b221000000000080ed2000000000005a055a00400038000400400013030100", 90, 0},
		/* bitsandbytes 0.50.2 libbitsandbytes_cuda118 sm_60, ELF ABI 7 */
		{"7f454c460201013307000000000000000200be00760000000000000000000000",
		 "00b91a000000000080d81900000000003c053c00400038000400400082030100", 60, 0},
		/* bitsandbytes 0.50.2 libbitsandbytes_cuda128 sm_120, toolkit 12.8 */
		{"7f454c460201014108000000000000000200be00010000000000000000000000",
		 "409c2c0000000000001b2b000000000002780006400038000600400005060100", 120, 0},
		/* nvcc 13.0 -arch=sm_90a: the a is in .nv.compat only */
		{"7f454c460201014108000000000000000200be00010000000000000000000000",
		 "580d0000000000009809000000000000045a000640003800050040000f000100", 90, 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		uint8_t h[64];
		uint16_t arch = 0;
		char variant = 'x';
		hex_bytes(cases[i].head, h, 32);
		hex_bytes(cases[i].tail, h + 32, 32);
		assert_true(ow_fatbin_is_cubin(h, sizeof h));
		assert_int_equal(ow_fatbin_cubin_arch(h, sizeof h, &arch, &variant), 0);
		if (arch != cases[i].arch || variant != cases[i].variant)
			fail_msg("case %zu: sm_%u%c, want sm_%u%c", i, arch, variant ? variant : ' ',
				 cases[i].arch, cases[i].variant ? cases[i].variant : ' ');
		/* a host ELF (e_machine x86-64) is no cubin; an unknown ABI is refused */
		h[18] = 62;
		assert_false(ow_fatbin_is_cubin(h, sizeof h));
		h[18] = 190, h[8] = 9;
		assert_int_equal(ow_fatbin_cubin_arch(h, sizeof h, &arch, &variant), OW_EUNSUPPORTED);
	}
	ow_err_clear();
}

/* .nv.compat of real cubins: nvcc 13.0 writes the a as attribute 9. */
static void test_cubin_compat_real(void **state)
{
	(void)state;
	static const struct {
		const char *hex;
		int arch_specific;
	} cases[] = {
		/* nvcc 13.0 -arch=sm_90a, -arch=sm_90, -arch=sm_120 */
		{"020901000202010002050500030701010203000002060100040b08000000000000000000", 1},
		{"020900000202010002050500030701010203000002060100040b08000000000000000000", 0},
		{"020900000202010002050500030701010203000002060100040b08005000000000000000", 0},
		/* flashinfer-cubin 0.6.9 fmhaSm100aKernel (toolkit 12.9: the a is in e_flags) */
		{"02020300020505000203010002060100", 0},
		/* cut inside a format-4 attribute; an unknown format stops the walk */
		{"040b0800090000", 0},
		{"07090100020901", 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		uint8_t b[64];
		size_t n = strlen(cases[i].hex) / 2;
		hex_bytes(cases[i].hex, b, n);
		assert_int_equal(ow_fatbin_compat_arch_specific(b, n), cases[i].arch_specific);
		for (size_t cut = 0; cut < n; cut++) /* every prefix reads inside its bytes */
			(void)ow_fatbin_compat_arch_specific(b, cut);
	}
}

static void test_ptx_header(void **state)
{
	(void)state;
	/* the start of nvcc 13.0's own PTX (tests/fixtures/fatbin/ptx_sm90a.bin) */
	size_t len;
	char *dir = tu_fixture("fatbin"), *path, *ptx;
	assert_true(asprintf(&path, "%s/ptx_sm90a.bin", dir) > 0);
	assert_non_null(ptx = tu_read_file(path, &len));
	struct ow_fatbin_entry e;
	assert_int_equal(ow_fatbin_ptx_header(ptx, len, &e), 0);
	assert_int_equal(e.kind, OW_FB_PTX);
	assert_int_equal(e.arch, 90);
	assert_int_equal(e.variant, 'a');
	assert_int_equal(e.ver_major, 9);
	assert_int_equal(e.ver_minor, 0);
	assert_int_equal(e.kernels, -1);
	free(ptx), free(path), free(dir);
	static const struct {
		const char *text;
		int ok;
		uint16_t arch, major, minor;
		char variant;
	} cases[] = {
		{"/* a */ // b\n\t.version 8.7\r\n.target sm_100f, debug\n", 1, 100, 8, 7, 'f'},
		{".version 7.0\n.target sm_75\n.address_size 64\n", 1, 75, 7, 0, 0},
		{".target sm_75\n.version 7.0\n", 0, 0, 0, 0, 0},
		{".version 7\n.target sm_75\n", 0, 0, 0, 0, 0},
		{".version 7.0\n.target compute_75\n", 0, 0, 0, 0, 0},
		{".version 7.0\n.target sm_\n", 0, 0, 0, 0, 0},
		{".version 7.0\n.target sm_75x\n", 0, 0, 0, 0, 0},
		{".versions 7.0\n.target sm_75\n", 0, 0, 0, 0, 0},
		{"/* never closed .version 7.0\n.target sm_75\n", 0, 0, 0, 0, 0},
		{"\x7f" "ELF", 0, 0, 0, 0, 0},
		{"", 0, 0, 0, 0, 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		size_t n = strlen(cases[i].text);
		int rc = ow_fatbin_ptx_header(cases[i].text, n, &e);
		if ((rc == 0) != cases[i].ok)
			fail_msg("case %zu: rc %d: %s", i, rc, cases[i].text);
		if (!cases[i].ok)
			continue;
		assert_int_equal(e.arch, cases[i].arch);
		assert_int_equal(e.variant, cases[i].variant);
		assert_int_equal(e.ver_major, cases[i].major);
		assert_int_equal(e.ver_minor, cases[i].minor);
	}
	ow_err_clear();
}

/* The archive fixture's fatbins sit at offsets that are not 8-aligned; the
 * stripped library says it had no section headers. */
static void test_archive_and_stripped(void **state)
{
	(void)state;
	char *dir = tu_fixture("fatbin"), *path;
	struct ow_fatbin *fb;
	assert_true(asprintf(&path, "%s/archive.bin", dir) > 0);
	assert_int_equal(ow_fatbin_read_file(path, 0, &fb), 0);
	assert_int_equal(fb->format, OW_FB_FMT_AR);
	assert_int_equal(fb->n_modules, 2);
	assert_int_not_equal(fb->modules[0].offset % 8, 0);
	assert_int_equal(fb->modules[1].relocatable, 1);
	ow_fatbin_free(fb);
	free(path);
	assert_true(asprintf(&path, "%s/noshdr.so", dir) > 0);
	assert_int_equal(ow_fatbin_read_file(path, 0, &fb), 0);
	assert_int_equal(fb->format, OW_FB_FMT_ELF);
	assert_int_equal(fb->no_section_headers, 1);
	assert_int_equal(fb->n_modules, 1);
	assert_int_equal(fb->modules[0].scanned, 1);
	ow_fatbin_free(fb);
	free(path);
	assert_true(asprintf(&path, "%s/cubin_sm90a.bin", dir) > 0);
	assert_int_equal(ow_fatbin_read_file(path, 0, &fb), 0);
	assert_int_equal(fb->format, OW_FB_FMT_CUBIN);
	assert_int_equal(fb->entries[0].kernels, 1); /* from its section headers */
	assert_true(fb->bytes_read < 2048);          /* headers only */
	ow_fatbin_free(fb);
	free(path);
	free(dir);
}

/* ---- the real CUDA libraries of this machine ----------------------------- */

static int has_name(const struct ow_fatbin *fb, const char *want)
{
	char name[32];
	for (size_t i = 0; i < fb->n_entries; i++) {
		ow_fatbin_entry_name(&fb->entries[i], name, sizeof name);
		if (!strcmp(name, want))
			return 1;
	}
	return 0;
}

static void test_real_cublas(void **state)
{
	(void)state;
	struct ow_fatbin *fb;
	struct stat st;
	if (stat(CUDA_LIB "/libcublas.so.13", &st) != 0) {
		print_message("skipped: " CUDA_LIB "/libcublas.so.13 not present\n");
		skip();
	}
	assert_int_equal(ow_fatbin_read_file(CUDA_LIB "/libcublas.so.13", 0, &fb), 0);
	static const char *const want[] = {"sm_75", "sm_80", "sm_86", "sm_90", "sm_100",
					   "sm_120", "compute_120"};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		if (!has_name(fb, want[i]))
			fail_msg("libcublas.so.13 lacks %s", want[i]);
	/* nothing else */
	char name[32];
	for (size_t i = 0; i < fb->n_entries; i++) {
		ow_fatbin_entry_name(&fb->entries[i], name, sizeof name);
		int known = 0;
		for (size_t k = 0; k < sizeof want / sizeof want[0]; k++)
			known |= !strcmp(name, want[k]);
		if (!known)
			fail_msg("libcublas.so.13: unexpected %s", name);
	}
	assert_int_equal(fb->n_modules, 193);
	assert_int_equal(fb->n_entries, 1257);
	/* headers only: a file read touches far less than the file */
	assert_true(fb->bytes_read < (uint64_t)st.st_size / 100);
	ow_fatbin_free(fb);
}

static int is_lib(const char *name)
{
	return strstr(name, ".so") != NULL;
}

static void test_real_libraries_parse(void **state)
{
	(void)state;
	DIR *d = opendir(CUDA_LIB);
	if (!d) {
		print_message("skipped: " CUDA_LIB " not present\n");
		skip();
	}
	struct dirent *de;
	int n = 0, cudnn = 0;
	while ((de = readdir(d))) {
		char *path;
		struct stat st;
		assert_true(asprintf(&path, "%s/%s", CUDA_LIB, de->d_name) > 0);
		if (!is_lib(de->d_name) || lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
			free(path);
			continue;
		}
		struct ow_fatbin *fb;
		int rc = ow_fatbin_read_file(path, 0, &fb);
		if (rc)
			fail_msg("%s: %s", path, ow_err_detail());
		/* every cudnn library with code has sm_90a; only the precompiled
		 * engines also carry plain sm_90, the others none at all */
		if (!strncmp(de->d_name, "libcudnn", 8) && fb->n_entries) {
			int precompiled = strstr(de->d_name, "engines_precompiled") != NULL;
			if (!has_name(fb, "sm_90a") || has_name(fb, "sm_90") != precompiled)
				fail_msg("%s: expected sm_90a and %s plain sm_90", de->d_name,
					 precompiled ? "also" : "no");
			cudnn++;
		}
		ow_fatbin_free(fb);
		free(path);
		n++;
	}
	closedir(d);
	print_message("%d libraries parsed, %d cudnn libraries with fatbins\n", n, cudnn);
	assert_true(n > 0);
	if (cudnn == 0)
		print_message("note: no libcudnn with fatbins found in " CUDA_LIB "\n");
}

static void test_real_data_scan(void **state)
{
	(void)state;
	struct stat st;
	if (stat(CUDA_LIB "/libcufft.so.12", &st) != 0) {
		print_message("skipped: " CUDA_LIB "/libcufft.so.12 not present\n");
		skip();
	}
	struct ow_fatbin *fb;
	assert_int_equal(ow_fatbin_read_file(CUDA_LIB "/libcufft.so.12", 0, &fb), 0);
	size_t plain = fb->n_modules;
	ow_fatbin_free(fb);
	assert_int_equal(ow_fatbin_read_file(CUDA_LIB "/libcufft.so.12", OW_FATBIN_SCAN_DATA, &fb), 0);
	size_t ldata = 0;
	for (size_t i = 0; i < fb->n_modules; i++)
		ldata += strcmp(fb->modules[i].section, ".ldata") == 0 && fb->modules[i].scanned;
	print_message("libcufft.so.12: %zu modules in .nv_fatbin, %zu found in .ldata\n", plain, ldata);
	assert_int_equal(plain, 1);
	assert_true(ldata > 1000);
	ow_fatbin_free(fb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixtures_match_expect),
		cmocka_unit_test(test_torch_fixture_details),
		cmocka_unit_test(test_kernel_less_module),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_truncated_everywhere),
		cmocka_unit_test(test_hostile_elf_and_containers),
		cmocka_unit_test(test_scan_skips_false_magic),
		cmocka_unit_test(test_cubin_header_real),
		cmocka_unit_test(test_cubin_compat_real),
		cmocka_unit_test(test_ptx_header),
		cmocka_unit_test(test_archive_and_stripped),
		cmocka_unit_test(test_real_cublas),
		cmocka_unit_test(test_real_libraries_parse),
		cmocka_unit_test(test_real_data_scan),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
