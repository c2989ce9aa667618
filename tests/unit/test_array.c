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

static void test_grow_by_several(void **state)
{
	(void)state;
	char **v = NULL;
	size_t n = 0;
	for (int i = 0; i < 1000; i++) { /* three at a time, as tag triples */
		char **g = ow_array_grow(v, n, 3, sizeof *g);
		assert_non_null(g);
		v = g;
		for (int k = 0; k < 3; k++)
			v[n++] = (char *)"t";
	}
	assert_int_equal(n, 3000u);
	assert_string_equal(v[2999], "t");
	/* a block that already has room is kept */
	assert_ptr_equal(ow_array_grow(v, 3000, 48, sizeof *v), v);
	/* n + add wrapping, or past one object: NULL, v still ours */
	assert_null(ow_array_grow(v, n, SIZE_MAX, sizeof *v));
	assert_null(ow_array_grow(v, n, SIZE_MAX - n, sizeof *v));
	assert_null(ow_array_grow(v, n, SIZE_MAX / sizeof *v, sizeof *v));
	assert_string_equal(v[0], "t");
	free(v);
}

static void test_reserve_doubles_a_kept_capacity(void **state)
{
	(void)state;
	int *v = NULL;
	size_t cap = 0, n = 0;
	unsigned moves = 0;
	for (int i = 0; i < 100000; i++) {
		int *g = ow_array_reserve(v, &cap, n + 1, sizeof *g);
		assert_non_null(g);
		moves += g != v;
		v = g;
		v[n++] = i;
	}
	assert_int_equal(cap, 131072u);
	assert_true(moves <= 16); /* 4, 8, ... 131072: doubling, not one by one */
	assert_int_equal(v[99999], 99999);
	/* more than double: doubled until it holds */
	int *g = ow_array_reserve(v, &cap, 300000, sizeof *g);
	assert_non_null(g);
	v = g;
	assert_int_equal(cap, 524288u);
	v[299999] = 1;
	/* room already there: the same block, the capacity kept */
	assert_ptr_equal(ow_array_reserve(v, &cap, 10, sizeof *v), v);
	assert_int_equal(cap, 524288u);
	/* too large for one object: NULL, block and capacity unchanged */
	assert_null(ow_array_reserve(v, &cap, SIZE_MAX, sizeof *v));
	assert_null(ow_array_reserve(v, &cap, SIZE_MAX / 2 + 1, 2));
	assert_null(ow_array_reserve(v, &cap, (size_t)PTRDIFF_MAX / sizeof *v + 1, sizeof *v));
	assert_int_equal(cap, 524288u);
	assert_int_equal(v[99999], 99999);
	free(v);
}

static void test_freeing_after_a_refusal(void **state)
{
	(void)state;
	/* a refused first growth leaves nothing to free */
	size_t cap = 0;
	assert_null(ow_array_reserve(NULL, &cap, SIZE_MAX, 8));
	assert_int_equal(cap, 0u);
	assert_null(ow_array_grow(NULL, 0, SIZE_MAX, 8));
	/* a grown array is one block: one free() releases it (ASan checks) */
	int64_t *v = NULL;
	size_t n = 0;
	for (int i = 0; i < 37; i++) {
		int64_t *g = ow_array_more(v, n, sizeof *g);
		assert_non_null(g);
		v = g;
		v[n++] = i;
	}
	assert_null(ow_array_more(v, SIZE_MAX, sizeof *v));
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_appends_keep_every_element),
	    cmocka_unit_test(test_capacity_is_implied_by_the_count),
	    cmocka_unit_test(test_overflow_is_refused_not_wrapped),
	    cmocka_unit_test(test_grow_by_several),
	    cmocka_unit_test(test_reserve_doubles_a_kept_capacity),
	    cmocka_unit_test(test_freeing_after_a_refusal),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
