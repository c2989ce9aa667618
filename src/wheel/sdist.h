/* sdist.h - a source distribution as offwheel reads it (not a public API).
 *
 * An sdist is name-version.tar.gz (PEP 625; older ones .zip) holding one
 * top-level directory with PKG-INFO (core metadata, as a wheel's METADATA)
 * and, for a project that names its build system, pyproject.toml.  offwheel
 * never builds one: it reads what the resolver needs — the dependencies in
 * PKG-INFO, the build requirements in pyproject.toml — and ships the file;
 * the target builds it at install time.
 *
 * PKG-INFO promises its dependencies only from Metadata-Version 2.2 on, and
 * only when Dynamic does not name Requires-Dist (PEP 643); otherwise the
 * build backend may compute others at build time, and what PKG-INFO says is
 * taken as written (deps_dynamic tells the resolver to say so). */
#ifndef OW_SDIST_H
#define OW_SDIST_H

#include <stdbool.h>
#include <stddef.h>

#define OW_SDIST_PYPROJECT_MAX ((size_t)1 << 20)

struct ow_sdist_info {
	char *pkg_info; /* PKG-INFO's bytes, NUL-terminated */
	size_t pkg_info_len;
	char **build_requires; /* [build-system] requires, or pip's fallback */
	size_t nbuild_requires;
	bool build_declared; /* from a [build-system] table */
	bool deps_dynamic;   /* PKG-INFO does not promise Requires-Dist */
};

/* Whether a file name is an sdist's (.tar.gz or .zip). */
bool ow_sdist_filename(const char *filename);
/* Read the sdist open on fd (every byte, front to back: gzip's CRC is
 * checked to the end).  `label` names it in messages.  OW_EZIP for a file
 * that is no readable archive, has more than one top-level directory or no
 * PKG-INFO; OW_EINVAL for a pyproject.toml pip would refuse. */
int ow_sdist_read_fd(int fd, const char *label, struct ow_sdist_info *out);
void ow_sdist_info_dispose(struct ow_sdist_info *i);
/* Whether the sdist is what its file name says: PKG-INFO's Name and Version
 * are the name's (PEP 503 names, PEP 440 equality).  OW_EVERIFY naming both
 * when they differ, OW_EPARSE for a PKG-INFO that does not parse: such a
 * file is never stored (fetch checks it before publishing the object). */
int ow_sdist_check_name(const char *filename, const struct ow_sdist_info *si);
/* From PKG-INFO's header lines: whether its Requires-Dist may not be the
 * whole story (Metadata-Version before 2.2, or Dynamic: Requires-Dist). */
bool ow_sdist_deps_dynamic(const char *pkg_info, size_t len);

#endif
