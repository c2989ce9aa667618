/* test_exportname.c - an export's name: what may name one, the default for
 * a directory and for an s3:// target, the manifest's "name" as check
 * parses it, and the accepted-sequence state per key and name (the per-key
 * file of offwheel before names still read). */
#include <string.h>

#include "testutil.h"

#include "exportint.h"
#include "offwheel/error.h"
#include "offwheel/tags.h"
#include "pep508.h"

static void test_name_problem(void **state)
{
	(void)state;
	static const struct { const char *name; int bad; } v[] = {
	    {"A", 0}, {"lab torch 2.6", 0}, {"stick-1_b.c", 0}, {"~!@#$%^&*()[]{}|/\\:;'\"<>,.?", 0},
	    {"", 1}, {" lead", 1}, {"trail ", 1}, {"tab\there", 1}, {"nl\n", 1}, {"del\x7f", 1},
	    {"caf\xc3\xa9", 1}, {"\xff", 1},
	};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
		assert_int_equal(ow_export_name_problem(v[i].name) != NULL, v[i].bad);
	char s64[65], s65[66];
	memset(s64, 'x', 64), s64[64] = '\0';
	memset(s65, 'x', 65), s65[65] = '\0';
	assert_null(ow_export_name_problem(s64));
	assert_string_equal(ow_export_name_problem(s65), "it is longer than 64 bytes");
	assert_string_equal(ow_export_name_problem(""), "it is empty");
}

static void test_target_of_req_name(void **state)
{
	(void)state;
	const char *req = "cu128-cp311-manylinux_2_28_x86_64";
	char t[64];
	assert_int_equal(ow_export_target_of_req_name(req, t, sizeof t), 0);
	assert_string_equal(t, "cu128 cp311-manylinux_2_28_x86_64");
	assert_int_equal(ow_export_target_of_req_name("cpu-cp312-win_amd64", t, sizeof t), 0);
	assert_string_equal(t, "cpu cp312-win_amd64");
	assert_int_equal(ow_export_target_of_req_name(t, t + 32, 32), 1); /* has its space */
	assert_int_equal(ow_export_target_of_req_name("cu128", t, sizeof t), 1);
	assert_int_equal(ow_export_target_of_req_name("-x", t, sizeof t), 1);
	assert_int_equal(ow_export_target_of_req_name(req, t, 8), 1); /* too long */
}

static void test_default_name(void **state)
{
	(void)state;
	static const struct { const char *where, *name; } ok[] = {
	    {"/media/usb/torch", "torch"},
	    {"/media/usb/torch/", "torch"},
	    {"relative", "relative"},
	    /* s3://: the prefix's last component, the bucket without a prefix */
	    {"s3://lab/torch", "torch"},
	    {"s3://lab//exports/stick1/", "stick1"},
	    {"s3://lab/exports/stick1", "stick1"},
	    {"s3://lab", "lab"},
	    {"s3://lab/", "lab"},
	};
	char name[OW_EXPORT_NAME_MAX + 1];
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		memset(name, 0, sizeof name);
		assert_int_equal(ow_export_default_name(ok[i].where, name), 0);
		assert_string_equal(name, ok[i].name);
	}
	static const char *const bad[] = {
	    "/", "", "//", ("/media/\xc3\x9c" "bung"), "/x/with\ttab",
	    "/x/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_int_equal(ow_export_default_name(bad[i], name), OW_EINVAL);
		assert_non_null(strstr(ow_err_detail(), "give --name NAME"));
	}
}

#define HEAD "{\"format\": \"offwheel-export-1\", \"sequence\": 7, \"created_unix\": 1, " \
             "\"expires_unix\": 2, \"key_id\": \"0123456789abcdef\", \"files\": []"

static void test_manifest_name(void **state)
{
	(void)state;
	struct ex_manifest m;
	static const char named[] = HEAD ", \"name\": \"lab torch\"}";
	assert_int_equal(ex_json_parse(named, strlen(named), &m), 0);
	assert_string_equal(m.name, "lab torch");
	ex_manifest_dispose(&m);
	static const char older[] = HEAD "}"; /* an export made before names: none */
	assert_int_equal(ex_json_parse(older, strlen(older), &m), 0);
	assert_string_equal(m.name, "");
	ex_manifest_dispose(&m);
	static const char *const bad[] = {
	    HEAD ", \"name\": \"\"}", HEAD ", \"name\": 3}", HEAD ", \"name\": null}",
	    HEAD ", \"name\": \"a\\u0000b\"}", HEAD ", \"name\": \"a\\u001bb\"}",
	    HEAD ", \"name\": \"caf\\u00e9\"}",
	    HEAD ", \"name\": \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}",
	    HEAD ", \"name\": \"a\", \"name\": \"b\"}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(ex_json_parse(bad[i], strlen(bad[i]), &m), OW_EPARSE);
}

static void test_state_per_key_and_name(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp(), path[4200];
	int64_t named, per_key;
	snprintf(path, sizeof path, "%s/accepted.json", dir);
	/* no file yet: nothing accepted */
	assert_int_equal(ex_json_state_get(path, "k1", "A", &named, &per_key), 0);
	assert_true(named == 0 && per_key == 0);
	/* the per-key file of offwheel before names */
	static const char old[] = "{\"keys\": {\"k1\": {\"sequence\": 5, \"accepted_at\": 9}}}";
	assert_int_equal(tu_write_file(path, old, strlen(old)), 0);
	assert_int_equal(ex_json_state_get(path, "k1", "A", &named, &per_key), 0);
	assert_true(named == 0 && per_key == 5);
	assert_int_equal(ex_json_state_get(path, "k1", "", &named, &per_key), 0);
	assert_true(named == 0 && per_key == 5);
	/* named sticks go under "names", the per-key entry stays */
	assert_int_equal(ex_json_state_put(path, "k1", "A", 1700000000, 10), 0);
	assert_int_equal(ex_json_state_put(path, "k1", "B", 1700000100, 11), 0);
	assert_int_equal(ex_json_state_put(path, "k2", "A", 42, 12), 0);
	assert_int_equal(ex_json_state_get(path, "k1", "A", &named, &per_key), 0);
	assert_true(named == 1700000000 && per_key == 5);
	assert_int_equal(ex_json_state_get(path, "k1", "B", &named, &per_key), 0);
	assert_true(named == 1700000100 && per_key == 5);
	assert_int_equal(ex_json_state_get(path, "k2", "A", &named, &per_key), 0);
	assert_true(named == 42 && per_key == 0);
	assert_int_equal(ex_json_state_get(path, "k1", "C", &named, &per_key), 0);
	assert_true(named == 0 && per_key == 5);
	/* an export without a name updates the per-key entry only */
	assert_int_equal(ex_json_state_put(path, "k1", "", 6, 13), 0);
	assert_int_equal(ex_json_state_get(path, "k1", "A", &named, &per_key), 0);
	assert_true(named == 1700000000 && per_key == 6);
	/* what an older offwheel reads is still there, in its own shape */
	size_t n;
	char *text = tu_read_file(path, &n);
	assert_non_null(strstr(text, "\"keys\""));
	assert_non_null(strstr(text, "\"names\""));
	free(text);
	/* unreadable: an error, never a fresh start */
	static const char *const bad[] = {"{\"keys\": {}, \"names\": []}", "{\"names\": {}}", "{",
	                                  "[]"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_int_equal(tu_write_file(path, bad[i], strlen(bad[i])), 0);
		assert_int_equal(ex_json_state_get(path, "k1", "A", &named, &per_key), OW_EPARSE);
		assert_int_equal(ex_json_state_put(path, "k1", "A", 1, 1), OW_EPARSE);
	}
	tu_rmtree(dir);
	free(dir);
}

/* The lock file's environment for a set's target agrees with the marker
 * values the resolver evaluated the set's requirements with. */
static void test_lock_target_matches_the_resolver(void **state)
{
	(void)state;
	static const char *const cases[][2] = {
		{"3.11", "linux-x86_64"}, {"3.12", "linux-aarch64"}, {"3.13", "windows-x86_64"},
		{"3.12", "windows-arm64"}, {"3.13t", "macos-arm64"}, {"3.10", "macos-x86_64"},
		{"3.12", "manylinux2014_x86_64"}, {"3.11", "linux_x86_64"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct ow_target t;
		struct ow_marker_env env;
		struct ex_target x;
		char desc[200], text[220];
		assert_int_equal(ow_target_parse(&t, cases[i][0], cases[i][1]), 0);
		ow_marker_env_for_target(&env, &t);
		ow_target_describe(&t, desc, sizeof desc);
		snprintf(text, sizeof text, "cu128 %s", desc);
		assert_int_equal(ex_target_of(text, &x), 0);
		char py[16];
		tu_fmt(py, sizeof py, "%d.%d", x.py_major, x.py_minor);
		assert_string_equal(py, env.value[OW_MV_PYTHON_VERSION]);
		assert_string_equal(x.sys_platform, env.value[OW_MV_SYS_PLATFORM]);
		assert_string_equal(x.machine, env.value[OW_MV_PLATFORM_MACHINE]);
		assert_int_equal(x.freethreaded, t.freethreaded);
	}
	struct ex_target x;
	assert_int_equal(ex_target_of("cu128 files", &x), OW_EINVAL);
	assert_int_equal(ex_target_of("cu128 cp312-plan9_mips", &x), OW_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_name_problem),
	    cmocka_unit_test(test_target_of_req_name),
	    cmocka_unit_test(test_default_name),
	    cmocka_unit_test(test_manifest_name),
	    cmocka_unit_test(test_state_per_key_and_name),
	    cmocka_unit_test(test_lock_target_matches_the_resolver),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
