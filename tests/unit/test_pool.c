/* test_pool.c - the parallel loop, and errors carried across its threads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "offwheel/error.h"
#include "pool.h"

struct job {
	int done[200];
	size_t fail_from; /* calls at this index and above fail */
};

static int work(void *ud, size_t i)
{
	struct job *j = ud;
	__atomic_add_fetch(&j->done[i], 1, __ATOMIC_RELAXED);
	if (i < j->fail_from)
		return 0;
	if (i % 3 == 0)
		return 1; /* "stopped because another failed": not an error */
	return ow_err(i % 2 ? OW_EHASH : OW_EIO, "item %zu failed", i);
}

static void test_every_index_once(void **state)
{
	(void)state;
	struct job j = {.fail_from = SIZE_MAX};
	assert_int_equal(ow_parallel_for(200, 8, work, &j), 0);
	assert_int_equal(ow_parallel_run(200, 8, work, &j), 0);
	for (size_t i = 0; i < 200; i++)
		assert_int_equal(j.done[i], 2);
}

static void test_run_keeps_the_lowest_failure_with_its_detail(void **state)
{
	(void)state;
	for (int jobs = 1; jobs <= 16; jobs *= 2) {
		struct job j = {.fail_from = 150};
		ow_err(OW_EINVAL, "something older on this thread");
		int rc = ow_parallel_run(200, jobs, work, &j);
		/* 150 stopped (positive), 151 is the first real error, whichever
		 * thread got there first; its detail is on this thread now */
		assert_int_equal(rc, OW_EHASH);
		assert_string_equal(ow_err_detail(), "item 151 failed");
		for (size_t i = 0; i < 200; i++)
			assert_int_equal(j.done[i], 1);
	}
	struct job j = {.fail_from = 150};
	assert_int_equal(ow_parallel_for(200, 4, work, &j), 50);
}

static void test_save_restore(void **state)
{
	(void)state;
	struct ow_err_saved s = {0};
	assert_int_equal(ow_err_restore(&s), 0); /* nothing saved: nothing changes */
	ow_err(OW_EZIP, "the cause");
	ow_err_save(&s, OW_EZIP);
	ow_err(OW_EIO, "later");
	assert_int_equal(ow_err_restore(&s), OW_EZIP);
	assert_string_equal(ow_err_detail(), "the cause");
	assert_null(s.detail);
	assert_int_equal(s.code, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_index_once),
		cmocka_unit_test(test_run_keeps_the_lowest_failure_with_its_detail),
		cmocka_unit_test(test_save_restore),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
