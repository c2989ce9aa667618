/* stackopts.c - -r, -c and --with for resolve and sync (stackopts.h). */
#include "stackopts.h"

#include <string.h>

#include <stdio.h>
#include "offwheel/resolve.h"

int stack_opt(struct cli *c, struct stack_opts *o, int key, const char *arg)
{
	int rc;
	if (key == 'r' || key == 'c')
		rc = ow_stack_add_file(&o->st, arg, key == 'c');
	else if (key == STK_WITH)
		rc = ow_stack_add_line(&o->st, arg, "--with");
	else
		return -1;
	o->given = true;
	return rc < 0 ? cli_fail(c, rc) : 0;
}

int stack_opts_finish(struct cli *c, struct stack_opts *o, struct index_opts *idx)
{
	if (!o->given)
		return 0;
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
		    strlist_add_csv(&idx->projects, members[i]))
			return 1;
	return 0;
}

void stack_resolve_opts(const struct stack_opts *o, struct ow_resolve_opts *ro)
{
	ro->stack = o->st.lines;
	ro->nstack = o->st.nlines;
	ro->pre |= o->st.pre;
}

void stack_opts_free(struct stack_opts *o)
{
	ow_stack_dispose(&o->st);
}
