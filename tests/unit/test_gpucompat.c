#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "offwheel/error.h"
#include "offwheel/fatbin.h"
#include "offwheel/gpucompat.h"

/* "sm_90a", "compute_120@9.0", "lto_80" -> an entry. */
static struct ow_fatbin_entry entry(const char *spec)
{
	struct ow_fatbin_entry e = {0};
	const char *p = spec;
	if (!strncmp(p, "sm_", 3))
		e.kind = OW_FB_SASS, p += 3;
	else if (!strncmp(p, "compute_", 8))
		e.kind = OW_FB_PTX, p += 8;
	else if (!strncmp(p, "lto_", 4))
		e.kind = OW_FB_LTOIR, p += 4;
	else
		fail_msg("bad spec %s", spec);
	char *end;
	e.arch = (uint16_t)strtoul(p, &end, 10);
	if (*end == 'a' || *end == 'f')
		e.variant = *end++;
	e.ver_major = 9;
	if (*end == '@') {
		e.ver_major = (uint16_t)strtoul(end + 1, &end, 10);
		e.ver_minor = (uint16_t)strtoul(end + 1, &end, 10);
	}
	return e;
}

/* A library of modules given as "sm_80 compute_80|sm_90": '|' separates
 * modules. */
struct lib {
	struct ow_fatbin fb;
	struct ow_fatbin_module mods[8];
	struct ow_fatbin_entry ents[32];
};

static void make_lib(struct lib *l, const char *spec)
{
	memset(l, 0, sizeof *l);
	l->fb.modules = l->mods;
	l->fb.entries = l->ents;
	char buf[256], *save = NULL;
	snprintf(buf, sizeof buf, "%s", spec);
	struct ow_fatbin_module *m = &l->mods[l->fb.n_modules++];
	snprintf(m->section, sizeof m->section, ".nv_fatbin");
	for (char *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		if (!strcmp(t, "|")) {
			m = &l->mods[l->fb.n_modules++];
			snprintf(m->section, sizeof m->section, ".nv_fatbin");
			m->first = l->fb.n_entries;
			continue;
		}
		l->ents[l->fb.n_entries++] = entry(t);
		m->count++;
	}
}

static const int devices[] = {75, 80, 86, 90, 100, 103, 110, 120, 121};
#define NDEV (sizeof devices / sizeof devices[0])

/* N native, J JIT, - no image; columns are `devices`. */
static const struct {
	const char *image, *grid;
} grid[] = {
	{"sm_75", "N--------"},
	{"sm_80", "-NN------"},
	{"sm_86", "--N------"},
	{"sm_90", "---N-----"},
	{"sm_90a", "---N-----"},
	{"sm_100", "----NN---"},
	{"sm_100a", "----N----"},
	{"sm_100f", "----NN---"},
	{"sm_103", "-----N---"},
	{"sm_103a", "-----N---"},
	{"sm_110", "------N--"},
	{"sm_110f", "------N--"},
	{"sm_120", "-------NN"},
	{"sm_120a", "-------N-"},
	{"sm_120f", "-------NN"},
	{"sm_121", "--------N"},
	{"sm_121a", "--------N"},
	{"compute_75", "JJJJJJJJJ"},
	{"compute_80", "-JJJJJJJJ"},
	{"compute_86", "--JJJJJJJ"},
	{"compute_90", "---JJJJJJ"},
	{"compute_90a", "---J-----"},
	{"compute_100", "----JJJJJ"},
	{"compute_100a", "----J----"},
	{"compute_100f", "----JJ---"},
	{"compute_110", "------JJJ"},
	{"compute_120", "-------JJ"},
	{"compute_120a", "-------J-"},
	{"compute_120f", "-------JJ"},
	{"compute_121", "--------J"},
	{"lto_80", "---------"},
	{"lto_120", "---------"},
};

static void test_verdict_grid(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof grid / sizeof grid[0]; i++) {
		struct lib l;
		make_lib(&l, grid[i].image);
		for (size_t d = 0; d < NDEV; d++) {
			struct ow_gpu_module_verdict v;
			assert_int_equal(ow_gpu_module_verdict(&l.fb, &l.mods[0], devices[d], 0, &v), 0);
			char got = v.verdict == OW_GPU_NATIVE ? 'N' : v.verdict == OW_GPU_JIT ? 'J' : '-';
			if (got != grid[i].grid[d])
				fail_msg("%s on %d.%d: got %c, want %c", grid[i].image, devices[d] / 10,
					 devices[d] % 10, got, grid[i].grid[d]);
			if (got == 'J')
				assert_int_equal(v.driver_needed, 13000);
			if (got == '-')
				assert_int_equal(v.verdict, OW_GPU_NONE);
			else
				assert_ptr_equal(v.image, &l.ents[0]);
		}
	}
}

static void test_sass_preferred_over_ptx(void **state)
{
	(void)state;
	struct lib l;
	make_lib(&l, "compute_80 sm_80 sm_86 sm_90");
	struct ow_gpu_module_verdict v;
	assert_int_equal(ow_gpu_module_verdict(&l.fb, &l.mods[0], 86, 0, &v), 0);
	assert_int_equal(v.verdict, OW_GPU_NATIVE);
	assert_int_equal(v.image->arch, 86); /* exact beats older minor */
	assert_int_equal(ow_gpu_module_verdict(&l.fb, &l.mods[0], 89, 0, &v), 0);
	assert_int_equal(v.image->arch, 86);
	assert_int_equal(ow_gpu_module_verdict(&l.fb, &l.mods[0], 120, 12080, &v), 0);
	assert_int_equal(v.verdict, OW_GPU_PTX_TOO_NEW); /* ISA 9.0 needs 13.0 */
	assert_int_equal(v.driver_needed, 13000);
}

static void test_library_verdicts(void **state)
{
	(void)state;
	static const struct {
		const char *lib;
		int cc, driver, want, need;
	} cases[] = {
		{"sm_75 sm_80 sm_86 sm_90 | sm_75 sm_80 sm_86 sm_90", 86, 0, OW_GPU_LIB_NATIVE, 0},
		{"sm_75 sm_80 sm_86 sm_90 | sm_75 sm_80 sm_86 sm_90", 120, 0, OW_GPU_LIB_NONE, 0},
		{"sm_90 sm_120 compute_120@9.0 | sm_90 sm_120 compute_120@9.0", 121, 0, OW_GPU_LIB_NATIVE, 0},
		{"sm_90 compute_90@8.7 | sm_90", 120, 0, OW_GPU_LIB_PARTIAL, 12080},
		{"sm_90 | compute_80@8.0", 90, 0, OW_GPU_LIB_JIT, 12000},
		{"sm_90 | compute_80@8.0", 90, 12080, OW_GPU_LIB_JIT, 12000},
		{"sm_90 | compute_80@8.0", 90, 11080, OW_GPU_LIB_PARTIAL, 0},
		{"compute_75@9.0 | compute_75@9.0", 120, 12080, OW_GPU_LIB_NONE, 0},
		{"compute_75@9.0 | compute_75@9.0", 120, 13000, OW_GPU_LIB_JIT, 13000},
		{"sm_80 | sm_90", 90, 0, OW_GPU_LIB_PARTIAL, 0},
		{"lto_90", 90, 0, OW_GPU_LIB_NONE, 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct lib l;
		struct ow_gpu_library_verdict v;
		make_lib(&l, cases[i].lib);
		assert_int_equal(ow_gpu_library_verdict(&l.fb, cases[i].cc, cases[i].driver, &v), 0);
		if (v.verdict != cases[i].want || v.driver_needed != cases[i].need)
			fail_msg("case %zu (%s on %d, driver %d): %s need %d, want %s need %d", i,
				 cases[i].lib, cases[i].cc, cases[i].driver, ow_gpu_lib_verdict_name(v.verdict),
				 v.driver_needed, ow_gpu_lib_verdict_name(cases[i].want), cases[i].need);
	}
}

static void test_skipped_modules(void **state)
{
	(void)state;
	struct lib l;
	make_lib(&l, "sm_86 | sm_86 | sm_80");
	l.mods[0].relocatable = 1; /* __nv_relfatbin */
	l.mods[1].count = 0;       /* kernel-less container */
	struct ow_gpu_library_verdict v;
	assert_int_equal(ow_gpu_library_verdict(&l.fb, 86, 0, &v), 0);
	assert_int_equal(v.verdict, OW_GPU_LIB_NATIVE);
	assert_int_equal(v.n_skipped, 2);
	assert_int_equal(v.n_native, 1);
	l.mods[2].count = 0;
	assert_int_equal(ow_gpu_library_verdict(&l.fb, 86, 0, &v), 0);
	assert_int_equal(v.verdict, OW_GPU_LIB_NO_CODE);
}

/* The nvcc-built torch-like fixtures, through the real reader. */
static int fixture_verdict(const char *rel, int cc, int driver)
{
	char *path = tu_fixture(rel);
	struct ow_fatbin *fb;
	struct ow_gpu_library_verdict v;
	assert_int_equal(ow_fatbin_read_file(path, 0, &fb), 0);
	assert_int_equal(ow_gpu_library_verdict(fb, cc, driver, &v), 0);
	ow_fatbin_free(fb);
	free(path);
	return v.verdict;
}

static void test_fixture_libraries(void **state)
{
	(void)state;
	assert_int_equal(fixture_verdict("fatbin/libtorch_cuda_cu126.so", 120, 0), OW_GPU_LIB_NONE);
	assert_int_equal(fixture_verdict("fatbin/libtorch_cuda_cu126.so", 86, 0), OW_GPU_LIB_NATIVE);
	assert_int_equal(fixture_verdict("fatbin/libtorch_cuda_cu128.so", 120, 0), OW_GPU_LIB_NATIVE);
	assert_int_equal(fixture_verdict("fatbin/libtorch_cuda_cu128.so", 110, 0), OW_GPU_LIB_NONE);
	assert_int_equal(fixture_verdict("fatbin/ptx_only.so", 120, 12080), OW_GPU_LIB_NONE);
	assert_int_equal(fixture_verdict("fatbin/ptx_only.so", 120, 13000), OW_GPU_LIB_JIT);
	assert_int_equal(fixture_verdict("fatbin/sm120_only.so", 90, 0), OW_GPU_LIB_NONE);
	assert_int_equal(fixture_verdict("fatbin/dlink.so", 86, 0), OW_GPU_LIB_NATIVE);
	assert_int_equal(fixture_verdict("fatbin/rdc.so", 80, 0), OW_GPU_LIB_NO_CODE);
	assert_int_equal(fixture_verdict("fatbin/arch_af.so", 103, 0), OW_GPU_LIB_NATIVE);
	assert_int_equal(fixture_verdict("fatbin/arch_af.so", 121, 0), OW_GPU_LIB_NATIVE);
	assert_int_equal(fixture_verdict("fatbin/arch_af.so", 120, 0), OW_GPU_LIB_NATIVE);
	assert_int_equal(fixture_verdict("fatbin/arch_af.so", 89, 0), OW_GPU_LIB_NONE);
}

static void test_ptx_isa_table(void **state)
{
	(void)state;
	/* 12.0 on: what scripts/ptx-isa-table measured (docs/ptx-isa.md) */
	static const int table[][3] = {
		{6, 0, 9000},  {6, 5, 10020}, {7, 0, 11000}, {7, 4, 11040}, {7, 8, 11080},
		{8, 0, 12000}, {8, 1, 12010}, {8, 2, 12020}, {8, 3, 12030}, {8, 4, 12040},
		{8, 5, 12050}, {8, 6, 12070}, {8, 7, 12080}, {8, 8, 12090}, {9, 0, 13000},
		{9, 1, 13010}, {9, 2, 13020}, {9, 3, 13030}, {9, 4, 13040}, {9, 5, 13050},
	};
	int d;
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
		assert_int_equal(ow_gpu_ptx_isa_driver((unsigned)table[i][0], (unsigned)table[i][1], &d), 0);
		assert_int_equal(d, table[i][2]);
	}
	/* a minor no toolkit wrote (6.6 ... 6.9) takes the row below it */
	assert_int_equal(ow_gpu_ptx_isa_driver(6, 9, &d), 0);
	assert_int_equal(d, 10020);
	assert_int_equal(ow_gpu_ptx_newest_driver(), 13050);
	assert_int_equal(ow_gpu_ptx_isa_driver(9, 6, &d), OW_ENOENT);
	assert_int_equal(d, 0);
	assert_int_equal(ow_gpu_ptx_isa_driver(9, 9, &d), OW_ENOENT);
	assert_string_equal(ow_err_detail(), "PTX ISA 9.9: newer than this offwheel knows; needs a "
			    "driver newer than 13.5");
	assert_int_equal(ow_gpu_ptx_isa_driver(10, 0, &d), OW_ENOENT);
	ow_err_clear();
	/* PTX ISA unknown to the table: a known driver up to 13.5 is too old */
	struct lib l;
	struct ow_gpu_module_verdict v;
	make_lib(&l, "compute_120@9.9");
	assert_int_equal(ow_gpu_module_verdict(&l.fb, &l.mods[0], 120, 13050, &v), 0);
	assert_int_equal(v.verdict, OW_GPU_PTX_TOO_NEW);
	assert_int_equal(ow_gpu_module_verdict(&l.fb, &l.mods[0], 120, 13060, &v), 0);
	assert_int_equal(v.verdict, OW_GPU_JIT);
	assert_int_equal(ow_gpu_module_verdict(&l.fb, &l.mods[0], 120, 0, &v), 0);
	assert_int_equal(v.verdict, OW_GPU_JIT);
	assert_int_equal(v.driver_needed, 0);
	/* ISA 9.5 is known: CUDA 13.5 */
	make_lib(&l, "compute_120@9.5");
	assert_int_equal(ow_gpu_module_verdict(&l.fb, &l.mods[0], 120, 13040, &v), 0);
	assert_int_equal(v.verdict, OW_GPU_PTX_TOO_NEW);
	assert_int_equal(v.driver_needed, 13050);
	assert_int_equal(ow_gpu_module_verdict(&l.fb, &l.mods[0], 120, 13050, &v), 0);
	assert_int_equal(v.verdict, OW_GPU_JIT);
	/* a library with a module of an unknown ISA needs more than its known
	 * modules say: its driver_needed is unknown (0), not theirs */
	struct ow_gpu_library_verdict lv;
	make_lib(&l, "compute_120@9.0 | compute_120@9.9");
	assert_int_equal(ow_gpu_library_verdict(&l.fb, 120, 0, &lv), 0);
	assert_int_equal(lv.verdict, OW_GPU_LIB_JIT);
	assert_int_equal(lv.n_jit, 2);
	assert_int_equal(lv.driver_needed, 0);
	assert_int_equal(ow_gpu_library_verdict(&l.fb, 120, 13000, &lv), 0);
	assert_int_equal(lv.verdict, OW_GPU_LIB_PARTIAL);
	/* the driver picks the newest PTX it can JIT */
	make_lib(&l, "compute_80@8.0 compute_90@9.0");
	assert_int_equal(ow_gpu_module_verdict(&l.fb, &l.mods[0], 120, 12080, &v), 0);
	assert_int_equal(v.verdict, OW_GPU_JIT);
	assert_int_equal(v.image->arch, 80);
	assert_int_equal(ow_gpu_module_verdict(&l.fb, &l.mods[0], 120, 13000, &v), 0);
	assert_int_equal(v.image->arch, 90);
	assert_int_equal(ow_gpu_module_verdict(&l.fb, &l.mods[0], 120, 0, &v), 0);
	assert_int_equal(v.driver_needed, 12000);
}

static void test_parse_device_and_driver(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		int cc;
	} good[] = {{"12.0", 120}, {"sm_120", 120}, {"120", 120}, {"8.6", 86},
		    {"sm_86", 86}, {"86", 86}, {"7.5", 75}, {"10.3", 103}, {"11.0", 110}};
	static const char *const bad[] = {"", "12", "abc", "12.", "12.0.1", "sm_", "sm_90a",
					  "-1", "1000", "12.10", "sm_12.0", " 12.0", "12.0 "};
	int v;
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		assert_int_equal(ow_gpu_parse_device(good[i].s, &v), 0);
		assert_int_equal(v, good[i].cc);
	}
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (ow_gpu_parse_device(bad[i], &v) != OW_EINVAL)
			fail_msg("device '%s' accepted", bad[i]);
	assert_int_equal(ow_gpu_parse_driver("12.8", &v), 0);
	assert_int_equal(v, 12080);
	assert_int_equal(ow_gpu_parse_driver("13.0", &v), 0);
	assert_int_equal(v, 13000);
	assert_int_equal(ow_gpu_parse_driver("12080", &v), 0);
	assert_int_equal(v, 12080);
	static const char *const badd[] = {"", "12", "x", "12.8.1", "12.", ".8", "12.-1"};
	for (size_t i = 0; i < sizeof badd / sizeof badd[0]; i++)
		if (ow_gpu_parse_driver(badd[i], &v) != OW_EINVAL)
			fail_msg("driver '%s' accepted", badd[i]);
	char buf[16];
	ow_gpu_format_cc(120, buf, sizeof buf);
	assert_string_equal(buf, "12.0");
	ow_gpu_format_driver(12080, buf, sizeof buf);
	assert_string_equal(buf, "12.8");
	assert_string_equal(ow_gpu_verdict_name(OW_GPU_PTX_TOO_NEW), "ptx-too-new");
	assert_string_equal(ow_gpu_lib_verdict_name(OW_GPU_LIB_PARTIAL), "partial");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verdict_grid),
		cmocka_unit_test(test_sass_preferred_over_ptx),
		cmocka_unit_test(test_library_verdicts),
		cmocka_unit_test(test_skipped_modules),
		cmocka_unit_test(test_fixture_libraries),
		cmocka_unit_test(test_ptx_isa_table),
		cmocka_unit_test(test_parse_device_and_driver),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
