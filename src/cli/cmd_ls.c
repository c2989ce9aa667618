/* cmd_ls.c - offwheel ls: list what the workspace holds. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char usage[] = "ls objects [--kind KIND]";
static const char description[] =
	"List what the workspace holds.  'objects': every verified object with its\n"
	"size and kind (wheel, metadata, page, ...).";

enum { OPT_KIND = 256 };
static const struct cli_opt opts[] = {
	{"kind", OPT_KIND, required_argument, "KIND", "only objects of this kind"},
	{NULL, 0, 0, NULL, NULL},
};

static int on_opt(struct cli *c, int key, const char *arg, void *ud)
{
	(void)c;
	if (key != OPT_KIND)
		return 2;
	*(const char **)ud = arg;
	return 0;
}

static int ls_objects(struct cli *c, const char *kind)
{
	ow_store *s;
	int rc = cli_open_store(c, OW_STORE_READ, &s);
	if (rc)
		return rc;
	struct ow_obj_row *rows = NULL;
	size_t n = 0;
	rc = ow_store_list(s, kind, &rows, &n);
	ow_store_close(s);
	if (rc)
		return cli_fail(c, rc);
	json_t *a = c->json ? json_array() : NULL;
	unsigned long long total = 0;
	for (size_t i = 0; i < n; i++) {
		total += rows[i].size;
		if (a)
			json_array_append_new(a, json_pack("{s:s, s:I, s:s, s:I}", "sha256",
			                                   rows[i].sha256, "size", (json_int_t)rows[i].size,
			                                   "kind", rows[i].kind, "created_at",
			                                   (json_int_t)rows[i].created_at));
		else
			cli_say(c, "%s %12llu %s\n", rows[i].sha256, (unsigned long long)rows[i].size,
			        rows[i].kind);
	}
	if (a)
		cli_json_out(json_pack("{s:s, s:I, s:I, s:o}", "command", "ls objects", "count",
		                       (json_int_t)n, "bytes", (json_int_t)total, "objects", a));
	free(rows);
	return 0;
}

int cmd_ls(struct cli *c, int argc, char **argv)
{
	const char *kind = NULL;
	int first = cli_parse(c, argc, argv, opts, usage, description, on_opt, &kind);
	if (first < 0)
		return first == CLI_HELP_SHOWN ? 0 : -first;
	if (first >= argc)
		return cli_usage_error(c, "ls: say what to list: objects (see 'offwheel ls --help')");
	if (!strcmp(argv[first], "objects"))
		return ls_objects(c, kind);
	return cli_usage_error(c, "ls: '%s' is not something to list; try: objects", argv[first]);
}
