/* test_doctor.c - the fix doctor suggests per compute capability, and the
 * CUDA variant read from an install; the stand-in-driver paths are in
 * tests/integration/smoke.bats. */
#include "testutil.h"

#include <string.h>

#include "offwheel/doctor.h"
#include "offwheel/error.h"
#include "offwheel/torchsite.h"

static void test_suggest_table(void **state)
{
	(void)state;
	static const struct {
		int cc;
		const char *channel, *variant;
	} rows[] = {
		{120, "stable", "cu128"}, {121, "stable", "cu128"}, {100, "stable", "cu128"},
		{103, "stable", "cu128"}, {90, "stable", "cu128"},  {86, "stable", "cu128"},
		{75, "stable", "cu128"},  {70, "stable", "cu126"},  {61, "stable", "cu126"},
		{50, "stable", "cu126"},  {110, "nightly", "cu130"},
		/* a future 13.0 device: compute_120 PTX JITs forward */
		{130, "stable", "cu128"},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		struct ow_doctor_fix f;
		assert_int_equal(ow_doctor_suggest(rows[i].cc, 0, "3.12", "manylinux_2_28_x86_64", &f), 0);
		if (strcmp(f.channel, rows[i].channel) || strcmp(f.variant, rows[i].variant))
			fail_msg("cc %d: got %s %s, want %s %s", rows[i].cc, f.channel, f.variant,
			         rows[i].channel, rows[i].variant);
	}
	struct ow_doctor_fix f;
	assert_int_equal(ow_doctor_suggest(35, 0, NULL, NULL, &f), OW_ENOENT);
	assert_int_equal(f.needed, 0);
}

static void test_suggest_commands(void **state)
{
	(void)state;
	struct ow_doctor_fix f;
	assert_int_equal(ow_doctor_suggest(120, 12060, "3.12", "manylinux_2_28_x86_64", &f), 0);
	assert_string_equal(f.since, "2.7.0");
	assert_string_equal(f.commands[1], "offwheel sync --channel stable --variant cu128 --python "
	                                   "3.12 --platform manylinux_2_28_x86_64");
	/* the names export really writes: the target, and its requirements file */
	assert_string_equal(f.commands[2], "offwheel export DIR --target 'cu128 "
	                                   "cp312-manylinux_2_28_x86_64' --sign lab.sec");
	assert_string_equal(f.commands[3], "offwheel check DIR --pubkey lab.pub");
	assert_string_equal(f.commands[4], "pip install --no-index --find-links DIR/wheels "
	                                   "--require-hashes -r DIR/requirements/"
	                                   "cu128-cp312-manylinux_2_28_x86_64.txt");
	assert_non_null(strstr(f.note, "CUDA 12.6"));
	assert_int_equal(ow_doctor_suggest(120, 12080, NULL, NULL, &f), 0);
	assert_string_equal(f.note, "");
	assert_string_equal(f.python, "X.Y");
	assert_non_null(strstr(f.platform, "manylinux_2_28_"));
	/* the longest platform its field holds goes into every command whole */
	char plat[sizeof f.platform];
	memset(plat, 'p', sizeof plat - 1);
	plat[sizeof plat - 1] = '\0';
	assert_int_equal(ow_doctor_suggest(120, 0, "3.13t", plat, &f), 0);
	assert_non_null(strstr(f.commands[4], "cu128-cp313t-"));
	assert_non_null(strstr(f.commands[4], plat));
	assert_non_null(strstr(f.commands[2], plat));
	/* one byte more is refused, never cut into a command for another platform */
	char longer[sizeof f.platform + 1];
	memset(longer, 'p', sizeof longer - 1);
	longer[sizeof longer - 1] = '\0';
	assert_int_equal(ow_doctor_suggest(120, 0, "3.12", longer, &f), OW_ETOOBIG);
	assert_int_equal(f.needed, 0);
	assert_int_equal(f.n_commands, 0);
	assert_non_null(strstr(ow_err_detail(), "platform"));
}

static void test_variant(void **state)
{
	(void)state;
	static const struct {
		const char *cuda, *version, *want;
	} rows[] = {
		{"12.8", "2.7.0+cu128", "cu128"},
		{"13.0", "2.11.0", "cu130"},
		{"", "2.7.0+cpu", "cpu"},
		{NULL, "2.6.0+rocm6.2.4", "rocm6.2.4"},
		{"12.6", NULL, "cu126"},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		char buf[32];
		assert_int_equal(ow_torch_variant(rows[i].cuda, rows[i].version, buf, sizeof buf), 0);
		assert_string_equal(buf, rows[i].want);
	}
	char buf[32];
	assert_int_equal(ow_torch_variant(NULL, "2.7.0", buf, sizeof buf), OW_ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_suggest_table),
		cmocka_unit_test(test_suggest_commands),
		cmocka_unit_test(test_variant),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
