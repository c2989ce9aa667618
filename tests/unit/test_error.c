#include "testutil.h"

#include <string.h>

#include "offwheel/error.h"

static void test_err_sets_detail_and_returns_code(void **state)
{
	(void)state;
	assert_int_equal(ow_err(OW_EHASH, "x: %d", 7), OW_EHASH);
	assert_string_equal(ow_err_detail(), "x: 7");
	assert_int_equal(ow_err_prefix(OW_EHASH, "file.whl: "), OW_EHASH);
	assert_string_equal(ow_err_detail(), "file.whl: x: 7");
	ow_err_clear();
	assert_string_equal(ow_err_detail(), "");
}

static void test_err_table(void **state)
{
	(void)state;
	assert_string_equal(ow_err_name(OW_EHASH), "EHASH");
	assert_string_equal(ow_err_name(0), "OK");
	assert_string_equal(ow_err_name(12345), "UNKNOWN");
	assert_int_equal(ow_err_exit_code(OW_EHASH), 3);
	assert_int_equal(ow_err_exit_code(OW_EINVAL), 2);
	assert_int_equal(ow_err_exit_code(OW_EINCOMPLETE), 4);
	assert_int_equal(ow_err_exit_code(OW_ENODRIVER), 5);
	assert_int_equal(ow_err_exit_code(OW_OK), 0);
	assert_true(OW_EHASH < 0);
}

static void test_err_prefix_truncates_safely(void **state)
{
	(void)state;
	char big[5000];
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	ow_err(OW_EIO, "%s", big);
	ow_err_prefix(OW_EIO, "%s", big);
	assert_int_equal(strlen(ow_err_detail()), 2047);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_err_sets_detail_and_returns_code),
		cmocka_unit_test(test_err_table),
		cmocka_unit_test(test_err_prefix_truncates_safely),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
