/* test_audit.c - audits of fixture libraries, wheels built here, directory
 * walks, the index cache and its text format; real CUDA libraries when this
 * machine has them. */
#include "testutil.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auditint.h"
#include "offwheel/audit.h"
#include "db.h"
#include "offwheel/error.h"
#include "store.h"
#include "wheel.h"

#define CUDA_LIB "/usr/local/cuda/lib64"

static const char *const fixtures[] = {
	"arch_af", "arch_new", "dlink", "libtorch_cuda_cu126", "libtorch_cuda_cu128", "lto", "lz4",
	"ptx_only", "rdc", "sass_only", "sass_ptx", "sm120_only", "uncompressed", "zstd",
};

static char *fixture_so(const char *base)
{
	char rel[256];
	snprintf(rel, sizeof rel, "fatbin/%s.so", base);
	return tu_fixture(rel);
}

static void copy_file(const char *from, const char *to)
{
	size_t len;
	char *data = tu_read_file(from, &len);
	assert_non_null(data);
	assert_int_equal(tu_write_file(to, data, len), 0);
	free(data);
}

/* OUT from the given MEMBER=SOURCE specs (tests/tools/mkwheel_members.py). */
static void make_wheel(const char *out, const char *specs)
{
	const char *src = getenv("OW_SOURCE_DIR");
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "python3 %s/tests/tools/mkwheel_members.py '%s' %s",
	         src ? src : ".", out, specs);
	assert_int_equal(system(cmd), 0);
}

static char *torch_wheel(const char *dir, const char *variant, const char *extra)
{
	char *out, *so = NULL, specs[2048];
	assert_true(asprintf(&out, "%s/torch-2.7.0+%s-cp312-cp312-linux_x86_64.whl", dir, variant) > 0);
	char base[64];
	snprintf(base, sizeof base, "libtorch_cuda_%s", variant);
	so = fixture_so(base);
	snprintf(specs, sizeof specs, "torch/lib/libtorch_cuda.so=%s %s", so, extra ? extra : "");
	make_wheel(out, specs);
	free(so);
	return out;
}

static const struct ow_audit_lib *find_lib(const struct ow_audit *a, const char *path)
{
	for (size_t i = 0; i < a->n_libs; i++)
		if (!strcmp(a->libs[i].path, path))
			return &a->libs[i];
	fail_msg("no library %s in the audit of %s", path, a->label);
	return NULL;
}

static int verdict_for(const struct ow_audit *a, int cc, int *fatal)
{
	struct ow_audit_result r;
	assert_int_equal(ow_audit_verdict(a, cc, 0, &r), 0);
	if (fatal)
		*fatal = r.fatal;
	return r.verdict;
}

/* The module listing as in the .expect files. */
static char *listing(const struct ow_fatbin *fb)
{
	size_t cap = 256 + fb->n_modules * 1024, at = 0;
	char *out = calloc(1, cap), line[4096];
	assert_non_null(out);
	for (size_t i = 0; i < fb->n_modules; i++) {
		assert_int_equal(ow_fatbin_module_format(fb, &fb->modules[i], line, sizeof line), 0);
		at += (size_t)snprintf(out + at, cap - at, "%s %d%d: %s\n", fb->modules[i].section,
		                       fb->modules[i].relocatable, fb->modules[i].scanned, line);
		assert_true(at < cap);
	}
	return out;
}

/* ---- libraries ------------------------------------------------------------------ */

/* Every fixture: the audit lists what fatbin.h lists, and the cache text
 * gives back the same listing and the same verdict on every device. */
static void test_fixtures_listing_and_roundtrip(void **state)
{
	(void)state;
	static const int ccs[] = {75, 80, 86, 90, 100, 103, 110, 120, 121};
	for (size_t i = 0; i < sizeof fixtures / sizeof *fixtures; i++) {
		char *so = fixture_so(fixtures[i]), *text;
		struct ow_audit *a;
		struct ow_fatbin *direct, *back;
		assert_int_equal(ow_audit_path(so, NULL, &a), 0);
		assert_int_equal(a->kind, OW_AUDIT_LIBRARY);
		assert_int_equal(a->n_libs, 1);
		assert_int_equal(ow_fatbin_read_file(so, 0, &direct), 0);
		char *l1 = listing(a->libs[0].fb), *l2 = listing(direct);
		assert_string_equal(l1, l2);
		assert_int_equal(ow_audit_encode(a->libs[0].fb, &text), 0);
		assert_int_equal(ow_audit_decode(text, strlen(text), &back), 0);
		char *l3 = listing(back);
		assert_string_equal(l1, l3);
		for (size_t k = 0; k < sizeof ccs / sizeof *ccs; k++) {
			struct ow_gpu_library_verdict v1, v2;
			assert_int_equal(ow_gpu_library_verdict(direct, ccs[k], 12080, &v1), 0);
			assert_int_equal(ow_gpu_library_verdict(back, ccs[k], 12080, &v2), 0);
			assert_memory_equal(&v1, &v2, sizeof v1);
		}
		free(l1), free(l2), free(l3), free(text), free(so);
		ow_fatbin_free(direct), ow_fatbin_free(back);
		ow_audit_free(a);
	}
}

static void test_torch_fixture_summaries(void **state)
{
	(void)state;
	static const struct {
		const char *fixture, *sass, *ptx;
		int v75, v86, v120;
	} cases[] = {
		{"libtorch_cuda_cu126", "sm_75 sm_80 sm_86 sm_90", "", OW_AUDIT_NATIVE, OW_AUDIT_NATIVE,
		 OW_AUDIT_NONE},
		{"libtorch_cuda_cu128", "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120", "compute_120@9.0",
		 OW_AUDIT_NATIVE, OW_AUDIT_NATIVE, OW_AUDIT_NATIVE},
		{"sm120_only", "sm_120", "", OW_AUDIT_NONE, OW_AUDIT_NONE, OW_AUDIT_NATIVE},
		{"ptx_only", "", "compute_75@9.0", OW_AUDIT_JIT, OW_AUDIT_JIT, OW_AUDIT_JIT},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *so = fixture_so(cases[i].fixture);
		struct ow_audit *a;
		struct ow_audit_summary s;
		assert_int_equal(ow_audit_path(so, NULL, &a), 0);
		ow_audit_lib_summary(&a->libs[0], &s);
		assert_string_equal(s.sass, cases[i].sass);
		if (strcmp(cases[i].fixture, "ptx_only"))
			assert_string_equal(s.ptx, cases[i].ptx);
		else
			assert_non_null(strstr(s.ptx, "compute_"));
		assert_int_equal(verdict_for(a, 75, NULL), cases[i].v75);
		assert_int_equal(verdict_for(a, 86, NULL), cases[i].v86);
		assert_int_equal(verdict_for(a, 120, NULL), cases[i].v120);
		assert_int_equal(a->libs[0].scanned, 0); /* small: no data scan */
		ow_audit_free(a);
		free(so);
	}
}

static void test_names(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		int candidate, vendor;
	} cases[] = {
		{"torch/lib/libtorch_cuda.so", 1, 0},
		{"torchvision/_C.so", 1, 0},
		{"torch/lib/libc10_cuda.so", 1, 0},
		{"nvidia/cublas/lib/libcublas.so.12", 1, 1},
		{"torchvision.libs/libnvjpeg.8dd2b5e6.so.12", 1, 1},
		{"torchvision.libs/libpng16.c2edc9e1.so.16", 1, 1},
		{"torch/lib/libcudnn_ops.so.9.1.0", 1, 1},
		{"torch/lib/torch_cuda.dll", 1, 0},
		{"mod/_ext.cp312-win_amd64.pyd", 1, 0},
		{"kern/k.cubin", 1, 0},
		{"kern/k.FATBIN", 1, 0},
		{"lib/libfoo.dylib", 1, 0},
		{"torch/__init__.py", 0, 0},
		{"torch/lib/libtorch.a", 1, 0}, /* static archives hold fatbins too */
		{"pkg/obj/k.o", 1, 0},          /* relocatable objects: link-time code */
		{"triton/backends/x/libcupti.so.2026.2.0", 1, 1}, /* NVIDIA's by name */
		{"pkg/lib/libcudadevrt.a", 1, 1},
		{"flashinfer_cubin/cubins/k_sm100f.cubin", 1, 0},
		{"kern/k_sm90a.ptx", 1, 0},
		{"torch/include/c10/some.so.h", 0, 0},
		{"torch/lib/libx.so.abc", 0, 0},
		{"nvidia/README.md", 0, 1},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		assert_int_equal(ow_audit_is_candidate(cases[i].name), cases[i].candidate);
		assert_int_equal(ow_audit_is_vendor(cases[i].name), cases[i].vendor);
	}
}

static void test_decode_rejects(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"",
		"owaudit",
		"owaudit 1 1\n", /* format 1: read again, never trusted */
		"owaudit 2 1\n", /* format 2: compressed modules were never looked into */
		"owaudit 3 1\n", /* format 3: no cubin/PTX/archive formats, no header flag */
		"owaudit 4 1 -\n", /* format 4: no SONAME */
		"owaudit 6 1 -\n",
		"owaudit 5 9 -\n",
		"owaudit 5 1 - \n",          /* an empty SONAME */
		"owaudit 5 1 - lib cu.so\n", /* not one word */
		"owaudit 5 1 - libcu.so",    /* no end of line */
		"owaudit 5 1 -libcu.so\n",
		"owaudit 5 1\n",
		"owaudit 5 1 x\n",
		"owaudit 5 1 -h\n",
		"owaudit 5 1 oh\n", /* "ho" is the one order */
		"owaudit 5 1 hh\n",
		"owaudit 3 1\n0 .nv_fatbin - 2:75:7.5:0\n",
		"owaudit 5 1 -\n1 .nv_fatbin - 2:75:7.5:0",
		"owaudit 5 1 -\n1 .nv_fatbin x 2:75:7.5:0\n",
		"owaudit 5 1 -\n1 .nv_fatbin - 2:75b:7.5:0\n",
		"owaudit 5 1 -\n1 .nv_fatbin - 2:75:7.5:9\n",
		"owaudit 5 1 -\n1 .nv_fatbin - 2:75:7:0\n",
		"owaudit 5 1 -\n1 .nv_fatbin - 2:99999999:7.5:0\n",
		"owaudit 5 1 -\n1 .nv_fatbin -  2:75:7.5:0\n",
		"owaudit 5 1 -\n1000001 .nv_fatbin -\n",
		"owaudit 5 1 -\n600000 a -\n600000 b -\n",
		"owaudit 5 1 -\n1 .nv_fatbin\n",
		"owaudit 5 1 -\n1  -\n",
		"owaudit 5 1 -\n18446744073709551617 .nv_fatbin -\n",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct ow_fatbin *fb = (struct ow_fatbin *)1;
		int rc = ow_audit_decode(bad[i], strlen(bad[i]), &fb);
		if (rc != OW_EPARSE)
			fail_msg("case %zu accepted: %s", i, bad[i]);
		assert_null(fb);
	}
	struct ow_fatbin *fb;
	const char *good = "owaudit 5 1 -\n3 .nv_fatbin - 2:90a:9.0:2 1:120:9.0:2\n1 __nv_relfatbin r\n"
	                   "2 .nv_fatbin k 2:75:8.0:0\n";
	assert_int_equal(ow_audit_decode(good, strlen(good), &fb), 0);
	assert_int_equal(fb->n_modules, 6);
	assert_int_equal(fb->n_entries, 3);
	assert_int_equal(fb->modules[2].count, 2);
	assert_int_equal(fb->entries[0].variant, 'a');
	assert_int_equal(fb->modules[3].relocatable, 1);
	assert_int_equal(fb->modules[4].no_kernels, 1);
	assert_int_equal(fb->modules[5].no_kernels, 1);
	assert_int_equal(fb->modules[2].no_kernels, 0);
	/* a kernel-less module is no-code on any device; the others decide */
	struct ow_gpu_library_verdict lv;
	assert_int_equal(ow_gpu_library_verdict(fb, 120, 0, &lv), 0);
	assert_int_equal(lv.n_skipped, 3); /* the rdc one and the two without kernels */
	char *again;
	assert_int_equal(ow_audit_encode(fb, &again), 0);
	assert_string_equal(again, good);
	free(again);
	ow_fatbin_free(fb);
	/* the SONAME a library calls itself (format 5), kept and read back */
	const char *named = "owaudit 5 1 - libcupti.so.13\n3 .rodata s 2:75:1.8:0\n";
	assert_int_equal(ow_audit_decode(named, strlen(named), &fb), 0);
	assert_string_equal(fb->soname, "libcupti.so.13");
	assert_true(ow_audit_is_vendor_lib("pkg/libprof.so", fb));
	assert_int_equal(ow_audit_encode(fb, &again), 0);
	assert_string_equal(again, named);
	free(again);
	ow_fatbin_free(fb);
	/* a relocatable object (ET_REL), with and without section headers */
	static const char *const objects[] = {"owaudit 5 1 o\n1 .nv_fatbin - 2:80:8.0:0\n",
	                                      "owaudit 5 1 ho\n"};
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(ow_audit_decode(objects[i], strlen(objects[i]), &fb), 0);
		assert_true(fb->object);
		assert_int_equal(fb->no_section_headers, i == 1);
		assert_int_equal(ow_audit_encode(fb, &again), 0);
		assert_string_equal(again, objects[i]);
		free(again);
		ow_fatbin_free(fb);
	}
}

/* ---- wheels --------------------------------------------------------------------- */

/* Compressed modules without kernels (nvcc -Xfatbin=-compress-all on a file
 * with only __device__ functions and __constant__ data) are found by
 * decompressing them, and decide no verdict; a compressed module with a
 * kernel still does. */
static void test_compressed_kernel_less(void **state)
{
	(void)state;
	static const struct {
		const char *lib;
		int cc;
		size_t code, empty;
		int verdict, fatal;
	} cases[] = {
		{"fatbin/nokernel_zstd.so", 75, 0, 1, OW_AUDIT_NO_CODE, 0},
		{"fatbin/nokernel_zstd.so", 120, 0, 1, OW_AUDIT_NO_CODE, 0},
		{"fatbin/nokernel_mixed.so", 75, 1, 1, OW_AUDIT_NONE, 1},
		{"fatbin/nokernel_mixed.so", 86, 1, 1, OW_AUDIT_NATIVE, 0},
		{"fatbin/zstd.so", 80, 2, 0, OW_AUDIT_NATIVE, 0},
		{"fatbin/lz4.so", 75, 2, 0, OW_AUDIT_NONE, 1},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *path = tu_fixture(cases[i].lib);
		/* every module opened (no device), then only what the device's
		 * verdict needs: the verdict is the same either way */
		for (int scoped = 0; scoped < 2; scoped++) {
			struct ow_audit_opts o = {.cc = scoped ? cases[i].cc : 0};
			struct ow_audit *a;
			assert_int_equal(ow_audit_path(path, &o, &a), 0);
			assert_int_equal(a->n_libs, 1);
			struct ow_audit_summary sum;
			ow_audit_lib_summary(&a->libs[0], &sum);
			struct ow_audit_result r;
			assert_int_equal(ow_audit_verdict(a, cases[i].cc, 0, &r), 0);
			/* scoped: an unopened native module counts as code, so the
			 * exact count lies between code - unchecked and code */
			if ((!scoped && sum.n_unchecked) ||
			    sum.n_code + sum.n_empty != cases[i].code + cases[i].empty ||
			    sum.n_code - sum.n_unchecked > cases[i].code ||
			    sum.n_code < cases[i].code || r.verdict != cases[i].verdict ||
			    r.fatal != cases[i].fatal)
				fail_msg("%s at %d%s: %zu code (%zu unchecked) %zu empty, verdict %s "
				         "fatal %d", cases[i].lib, cases[i].cc, scoped ? " scoped" : "",
				         sum.n_code, sum.n_unchecked, sum.n_empty,
				         ow_audit_verdict_name(r.verdict), r.fatal);
			ow_audit_free(a);
		}
		free(path);
	}
}

static void test_wheel_verdicts(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp();
	char *w126 = torch_wheel(dir, "cu126", NULL), *w128 = torch_wheel(dir, "cu128", NULL);
	struct ow_audit *a;
	int fatal;
	assert_int_equal(ow_audit_path(w126, NULL, &a), 0);
	assert_int_equal(a->kind, OW_AUDIT_WHEEL);
	assert_string_equal(a->label, "torch-2.7.0+cu126-cp312-cp312-linux_x86_64.whl");
	assert_int_equal(a->n_libs, 1);
	assert_int_equal(a->n_skipped, 4); /* __init__.py, METADATA, WHEEL, RECORD */
	find_lib(a, "torch/lib/libtorch_cuda.so");
	assert_int_equal(verdict_for(a, 120, &fatal), OW_AUDIT_NONE);
	assert_true(fatal);
	assert_int_equal(verdict_for(a, 86, &fatal), OW_AUDIT_NATIVE);
	assert_false(fatal);
	ow_audit_free(a);
	assert_int_equal(ow_audit_path(w128, NULL, &a), 0);
	assert_int_equal(verdict_for(a, 120, &fatal), OW_AUDIT_NATIVE);
	assert_false(fatal);
	assert_int_equal(verdict_for(a, 121, &fatal), OW_AUDIT_NATIVE); /* sm_120 runs on 12.1 */
	assert_int_equal(verdict_for(a, 103, &fatal), OW_AUDIT_NATIVE); /* sm_100 runs on 10.3 */
	assert_int_equal(verdict_for(a, 110, &fatal), OW_AUDIT_NONE);   /* no sm_11x, PTX too new */
	assert_true(fatal);
	ow_audit_free(a);
	free(w126), free(w128);
	tu_rmtree(dir);
	free(dir);
}

/* A wheel member the audit does not want is never inflated: its CRC is
 * broken, the full pass fails, the audit does not notice. */
static void test_wheel_skips_without_inflating(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp(), *notes, extra[1024], *so = fixture_so("sass_only");
	assert_true(asprintf(&notes, "%s/notes.txt", dir) > 0);
	char big[4096];
	memset(big, 'x', sizeof big);
	assert_int_equal(tu_write_file(notes, big, sizeof big), 0);
	snprintf(extra, sizeof extra, "torch/notes.txt=%s torch/lib/libvendor_sass.so.1=%s --corrupt "
	         "torch/notes.txt", notes, so);
	char *whl = torch_wheel(dir, "cu128", extra);
	int fd = open(whl, O_RDONLY);
	ow_wheel *w;
	assert_true(fd >= 0);
	assert_int_equal(ow_wheel_open_fd(fd, "t.whl", NULL, &w), 0);
	assert_int_equal(ow_wheel_each_member(w, NULL, NULL, NULL), OW_EZIP);
	ow_wheel_close(w);
	close(fd);
	struct ow_audit *a;
	assert_int_equal(ow_audit_path(whl, NULL, &a), 0);
	assert_int_equal(a->n_libs, 2);
	struct stat st;
	assert_int_equal(stat(so, &st), 0);
	const struct ow_audit_lib *l = find_lib(a, "torch/lib/libvendor_sass.so.1");
	assert_int_equal(l->size, (uint64_t)st.st_size);
	ow_audit_free(a);
	free(whl), free(notes), free(so);
	tu_rmtree(dir);
	free(dir);
}

/* ---- directories ------------------------------------------------------------------- */

static void test_directory_walk(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp(), p[4096], *so126 = fixture_so("libtorch_cuda_cu126"),
	     *so_ptx = fixture_so("ptx_only");
	snprintf(p, sizeof p, "%s/torch", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof p, "%s/torch/lib", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof p, "%s/torch/lib/libtorch_cuda.so", dir);
	copy_file(so126, p);
	snprintf(p, sizeof p, "%s/torch/lib/libjit.so.1", dir);
	copy_file(so_ptx, p);
	snprintf(p, sizeof p, "%s/torch/lib/liblink.so", dir);
	assert_int_equal(symlink("libtorch_cuda.so", p), 0);
	snprintf(p, sizeof p, "%s/torch/__init__.py", dir);
	assert_int_equal(tu_write_file(p, "#\n", 2), 0);
	snprintf(p, sizeof p, "%s/", dir);
	struct ow_audit *a;
	assert_int_equal(ow_audit_path(p, NULL, &a), 0);
	assert_int_equal(a->kind, OW_AUDIT_DIRECTORY);
	assert_int_equal(a->n_libs, 2); /* the symlink is not followed */
	assert_int_equal(a->n_skipped, 1);
	assert_string_equal(a->libs[0].path, "torch/lib/libjit.so.1");
	assert_string_equal(a->libs[1].path, "torch/lib/libtorch_cuda.so");
	int fatal;
	/* libjit runs through PTX, libtorch_cuda has nothing for 12.0 */
	assert_int_equal(verdict_for(a, 120, &fatal), OW_AUDIT_PARTIAL);
	assert_true(fatal);
	assert_int_equal(verdict_for(a, 86, &fatal), OW_AUDIT_JIT);
	assert_false(fatal);
	ow_audit_free(a);
	assert_int_equal(ow_audit_path("/nonexistent/offwheel-audit", NULL, &a), OW_ENOENT);
	free(so126), free(so_ptx);
	tu_rmtree(dir);
	free(dir);
}

/* ---- the store and the cache ------------------------------------------------------- */

static size_t count_rows(ow_store *s, const char *hex)
{
	ow_stmt *st = ow_db_stmt(ow_store_db(s), OW_SQL_AUDIT_ROWS);
	assert_non_null(st);
	assert_int_equal(ow_stmt_text(st, 1, hex), 0);
	size_t n = 0;
	while (ow_stmt_step(st) == 1)
		n++;
	return n;
}

static void put_file(ow_store *s, const char *path, const char *kind, char hex[OW_SHA256_HEX])
{
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(ow_store_put_fd(s, fd, NULL, kind, hex), 0);
	close(fd);
}

static void record_file(ow_store *s, const char *filename, const char *hex)
{
	char sql[1024];
	snprintf(sql, sizeof sql,
	         "INSERT INTO files(url, filename, project, version, python_tag, abi_tag, "
	         "platform_tag, variant, index_url, first_seen, last_seen, object_sha256) VALUES("
	         "'https://x/%s', '%s', 'torch', '2.7.0', 'cp312', 'cp312', 'linux_x86_64', 'cu126', "
	         "'https://x', 1, 1, '%s')", filename, filename, hex);
	assert_int_equal(ow_db_exec(ow_store_db(s), sql), 0);
}

static void test_store_object_cached(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp(), home[4096], hex[OW_SHA256_HEX], lhex[OW_SHA256_HEX];
	char *whl = torch_wheel(dir, "cu126", NULL), *so = fixture_so("sass_ptx");
	snprintf(home, sizeof home, "%s/home", dir);
	ow_store *s;
	assert_int_equal(ow_store_open(home, OW_STORE_WRITE, 5, "test", &s), 0);
	put_file(s, whl, "wheel", hex);
	put_file(s, so, "blob", lhex);
	record_file(s, "torch-2.7.0+cu126-cp312-cp312-linux_x86_64.whl", hex);

	struct ow_audit *a, *b;
	assert_int_equal(ow_audit_object(s, hex, NULL, &a), 0);
	assert_false(a->from_cache);
	assert_true(a->bytes_in > 0);
	assert_string_equal(a->sha256, hex);
	assert_string_equal(a->label, "torch-2.7.0+cu126-cp312-cp312-linux_x86_64.whl");
	assert_int_equal(count_rows(s, hex), 1);
	/* again, by file name: from the index, nothing read */
	assert_int_equal(ow_audit_object(s, "torch-2.7.0+cu126-cp312-cp312-linux_x86_64.whl", NULL,
	                                 &b), 0);
	assert_true(b->from_cache);
	assert_int_equal(b->bytes_in, 0);
	assert_int_equal(b->kind, OW_AUDIT_WHEEL);
	assert_int_equal(b->n_skipped, a->n_skipped);
	assert_int_equal(b->n_libs, a->n_libs);
	assert_string_equal(b->libs[0].path, a->libs[0].path);
	char *l1 = listing(a->libs[0].fb), *l2 = listing(b->libs[0].fb);
	assert_string_equal(l1, l2);
	assert_int_equal(verdict_for(b, 120, NULL), OW_AUDIT_NONE);
	assert_int_equal(verdict_for(b, 86, NULL), OW_AUDIT_NATIVE);
	free(l1), free(l2);
	ow_audit_free(a), ow_audit_free(b);

	/* another scan mode is another audit; --no-cache reads again */
	struct ow_audit_opts o = {.scan = OW_AUDIT_SCAN_ALWAYS};
	assert_int_equal(ow_audit_object(s, hex, &o, &a), 0);
	assert_false(a->from_cache);
	ow_audit_free(a);
	o.no_cache = 1;
	assert_int_equal(ow_audit_object(s, hex, &o, &a), 0);
	assert_false(a->from_cache);
	ow_audit_free(a);

	/* a library object; the cache goes with the object */
	assert_int_equal(ow_audit_object(s, lhex, NULL, &a), 0);
	assert_int_equal(a->kind, OW_AUDIT_LIBRARY);
	assert_string_equal(a->libs[0].path, lhex);
	ow_audit_free(a);
	assert_int_equal(ow_audit_object(s, lhex, NULL, &a), 0);
	assert_true(a->from_cache);
	assert_int_equal(a->kind, OW_AUDIT_LIBRARY);
	ow_audit_free(a);
	assert_int_equal(ow_store_remove(s, lhex), 0);
	assert_int_equal(count_rows(s, lhex), 0);

	assert_int_equal(ow_audit_object(s, "nothing-1.0-py3-none-any.whl", NULL, &a), OW_ENOENT);
	assert_int_equal(ow_audit_object(s, lhex, NULL, &a), OW_ENOENT);
	assert_int_equal(ow_audit_any(s, whl, NULL, &a), 0); /* a path wins */
	assert_false(a->from_cache);
	ow_audit_free(a);
	ow_store_close(s);
	free(whl), free(so);
	tu_rmtree(dir);
	free(dir);
}

/* ---- real CUDA libraries ----------------------------------------------------------- */

static int have(const char *path)
{
	if (access(path, R_OK) == 0)
		return 1;
	printf("# skipped: %s not present\n", path);
	return 0;
}

static void test_real_cublas(void **state)
{
	(void)state;
	if (!have(CUDA_LIB "/libcublas.so.13"))
		return;
	struct ow_audit *a;
	struct ow_audit_summary s;
	assert_int_equal(ow_audit_path(CUDA_LIB "/libcublas.so.13", NULL, &a), 0);
	ow_audit_lib_summary(&a->libs[0], &s);
	assert_string_equal(s.sass, "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120");
	assert_string_equal(s.ptx, "compute_120@9.0");
	assert_int_equal(s.n_modules, 193);
	assert_true(a->libs[0].vendor);
	assert_int_equal(verdict_for(a, 120, NULL), OW_AUDIT_NATIVE);
	assert_true(a->bytes_in < 4u << 20); /* headers only */
	ow_audit_free(a);
}

/* libcufft keeps its code in .ldata: the auto rule scans it. */
static void test_real_cufft_data_scan(void **state)
{
	(void)state;
	if (!have(CUDA_LIB "/libcufft.so.12"))
		return;
	struct ow_audit *a;
	struct ow_audit_opts never = {.scan = OW_AUDIT_SCAN_NEVER};
	assert_int_equal(ow_audit_path(CUDA_LIB "/libcufft.so.12", &never, &a), 0);
	assert_int_equal(a->libs[0].fb->n_modules, 1);
	assert_false(a->libs[0].scanned);
	ow_audit_free(a);
	assert_int_equal(ow_audit_path(CUDA_LIB "/libcufft.so.12", NULL, &a), 0);
	assert_true(a->libs[0].scanned);
	assert_true(a->libs[0].fb->n_modules > 1000);
	assert_int_equal(verdict_for(a, 120, NULL), OW_AUDIT_NATIVE); /* vendor partial */
	ow_audit_free(a);
	if (!have(CUDA_LIB "/libcublasLt.so.13"))
		return;
	assert_int_equal(ow_audit_path(CUDA_LIB "/libcublasLt.so.13", NULL, &a), 0);
	assert_false(a->libs[0].scanned); /* .nv_fatbin is a quarter of it */
	ow_audit_free(a);
}

/* Every CUDA library of this machine audits, as a directory. */
static void test_real_cuda_dir(void **state)
{
	(void)state;
	if (!have(CUDA_LIB))
		return;
	struct ow_audit *a;
	assert_int_equal(ow_audit_path(CUDA_LIB, NULL, &a), 0);
	assert_true(a->n_libs >= 10);
	/* Every NVIDIA library runs on 12.0.  libcufftw's one module is an sm_75
	 * cubin of 1.9 kB without a kernel (no .text.* section): no-code, not
	 * "no image" (it was reported fatal before the cubin was read). */
	for (size_t i = 0; i < a->n_libs; i++) {
		struct ow_audit_lib_verdict lv;
		assert_int_equal(ow_audit_lib_verdict(&a->libs[i], 120, 0, &lv), 0);
		if (lv.fatal)
			fail_msg("%s cannot run on 12.0", a->libs[i].path);
		if (strstr(a->libs[i].path, "libcufftw"))
			assert_int_equal(lv.effective, OW_GPU_LIB_NO_CODE);
	}
	struct ow_audit_result r;
	assert_int_equal(ow_audit_verdict(a, 120, 0, &r), 0);
	assert_int_equal(r.n_none, 0);
	assert_true(r.n_native >= 10);
	ow_audit_free(a);
}

/* ---- roles: arch-specific extensions, per-CUDA families --------------------- */

/* A target of libraries given as cache listings (auditcode.c's format). */
static struct ow_audit *target_of(const char *const *paths, const char *const *listings, size_t n)
{
	struct ow_audit *a;
	assert_int_equal(au_new("t.whl", "t.whl", OW_AUDIT_WHEEL, &a), 0);
	for (size_t i = 0; i < n; i++) {
		struct ow_fatbin *fb;
		assert_int_equal(ow_audit_decode(listings[i], strlen(listings[i]), &fb), 0);
		assert_int_equal(au_add_lib(a, paths[i], 1, 0, fb), 0);
	}
	return a;
}

static struct ow_audit_result judged(const struct ow_audit *a, int cc, int strict, int cuda)
{
	struct ow_audit_rules rules = {.strict = strict, .cuda = cuda};
	struct ow_audit_result r;
	assert_int_equal(ow_audit_verdict_rules(a, cc, 0, &rules, &r), 0);
	return r;
}

#define SM90 "owaudit 5 1 -\n1 .nv_fatbin - 2:90:9.0:0\n"
#define SM100A "owaudit 5 1 -\n1 .nv_fatbin - 2:100a:10.0:0\n"
#define SM90A_SM100A "owaudit 5 1 -\n1 .nv_fatbin - 2:90a:9.0:0\n1 .nv_fatbin - 2:100a:10.0:0\n"
#define SM100A_PTX "owaudit 5 1 -\n1 .nv_fatbin - 2:100a:10.0:0 1:100a:9.0:0\n"

static void test_extension_rule(void **state)
{
	(void)state;
	static const char *const paths[] = {"pkg/_C.so", "pkg/_flashmla_C.so"};
	static const char *const two[] = {SM90, SM100A};
	struct ow_audit *a = target_of(paths, two, 2);
	struct ow_audit_result r = judged(a, 90, 0, 0);
	assert_false(r.fatal);
	assert_int_equal(r.verdict, OW_AUDIT_NATIVE);
	assert_int_equal(r.n_not_for_device, 1);
	struct ow_audit_lib_verdict *lv;
	assert_int_equal(ow_audit_lib_verdicts(a, 90, 0, NULL, &lv), 0);
	assert_true(lv[1].extension);
	assert_int_equal(lv[1].role, OW_AUDIT_ROLE_NOT_FOR_DEVICE);
	assert_int_equal(lv[0].role, OW_AUDIT_ROLE_REQUIRED);
	free(lv);
	r = judged(a, 90, 1, 0); /* --strict: the old rule */
	assert_true(r.fatal);
	assert_int_equal(r.verdict, OW_AUDIT_PARTIAL);
	r = judged(a, 100, 0, 0); /* on 10.0 _C.so cannot run: nothing excuses it */
	assert_true(r.fatal);
	ow_audit_free(a);
	/* alone, an extension that cannot run is the target not running */
	a = target_of(paths + 1, two + 1, 1);
	assert_true(judged(a, 90, 0, 0).fatal);
	assert_false(judged(a, 100, 0, 0).fatal);
	ow_audit_free(a);
	/* one arch-specific module per target: partial is its normal */
	static const char *const per_arch[] = {SM90, SM90A_SM100A};
	a = target_of(paths, per_arch, 2);
	r = judged(a, 90, 0, 0);
	assert_false(r.fatal);
	assert_int_equal(r.n_native, 2);
	assert_true(judged(a, 90, 1, 0).fatal);
	ow_audit_free(a);
	/* PTX is no arch-specific-only build */
	static const char *const with_ptx[] = {SM90, SM100A_PTX};
	a = target_of(paths, with_ptx, 2);
	assert_true(judged(a, 90, 0, 0).fatal);
	ow_audit_free(a);
}

/* vllm 0.34.0's _C_stable_libtorch, in small: modules for every architecture
 * beside modules for one (sm_75-only, sm_90a-only, sm_100f-only). */
#define VLLM_C "owaudit 5 1 -\n1 .nv_fatbin - 2:80:8.0:0 2:90:9.0:0 2:120:12.0:0\n" \
	"1 .nv_fatbin - 2:75:7.5:0\n1 .nv_fatbin - 2:90a:9.0:0\n1 .nv_fatbin - 2:100f:10.0:0\n"
#define TWO_GENERIC "owaudit 5 1 -\n1 .nv_fatbin - 2:120:12.0:0\n1 .nv_fatbin - 2:80:8.0:0 2:86:8.6:0\n"
#define SM75_ONLY "owaudit 5 1 -\n1 .nv_fatbin - 2:75:7.5:0\n1 .nv_fatbin - 2:75:7.5:0\n"
#define SM100F "owaudit 5 1 -\n1 .nv_fatbin - 2:100f:10.0:0\n"
#define SM120 "owaudit 5 1 -\n1 .nv_fatbin - 2:120:12.0:0\n"

static void test_per_arch_rule(void **state)
{
	(void)state;
	static const char *const paths[] = {"vllm/_C.so"};
	static const char *const vllm[] = {VLLM_C};
	struct ow_audit *a = target_of(paths, vllm, 1);
	struct ow_audit_lib_verdict *lv;
	assert_int_equal(ow_audit_lib_verdicts(a, 120, 0, NULL, &lv), 0);
	assert_int_equal(lv[0].v.verdict, OW_GPU_LIB_PARTIAL);
	assert_int_equal(lv[0].v.n_none, 3);
	assert_int_equal(lv[0].per_arch_none, 3);
	assert_true(lv[0].per_arch);
	assert_false(lv[0].fatal);
	assert_int_equal(lv[0].effective, OW_GPU_LIB_NATIVE);
	free(lv);
	assert_false(judged(a, 120, 0, 0).fatal);
	assert_false(judged(a, 90, 0, 0).fatal); /* sm_90 and sm_90a run; the others per arch */
	assert_true(judged(a, 120, 1, 0).fatal); /* --strict: CUDA's rule */
	/* on 10.0 the all-architecture module has no image: nothing excuses that */
	assert_true(judged(a, 100, 0, 0).fatal);
	ow_audit_free(a);
	/* a failing module with two generic images is a build without the device */
	static const char *const two[] = {TWO_GENERIC};
	a = target_of(paths, two, 1);
	assert_int_equal(ow_audit_lib_verdicts(a, 120, 0, NULL, &lv), 0);
	assert_int_equal(lv[0].per_arch_none, 0);
	assert_false(lv[0].per_arch);
	free(lv);
	assert_true(judged(a, 120, 0, 0).fatal);
	ow_audit_free(a);
	/* nothing runs natively: a library built for sm_75 alone is "no kernel image" */
	static const char *const old_paths[] = {"vllm/_C.so", "ext/_old.so"};
	static const char *const old[] = {SM120, SM75_ONLY};
	a = target_of(old_paths, old, 2);
	assert_true(judged(a, 120, 0, 0).fatal);
	ow_audit_free(a);
	/* a family-specific (sm_100f) library is an extension beside one that runs */
	static const char *const f_paths[] = {"vllm/_C.so", "vllm/_deepselect_C.so"};
	static const char *const f[] = {SM120, SM100F};
	a = target_of(f_paths, f, 2);
	struct ow_audit_result r = judged(a, 120, 0, 0);
	assert_false(r.fatal);
	assert_int_equal(r.n_not_for_device, 1);
	assert_true(judged(a, 120, 1, 0).fatal);
	assert_true(judged(a, 100, 0, 0).fatal); /* there _C.so cannot run */
	ow_audit_free(a);
}

static void test_cuda_family_rule(void **state)
{
	(void)state;
	static const char *const paths[] = {
		"bitsandbytes/libbitsandbytes_cpu.so", "bitsandbytes/libbitsandbytes_cuda118.so",
		"bitsandbytes/libbitsandbytes_cuda128.so", "other/libx_cuda118.so"};
	static const char *const listings[] = {
		"owaudit 5 1 -\n", "owaudit 5 1 -\n1 .nv_fatbin - 2:70:7.0:0\n",
		"owaudit 5 1 -\n1 .nv_fatbin - 2:120:12.8:0\n", SM90};
	struct ow_audit *a = target_of(paths, listings, 3);
	/* no set: the newest member */
	struct ow_audit_result r = judged(a, 120, 0, 0);
	assert_false(r.fatal);
	assert_int_equal(r.n_other_cuda, 1);
	assert_true(judged(a, 70, 0, 0).fatal);
	/* the set's CUDA picks; a CUDA without a member: the newest below it */
	assert_false(judged(a, 70, 0, 118).fatal);
	assert_true(judged(a, 120, 0, 118).fatal);
	assert_false(judged(a, 70, 0, 126).fatal);
	assert_false(judged(a, 120, 0, 130).fatal);
	assert_true(judged(a, 120, 1, 0).fatal); /* --strict: every member counts */
	ow_audit_free(a);
	/* a lone _cudaXYZ library is no family */
	a = target_of(paths + 3, listings + 3, 1);
	assert_int_equal(judged(a, 90, 0, 0).n_other_cuda, 0);
	ow_audit_free(a);
	assert_int_equal(ow_audit_family_cuda("a/libbitsandbytes_cuda130.so"), 130);
	assert_int_equal(ow_audit_family_cuda("a/libfoo_cuda.so"), 0);
	assert_int_equal(ow_audit_family_cuda("a/libfoo_cuda12345.so"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixtures_listing_and_roundtrip),
		cmocka_unit_test(test_torch_fixture_summaries),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_decode_rejects),
		cmocka_unit_test(test_extension_rule),
		cmocka_unit_test(test_per_arch_rule),
		cmocka_unit_test(test_cuda_family_rule),
		cmocka_unit_test(test_compressed_kernel_less),
		cmocka_unit_test(test_wheel_verdicts),
		cmocka_unit_test(test_wheel_skips_without_inflating),
		cmocka_unit_test(test_directory_walk),
		cmocka_unit_test(test_store_object_cached),
		cmocka_unit_test(test_real_cublas),
		cmocka_unit_test(test_real_cufft_data_scan),
		cmocka_unit_test(test_real_cuda_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
