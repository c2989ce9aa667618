/* exportjson.c - the export manifest and the target's accepted-sequence
 * state file, as JSON (the only library module that includes jansson). */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>

#include "offwheel/error.h"
#include "exportint.h"
#include "fsutil.h"
#include "fsbeneath.h"
#include "clock.h"
#include "digest.h"
#include "offwheel/str.h"

#define MANIFEST_MAX_FILES 1000000

/* One recorded verdict: {"cc":"12.0","driver":null,"verdict":"none","runs":false,...} */
static json_t *device_json(const struct ow_export_device *d)
{
	char cc[16], drv[16];
	ex_cc_text(d->cc, cc, sizeof cc);
	ex_driver_text(d->driver, drv, sizeof drv);
	json_t *o = json_pack("{s:s, s:s?, s:s, s:o, s:b, s:s?, s:s?, s:I}", "cc", cc, "driver",
	                      d->driver ? drv : NULL, "verdict", d->verdict, "runs",
	                      d->runs < 0 ? json_null() : json_boolean(d->runs), "predicted",
	                      d->predicted, "wheel", d->wheel, "detail", d->detail, "judged_unix",
	                      (json_int_t)d->judged_at);
	json_t *cause = d->library ? json_pack("{s:s, s:I, s:I}", "library", d->library, "modules",
	                                       (json_int_t)d->modules, "no_image",
	                                       (json_int_t)d->no_image)
	                           : json_null();
	if (o)
		json_object_set_new(o, "cause", cause);
	else
		json_decref(cause);
	return o;
}

static json_t *devices_json(const struct ow_export_set *set)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < set->ndevices; i++)
		json_array_append_new(a, device_json(&set->devices[i]));
	return a;
}

static json_t *set_json(const struct ow_export_plan *p, const struct ow_export_set *set)
{
	json_t *members = json_array();
	for (size_t i = 0; i < set->n; i++) {
		const struct ow_export_item *it = &p->items[set->members[i]];
		json_array_append_new(members, json_pack("{s:s, s:s, s:s}", "project", it->project,
		                                         "version", it->version, "file", it->filename));
	}
	char req[600];
	snprintf(req, sizeof req, "requirements/%s.txt", set->req_name);
	json_t *o = json_pack("{s:I, s:s, s:s?, s:b, s:s, s:o}", "id", (json_int_t)set->id,
	                      "target", set->target, "torch_version", set->torch_version, "complete",
	                      set->complete, "requirements", req, "members", members);
	if (o)
		json_object_set_new(o, "devices", devices_json(set));
	return o;
}

static json_t *files_json(const struct ex_files *f)
{
	json_t *a = json_array();
	for (size_t i = 0; i < f->n; i++)
		json_array_append_new(a, json_pack("{s:s, s:I, s:s}", "path", f->v[i].path, "size",
		                                   (json_int_t)f->v[i].size, "sha256", f->v[i].sha256));
	return a;
}


int ex_json_manifest(const struct ow_export_plan *p, const struct ex_meta *m,
                      const struct ex_files *f, struct ow_str *out)
{
	json_t *sets = json_array(), *targets = json_array();
	for (size_t i = 0; i < p->nsets; i++) {
		json_array_append_new(sets, set_json(p, &p->sets[i]));
		json_array_append_new(targets, json_string(p->sets[i].target));
	}
	char created[32], expires[32], comment[300];
	ow_utc_iso(m->created, created, sizeof created);
	ow_utc_iso(m->expires, expires, sizeof expires);
	snprintf(comment, sizeof comment, "offwheel export '%s' sequence %lld, key %s, expires %s",
	         m->name, (long long)m->sequence, m->key_id[0] ? m->key_id : "none", expires);
	json_t *doc = json_pack("{s:s, s:s, s:s, s:I, s:I, s:s, s:I, s:s, s:s?, s:o, s:o, s:o}",
	                        "format", OW_EXPORT_FORMAT, "tool", "offwheel " OW_VERSION, "comment",
	                        comment, "sequence", (json_int_t)m->sequence, "created_unix",
	                        (json_int_t)m->created, "created", created, "expires_unix",
	                        (json_int_t)m->expires, "expires", expires, "key_id",
	                        m->key_id[0] ? m->key_id : NULL, "sets", sets, "targets", targets,
	                        "files", files_json(f));
	if (doc)
		json_object_set_new(doc, "name", json_string(m->name));
	char *text = doc ? json_dumps(doc, JSON_INDENT(1) | JSON_ENSURE_ASCII) : NULL;
	json_decref(doc);
	if (!text)
		return ow_err(OW_ENOMEM, "manifest: could not build the JSON document");
	ow_str_printf(out, "%s\n", text);
	free(text);
	return out->err;
}

static int get_int(json_t *doc, const char *key, int64_t lo, int64_t *out)
{
	json_t *v = json_object_get(doc, key);
	if (!json_is_integer(v) || json_integer_value(v) < lo)
		return ow_err(OW_EPARSE, "manifest: '%s' is missing or not an integer >= %lld", key,
		              (long long)lo);
	*out = json_integer_value(v);
	return 0;
}

/* "name" is optional: an export made before exports had names has none. */
static int parse_name(json_t *doc, struct ex_manifest *m)
{
	json_t *v = json_object_get(doc, "name");
	if (!v)
		return 0;
	const char *name = json_string_value(v), *why = name ? ow_export_name_problem(name)
	                                                     : "it is not a string";
	if (why || strlen(name) != json_string_length(v))
		return ow_err(OW_EPARSE, "manifest: 'name' is not an export name (%s)",
		              why ? why : "it holds a NUL byte");
	snprintf(m->name, sizeof m->name, "%s", name);
	return 0;
}

static int parse_file_entry(json_t *e, size_t i, struct ex_files *files)
{
	const char *path = NULL, *sha = NULL;
	json_int_t size = -1;
	if (json_unpack(e, "{s:s, s:I, s:s !}", "path", &path, "size", &size, "sha256", &sha) ||
	    size < 0 || !ow_is_sha256_hex(sha))
		return ow_err(OW_EPARSE, "manifest: files[%zu] is not {path, size, sha256}", i);
	return ex_files_add(files, path, (uint64_t)size, sha);
}

#define MANIFEST_MAX_SETS 10000
#define MANIFEST_MAX_DEVICES 64

void ex_check_sets_free(struct ow_check_set *sets, size_t n)
{
	for (size_t i = 0; sets && i < n; i++) {
		for (size_t k = 0; k < sets[i].n; k++)
			free(sets[i].devices[k].detail);
		free(sets[i].devices);
		free(sets[i].target);
	}
	free(sets);
}

/* "12.0", "12.8": digits, one dot, digits, short. */
static int is_version_text(const char *t, size_t max)
{
	size_t n = strlen(t), dot = strspn(t, "0123456789");
	return n && n < max && dot && t[dot] == '.' && t[dot + 1] &&
	       strspn(t + dot + 1, "0123456789") == n - dot - 1;
}

static int known_verdict(const char *v)
{
	static const char *const names[] = {"native", "jit", "partial", "none", "no-code", "unknown"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (!strcmp(v, names[i]))
			return 1;
	return 0;
}

/* The library and counts when the manifest gives them, else its detail. */
static char *device_detail(json_t *e, const char *cc)
{
	const char *lib = NULL, *detail = json_string_value(json_object_get(e, "detail"));
	json_int_t mods = 0, none = 0;
	char *out = NULL;
	if (!json_unpack(json_object_get(e, "cause"), "{s:s, s:I, s:I}", "library", &lib, "modules",
	                 &mods, "no_image", &none)) {
		const char *dot = strchr(cc, '.');
		if (asprintf(&out, "%s: %lld of %lld modules have no sm_%.*s%s image", lib,
		             (long long)none, (long long)mods, dot ? (int)(dot - cc) : 0, cc,
		             dot ? dot + 1 : cc) < 0)
			out = NULL;
		return out;
	}
	return detail ? strdup(detail) : NULL;
}

static int parse_device(json_t *e, struct ow_check_device *d)
{
	const char *cc = NULL, *verdict = NULL;
	json_t *runs = NULL, *drv = NULL;
	int predicted = 0;
	if (json_unpack(e, "{s:s, s:s, s:o, s:b, s?:o}", "cc", &cc, "verdict", &verdict, "runs",
	                &runs, "predicted", &predicted, "driver", &drv) ||
	    !is_version_text(cc, sizeof d->cc) || !known_verdict(verdict) ||
	    !(json_is_boolean(runs) || json_is_null(runs)) ||
	    !(!drv || json_is_null(drv) ||
	      (json_is_string(drv) && is_version_text(json_string_value(drv), sizeof d->driver))))
		return OW_EPARSE;
	snprintf(d->cc, sizeof d->cc, "%s", cc);
	snprintf(d->driver, sizeof d->driver, "%s", json_is_string(drv) ? json_string_value(drv) : "");
	snprintf(d->verdict, sizeof d->verdict, "%s", verdict);
	d->runs = json_is_null(runs) ? -1 : json_is_true(runs);
	d->predicted = predicted;
	d->detail = device_detail(e, cc);
	return 0;
}

static int parse_set(json_t *e, size_t i, struct ow_check_set *set)
{
	const char *target = json_string_value(json_object_get(e, "target"));
	json_t *devs = json_object_get(e, "devices"), *d;
	size_t k;
	if (!target || (devs && (!json_is_array(devs) || json_array_size(devs) > MANIFEST_MAX_DEVICES)))
		return ow_err(OW_EPARSE, "manifest: sets[%zu] has no target or a bad 'devices'", i);
	/* analyzer: kept in m->sets[i], freed with the manifest (nsets counts it) */
	if (!(set->target = strdup(target)) ||
	    /* analyzer: kept in m->sets[i], freed with the manifest (nsets counts it) */
	    !(set->devices = calloc(json_array_size(devs) + 1, sizeof *set->devices)))
		return ow_err(OW_ENOMEM, "manifest: out of memory");
	json_array_foreach(devs, k, d)
	{
		if (parse_device(d, &set->devices[k]))
			return ow_err(OW_EPARSE, "manifest: sets[%zu].devices[%zu] is not {cc, verdict, "
			              "runs, predicted, ...}", i, k);
		set->n++;
	}
	return 0;
}

/* "sets": absent in a manifest that predates it. */
static int parse_sets(json_t *doc, struct ex_manifest *m)
{
	json_t *sets = json_object_get(doc, "sets"), *e;
	size_t i;
	if (!sets)
		return 0;
	if (!json_is_array(sets) || json_array_size(sets) > MANIFEST_MAX_SETS)
		return ow_err(OW_EPARSE, "manifest: 'sets' is not an array");
	if (!(m->sets = calloc(json_array_size(sets) + 1, sizeof *m->sets)))
		return ow_err(OW_ENOMEM, "manifest: out of memory");
	json_array_foreach(sets, i, e)
	{
		int rc = parse_set(e, i, &m->sets[i]);
		m->nsets = i + 1; /* freed with the rest, even half-filled */
		if (rc)
			return rc;
	}
	return 0;
}

static int parse_doc(json_t *doc, struct ex_manifest *m)
{
	const char *fmt = json_string_value(json_object_get(doc, "format"));
	if (!fmt || strcmp(fmt, OW_EXPORT_FORMAT))
		return ow_err(OW_EPARSE, "manifest: format is not '" OW_EXPORT_FORMAT "'");
	snprintf(m->format, sizeof m->format, "%s", fmt);
	int rc;
	if ((rc = get_int(doc, "sequence", 1, &m->sequence)) ||
	    (rc = get_int(doc, "created_unix", 0, &m->created)) ||
	    (rc = get_int(doc, "expires_unix", 0, &m->expires)) || (rc = parse_name(doc, m)))
		return rc;
	json_t *kid = json_object_get(doc, "key_id");
	const char *k = json_string_value(kid);
	if (!json_is_null(kid) && (!k || strlen(k) != OW_KEYID_HEX - 1))
		return ow_err(OW_EPARSE, "manifest: key_id is not 16 hex digits");
	snprintf(m->key_id, sizeof m->key_id, "%s", k ? k : "");
	json_t *files = json_object_get(doc, "files"), *e;
	size_t i;
	if (!json_is_array(files) || json_array_size(files) > MANIFEST_MAX_FILES)
		return ow_err(OW_EPARSE, "manifest: 'files' is not an array");
	json_array_foreach(files, i, e)
	{
		if ((rc = parse_file_entry(e, i, &m->files)))
			return rc;
	}
	return parse_sets(doc, m);
}

int ex_json_parse(const char *text, size_t len, struct ex_manifest *m)
{
	memset(m, 0, sizeof *m);
	json_error_t je;
	json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!doc)
		return ow_err(OW_EPARSE, "manifest: not JSON (line %d: %s)", je.line, je.text);
	int rc = json_is_object(doc) ? parse_doc(doc, m)
	                             : ow_err(OW_EPARSE, "manifest: not a JSON object");
	json_decref(doc);
	if (rc)
		ex_manifest_dispose(m);
	return rc;
}

void ex_manifest_dispose(struct ex_manifest *m)
{
	ex_files_dispose(&m->files);
	ex_check_sets_free(m->sets, m->nsets);
	m->sets = NULL;
	m->nsets = 0;
}

/* a state file is a few hundred bytes per key and name */
#define STATE_MAX (16u << 20)

static int state_read(const char *path, char **text, size_t *len)
{
	struct stat st;
	int fd, rc = ow_open_regular(path, &fd, &st);
	if (rc == OW_EPOLICY) {
		char why[512];
		snprintf(why, sizeof why, "%s", ow_err_detail());
		return ow_err(rc, "state file %s — --state names a regular file, or one not made yet",
		              why);
	}
	if (rc)
		return rc;
	rc = ow_read_fd_small(fd, path, STATE_MAX, text, len);
	close(fd);
	return rc;
}

/* Why one ENTRY cannot be trusted, or NULL: its sequence must be a whole
 * number 0..2^53 (a string, a real, a negative or a null would otherwise be
 * read as 0, and the floor it keeps lost). */
static const char *entry_problem(json_t *entry)
{
	json_t *v = json_is_object(entry) ? json_object_get(entry, "sequence") : NULL;
	if (!json_is_object(entry))
		return "is not an object";
	if (!v)
		return "has no \"sequence\"";
	if (!json_is_integer(v))
		return json_is_real(v) ? "has a \"sequence\" that is not a whole number"
		       : json_is_string(v) ? "has a \"sequence\" that is a string, not a number"
		                           : "has a \"sequence\" that is not a number";
	if (json_integer_value(v) < 0 || json_integer_value(v) > OW_EXPORT_SEQ_MAX)
		return "has a \"sequence\" out of range (0 to 2^53)";
	return NULL;
}

/* 1 when an entry of the state cannot be trusted, the first one worded in
 * *bad (malloc'd; NULL when out of memory), 0 when every entry is sound. */
static int state_bad_entry(json_t *doc, char **bad)
{
	const char *k, *n, *why;
	json_t *e, *per;
	json_object_foreach(json_object_get(doc, "keys"), k, e) {
		if ((why = entry_problem(e))) {
			*bad = ow_aprintf("entry \"keys\" → \"%s\" %s", k, why);
			return 1;
		}
	}
	json_object_foreach(json_object_get(doc, "names"), k, per) {
		if (!json_is_object(per)) {
			*bad = ow_aprintf("entry \"names\" → \"%s\" is not an object", k);
			return 1;
		}
		json_object_foreach(per, n, e) {
			if ((why = entry_problem(e))) {
				*bad = ow_aprintf("entry \"names\" → \"%s\" → \"%s\" %s", k, n, why);
				return 1;
			}
		}
	}
	return 0;
}

static int state_unreadable(const char *path, const char *why)
{
	return ow_err(OW_EPARSE, "%s: the accepted-sequence state is unreadable (%s) — refusing "
	                         "rather than forgetting what was accepted; repair or remove it "
	                         "deliberately", path, why ? why : "out of memory");
}

/* The state file: {"keys": {KEY: ENTRY}, "names": {KEY: {NAME: ENTRY}}},
 * ENTRY = {"sequence", "accepted_at"}.  "keys" is what offwheel kept before
 * exports had names (and still keeps for exports without one); an older
 * offwheel reading the file keeps "names" as it is. */
static int state_load(const char *path, json_t **out)
{
	json_error_t je = {.text = "not read"};
	char *text = NULL;
	size_t len = 0;
	*out = NULL;
	int rc = state_read(path, &text, &len);
	if (rc == OW_ENOENT)
		return 0;
	if (rc == OW_EPOLICY)
		return rc;
	if (!rc)
		*out = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	else
		snprintf(je.text, sizeof je.text, "%s", ow_err_detail());
	free(text);
	json_t *names = *out ? json_object_get(*out, "names") : NULL;
	char *bad = NULL;
	int entry = 0;
	if (*out && json_is_object(json_object_get(*out, "keys")) && (!names || json_is_object(names)) &&
	    !(entry = state_bad_entry(*out, &bad)))
		return 0;
	if (*out && !entry)
		snprintf(je.text, sizeof je.text, "no \"keys\" object, or \"names\" is not one");
	json_decref(*out);
	*out = NULL;
	rc = state_unreadable(path, entry ? bad : je.text);
	free(bad);
	return rc;
}

static int64_t entry_sequence(json_t *entry)
{
	json_t *v = json_object_get(entry, "sequence");
	return json_is_integer(v) ? json_integer_value(v) : 0;
}

int ex_json_state_get(const char *path, const char *key_id, const char *name, int64_t *named,
                      int64_t *per_key)
{
	json_t *doc;
	int rc = state_load(path, &doc);
	*named = *per_key = 0;
	if (rc || !doc)
		return rc;
	*per_key = entry_sequence(json_object_get(json_object_get(doc, "keys"), key_id));
	if (*name)
		*named = entry_sequence(
			json_object_get(json_object_get(json_object_get(doc, "names"), key_id), name));
	json_decref(doc);
	return 0;
}

static int state_write(const char *path, json_t *doc)
{
	char dir[4096];
	struct ow_tmp t;
	int rc = ow_dirname(dir, sizeof dir, path);
	if (rc || (rc = ow_mkdir_p(dir, 0700)) || (rc = ow_tmp_create(dir, ".accepted-", &t)))
		return rc;
	char *text = json_dumps(doc, JSON_INDENT(1) | JSON_SORT_KEYS);
	rc = text ? ow_write_all(t.fd, text, strlen(text)) : ow_err(OW_ENOMEM, "state: no memory");
	free(text);
	if (rc) {
		ow_tmp_discard(&t);
		return rc;
	}
	return ow_tmp_publish(&t, path);
}

/* obj[key], made an empty object when it is not one */
static json_t *object_at(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);
	if (!json_is_object(v))
		json_object_set_new(obj, key, v = json_object());
	return v;
}

int ex_json_state_put(const char *path, const char *key_id, const char *name, int64_t seq,
                      int64_t now)
{
	json_t *doc;
	int rc = state_load(path, &doc);
	if (rc)
		return rc;
	if (!doc)
		doc = json_pack("{s:{}}", "keys");
	json_t *where = *name ? object_at(object_at(doc, "names"), key_id) : object_at(doc, "keys");
	json_object_set_new(where, *name ? name : key_id,
	                    json_pack("{s:I, s:I}", "sequence", (json_int_t)seq, "accepted_at",
	                              (json_int_t)now));
	rc = state_write(path, doc);
	json_decref(doc);
	return rc;
}
