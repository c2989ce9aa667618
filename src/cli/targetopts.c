/* targetopts.c - parsing of the target options shared by several commands. */
#include "targetopts.h"

#include "offwheel/gpucompat.h"
#include "offwheel/resolve.h"

#include <gnu/libc-version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

/* --device 12.0,8.0 (repeatable): each once; the first is o->device. */
/* --device 12.0,8.6 (repeatable: adds to *n): each once, at most
 * CLI_MAX_DEVICES. */
int cli_parse_devices(struct cli *c, const char *arg, int *ccs, size_t *n)
{
	char one[32];
	for (const char *p = arg; *p;) {
		size_t k = strcspn(p, ",");
		int cc = 0, seen = 0;
		snprintf(one, sizeof one, "%.*s", (int)(k < sizeof one ? k : sizeof one - 1), p);
		if (k >= sizeof one || ow_gpu_parse_device(one, &cc) || cc <= 0)
			return cli_usage_error(c, "--device: '%.*s' is not a compute capability like 12.0 "
			                          "or sm_86",
			                       (int)k, p);
		for (size_t i = 0; i < *n; i++)
			seen |= ccs[i] == cc;
		if (!seen && *n == CLI_MAX_DEVICES)
			return cli_usage_error(c, "--device: at most %d devices", CLI_MAX_DEVICES);
		if (!seen)
			ccs[(*n)++] = cc;
		p += k + (p[k] == ',');
	}
	return *n ? 0 : cli_usage_error(c, "--device: name a compute capability like 12.0");
}

static int add_devices(struct cli *c, struct cli_target_opts *o, const char *arg)
{
	int rc = cli_parse_devices(c, arg, o->devices, &o->ndevices);
	if (!rc)
		o->device = o->devices[0];
	return rc;
}

int cli_target_opt(struct cli *c, struct cli_target_opts *o, int key, const char *arg)
{
	switch (key) {
	case TGT_PYTHON:
		return cli_strlist_add_csv(&o->pythons, arg);
	case TGT_PLATFORM:
		return cli_strlist_add_csv(&o->platforms, arg);
	case TGT_DATE:
		o->date = arg;
		return 0;
	case TGT_VERSION:
		o->version = arg;
		return 0;
	case TGT_NO_DEPS:
		o->no_deps = 1;
		return 0;
	case TGT_PRE:
		o->pre = 1;
		return 0;
	case TGT_ALLOW_SDIST:
		o->allow_sdist = 1;
		return 0;
	case TGT_PAIR:
		if (strcmp(arg, "matched") && strcmp(arg, "newest"))
			return cli_usage_error(c, "--pair: '%s' is not matched or newest", arg);
		o->pair_newest = !strcmp(arg, "newest");
		return 0;
	case TGT_DEVICE:
		return add_devices(c, o, arg);
	case TGT_DRIVER:
		if (ow_gpu_parse_driver(arg, &o->driver))
			return cli_usage_error(c, "--driver: '%s' is not a driver version like 12.8", arg);
		return 0;
	}
	return -1;
}

/* "3.11" from the host's python3, else 3.12. */
static void host_python(char *buf, size_t n)
{
	FILE *p = popen("python3 -c 'import sys; print(\"%d.%d\" % sys.version_info[:2])' "
	                "2>/dev/null",
	                "r");
	snprintf(buf, n, "3.12");
	if (!p)
		return;
	char line[32];
	if (fgets(line, sizeof line, p) && line[0] == '3') {
		line[strcspn(line, "\n")] = '\0';
		snprintf(buf, n, "%s", line);
	}
	pclose(p);
}

/* The host platform as a shorthand; Linux gets the host glibc afterwards. */
static const char *host_platform(void)
{
	struct utsname u;
	if (uname(&u) == 0 && !strcmp(u.machine, "aarch64"))
		return "linux-aarch64";
	return "linux-x86_64";
}

static int parse_one(struct cli *c, struct cli_target_opts *o, const char *py, const char *pl,
                     int host)
{
	struct ow_target *t = &o->targets[o->ntargets];
	int rc = ow_target_parse(t, py, pl);
	if (rc < 0)
		return cli_usage_error(c, "target %s / %s: %s", py, pl, ow_err_detail());
	int maj, min;
	if (host && sscanf(gnu_get_libc_version(), "%d.%d", &maj, &min) == 2 && maj == 2)
		t->glibc_major = maj, t->glibc_minor = min;
	o->ntargets++;
	return 0;
}

int cli_target_opts_finish(struct cli *c, struct cli_target_opts *o)
{
	char py[32];
	int host = !o->platforms.n;
	if (o->date && o->version)
		return cli_usage_error(c, "--date and --version pick the same thing; give one");
	if (!o->pythons.n) {
		host_python(py, sizeof py);
		if (cli_strlist_add_csv(&o->pythons, py))
			return 1;
	}
	if (host && cli_strlist_add_csv(&o->platforms, host_platform()))
		return 1;
	o->targets = calloc(o->pythons.n * o->platforms.n + 1, sizeof *o->targets);
	if (!o->targets)
		return 1;
	for (size_t i = 0; i < o->pythons.n; i++)
		for (size_t j = 0; j < o->platforms.n; j++) {
			int rc = parse_one(c, o, o->pythons.v[i], o->platforms.v[j], host);
			if (rc)
				return rc;
		}
	return 0;
}

void cli_target_opts_dispose(struct cli_target_opts *o)
{
	cli_strlist_dispose(&o->pythons);
	cli_strlist_dispose(&o->platforms);
	free(o->targets);
	o->targets = NULL;
	o->ntargets = 0;
}

void cli_target_resolve_opts(struct ow_resolve_opts *ro, const struct cli_index_opts *idx,
                         const struct cli_target_opts *tgt, const struct ow_resolve_io *io)
{
	*ro = (struct ow_resolve_opts){
		.index_url = idx->index,
		.variants = (const char *const *)idx->variants.v,
		.nvariants = idx->variants.n,
		.targets = tgt->targets,
		.ntargets = tgt->ntargets,
		.projects = (const char *const *)idx->projects.v,
		.nprojects = idx->projects.n,
		.project_extras = (const char *const *)idx->project_extras,
		.date = tgt->date,
		.version = tgt->version,
		.no_deps = tgt->no_deps,
		.pre = tgt->pre,
		.allow_sdist = tgt->allow_sdist,
		.pair = tgt->pair_newest ? OW_PAIR_NEWEST : OW_PAIR_MATCHED,
		.variants_default = idx->variants_default,
		.flat = idx->flat,
		.extra_index_urls = (const char *const *)idx->extra.v,
		.nextra_index_urls = idx->extra.n,
		.find_links = (const char *const *)idx->find_links.v,
		.nfind_links = idx->find_links.n,
		.offline = idx->offline,
		.revalidate = !idx->offline,
		.max_age = idx->max_age,
		.io = io,
	};
}
