/* stackopts.h - a whole stack for resolve and sync: -r FILE (pip
 * requirements), -c FILE (constraints), --with SPEC.  With any of them the
 * projects are torch plus what the stack names (torchvision and torchaudio
 * only when named), each target's closure taken over all of them. */
#ifndef OW_STACKOPTS_H
#define OW_STACKOPTS_H

#include "cli.h"
#include "indexopts.h"
#include "offwheel/stack.h"

enum { STK_WITH = 390 };

#define CLI_STACK_OPTS                                                                           \
	{"requirement", 'r', required_argument, "FILE",                                          \
	 "a pip requirements file: the projects to carry with torch, their closure resolved "    \
	 "for every target (repeatable; -r/-c includes, hash pins, markers)"},                 \
	{"constraint", 'c', required_argument, "FILE",                                           \
	 "a pip constraints file: limits versions, adds no project (repeatable)"},               \
	{"with", STK_WITH, required_argument, "SPEC",                                            \
	 "one more requirement of the stack, e.g. 'numpy<2' or 'vllm==0.11.0' (repeatable)"}

struct stack_opts {
	struct ow_stack st;
	bool given;
};

/* 0 handled (a file read at once), an exit code on a bad one, -1 when the
 * key is not ours. */
int stack_opt(struct cli *c, struct stack_opts *o, int key, const char *arg);
/* Before index_opts_finish: the projects, when --project was not given. */
int stack_opts_finish(struct cli *c, struct stack_opts *o, struct index_opts *idx);
struct ow_resolve_opts;
void stack_resolve_opts(const struct stack_opts *o, struct ow_resolve_opts *ro);
void stack_opts_free(struct stack_opts *o);

#endif
