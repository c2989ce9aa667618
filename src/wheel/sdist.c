/* sdist.c - PKG-INFO and [build-system] of a source distribution (sdist.h). */
#include "sdist.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "db.h"
#include "event.h"
#include "offwheel/error.h"
#include "offwheel/fetch.h"
#include "offwheel/str.h"
#include "pep440.h"
#include "pyproject.h"
#include "store.h"
#include "tags.h"
#include "wheel.h"
#include "wheelmeta.h"

/* Bounds: the largest real sdists (numpy, scipy) hold about 10,000
 * members and unpack to a few hundred MB. */
static const struct ow_archive_limits sdist_limits = {200000, (uint64_t)4 << 30};

bool ow_sdist_filename(const char *f)
{
	size_t n = strlen(f);
	return (n > 7 && !strcmp(f + n - 7, ".tar.gz")) || (n > 4 && !strcmp(f + n - 4, ".zip"));
}

struct grab {
	const char *label;
	char top[256]; /* the one top-level directory, "" before the first member */
	struct ow_str pkg_info, pyproject;
	struct ow_str *into; /* the member being read, NULL none */
	bool seen_pkg, seen_py;
};

/* Every member lies under one top-level directory: name-version/. */
static int same_top(struct grab *g, const char *name)
{
	size_t k = strcspn(name, "/");
	if (!name[k])
		return ow_err(OW_EZIP, "%s: member \"%.200s\" lies outside a top-level directory — "
		                       "not an sdist", g->label, name);
	if (!*g->top) {
		if (k >= sizeof g->top)
			return ow_err(OW_EZIP, "%s: top-level directory name too long", g->label);
		memcpy(g->top, name, k);
		g->top[k] = '\0';
		return 0;
	}
	if (strlen(g->top) != k || strncmp(g->top, name, k))
		return ow_err(OW_EZIP, "%s: two top-level directories (%s/ and %.*s/) — not an sdist",
		              g->label, g->top, (int)(k > 200 ? 200 : k), name);
	return 0;
}

static int grab_filter(const char *name, uint64_t size, void *ud)
{
	struct grab *g = ud;
	int rc = same_top(g, name);
	if (rc < 0)
		return rc;
	const char *rest = name + strlen(g->top) + 1;
	bool pkg = !strcmp(rest, "PKG-INFO"), py = !strcmp(rest, "pyproject.toml");
	if (!pkg && !py)
		return OW_MEMBER_SKIP;
	if ((pkg && g->seen_pkg) || (py && g->seen_py))
		return ow_err(OW_EZIP, "%s: %s twice — refused", g->label, name);
	if (size > (pkg ? OW_METADATA_CAP : OW_SDIST_PYPROJECT_MAX))
		return ow_err(OW_ETOOBIG, "%s: %s is %llu bytes, more than offwheel reads — refused",
		              g->label, name, (unsigned long long)size);
	g->seen_pkg |= pkg, g->seen_py |= py;
	g->into = pkg ? &g->pkg_info : &g->pyproject;
	return OW_MEMBER_READ;
}

static int grab_data(const char *name, const void *data, size_t len, void *ud)
{
	struct grab *g = ud;
	size_t cap = g->into == &g->pkg_info ? OW_METADATA_CAP : OW_SDIST_PYPROJECT_MAX;
	if (!data) {
		g->into = NULL;
		return 0;
	}
	if (g->into->n + len > cap)
		return ow_err(OW_ETOOBIG, "%s: %s grew past its declared size — refused", g->label, name);
	ow_str_put(g->into, data, len);
	return g->into->err ? ow_err(OW_ENOMEM, "out of memory") : 0;
}

static int take_build(struct grab *g, struct ow_sdist_info *out)
{
	char path[320];
	struct ow_pybuild b;
	snprintf(path, sizeof path, "%s/pyproject.toml", g->top);
	ow_str_put(&g->pyproject, "", 0);
	int rc = ow_pyproject_build_system(path, g->seen_py ? g->pyproject.p : NULL,
	                                   g->pyproject.n, &b);
	if (rc < 0)
		return ow_err_prefix(rc, "%s: ", g->label);
	out->build_requires = b.requires, out->nbuild_requires = b.n;
	out->build_declared = b.declared;
	b.requires = NULL, b.n = 0;
	ow_pybuild_dispose(&b);
	return 0;
}

int ow_sdist_read_fd(int fd, const char *label, struct ow_sdist_info *out)
{
	struct grab g = {.label = label};
	memset(out, 0, sizeof *out);
	int rc = ow_archive_each_member(fd, label, &sdist_limits, grab_filter, grab_data, &g);
	if (rc == 0 && !g.seen_pkg)
		rc = ow_err(OW_EZIP, "%s: no %s/PKG-INFO — not an sdist", label, *g.top ? g.top : "NAME");
	if (rc == 0)
		rc = take_build(&g, out);
	if (rc == 0) {
		ow_str_put(&g.pkg_info, "", 0);
		out->pkg_info_len = g.pkg_info.n;
		out->deps_dynamic = ow_sdist_deps_dynamic(g.pkg_info.p, g.pkg_info.n);
		rc = ow_str_take(&g.pkg_info, &out->pkg_info);
	}
	ow_str_dispose(&g.pkg_info);
	ow_str_dispose(&g.pyproject);
	if (rc < 0)
		ow_sdist_info_dispose(out);
	return rc;
}

void ow_sdist_info_dispose(struct ow_sdist_info *i)
{
	free(i->pkg_info);
	for (size_t k = 0; k < i->nbuild_requires; k++)
		free(i->build_requires[k]);
	free(i->build_requires);
	memset(i, 0, sizeof *i);
}

/* "Key: value" of one header line: the value when the key is `key`. */
static const char *header_value(const char *line, size_t n, const char *key, size_t *vlen)
{
	size_t k = strlen(key);
	if (n <= k || strncasecmp(line, key, k) || line[k] != ':')
		return NULL;
	const char *v = line + k + 1;
	while (v < line + n && (*v == ' ' || *v == '\t'))
		v++;
	*vlen = (size_t)(line + n - v);
	while (*vlen && (v[*vlen - 1] == '\r' || v[*vlen - 1] == ' '))
		(*vlen)--;
	return v;
}

bool ow_sdist_deps_dynamic(const char *text, size_t len)
{
	int major = 0, minor = 0;
	bool dynamic = false;
	for (const char *p = text; p < text + len;) {
		const char *nl = memchr(p, '\n', (size_t)(text + len - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(text + len - p), vl;
		if (!n || (n == 1 && *p == '\r'))
			break; /* the headers end at the first blank line */
		const char *v;
		if ((v = header_value(p, n, "Metadata-Version", &vl)))
			sscanf(v, "%d.%d", &major, &minor);
		else if ((v = header_value(p, n, "Dynamic", &vl)))
			dynamic |= vl == 13 && !strncasecmp(v, "Requires-Dist", 13);
		p += n + 1;
	}
	return dynamic || major < 2 || (major == 2 && minor < 2);
}

int ow_sdist_metadata(ow_store *s, int64_t file_id, const char *object, const char *filename,
                      char **text, size_t *len)
{
	struct ow_sdist_info si;
	int fd, rc = ow_store_verify(s, object, UINT64_MAX); /* every read checks the pin */
	if (rc || (rc = ow_store_open_object(s, object, &fd)))
		return rc;
	rc = ow_sdist_read_fd(fd, filename, &si);
	close(fd);
	if (rc)
		return rc;
	/* read once: kept parsed with what the build needs */
	if (!ow_db_readonly(ow_store_db(s)) &&
	    (ow_file_meta_record(s, file_id, OW_META_SDIST, si.pkg_info, si.pkg_info_len) < 0 ||
	     ow_file_meta_set_build(s, file_id, si.build_requires, si.nbuild_requires,
	                            si.deps_dynamic) < 0))
		ow_log(OW_LOG_DEBUG, "%s: metadata not kept parsed: %s", filename, ow_err_detail());
	*text = si.pkg_info, *len = si.pkg_info_len;
	si.pkg_info = NULL;
	ow_sdist_info_dispose(&si);
	return 0;
}

/* 0 when the metadata's Name and Version are the file name's (PEP 503
 * names, PEP 440 equality), else OW_EVERIFY naming both. */
static int names_agree(const char *filename, const struct ow_metadata *md)
{
	size_t n = strlen(filename), stem = n - (n > 7 && !strcmp(filename + n - 7, ".tar.gz") ? 7 : 4);
	const char *dash = memrchr(filename, '-', stem);
	char fname[OW_NAME_MAX], mname[OW_NAME_MAX];
	struct ow_version fv, mv;
	if (!dash || ow_name_normalize(filename, (size_t)(dash - filename), fname, sizeof fname) < 0 ||
	    ow_pep440_parse_n(&fv, dash + 1, (size_t)(filename + stem - dash - 1)) < 0)
		return 0; /* a name of no NAME-VERSION shape: the resolver judges it */
	if (ow_name_normalize(md->name, strlen(md->name), mname, sizeof mname) == 0 &&
	    !strcmp(mname, fname) && ow_pep440_parse(&mv, md->version) == 0 &&
	    ow_pep440_cmp(&mv, &fv) == 0)
		return 0;
	return ow_err(OW_EVERIFY, "%s: its PKG-INFO says Name: %.80s, Version: %.60s, but the "
	                          "file name says %s %.*s — an sdist that contradicts its file name "
	                          "is not stored; report it to the index",
	              filename, md->name, md->version, fname, (int)(filename + stem - dash - 1),
	              dash + 1);
}

int ow_sdist_check_name(const char *filename, const struct ow_sdist_info *si)
{
	struct ow_metadata *md;
	int rc = ow_metadata_parse(si->pkg_info, si->pkg_info_len, &md);
	if (rc < 0)
		return ow_err_prefix(rc, "%s: PKG-INFO: ", filename);
	rc = names_agree(filename, md);
	ow_metadata_free(md);
	return rc;
}
