/* stackopts.c - -r, -c and --with for resolve and sync (stackopts.h). */
#include "stackopts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "offwheel/error.h"
#include "offwheel/resolve.h"
#include "targetopts.h"

static bool is_pyproject(const char *path)
{
	const char *base = strrchr(path, '/');
	return !strcmp(base ? base + 1 : path, "pyproject.toml");
}

static int add_pyproject(struct cli_stack_opts *o, const char *path)
{
	char **g = realloc(o->pyprojects, (o->npyprojects + 1) * sizeof *g);
	if (g)
		o->pyprojects = g;
	/* analyzer: kept in o->pyprojects[o->npyprojects], freed with the options */
	if (!g || !(g[o->npyprojects] = strdup(path)))
		return ow_err(OW_ENOMEM, "out of memory");
	o->npyprojects++;
	/* analyzer: g is o->pyprojects, freed with the options */
	return 0;
}

int cli_stack_opt(struct cli *c, struct cli_stack_opts *o, int key, const char *arg)
{
	int rc;
	if (key == STK_EXTRA || key == STK_GROUP)
		return cli_strlist_add_csv(key == STK_EXTRA ? &o->extras : &o->groups, arg);
	if (key == STK_ALL_EXTRAS) {
		o->all_extras = true;
		return 0;
	}
	if (key == 'r' && is_pyproject(arg))
		rc = add_pyproject(o, arg);
	else if (key == 'r' || key == 'c')
		rc = ow_stack_add_file(&o->st, arg, key == 'c');
	else if (key == STK_WITH)
		rc = ow_stack_add_line(&o->st, arg, "--with");
	else
		return -1;
	o->given = true;
	return rc < 0 ? cli_fail(c, rc) : 0;
}

/* The pyproject.toml files, now that --extra and --group are known. */
static int read_pyprojects(struct cli *c, struct cli_stack_opts *o)
{
	if ((o->extras.n || o->groups.n || o->all_extras) && !o->npyprojects)
		return cli_usage_error(c, "--extra, --all-extras and --group read a pyproject.toml: give "
		                    "it with -r pyproject.toml");
	struct ow_stack_pyproject w = {(const char *const *)o->extras.v, o->extras.n, o->all_extras,
	                               (const char *const *)o->groups.v, o->groups.n};
	for (size_t i = 0; i < o->npyprojects; i++) {
		int rc = ow_stack_add_pyproject(&o->st, o->pyprojects[i], &w);
		if (rc < 0)
			return cli_fail(c, rc);
	}
	return 0;
}

int cli_stack_opts_finish(struct cli *c, struct cli_stack_opts *o, struct cli_index_opts *idx)
{
	int rc = read_pyprojects(c, o);
	if (rc || !o->given)
		return rc;
	if ((rc = ow_stack_check_hashes(&o->st)) < 0)
		return cli_fail(c, rc);
	if ((o->st.index_url || o->st.nextra) && c->verbosity >= 0) {
		char prefix[64];
		snprintf(prefix, sizeof prefix, "offwheel %s: warning: ", c->cmd ? c->cmd : "");
		cli_wrapped(stderr, prefix,
		            "the index options in the requirement files (--index-url, "
		            "--extra-index-url) are not used: give them on the command line");
	}
	if (idx->projects.n) /* --project said which set members */
		return 0;
	static const char *const members[] = {"torch", "torchvision", "torchaudio"};
	for (size_t i = 0; i < 3; i++)
		if ((i == 0 || ow_stack_names(&o->st, members[i])) &&
		    cli_strlist_add_csv(&idx->projects, members[i]))
			return 1;
	return 0;
}

void cli_stack_resolve_opts(const struct cli_stack_opts *o, struct ow_resolve_opts *ro)
{
	ro->stack = o->st.lines;
	ro->nstack = o->st.nlines;
	ro->pre |= o->st.pre;
}

void cli_stack_opts_dispose(struct cli_stack_opts *o)
{
	ow_stack_dispose(&o->st);
	for (size_t i = 0; i < o->npyprojects; i++)
		free(o->pyprojects[i]);
	free(o->pyprojects);
	cli_strlist_dispose(&o->extras);
	cli_strlist_dispose(&o->groups);
}

int cli_stack_opts_finish_all(struct cli *c, struct cli_stack_opts *o, struct cli_index_opts *idx,
                          struct cli_target_opts *tgt)
{
	int rc = cli_stack_opts_finish(c, o, idx);
	if (!rc)
		rc = cli_index_opts_finish(c, idx);
	for (size_t i = 0; !rc && i < idx->variants.n; i++)
		if (!*idx->variants.v[i] && !idx->no_index)
			rc = cli_usage_error(c, "%s: --variant all is for crawl; name the variants",
			                     c->cmd);
	return rc ? rc : cli_target_opts_finish(c, tgt);
}

int cli_stack_opts_all_opt(struct cli *c, const struct cli_stack_opts_all *all, int key, const char *arg)
{
	int rc = cli_index_opt(c, all->idx, key, arg);
	if (rc == -1)
		rc = cli_target_opt(c, all->tgt, key, arg);
	if (rc == -1)
		rc = cli_stack_opt(c, all->stack, key, arg);
	return rc == -1 ? 2 : rc;
}
