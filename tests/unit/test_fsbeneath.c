#include "testutil.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "offwheel/error.h"
#include "fsbeneath.h"

/* root/ sub/f ("abc"), sub/fifo, ln-dir -> outside/, sub/ln-file -> outside/o,
 * sub/ln-dot -> ., outside/ (o, "secret") is the directory beside root. */
struct tree {
	char *base;
	char root[4096], outside[4096];
	int rootfd;
};

static void path(char *buf, size_t n, const char *a, const char *b)
{
	snprintf(buf, n, "%s/%s", a, b);
}

static void make_tree(struct tree *t)
{
	char p[4200], q[4200];
	t->base = tu_mkdtemp();
	path(t->root, sizeof t->root, t->base, "root");
	path(t->outside, sizeof t->outside, t->base, "outside");
	assert_int_equal(mkdir(t->root, 0755), 0);
	assert_int_equal(mkdir(t->outside, 0755), 0);
	path(p, sizeof p, t->outside, "o");
	assert_int_equal(tu_write_file(p, "secret", 6), 0);
	path(p, sizeof p, t->root, "sub");
	assert_int_equal(mkdir(p, 0755), 0);
	path(p, sizeof p, t->root, "sub/f");
	assert_int_equal(tu_write_file(p, "abc", 3), 0);
	path(p, sizeof p, t->root, "sub/fifo");
	assert_int_equal(mkfifo(p, 0644), 0);
	path(p, sizeof p, t->root, "ln-dir");
	assert_int_equal(symlink(t->outside, p), 0);
	path(p, sizeof p, t->root, "sub/ln-file");
	path(q, sizeof q, t->outside, "o");
	assert_int_equal(symlink(q, p), 0);
	path(p, sizeof p, t->root, "sub/ln-dot");
	assert_int_equal(symlink(".", p), 0);
	t->rootfd = open(t->root, O_RDONLY | O_DIRECTORY);
	assert_true(t->rootfd >= 0);
}

static void free_tree(struct tree *t)
{
	close(t->rootfd);
	tu_rmtree(t->base);
	free(t->base);
}

static void test_read_refuses_links_and_specials(void **state)
{
	(void)state;
	static const struct {
		const char *rel;
		int rc;
		const char *says;
	} cases[] = {
		{"sub/f", 0, NULL},
		{"sub/fifo", OW_EPOLICY, "sub/fifo: is a FIFO"},
		{"sub/ln-file", OW_EPOLICY, "sub/ln-file: is a symbolic link"},
		{"ln-dir/o", OW_EPOLICY, "ln-dir: is a symbolic link"},
		{"sub/ln-dot/f", OW_EPOLICY, "sub/ln-dot: is a symbolic link"},
		{"sub", OW_EPOLICY, "is a directory"},
		{"sub/missing", OW_ENOENT, "sub/missing"},
		{"../outside/o", OW_EINVAL, "not a relative path"},
		{"/etc/passwd", OW_EINVAL, "not a relative path"},
		{"sub//f", OW_EINVAL, "not a relative path"},
		{"sub/./f", OW_EINVAL, "not a relative path"},
		{"", OW_EINVAL, "not a relative path"},
	};
	struct tree t;
	make_tree(&t);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *buf = NULL;
		size_t len = 0;
		int rc = ow_read_beneath(t.rootfd, cases[i].rel, 1024, &buf, &len);
		if (rc != cases[i].rc || (cases[i].says && !strstr(ow_err_detail(), cases[i].says)))
			fail_msg("%s: rc %d (want %d), '%s'", cases[i].rel, rc, cases[i].rc, ow_err_detail());
		if (!rc)
			assert_memory_equal(buf, "abc", 3);
		free(buf);
	}
	free_tree(&t);
}

/* A path a user names: links followed, anything but a regular file refused
 * without blocking (a FIFO with no writer would hang a blocking open). */
static void test_open_regular_by_path(void **state)
{
	(void)state;
	static const struct {
		const char *rel;
		int rc;
		const char *says;
	} cases[] = {
		{"sub/f", 0, NULL},
		{"sub/ln-file", 0, NULL},
		{"sub/fifo", OW_EPOLICY, "sub/fifo is a FIFO, not a regular file"},
		{"sub", OW_EPOLICY, "sub is a directory, not a regular file"},
		{"sub/missing", OW_ENOENT, "sub/missing"},
	};
	struct tree t;
	make_tree(&t);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char p[4200];
		struct stat st;
		int fd = -2;
		path(p, sizeof p, t.root, cases[i].rel);
		int rc = ow_open_regular(p, &fd, &st);
		if (rc != cases[i].rc || (cases[i].says && !strstr(ow_err_detail(), cases[i].says)))
			fail_msg("%s: rc %d (want %d), '%s'", cases[i].rel, rc, cases[i].rc, ow_err_detail());
		assert_true(rc ? fd == -1 : fd >= 0 && S_ISREG(st.st_mode));
		if (fd >= 0)
			close(fd);
	}
	char dev[] = "/dev/zero";
	struct stat st;
	int fd;
	assert_int_equal(ow_open_regular(dev, &fd, &st), OW_EPOLICY);
	assert_non_null(strstr(ow_err_detail(), "/dev/zero is a device"));
	free_tree(&t);
}

static void test_mkdir_and_write_never_escape(void **state)
{
	(void)state;
	struct tree t;
	make_tree(&t);
	int fd;
	/* a link where a directory belongs is refused, nothing made beyond it */
	assert_int_equal(ow_mkdir_beneath(t.rootfd, "ln-dir/new", 0755, &fd), OW_EPOLICY);
	assert_non_null(strstr(ow_err_detail(), "ln-dir: is a symbolic link"));
	char p[4200];
	path(p, sizeof p, t.outside, "new");
	assert_int_not_equal(access(p, F_OK), 0);
	/* a FIFO where a directory belongs */
	assert_int_equal(ow_mkdir_beneath(t.rootfd, "sub/fifo/x", 0755, &fd), OW_EPOLICY);
	assert_non_null(strstr(ow_err_detail(), "is a FIFO, not a directory"));
	/* creating through a file link is refused; the target keeps its bytes */
	assert_int_equal(ow_open_beneath(t.rootfd, "sub/ln-file", O_WRONLY | O_TRUNC, 0, &fd),
	                 OW_EPOLICY);
	path(p, sizeof p, t.outside, "o");
	size_t len;
	char *got = tu_read_file(p, &len);
	assert_int_equal(len, 6);
	free(got);
	/* a real nested directory, then a temp file published over a link:
	 * the link is replaced, its target untouched */
	assert_int_equal(ow_mkdir_beneath(t.rootfd, "a/b/c", 0755, &fd), 0);
	struct ow_tmpat tmp;
	assert_int_equal(ow_tmpat_create(fd, ".t-", &tmp), 0);
	assert_int_equal(write(tmp.fd, "x", 1), 1);
	assert_int_equal(symlinkat(p, fd, "final"), 0);
	assert_int_equal(ow_tmpat_publish(&tmp, "final"), 0);
	struct stat st;
	assert_int_equal(fstatat(fd, "final", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_size, 1);
	got = tu_read_file(p, &len);
	assert_memory_equal(got, "secret", 6);
	free(got);
	close(fd);
	/* "" is the directory itself */
	assert_int_equal(ow_mkdir_beneath(t.rootfd, "", 0755, &fd), 0);
	close(fd);
	free_tree(&t);
}

static void test_tmpat_discard_leaves_nothing(void **state)
{
	(void)state;
	struct tree t;
	make_tree(&t);
	struct ow_tmpat tmp;
	assert_int_equal(ow_tmpat_create(t.rootfd, ".t-", &tmp), 0);
	char name[64];
	snprintf(name, sizeof name, "%s", tmp.name);
	assert_int_equal(strncmp(name, ".t-", 3), 0);
	assert_int_equal(strlen(name), 3 + 12);
	ow_tmpat_discard(&tmp);
	ow_tmpat_discard(&tmp);
	struct stat st;
	assert_int_not_equal(fstatat(t.rootfd, name, &st, AT_SYMLINK_NOFOLLOW), 0);
	free_tree(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_refuses_links_and_specials),
		cmocka_unit_test(test_open_regular_by_path),
		cmocka_unit_test(test_mkdir_and_write_never_escape),
		cmocka_unit_test(test_tmpat_discard_leaves_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
