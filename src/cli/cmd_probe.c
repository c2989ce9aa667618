/* cmd_probe.c - offwheel probe: what this lab machine is, for the stick
 * (docs/fleet.md). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "fleetjson.h"
#include "indexopts.h"
#include "offwheel/probe.h"
#include "offwheel/str.h"

static const char usage[] = "probe [--name NAME] [-o FILE] [--python PY]...";
static const char description[] =
	"Describe this machine for the stick made for it, offline and without torch:\n"
	"its name, OS, architecture, C library and version, the wheel platform tags\n"
	"it accepts, each Python interpreter (version, ABI tags, sys.executable), the\n"
	"NVIDIA driver and each GPU's compute capability (the driver is libcuda.so.1,\n"
	"or $OFFWHEEL_LIBCUDA; no driver is a normal answer).  The document goes to\n"
	"probes/NAME.json under the current directory (the stick's root, when run\n"
	"there), or FILE; 'sync --probes' makes the matrix from such files.";

enum { OPT_NAME = 256, OPT_PYTHON };
static const struct cli_opt opts[] = {
	{"name", OPT_NAME, required_argument, "NAME", "the machine's name (default: the host name)"},
	{"output", 'o', required_argument, "FILE", "write the document there ('-': standard output; default probes/NAME.json)"},
	{"python", OPT_PYTHON, required_argument, "PY", "an interpreter to describe (repeatable; default every python3* on PATH)"},
	{NULL, 0, 0, NULL, NULL},
};

struct probe_args {
	struct ow_probe_opts o;
	struct cli_strlist pythons;
	const char *output;
};

static int on_opt(struct cli *c, int key, const char *arg, void *ud)
{
	struct probe_args *a = ud;
	(void)c;
	switch (key) {
	case OPT_NAME: a->o.name = arg; return 0;
	case 'o': a->output = arg; return 0;
	case OPT_PYTHON: return cli_strlist_add_csv(&a->pythons, arg);
	}
	return 2;
}

static void render_text(const struct cli *c, const struct ow_probe *p, const char *where)
{
	char v[16];
	cli_say(c, "%s: %s %s, %s %s, %zu platform tags (best %s)\n", p->name, p->os, p->arch,
	        *p->libc ? p->libc : "unknown libc", p->libc_version,
	        p->nplatforms, p->nplatforms ? p->platforms[0] : "none");
	for (size_t i = 0; i < p->npythons; i++) {
		const struct ow_probe_python *py = &p->pythons[i];
		if (py->error)
			cli_say(c, "  python %s: %s\n", py->path, py->error);
		else
			cli_say(c, "  python %s: %s %s (%s)\n", py->path, py->impl, py->version,
			        py->nabis ? py->abis[0] : "none");
	}
	if (!p->driver)
		cli_say(c, "  no NVIDIA driver: %s\n", p->driver_error ? p->driver_error : "none found");
	else
		cli_say(c, "  driver %s%s%s, %zu GPU(s)\n", fleet_driver_text(p->driver, v, sizeof v),
		        *p->driver_release ? " " : "", p->driver_release, p->ngpus);
	for (size_t i = 0; i < p->ngpus; i++)
		cli_say(c, "  GPU %d: %s, compute capability %d.%d\n", p->gpus[i].ordinal,
		        p->gpus[i].name, p->gpus[i].cc / 10, p->gpus[i].cc % 10);
	if (where)
		cli_say(c, "written to %s\n", where);
}

static int write_out(struct cli *c, const struct ow_probe *p, const char *output)
{
	json_t *doc = fleet_probe_json(p, (long long)time(NULL));
	if (output && strcmp(output, "-") == 0) {
		cli_json_out(doc);
		return 0;
	}
	char *path = output ? ow_aprintf("%s", output) : ow_aprintf("probes/%s.json", p->name);
	int rc = path ? 0 : cli_fail(c, ow_err(OW_ENOMEM, "out of memory"));
	if (!rc && c->json)
		cli_json_out(json_incref(doc));
	if (!rc)
		rc = fleet_write_json(c, json_incref(doc), path);
	if (!rc)
		render_text(c, p, path);
	json_decref(doc);
	free(path);
	return rc;
}

int cmd_probe(struct cli *c, int argc, char **argv)
{
	struct probe_args a = {0};
	struct cli_spec spec = {opts, usage, description, on_opt, &a};
	int exitc = 0;
	if (!cli_parse_no_operands(c, argc, argv, &spec, &exitc)) {
		cli_strlist_dispose(&a.pythons);
		return exitc;
	}
	a.o.pythons = (const char *const *)a.pythons.v;
	a.o.npythons = a.pythons.n;
	struct ow_probe *p = NULL;
	int rc = ow_probe_run(&a.o, &p);
	rc = rc ? cli_fail(c, rc) : write_out(c, p, a.output);
	ow_probe_free(p);
	cli_strlist_dispose(&a.pythons);
	return rc;
}
