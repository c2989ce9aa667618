#include "testutil.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "digest.h"
#include "offwheel/error.h"
#include "hashpipe.h"

/* Several interleaved streams, odd chunk sizes: every file gets exactly its
 * bytes in order and every hash matches a one-shot hash of them. */
static void test_streams_keep_order_and_hash(void **state)
{
	(void)state;
	enum { STREAMS = 3, SIZE = 5 * 1000 * 1000 + 17 };
	char *dir = tu_mkdtemp();
	ow_hashpipe *p;
	assert_int_equal(ow_hashpipe_new(&p, 2), 0); /* a tiny queue: backpressure */
	struct ow_hashpipe_stream s[STREAMS];
	unsigned char *data[STREAMS];
	char path[STREAMS][4096];
	memset(s, 0, sizeof s);
	for (int i = 0; i < STREAMS; i++) {
		snprintf(path[i], sizeof path[i], "%s/f%d", dir, i);
		s[i].fd = open(path[i], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		assert_int_equal(ow_sha256_new(&s[i].h), 0);
		data[i] = malloc(SIZE);
		for (size_t k = 0; k < SIZE; k++)
			data[i][k] = (unsigned char)(k * 131 + (size_t)i * 7 + (k >> 13));
	}
	size_t off[STREAMS] = {0}, chunk = 1;
	for (int busy = 1; busy;) {
		busy = 0;
		for (int i = 0; i < STREAMS; i++) {
			size_t n = SIZE - off[i] < chunk ? SIZE - off[i] : chunk;
			if (!n)
				continue;
			busy = 1;
			assert_int_equal(ow_hashpipe_write(p, &s[i], data[i] + off[i], n), 0);
			off[i] += n;
		}
		chunk = chunk * 3 + 1 > 300000 ? 7 : chunk * 3 + 1;
	}
	for (int i = 0; i < STREAMS; i++) {
		uint8_t got[32], want[32];
		assert_int_equal(ow_hashpipe_flush(p, &s[i]), 0);
		assert_int_equal(ow_sha256_final(s[i].h, got), 0);
		ow_sha256_buf(data[i], SIZE, want);
		assert_memory_equal(got, want, 32);
		close(s[i].fd);
		size_t len;
		char *back = tu_read_file(path[i], &len);
		assert_int_equal(len, SIZE);
		assert_memory_equal(back, data[i], SIZE);
		free(back);
		free(data[i]);
		ow_sha256_free(s[i].h);
		ow_hashpipe_stream_done(&s[i]);
	}
	ow_hashpipe_free(p);
	tu_rmtree(dir);
	free(dir);
}

/* A write error on the worker comes back on the stream, with its detail. */
static void test_worker_error_is_reported(void **state)
{
	(void)state;
	int fd = open("/dev/full", O_WRONLY);
	if (fd < 0)
		skip();
	ow_hashpipe *p;
	struct ow_hashpipe_stream s;
	memset(&s, 0, sizeof s);
	s.fd = fd;
	assert_int_equal(ow_sha256_new(&s.h), 0);
	assert_int_equal(ow_hashpipe_new(&p, 4), 0);
	static char buf[3 << 20];
	int rc = ow_hashpipe_write(p, &s, buf, sizeof buf);
	if (!rc)
		rc = ow_hashpipe_flush(p, &s);
	assert_int_equal(rc, OW_ENOSPC);
	assert_non_null(strstr(ow_err_detail(), "No space"));
	/* a reset forgets the failure: the bytes are being discarded */
	assert_int_equal(ow_hashpipe_reset(p, &s), 0);
	assert_int_equal(s.err, 0);
	assert_null(s.detail);
	ow_hashpipe_free(p);
	ow_hashpipe_stream_done(&s);
	ow_sha256_free(s.h);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_streams_keep_order_and_hash),
		cmocka_unit_test(test_worker_error_is_reported),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
