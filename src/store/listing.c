/* listing.c - the workspace's tables as rows of typed cells (listing.h). */
#include "offwheel/listing.h"

#include "db.h"
#include "offwheel/error.h"
#include "store.h"

#define MAX_COLS 18 /* the widest listing: files */

struct column {
	const char *name;
	int type;
	int empty_is_null; /* "" means no value (a dependency page's variant) */
};

_Static_assert(OW_FILE_NCOLS <= MAX_COLS && OW_PAGE_NCOLS <= MAX_COLS, "MAX_COLS");

static const struct column file_cols[OW_FILE_NCOLS] = {
	{"filename", OW_CELL_TEXT, 0},   {"project", OW_CELL_TEXT, 0},
	{"version", OW_CELL_TEXT, 0},    {"variant", OW_CELL_TEXT, 1},
	{"python_tag", OW_CELL_TEXT, 0}, {"abi_tag", OW_CELL_TEXT, 0},
	{"platform_tag", OW_CELL_TEXT, 0}, {"url", OW_CELL_TEXT, 0},
	{"sha256", OW_CELL_TEXT, 0},     {"meta_sha256", OW_CELL_TEXT, 0},
	{"has_metadata", OW_CELL_BOOL, 0}, {"requires_python", OW_CELL_TEXT, 0},
	{"yanked", OW_CELL_BOOL, 0},     {"first_seen", OW_CELL_INT, 0},
	{"last_seen", OW_CELL_INT, 0},   {"gone_at", OW_CELL_INT, 0},
	{"object_sha256", OW_CELL_TEXT, 0}, {"trust", OW_CELL_TEXT, 0},
};

static const struct column page_cols[OW_PAGE_NCOLS] = {
	{"url", OW_CELL_TEXT, 0},        {"variant", OW_CELL_TEXT, 1},
	{"project", OW_CELL_TEXT, 0},    {"status", OW_CELL_TEXT, 0},
	{"etag", OW_CELL_TEXT, 0},       {"last_modified", OW_CELL_TEXT, 0},
	{"body_sha256", OW_CELL_TEXT, 0}, {"page_time", OW_CELL_INT, 0},
	{"fetched_at", OW_CELL_INT, 0},  {"changed_at", OW_CELL_INT, 0},
	{"files", OW_CELL_INT, 0},       {"rejected", OW_CELL_INT, 0},
	{"error", OW_CELL_TEXT, 0},
};

/* Every row of st as cells by cols (n of them). */
static int each_row(ow_stmt *st, const struct column *cols, size_t n, ow_row_fn fn, void *ud)
{
	if (n > MAX_COLS)
		return ow_err(OW_EINTERNAL, "listing: %zu columns, more than %d", n, MAX_COLS);
	struct ow_cell row[MAX_COLS];
	int rc;
	while ((rc = ow_stmt_step(st)) == 1) {
		for (size_t i = 0; i < n; i++) {
			struct ow_cell *c = &row[i];
			c->name = cols[i].name;
			c->type = cols[i].type;
			c->null = ow_col_is_null(st, (int)i);
			c->text = c->null || c->type != OW_CELL_TEXT ? NULL : ow_col_text(st, (int)i);
			c->num = c->null || c->type == OW_CELL_TEXT ? 0 : ow_col_int(st, (int)i);
			if (c->type == OW_CELL_BOOL)
				c->num = c->num != 0;
			if (cols[i].empty_is_null && c->text && !*c->text) {
				c->null = 1;
				c->text = NULL;
			}
		}
		if ((rc = fn(ud, row, n)))
			return rc;
	}
	return rc;
}

int ow_list_files(ow_store *s, const struct ow_file_filter *f, ow_row_fn fn, void *ud)
{
	ow_stmt *st = ow_db_stmt(ow_store_db(s), OW_SQL_FILES_LIST);
	if (!st)
		return OW_EDB;
	const char *v[5] = {f->project, f->variant, f->version, f->python, f->platform};
	for (int i = 0; i < 5; i++)
		ow_stmt_text(st, i + 1, v[i]);
	return each_row(st, file_cols, OW_FILE_NCOLS, fn, ud);
}

int ow_list_pages(ow_store *s, const char *project, const char *variant, ow_row_fn fn,
                  void *ud)
{
	ow_stmt *st = ow_db_stmt(ow_store_db(s), OW_SQL_PAGES_LIST);
	if (!st)
		return OW_EDB;
	ow_stmt_text(st, 1, project);
	ow_stmt_text(st, 2, variant);
	return each_row(st, page_cols, OW_PAGE_NCOLS, fn, ud);
}

int ow_list_dep_projects(ow_store *s, const char *index,
                         int (*fn)(void *ud, const char *project), void *ud)
{
	ow_stmt *st = ow_db_stmt(ow_store_db(s), OW_SQL_SYNC_DEP_PAGES);
	int rc;
	if (!st)
		return OW_EDB;
	ow_stmt_text(st, 1, index);
	while ((rc = ow_stmt_step(st)) == 1)
		if ((rc = fn(ud, ow_col_text(st, 0))))
			return rc;
	return rc;
}
