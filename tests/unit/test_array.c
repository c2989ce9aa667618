#include "testutil.h"

#include <stdint.h>
#include <stdlib.h>

#include "array.h"

struct pair {
	int64_t a;
	char b[24];
};

static void test_appends_keep_every_element(void **state)
{
	(void)state;
	struct pair *v = NULL;
	size_t n = 0;
	for (int i = 0; i < 100000; i++) {
		struct pair *g = ow_array_more(v, n, sizeof *g);
		assert_non_null(g);
		v = g;
		v[n].a = i;
		snprintf(v[n].b, sizeof v[n].b, "item %d", i);
		n++;
	}
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(v[i].a, (int64_t)i);
	}
	assert_string_equal(v[99999].b, "item 99999");
	free(v);
}

static void test_capacity_is_implied_by_the_count(void **state)
{
	(void)state;
	assert_int_equal(ow_array_capacity(0), 0);
	assert_int_equal(ow_array_capacity(1), 4);
	assert_int_equal(ow_array_capacity(4), 4);
	assert_int_equal(ow_array_capacity(5), 8);
	assert_int_equal(ow_array_capacity(1000), 1024);
	/* room is given without a realloc below the capacity */
	int *v = ow_array_more(NULL, 0, sizeof *v);
	assert_non_null(v);
	assert_ptr_equal(ow_array_more(v, 1, sizeof *v), v);
	assert_ptr_equal(ow_array_more(v, 3, sizeof *v), v);
	int *g = ow_array_more(v, 4, sizeof *v);
	assert_non_null(g);
	for (int i = 0; i < 8; i++) /* 8 elements fit now: ASan checks it */
		g[i] = i;
	free(g);
}

static void test_overflow_is_refused_not_wrapped(void **state)
{
	(void)state;
	char *p = malloc(16);
	assert_non_null(p);
	/* a count whose doubled size wraps around size_t: NULL, p untouched */
	assert_null(ow_array_more(p, (size_t)1 << (sizeof(size_t) * 8 - 2), 16));
	assert_null(ow_array_more(p, SIZE_MAX / 2 + 1, 1));
	assert_null(ow_array_more(NULL, 0, SIZE_MAX / 2));
	assert_null(ow_array_more(NULL, 0, 0));
	p[15] = 'x'; /* still ours */
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_appends_keep_every_element),
	    cmocka_unit_test(test_capacity_is_implied_by_the_count),
	    cmocka_unit_test(test_overflow_is_refused_not_wrapped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
