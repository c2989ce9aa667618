/* resolvedb.c - resolved sets in the index: record, list, members, gc. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "array.h"
#include "offwheel/error.h"
#include "resolveint.h"
#include "store.h"

/* The role names the stored sets keep (and the CLI shows): the one table. */
const char *ow_member_role_name(enum ow_member_role r)
{
	static const char *const n[] = {"torch", "torchvision", "torchaudio", "project", "dep",
	                                  "build"};
	return (unsigned)r < sizeof n / sizeof n[0] ? n[r] : "?";
}

static int by_id(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* "12,15,99": the member file ids, sorted (a set's identity). */
static char *members_key(const struct ow_resolve_target *t)
{
	int64_t *ids = malloc((t->nmembers + 1) * sizeof *ids);
	char *key = malloc(t->nmembers * 21 + 1);
	if (!ids || !key) {
		free(ids);
		free(key);
		return NULL;
	}
	for (size_t i = 0; i < t->nmembers; i++)
		ids[i] = t->members[i].file_id;
	qsort(ids, t->nmembers, sizeof *ids, by_id);
	size_t len = 0;
	key[0] = '\0';
	for (size_t i = 0; i < t->nmembers; i++)
		len += (size_t)snprintf(key + len, 22, "%s%lld", i ? "," : "", (long long)ids[i]);
	free(ids);
	return key;
}

static int find_same(ow_db *db, const char *index_url, const char *selector, bool deps,
                     const struct ow_resolve_target *t, const char *key, int64_t *id)
{
	ow_stmt *st = ow_db_stmt(db, OW_SQL_SET_FIND);
	if (!st)
		return OW_EDB;
	ow_stmt_text(st, 1, index_url);
	ow_stmt_text(st, 2, t->describe);
	ow_stmt_text(st, 3, selector);
	ow_stmt_text(st, 4, key);
	ow_stmt_int(st, 5, t->complete);
	ow_stmt_int(st, 6, deps);
	int rc = ow_stmt_step(st);
	*id = rc == 1 ? ow_col_int(st, 0) : 0;
	return rc < 0 ? rc : 0;
}

static int insert_set(ow_db *db, const char *index_url, const char *selector, bool deps,
                      const struct ow_resolve_target *t, const char *key, int64_t now)
{
	ow_stmt *st = ow_db_stmt(db, OW_SQL_SET_INSERT);
	if (!st)
		return OW_EDB;
	ow_stmt_text(st, 1, t->describe);
	ow_stmt_text(st, 2, index_url);
	ow_stmt_text(st, 3, t->variant);
	ow_stmt_text(st, 4, t->python);
	ow_stmt_text(st, 5, t->platform);
	ow_stmt_text(st, 6, selector);
	ow_stmt_text(st, 7, t->versions[0][0] ? t->versions[0] : NULL);
	ow_stmt_int(st, 8, t->complete);
	ow_stmt_int(st, 9, deps);
	ow_stmt_text(st, 10, t->missing[0] ? t->missing : NULL);
	ow_stmt_text(st, 11, key);
	ow_stmt_int(st, 12, now);
	return ow_stmt_run(st);
}

static int insert_members(ow_db *db, int64_t set_id, const struct ow_resolve_target *t)
{
	for (size_t i = 0; i < t->nmembers; i++) {
		ow_stmt *st = ow_db_stmt(db, OW_SQL_SET_MEMBER_INSERT);
		if (!st)
			return OW_EDB;
		ow_stmt_int(st, 1, set_id);
		ow_stmt_int(st, 2, t->members[i].file_id);
		ow_stmt_text(st, 3, ow_member_role_name(t->members[i].role));
		ow_stmt_text(st, 4, t->members[i].required_by);
		int rc = ow_stmt_run(st);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int store_tx(ow_db *db, const char *index_url, const char *selector, bool deps,
                    struct ow_resolve_target *t, const char *key)
{
	int64_t now = (int64_t)time(NULL), id;
	int rc = find_same(db, index_url, selector, deps, t, key, &id);
	if (rc < 0)
		return rc;
	if (id) {
		ow_stmt *st = ow_db_stmt(db, OW_SQL_SET_TOUCH);
		if (!st)
			return OW_EDB;
		ow_stmt_int(st, 1, id);
		ow_stmt_int(st, 2, now);
		t->set_id = id;
		return ow_stmt_run(st);
	}
	if ((rc = insert_set(db, index_url, selector, deps, t, key, now)) < 0)
		return rc;
	t->set_id = ow_db_last_rowid(db);
	return insert_members(db, t->set_id, t);
}

int rs_store_target(ow_store *s, const char *index_url, const char *selector, bool with_deps,
                    struct ow_resolve_target *t)
{
	ow_db *db = ow_store_db(s);
	char *key = members_key(t);
	if (!key)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	int rc = ow_db_begin(db);
	if (rc == 0) {
		rc = store_tx(db, index_url, selector, with_deps, t, key);
		if (rc == 0)
			rc = ow_db_commit(db);
		else
			ow_db_rollback(db);
	}
	free(key);
	return rc;
}

/* ---- listing ------------------------------------------------------------------ */

static void copy_col(ow_stmt *st, int i, char *buf, size_t n)
{
	snprintf(buf, n, "%s", ow_col_is_null(st, i) ? "" : ow_col_text(st, i));
}

int ow_sets_list(ow_store *s, const char *target, struct ow_set_row **rows, size_t *n)
{
	*rows = NULL;
	*n = 0;
	ow_stmt *st = ow_db_stmt(ow_store_db(s), OW_SQL_SETS_LIST);
	if (!st)
		return OW_EDB;
	ow_stmt_text(st, 1, target);
	int rc;
	while ((rc = ow_stmt_step(st)) == 1) {
		struct ow_set_row *g = ow_array_more(*rows, *n, sizeof *g);
		if (!g)
			return ow_err(OW_ENOMEM, "ls sets: out of memory");
		*rows = g;
		struct ow_set_row *r = &g[(*n)++];
		r->id = ow_col_int(st, 0);
		copy_col(st, 1, r->target, sizeof r->target);
		copy_col(st, 2, r->index_url, sizeof r->index_url);
		copy_col(st, 3, r->selector, sizeof r->selector);
		copy_col(st, 4, r->torch_version, sizeof r->torch_version);
		r->complete = ow_col_int(st, 5) != 0;
		r->with_deps = ow_col_int(st, 6) != 0;
		copy_col(st, 7, r->missing, sizeof r->missing);
		r->created_at = ow_col_int(st, 8);
		r->resolved_at = ow_col_int(st, 9);
		r->nmembers = (size_t)ow_col_int(st, 10);
	}
	return rc < 0 ? rc : 0;
}

static enum ow_member_role role_named(const char *s)
{
	for (int r = OW_ROLE_TORCH; r <= OW_ROLE_BUILD; r++)
		if (!strcmp(s, ow_member_role_name((enum ow_member_role)r)))
			return (enum ow_member_role)r;
	return OW_ROLE_DEP;
}

static int member_row(ow_stmt *st, struct ow_resolve_member *m)
{
	memset(m, 0, sizeof *m);
	m->file_id = ow_col_int(st, 0);
	m->role = role_named(ow_col_text(st, 1));
	m->required_by = ow_col_is_null(st, 2) ? NULL : strdup(ow_col_text(st, 2));
	/* analyzer: m->required_by is in (*m)[*n - 1], freed by ow_set_members_free */
	copy_col(st, 3, m->project, sizeof m->project);
	copy_col(st, 4, m->version, sizeof m->version);
	copy_col(st, 5, m->filename, sizeof m->filename);
	m->url = strdup(ow_col_text(st, 6));
	/* analyzer: m->url is (*m)[*n - 1], freed by ow_set_members_free */
	int pub = !ow_col_is_null(st, 7), have = !ow_col_is_null(st, 8);
	copy_col(st, pub ? 7 : 8, m->sha256, sizeof m->sha256);
	m->sha256_source = pub ? "published" : have ? "stored" : NULL;
	if (have)
		copy_col(st, 8, m->object, sizeof m->object);
	if (!m->url || (!ow_col_is_null(st, 2) && !m->required_by))
		return ow_err(OW_ENOMEM, "set members: out of memory");
	return 0;
}

int ow_set_members(ow_store *s, int64_t set_id, struct ow_resolve_member **m, size_t *n)
{
	*m = NULL;
	*n = 0;
	ow_stmt *st = ow_db_stmt(ow_store_db(s), OW_SQL_SET_MEMBERS);
	if (!st)
		return OW_EDB;
	ow_stmt_int(st, 1, set_id);
	int row = 0, rc = 0;
	while (!rc && (row = ow_stmt_step(st)) == 1) {
		struct ow_resolve_member *g = ow_array_more(*m, *n, sizeof *g);
		if (!g) {
			rc = ow_err(OW_ENOMEM, "set members: out of memory");
			break;
		}
		*m = g;
		rc = member_row(st, &g[(*n)++]); /* a half-filled row is freed with the rest */
	}
	if (rc)
		ow_stmt_run(st);
	else if (row < 0)
		rc = row;
	if (rc) {
		ow_set_members_free(*m, *n);
		*m = NULL;
		*n = 0;
	}
	return rc;
}

int ow_set_ref_members(ow_store *s, const char *ref, int64_t *set_id,
                       struct ow_resolve_member **m, size_t *n)
{
	char *end;
	*m = NULL;
	*n = 0;
	long long id = strncmp(ref, "set:", 4) ? 0 : strtoll(ref + 4, &end, 10);
	if (id <= 0 || !ref[4] || *end)
		return ow_err(OW_EINVAL, "%s: not a set; write set:ID with an id from 'offwheel ls sets'",
		              ref);
	int rc = ow_set_members(s, id, m, n);
	if (!rc && !*n)
		rc = ow_err(OW_ENOENT, "%s: no such set (see 'offwheel ls sets')", ref);
	if (rc) {
		ow_set_members_free(*m, *n);
		*m = NULL;
		*n = 0;
	}
	*set_id = id;
	return rc;
}

void ow_set_members_free(struct ow_resolve_member *m, size_t n)
{
	for (size_t i = 0; m && i < n; i++)
		free(m[i].url), free(m[i].required_by);
	free(m);
}

/* ---- gc ------------------------------------------------------------------------ */

static int unused_objects(ow_db *db, char (**hex)[OW_SHA256_HEX], size_t *n)
{
	ow_stmt *st = ow_db_stmt(db, OW_SQL_SETS_GC_UNUSED);
	if (!st)
		return OW_EDB;
	int rc;
	while ((rc = ow_stmt_step(st)) == 1) {
		char(*g)[OW_SHA256_HEX] = ow_array_more(*hex, *n, sizeof *g);
		if (!g)
			return ow_err(OW_ENOMEM, "gc: out of memory");
		*hex = g;
		snprintf(g[(*n)++], OW_SHA256_HEX, "%s", ow_col_text(st, 0));
	}
	return rc < 0 ? rc : 0;
}

/* Row first (no file row points to it any more), then the object. */
static int drop_object(ow_store *s, const char *hex, struct ow_sets_gc_result *res)
{
	uint64_t size = 0;
	ow_db *db = ow_store_db(s);
	ow_stmt *st = ow_db_stmt(db, OW_SQL_SETS_GC_UNLINK);
	if (!st)
		return OW_EDB;
	ow_stmt_text(st, 1, hex);
	int rc = ow_stmt_run(st);
	if (rc < 0 || ow_store_has(s, hex, &size, NULL, 0) != 1)
		return rc < 0 ? rc : 0;
	if ((rc = ow_store_remove(s, hex)) < 0)
		return rc;
	res->removed_objects++;
	res->freed += size;
	return 0;
}

int ow_sets_gc(ow_store *s, int keep, struct ow_sets_gc_result *res)
{
	memset(res, 0, sizeof *res);
	if (keep < 0)
		return ow_err(OW_EINVAL, "gc --keep: %d is not a count of sets", keep);
	ow_db *db = ow_store_db(s);
	ow_stmt *st = ow_db_stmt(db, OW_SQL_SETS_GC_OLD);
	if (!st)
		return OW_EDB;
	ow_stmt_int(st, 1, keep);
	int rc = ow_stmt_run(st);
	if (rc < 0)
		return rc;
	res->removed_sets = (size_t)ow_db_changes(db);
	char(*hex)[OW_SHA256_HEX] = NULL;
	size_t n = 0;
	rc = unused_objects(db, &hex, &n);
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = drop_object(s, hex[i], res);
	free(hex);
	return rc;
}
