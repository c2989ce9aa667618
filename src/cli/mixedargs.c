/* mixedargs.c - options before, between and after operands. */
#include "mixedargs.h"

#include <stdlib.h>
#include <string.h>

/* argv copied to tmp; its operands go to ops[*n]. */
static int collect(struct cli *c, int argc, char **tmp, const struct cli_spec *spec, char **ops,
                   int *n)
{
	int left = argc;
	for (;;) {
		optind = 0; /* glibc: a full re-initialisation, argv changed */
		int first = cli_parse(c, left, tmp, spec);
		if (first < 0 || first >= left)
			return first < 0 ? first : 1;
		if (!strcmp(tmp[first - 1], "--")) { /* all after -- are operands */
			while (first < left)
				ops[(*n)++] = tmp[first++];
			return 1;
		}
		ops[(*n)++] = tmp[first];
		memmove(tmp + 1, tmp + first + 1, (size_t)(left - first - 1) * sizeof *tmp);
		left -= first;
	}
}

int cli_parse_mixed(struct cli *c, int argc, char **argv, const struct cli_spec *spec,
                    int *nops)
{
	char **tmp = calloc((size_t)argc + 1, sizeof *tmp), **ops = calloc((size_t)argc + 1, sizeof *ops);
	int n = 0, rc = 1;
	if (!tmp || !ops)
		rc = -1;
	else {
		memcpy(tmp, argv, (size_t)argc * sizeof *tmp);
		rc = collect(c, argc, tmp, spec, ops, &n);
	}
	if (rc == 1)
		memcpy(argv + 1, ops, (size_t)n * sizeof *ops);
	*nops = n;
	free(tmp);
	free(ops);
	return rc;
}
