#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "offwheel/str.h"

static void test_pieces_make_one_string(void **state)
{
	(void)state;
	struct ow_str b = {0};
	ow_str_puts(&b, "https://");
	ow_str_put(&b, "host.example/xyz", 12);
	ow_str_printf(&b, "/%s-%d%%", "torch", 2);
	assert_int_equal(b.err, 0);
	assert_int_equal(b.n, strlen("https://host.example/torch-2%"));
	char *s;
	assert_int_equal(ow_str_take(&b, &s), 0);
	assert_string_equal(s, "https://host.example/torch-2%");
	assert_null(b.p);
	free(s);
}

static void test_grows_past_many_reallocs(void **state)
{
	(void)state;
	struct ow_str b = {0};
	for (int i = 0; i < 10000; i++)
		ow_str_printf(&b, "%05d,", i);
	assert_int_equal(b.err, 0);
	assert_int_equal(b.n, 60000u);
	assert_memory_equal(b.p + 59994, "09999,", 6);
	assert_int_equal(b.p[b.n], '\0');
	ow_str_dispose(&b);
	assert_null(b.p);
}

static void test_empty_is_the_empty_string(void **state)
{
	(void)state;
	struct ow_str b = {0};
	char *s = NULL;
	assert_int_equal(ow_str_take(&b, &s), 0);
	assert_string_equal(s, "");
	free(s);
}

static void test_first_failure_sticks(void **state)
{
	(void)state;
	struct ow_str b = {0};
	ow_str_puts(&b, "abc");
	b.err = OW_ENOMEM; /* as a failed realloc leaves it */
	ow_str_puts(&b, "def");
	ow_str_printf(&b, "%d", 42);
	assert_int_equal(b.n, 3u);
	char *s = (char *)"untouched";
	assert_int_equal(ow_str_take(&b, &s), OW_ENOMEM);
	assert_string_equal(s, "untouched");
	assert_null(b.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pieces_make_one_string),
		cmocka_unit_test(test_grows_past_many_reallocs),
		cmocka_unit_test(test_empty_is_the_empty_string),
		cmocka_unit_test(test_first_failure_sticks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
