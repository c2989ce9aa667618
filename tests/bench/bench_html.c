/* bench_html.c - times the index page parser (libxml2 SAX pass + link
 * policy + file records, i.e. ow_page_parse) on one page file.
 *
 *   bench_html [-n N] FILE [PAGE_URL]
 *
 * Parses FILE N times (default 1) and prints the link count and the time per
 * parse. With N = 1 it is the per-process counterpart of
 * `xmllint --html --noout FILE`; with N > 1, of `xmllint --repeat --timing`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "offwheel/error.h"
#include "pagelinks.h"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)n + 1)) != NULL)
		*len = fread(buf, 1, (size_t)n, f);
	fclose(f);
	return buf;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	long n = 1;
	int a = 1;
	if (argc > 2 && !strcmp(argv[1], "-n")) {
		n = strtol(argv[2], NULL, 10);
		a = 3;
	}
	if (a >= argc || n < 1) {
		fprintf(stderr, "usage: bench_html [-n N] FILE [PAGE_URL]\n");
		return 2;
	}
	const char *url = a + 1 < argc ? argv[a + 1] : "https://download.pytorch.org/whl/torch/";
	size_t len = 0, links = 0, rejected = 0;
	char *body = slurp(argv[a], &len);
	if (!body) {
		perror(argv[a]);
		return 1;
	}
	double t0 = now_ms();
	for (long i = 0; i < n; i++) {
		struct ow_page *p = NULL;
		int rc = ow_page_parse(url, body, len, NULL, NULL, &p);
		if (rc) {
			fprintf(stderr, "%s: %s\n", argv[a], ow_err_detail());
			free(body);
			return 1;
		}
		links = p->nlinks;
		rejected = p->nrejected;
		ow_page_free(p);
	}
	double dt = now_ms() - t0;
	printf("%zu links, %zu rejected; %ld parses took %.1f ms (%.3f ms each)\n", links, rejected,
	       n, dt, dt / (double)n);
	free(body);
	return 0;
}
