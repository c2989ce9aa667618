#include "testutil.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "offwheel/error.h"
#include "offwheel/fsck.h"
#include "fsutil.h"
#include "store.h"

#define ABC_HEX "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

struct fx {
	char *home;
	ow_store *s;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof *f);
	f->home = tu_mkdtemp();
	if (ow_store_open(f->home, OW_STORE_WRITE, 5, "test", &f->s))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	ow_store_close(f->s);
	tu_rmtree(f->home);
	free(f->home);
	free(f);
	return 0;
}

static size_t count_dir(const char *path)
{
	DIR *d = opendir(path);
	size_t n = 0;
	struct dirent *e;
	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static size_t count_rows(ow_store *s)
{
	struct ow_obj_row *rows;
	size_t n;
	assert_int_equal(ow_store_list(s, NULL, &rows, &n), 0);
	free(rows);
	return n;
}

static void test_publish_twice_is_harmless(void **state)
{
	struct fx *f = *state;
	char hex[65], hex2[65], path[4096];
	assert_int_equal(ow_store_put_buf(f->s, "abc", 3, NULL, "blob", hex), 0);
	assert_string_equal(hex, ABC_HEX);
	assert_int_equal(ow_store_put_buf(f->s, "abc", 3, ABC_HEX, "blob", hex2), 0);
	assert_string_equal(hex2, ABC_HEX);
	assert_int_equal(count_rows(f->s), 1);
	assert_int_equal(ow_store_object_path(f->s, hex, path, sizeof path), 0);
	size_t len;
	char *got = tu_read_file(path, &len);
	assert_int_equal(len, 3);
	assert_memory_equal(got, "abc", 3);
	free(got);
	assert_int_equal(count_dir(ow_store_tmpdir(f->s)), 0);
	assert_int_equal(ow_store_verify(f->s, hex, 3), 0);
}

static void test_mismatch_is_never_published(void **state)
{
	struct fx *f = *state;
	char hex[65] = "";
	const char *wrong = "0000000000000000000000000000000000000000000000000000000000000000";
	assert_int_equal(ow_store_put_buf(f->s, "abc", 3, wrong, "wheel", hex), OW_EHASH);
	assert_non_null(strstr(ow_err_detail(), "not stored"));
	assert_string_equal(hex, "");
	assert_int_equal(count_rows(f->s), 0);
	char path[4096];
	ow_store_object_path(f->s, ABC_HEX, path, sizeof path);
	assert_int_not_equal(access(path, F_OK), 0);
	assert_int_equal(count_dir(ow_store_tmpdir(f->s)), 0);
}

static void test_cap_stops_writer(void **state)
{
	struct fx *f = *state;
	ow_obj_writer *w;
	assert_int_equal(ow_obj_begin(f->s, 4, &w), 0);
	assert_int_equal(ow_obj_write(w, "abc", 3), 0);
	assert_int_equal(ow_obj_write(w, "de", 2), OW_ETOOBIG);
	ow_obj_abort(w);
	assert_int_equal(count_dir(ow_store_tmpdir(f->s)), 0);
	assert_int_equal(count_rows(f->s), 0);
}

static void test_load_verifies_bytes(void **state)
{
	struct fx *f = *state;
	char hex[65], path[4096], *buf;
	size_t len;
	assert_int_equal(ow_store_put_buf(f->s, "abc", 3, NULL, "page", hex), 0);
	assert_int_equal(ow_store_load(f->s, hex, 100, &buf, &len), 0);
	assert_int_equal(len, 3);
	free(buf);
	assert_int_equal(ow_store_load(f->s, hex, 2, &buf, &len), OW_ETOOBIG);
	ow_store_object_path(f->s, hex, path, sizeof path);
	assert_int_equal(tu_write_file(path, "abd", 3), 0); /* damage it */
	assert_int_equal(ow_store_load(f->s, hex, 100, &buf, &len), OW_EHASH);
	assert_non_null(strstr(ow_err_detail(), "damaged"));
	assert_int_equal(ow_store_verify(f->s, hex, 3), OW_EHASH);
	struct ow_obj_row row = {.size = 3};
	memcpy(row.sha256, hex, 65);
	struct ow_verify_result res;
	assert_int_equal(ow_store_verify_many(f->s, &row, 1, 4, &res), 1);
	assert_int_equal(res.rc, OW_EHASH);
	assert_non_null(res.detail);
	assert_non_null(strstr(res.detail, "damaged"));
	ow_verify_results_dispose(&res, 1);
	assert_null(res.detail);
}

static void test_stream_put_fd_and_remove(void **state)
{
	struct fx *f = *state;
	char src[4096], hex[65], path[4096];
	snprintf(src, sizeof src, "%s/src", f->home);
	char *data = malloc(3 << 20);
	for (size_t i = 0; i < (3u << 20); i++)
		data[i] = (char)(i * 7 + (i >> 11));
	assert_int_equal(tu_write_file(src, data, 3 << 20), 0);
	int fd = open(src, O_RDONLY);
	assert_int_equal(ow_store_put_fd(f->s, fd, NULL, "wheel", hex), 0);
	close(fd);
	uint8_t d[32];
	char want[65];
	ow_sha256_buf(data, 3 << 20, d);
	ow_hex(d, 32, want);
	assert_string_equal(hex, want);
	uint64_t size = 0;
	char kind[16];
	assert_int_equal(ow_store_has(f->s, hex, &size, kind, sizeof kind), 1);
	assert_int_equal(size, 3 << 20);
	assert_string_equal(kind, "wheel");
	assert_int_equal(ow_store_remove(f->s, hex), 0);
	assert_int_equal(ow_store_has(f->s, hex, NULL, NULL, 0), 0);
	ow_store_object_path(f->s, hex, path, sizeof path);
	assert_int_not_equal(access(path, F_OK), 0);
	free(data);
}

static void test_adopt_finished_download(void **state)
{
	struct fx *f = *state;
	struct ow_tmp t;
	assert_int_equal(ow_tmp_create(ow_store_tmpdir(f->s), OW_TMP_PARTIAL_PREFIX, &t), 0);
	assert_int_equal(ow_write_all(t.fd, "abc", 3), 0);
	assert_int_equal(ow_store_adopt(f->s, t.fd, t.path, ABC_HEX, 3, "wheel"), 0);
	assert_int_equal(ow_store_has(f->s, ABC_HEX, NULL, NULL, 0), 1);
	assert_int_equal(count_dir(ow_store_tmpdir(f->s)), 0);
	assert_int_equal(ow_store_verify(f->s, ABC_HEX, 3), 0);
}

static void test_second_writer_waits_then_times_out(void **state)
{
	struct fx *f = *state;
	ow_store *other;
	assert_int_equal(ow_store_open(f->home, OW_STORE_WRITE, 0, "other", &other), OW_ELOCKED);
	assert_non_null(strstr(ow_err_detail(), "test"));
	/* readers need no lock */
	assert_int_equal(ow_store_open(f->home, OW_STORE_READ, 0, "reader", &other), 0);
	ow_store_close(other);
}

/* Anything but a regular file of the recorded size is damage, never read:
 * a FIFO (would block forever), a link to /dev/zero (endless bytes), a
 * directory, a file that grew. */
static void test_non_regular_objects_are_damage(void **state)
{
	struct fx *f = *state;
	static const char *const kinds[] = {"fifo", "link", "dir", "grown"};
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
		char hex[65], path[4096];
		char body[16];
		snprintf(body, sizeof body, "object %zu", k);
		assert_int_equal(ow_store_put_buf(f->s, body, strlen(body), NULL, "blob", hex), 0);
		ow_store_object_path(f->s, hex, path, sizeof path);
		unlink(path);
		if (k == 0)
			assert_int_equal(mkfifo(path, 0644), 0);
		else if (k == 1)
			assert_int_equal(symlink("/dev/zero", path), 0);
		else if (k == 2)
			assert_int_equal(mkdir(path, 0755), 0);
		else
			assert_int_equal(tu_write_file(path, "object 3 and more", 17), 0);
		assert_int_equal(ow_store_verify(f->s, hex, strlen(body)), OW_EVERIFY);
		assert_non_null(strstr(ow_err_detail(), k == 3 ? "bytes on disk" : "not a regular file"));
		int fd = -1;
		if (k < 3)
			assert_int_equal(ow_store_open_object(f->s, hex, &fd), OW_EVERIFY);
		char *buf = NULL;
		size_t len;
		assert_int_not_equal(ow_store_load(f->s, hex, 1 << 20, &buf, &len), 0);
		char why[512] = "", name[13];
		assert_int_equal(ow_store_usable(f->s, hex, NULL, why, sizeof why), 0);
		snprintf(name, sizeof name, "%.12s", hex);
		assert_non_null(strstr(why, name)); /* the reason names the object */
	}
}

/* verify marks what it found damaged; a fetch moves it aside; publishing
 * the good bytes again clears the mark. */
static void test_damage_marked_moved_aside_repaired(void **state)
{
	struct fx *f = *state;
	char hex[65], path[4096], aside[4096], why[512];
	assert_int_equal(ow_store_put_buf(f->s, "abc", 3, NULL, "wheel", hex), 0);
	assert_int_equal(ow_store_usable(f->s, hex, NULL, why, sizeof why), 1);
	ow_store_object_path(f->s, hex, path, sizeof path);
	assert_int_equal(tu_write_file(path, "abd", 3), 0); /* same size, wrong bytes */
	assert_int_equal(ow_store_usable(f->s, hex, NULL, why, sizeof why), 1); /* not known yet */
	struct ow_obj_row row = {.size = 3};
	memcpy(row.sha256, hex, 65);
	struct ow_verify_result res;
	assert_int_equal(ow_store_verify_many(f->s, &row, 1, 1, &res), 1);
	assert_int_equal(ow_store_mark_failed(f->s, &row, &res, 1), 1);
	ow_verify_results_dispose(&res, 1);
	assert_int_equal(ow_store_usable(f->s, hex, NULL, why, sizeof why), 0);
	assert_non_null(strstr(why, "found damaged"));
	assert_int_equal(ow_store_move_aside(f->s, hex, aside, sizeof aside), 0);
	assert_non_null(strstr(aside, "/tmp/" OW_TMP_DAMAGED_PREFIX));
	size_t len;
	char *kept = tu_read_file(aside, &len);
	assert_int_equal(len, 3);
	assert_memory_equal(kept, "abd", 3); /* moved, not deleted */
	free(kept);
	assert_int_not_equal(access(path, F_OK), 0);
	assert_int_equal(ow_store_move_aside(f->s, hex, aside, sizeof aside), 0); /* nothing there */
	assert_string_equal(aside, "");
	assert_int_equal(ow_store_put_buf(f->s, "abc", 3, hex, "wheel", NULL), 0);
	assert_int_equal(ow_store_usable(f->s, hex, NULL, why, sizeof why), 1);
	assert_int_equal(ow_store_verify(f->s, hex, 3), 0);
}

/* The lock is the HOME directory: deleting HOME/lock lets no one in. */
static void test_deleted_lock_file_still_locks(void **state)
{
	struct fx *f = *state;
	char lock[4096];
	snprintf(lock, sizeof lock, "%s/lock", f->home);
	assert_int_equal(unlink(lock), 0);
	ow_store *other;
	assert_int_equal(ow_store_open(f->home, OW_STORE_WRITE, 0, "other", &other), OW_ELOCKED);
	assert_non_null(strstr(ow_err_detail(), "in use"));
}

static void test_reader_never_creates_a_workspace(void **state)
{
	struct fx *f = *state;
	char typo[4096];
	ow_store *r;
	snprintf(typo, sizeof typo, "%s/typo", f->home);
	assert_int_equal(ow_store_open(typo, OW_STORE_READ, 0, "reader", &r), OW_ENOENT);
	assert_non_null(strstr(ow_err_detail(), "no workspace at"));
	assert_int_not_equal(access(typo, F_OK), 0);
}

static void test_default_home(void **state)
{
	(void)state;
	char buf[4096];
	setenv("OFFWHEEL_HOME", "/x/ow", 1);
	assert_int_equal(ow_store_default_home(buf, sizeof buf), 0);
	assert_string_equal(buf, "/x/ow");
	unsetenv("OFFWHEEL_HOME");
	setenv("XDG_CACHE_HOME", "/x/cache", 1);
	assert_int_equal(ow_store_default_home(buf, sizeof buf), 0);
	assert_string_equal(buf, "/x/cache/offwheel");
	unsetenv("XDG_CACHE_HOME");
	setenv("HOME", "/x/home", 1);
	assert_int_equal(ow_store_default_home(buf, sizeof buf), 0);
	assert_string_equal(buf, "/x/home/.cache/offwheel");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_publish_twice_is_harmless, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mismatch_is_never_published, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cap_stops_writer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_load_verifies_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_put_fd_and_remove, setup, teardown),
		cmocka_unit_test_setup_teardown(test_adopt_finished_download, setup, teardown),
		cmocka_unit_test_setup_teardown(test_second_writer_waits_then_times_out, setup, teardown),
		cmocka_unit_test_setup_teardown(test_non_regular_objects_are_damage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damage_marked_moved_aside_repaired, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deleted_lock_file_still_locks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reader_never_creates_a_workspace, setup, teardown),
		cmocka_unit_test(test_default_home),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
