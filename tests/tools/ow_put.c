/* ow_put - test tool: publish objects into a workspace through the store
 * API, the same path fetch uses.  Used by the crash tests (SIGKILL at random
 * moments) and the benchmarks.
 *
 *   ow_put HOME random COUNT SIZE_MB [SEED]   publish COUNT pseudo-random objects
 *   ow_put HOME file PATH...                  publish files
 *
 * Prints one line "published <hex> <size>" per object. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "offwheel/error.h"
#include "store.h"

static unsigned long long rng;

static unsigned long long next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int put_random(ow_store *s, long size_mb)
{
	enum { CHUNK = 1 << 16 };
	static unsigned long long buf[CHUNK / 8];
	ow_obj_writer *w;
	char hex[OW_SHA256_HEX];
	int rc = ow_obj_begin(s, 0, &w);
	if (rc)
		return rc;
	for (long i = 0; i < size_mb * (1 << 20) / CHUNK; i++) {
		for (size_t k = 0; k < CHUNK / 8; k++)
			buf[k] = next_rand();
		if ((rc = ow_obj_write(w, buf, CHUNK))) {
			ow_obj_abort(w);
			return rc;
		}
	}
	if ((rc = ow_obj_commit(w, NULL, "blob", hex)))
		return rc;
	printf("published %s %ld\n", hex, size_mb << 20);
	fflush(stdout);
	return 0;
}

static int put_file(ow_store *s, const char *path)
{
	char hex[OW_SHA256_HEX];
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return ow_err(OW_EIO, "%s: cannot open", path);
	int rc = ow_store_put_fd(s, fd, NULL, "blob", hex);
	close(fd);
	if (!rc)
		printf("published %s %s\n", hex, path);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: ow_put HOME random COUNT SIZE_MB [SEED] | HOME file PATH...\n");
		return 2;
	}
	ow_store *s;
	int rc = ow_store_open(argv[1], OW_STORE_WRITE, 60, "ow_put", &s);
	if (rc) {
		fprintf(stderr, "ow_put: %s\n", ow_err_detail());
		return 1;
	}
	if (!strcmp(argv[2], "random")) {
		long count = strtol(argv[3], NULL, 10);
		long mb = argc > 4 ? strtol(argv[4], NULL, 10) : 1;
		rng = argc > 5 ? strtoull(argv[5], NULL, 10) : (unsigned long long)getpid();
		rng = rng ? rng : 88172645463325252ull;
		for (long i = 0; i < count && !rc; i++)
			rc = put_random(s, mb);
	} else {
		for (int i = 3; i < argc && !rc; i++)
			rc = put_file(s, argv[i]);
	}
	if (rc)
		fprintf(stderr, "ow_put: %s\n", ow_err_detail());
	ow_store_close(s);
	return rc ? 1 : 0;
}
