#include "testutil.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "offwheel/error.h"
#include "event.h"
#include "fsutil.h"

static void test_publish_is_atomic_and_complete(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp();
	char final[4096];
	struct ow_tmp t;
	snprintf(final, sizeof final, "%s/out", dir);
	assert_int_equal(ow_tmp_create(dir, "x-", &t), 0);
	assert_int_equal(ow_write_all(t.fd, "hello", 5), 0);
	assert_int_not_equal(access(final, F_OK), 0); /* not there before publish */
	assert_int_equal(ow_tmp_publish(&t, final), 0);
	size_t len;
	char *got = tu_read_file(final, &len);
	assert_non_null(got);
	assert_int_equal(len, 5);
	assert_memory_equal(got, "hello", 5);
	free(got);
	/* the temp file is gone */
	assert_int_not_equal(access(t.path, F_OK), 0);
	tu_rmtree(dir);
	free(dir);
}

static void test_failed_publish_leaves_nothing(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp();
	char final[4096], tmppath[4096];
	struct ow_tmp t;
	snprintf(final, sizeof final, "%s/no/such/dir/out", dir);
	assert_int_equal(ow_tmp_create(dir, "x-", &t), 0);
	snprintf(tmppath, sizeof tmppath, "%s", t.path);
	assert_int_equal(ow_write_all(t.fd, "data", 4), 0);
	assert_int_not_equal(ow_tmp_publish(&t, final), 0);
	assert_int_not_equal(access(tmppath, F_OK), 0); /* discarded */
	assert_int_not_equal(access(final, F_OK), 0);
	tu_rmtree(dir);
	free(dir);
}

static void test_write_to_full_disk_is_enospc(void **state)
{
	(void)state;
	int fd = open("/dev/full", O_WRONLY);
	if (fd < 0)
		skip();
	char buf[4096] = {0};
	assert_int_equal(ow_write_all(fd, buf, sizeof buf), OW_ENOSPC);
	close(fd);
}

static void test_mkdir_p_and_join(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp();
	char p[4096], d[4096];
	snprintf(p, sizeof p, "%s/a/b/c", dir);
	assert_int_equal(ow_mkdir_p(p, 0755), 0);
	assert_int_equal(ow_mkdir_p(p, 0755), 0); /* twice is fine */
	struct stat st;
	assert_int_equal(stat(p, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(ow_dirname(d, sizeof d, p), 0);
	assert_int_equal(strncmp(d, p, strlen(d)), 0);
	assert_string_equal(p + strlen(d), "/c");
	char small[8];
	assert_int_equal(ow_path_join(small, sizeof small, "abcd", "efgh"), OW_ERANGE);
	tu_rmtree(dir);
	free(dir);
}

static int saw_wait;
static void on_ev(const struct ow_event *ev, void *ud)
{
	(void)ud;
	if (ev->kind == OW_EV_LOG && strstr(ev->msg, "waiting for the workspace lock"))
		saw_wait = 1;
}

static void test_lock_excludes_and_times_out(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp();
	char lock[4096];
	snprintf(lock, sizeof lock, "%s/lock", dir);
	int pipefd[2];
	assert_int_equal(pipe(pipefd), 0);
	pid_t pid = fork();
	if (pid == 0) {
		int fd;
		if (ow_lock_acquire(lock, "holder", 5, &fd) != 0)
			_exit(1);
		(void)!write(pipefd[1], "x", 1);
		pause();
		_exit(0);
	}
	char c;
	assert_int_equal(read(pipefd[0], &c, 1), 1);
	ow_event_set_handler(on_ev, NULL);
	int fd = -1;
	saw_wait = 0;
	assert_int_equal(ow_lock_acquire(lock, "test", 1, &fd), OW_ELOCKED);
	assert_true(saw_wait);
	assert_non_null(strstr(ow_err_detail(), "holder"));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	/* the holder died: the kernel dropped its lock */
	assert_int_equal(ow_lock_acquire(lock, "test", 1, &fd), 0);
	ow_lock_release(fd);
	ow_event_set_handler(NULL, NULL);
	tu_rmtree(dir);
	free(dir);
}

static void test_safe_component(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		int ok;
	} cases[] = {
		{"torch-2.7.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl", 1},
		{"a", 1}, {"", 0}, {".", 0}, {"..", 0}, {"a/b", 0}, {"a\\b", 0}, {"c:x", 0},
		{"a\nb", 0}, {"a\x7f", 0}, {"what?", 0}, {"a|b", 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		assert_int_equal(ow_safe_component(cases[i].name), cases[i].ok);
	char long_name[300];
	memset(long_name, 'x', sizeof long_name - 1);
	long_name[299] = 0;
	assert_false(ow_safe_component(long_name));
}

/* The disk-space rule: the file, what the downloads under way still bring,
 * and a margin of a twentieth (at least 1 MiB) must fit in what is free. */
static void test_space_rule(void **state)
{
	(void)state;
	uint64_t want;
	const uint64_t MiB = 1u << 20;
	assert_false(ow_space_short(10 * MiB, 0, 11 * MiB, &want));
	assert_int_equal(want, 11 * MiB);               /* 10 MiB + the 1 MiB floor */
	assert_true(ow_space_short(10 * MiB, 0, 11 * MiB - 1, &want));
	assert_true(ow_space_short(10 * MiB, 5 * MiB, 12 * MiB, &want)); /* others come first */
	assert_false(ow_space_short(1000 * MiB, 0, 1050 * MiB, &want)); /* 5 %: 50 MiB */
	assert_true(ow_space_short(1000 * MiB, 0, 1050 * MiB - 1, &want));
	assert_true(ow_space_short(UINT64_MAX - 1, 2, UINT64_MAX, &want)); /* overflow: short */
	uint64_t avail = 0;
	assert_int_equal(ow_fs_avail("/", &avail), 0);
	assert_true(avail > 0);
	assert_true(ow_fs_avail("/nonexistent/dir", &avail) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_publish_is_atomic_and_complete),
		cmocka_unit_test(test_failed_publish_leaves_nothing),
		cmocka_unit_test(test_write_to_full_disk_is_enospc),
		cmocka_unit_test(test_mkdir_p_and_join),
		cmocka_unit_test(test_lock_excludes_and_times_out),
		cmocka_unit_test(test_safe_component),
		cmocka_unit_test(test_space_rule),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
