/* pyproject.h - the requirements a pyproject.toml states (not a public
 * API; pure, so it can be fuzzed):
 *   [project] dependencies                  always (PEP 621)
 *   [project.optional-dependencies] NAME    for each --extra NAME
 *   [dependency-groups] NAME                for each --group NAME (PEP 735)
 * as uv and pip read them: extra and group names compared normalized (PEP
 * 685 / PEP 503: "Dev_Tools" is "dev-tools"); a group's
 * {include-group = "other"} brings that group's requirements, a cycle is
 * an error; a requirement on the project itself ("myproj[cuda]" in myproj's
 * own extras) brings those extras, its marker joined to theirs.
 *
 * What cannot be read is refused, naming the file and what to do: a list
 * the build backend computes (`dynamic = ["dependencies"]`), an extra or a
 * group the file does not have (the ones it has are listed), a value of
 * the wrong type. */
#ifndef OW_PYPROJECT_H
#define OW_PYPROJECT_H

#include <stdbool.h>
#include <stddef.h>

struct ow_pyreq {
	char *text;  /* the requirement (PEP 508), markers joined for self-references */
	char *where; /* "pyproject.toml:12 (project.optional-dependencies.cuda)" */
};

/* What to take besides [project] dependencies. */
struct ow_pyproject_want {
	const char *const *extras; /* --extra NAME, as given */
	size_t nextras;
	bool all_extras; /* --all-extras: every extra the file has */
	const char *const *groups; /* --group NAME */
	size_t ngroups;
};

int ow_pyproject_requirements(const char *path, const char *text, size_t len,
                              const struct ow_pyproject_want *w, struct ow_pyreq **out, size_t *n);
void ow_pyreqs_free(struct ow_pyreq *r, size_t n);

/* What building a source tree needs (PEP 518's [build-system]): its
 * `requires`, each a checked PEP 508 line, and its build-backend; with no
 * [build-system] (or no pyproject.toml: text NULL), what pip and uv take
 * then: setuptools>=40.8.0 and wheel, declared false.  A setuptools backend
 * gets "wheel" added when it lacks one (setuptools before 70.1 asks for it while building).
 * A [build-system] without `requires` is refused, as pip refuses it. */
struct ow_pybuild {
	char **requires;
	size_t n;
	char *backend; /* NULL when none was named */
	bool declared; /* the file has a [build-system] table */
};
int ow_pyproject_build_system(const char *path, const char *text, size_t len,
                              struct ow_pybuild *out);
void ow_pybuild_dispose(struct ow_pybuild *b);

#endif
