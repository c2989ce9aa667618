/* cmd_gc.c - offwheel gc: remove garbage. */
#include "cli.h"
#include "fsck.h"

static const char usage[] = "gc [--partials]";
static const char description[] =
	"Remove garbage from the workspace: objects without a row (left by a crash\n"
	"between publishing an object and recording it), stray files in objects/,\n"
	"and temp files of interrupted publishes.  Partial downloads are kept for\n"
	"resuming unless --partials is given.";

enum { OPT_PARTIALS = 256 };
static const struct cli_opt opts[] = {
	{"partials", OPT_PARTIALS, no_argument, NULL, "also remove partial downloads"},
	{NULL, 0, 0, NULL, NULL},
};

static int on_opt(struct cli *c, int key, const char *arg, void *ud)
{
	(void)c;
	(void)arg;
	if (key != OPT_PARTIALS)
		return 2;
	*(int *)ud = 1;
	return 0;
}

int cmd_gc(struct cli *c, int argc, char **argv)
{
	int partials = 0;
	int first = cli_parse(c, argc, argv, opts, usage, description, on_opt, &partials);
	if (first < 0)
		return first == CLI_HELP_SHOWN ? 0 : -first;
	if (first < argc)
		return cli_usage_error(c, "gc: unexpected argument '%s'", argv[first]);
	ow_store *s;
	int rc = cli_open_store(c, OW_STORE_WRITE, &s);
	if (rc)
		return rc;
	struct ow_gc_result g;
	rc = ow_gc_garbage(s, partials, &g);
	ow_store_close(s);
	if (rc)
		return cli_fail(c, rc);
	char b[32];
	if (c->json)
		cli_json_out(json_pack("{s:s, s:I, s:I, s:I}", "command", "gc", "removed_objects",
		                       (json_int_t)g.removed_objects, "removed_tmp",
		                       (json_int_t)g.removed_tmp, "freed_bytes", (json_int_t)g.freed));
	else
		cli_say(c, "removed %zu garbage object(s) and %zu temp file(s), freed %s\n",
		        g.removed_objects, g.removed_tmp, cli_bytes(g.freed, b, sizeof b));
	return 0;
}
