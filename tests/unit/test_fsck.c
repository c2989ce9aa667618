#include "testutil.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "offwheel/error.h"
#include "offwheel/fsck.h"
#include "fsutil.h"
#include "store.h"

#define ABC_HEX "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

static ow_store *open_store(char **home)
{
	ow_store *s;
	*home = tu_mkdtemp();
	assert_int_equal(ow_store_open(*home, OW_STORE_WRITE, 5, "test", &s), 0);
	return s;
}

static size_t count_kind(const struct ow_fsck_report *r, enum ow_fsck_kind k)
{
	size_t n = 0;
	for (size_t i = 0; i < r->nissues; i++)
		n += r->issues[i].kind == k;
	return n;
}

/* The crash between "object published" and "row inserted": an object file
 * without a row.  fsck must call it garbage (not an error) and gc remove it. */
static void test_crash_between_object_and_row(void **state)
{
	(void)state;
	char *home;
	ow_store *s = open_store(&home);
	char path[4096], dir[4096];
	struct ow_tmp t;
	assert_int_equal(ow_tmp_create(ow_store_tmpdir(s), OW_TMP_OBJECT_PREFIX, &t), 0);
	assert_int_equal(ow_write_all(t.fd, "abc", 3), 0);
	ow_store_object_path(s, ABC_HEX, path, sizeof path);
	ow_dirname(dir, sizeof dir, path);
	ow_mkdir_p(dir, 0755);
	assert_int_equal(ow_tmp_publish(&t, path), 0); /* ... and "crash" before the row */
	char other[65];
	assert_int_equal(ow_store_put_buf(s, "kept", 4, NULL, "blob", other), 0);

	struct ow_fsck_report r;
	assert_int_equal(ow_fsck(s, 2, &r), 0);
	assert_int_equal(r.errors, 0);
	assert_int_equal(r.garbage, 1);
	assert_int_equal(count_kind(&r, OW_FSCK_ORPHAN), 1);
	assert_string_equal(r.issues[0].what, ABC_HEX);
	ow_fsck_report_dispose(&r);

	struct ow_gc_result g;
	struct ow_gc_opts keep = {.prune_s = OW_GC_PRUNE_DEFAULT_S}, now = {0};
	/* fresh garbage may be a writer's: kept unless --prune=now */
	assert_int_equal(ow_gc_garbage(s, &keep, &g), 0);
	assert_int_equal(g.removed_objects, 0);
	assert_int_equal(g.kept_young, 1);
	assert_int_equal(access(path, F_OK), 0);
	assert_int_equal(ow_gc_garbage(s, &now, &g), 0);
	assert_int_equal(g.removed_objects, 1);
	assert_int_not_equal(access(path, F_OK), 0);
	assert_int_equal(ow_fsck(s, 2, &r), 0);
	assert_int_equal(r.errors + r.garbage, 0);
	assert_int_equal(r.rows, 1); /* the recorded object is untouched */
	ow_fsck_report_dispose(&r);
	ow_store_close(s);
	tu_rmtree(home);
	free(home);
}

static void test_missing_and_corrupt_are_errors(void **state)
{
	(void)state;
	char *home;
	ow_store *s = open_store(&home);
	char a[65], b[65], path[4096];
	assert_int_equal(ow_store_put_buf(s, "abc", 3, NULL, "blob", a), 0);
	assert_int_equal(ow_store_put_buf(s, "xyz", 3, NULL, "blob", b), 0);
	ow_store_object_path(s, a, path, sizeof path);
	unlink(path);
	ow_store_object_path(s, b, path, sizeof path);
	tu_write_file(path, "xyZ", 3);
	struct ow_fsck_report r;
	assert_int_equal(ow_fsck(s, 2, &r), 0);
	assert_int_equal(r.errors, 2);
	assert_int_equal(count_kind(&r, OW_FSCK_MISSING), 1);
	assert_int_equal(count_kind(&r, OW_FSCK_CORRUPT), 1);
	ow_fsck_report_dispose(&r);
	ow_store_close(s);
	tu_rmtree(home);
	free(home);
}

static void test_strays_and_temp_files(void **state)
{
	(void)state;
	char *home;
	ow_store *s = open_store(&home);
	char p[4096];
	snprintf(p, sizeof p, "%s/objects/sha256/obj-half", home);
	tu_write_file(p, "x", 1);
	snprintf(p, sizeof p, "%s/tmp/" OW_TMP_OBJECT_PREFIX "abc", home);
	tu_write_file(p, "x", 1);
	snprintf(p, sizeof p, "%s/tmp/" OW_TMP_PARTIAL_PREFIX "torch.whl", home);
	tu_write_file(p, "partial", 7);
	struct ow_fsck_report r;
	assert_int_equal(ow_fsck(s, 1, &r), 0);
	assert_int_equal(r.errors, 0);
	assert_int_equal(count_kind(&r, OW_FSCK_STRAY), 1);
	assert_int_equal(count_kind(&r, OW_FSCK_PARTIAL), 2);
	ow_fsck_report_dispose(&r);
	struct ow_gc_result g;
	struct ow_gc_opts now = {0}, partials = {.drop_partials = 1};
	assert_int_equal(ow_gc_garbage(s, &now, &g), 0);
	assert_int_equal(g.removed_objects, 1);
	assert_int_equal(g.removed_tmp, 1); /* the partial download is kept */
	assert_int_equal(access(p, F_OK), 0);
	assert_int_equal(ow_gc_garbage(s, &partials, &g), 0);
	assert_int_equal(g.removed_tmp, 1);
	assert_int_not_equal(access(p, F_OK), 0);
	ow_store_close(s);
	tu_rmtree(home);
	free(home);
}

/* gc reports a directory where it expects files, and goes on with the rest. */
static void test_gc_goes_on_past_directories(void **state)
{
	(void)state;
	char *home;
	ow_store *s = open_store(&home);
	char p[4096];
	snprintf(p, sizeof p, "%s/tmp/a-dir", home);
	mkdir(p, 0755);
	snprintf(p, sizeof p, "%s/objects/sha256/zz", home);
	mkdir(p, 0755);
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof p, "%s/tmp/" OW_TMP_OBJECT_PREFIX "%d", home, i);
		tu_write_file(p, "x", 1);
		snprintf(p, sizeof p, "%s/objects/sha256/stray-%d", home, i);
		tu_write_file(p, "x", 1);
	}
	struct ow_gc_result g;
	struct ow_gc_opts now = {0};
	assert_int_equal(ow_gc_garbage(s, &now, &g), 0);
	assert_int_equal(g.removed_tmp, 3);
	assert_int_equal(g.removed_objects, 3);
	assert_int_equal(g.left, 2);
	snprintf(p, sizeof p, "%s/tmp/a-dir", home);
	assert_int_equal(access(p, F_OK), 0);
	ow_store_close(s);
	tu_rmtree(home);
	free(home);
}

static void test_prune_ages(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int ok;
		int64_t seconds;
	} cases[] = {
		{"now", 1, 0},    {"0", 1, 0},      {"90", 1, 90},    {"90s", 1, 90},
		{"30m", 1, 1800}, {"2h", 1, 7200},  {"7d", 1, 604800}, {"1w", 1, 604800},
		{"", 0, 0},       {"-1h", 0, 0},    {"1x", 0, 0},     {"h", 0, 0},
		{"1hh", 0, 0},    {"99999999999999999999", 0, 0},      {"+5s", 0, 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int64_t v = -1;
		int rc = ow_gc_parse_prune(cases[i].text, &v);
		assert_int_equal(rc == 0, cases[i].ok);
		if (cases[i].ok)
			assert_int_equal(v, cases[i].seconds);
	}
}

/* A damaged object found by fsck is marked, so that fetch repairs it. */
static void test_fsck_marks_damage(void **state)
{
	(void)state;
	char *home;
	ow_store *s = open_store(&home);
	char a[65], path[4096], why[512];
	assert_int_equal(ow_store_put_buf(s, "abc", 3, NULL, "blob", a), 0);
	ow_store_object_path(s, a, path, sizeof path);
	tu_write_file(path, "abd", 3);
	struct ow_fsck_report r;
	assert_int_equal(ow_fsck(s, 1, &r), 0);
	assert_int_equal(r.errors, 1);
	ow_fsck_report_dispose(&r);
	assert_int_equal(ow_store_usable(s, a, NULL, why, sizeof why), 0);
	ow_store_close(s);
	tu_rmtree(home);
	free(home);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crash_between_object_and_row),
		cmocka_unit_test(test_missing_and_corrupt_are_errors),
		cmocka_unit_test(test_strays_and_temp_files),
		cmocka_unit_test(test_gc_goes_on_past_directories),
		cmocka_unit_test(test_prune_ages),
		cmocka_unit_test(test_fsck_marks_damage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
