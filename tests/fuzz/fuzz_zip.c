/* fuzz_zip.c - the structural validator, the libarchive pass and the wheel
 * checks on arbitrary bytes (through a memfd, as they read from an fd). */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "wheel.h"

static int want_all(const char *name, uint64_t size, void *ud)
{
	(void)name;
	(void)size;
	(void)ud;
	return 1;
}

static int sum_bytes(const char *name, const void *data, size_t len, void *ud)
{
	const uint8_t *p = data;
	(void)name;
	for (size_t i = 0; i < len; i++)
		*(uint64_t *)ud += p[i];
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ow_wheel_limits lim;
	uint64_t sum = 0;
	int fd = memfd_create("fuzz", 0);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		ow_wheel_limits_default(&lim);
		lim.zip.max_total_size = 8u << 20;
		lim.zip.max_entries = 1000;
		lim.max_meta_size = 1u << 20;
		struct ow_wheel_consumer cons = {want_all, sum_bytes, &sum};
		struct ow_wheel_info *info = NULL;
		ow_wheel_verify_fd(fd, "demo-1.0-py3-none-any.whl", &lim, &cons, &info);
		ow_wheel_info_free(info);
	}
	close(fd);
	return 0;
}
