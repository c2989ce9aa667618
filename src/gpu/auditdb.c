/* auditdb.c - the audit cache in the index (tables audit_objects and
 * audits) and the lookup of a stored object by hash or file name.
 *
 * The cache is derived data: a write that fails (the index busy, the
 * object removed meanwhile) is logged and the audit still succeeds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "auditint.h"
#include "db.h"
#include "offwheel/error.h"
#include "event.h"
#include "store.h"

static int is_hex64(const char *s)
{
	size_t n = 0;
	for (; s[n]; n++)
		if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
			return 0;
	return n == 64;
}

static int stmt_or_fail(ow_db *db, enum ow_sql id, ow_stmt **st)
{
	*st = ow_db_stmt(db, id);
	return *st ? 0 : OW_EDB; /* the detail is set */
}

/* The newest file name the files table records for `hex` ("" if none). */
static int name_of(ow_db *db, const char *hex, char *label, size_t n)
{
	ow_stmt *st;
	int rc = stmt_or_fail(db, OW_SQL_AUDIT_NAME_BY_OBJECT, &st);
	if (!rc)
		rc = ow_stmt_text(st, 1, hex);
	if (!rc)
		rc = ow_stmt_step(st);
	if (rc == 1)
		snprintf(label, n, "%s", ow_col_text(st, 0));
	return rc < 0 ? rc : 0;
}

static int by_name(ow_db *db, const char *ref, char hex[65], char *label, size_t n)
{
	ow_stmt *st;
	int rc = stmt_or_fail(db, OW_SQL_AUDIT_FILE_BY_NAME, &st);
	if (!rc)
		rc = ow_stmt_text(st, 1, ref);
	if (!rc)
		rc = ow_stmt_step(st);
	if (rc < 0)
		return rc;
	if (rc == 0 || strlen(ow_col_text(st, 0)) != 64)
		return ow_err(OW_ENOENT, "'%s' is neither a file, a sha256 of a stored object nor the "
		              "name of a fetched file — check the name with 'offwheel ls files'", ref);
	memcpy(hex, ow_col_text(st, 0), 65);
	snprintf(label, n, "%s", ow_col_text(st, 1));
	return 0;
}

int au_resolve(ow_store *s, const char *ref, char hex[65], char *label, size_t label_n)
{
	ow_db *db = ow_store_db(s);
	label[0] = 0;
	if (!is_hex64(ref))
		return by_name(db, ref, hex, label, label_n);
	int rc = ow_store_has(s, ref, NULL, NULL, 0);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return ow_err(OW_ENOENT, "no object %s in the store — list them with 'offwheel ls "
		              "objects'", ref);
	memcpy(hex, ref, 65);
	rc = name_of(db, hex, label, label_n);
	if (!rc && !label[0])
		snprintf(label, label_n, "%s", hex);
	return rc;
}

/* ---- loading -------------------------------------------------------------- */

static int load_row(ow_stmt *st, struct ow_audit *a)
{
	const char *text = ow_col_text(st, 3);
	struct ow_fatbin *fb;
	int rc = ow_audit_decode(text, strlen(text), &fb);
	if (rc)
		return rc;
	const char *member = ow_col_text(st, 0);
	return au_add_lib(a, member[0] ? member : a->label, (uint64_t)ow_col_int(st, 1),
	                        ow_col_int(st, 2) != 0, fb);
}

static int load_rows(ow_db *db, const char *hex, struct ow_audit *a)
{
	ow_stmt *st;
	int rc = stmt_or_fail(db, OW_SQL_AUDIT_ROWS, &st);
	if (!rc)
		rc = ow_stmt_text(st, 1, hex);
	while (!rc && (rc = ow_stmt_step(st)) == 1)
		rc = load_row(st, a);
	return rc;
}

static void drop_libs(struct ow_audit *a)
{
	for (size_t i = 0; i < a->n_libs; i++) {
		free(a->libs[i].path);
		ow_fatbin_free(a->libs[i].fb);
	}
	a->n_libs = 0;
}

int au_cache_load(ow_store *s, const char *hex, int scan, struct ow_audit *a)
{
	ow_db *db = ow_store_db(s);
	ow_stmt *st;
	int rc = stmt_or_fail(db, OW_SQL_AUDIT_OBJ_GET, &st);
	if (!rc)
		rc = ow_stmt_text(st, 1, hex);
	if (!rc)
		rc = ow_stmt_int(st, 2, OW_AUDIT_FORMAT);
	if (!rc)
		rc = ow_stmt_int(st, 3, scan);
	if (!rc)
		rc = ow_stmt_step(st);
	if (rc <= 0)
		return rc;
	a->kind = !strcmp(ow_col_text(st, 0), "wheel") ? OW_AUDIT_WHEEL : OW_AUDIT_LIBRARY;
	size_t n_libs = (size_t)ow_col_int(st, 1);
	a->n_skipped = (size_t)ow_col_int(st, 2);
	rc = load_rows(db, hex, a);
	if (!rc && a->n_libs != n_libs) {
		ow_log(OW_LOG_WARN, "audit cache of %s is incomplete; reading the object again", hex);
		drop_libs(a);
		return 0;
	}
	if (rc)
		drop_libs(a);
	return rc ? rc : 1;
}

/* ---- saving --------------------------------------------------------------- */

static int save_object(ow_db *db, const struct ow_audit *a, int scan)
{
	ow_stmt *st;
	int rc = stmt_or_fail(db, OW_SQL_AUDIT_OBJ_DELETE, &st);
	if (!rc)
		rc = ow_stmt_text(st, 1, a->sha256);
	if (!rc)
		rc = ow_stmt_run(st);
	if (!rc)
		rc = stmt_or_fail(db, OW_SQL_AUDIT_OBJ_PUT, &st);
	if (rc)
		return rc;
	ow_stmt_text(st, 1, a->sha256);
	ow_stmt_text(st, 2, a->kind == OW_AUDIT_WHEEL ? "wheel" : "library");
	ow_stmt_int(st, 3, OW_AUDIT_FORMAT);
	ow_stmt_int(st, 4, scan);
	ow_stmt_int(st, 5, (int64_t)a->n_libs);
	ow_stmt_int(st, 6, (int64_t)a->n_skipped);
	ow_stmt_int(st, 7, (int64_t)time(NULL));
	return ow_stmt_run(st);
}

static int save_lib(ow_db *db, const struct ow_audit *a, const struct ow_audit_lib *l)
{
	struct ow_audit_summary sum;
	char *text;
	ow_stmt *st;
	int rc = ow_audit_encode(l->fb, &text);
	if (!rc && (rc = stmt_or_fail(db, OW_SQL_AUDIT_ROW_PUT, &st)))
		free(text);
	if (rc)
		return rc;
	ow_audit_lib_summary(l, &sum);
	ow_stmt_text(st, 1, a->sha256);
	ow_stmt_text(st, 2, a->kind == OW_AUDIT_WHEEL ? l->path : "");
	ow_stmt_int(st, 3, (int64_t)l->size);
	ow_stmt_int(st, 4, l->scanned);
	ow_stmt_int(st, 5, (int64_t)l->fb->n_modules);
	ow_stmt_int(st, 6, (int64_t)l->fb->n_entries);
	ow_stmt_text(st, 7, sum.sass);
	ow_stmt_text(st, 8, sum.ptx);
	ow_stmt_text(st, 9, text);
	rc = ow_stmt_run(st);
	free(text);
	return rc;
}

static int save_all(ow_db *db, const struct ow_audit *a, int scan)
{
	int rc = save_object(db, a, scan);
	for (size_t i = 0; !rc && i < a->n_libs; i++)
		rc = save_lib(db, a, &a->libs[i]);
	return rc;
}

int au_cache_save(ow_store *s, const struct ow_audit *a, int scan)
{
	ow_db *db = ow_store_db(s);
	int rc = ow_db_begin(db);
	if (!rc)
		rc = save_all(db, a, scan);
	if (!rc)
		rc = ow_db_commit(db);
	if (rc) {
		ow_db_rollback(db);
		ow_log(OW_LOG_WARN, "could not cache the audit of %s: %s", a->label,
		       ow_err_detail());
		ow_err_clear();
	}
	return 0;
}
