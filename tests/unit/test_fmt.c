#include "testutil.h"

#include <string.h>

#include "fmt.h"
#include "offwheel/error.h"

static void test_text_that_fits_is_written(void **state)
{
	(void)state;
	char buf[16];
	assert_int_equal(ow_fmt(buf, sizeof buf, "%s-%d", "cu", 128), 0);
	assert_string_equal(buf, "cu-128");
}

static void test_text_that_exactly_fits_is_written(void **state)
{
	(void)state;
	char buf[8]; /* seven characters and the NUL */
	assert_int_equal(ow_fmt(buf, sizeof buf, "%s%s", "pair", ":ne"), 0);
	assert_string_equal(buf, "pair:ne");
}

static void test_one_byte_too_long_is_refused_and_leaves_empty(void **state)
{
	(void)state;
	char buf[8];
	memset(buf, 'x', sizeof buf);
	assert_int_equal(ow_fmt(buf, sizeof buf, "%s", "pair:new"), OW_ETOOBIG);
	/* no half value: the empty string */
	assert_string_equal(buf, "");
	const char *d = ow_err_detail();
	assert_non_null(strstr(d, "\"%s\""));
	assert_non_null(strstr(d, "needs 9 bytes"));
	assert_non_null(strstr(d, "has 8"));
}

static void test_no_room_at_all_is_refused(void **state)
{
	(void)state;
	char buf[1] = {'x'};
	assert_int_equal(ow_fmt(buf, 0, "%s", ""), OW_ETOOBIG);
	assert_int_equal(buf[0], 'x'); /* n == 0: not a byte written */
	assert_int_equal(ow_fmt(buf, sizeof buf, "%s", ""), 0);
	assert_string_equal(buf, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_that_fits_is_written),
		cmocka_unit_test(test_text_that_exactly_fits_is_written),
		cmocka_unit_test(test_one_byte_too_long_is_refused_and_leaves_empty),
		cmocka_unit_test(test_no_room_at_all_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
