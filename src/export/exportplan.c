/* exportplan.c - what an export carries: sets (with their closure) or
 * fetched files, read from the index. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "array.h"
#include "db.h"
#include "offwheel/error.h"
#include "offwheel/fetch.h"
#include "exportint.h"
#include "wheelmeta.h"
#include "store.h"

static void item_free(struct ow_export_item *it)
{
	free(it->filename);
	free(it->project);
	free(it->version);
	free(it->requires_python);
	free(it->upload_time);
}

void ow_export_plan_dispose(struct ow_export_plan *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		item_free(&p->items[i]);
	for (size_t i = 0; i < p->nsets; i++) {
		free(p->sets[i].target);
		free(p->sets[i].torch_version);
		free(p->sets[i].req_name);
		free(p->sets[i].members);
		free(p->sets[i].build);
		ex_devices_free(p->sets[i].devices, p->sets[i].ndevices);
	}
	for (size_t i = 0; i < p->nskipped; i++)
		free(p->skipped[i].target), free(p->skipped[i].reason);
	free(p->items);
	free(p->sets);
	free(p->skipped);
	memset(p, 0, sizeof *p);
}

static char *dup_col(ow_stmt *st, int col)
{
	const char *t = ow_col_text(st, col);
	return t ? strdup(t) : NULL;
}

/* The page gave no Requires-Python: take it from the stored .metadata. */
static int requires_python_from_meta(ow_store *s, struct ow_export_item *it)
{
	char *buf = NULL;
	size_t len = 0;
	struct ow_metadata *md = NULL;
	if (it->requires_python || !it->meta_object[0] ||
	    ex_load_object(s, it->meta_object, it->meta_size, 16u << 20, &buf, &len))
		return 0; /* a damaged object is named when it is copied */
	if (ow_metadata_parse(buf, len, &md) == 0 && md->requires_python &&
	    !(it->requires_python = strdup(md->requires_python))) {
		ow_metadata_free(md);
		free(buf);
		return ow_err(OW_ENOMEM, "export: out of memory");
	}
	ow_metadata_free(md);
	free(buf);
	return 0;
}

/* Row columns: filename, project, version, requires_python, object, meta_object,
 * upload_time. */
static int item_from_row(ow_store *s, ow_stmt *st, struct ow_export_item *it)
{
	const char *fn = ow_col_text(st, 0), *obj = ow_col_text(st, 4), *meta = ow_col_text(st, 5);
	memset(it, 0, sizeof *it);
	if (!obj)
		return ow_err(OW_EINCOMPLETE, "%s: not fetched yet — run 'offwheel fetch %s' first", fn,
		              fn);
	snprintf(it->object, sizeof it->object, "%s", obj);
	snprintf(it->meta_object, sizeof it->meta_object, "%s", meta ? meta : "");
	it->filename = dup_col(st, 0);
	it->project = dup_col(st, 1);
	it->version = dup_col(st, 2);
	it->requires_python = dup_col(st, 3);
	it->upload_time = dup_col(st, 6);
	if (!it->filename || !it->project || !it->version)
		return ow_err(OW_ENOMEM, "export: out of memory");
	int rc = ow_store_has(s, it->object, &it->size, NULL, 0);
	if (rc == 1 && it->meta_object[0])
		rc = ow_store_has(s, it->meta_object, &it->meta_size, NULL, 0);
	if (rc == 1)
		return requires_python_from_meta(s, it);
	return rc < 0 ? rc : ow_err(OW_ENOENT, "%s: its object is not in the store — run 'offwheel "
	                                       "fetch' again", fn);
}

/* Where the workspace got the file of this object from (malloc'd), "?" when
 * it cannot say. */
static char *url_of(ow_store *s, const char *object)
{
	ow_stmt *st = ow_db_stmt(ow_store_db(s), OW_SQL_EXP_URL_OF_OBJECT);
	char *u = NULL;
	if (st) {
		ow_stmt_text(st, 1, object);
		if (ow_stmt_step(st) == 1)
			u = strdup(ow_col_text(st, 0));
		ow_stmt_run(st);
	}
	return u ? u : strdup("?");
}

/* Two sets want different files of one name: name both, with where each
 * came from (the sample index's jinja2 beside PyPI's). */
static int name_clash(ow_store *s, const struct ow_export_item *a, const struct ow_export_item *b)
{
	char *ua = url_of(s, a->object), *ub = url_of(s, b->object);
	int rc = ua && ub ? ow_err(OW_ECONFLICT, "%s: two different files of that name: %s (sha256 "
	                                         "%.12s…) and %s (sha256 %.12s…) — a stick holds "
	                                         "one file per name: export the sets of one index "
	                                         "(--all-sets --index URL, or name the sets)",
	                           a->filename, ua, a->object, ub, b->object)
	                  : ow_err(OW_ENOMEM, "export: out of memory");
	free(ua);
	free(ub);
	return rc;
}

/* Index of the item with this filename, adding it when new. */
static int plan_item(ow_store *s, struct ow_export_plan *p, ow_stmt *st, size_t *idx)
{
	struct ow_export_item it;
	int rc = item_from_row(s, st, &it);
	for (size_t i = 0; !rc && i < p->n; i++) {
		if (strcmp(p->items[i].filename, it.filename))
			continue;
		if (strcmp(p->items[i].object, it.object))
			rc = name_clash(s, &p->items[i], &it);
		*idx = i;
		item_free(&it);
		return rc;
	}
	struct ow_export_item *g = rc ? NULL : ow_array_more(p->items, p->n, sizeof *g);
	if (!g) {
		item_free(&it);
		return rc ? rc : ow_err(OW_ENOMEM, "export: out of memory");
	}
	p->items = g;
	p->items[p->n] = it;
	*idx = p->n++;
	return 0;
}

static int set_add_member(struct ow_export_set *set, size_t idx, bool build)
{
	size_t *g = ow_array_more(set->members, set->n, sizeof *g);
	if (g)
		set->members = g;
	bool *b = g ? ow_array_more(set->build, set->n, sizeof *b) : NULL;
	if (!b)
		return ow_err(OW_ENOMEM, "export: out of memory");
	set->build = b;
	set->build[set->n] = build;
	set->members[set->n++] = idx;
	return 0;
}

/* requirements/<name>.txt: the target with spaces as '-', unique. */
static char *req_name(const struct ow_export_plan *p, const char *target, int64_t id)
{
	char name[256];
	snprintf(name, sizeof name, "%s", target);
	for (char *c = name; *c; c++)
		if (*c == ' ' || *c == '/' || *c == '\\' || *c == ':' || (unsigned char)*c < 0x20)
			*c = '-';
	for (size_t i = 0; i < p->nsets; i++)
		if (!strcasecmp(p->sets[i].req_name, name)) {
			char alt[300];
			snprintf(alt, sizeof alt, "%s-set%lld", name, (long long)id);
			return strdup(alt);
		}
	return strdup(name);
}

static struct ow_export_set *new_set(struct ow_export_plan *p, int64_t id, const char *target)
{
	struct ow_export_set *g = ow_array_more(p->sets, p->nsets, sizeof *g);
	if (!g)
		return NULL;
	p->sets = g;
	struct ow_export_set *set = &p->sets[p->nsets];
	memset(set, 0, sizeof *set);
	set->id = id;
	set->target = strdup(target);
	/* analyzer: set->target is in p->sets, freed below or with the plan */
	set->req_name = req_name(p, target, id);
	/* analyzer: set->req_name is in p->sets, freed below or with the plan */
	if (!set->target || !set->req_name) {
		free(set->target);
		free(set->req_name);
		return NULL;
	}
	p->nsets++;
	return set;
}

static int set_members(ow_store *s, struct ow_export_plan *p, size_t si)
{
	ow_stmt *st = ow_db_stmt(ow_store_db(s), OW_SQL_EXP_SET_ITEMS);
	if (!st)
		return OW_EDB;
	ow_stmt_int(st, 1, p->sets[si].id);
	int rc, row;
	size_t idx;
	while ((row = ow_stmt_step(st)) == 1)
		if ((rc = plan_item(s, p, st, &idx)) ||
		    (rc = set_add_member(&p->sets[si], idx, !strcmp(ow_col_text(st, 7), "build"))))
			return ow_err_prefix(rc, "set %lld (%s): ", (long long)p->sets[si].id,
			                     p->sets[si].target);
	return row;
}

static int plan_skip(struct ow_export_plan *p, int64_t id, char *target, const char *why,
                     int device);

/* Set `set_id` into the plan, unless the device rule leaves it out
 * (skipped) or refuses it (OW_ENOIMAGE, *fail_cc the device). */
/* A set (the row of EXP_SET_GET in st) that fetch found resolved from
 * metadata the wheel's own contradicts: 1, and why in buf. */
static int meta_wrong(ow_stmt *st, char *buf, size_t n)
{
	const char *missing = ow_col_text(st, 3);
	size_t l = strlen(OW_SET_META_WRONG);
	if (!missing || strncmp(missing, OW_SET_META_WRONG, l))
		return 0;
	snprintf(buf, n, "%s", missing);
	return 1;
}

/* A set whose files are not all in the store: one message for the set, the
 * command that fetches it, not the first file that is missing. */
static int check_fetched(ow_store *s, const struct ow_export_set *set)
{
	ow_stmt *st = ow_db_stmt(ow_store_db(s), OW_SQL_EXP_SET_FETCHED);
	if (!st)
		return OW_EDB;
	ow_stmt_int(st, 1, set->id);
	int row = ow_stmt_step(st);
	if (row != 1)
		return row < 0 ? row : OW_EDB;
	int64_t all = ow_col_int(st, 0), have = ow_col_int(st, 1);
	ow_stmt_run(st);
	if (have >= all)
		return 0;
	return ow_err(OW_EINCOMPLETE, "set %lld (%s) is not fetched (%lld of %lld files missing): "
	                              "run 'offwheel fetch set:%lld', then export again",
	              (long long)set->id, set->target, (long long)(all - have), (long long)all,
	              (long long)set->id);
}

static int add_set(ow_store *s, struct ow_export_plan *p, int64_t set_id, int *fail_cc)
{
	*fail_cc = 0;
	for (size_t i = 0; i < p->nsets; i++)
		if (p->sets[i].id == set_id)
			return 0;
	for (size_t i = 0; i < p->nskipped; i++)
		if (p->skipped[i].id == set_id)
			return 0;
	ow_stmt *st = ow_db_stmt(ow_store_db(s), OW_SQL_EXP_SET_GET);
	if (!st)
		return OW_EDB;
	ow_stmt_int(st, 1, set_id);
	int row = ow_stmt_step(st);
	if (row <= 0)
		return row ? row : ow_err(OW_ENOENT, "set %lld: no such set — 'offwheel ls sets' lists "
		                                     "them", (long long)set_id);
	char *target = dup_col(st, 0), *torch = dup_col(st, 1), why[512];
	int complete = (int)ow_col_int(st, 2);
	if (!complete && meta_wrong(st, why, sizeof why)) {
		ow_stmt_run(st);
		int rc = ow_err(OW_EINCOMPLETE, "set %lld (%s): %s — run 'offwheel sync' (or resolve) "
		                "for this target again and export the new set", (long long)set_id,
		                target ? target : "?", why);
		free(target);
		free(torch);
		return rc;
	}
	ow_stmt_run(st); /* the device rule reads and writes the index */
	struct ex_rule_result rr = {.why = why, .why_n = sizeof why};
	int rc = target ? ex_device_rule(s, p->rule, set_id, target, &rr)
	                : ow_err(OW_ENOMEM, "export: out of memory");
	struct ow_export_device *devs = rr.d;
	size_t nd = rr.n;
	*fail_cc = rr.fail_cc;
	if (!rc && *why) {
		ex_devices_free(devs, nd);
		free(torch);
		return plan_skip(p, set_id, target, why, 1);
	}
	struct ow_export_set *set = rc ? NULL : new_set(p, set_id, target);
	free(target);
	if (!set) {
		ex_devices_free(devs, nd);
		free(torch);
		return rc ? rc : ow_err(OW_ENOMEM, "export: out of memory");
	}
	set->torch_version = torch;
	set->complete = complete;
	set->devices = devs;
	set->ndevices = nd;
	if ((rc = check_fetched(s, set)) < 0)
		return rc;
	return set_members(s, p, p->nsets - 1);
}

int ow_export_add_set(ow_store *s, struct ow_export_plan *p, int64_t set_id)
{
	int cc, rc = add_set(s, p, set_id, &cc);
	if (rc != OW_ENOIMAGE)
		return rc;
	char what[1024];
	snprintf(what, sizeof what, "%s", ow_err_detail());
	return ow_err(OW_ENOIMAGE, "%s — leave the set out, export with --device %d.%d (only the "
	              "sets that run there), or pass --force to ship it anyway", what, cc / 10,
	              cc % 10);
}

int ow_export_target_of_req_name(const char *arg, char *out, size_t n)
{
	const char *dash = strchr(arg, '-');
	if (strchr(arg, ' ') || !dash || dash == arg || (size_t)snprintf(out, n, "%s", arg) >= n)
		return 1;
	out[dash - arg] = ' ';
	return 0;
}

static int newest_set_of(ow_store *s, const char *target, int64_t *id)
{
	ow_stmt *st = ow_db_stmt(ow_store_db(s), OW_SQL_EXP_SET_NEWEST);
	if (!st)
		return OW_EDB;
	ow_stmt_text(st, 1, target);
	int row = ow_stmt_step(st);
	if (row == 1)
		*id = ow_col_int(st, 0);
	return row;
}

/* The target as 'ls sets' names it, or as its requirements file does. */
int ow_export_add_target(ow_store *s, struct ow_export_plan *p, const char *target)
{
	char spaced[256];
	int64_t id = 0;
	int row = newest_set_of(s, target, &id);
	if (!row && !ow_export_target_of_req_name(target, spaced, sizeof spaced))
		row = newest_set_of(s, spaced, &id);
	if (row <= 0)
		return row ? row : ow_err(OW_ENOENT, "target '%s': no set resolved — run 'offwheel "
		                                     "resolve' (or 'ls sets' for the names)", target);
	return ow_export_add_set(s, p, id);
}

/* Why --all-sets leaves this set out ("" when it goes in); *target is set. */
static int set_skip_reason(ow_store *s, int64_t id, char **target, char *why, size_t n)
{
	ow_stmt *st = ow_db_stmt(ow_store_db(s), OW_SQL_EXP_SET_GET);
	if (!st)
		return OW_EDB;
	ow_stmt_int(st, 1, id);
	int row = ow_stmt_step(st);
	if (row <= 0)
		return row ? row : ow_err(OW_ENOENT, "set %lld: vanished while exporting", (long long)id);
	const char *missing = ow_col_text(st, 3);
	*why = 0;
	if (!ow_col_int(st, 2) && !meta_wrong(st, why, n))
		snprintf(why, n, "incomplete%s%s%s", missing ? " (no " : "", missing ? missing : "",
		         missing ? ")" : "");
	if (!(*target = dup_col(st, 0)))
		return ow_err(OW_ENOMEM, "export: out of memory");
	if (*why)
		return 0;
	if (!(st = ow_db_stmt(ow_store_db(s), OW_SQL_EXP_SET_FETCHED)))
		return OW_EDB;
	ow_stmt_int(st, 1, id);
	if ((row = ow_stmt_step(st)) != 1)
		return row < 0 ? row : OW_EDB;
	int64_t all = ow_col_int(st, 0), have = ow_col_int(st, 1);
	char ccs[64];
	int refused = have < all ? ow_export_refused_on(s, id, ccs, sizeof ccs) : 0;
	if (refused < 0)
		return refused;
	if (refused) /* sync --device fetched only what runs: that is why */
		snprintf(why, n, "would not run on %s (%lld of %lld files fetched)", ccs,
		         (long long)have, (long long)all);
	else if (have < all)
		snprintf(why, n, "not fetched (%lld of %lld files)", (long long)have, (long long)all);
	return 0;
}

static int plan_skip(struct ow_export_plan *p, int64_t id, char *target, const char *why,
                     int device)
{
	struct ow_export_skip *g = ow_array_more(p->skipped, p->nskipped, sizeof *g);
	if (g) /* the grown block is the plan's, whether or not the copy below works */
		p->skipped = g;
	char *reason = g ? strdup(why) : NULL;
	if (!reason) {
		free(target);
		return ow_err(OW_ENOMEM, "export: out of memory");
	}
	g += p->nskipped++;
	g->id = id;
	g->target = target;
	g->device = device;
	g->reason = reason;
	return 0;
}

/* Two index roots the same but for trailing slashes. */
static bool same_root(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	while (na && a[na - 1] == '/')
		na--;
	while (nb && b[nb - 1] == '/')
		nb--;
	return na == nb && !memcmp(a, b, na);
}

/* The newest set of every target (of index `only`, NULL any), in id order. */
static int newest_sets(ow_store *s, const char *only, int64_t **ids, size_t *n)
{
	ow_stmt *st = ow_db_stmt(ow_store_db(s), OW_SQL_EXP_SETS_NEWEST_ALL);
	int row;
	*ids = NULL;
	*n = 0;
	if (!st)
		return OW_EDB;
	while ((row = ow_stmt_step(st)) == 1) {
		if (only && !same_root(ow_col_text(st, 1), only))
			continue;
		int64_t *g = ow_array_more(*ids, *n, sizeof *g);
		if (!g) {
			ow_stmt_run(st);
			return ow_err(OW_ENOMEM, "export: out of memory");
		}
		*ids = g;
		g[(*n)++] = ow_col_int(st, 0);
	}
	if (row == 0 && *n == 0 && only)
		return ow_err(OW_ENOENT, "--index %s: no set was resolved from it — 'offwheel ls sets "
		                         "-v' names each set's index", only);
	if (row == 0 && *n == 0)
		return ow_err(OW_ENOENT, "no sets resolved yet — run 'offwheel resolve' first");
	return row;
}

/* The index set `id` was resolved from, malloc'd. */
static char *set_index(ow_store *s, int64_t id)
{
	ow_stmt *st = ow_db_stmt(ow_store_db(s), OW_SQL_EXP_SET_INDEX);
	if (!st)
		return NULL;
	ow_stmt_int(st, 1, id);
	char *u = ow_stmt_step(st) == 1 ? strdup(ow_col_text(st, 0)) : NULL;
	ow_stmt_run(st);
	return u;
}

/* --all-sets over sets of more than one index, none named: refused, naming
 * each index and its sets (a stick holds one source's sets). */
static const char *all_sets_as(const struct ow_export_plan *p)
{
	return p->all_sets_as ? p->all_sets_as : "--all-sets";
}

static int one_index(ow_store *s, const struct ow_export_plan *p, size_t before)
{
	char *first = NULL;
	int rc = 0;
	struct ow_str b = {0};
	for (size_t i = before; i < p->nsets && rc == 0; i++) {
		char *u = set_index(s, p->sets[i].id);
		if (!u)
			rc = ow_err(OW_EDB, "export: set %lld: its index could not be read",
			            (long long)p->sets[i].id);
		else if (!first)
			first = u, u = NULL;
		else if (strcmp(u, first) && !strstr(b.p ? b.p : "", u))
			ow_str_printf(&b, ", %s (set %lld)", u, (long long)p->sets[i].id);
		free(u);
	}
	if (rc == 0 && b.n)
		rc = ow_err(OW_EINVAL, "%s: the sets come from more than one index: %s%s — "
		            "name one with --index URL ('offwheel ls sets -v' names each set's), or "
		            "name the sets (SET-ID, --target)", all_sets_as(p), first, b.p);
	free(first);
	ow_str_dispose(&b);
	return rc;
}

/* One of --all-sets: in, skipped, or refused by the device rule (its
 * reason appended to `refused`). */
static int add_one_of_all(ow_store *s, struct ow_export_plan *p, int64_t id,
                          struct ow_str *refused, int *cc)
{
	char *target = NULL, why[192];
	int rc = set_skip_reason(s, id, &target, why, sizeof why);
	if (rc || *why)
		return rc ? (free(target), rc) : plan_skip(p, id, target, why, 0);
	free(target);
	int this_cc;
	rc = add_set(s, p, id, &this_cc);
	if (rc != OW_ENOIMAGE)
		return rc;
	ow_str_printf(refused, "%s%s", refused->n ? "; " : "", ow_err_detail());
	*cc = *cc ? *cc : this_cc;
	return 0;
}

static size_t device_skips(const struct ow_export_plan *p)
{
	size_t n = 0;
	for (size_t i = 0; i < p->nskipped; i++)
		n += p->skipped[i].device != 0;
	return n;
}

int ow_export_add_all_sets(ow_store *s, struct ow_export_plan *p)
{
	int64_t *ids = NULL;
	size_t n = 0, before = p->nsets;
	struct ow_str refused = {0};
	int cc = 0, rc = newest_sets(s, p->index_url, &ids, &n);
	for (size_t i = 0; !rc && i < n; i++)
		rc = add_one_of_all(s, p, ids[i], &refused, &cc);
	free(ids);
	if (!rc && !p->index_url)
		rc = one_index(s, p, before);
	if (!rc && refused.err)
		rc = ow_err(refused.err, "export: out of memory");
	else if (!rc && refused.n)
		rc = ow_err(OW_ENOIMAGE, "--all-sets: %s — drop --all-sets and name the sets to ship "
		            "(SET-ID, --target), pass --device %d.%d to ship only the sets that run "
		            "there, or --force to ship them anyway", refused.p, cc / 10, cc % 10);
	else if (!rc && p->nsets == before && device_skips(p))
		rc = ow_export_plan_devices_done(p);
	else if (!rc && p->nsets == before && p->nskipped)
		rc = ow_err(OW_EINCOMPLETE, "%s: none of the %zu newest sets is complete and "
		            "fetched (set %lld, %s: %s) — run 'offwheel sync' (or 'fetch SET-ID'); "
		            "'offwheel ls sets' lists them", all_sets_as(p), p->nskipped,
		            (long long)p->skipped[0].id,
		            p->skipped[0].target ? p->skipped[0].target : "?", p->skipped[0].reason);
	ow_str_dispose(&refused);
	return rc;
}

int ow_export_add_file(ow_store *s, struct ow_export_plan *p, const char *filename)
{
	ow_stmt *st = ow_db_stmt(ow_store_db(s), OW_SQL_EXP_FILE_BY_NAME);
	if (!st)
		return OW_EDB;
	ow_stmt_text(st, 1, filename);
	int row = ow_stmt_step(st);
	if (row <= 0)
		return row ? row : ow_err(OW_ENOENT, "%s: no such file in the index — 'offwheel ls "
		                                     "files' lists them", filename);
	size_t idx, si;
	for (si = 0; si < p->nsets && p->sets[si].id != 0; si++)
		;
	if (si == p->nsets && !new_set(p, 0, "files"))
		return ow_err(OW_ENOMEM, "export: out of memory");
	int rc = plan_item(s, p, st, &idx);
	for (size_t i = 0; !rc && i < p->sets[si].n; i++)
		if (p->sets[si].members[i] == idx)
			return 0;
	return rc ? rc : set_add_member(&p->sets[si], idx, false);
}
