/* fleetlab.c - the lab's rows from a stick (see fleetlab.h). */
#include "fleetlab.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fleetstick.h"
#include "offwheel/error.h"
#include "offwheel/str.h"

const char *lab_step_name(enum lab_step s)
{
	static const char *const names[] = {"ok", "failed", "pending", "n/a"};
	return names[s];
}

static int problem(struct lab *lab, char *text)
{
	char **v = text ? realloc(lab->problems, (lab->nproblems + 1) * sizeof *v) : NULL;
	if (!v) {
		free(text);
		return OW_ENOMEM;
	}
	lab->problems = v;
	v[lab->nproblems++] = text;
	return 0;
}

/* One lab file: a regular file (never a link: the stick is not trusted)
 * of at most FLEET_LAB_FILE_MAX bytes holding a JSON object.  NULL with a
 * problem noted otherwise. */
static json_t *read_lab_file(struct lab *lab, const char *path, int *rc)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	json_error_t e;
	json_t *doc = NULL;
	char *why = NULL;
	FILE *f = NULL;
	if (fd < 0)
		why = ow_aprintf("%s: cannot read it: %s", path, strerror(errno));
	else if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		why = ow_aprintf("%s: not a regular file", path);
	else if ((unsigned long long)st.st_size > FLEET_LAB_FILE_MAX)
		why = ow_aprintf("%s: %lld bytes, more than a lab file may hold (%u)", path,
		                 (long long)st.st_size, FLEET_LAB_FILE_MAX);
	else if (!(f = fdopen(fd, "rb")))
		why = ow_aprintf("%s: cannot read it: %s", path, strerror(errno));
	else if (!(doc = json_loadf(f, JSON_REJECT_DUPLICATES, &e)) || !json_is_object(doc))
		why = ow_aprintf("%s: not a JSON object (%s)", path, doc ? "another JSON value" : e.text);
	if (f)
		fclose(f);
	else if (fd >= 0)
		close(fd);
	if (why || !json_is_object(doc)) {
		json_decref(doc);
		doc = NULL;
		*rc = problem(lab, why ? why : ow_aprintf("%s: unreadable", path));
	}
	return doc;
}

static struct lab_row *row_named(struct lab *lab, const char *name, int *rc)
{
	for (size_t i = 0; i < lab->n; i++)
		if (strcmp(lab->rows[i].name, name) == 0)
			return &lab->rows[i];
	struct lab_row *v = realloc(lab->rows, (lab->n + 1) * sizeof *v);
	char *copy = strdup(name);
	if (!v || !copy) {
		if (v)
			lab->rows = v;
		free(copy);
		*rc = OW_ENOMEM;
		return NULL;
	}
	lab->rows = v;
	v[lab->n] = (struct lab_row){.name = copy, .installed = -1};
	/* analyzer: copy is kept in lab->rows, freed by lab_dispose */
	return &v[lab->n++];
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.json of DIR/sub, sorted (owned); none when it is not there. */
static int list_json(const char *dir, const char *sub, char ***out, size_t *n)
{
	char *d = ow_aprintf("%s/%s", dir, sub);
	DIR *dh = d ? opendir(d) : NULL;
	struct dirent *e;
	int rc = d ? 0 : OW_ENOMEM;
	*out = NULL;
	*n = 0;
	while (!rc && dh && (e = readdir(dh))) {
		size_t len = strlen(e->d_name);
		if (len <= 5 || e->d_name[0] == '.' || strcmp(e->d_name + len - 5, ".json"))
			continue;
		char **v = realloc(*out, (*n + 1) * sizeof *v);
		char *p = v ? ow_aprintf("%s/%s", d, e->d_name) : NULL;
		if (v)
			*out = v;
		if (!p)
			rc = OW_ENOMEM;
		else
			v[(*n)++] = p;
	}
	if (dh)
		closedir(dh);
	if (*n)
		qsort(*out, *n, sizeof **out, cmp_str);
	free(d);
	return rc;
}

/* probes/ or reports/: each document to its machine's row */
static int load_sub(struct lab *lab, const char *dir, const char *sub, const char *key)
{
	char **files;
	size_t n;
	int rc = list_json(dir, sub, &files, &n);
	for (size_t i = 0; !rc && i < n; i++) {
		json_t *doc = read_lab_file(lab, files[i], &rc);
		const char *name = json_string_value(json_object_get(doc, key));
		char *base = NULL;
		if (doc && !name) { /* the file's own name, without .json */
			const char *slash = strrchr(files[i], '/');
			base = ow_aprintf("%.*s", (int)strlen(slash + 1) - 5, slash + 1);
			name = base;
		}
		struct lab_row *r = doc && name ? row_named(lab, name, &rc) : NULL;
		json_t **slot = r ? (strcmp(sub, "probes") == 0 ? &r->probe : &r->report) : NULL;
		if (slot && !*slot)
			*slot = json_incref(doc);
		else if (slot && !rc)
			rc = problem(lab, ow_aprintf("%s: a second file for machine '%s' (ignored)",
			                             files[i], name));
		json_decref(doc);
		free(base);
	}
	for (size_t i = 0; i < n; i++)
		free(files[i]);
	free(files);
	return rc;
}

static int load_machines(struct lab *lab, const char *dir)
{
	struct stick st;
	int rc = stick_load(dir, &st);
	size_t i;
	json_t *m;
	if (rc)
		return problem(lab, ow_err_detail_dup()) ? OW_ENOMEM : 0;
	const char *name = json_string_value(json_object_get(st.manifest, "name"));
	if (name && !(lab->stick_name = strdup(name)))
		rc = OW_ENOMEM;
	json_array_foreach(st.machines, i, m) {
		const char *mn = json_string_value(json_object_get(m, "name"));
		struct lab_row *r = mn && !rc ? row_named(lab, mn, &rc) : NULL;
		if (r && !r->entry)
			r->entry = json_incref(m);
	}
	stick_dispose(&st);
	return rc;
}

int lab_load(const char *dir, struct lab *lab)
{
	*lab = (struct lab){0};
	int rc = load_sub(lab, dir, "probes", "name");
	if (!rc)
		rc = load_machines(lab, dir);
	if (!rc)
		rc = load_sub(lab, dir, "reports", "machine");
	for (size_t i = 0; !rc && i < lab->n; i++)
		rc = lab_fill_row(&lab->rows[i]);
	if (!rc && !lab->n)
		rc = ow_err(OW_ENOENT, "%s: no machine's probe, report or machines.json on it — run "
		                       "'offwheel probe' at the stick's root on each machine", dir);
	else if (rc)
		rc = ow_err(OW_ENOMEM, "out of memory");
	return rc;
}

void lab_dispose(struct lab *lab)
{
	for (size_t i = 0; i < lab->n; i++) {
		struct lab_row *r = &lab->rows[i];
		free(r->name);
		json_decref(r->probe);
		json_decref(r->entry);
		json_decref(r->report);
		free(r->gpus);
		free(r->driver);
		free(r->python);
		free(r->set);
		free(r->when);
		for (int s = 0; s < LAB_NSTEPS; s++)
			free(r->fix[s]);
	}
	for (size_t i = 0; i < lab->nproblems; i++)
		free(lab->problems[i]);
	free(lab->rows);
	free(lab->problems);
	free(lab->stick_name);
	*lab = (struct lab){0};
}
