/* test_exportdevices.c - a set's device verdicts in manifest.json: what
 * export writes, check reads back, and the malformed ones check refuses. */
#include <string.h>

#include "testutil.h"

#include "offwheel/error.h"
#include "exportint.h"

static const char head[] = "{\"format\":\"offwheel-export-1\",\"sequence\":2,\"created_unix\":1,"
                           "\"expires_unix\":2,\"key_id\":null,\"files\":[]";

static int parse_with(const char *sets, struct ex_manifest *m)
{
	char doc[4096];
	snprintf(doc, sizeof doc, "%s%s%s}", head, sets ? ",\"sets\":" : "", sets ? sets : "");
	return ex_json_parse(doc, strlen(doc), m);
}

/* Written by export, read by check: cc, driver, verdict, runs, and the
 * library behind a failure. */
static void test_roundtrip(void **state)
{
	(void)state;
	struct ow_export_device dev[2] = {
	    {.cc = 120,
	     .verdict = "none",
	     .runs = 0,
	     .wheel = "torch-2.10.0+cu126-cp312.whl",
	     .library = "torch/lib/libtorch_cuda.so",
	     .modules = 3,
	     .no_image = 3,
	     .detail = "torch/lib/libtorch_cuda.so: 3 of 3 modules have no sm_120 image"},
	    {.cc = 86, .driver = 12080, .verdict = "jit", .runs = 1, .predicted = 1},
	};
	struct ow_export_set sets[2] = {
	    {.id = 7,
	     .target = "cu126 cp312-manylinux_2_28_x86_64",
	     .req_name = "a",
	     .complete = 1,
	     .devices = dev,
	     .ndevices = 2},
	    {.id = 8,
	     .target = "cu128 cp312-manylinux_2_28_x86_64",
	     .req_name = "b",
	     .complete = 1},
	};
	struct ow_export_plan p = {.sets = sets, .nsets = 2};
	struct ex_meta meta = {
	    .sequence = 3, .created = 10, .expires = 20, .dir = "/x", .name = "lab"};
	struct ex_files files = {0};
	struct ow_str out = {0};
	assert_int_equal(ex_json_manifest(&p, &meta, &files, &out), 0);
	struct ex_manifest m;
	assert_int_equal(ex_json_parse(out.p, out.n, &m), 0);
	assert_int_equal(m.nsets, 2);
	assert_string_equal(m.name, "lab");
	assert_string_equal(m.sets[0].target, "cu126 cp312-manylinux_2_28_x86_64");
	assert_int_equal(m.sets[0].n, 2);
	const struct ow_check_device *d = &m.sets[0].devices[0];
	assert_string_equal(d->cc, "12.0");
	assert_string_equal(d->driver, "");
	assert_string_equal(d->verdict, "none");
	assert_int_equal(d->runs, 0);
	assert_string_equal(d->detail,
	                    "torch/lib/libtorch_cuda.so: 3 of 3 modules have no sm_120 image");
	d = &m.sets[0].devices[1];
	assert_string_equal(d->cc, "8.6");
	assert_string_equal(d->driver, "12.8");
	assert_int_equal(d->runs, 1);
	assert_int_equal(d->predicted, 1);
	assert_null(d->detail);
	assert_int_equal(m.sets[1].n, 0);
	ex_manifest_dispose(&m);
	ow_str_dispose(&out);
	/* the INSTALL.txt lines */
	assert_int_equal(ex_gen_install(&p, &meta, &out), 0);
	assert_non_null(strstr(out.p, "\n  audited for 12.0: WOULD NOT RUN (none) — torch/lib/"
	                              "libtorch_cuda.so: 3 of 3 modules have no sm_120 image\n"));
	assert_non_null(strstr(out.p, "\n  audited for 8.6 with driver 12.8: runs (jit, predicted "
	                              "from torchvision)\n"));
	assert_non_null(strstr(out.p, "cu128 cp312-manylinux_2_28_x86_64\n  not audited for any "
	                              "device\n"));
	ow_str_dispose(&out);
}

/* A manifest from before devices were recorded is fine. */
static void test_absent(void **state)
{
	(void)state;
	struct ex_manifest m;
	assert_int_equal(parse_with(NULL, &m), 0);
	assert_int_equal(m.nsets, 0);
	ex_manifest_dispose(&m);
	assert_int_equal(parse_with("[{\"target\":\"t\"}]", &m), 0);
	assert_int_equal(m.nsets, 1);
	assert_int_equal(m.sets[0].n, 0);
	ex_manifest_dispose(&m);
}

static void test_malformed(void **state)
{
	(void)state;
	static const char *const bad[] = {
	    "{}",
	    "[{\"devices\":[]}]",
	    "[{\"target\":\"t\",\"devices\":{}}]",
	    "[{\"target\":\"t\",\"devices\":[{\"cc\":\"12.0.1\",\"verdict\":\"none\",\"runs\":"
	    "false,"
	    "\"predicted\":false}]}]",
	    "[{\"target\":\"t\",\"devices\":[{\"cc\":\"12\",\"verdict\":\"none\",\"runs\":false,"
	    "\"predicted\":false}]}]",
	    "[{\"target\":\"t\",\"devices\":[{\"cc\":\"12.0\",\"verdict\":\"maybe\",\"runs\":false,"
	    "\"predicted\":false}]}]",
	    "[{\"target\":\"t\",\"devices\":[{\"cc\":\"12.0\",\"verdict\":\"none\",\"runs\":\"no\","
	    "\"predicted\":false}]}]",
	    "[{\"target\":\"t\",\"devices\":[{\"cc\":\"12.0\",\"verdict\":\"none\",\"runs\":false,"
	    "\"predicted\":false,\"driver\":\"new\"}]}]",
	    "[{\"target\":\"t\",\"devices\":[{\"cc\":\"12.0\",\"verdict\":\"none\",\"runs\":false}]"
	    "}]",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct ex_manifest m;
		assert_int_equal(parse_with(bad[i], &m), OW_EPARSE);
		ex_manifest_dispose(&m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_roundtrip),
	    cmocka_unit_test(test_absent),
	    cmocka_unit_test(test_malformed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
