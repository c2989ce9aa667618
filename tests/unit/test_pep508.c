/* test_pep508.c - requirement lines and markers, evaluated for targets.
 * The lines are real Requires-Dist entries of torch / torchvision /
 * torchaudio METADATA plus PEP 508's own examples and hostile cases; the
 * expected results agree with packaging 26 (Requirement, Marker.evaluate)
 * except where a comment says otherwise. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "offwheel/error.h"
#include "pep508.h"

/* Targets of the `evals` column: each gives two characters, the result
 * without an extra and with extra "opt-einsum" (1 true, 0 false, E error). */
static const char *const targets[][2] = {
	{"3.12", "linux-x86_64"}, {"3.12", "windows-x86_64"}, {"3.9", "macos-arm64"},
	{"3.13", "linux-aarch64"}, {"3.12.4", "linux-x86_64"},
};

static const struct {
	const char *line;
	const char *name; /* NULL: rejected */
	size_t nextras;
	const char *url;
	const char *evals;
} req_cases[] = {
	{"nvidia-cuda-nvrtc-cu12==12.8.61; platform_system == \"Linux\" and platform_machine == \"x86_64\"", "nvidia-cuda-nvrtc-cu12", 0, NULL, "1100000011"},
	{"setuptools; python_version >= \"3.12\"", "setuptools", 0, NULL, "1111001111"},
	{"sympy==1.13.3; python_version >= \"3.9\"", "sympy", 0, NULL, "1111111111"},
	{"typing-extensions>=4.10.0", "typing-extensions", 0, NULL, "1111111111"},
	{"pytorch-triton==3.5.0+git7416ffcb; platform_system == \"Linux\"", "pytorch-triton", 0, NULL, "1100001111"},
	{"torch==2.10.0.dev20251021", "torch", 0, NULL, "1111111111"},
	{"numpy", "numpy", 0, NULL, "1111111111"},
	{"pillow!=8.3.*,>=5.3.0", "pillow", 0, NULL, "1111111111"},
	{"opt-einsum>=3.3; extra == \"opt-einsum\"", "opt-einsum", 0, NULL, "0101010101"},
	{"optree>=0.13.0; extra == \"optree\"", "optree", 0, NULL, "0000000000"},
	{"filelock", "filelock", 0, NULL, "1111111111"},
	{"networkx", "networkx", 0, NULL, "1111111111"},
	{"jinja2", "jinja2", 0, NULL, "1111111111"},
	{"fsspec", "fsspec", 0, NULL, "1111111111"},
	{"sympy>=1.13.3", "sympy", 0, NULL, "1111111111"},
	{"nvidia-cublas-cu12==12.8.3.14; platform_system == 'Linux' and platform_machine == 'x86_64'", "nvidia-cublas-cu12", 0, NULL, "1100000011"},
	{"nvidia-cudnn-cu12==9.7.1.26; platform_system == \"Linux\" and platform_machine == \"x86_64\"", "nvidia-cudnn-cu12", 0, NULL, "1100000011"},
	{"triton==3.3.0; platform_system == \"Linux\" and platform_machine == \"x86_64\"", "triton", 0, NULL, "1100000011"},
	{"nvidia-cublas==13.0.0.19; platform_system == \"Linux\"", "nvidia-cublas", 0, NULL, "1100001111"},
	{"nvidia-cudnn-cu13==9.13.0.50; platform_system == \"Linux\"", "nvidia-cudnn-cu13", 0, NULL, "1100001111"},
	{"torch>=2.11", "torch", 0, NULL, "1111111111"},
	{"typing_extensions>=4.8.0", "typing-extensions", 0, NULL, "1111111111"},
	{"Opt_Einsum>=3.3 ; extra == \"Opt_Einsum\"", "opt-einsum", 0, NULL, "0101010101"},
	{"requests[security,socks] (>=2.8.1,==2.8.*) ; python_version < \"2.7\"", "requests", 2, NULL, "0000000000"},
	{"name@http://foo.com", "name", 0, "http://foo.com", "1111111111"},
	{"name @ https://example.com/a.whl ; python_version >= \"3.8\"", "name", 0, "https://example.com/a.whl", "1111111111"},
	{"name [fred,bar] @ http://foo.com ; python_version=='2.7'", "name", 2, "http://foo.com", "0000000000"},
	{"name>=3,<2", "name", 0, NULL, "1111111111"},
	{"name [quux, strange];python_version<'2.7' and platform_version=='2'", "name", 2, NULL, "0000000000"},
	{"foo; os_name == \"nt\" or sys_platform == \"darwin\"", "foo", 0, NULL, "0011110000"},
	{"foo; (os_name == \"nt\" or sys_platform == \"darwin\") and python_version < \"3.10\"", "foo", 0, NULL, "0000110000"},
	{"foo; python_full_version >= \"3.12.1\"", "foo", 0, NULL, "0000001111"},
	{"foo; python_version ~= \"3.12\"", "foo", 0, NULL, "1111001111"},
	{"foo; python_version == \"3.1*\"", "foo", 0, NULL, "0000000000"},
	{"foo; python_version == \"3.*\"", "foo", 0, NULL, "1111111111"},
	{"foo; \"linux\" in sys_platform", "foo", 0, NULL, "1100001111"},
	{"foo; \"lin\" not in sys_platform", "foo", 0, NULL, "0011110000"},
	{"foo; platform_machine in \"x86_64 aarch64\"", "foo", 0, NULL, "1100001111"},
	{"foo; platform_machine not in \"x86_64 aarch64\"", "foo", 0, NULL, "0011110000"},
	{"foo; implementation_name == \"cpython\"", "foo", 0, NULL, "1111111111"},
	{"foo; platform_python_implementation != \"PyPy\"", "foo", 0, NULL, "1111111111"},
	{"foo; python_version > \"3.8\" and python_version < \"3.13\"", "foo", 0, NULL, "1111110011"},
	{"foo; python_version <= \"3.12\"", "foo", 0, NULL, "1111110011"},
	{"foo; python_version === \"3.12\"", "foo", 0, NULL, "1111000011"},
	{"foo; '3.12' <= python_version", "foo", 0, NULL, "1111001111"},
	{"foo; platform_system == \"Windows\" and platform_machine == \"AMD64\"", "foo", 0, NULL, "0011000000"},
	{"foo; platform_system == \"Darwin\" and platform_machine == \"arm64\"", "foo", 0, NULL, "0000110000"},
	{"foo; sys_platform == \"win32\"", "foo", 0, NULL, "0011000000"},
	{"foo; os_name == \"posix\"", "foo", 0, NULL, "1100111111"},
	{"foo; implementation_version >= \"3.13\"", "foo", 0, NULL, "0000001100"},
	{"foo; python_version >= \"3.10\" and (extra == \"x\" or extra == \"opt-einsum\")", "foo", 0, NULL, "0101000101"},
	{"foo; platform_release == \"\"", "foo", 0, NULL, "1111111111"},
	{"foo; platform_machine == \"aarch64\"", "foo", 0, NULL, "0000001100"},
	{"foo; extra == 'opt_einsum'", "foo", 0, NULL, "0101010101"},
	{"foo; python_version >= '3.12' and python_version < '3.13' or extra == 'optree'", "foo", 0, NULL, "1111000011"},
	/* Python string order ("AMD64" and "arm64" sort before "b"), as PEP 508
	 * says; packaging 26 answers false for every ordering of non-version keys. */
	{"foo; platform_machine < \"b\"", "foo", 0, NULL, "0011111100"},
	{"foo>=1.0.post1", "foo", 0, NULL, "1111111111"},
	{"foo>=1.0,", "foo", 0, NULL, "1111111111"},
	{"foo==", NULL, 0, NULL, NULL},
	{"foo;", NULL, 0, NULL, NULL},
	{"foo; python_version", NULL, 0, NULL, NULL},
	{"foo; bogus_var == \"1\"", NULL, 0, NULL, NULL},
	{"foo; python_version >= \"3.12\" and", NULL, 0, NULL, NULL},
	{"foo; (python_version >= \"3.12\"", NULL, 0, NULL, NULL},
	{"foo; python_version >= \"3.12\")", NULL, 0, NULL, NULL},
	{"foo; python_version >= '3.12", NULL, 0, NULL, NULL},
	{"-foo", NULL, 0, NULL, NULL},
	{"foo-", NULL, 0, NULL, NULL},
	{"foo[", NULL, 0, NULL, NULL},
	{"foo[bar", NULL, 0, NULL, NULL},
	{"foo[bar,]", NULL, 0, NULL, NULL},
	{"foo ==1.0 extra", NULL, 0, NULL, NULL},
	{"foo @", NULL, 0, NULL, NULL},
	{"foo; python_version andand \"x\"", NULL, 0, NULL, NULL},
	{"foo; os_name==\"nt\"or os_name==\"posix\"", "foo", 0, NULL, "1111111111"},
	{"foo (>=1.0", NULL, 0, NULL, NULL},
	{"foo[]>=1.0", "foo", 0, NULL, "1111111111"},
	{"foo ; extra == \"a\" and extra == \"b\"", "foo", 0, NULL, "0000000000"},
	{"foo; python_version ~= \"3\"", "foo", 0, NULL, "EEEEEEEEEE"},
	{"foo; platform_system ~= \"Linux\"", "foo", 0, NULL, "EEEEEEEEEE"},
};

static char eval_char(const struct ow_requirement *r, const struct ow_target *t, const char *extra)
{
	struct ow_marker_env env;
	bool res = false;
	ow_marker_env_for_target(&env, t);
	int rc = ow_requirement_applies(r, &env, extra, &res);
	if (rc != 0)
		return 'E';
	return res ? '1' : '0';
}

static void check_evals(const struct ow_requirement *r, const char *line, const char *want)
{
	char got[11] = {0};
	for (size_t k = 0; k < 5; k++) {
		struct ow_target t;
		assert_int_equal(ow_target_parse(&t, targets[k][0], targets[k][1]), 0);
		got[2 * k] = eval_char(r, &t, NULL);
		got[2 * k + 1] = eval_char(r, &t, "opt-einsum");
	}
	if (strcmp(got, want) != 0)
		fail_msg("%s: evaluated %s, want %s", line, got, want);
}

static void test_requirements_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof req_cases / sizeof req_cases[0]; i++) {
		struct ow_requirement r;
		int rc = ow_requirement_parse(&r, req_cases[i].line);
		if (!req_cases[i].name) {
			if (rc != OW_EPARSE)
				fail_msg("accepted: %s", req_cases[i].line);
			assert_null(r.marker);
			continue;
		}
		if (rc != 0)
			fail_msg("%s: %s", req_cases[i].line, ow_err_detail());
		assert_string_equal(r.name, req_cases[i].name);
		assert_int_equal(r.nextras, req_cases[i].nextras);
		assert_int_equal(r.has_url, req_cases[i].url != NULL);
		if (req_cases[i].url)
			assert_string_equal(r.url, req_cases[i].url);
		check_evals(&r, req_cases[i].line, req_cases[i].evals);
		ow_requirement_dispose(&r);
		assert_null(r.marker);
	}
}

static void test_requirement_parts(void **state)
{
	(void)state;
	struct ow_requirement r;
	char buf[128];
	assert_int_equal(ow_requirement_parse(&r, "Requests [Security, SOCKS_x] (>=2.8.1, ==2.8.*) ; "
						 "python_version < \"2.7\"\r\n"), 0);
	assert_string_equal(r.name, "requests");
	assert_string_equal(r.extras[0], "security");
	assert_string_equal(r.extras[1], "socks-x");
	assert_int_equal(ow_spec_format(&r.spec, buf, sizeof buf), 0);
	assert_string_equal(buf, ">=2.8.1,==2.8.*");
	assert_non_null(r.marker);
	ow_requirement_dispose(&r);

	/* pandas 3.1.1's own line: its [all] extra asks for 23 of its extras */
	assert_int_equal(ow_requirement_parse(&r, "pandas[aws,clipboard,compression,computation,excel,"
						 "feather,fss,gcp,hdf5,html,iceberg,mysql,output-formatting,"
						 "parquet,performance,plot,postgresql,pyarrow,spss,sql-other,"
						 "test,timezone,xml]; extra == \"all\""), 0);
	assert_int_equal(r.nextras, 23);
	assert_string_equal(r.extras[12], "output-formatting");
	assert_string_equal(r.extras[22], "xml");
	ow_requirement_dispose(&r);
	assert_null(r.extras);

	assert_int_equal(ow_requirement_parse(&r, "pillow!=8.3.*,>=5.3.0"), 0);
	assert_null(r.extras);
	struct ow_version v;
	assert_int_equal(ow_pep440_parse(&v, "8.3.2"), 0);
	assert_false(ow_spec_contains(&r.spec, &v, false));
	assert_int_equal(ow_pep440_parse(&v, "11.0.0"), 0);
	assert_true(ow_spec_contains(&r.spec, &v, false));
	assert_null(r.marker);
	ow_requirement_dispose(&r);

	assert_int_equal(ow_requirement_parse(&r, "torch==2.10.0.dev20251021"), 0);
	assert_int_equal(ow_pep440_parse(&v, "2.10.0.dev20251021+cu128"), 0);
	assert_true(ow_spec_contains(&r.spec, &v, false));
	ow_requirement_dispose(&r);
	ow_requirement_dispose(NULL);
	ow_marker_free(NULL);
}

static const struct {
	const char *python, *platform;
	const char *system, *machine, *sys_platform, *os_name, *pyver, *full;
} env_cases[] = {
	{"3.12", "linux-x86_64", "Linux", "x86_64", "linux", "posix", "3.12", "3.12.0"},
	{"3.13t", "linux-aarch64", "Linux", "aarch64", "linux", "posix", "3.13", "3.13.0"},
	{"3.12", "windows-x86_64", "Windows", "AMD64", "win32", "nt", "3.12", "3.12.0"},
	{"3.12", "win_arm64", "Windows", "ARM64", "win32", "nt", "3.12", "3.12.0"},
	{"3.11.9", "macos-arm64", "Darwin", "arm64", "darwin", "posix", "3.11", "3.11.9"},
	{"3.10", "macos-x86_64", "Darwin", "x86_64", "darwin", "posix", "3.10", "3.10.0"},
};

static void test_env_for_target(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof env_cases / sizeof env_cases[0]; i++) {
		struct ow_target t;
		struct ow_marker_env env;
		assert_int_equal(ow_target_parse(&t, env_cases[i].python, env_cases[i].platform), 0);
		ow_marker_env_for_target(&env, &t);
		assert_string_equal(env.value[OW_MV_PLATFORM_SYSTEM], env_cases[i].system);
		assert_string_equal(env.value[OW_MV_PLATFORM_MACHINE], env_cases[i].machine);
		assert_string_equal(env.value[OW_MV_SYS_PLATFORM], env_cases[i].sys_platform);
		assert_string_equal(env.value[OW_MV_OS_NAME], env_cases[i].os_name);
		assert_string_equal(env.value[OW_MV_PYTHON_VERSION], env_cases[i].pyver);
		assert_string_equal(env.value[OW_MV_PYTHON_FULL_VERSION], env_cases[i].full);
		assert_string_equal(env.value[OW_MV_IMPLEMENTATION_VERSION], env_cases[i].full);
		assert_string_equal(env.value[OW_MV_IMPLEMENTATION_NAME], "cpython");
		assert_string_equal(env.value[OW_MV_PLATFORM_PYTHON_IMPLEMENTATION], "CPython");
		assert_string_equal(env.value[OW_MV_PLATFORM_RELEASE], "");
	}
}

static const char *const bad_markers[] = {
	"",
	"python_version",
	"python_version >=",
	"python_version >= '3.12' and",
	"and python_version >= '3.12'",
	"(python_version >= '3.12'",
	"python_version >= '3.12')",
	"python_version >= '3.12",
	"python_version => '3.12'",
	"python_version is '3.12'",
	"python_version not '3.12'",
	"bogus == '1'",
	"os_name == 'nt' xor os_name == 'posix'",
	"os_name == 'nt' andos_name == 'posix'",
	"'a' == 'b' 'c'",
	"()",
};

static void test_markers_rejected(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof bad_markers / sizeof bad_markers[0]; i++) {
		struct ow_marker *m = (struct ow_marker *)1;
		if (ow_marker_parse(&m, bad_markers[i]) != OW_EPARSE)
			fail_msg("accepted marker: %s", bad_markers[i]);
		assert_null(m);
		assert_non_null(strstr(ow_err_detail(), "marker"));
	}
}

static void test_marker_limits(void **state)
{
	(void)state;
	struct ow_marker *m;
	char deep[512] = "";
	for (int i = 0; i < OW_MARKER_DEPTH_MAX + 1; i++)
		strncat(deep, "(", sizeof deep - strlen(deep) - 1);
	strncat(deep, "os_name == 'nt'", sizeof deep - strlen(deep) - 1);
	for (int i = 0; i < OW_MARKER_DEPTH_MAX + 1; i++)
		strncat(deep, ")", sizeof deep - strlen(deep) - 1);
	assert_int_equal(ow_marker_parse(&m, deep), OW_EPARSE);
	assert_non_null(strstr(ow_err_detail(), "deep"));

	char wide[4000] = "os_name == 'nt'";
	for (int i = 0; i < OW_MARKER_NODES_MAX; i++)
		strncat(wide, " or os_name == 'nt'", sizeof wide - strlen(wide) - 1);
	assert_int_equal(ow_marker_parse(&m, wide), OW_EPARSE);

	char longstr[300] = "os_name == '";
	memset(longstr + 12, 'x', 200);
	snprintf(longstr + 212, 10, "'");
	assert_int_equal(ow_marker_parse(&m, longstr), OW_EPARSE);

	char *huge = malloc(OW_REQ_TEXT_MAX + 100);
	assert_non_null(huge);
	memset(huge, 'a', OW_REQ_TEXT_MAX + 99);
	huge[OW_REQ_TEXT_MAX + 99] = '\0';
	struct ow_requirement r;
	assert_int_equal(ow_requirement_parse(&r, huge), OW_EPARSE);
	free(huge);

	/* a legal marker near the node limit (1 + 15 * 4 nodes) parses and evaluates */
	char ok[1200] = "os_name == 'nt'";
	for (int i = 0; i < 15; i++)
		strncat(ok, " or (os_name == 'x' and python_version >= '3')", sizeof ok - strlen(ok) - 1);
	assert_int_equal(ow_marker_parse(&m, ok), 0);
	struct ow_target t;
	struct ow_marker_env env;
	bool res = false;
	assert_int_equal(ow_target_parse(&t, "3.12", "windows-x86_64"), 0);
	ow_marker_env_for_target(&env, &t);
	assert_int_equal(ow_marker_eval(m, &env, NULL, &res), 0);
	assert_true(res);
	ow_marker_free(m);
}

static void test_marker_eval_details(void **state)
{
	(void)state;
	static const struct {
		const char *marker, *extra;
		int rc;
		bool want;
	} cases[] = {
		{"extra == 'Opt_Einsum'", "opt-einsum", 0, true},
		{"extra == 'opt-einsum'", "OPT.EINSUM", 0, true},
		{"extra == 'opt-einsum'", "", 0, false},
		{"'opt-einsum' == extra", "opt_einsum", 0, true},
		{"python_version >= '3.9' and python_version < '3.13'", NULL, 0, true},
		{"python_version == '3.12.0'", NULL, 0, true},  /* versions: 3.12 == 3.12.0 */
		{"python_version < '3.12.1'", NULL, 0, true},
		{"python_version > '3.12'", NULL, 0, false},
		{"platform_system ~= 'Linux'", NULL, OW_EINVAL, false},
		{"platform_system === 'Linux'", NULL, 0, true},
		{"platform_machine != 'aarch64'", NULL, 0, true},
		{"'x86' in platform_machine", NULL, 0, true},
		{"os_name == 'posix' or os_name == 'nt' and sys_platform == 'win32'", NULL, 0, true},
		{"(os_name == 'posix' or os_name == 'nt') and sys_platform == 'win32'", NULL, 0, false},
		{"sys.platform == 'linux' and os.name == 'posix'", NULL, 0, true},
		{"python_implementation == 'CPython'", NULL, 0, true},
		{"platform_release >= '5.0'", NULL, 0, false},
	};
	struct ow_target t;
	struct ow_marker_env env;
	assert_int_equal(ow_target_parse(&t, "3.12", "linux-x86_64"), 0);
	ow_marker_env_for_target(&env, &t);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct ow_marker *m;
		bool res = !cases[i].want;
		if (ow_marker_parse(&m, cases[i].marker) != 0)
			fail_msg("%s: %s", cases[i].marker, ow_err_detail());
		int rc = ow_marker_eval(m, &env, cases[i].extra, &res);
		if (rc != cases[i].rc || (rc == 0 && res != cases[i].want))
			fail_msg("%s [%s]: rc %d res %d", cases[i].marker,
				 cases[i].extra ? cases[i].extra : "-", rc, res);
		ow_marker_free(m);
	}
	bool res = false;
	assert_int_equal(ow_marker_eval(NULL, &env, NULL, &res), 0);
	assert_true(res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_requirements_table),
		cmocka_unit_test(test_requirement_parts),
		cmocka_unit_test(test_env_for_target),
		cmocka_unit_test(test_markers_rejected),
		cmocka_unit_test(test_marker_limits),
		cmocka_unit_test(test_marker_eval_details),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
