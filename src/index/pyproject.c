/* pyproject.c - the requirements of a pyproject.toml (pyproject.h). */
#include "pyproject.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "offwheel/error.h"
#include "offwheel/str.h"
#include "pep508.h"
#include "strmap.h"
#include "tags.h"
#include "toml.h"

#define PP_DEPTH_MAX 32    /* extras and groups brought by one another */
#define PP_LINES_MAX 10000 /* requirements of one file, duplicates dropped */

enum { G_NEW, G_READING, G_DONE };

/* The file's [dependency-groups], by normalized name: each group is read
 * once, however many groups include it. */
struct pp_groups {
	struct ow_strmap by_name; /* normalized name -> index */
	char (*name)[OW_NAME_MAX];
	const struct ow_toml **list;
	unsigned char *state;
	size_t n;
	bool made;
};

struct pp {
	const char *path;
	const struct ow_toml *doc;
	const struct ow_toml *project; /* NULL when the file has no [project] */
	char name[OW_NAME_MAX];        /* the project's, normalized; "" none */
	struct ow_pyreq *out;
	size_t n;
	char seen[PP_DEPTH_MAX * 4][OW_NAME_MAX]; /* extras of the project brought so far */
	size_t nseen;
	const char *chain[PP_DEPTH_MAX]; /* the groups being read, outermost first */
	size_t nchain;
	struct pp_groups g;
	struct ow_strmap texts; /* the requirements taken, to drop a repeat */
};

static int oom(void)
{
	return ow_err(OW_ENOMEM, "pyproject: out of memory");
}

static bool is_dynamic(const struct pp *p, const char *field)
{
	const struct ow_toml *d = ow_toml_get(p->project, "dynamic");
	for (size_t i = 0; d && d->kind == OW_TOML_ARRAY && i < d->n; i++)
		if (d->kids[i]->kind == OW_TOML_STRING && !strcmp(d->kids[i]->text, field))
			return true;
	return false;
}

/* The member of table t whose key normalizes to `want` (normalized). */
static const struct ow_toml *get_normalized(const struct ow_toml *t, const char *want)
{
	char k[OW_NAME_MAX];
	for (size_t i = 0; t && t->kind == OW_TOML_TABLE && i < t->n; i++)
		if (ow_name_normalize(t->kids[i]->key, strlen(t->kids[i]->key), k, sizeof k) == 0 &&
		    !strcmp(k, want))
			return t->kids[i];
	return NULL;
}

/* "a, b, c", the keys of t, for a message. */
static void keys_text(const struct ow_toml *t, struct ow_str *s)
{
	for (size_t i = 0; t && t->kind == OW_TOML_TABLE && i < t->n; i++)
		ow_str_printf(s, "%s%s", i ? ", " : "", t->kids[i]->key);
	if (!t || t->kind != OW_TOML_TABLE || !t->n)
		ow_str_puts(s, "none");
}

static int missing(const struct pp *p, const char *what, const char *name, const struct ow_toml *t)
{
	struct ow_str s = {0};
	keys_text(t, &s);
	int rc = ow_err(OW_EINVAL, "%s: %s has no '%s' (it has: %s)", p->path, what, name,
	                s.p ? s.p : "none");
	ow_str_dispose(&s);
	return rc;
}

/* Split "req ; marker" at the first ';' outside quotes. */
static size_t marker_at(const char *line)
{
	char q = 0;
	for (size_t i = 0; line[i]; i++) {
		if (q && line[i] == q)
			q = 0;
		else if (!q && (line[i] == '"' || line[i] == '\''))
			q = line[i];
		else if (!q && line[i] == ';')
			return i;
	}
	return strlen(line);
}

/* line with `outer` (a marker, or NULL) joined to its own marker. */
static char *with_marker(const char *line, const char *outer)
{
	char *out = NULL;
	size_t at = marker_at(line);
	const char *own = line[at] ? line + at + 1 : "";
	while (*own == ' ' || *own == '\t')
		own++;
	int k;
	if (!outer || !*outer)
		k = asprintf(&out, "%s", line);
	else if (!*own)
		k = asprintf(&out, "%.*s; %s", (int)at, line, outer);
	else
		k = asprintf(&out, "%.*s; (%s) and (%s)", (int)at, line, own, outer);
	return k < 0 ? NULL : out;
}

static int push(struct pp *p, const char *line, size_t lineno, const char *label,
                const char *outer)
{
	char *text = with_marker(line, outer);
	if (!text)
		return oom();
	if (ow_strmap_find(&p->texts, text)) {
		free(text); /* the same requirement again (another group): once is enough */
		return 0;
	}
	struct ow_pyreq *g = p->n < PP_LINES_MAX ? ow_array_more(p->out, p->n, sizeof *g) : NULL;
	if (!g) {
		free(text);
		return p->n < PP_LINES_MAX
		           ? oom()
		           : ow_err(OW_ETOOBIG, "%s: more than %d requirements (%s brings more); "
		                                "offwheel reads at most that many",
		                    p->path, PP_LINES_MAX, label);
	}
	p->out = g;
	g[p->n].text = text;
	if (asprintf(&g[p->n].where, "%s:%zu (%s)", p->path, lineno, label) < 0)
		g[p->n].where = NULL;
	p->n++;
	if (!g[p->n - 1].where)
		return oom();
	return ow_strmap_add(&p->texts, text, p->n - 1);
}

static int add_extra(struct pp *p, const char *extra, const char *outer);

/* One requirement; on the project itself, the extras it asks for. */
static int requirement(struct pp *p, const struct ow_toml *item, const char *label,
                       const char *outer)
{
	struct ow_requirement r;
	if (ow_requirement_parse(&r, item->text) < 0)
		return ow_err_prefix(OW_EINVAL, "%s:%zu (%s): ", p->path, item->line, label);
	int rc = 0;
	if (*p->name && !strcmp(r.name, p->name)) {
		char *joined = with_marker(item->text, outer);
		size_t at = joined ? marker_at(joined) : 0;
		const char *m = joined && joined[at] ? joined + at + 1 : NULL;
		rc = joined ? 0 : oom();
		for (size_t e = 0; rc == 0 && e < r.nextras; e++)
			rc = add_extra(p, r.extras[e], m);
		free(joined);
	} else {
		rc = push(p, item->text, item->line, label, outer);
	}
	ow_requirement_dispose(&r);
	return rc;
}

static int add_group(struct pp *p, const char *group);

/* The requirement strings of array `a` (named `label`), and where `groups`,
 * the {include-group = "NAME"} tables of PEP 735. */
static int add_array(struct pp *p, const struct ow_toml *a, const char *label,
                     const char *outer, bool groups)
{
	if (a->kind != OW_TOML_ARRAY)
		return ow_err(OW_EINVAL, "%s:%zu: %s must be an array of requirement strings",
		              p->path, a->line, label);
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < a->n; i++) {
		const struct ow_toml *it = a->kids[i];
		const struct ow_toml *inc = groups ? ow_toml_get(it, "include-group") : NULL;
		if (it->kind == OW_TOML_STRING)
			rc = requirement(p, it, label, outer);
		else if (inc && inc->kind == OW_TOML_STRING && it->n == 1)
			rc = add_group(p, inc->text);
		else
			rc = ow_err(OW_EINVAL, "%s:%zu: %s: an item that is neither a requirement "
			                       "string%s",
			            p->path, it->line, label, groups ? " nor {include-group = \"NAME\"}" : "");
	}
	return rc;
}

static int add_extra(struct pp *p, const char *extra, const char *outer)
{
	char want[OW_NAME_MAX], label[OW_NAME_MAX + 40];
	int rc = ow_name_normalize(extra, strlen(extra), want, sizeof want);
	if (rc < 0)
		return ow_err_prefix(OW_EINVAL, "%s: extra '%s': ", p->path, extra);
	for (size_t i = 0; i < p->nseen; i++)
		if (!strcmp(p->seen[i], want))
			return 0;
	if (p->nseen == sizeof p->seen / sizeof p->seen[0])
		return ow_err(OW_ETOOBIG, "%s: more than %zu extras", p->path, p->nseen);
	snprintf(p->seen[p->nseen++], OW_NAME_MAX, "%s", want);
	if (is_dynamic(p, "optional-dependencies"))
		return ow_err(OW_EINVAL, "%s: the extras are dynamic (computed by the build backend, "
		                         "[project] dynamic lists \"optional-dependencies\"): offwheel "
		                         "cannot read extra '%s'; list its requirements in a "
		                         "requirements file (-r) instead",
		              p->path, extra);
	const struct ow_toml *od = ow_toml_get(p->project, "optional-dependencies");
	const struct ow_toml *list = get_normalized(od, want);
	if (!list)
		return missing(p, "[project.optional-dependencies]", extra, od);
	snprintf(label, sizeof label, "project.optional-dependencies.%s", list->key);
	return add_array(p, list, label, outer, false);
}

/* The index of [dependency-groups], made on first use: a name that two
 * keys normalize to is the first one's, as a linear search found it. */
static int index_groups(struct pp *p)
{
	struct pp_groups *g = &p->g;
	const struct ow_toml *dg = ow_toml_get(p->doc, "dependency-groups");
	size_t n = dg && dg->kind == OW_TOML_TABLE ? dg->n : 0;
	g->made = true;
	g->name = calloc(n + 1, sizeof *g->name);
	g->list = calloc(n + 1, sizeof *g->list);
	g->state = calloc(n + 1, 1);
	if (!g->name || !g->list || !g->state)
		return oom();
	for (size_t i = 0; i < n; i++) {
		const char *key = dg->kids[i]->key;
		if (ow_name_normalize(key, strlen(key), g->name[g->n], OW_NAME_MAX) < 0 ||
		    ow_strmap_find(&g->by_name, g->name[g->n]))
			continue;
		g->list[g->n] = dg->kids[i];
		int rc = ow_strmap_add(&g->by_name, g->name[g->n], g->n);
		if (rc < 0)
			return rc;
		g->n++;
	}
	return 0;
}

static void groups_dispose(struct pp_groups *g)
{
	ow_strmap_dispose(&g->by_name);
	free(g->name);
	free(g->list);
	free(g->state);
}

/* Group `group`'s requirements, each group read once (memoised: a group
 * included by many others, or twice by one, adds nothing the second time). */
static int add_group(struct pp *p, const char *group)
{
	char want[OW_NAME_MAX], label[OW_NAME_MAX + 40];
	if (ow_name_normalize(group, strlen(group), want, sizeof want) < 0)
		return ow_err_prefix(OW_EINVAL, "%s: group '%s': ", p->path, group);
	int rc = p->g.made ? 0 : index_groups(p);
	const size_t *at = rc == 0 ? ow_strmap_find(&p->g.by_name, want) : NULL;
	if (rc < 0 || !at)
		return rc < 0 ? rc : missing(p, "[dependency-groups]", group,
		                              ow_toml_get(p->doc, "dependency-groups"));
	size_t i = *at;
	if (p->g.state[i] == G_DONE)
		return 0;
	if (p->g.state[i] == G_READING) { /* "Dev_Tools" is dev-tools: named as written */
		const char *key = p->g.list[i]->key;
		bool same = !strcmp(key, group);
		return ow_err(OW_EINVAL, "%s: [dependency-groups] '%s' includes itself (through "
		                         "include-group%s%s%s)",
		              p->path, group, same ? "" : "; it is '", same ? "" : key,
		              same ? "" : "', as PEP 735 compares names normalized");
	}
	if (p->nchain == PP_DEPTH_MAX)
		return ow_err(OW_ETOOBIG, "%s: groups include one another more than %d deep", p->path,
		              PP_DEPTH_MAX);
	const struct ow_toml *list = p->g.list[i];
	snprintf(label, sizeof label, "dependency-groups.%s", list->key);
	p->chain[p->nchain++] = list->key;
	p->g.state[i] = G_READING;
	rc = add_array(p, list, label, NULL, true);
	p->g.state[i] = G_DONE;
	p->nchain--;
	return rc;
}

/* [project]: its name, and its dependencies unless they are dynamic. */
static int project(struct pp *p)
{
	const struct ow_toml *name = ow_toml_get(p->project, "name");
	if (name && name->kind == OW_TOML_STRING &&
	    ow_name_normalize(name->text, name->len, p->name, sizeof p->name) < 0)
		return ow_err_prefix(OW_EINVAL, "%s:%zu: project.name: ", p->path, name->line);
	if (is_dynamic(p, "dependencies"))
		return ow_err(OW_EINVAL, "%s: the dependencies are dynamic (computed by the build "
		                         "backend, [project] dynamic lists \"dependencies\"): offwheel "
		                         "cannot read them; list them in a requirements file (-r) "
		                         "instead",
		              p->path);
	const struct ow_toml *deps = ow_toml_get(p->project, "dependencies");
	return deps ? add_array(p, deps, "project.dependencies", NULL, false) : 0;
}

static int read_all(struct pp *p, const struct ow_pyproject_want *w)
{
	const struct ow_toml *proj = ow_toml_get(p->doc, "project");
	if (proj && proj->kind != OW_TOML_TABLE)
		return ow_err(OW_EINVAL, "%s: 'project' must be a table", p->path);
	p->project = proj;
	bool extras = w->nextras || w->all_extras;
	if (!proj && (extras || !w->ngroups))
		return ow_err(OW_EINVAL, "%s: no [project] table: %s", p->path,
		              extras ? "--extra reads [project.optional-dependencies]"
		                     : "nothing to carry (give --group NAME for its "
		                       "[dependency-groups], or a requirements file)");
	int rc = proj ? project(p) : 0;
	const struct ow_toml *od = ow_toml_get(proj, "optional-dependencies");
	for (size_t i = 0; rc == 0 && w->all_extras && od && i < od->n; i++)
		rc = add_extra(p, od->kids[i]->key, NULL);
	for (size_t i = 0; rc == 0 && i < w->nextras; i++)
		rc = add_extra(p, w->extras[i], NULL);
	for (size_t i = 0; rc == 0 && i < w->ngroups; i++)
		rc = add_group(p, w->groups[i]);
	return rc;
}

int ow_pyproject_requirements(const char *path, const char *text, size_t len,
                              const struct ow_pyproject_want *w, struct ow_pyreq **out, size_t *n)
{
	*out = NULL, *n = 0;
	struct ow_toml *doc = NULL;
	int rc = ow_toml_parse(text, len, path, &doc);
	if (rc < 0)
		return rc;
	struct pp *p = calloc(1, sizeof *p);
	if (!p) {
		ow_toml_free(doc);
		return oom();
	}
	p->path = path;
	p->doc = doc;
	rc = read_all(p, w);
	if (rc < 0)
		ow_pyreqs_free(p->out, p->n);
	else
		*out = p->out, *n = p->n;
	groups_dispose(&p->g);
	ow_strmap_dispose(&p->texts);
	free(p);
	ow_toml_free(doc);
	return rc;
}

void ow_pyreqs_free(struct ow_pyreq *r, size_t n)
{
	for (size_t i = 0; r && i < n; i++)
		free(r[i].text), free(r[i].where);
	free(r);
}

/* ---- [build-system] (PEP 518 / 517) ---------------------------------------- */

/* What pip and uv take for a project that names no build system: the
 * setuptools backend in its legacy mode, at least the release that added
 * build_meta.  "wheel" with it: setuptools before 70.1 asks for it at build
 * time (get_requires_for_build_wheel), and a pin in the project may keep an
 * older setuptools. */
static const char *const fallback_requires[] = {"setuptools>=40.8.0", "wheel"};

static int build_push(struct ow_pybuild *b, const char *text, size_t len)
{
	char **g = ow_array_more(b->requires, b->n, sizeof *g);
	if (!g)
		return oom();
	b->requires = g;
	/* analyzer: kept in b->requires[b->n - 1], freed by ow_pybuild_dispose */
	return (g[b->n++] = strndup(text, len)) ? 0 : oom();
}

static bool is_setuptools_backend(const char *backend)
{
	return !backend || !strncmp(backend, "setuptools.build_meta", 21);
}

static bool names_wheel(const struct ow_pybuild *b)
{
	bool found = false;
	for (size_t i = 0; i < b->n && !found; i++) {
		struct ow_requirement r;
		if (ow_requirement_parse(&r, b->requires[i]) == 0) {
			found = !strcmp(r.name, "wheel");
			ow_requirement_dispose(&r);
		}
	}
	return found;
}

static int build_declared(const char *path, const struct ow_toml *bs, struct ow_pybuild *b)
{
	const struct ow_toml *req = ow_toml_get(bs, "requires");
	const struct ow_toml *be = ow_toml_get(bs, "build-backend");
	if (!req || req->kind != OW_TOML_ARRAY)
		return ow_err(OW_EINVAL, "%s: [build-system] has no 'requires' list (PEP 518 makes it "
		                         "required; pip refuses to build such a project)", path);
	if (be && (be->kind != OW_TOML_STRING || !(b->backend = strdup(be->text))))
		return be->kind != OW_TOML_STRING
		           ? ow_err(OW_EINVAL, "%s:%zu: build-system.build-backend must be a string",
		                    path, be->line)
		           : oom();
	b->declared = true;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < req->n; i++) {
		const struct ow_toml *it = req->kids[i];
		struct ow_requirement r;
		if (it->kind != OW_TOML_STRING)
			return ow_err(OW_EINVAL, "%s:%zu: build-system.requires holds a value that is not a "
			                         "string", path, it->line);
		if ((rc = ow_requirement_parse(&r, it->text)) < 0)
			return ow_err_prefix(rc, "%s:%zu: build-system.requires: ", path, it->line);
		ow_requirement_dispose(&r);
		rc = build_push(b, it->text, it->len);
	}
	if (rc == 0 && is_setuptools_backend(b->backend) && !names_wheel(b))
		rc = build_push(b, "wheel", 5);
	return rc;
}

int ow_pyproject_build_system(const char *path, const char *text, size_t len,
                              struct ow_pybuild *out)
{
	memset(out, 0, sizeof *out);
	struct ow_toml *doc = NULL;
	int rc = text ? ow_toml_parse(text, len, path, &doc) : 0;
	const struct ow_toml *bs = doc ? ow_toml_get(doc, "build-system") : NULL;
	if (rc == 0 && bs && bs->kind != OW_TOML_TABLE)
		rc = ow_err(OW_EINVAL, "%s: 'build-system' must be a table", path);
	else if (rc == 0 && bs)
		rc = build_declared(path, bs, out);
	for (size_t i = 0; rc == 0 && !bs && i < 2; i++)
		rc = build_push(out, fallback_requires[i], strlen(fallback_requires[i]));
	ow_toml_free(doc);
	if (rc < 0)
		ow_pybuild_dispose(out);
	return rc;
}

void ow_pybuild_dispose(struct ow_pybuild *b)
{
	for (size_t i = 0; b->requires && i < b->n; i++)
		free(b->requires[i]);
	free(b->requires);
	free(b->backend);
	memset(b, 0, sizeof *b);
}
