/* fuzz_toml.c - the TOML reader, then the pyproject.toml reader over the
 * same bytes with every extra and two groups asked for (self-references,
 * include-group chains and cycles are reached too). */
#include <stdint.h>
#include <stdlib.h>

#include "pyproject.h"
#include "toml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ow_toml *t = NULL;
	if (ow_toml_parse((const char *)data, size, "fuzz.toml", &t) == 0) {
		(void)ow_toml_get(t, "project");
		ow_toml_free(t);
	}
	static const char *const groups[] = {"train", "Base"};
	struct ow_pyproject_want w = {NULL, 0, true, groups, 2};
	struct ow_pyreq *r = NULL;
	size_t n = 0;
	if (ow_pyproject_requirements("fuzz.toml", (const char *)data, size, &w, &r, &n) == 0)
		ow_pyreqs_free(r, n);
	struct ow_pybuild b;
	if (ow_pyproject_build_system("fuzz.toml", (const char *)data, size, &b) == 0)
		ow_pybuild_dispose(&b);
	return 0;
}
