/* stack.h - a lab's whole stack: pip requirement files (`-r FILE`,
 * `-c FILE`) and single requirements (`--with SPEC`), turned into the lines
 * ow_resolve_opts.stack takes.  A file is read as pip reads it (continuation
 * lines, comments, ${VAR}, -r/-c includes relative to the file, --hash
 * pins, markers); what offwheel cannot honour (editable installs, paths and
 * URLs, --no-binary, --find-links) is refused naming FILE:LINE.  A
 * pyproject.toml gives its [project] dependencies, extras and groups. */
#ifndef OW_STACK_H
#define OW_STACK_H

#include <stdbool.h>
#include <stddef.h>

#include "offwheel/resolve.h"

struct ow_stack {
	struct ow_stack_line *lines; /* in the order read; strings owned here */
	size_t nlines;
	/* the run options the files carried (pip's -i, --extra-index-url, --pre) */
	char *index_url;
	char **extra_index_urls;
	size_t nextra;
	bool pre;
	/* where --require-hashes turned pip's hash-checking mode on ("FILE:LINE"
	 * of the first), or NULL (a --hash on any line turns it on too) */
	char *hashes_on;
	/* the projects named by a requirement (not a constraint), normalized */
	char **named;
	size_t nnamed;
	struct ow_stack_own *own; /* the strings `lines` point to */
};

/* Read a requirements file (`constraint`: a constraints file) and what it
 * includes, appending to *s (zeroed before the first call).  OW_EINVAL
 * with "FILE:LINE: ..." for what cannot be honoured, OW_ENOENT / OW_EIO
 * naming a file that cannot be read. */
int ow_stack_add_file(struct ow_stack *s, const char *path, bool constraint);
/* One requirement (PEP 508), `where` naming it in messages ("--with"). */
int ow_stack_add_line(struct ow_stack *s, const char *line, const char *where);
/* What to take from a pyproject.toml besides its [project] dependencies:
 * extras of [project.optional-dependencies] and PEP 735 groups of
 * [dependency-groups], named as given (compared normalized). */
struct ow_stack_pyproject {
	const char *const *extras;
	size_t nextras;
	bool all_extras;
	const char *const *groups;
	size_t ngroups;
};
/* The requirements of a pyproject.toml, each named "FILE:LINE (table)".
 * OW_EINVAL for what cannot be read (dynamic dependencies, an extra or a
 * group the file lacks: the ones it has are listed), OW_EPARSE for a file
 * that is not TOML, OW_ENOENT / OW_EIO for one that cannot be read. */
int ow_stack_add_pyproject(struct ow_stack *s, const char *path,
                           const struct ow_stack_pyproject *w);
/* pip's hash-checking mode, once everything is read: when a file said
 * --require-hashes or any line carries a --hash, every requirement needs
 * one (its own, or a constraint's on the same project), as pip refuses to
 * install otherwise.  OW_EINVAL naming the first line without one. */
int ow_stack_check_hashes(const struct ow_stack *s);
/* --require-hashes, as given at `where` (kept when it is the first). */
int ow_stack_require_hashes(struct ow_stack *s, const char *where);
/* Whether a requirement of the stack names the project (normalized). */
bool ow_stack_names(const struct ow_stack *s, const char *project);
void ow_stack_dispose(struct ow_stack *s);

#endif
