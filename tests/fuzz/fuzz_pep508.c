/* fuzz_pep508.c - requirement lines and markers, evaluated for two targets. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pep508.h"

static void evaluate(const struct ow_requirement *r)
{
	static const char *const targets[][2] = {{"3.12", "linux-x86_64"},
	                                         {"3.13t", "windows-x86_64"}};
	for (size_t k = 0; k < 2; k++) {
		struct ow_target t;
		struct ow_marker_env env;
		bool res;
		if (ow_target_parse(&t, targets[k][0], targets[k][1]) != 0)
			abort();
		ow_marker_env_for_target(&env, &t);
		(void)ow_requirement_applies(r, &env, NULL, &res);
		(void)ow_requirement_applies(r, &env, "opt-einsum", &res);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = malloc(size + 1);
	if (!line)
		return 0;
	memcpy(line, data, size);
	line[size] = '\0';
	struct ow_requirement r;
	if (ow_requirement_parse(&r, line) == 0) {
		evaluate(&r);
		ow_requirement_dispose(&r);
	}
	struct ow_marker *m;
	if (ow_marker_parse(&m, line) == 0)
		ow_marker_free(m);
	free(line);
	return 0;
}
