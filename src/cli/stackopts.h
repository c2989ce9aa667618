/* stackopts.h - a whole stack for resolve and sync: -r FILE (pip
 * requirements, or a pyproject.toml with --extra / --all-extras / --group),
 * -c FILE (constraints), --with SPEC.  With any of them the
 * projects are torch plus what the stack names (torchvision and torchaudio
 * only when named), each target's closure taken over all of them. */
#ifndef OW_STACKOPTS_H
#define OW_STACKOPTS_H

#include "cli.h"
#include "indexopts.h"
#include "offwheel/stack.h"

enum { STK_WITH = 390, STK_EXTRA, STK_ALL_EXTRAS, STK_GROUP };

#define CLI_STACK_OPTS                                                                           \
	{"requirement", 'r', required_argument, "FILE",                                          \
	 "a pip requirements file: the projects to carry with torch, their closure resolved "    \
	 "for every target (repeatable; -r/-c includes, hash pins, markers)"},                 \
	{"constraint", 'c', required_argument, "FILE",                                           \
	 "a pip constraints file: limits versions, adds no project (repeatable)"},               \
	{"with", STK_WITH, required_argument, "SPEC",                                            \
	 "one more requirement of the stack, e.g. 'numpy<2' or 'vllm==0.11.0' (repeatable)"},    \
	{"extra", STK_EXTRA, required_argument, "NAME",                                          \
	 "with -r pyproject.toml: its [project.optional-dependencies] NAME too (repeatable)"},  \
	{"all-extras", STK_ALL_EXTRAS, no_argument, NULL,                                        \
	 "with -r pyproject.toml: every extra it has"},                                          \
	{"group", STK_GROUP, required_argument, "NAME",                                          \
	 "with -r pyproject.toml: its [dependency-groups] NAME too (PEP 735; repeatable)"}

struct cli_stack_opts {
	struct ow_stack st;
	bool given;
	/* pyproject.toml files, read when every option is known */
	char **pyprojects;
	size_t npyprojects;
	struct cli_strlist extras, groups;
	bool all_extras;
};

/* 0 handled (a file read at once), an exit code on a bad one, -1 when the
 * key is not ours. */
int cli_stack_opt(struct cli *c, struct cli_stack_opts *o, int key, const char *arg);
/* Before cli_index_opts_finish: the projects, when --project was not given. */
int cli_stack_opts_finish(struct cli *c, struct cli_stack_opts *o, struct cli_index_opts *idx);
struct ow_resolve_opts;
void cli_stack_resolve_opts(const struct cli_stack_opts *o, struct ow_resolve_opts *ro);
void cli_stack_opts_dispose(struct cli_stack_opts *o);
/* The options resolve and sync share: requirements, index, targets. */
struct cli_target_opts;
struct cli_stack_opts_all {
	struct cli_stack_opts *stack;
	struct cli_index_opts *idx;
	struct cli_target_opts *tgt;
};
/* An option of any of the three: 0, or an exit code (2 when none knows it). */
int cli_stack_opts_all_opt(struct cli *c, const struct cli_stack_opts_all *all, int key, const char *arg);
/* What resolve and sync check once every option is read: the stack, the
 * index options, named variants (not "all", which is crawl's), the targets. */
int cli_stack_opts_finish_all(struct cli *c, struct cli_stack_opts *o, struct cli_index_opts *idx,
                          struct cli_target_opts *tgt);

#endif
