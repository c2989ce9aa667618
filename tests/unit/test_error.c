#include "testutil.h"

#include <stdlib.h>
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
	assert_int_equal(ow_err_exit_code(OW_EINTERRUPTED), 130); /* no signal recorded */
	assert_string_equal(ow_err_name(OW_EINTERRUPTED), "EINTERRUPTED");
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

/* A long name in a message leaves its start and its end (the cause, what to
 * do) whole, with the count of what was left out between them. */
static void test_err_long_message_keeps_its_end(void **state)
{
	(void)state;
	char big[5000];
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	ow_err(OW_EIO, "cannot open %s: disk full — free some space", big);
	const char *d = ow_err_detail();
	size_t n = strlen(d);
	assert_int_equal(n, 2047);
	assert_memory_equal(d, "cannot open aaa", 15);
	assert_non_null(strstr(d, ": disk full — free some space"));
	assert_int_equal(strcmp(d + n - strlen("free some space"), "free some space"), 0);
	const char *mark = strstr(d, " [... ");
	assert_non_null(mark);
	unsigned long left = strtoul(mark + 6, NULL, 10);
	/* what is shown plus what was left out is the whole message */
	size_t whole = strlen("cannot open ") + strlen(big) + strlen(": disk full — free some space");
	size_t shown = n - (size_t)(strstr(mark, "...] ") + 5 - mark);
	assert_int_equal(shown + left, whole);
	/* the prefix goes in front of a long detail, the end still whole */
	ow_err_prefix(OW_EIO, "set:3: ");
	assert_memory_equal(ow_err_detail(), "set:3: cannot open", 18);
	assert_non_null(strstr(ow_err_detail(), "free some space"));
	/* never a cut UTF-8 sequence: every byte of the end is from a whole one */
	char wide[3000 * 3 + 1];
	for (size_t i = 0; i < 3000; i++)
		memcpy(wide + 3 * i, "\xe2\x80\x94", 3); /* U+2014 */
	wide[9000] = '\0';
	char out[101];
	ow_err_fit(out, sizeof out, wide);
	const char *m2 = strstr(out, " [... ");
	assert_non_null(m2);
	assert_int_equal((m2 - out) % 3, 0);
	const char *after = strstr(m2, "...] ") + 5;
	assert_int_equal(strlen(after) % 3, 0);
	assert_int_equal((unsigned char)after[0], 0xe2);
	/* a short text is copied whole */
	ow_err_fit(out, sizeof out, "short");
	assert_string_equal(out, "short");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_err_sets_detail_and_returns_code),
		cmocka_unit_test(test_err_table),
		cmocka_unit_test(test_err_prefix_truncates_safely),
		cmocka_unit_test(test_err_long_message_keeps_its_end),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
