/* stackhash.c - pip's hash-checking mode over a whole stack
 * (ow_stack_check_hashes, include/offwheel/stack.h): once every file is
 * read, each requirement needs a --hash of its own or of a constraint on
 * its project, as pip refuses to install otherwise. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "offwheel/error.h"
#include "offwheel/stack.h"
#include "pep508.h"

static int oom(void)
{
	return ow_err(OW_ENOMEM, "requirements: out of memory");
}

int ow_stack_require_hashes(struct ow_stack *s, const char *where)
{
	if (s->hashes_on)
		return 0;
	return (s->hashes_on = strdup(where)) ? 0 : oom();
}

/* Where hash checking was turned on: a --require-hashes, else the first
 * line with a --hash; NULL when it is off. */
static const char *hashes_on(const struct ow_stack *s)
{
	for (size_t i = 0; !s->hashes_on && i < s->nlines; i++)
		if (s->lines[i].nhashes)
			return s->lines[i].where;
	return s->hashes_on;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The normalized project names of the lines that carry a --hash, sorted
 * (malloc'd, *n of them; each freed with the array). */
static int hashed_names(const struct ow_stack *s, char ***out, size_t *n)
{
	char **v = calloc(s->nlines + 1, sizeof *v);
	int rc = v ? 0 : oom();
	*n = 0;
	for (size_t i = 0; rc == 0 && i < s->nlines; i++) {
		struct ow_requirement r;
		if (!s->lines[i].nhashes || ow_requirement_parse(&r, s->lines[i].line) < 0)
			continue;
		rc = (v[*n] = strdup(r.name)) ? ((*n)++, 0) : oom();
		ow_requirement_dispose(&r);
	}
	if (v)
		qsort(v, *n, sizeof *v, cmp_names);
	*out = v;
	return rc;
}

/* 1 when the line is a requirement with no --hash of its own or from a
 * constraint on its project. */
static int lacks_hash(const struct ow_stack_line *l, char **hashed, size_t nhashed,
                      char *name, size_t cap)
{
	struct ow_requirement r;
	if (l->constraint || l->nhashes || ow_requirement_parse(&r, l->line) < 0)
		return 0;
	char *key = r.name;
	int lacks = !bsearch(&key, hashed, nhashed, sizeof *hashed, cmp_names);
	snprintf(name, cap, "%s", r.name);
	ow_requirement_dispose(&r);
	return lacks;
}

int ow_stack_check_hashes(const struct ow_stack *s)
{
	char **hashed = NULL, name[OW_NAME_MAX];
	size_t n = 0;
	const char *on = hashes_on(s);
	if (!on)
		return 0;
	int rc = hashed_names(s, &hashed, &n);
	for (size_t i = 0; rc == 0 && i < s->nlines; i++)
		if (lacks_hash(&s->lines[i], hashed, n, name, sizeof name))
			rc = ow_err(OW_EINVAL, "%s: %s has no --hash, but %s turned hash checking on "
			            "(pip's rule: after --require-hashes or one --hash, every requirement "
			            "needs one, or pip refuses to install) — give %s its --hash=sha256:..., "
			            "or drop --require-hashes and every --hash",
			            s->lines[i].where, name, on, name);
	for (size_t i = 0; hashed && i < n; i++)
		free(hashed[i]);
	free(hashed);
	return rc;
}
