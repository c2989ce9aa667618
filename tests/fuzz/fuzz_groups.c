/* fuzz_groups.c - dependency-group expansion (PEP 735 include-group): the
 * input's bytes make a [dependency-groups] table of up to 40 groups, each
 * naming requirements and including others (in other spellings too:
 * "G_3", "g-3"), then every group is asked for.  Whatever the graph
 * (diamonds, a group included twice, cycles, chains past the depth bound),
 * the reader ends quickly, and what it gives has each requirement once and
 * no more of them than the document has. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "offwheel/str.h"
#include "pyproject.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NGROUPS 40

/* Group g's line: its items from the bytes at *at. */
static void group_line(struct ow_str *s, const uint8_t *data, size_t size, size_t *at, int g)
{
	ow_str_printf(s, "%s%d = [", g % 3 ? "g-" : "G_", g);
	for (int item = 0; item < 4 && *at < size; item++, (*at)++) {
		uint8_t b = data[*at];
		if (b & 0x80)
			ow_str_printf(s, "%s{include-group = \"%s%d\"}", item ? ", " : "",
			              b & 0x40 ? "g_" : "G-", (b & 0x3f) % NGROUPS);
		else
			ow_str_printf(s, "%s\"p%d\"", item ? ", " : "", b % 50);
	}
	ow_str_puts(s, "]\n");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ow_str s = {0};
	ow_str_puts(&s, "[dependency-groups]\n");
	size_t at = 0;
	for (int g = 0; g < NGROUPS && at < size; g++)
		group_line(&s, data, size, &at, g);
	if (s.err)
		return 0;
	static const char *groups[NGROUPS];
	static char names[NGROUPS][16];
	for (int g = 0; g < NGROUPS; g++) {
		snprintf(names[g], sizeof names[g], "g%d", g);
		groups[g] = names[g];
	}
	struct ow_pyproject_want w = {NULL, 0, false, groups, NGROUPS};
	struct ow_pyreq *r = NULL;
	size_t n = 0;
	if (ow_pyproject_requirements("fuzz.toml", s.p, s.n, &w, &r, &n) == 0) {
		if (n > 50)
			abort();
		for (size_t i = 0; i < n; i++)
			for (size_t j = i + 1; j < n; j++)
				if (!strcmp(r[i].text, r[j].text))
					abort();
		ow_pyreqs_free(r, n);
	}
	ow_str_dispose(&s);
	return 0;
}
