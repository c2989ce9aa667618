/* owrangemeta.c - read a local wheel's METADATA the way offwheel reads a
 * remote one without PEP 658: only the byte ranges rangemeta.h asks for
 * (pread stands in for the HTTP Range requests).
 *   owrangemeta WHEEL   -> METADATA on stdout; "reads N bytes B" on stderr */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "offwheel/error.h"
#include "rangemeta.h"

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: owrangemeta WHEEL\n");
		return 2;
	}
	int fd = open(argv[1], O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st)) {
		perror(argv[1]);
		return 1;
	}
	const char *base = strrchr(argv[1], '/') ? strrchr(argv[1], '/') + 1 : argv[1];
	struct ow_rangemeta rm;
	int rc = ow_rangemeta_init(&rm, base, (uint64_t)st.st_size), reads = 0;
	while (rc >= 0) {
		if (rc == 0 && rm.stage == OW_RM_DONE)
			break;
		uint8_t *buf = malloc(rm.want_len ? rm.want_len : 1);
		ssize_t n = buf ? pread(fd, buf, rm.want_len, (off_t)rm.want_off) : -1;
		reads++;
		rc = n < 0 ? -1 : ow_rangemeta_feed(&rm, buf, (size_t)n);
		free(buf);
	}
	if (rc < 0) {
		fprintf(stderr, "owrangemeta: %s\n", ow_err_detail());
		ow_rangemeta_clear(&rm);
		return 3;
	}
	fwrite(rm.text, 1, rm.text_len, stdout);
	fprintf(stderr, "reads %d bytes %llu of %llu\n", reads, (unsigned long long)rm.bytes_read,
	        (unsigned long long)st.st_size);
	ow_rangemeta_clear(&rm);
	close(fd);
	return 0;
}
