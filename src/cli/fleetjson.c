/* fleetjson.c - the fleet's documents (see fleetjson.h). */
#include "fleetjson.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "offwheel/str.h"

const char *fleet_driver_text(int driver, char *buf, size_t n)
{
	snprintf(buf, n, "%d.%d", driver / 1000, (driver % 1000) / 10);
	return buf;
}

static json_t *strings_json(char *const *v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

static json_t *opt_string(const char *s)
{
	return s && *s ? json_string(s) : json_null();
}

static json_t *python_json(const struct ow_probe_python *py)
{
	return json_pack("{s:s, s:o, s:o, s:o, s:b, s:b, s:o, s:o}", "path", py->path, "executable",
	                 opt_string(py->executable), "version", opt_string(py->version),
	                 "implementation", opt_string(py->impl), "freethreaded", py->freethreaded,
	                 "debug", py->debug, "abis", strings_json(py->abis, py->nabis), "error",
	                 opt_string(py->error));
}

static json_t *gpus_json(const struct ow_probe *p)
{
	json_t *a = json_array();
	char cc[16];
	for (size_t i = 0; i < p->ngpus; i++) {
		const struct ow_probe_gpu *g = &p->gpus[i];
		snprintf(cc, sizeof cc, "%d.%d", g->cc / 10, g->cc % 10);
		json_array_append_new(a, json_pack("{s:i, s:s, s:s}", "ordinal", g->ordinal, "name",
		                                   g->name, "cc", cc));
	}
	return a;
}

static json_t *driver_json(const struct ow_probe *p)
{
	char v[16];
	return json_pack("{s:o, s:i, s:o, s:o, s:o}", "version",
	                 p->driver ? json_string(fleet_driver_text(p->driver, v, sizeof v)) : json_null(),
	                 "version_raw", p->driver, "release", opt_string(p->driver_release), "library",
	                 opt_string(p->libcuda), "error", opt_string(p->driver_error));
}

json_t *fleet_probe_json(const struct ow_probe *p, long long now)
{
	json_t *pys = json_array();
	for (size_t i = 0; i < p->npythons; i++)
		json_array_append_new(pys, python_json(&p->pythons[i]));
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:{s:o, s:o}, s:o, s:o, s:o, s:o, s:I, s:f}",
	                 "command", "probe", "format", FLEET_PROBE_FORMAT, "tool",
	                 "offwheel " OW_VERSION, "name", p->name, "os", p->os, "arch", p->arch,
	                 "libc", "name", opt_string(p->libc), "version", opt_string(p->libc_version),
	                 "platforms", strings_json(p->platforms, p->nplatforms), "pythons", pys,
	                 "driver", driver_json(p), "gpus", gpus_json(p), "probed_unix",
	                 (json_int_t)now, "seconds", p->seconds);
}

static int make_parent(struct cli *c, const char *path)
{
	char *dir = ow_aprintf("%s", path);
	char *slash = dir ? strrchr(dir, '/') : NULL;
	int rc = 0;
	if (!dir)
		rc = cli_fail(c, ow_err(OW_ENOMEM, "out of memory"));
	else if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0777) && errno != EEXIST)
			rc = cli_fail(c, ow_err(OW_EIO, "%s: cannot make the directory: %s", dir,
			                        strerror(errno)));
	}
	free(dir);
	return rc;
}

int fleet_write_json(struct cli *c, json_t *doc, const char *path)
{
	char *tmp = ow_aprintf("%s.tmp", path);
	int rc = tmp ? make_parent(c, path) : cli_fail(c, ow_err(OW_ENOMEM, "out of memory"));
	if (!rc && (json_dump_file(doc, tmp, JSON_INDENT(2) | JSON_ENSURE_ASCII) ||
	            rename(tmp, path))) {
		rc = cli_fail(c, ow_err(OW_EIO, "%s: cannot write it: %s", path, strerror(errno)));
		remove(tmp);
	}
	free(tmp);
	json_decref(doc);
	return rc;
}
