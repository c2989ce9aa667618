/* pep508.h - requirement lines and environment markers (PEP 508), as found
 * in Requires-Dist: `name[extra,...] specifier ; marker` or `name @ url`.
 *
 * Markers are evaluated against an environment built for a target
 * (ow_marker_env_for_target), never against the host. */
#ifndef OW_PEP508_H
#define OW_PEP508_H

#include <stdbool.h>
#include <stddef.h>

#include "pep440.h"
#include "tags.h"

#define OW_REQ_TEXT_MAX 4096 /* longest requirement line accepted */
#define OW_REQ_EXTRAS_MAX 256 /* extras in [..]: pandas[all] lists 23 */
#define OW_MARKER_NODES_MAX 64
#define OW_MARKER_DEPTH_MAX 32
#define OW_MARKER_STR_MAX 128 /* one quoted string + NUL */
#define OW_URL_MAX 1024

/* The marker variables, in one table so parser and evaluator agree. */
#define OW_MARKER_VARS(X)                                                                          \
	X(PYTHON_VERSION, python_version)                                                          \
	X(PYTHON_FULL_VERSION, python_full_version)                                                \
	X(OS_NAME, os_name)                                                                        \
	X(SYS_PLATFORM, sys_platform)                                                              \
	X(PLATFORM_RELEASE, platform_release)                                                      \
	X(PLATFORM_SYSTEM, platform_system)                                                        \
	X(PLATFORM_VERSION, platform_version)                                                      \
	X(PLATFORM_MACHINE, platform_machine)                                                      \
	X(PLATFORM_PYTHON_IMPLEMENTATION, platform_python_implementation)                          \
	X(IMPLEMENTATION_NAME, implementation_name)                                                \
	X(IMPLEMENTATION_VERSION, implementation_version)                                          \
	X(EXTRA, extra)

enum ow_marker_var {
#define OW_X_VAR(id, name) OW_MV_##id,
	OW_MARKER_VARS(OW_X_VAR)
#undef OW_X_VAR
	    OW_MV_COUNT
};

/* The values of the variables for one target (EXTRA is given per call). */
struct ow_marker_env {
	char value[OW_MV_COUNT][64];
};

/* Linux x86_64: "Linux", "x86_64", "linux", "posix"; Linux aarch64: "aarch64";
 * Windows: "Windows", "AMD64" (or "ARM64"), "win32", "nt"; macOS: "Darwin",
 * "arm64" / "x86_64", "darwin", "posix".  CPython: implementation_name
 * "cpython", platform_python_implementation "CPython"; python_full_version
 * and implementation_version are "3.N.P" (P = 0 unless the target says);
 * platform_release and platform_version are "" (unknown for a target). */
void ow_marker_env_for_target(struct ow_marker_env *env, const struct ow_target *t);

struct ow_marker; /* opaque, parsed marker expression */

/* Parse a marker ("python_version >= '3.12' and extra == 'x'"). */
int ow_marker_parse(struct ow_marker **out, const char *text);
/* Evaluate; extra is the extra being installed (NULL or "" for none).
 * OW_EINVAL for comparisons the spec leaves undefined (~= on non-versions). */
int ow_marker_eval(const struct ow_marker *m, const struct ow_marker_env *env, const char *extra,
                   bool *result);
void ow_marker_free(struct ow_marker *m);

struct ow_requirement {
	char name[OW_NAME_MAX]; /* normalized */
	char (*extras)[OW_NAME_MAX]; /* nextras normalized names, owned; NULL when none */
	size_t nextras;
	struct ow_specset spec;
	bool has_url; /* "name @ url": parsed, flagged, to be refused */
	char url[OW_URL_MAX];
	struct ow_marker *marker; /* NULL when none */
};

/* Parse one requirement line.  On success free it with ow_requirement_dispose. */
int ow_requirement_parse(struct ow_requirement *r, const char *line);
/* Whether the requirement applies to the target (no marker: yes). */
int ow_requirement_applies(const struct ow_requirement *r, const struct ow_marker_env *env,
                           const char *extra, bool *result);
/* Frees the marker and the extras; the struct itself is the caller's.
 * NULL is a no-op. */
void ow_requirement_dispose(struct ow_requirement *r);

#endif
