/* cmd_fleet.c - offwheel fleet (placeholder while install is built). */
#include "cli.h"
#include "mixedargs.h"

static const char usage[] = "fleet STICK [--html FILE]";
static const char description[] = "The lab's table.";
static const struct cli_opt opts[] = {{NULL, 0, 0, NULL, NULL}};
static int on_opt(struct cli *c, int key, const char *arg, void *ud) { (void)c; (void)key; (void)arg; (void)ud; return 2; }

int cmd_fleet(struct cli *c, int argc, char **argv)
{
	const struct cli_spec cs = {opts, usage, description, on_opt, NULL};
	int nops, first = cli_parse_mixed(c, argc, argv, &cs, &nops);
	if (first < 0)
		return cli_parse_exit(first);
	return cli_usage_error(c, "fleet: not yet");
}
