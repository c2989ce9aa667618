/* replay_main.c - runs a libFuzzer target over every file of a corpus
 * directory (recursively), so the corpora are ordinary tests in the normal
 * build.  Exit 0 when every input was handled without a crash. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
	size_t got = buf ? fread(buf, 1, (size_t)(n > 0 ? n : 0), f) : 0;
	fclose(f);
	if (!buf)
		return -1;
	LLVMFuzzerTestOneInput(buf, got);
	free(buf);
	return 0;
}

static int replay(const char *path, int *count)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		fprintf(stderr, "%s: cannot stat\n", path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		(*count)++;
		return replay_file(path);
	}
	DIR *d = opendir(path);
	if (!d)
		return -1;
	struct dirent *e;
	int rc = 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char sub[4096];
		snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
		if (replay(sub, count) != 0)
			rc = -1;
	}
	closedir(d);
	return rc;
}

int main(int argc, char **argv)
{
	int count = 0, rc = 0;
	for (int i = 1; i < argc; i++)
		if (replay(argv[i], &count) != 0)
			rc = 1;
	printf("replayed %d inputs\n", count);
	if (count == 0) {
		fprintf(stderr, "no corpus inputs found\n");
		return 1;
	}
	return rc;
}
