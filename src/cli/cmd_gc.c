/* cmd_gc.c - offwheel gc: remove garbage. */
#include "cli.h"
#include "offwheel/fsck.h"
#include "offwheel/resolve.h"

static const char usage[] = "gc [--partials] [--prune=AGE|now] [--keep N]";
static const char description[] =
	"Remove garbage from the workspace: objects without a row (left by a crash\n"
	"between publishing an object and recording it), stray files in objects/,\n"
	"temp files of interrupted publishes, and damaged objects a repair moved\n"
	"aside.  Partial downloads are kept for resuming unless --partials is given.\n"
	"Garbage younger than one hour is kept (it may belong to a writer that is\n"
	"not done): --prune=now removes it all, --prune=AGE (90s, 30m, 2h, 7d) sets\n"
	"the age.  Directories are never removed (reported; gc goes on).  --keep N\n"
	"also drops all but the N most recently resolved sets of every target and\n"
	"the fetched wheels that no remaining set refers to.";

enum { OPT_PARTIALS = 256, OPT_KEEP, OPT_PRUNE };
static const struct cli_opt opts[] = {
	{"partials", OPT_PARTIALS, no_argument, NULL, "also remove partial downloads"},
	{"prune", OPT_PRUNE, required_argument, "AGE",
	 "remove garbage older than AGE: now, N[s|m|h|d|w] (default 1h)"},
	{"keep", OPT_KEEP, required_argument, "N", "keep the N newest sets per target, drop the rest"},
	{NULL, 0, 0, NULL, NULL},
};

struct gc_opts {
	struct ow_gc_opts g;
	int keep; /* -1: sets are not touched */
};

static int on_opt(struct cli *c, int key, const char *arg, void *ud)
{
	struct gc_opts *o = ud;
	if (key == OPT_KEEP)
		return cli_int_arg(c, "--keep", arg, 0, 1000000, &o->keep);
	if (key == OPT_PRUNE)
		return ow_gc_parse_prune(arg, &o->g.prune_s)
		           ? cli_usage_error(c, "%s", ow_err_detail())
		           : 0;
	if (key != OPT_PARTIALS)
		return 2;
	o->g.drop_partials = 1;
	return 0;
}

int cmd_gc(struct cli *c, int argc, char **argv)
{
	struct gc_opts o = {.keep = -1, .g = {.prune_s = OW_GC_PRUNE_DEFAULT_S}};
	const struct cli_spec cs = {opts, usage, description, on_opt, &o};
	int exitc;
	if (!cli_parse_no_operands(c, argc, argv, &cs, &exitc))
		return exitc;
	ow_store *s;
	int rc = cli_open_store(c, OW_STORE_WRITE, &s);
	if (rc)
		return rc;
	struct ow_sets_gc_result k = {0};
	struct ow_gc_result g;
	if (o.keep >= 0)
		rc = ow_sets_gc(s, o.keep, &k);
	if (!rc)
		rc = ow_gc_garbage(s, &o.g, &g);
	ow_store_close(s);
	if (rc)
		return cli_fail(c, rc);
	char b[32];
	if (c->json)
		cli_json_out(json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "command", "gc",
		                       "removed_sets", (json_int_t)k.removed_sets, "removed_wheels",
		                       (json_int_t)k.removed_objects, "removed_objects",
		                       (json_int_t)g.removed_objects, "removed_tmp",
		                       (json_int_t)g.removed_tmp, "kept_young",
		                       (json_int_t)g.kept_young, "left", (json_int_t)g.left,
		                       "prune_seconds", (json_int_t)o.g.prune_s, "freed_bytes",
		                       (json_int_t)(g.freed + k.freed)));
	else {
		if (o.keep >= 0)
			cli_say(c, "removed %zu old set(s) and %zu wheel(s) no set refers to, freed %s\n",
			        k.removed_sets, k.removed_objects, cli_bytes(k.freed, b, sizeof b));
		cli_say(c, "removed %zu garbage object(s) and %zu temp file(s), freed %s\n",
		        g.removed_objects, g.removed_tmp, cli_bytes(g.freed, b, sizeof b));
		if (g.kept_young)
			cli_say(c, "kept %zu garbage file(s) younger than %lld s (--prune=now removes "
			           "them)\n",
			        g.kept_young, (long long)o.g.prune_s);
		if (g.left)
			cli_say(c, "left %zu thing(s) gc does not remove (named above)\n", g.left);
	}
	return 0;
}
