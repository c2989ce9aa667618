/* fuzz_reqfile.c - pip requirement files: the bytes are the top file; an
 * include (-r / -c) reads the same bytes again under another name, so
 * nesting, loops and the depth cap are reached too. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "offwheel/error.h"
#include "reqfile.h"

struct input {
	const uint8_t *data;
	size_t size;
	unsigned reads;
};

static int read_same(void *ud, const char *from, const char *ref, char **path, char **text,
                     size_t *len)
{
	struct input *in = ud;
	(void)from;
	*path = strdup(in->reads++ % 2 ? ref : "top.txt");
	*text = malloc(in->size + 1);
	if (!*path || !*text) {
		free(*path);
		free(*text);
		return OW_ENOMEM;
	}
	memcpy(*text, in->data, in->size);
	(*text)[in->size] = '\0';
	*len = in->size;
	return 0;
}

static const char *fake_env(void *ud, const char *name)
{
	(void)ud;
	return strcmp(name, "HOME") ? NULL : "/home/x";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = {data, size, 0};
	struct ow_reqfile_io io = {read_same, fake_env, &in};
	struct ow_reqfile rf = {0};
	(void)ow_reqfile_read(&rf, "requirements.txt", false, &io);
	ow_reqfile_dispose(&rf);
	return 0;
}
