/* fleetinstall.h - install's steps on the lab machine (docs/fleet.md): a
 * venv made, the set installed offline with pip exactly as INSTALL.txt
 * tells a person, what pip installed, and the report written back onto the
 * stick. */
#ifndef OW_FLEETINSTALL_H
#define OW_FLEETINSTALL_H

#include <jansson.h>
#include <stdbool.h>

/* Run argv[0] (found on PATH) with stdin from /dev/null.  captured NULL:
 * its stdout goes to our stderr (a --json run prints one document on
 * stdout); else what it prints is returned in *captured (owned).  0 when it
 * ran and exited 0, OW_ENOENT when it could not be started, OW_EIO when it
 * failed (the exit status in the detail). */
int fleet_spawn(const char *const *argv, char **captured);

/* `py -m venv dir` unless dir/bin/python is there already; *python (owned)
 * is dir/bin/python. */
int fleet_make_venv(const char *py, const char *dir, char **python);

/* python -m pip install --no-index --require-hashes --find-links
 * STICK/wheels -r STICK/REQ, pip's own output on stderr (-q unless
 * verbose). */
int fleet_pip_install(const char *python, const char *stick, const char *req, bool verbose);

/* `pip list --format json` of python: [{name, version}] (owned). */
int fleet_pip_list(const char *python, json_t **out);

/* Write doc to dir/reports/NAME.json atomically (the folder made when
 * missing); 0 or OW_EIO saying why (a stick mounted read-only). */
int fleet_write_report(const char *dir, const char *name, json_t *doc, char **path);

#endif
