/* fuzz_filename.c - wheel filenames and their tag priority; also targets,
 * from "python\nplatform" inputs. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tags.h"

static void priorities(const struct ow_wheel_name *w)
{
	static const char *const targets[][2] = {{"3.12", "linux-x86_64"},
	                                         {"3.13t", "linux-aarch64"},
	                                         {"3.11", "windows-x86_64"},
	                                         {"3.12", "macosx_14_0_x86_64"}};
	for (size_t k = 0; k < 4; k++) {
		struct ow_target t;
		if (ow_target_parse(&t, targets[k][0], targets[k][1]) != 0)
			abort();
		if (ow_tags_compatible(&t, w) < -1)
			abort();
	}
}

static void target(const char *s, size_t size)
{
	char buf[256];
	if (size >= sizeof buf)
		return;
	memcpy(buf, s, size);
	buf[size] = '\0';
	char *nl = strchr(buf, '\n');
	if (!nl)
		return;
	*nl = '\0';
	struct ow_target t;
	char text[128];
	if (ow_target_parse(&t, buf, nl + 1) == 0 && ow_target_describe(&t, text, sizeof text) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ow_wheel_name w;
	if (ow_wheel_name_parse_n(&w, (const char *)data, size) == 0)
		priorities(&w);
	target((const char *)data, size);
	return 0;
}
