/* test_tags.c - wheel filenames, targets and tag priorities.  Expected
 * priorities were computed with packaging 26 (tags.cpython_tags +
 * compatible_tags for the same target), the order pip installs by. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "offwheel/error.h"
#include "tags.h"

static const struct {
	const char *in;
	const char *want; /* NULL: rejected */
} name_cases[] = {
	{"torch", "torch"},
	{"Pillow", "pillow"},
	{"typing_extensions", "typing-extensions"},
	{"typing-extensions", "typing-extensions"},
	{"pytorch_triton_rocm", "pytorch-triton-rocm"},
	{"nvidia-cuda-nvrtc-cu12", "nvidia-cuda-nvrtc-cu12"},
	{"zope.interface", "zope-interface"},
	{"A-_.-b", "a-b"},
	{"a", "a"},
	{"9", "9"},
	{"", NULL},
	{"-a", NULL},
	{"a-", NULL},
	{"a b", NULL},
	{"a/b", NULL},
	{"a\\b", NULL},
	{"caf\xc3\xa9", NULL},
};

static void test_name_normalize(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof name_cases / sizeof name_cases[0]; i++) {
		char out[OW_NAME_MAX];
		const char *in = name_cases[i].in;
		int rc = ow_name_normalize(in, strlen(in), out, sizeof out);
		if (!name_cases[i].want) {
			assert_int_equal(rc, OW_EPARSE);
			continue;
		}
		if (rc != 0)
			fail_msg("%s: %s", in, ow_err_detail());
		assert_string_equal(out, name_cases[i].want);
	}
	char out[4];
	assert_int_equal(ow_name_normalize("torch", 5, out, sizeof out), OW_ETOOBIG);
}

static const struct {
	const char *file;
	const char *name, *version, *build, *python, *abi, *platform;
} wheel_cases[] = {
	{"torch-2.10.0.dev20251021+cu128-cp312-cp312-manylinux_2_28_x86_64.whl", "torch",
	 "2.10.0.dev20251021+cu128", "", "cp312", "cp312", "manylinux_2_28_x86_64"},
	{"torchvision-0.25.0.dev20251021+cu128-cp313-cp313t-win_amd64.whl", "torchvision",
	 "0.25.0.dev20251021+cu128", "", "cp313", "cp313t", "win_amd64"},
	{"torch-2.4.1+cpu.cxx11.abi-cp310-cp310-linux_x86_64.whl", "torch", "2.4.1+cpu.cxx11.abi",
	 "", "cp310", "cp310", "linux_x86_64"},
	{"torch-2.4.1-cp310-cp310-manylinux_2_17_aarch64.manylinux2014_aarch64.whl", "torch",
	 "2.4.1", "", "cp310", "cp310", "manylinux_2_17_aarch64.manylinux2014_aarch64"},
	{"triton-2.1.0-0-cp39-cp39-manylinux2014_x86_64.manylinux_2_17_x86_64.whl", "triton",
	 "2.1.0", "0", "cp39", "cp39", "manylinux2014_x86_64.manylinux_2_17_x86_64"},
	{"pytorch_triton_rocm-2.0.0-cp37-cp37m-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
	 "pytorch-triton-rocm", "2.0.0", "", "cp37", "cp37m",
	 "manylinux_2_17_x86_64.manylinux2014_x86_64"},
	{"torchvision-0.2.0-py2.py3-none-any.whl", "torchvision", "0.2.0", "", "py2.py3", "none",
	 "any"},
	{"typing_extensions-4.12.2-py3-none-any.whl", "typing-extensions", "4.12.2", "", "py3",
	 "none", "any"},
	{"Foo.Bar-1.0-1a_x-PY3-NONE-ANY.whl", "foo-bar", "1.0", "1a_x", "py3", "none", "any"},
	{"torch-2.4.1-cp310-none-macosx_11_0_arm64.whl", "torch", "2.4.1", "", "cp310", "none",
	 "macosx_11_0_arm64"},
	{"foo-1!2.0-cp312-abi3-win_amd64.whl", "foo", "1!2.0", "", "cp312", "abi3", "win_amd64"},
};

static void test_wheel_names(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof wheel_cases / sizeof wheel_cases[0]; i++) {
		struct ow_wheel_name w;
		if (ow_wheel_name_parse(&w, wheel_cases[i].file) != 0)
			fail_msg("%s: %s", wheel_cases[i].file, ow_err_detail());
		assert_string_equal(w.name, wheel_cases[i].name);
		assert_string_equal(w.version_text, wheel_cases[i].version);
		assert_string_equal(w.build, wheel_cases[i].build);
		assert_string_equal(w.python, wheel_cases[i].python);
		assert_string_equal(w.abi, wheel_cases[i].abi);
		assert_string_equal(w.platform, wheel_cases[i].platform);
	}
	struct ow_wheel_name w;
	assert_int_equal(ow_wheel_name_parse(&w, wheel_cases[0].file), 0);
	assert_true(w.version.has_dev);
	assert_string_equal(w.version.local, "cu128");
}

static const char *const bad_wheels[] = {
	"",
	".whl",
	"torch.whl",
	"torch-2.0-cp312-cp312-linux_x86_64.tar.gz",
	"torch-2.0-cp312-cp312-linux_x86_64.WHL",
	"torch-2.0-cp312-linux_x86_64.whl",
	"torch-2.0-1-2-cp312-cp312-linux_x86_64.whl",
	"../torch-2.0-cp312-cp312-linux_x86_64.whl",
	"dir/torch-2.0-cp312-cp312-linux_x86_64.whl",
	"dir\\torch-2.0-cp312-cp312-linux_x86_64.whl",
	"torch-2.0-cp312-cp312-linux_x86_64.whl/",
	"torch-not.a.version-cp312-cp312-linux_x86_64.whl",
	"torch-2.0-x1-cp312-cp312-linux_x86_64.whl",
	"torch-2.0--cp312-linux_x86_64.whl",
	"-2.0-cp312-cp312-linux_x86_64.whl",
	"_torch-2.0-cp312-cp312-linux_x86_64.whl",
	"torch-2.0-cp312-cp312-.whl",
	"torch-2.0-cp312-cp312-linux..x86_64.whl",
	"torch-2.0-cp312-cp312-.linux_x86_64.whl",
	"torch-2.0-cp312-cp312-linux_x86_64..whl",
	"torch-2.0-cp312-cp312-linux x86_64.whl",
	"torch-2.0%2Bcu128-cp312-cp312-linux_x86_64.whl",
	"torch-2.0-cp312-cp312-linux_x86_64.whl\n",
	"torch-99999999999999999999-cp312-cp312-linux_x86_64.whl",
	"torch-2.0+-cp312-cp312-linux_x86_64.whl",
	"torch-2.0-cp312-cp312-linux_x86_64-.whl",
};

static void test_wheel_names_rejected(void **state)
{
	(void)state;
	struct ow_wheel_name w;
	for (size_t i = 0; i < sizeof bad_wheels / sizeof bad_wheels[0]; i++) {
		if (ow_wheel_name_parse(&w, bad_wheels[i]) != OW_EPARSE)
			fail_msg("accepted: '%s'", bad_wheels[i]);
		assert_true(strlen(ow_err_detail()) > 0);
	}
	const char nul[] = "torch-2.0-cp312-cp312-linux_x86_64.whl\0.whl";
	assert_int_equal(ow_wheel_name_parse_n(&w, nul, sizeof nul - 1), OW_EPARSE);
	char longname[400];
	memset(longname, 'a', 300);
	snprintf(longname + 300, 100, "-1.0-py3-none-any.whl");
	assert_int_equal(ow_wheel_name_parse(&w, longname), OW_EPARSE);
	char longtag[300];
	memset(longtag, 'p', 200);
	memcpy(longtag, "foo-1.0-", 8);
	snprintf(longtag + 200, 100, "-none-any.whl");
	assert_int_equal(ow_wheel_name_parse(&w, longtag), OW_EPARSE);
}

static const struct {
	const char *python, *platform, *describe;
	const char *machine_hint;
} target_cases[] = {
	{"3.12", "linux-x86_64", "cp312-manylinux_2_28_x86_64", "x86_64"},
	{"3.13t", "linux-x86_64", "cp313t-manylinux_2_28_x86_64", "x86_64"},
	{"3.12", "linux-aarch64", "cp312-manylinux_2_28_aarch64", "aarch64"},
	{"cp311", "manylinux2014_x86_64", "cp311-manylinux_2_17_x86_64", "x86_64"},
	{"cp314t", "manylinux_2_34_aarch64", "cp314t-manylinux_2_34_aarch64", "aarch64"},
	{"3.9", "manylinux1_x86_64", "cp39-manylinux_2_5_x86_64", "x86_64"},
	{"3.9", "manylinux2010_x86_64", "cp39-manylinux_2_12_x86_64", "x86_64"},
	{"3.10", "linux_x86_64", "cp310-linux_x86_64", "x86_64"},
	{"3.12", "windows-x86_64", "cp312-win_amd64", "amd64"},
	{"3.12", "windows-amd64", "cp312-win_amd64", "amd64"},
	{"3.12.4", "win_amd64", "cp312-win_amd64", "amd64"},
	{"3.12", "win_arm64", "cp312-win_arm64", "arm64"},
	{"3.12", "win32", "cp312-win32", "win32"},
	{"3.12", "macos-arm64", "cp312-macosx_11_0_arm64", "arm64"},
	{"3.12", "macos-x86_64", "cp312-macosx_10_15_x86_64", "x86_64"},
	{"3.13", "macosx_14_0_arm64", "cp313-macosx_14_0_arm64", "arm64"},
};

static void test_targets(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof target_cases / sizeof target_cases[0]; i++) {
		struct ow_target t;
		char buf[64];
		if (ow_target_parse(&t, target_cases[i].python, target_cases[i].platform) != 0)
			fail_msg("%s %s: %s", target_cases[i].python, target_cases[i].platform,
				 ow_err_detail());
		assert_int_equal(ow_target_describe(&t, buf, sizeof buf), 0);
		assert_string_equal(buf, target_cases[i].describe);
		assert_string_equal(t.arch, target_cases[i].machine_hint);
	}
	struct ow_target t;
	char small[8];
	assert_int_equal(ow_target_parse(&t, "3.12.4", "linux-x86_64"), 0);
	assert_int_equal(t.py_patch, 4);
	assert_int_equal(t.glibc_minor, OW_TARGET_GLIBC_MINOR);
	assert_int_equal(ow_target_describe(&t, small, sizeof small), OW_ETOOBIG);
}

static const char *const bad_targets[][2] = {
	{"2.7", "linux-x86_64"},  {"3", "linux-x86_64"},     {"3.", "linux-x86_64"},
	{"3.12x", "linux-x86_64"}, {"3.12t", "linux-x86_64"}, {"cp3", "linux-x86_64"},
	{"3.1234", "linux-x86_64"}, {"", "linux-x86_64"},    {"3.12", ""},
	{"3.12", "linux"},        {"3.12", "manylinux_3_0_x86_64"}, {"3.12", "manylinux_2_x86_64"},
	{"3.12", "manylinux_2_28_"}, {"3.12", "manylinux_2_100_x86_64"},
	{"3.12", "macosx_10_9_arm64"}, {"3.12", "macosx_10_17_x86_64"}, {"3.12", "macosx_9_0_x86_64"},
	{"3.12", "macosx_11_0_ppc"}, {"3.12", "win_amd"}, {"3.12", "linux_X86_64"},
	{"3.12", "linux_x86_64/../x"}, {"3.12", "linux-riscv"},
};

static void test_targets_rejected(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof bad_targets / sizeof bad_targets[0]; i++) {
		struct ow_target t;
		if (ow_target_parse(&t, bad_targets[i][0], bad_targets[i][1]) != OW_EINVAL)
			fail_msg("accepted: %s %s", bad_targets[i][0], bad_targets[i][1]);
	}
}

static const struct {
	const char *python, *platform, *file;
	int priority;
} compat_cases[] = {
	{"3.12", "linux-x86_64", "torch-2.10.0.dev20251021+cu128-cp312-cp312-manylinux_2_28_x86_64.whl", 0},
	{"3.12", "linux-x86_64", "torch-2.6.0+cu126-cp312-cp312-manylinux2014_x86_64.whl", 12},
	{"3.12", "linux-x86_64", "numpy-2.1.0-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", 11},
	{"3.12", "linux-x86_64", "torch-2.4.1+cpu-cp312-cp312-linux_x86_64.whl", 27},
	{"3.12", "linux-x86_64", "torch-2.10.0-cp312-cp312-win_amd64.whl", -1},
	{"3.12", "linux-x86_64", "torch-2.10.0-cp313-cp313-manylinux_2_28_x86_64.whl", -1},
	{"3.12", "linux-x86_64", "torch-2.10.0-cp313-cp313t-manylinux_2_28_x86_64.whl", -1},
	{"3.12", "linux-x86_64", "torch-2.10.0-cp312-cp312-manylinux_2_28_aarch64.whl", -1},
	{"3.12", "linux-x86_64", "torch-2.10.0-cp312-cp312-manylinux_2_34_x86_64.whl", -1},
	{"3.12", "linux-x86_64", "foo-1.0-cp39-abi3-manylinux_2_28_x86_64.whl", 140},
	{"3.12", "linux-x86_64", "foo-1.0-cp312-abi3-manylinux_2_17_x86_64.whl", 39},
	{"3.12", "linux-x86_64", "foo-1.0-cp313-abi3-manylinux_2_28_x86_64.whl", -1},
	{"3.12", "linux-x86_64", "foo-1.0-cp312-none-manylinux_2_28_x86_64.whl", 56},
	{"3.12", "linux-x86_64", "foo-1.0-py3-none-manylinux1_x86_64.whl", 418},
	{"3.12", "linux-x86_64", "filelock-3.13.1-py3-none-any.whl", 758},
	{"3.12", "linux-x86_64", "six-1.16.0-py2.py3-none-any.whl", 758},
	{"3.12", "linux-x86_64", "foo-1.0-cp312-none-any.whl", 756},
	{"3.12", "linux-x86_64", "foo-1.0-py312-none-any.whl", 757},
	{"3.12", "linux-x86_64", "foo-1.0-py311-none-any.whl", 759},
	{"3.12", "linux-x86_64", "foo-1.0-py2-none-any.whl", -1},
	{"3.12", "linux-x86_64", "foo-1.0-cp37-cp37m-manylinux1_x86_64.whl", -1},
	{"3.12", "linux-x86_64", "foo-1.0-cp312-cp312-musllinux_1_2_x86_64.whl", -1},
	{"3.12", "linux-x86_64", "pytorch_triton-3.5.0+git7416ffcb-cp312-cp312-linux_x86_64.whl", 27},
	{"3.12", "linux-x86_64", "nvidia_cudnn_cu12-9.10.2.21-py3-none-manylinux_2_27_x86_64.whl", 393},
	{"3.12", "linux-x86_64", "foo-1.0-cp312-cp312-manylinux2010_x86_64.whl", 18},
	{"3.12", "linux-x86_64", "foo-1.0-pp310-pypy310_pp73-manylinux_2_28_x86_64.whl", -1},
	{"3.13t", "linux-x86_64", "torch-2.6.0.dev20250103+cu126-cp313-cp313t-manylinux_2_28_x86_64.whl", 0},
	{"3.13t", "linux-x86_64", "torch-2.6.0.dev20250103+cu126-cp313-cp313-manylinux_2_28_x86_64.whl", -1},
	{"3.13t", "linux-x86_64", "foo-1.0-cp39-abi3-manylinux_2_28_x86_64.whl", -1},
	{"3.13t", "linux-x86_64", "foo-1.0-cp313-abi3t-manylinux_2_28_x86_64.whl", 28},
	{"3.13t", "linux-x86_64", "foo-1.0-cp313-none-manylinux_2_28_x86_64.whl", 56},
	{"3.13t", "linux-x86_64", "filelock-3.13.1-py3-none-any.whl", 814},
	{"3.13", "linux-aarch64", "torch-2.6.0.dev20250103+cu126-cp313-cp313-linux_aarch64.whl", 13},
	{"3.13", "linux-aarch64", "torch-2.4.1-cp312-cp312-manylinux_2_17_aarch64.manylinux2014_aarch64.whl", -1},
	{"3.13", "linux-aarch64", "torch-2.10.0-cp313-cp313-manylinux_2_28_aarch64.whl", 0},
	{"3.13", "linux-aarch64", "torch-2.10.0-cp313-cp313-manylinux_2_17_aarch64.manylinux2014_aarch64.whl", 11},
	{"3.13", "linux-aarch64", "foo-1.0-cp313-cp313-manylinux2010_aarch64.whl", -1},
	{"3.13", "linux-aarch64", "torch-2.10.0-cp313-cp313-manylinux_2_28_x86_64.whl", -1},
	{"3.8", "manylinux2014_aarch64", "torch-2.4.1-cp38-cp38-manylinux_2_17_aarch64.manylinux2014_aarch64.whl", 0},
	{"3.8", "manylinux2014_aarch64", "torch-2.10.0-cp38-cp38-manylinux_2_28_aarch64.whl", -1},
	{"3.12", "windows-x86_64", "torch-2.10.0+cu128-cp312-cp312-win_amd64.whl", 0},
	{"3.12", "windows-x86_64", "torch-2.10.0-cp312-cp312-win32.whl", -1},
	{"3.12", "windows-x86_64", "torch-2.10.0-cp312-cp312-win_arm64.whl", -1},
	{"3.12", "windows-x86_64", "foo-1.0-cp38-abi3-win_amd64.whl", 6},
	{"3.12", "windows-x86_64", "filelock-3.13.1-py3-none-any.whl", 29},
	{"3.12", "windows-x86_64", "torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64.whl", -1},
	{"3.12", "win_arm64", "torch-2.10.0-cp312-cp312-win_arm64.whl", 0},
	{"3.12", "win_arm64", "torch-2.10.0+cu128-cp312-cp312-win_amd64.whl", -1},
	{"3.12", "macos-arm64", "torch-2.10.0-cp312-none-macosx_11_0_arm64.whl", 30},
	{"3.12", "macos-arm64", "torch-2.10.0-cp312-cp312-macosx_11_0_arm64.whl", 0},
	{"3.12", "macos-arm64", "numpy-2.0.0-cp312-cp312-macosx_14_0_arm64.whl", -1},
	{"3.12", "macos-arm64", "foo-1.0-cp312-cp312-macosx_10_9_universal2.whl", 9},
	{"3.12", "macos-arm64", "foo-1.0-cp312-cp312-macosx_11_0_universal2.whl", 1},
	{"3.12", "macos-arm64", "foo-1.0-cp312-cp312-macosx_10_9_x86_64.whl", -1},
	{"3.12", "macos-arm64", "foo-1.0-cp312-cp312-macosx_10_3_universal2.whl", -1},
	{"3.12", "macos-arm64", "filelock-3.13.1-py3-none-any.whl", 407},
	{"3.12", "macosx_14_0_arm64", "numpy-2.0.0-cp312-cp312-macosx_14_0_arm64.whl", 0},
	{"3.12", "macosx_14_0_arm64", "numpy-2.0.0-cp312-cp312-macosx_15_0_arm64.whl", -1},
	{"3.12", "macosx_14_0_arm64", "numpy-2.0.0-cp312-cp312-macosx_14_2_arm64.whl", -1},
	{"3.12", "macosx_14_0_arm64", "torch-2.10.0-cp312-none-macosx_11_0_arm64.whl", 48},
	{"3.10", "macosx_10_9_x86_64", "numpy-1.24.1-cp310-cp310-macosx_10_9_x86_64.whl", 0},
	{"3.10", "macosx_10_9_x86_64", "foo-1.0-cp310-cp310-macosx_10_6_intel.whl", 19},
	{"3.10", "macosx_10_9_x86_64", "foo-1.0-cp310-cp310-macosx_10_10_x86_64.whl", -1},
	{"3.10", "macosx_10_9_x86_64", "foo-1.0-cp310-cp310-macosx_10_9_universal2.whl", 4},
	{"3.10", "macosx_10_9_x86_64", "foo-1.0-cp310-cp310-macosx_10_3_x86_64.whl", -1},
	{"3.10", "macosx_10_9_x86_64", "numpy-1.24.1-cp310-cp310-macosx_11_0_arm64.whl", -1},
	{"3.12", "macosx_13_0_x86_64", "foo-1.0-cp312-cp312-macosx_13_0_x86_64.whl", 0},
	{"3.12", "macosx_13_0_x86_64", "foo-1.0-cp312-cp312-macosx_10_9_x86_64.whl", 60},
	{"3.12", "macosx_13_0_x86_64", "foo-1.0-cp312-cp312-macosx_10_16_x86_64.whl", 18},
	{"3.12", "macosx_13_0_x86_64", "foo-1.0-cp312-cp312-macosx_11_0_universal2.whl", 16},
	{"3.12", "macosx_13_0_x86_64", "foo-1.0-cp312-cp312-macosx_13_0_arm64.whl", -1},
	{"3.7", "linux-x86_64", "foo-1.0-cp37-cp37m-manylinux1_x86_64.whl", 26},
	{"3.7", "linux-x86_64", "foo-1.0-cp37-cp37-manylinux1_x86_64.whl", -1},
	{"3.9", "linux_x86_64", "torch-2.4.1+cpu-cp39-cp39-linux_x86_64.whl", 0},
	{"3.9", "linux_x86_64", "torch-2.6.0+cu126-cp39-cp39-manylinux_2_28_x86_64.whl", -1},
};

static void test_compatibility_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof compat_cases / sizeof compat_cases[0]; i++) {
		struct ow_target t;
		struct ow_wheel_name w;
		assert_int_equal(ow_target_parse(&t, compat_cases[i].python, compat_cases[i].platform), 0);
		if (ow_wheel_name_parse(&w, compat_cases[i].file) != 0)
			fail_msg("%s: %s", compat_cases[i].file, ow_err_detail());
		int p = ow_tags_compatible(&t, &w);
		if (p != compat_cases[i].priority)
			fail_msg("%s %s %s: priority %d, want %d", compat_cases[i].python,
				 compat_cases[i].platform, compat_cases[i].file, p, compat_cases[i].priority);
	}
}

/* 3000+ real filenames with packaging's priorities for five targets. */
static void test_real_index_priorities(void **state)
{
	(void)state;
	static const char *const targets[][2] = {
		{"3.12", "linux-x86_64"},        {"3.8", "manylinux2014_aarch64"},
		{"3.11", "windows-x86_64"},      {"3.10", "macosx_12_0_x86_64"},
		{"3.13t", "linux-x86_64"},
	};
	struct ow_target t[5];
	for (size_t k = 0; k < 5; k++)
		assert_int_equal(ow_target_parse(&t[k], targets[k][0], targets[k][1]), 0);
	char *path = tu_fixture("tags/pytorch-wheels-2023-10.txt");
	size_t len, count = 0, compatible = 0;
	char *text = tu_read_file(path, &len);
	assert_non_null(text);
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (line[0] == '#')
			continue;
		char *sp = strchr(line, ' ');
		assert_non_null(sp);
		*sp = '\0';
		struct ow_wheel_name w;
		if (ow_wheel_name_parse(&w, line) != 0)
			fail_msg("%s: %s", line, ow_err_detail());
		char *p = sp + 1;
		for (size_t k = 0; k < 5; k++) {
			long want = strtol(p, &p, 10);
			int got = ow_tags_compatible(&t[k], &w);
			if (got != want)
				fail_msg("%s for %s/%s: %d, want %ld", line, targets[k][0], targets[k][1],
					 got, want);
			compatible += got >= 0;
		}
		count++;
	}
	assert_true(count > 3000);
	assert_true(compatible > 100);
	free(text);
	free(path);
}

static void test_priority_raw_sets(void **state)
{
	(void)state;
	struct ow_target t;
	assert_int_equal(ow_target_parse(&t, "3.12", "linux-x86_64"), 0);
	assert_int_equal(ow_tags_priority(&t, "cp312", "cp312", "manylinux_2_28_x86_64"), 0);
	assert_int_equal(ow_tags_priority(&t, "cp311.cp312", "cp312", "linux_x86_64.manylinux_2_27_x86_64"), 1);
	assert_int_equal(ow_tags_priority(&t, "", "", ""), -1);
	assert_int_equal(ow_tags_priority(&t, "cp312", "cp312", "...."), -1);
	char huge[200];
	memset(huge, 'x', sizeof huge - 1);
	huge[sizeof huge - 1] = '\0';
	assert_int_equal(ow_tags_priority(&t, huge, huge, huge), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_normalize),
		cmocka_unit_test(test_wheel_names),
		cmocka_unit_test(test_wheel_names_rejected),
		cmocka_unit_test(test_targets),
		cmocka_unit_test(test_targets_rejected),
		cmocka_unit_test(test_compatibility_table),
		cmocka_unit_test(test_real_index_priorities),
		cmocka_unit_test(test_priority_raw_sets),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
