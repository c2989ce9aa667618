/* stack.c - a whole stack from requirement files and single requirements
 * (include/offwheel/stack.h), read with reqfile.c's parser. */
#include "offwheel/stack.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "offwheel/error.h"
#include "pep508.h"
#include "pyproject.h"
#include "reqfile.h"

static int oom(void)
{
	return ow_err(OW_ENOMEM, "requirements: out of memory");
}

static int add_named(struct ow_stack *s, const char *name, const char *where)
{
	if (ow_stack_names(s, name))
		return 0;
	if (s->nnamed == OW_REQFILE_PROJECTS_MAX)
		return ow_err(OW_ETOOBIG, "%s: %s: more than %d projects required (the most one "
		                          "resolve takes); split the stack",
		              where, name, OW_REQFILE_PROJECTS_MAX);
	char **g = ow_array_more(s->named, s->nnamed, sizeof *g);
	if (!g)
		return oom();
	s->named = g;
	/* analyzer: kept in s->named[s->nnamed - 1], freed with the stack */
	return (g[s->nnamed] = strdup(name)) ? (s->nnamed++, 0) : oom();
}

/* What one line owns. */
struct ow_stack_own {
	char *line, *where;
	char **hashes;
	size_t nhashes;
};

static char **dup_strs(char *const *v, size_t n)
{
	char **d = calloc(n + 1, sizeof *d);
	for (size_t i = 0; d && i < n; i++)
		/* analyzer: d[0..i-1] are freed just below on failure, else returned */
		if (!(d[i] = strdup(v[i]))) {
			while (i--)
				free(d[i]);
			free(d);
			return NULL;
		}
	return d;
}

/* One line, its strings copied. */
static int add(struct ow_stack *s, const char *line, const char *where, bool constraint,
               char *const *hashes, size_t nhashes)
{
	struct ow_stack_line *g = ow_array_more(s->lines, s->nlines, sizeof *g);
	if (g)
		s->lines = g;
	struct ow_stack_own *o = g ? ow_array_more(s->own, s->nlines, sizeof *o) : NULL;
	if (!o)
		return oom();
	s->own = o;
	o = &o[s->nlines];
	/* analyzer: kept in s->own[s->nlines - 1], freed with the stack even on failure */
	*o = (struct ow_stack_own){strdup(line), strdup(where), dup_strs(hashes, nhashes), nhashes};
	s->lines[s->nlines++] = (struct ow_stack_line){o->line, o->where, constraint,
	                                               (const char *const *)o->hashes, nhashes};
	return o->line && o->where && o->hashes ? 0 : oom();
}

static int add_from(struct ow_stack *s, const struct ow_reqfile *rf, size_t from)
{
	for (size_t i = from; i < rf->nlines; i++) {
		const struct ow_reqline *r = &rf->lines[i];
		int rc = add(s, r->text, r->where, r->constraint, r->hashes, r->nhashes);
		if (rc == 0 && !r->constraint)
			rc = add_named(s, r->name, r->where);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int take_str(char **dst, const char *src)
{
	free(*dst);
	*dst = src ? strdup(src) : NULL;
	return src && !*dst ? oom() : 0;
}

/* The run options the files carried. */
static int take_options(struct ow_stack *s, const struct ow_reqfile *rf)
{
	int rc = rf->index_url ? take_str(&s->index_url, rf->index_url) : 0;
	for (size_t i = 0; rc == 0 && i < rf->nextra; i++) {
		char **g = ow_array_more(s->extra_index_urls, s->nextra, sizeof *g);
		if (!g)
			return oom();
		s->extra_index_urls = g;
		/* analyzer: kept in s->extra_index_urls[s->nextra - 1], freed with the stack */
		if (!(g[s->nextra] = strdup(rf->extra_index_urls[i])))
			return oom();
		s->nextra++;
	}
	s->pre |= rf->pre;
	return rc;
}

int ow_stack_add_file(struct ow_stack *s, const char *path, bool constraint)
{
	struct ow_reqfile rf = {0};
	struct ow_reqfile_io io = {ow_reqfile_read_fs, ow_reqfile_getenv, NULL};
	int rc = ow_reqfile_read(&rf, path, constraint, &io);
	if (rc == 0)
		rc = add_from(s, &rf, 0);
	if (rc == 0)
		rc = take_options(s, &rf);
	if (rc == 0 && rf.require_hashes_at)
		rc = ow_stack_require_hashes(s, rf.require_hashes_at);
	ow_reqfile_dispose(&rf);
	return rc;
}

int ow_stack_add_line(struct ow_stack *s, const char *line, const char *where)
{
	struct ow_requirement r;
	int rc = ow_requirement_parse(&r, line);
	if (rc < 0)
		return ow_err_prefix(OW_EINVAL, "%s: ", where);
	if (r.has_url)
		rc = ow_err(OW_EINVAL, "%s: %s: a direct URL cannot be resolved from an index; name "
		                       "the version instead",
		            where, line);
	if (rc == 0)
		rc = add(s, line, where, false, NULL, 0);
	if (rc == 0)
		rc = add_named(s, r.name, where);
	ow_requirement_dispose(&r);
	return rc;
}

int ow_stack_add_pyproject(struct ow_stack *s, const char *path,
                           const struct ow_stack_pyproject *w)
{
	char *name = NULL, *text = NULL;
	size_t len = 0, n = 0;
	struct ow_pyreq *r = NULL;
	struct ow_pyproject_want pw = {w->extras, w->nextras, w->all_extras, w->groups, w->ngroups};
	int rc = ow_reqfile_read_fs(NULL, NULL, path, &name, &text, &len);
	if (rc == 0)
		rc = ow_pyproject_requirements(name, text, len, &pw, &r, &n);
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = ow_stack_add_line(s, r[i].text, r[i].where);
	ow_pyreqs_free(r, n);
	free(name);
	free(text);
	return rc;
}

bool ow_stack_names(const struct ow_stack *s, const char *project)
{
	for (size_t i = 0; i < s->nnamed; i++)
		if (!strcmp(s->named[i], project))
			return true;
	return false;
}

void ow_stack_dispose(struct ow_stack *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nlines; i++) {
		struct ow_stack_own *o = &s->own[i];
		for (size_t h = 0; o->hashes && h < o->nhashes; h++)
			free(o->hashes[h]);
		free(o->hashes);
		free(o->line);
		free(o->where);
	}
	free(s->own);
	free(s->lines);
	free(s->index_url);
	free(s->hashes_on);
	for (size_t i = 0; i < s->nextra; i++)
		free(s->extra_index_urls[i]);
	free(s->extra_index_urls);
	for (size_t i = 0; i < s->nnamed; i++)
		free(s->named[i]);
	free(s->named);
	memset(s, 0, sizeof *s);
}
