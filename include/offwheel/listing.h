/* listing.h - the workspace's tables as rows of named, typed cells, for
 * `offwheel ls` and whatever else lists them: the queries, the column names
 * and which column is an integer, a boolean or null live here, so a caller
 * renders rows and never touches SQL or column numbers. */
#ifndef OW_LISTING_H
#define OW_LISTING_H

#include <stddef.h>
#include <stdint.h>

#include "offwheel/store.h"

enum ow_cell_type { OW_CELL_TEXT, OW_CELL_INT, OW_CELL_BOOL };

struct ow_cell {
	const char *name; /* "filename", "yanked", ... */
	int type;         /* enum ow_cell_type */
	int null;         /* no value (SQL NULL; a dependency page's "" variant) */
	const char *text; /* OW_CELL_TEXT: valid during the callback */
	int64_t num;      /* OW_CELL_INT, OW_CELL_BOOL (0 / 1) */
};

/* One row, its cells in the listing's column order; nonzero stops the
 * listing and is returned. */
typedef int (*ow_row_fn)(void *ud, const struct ow_cell *row, size_t ncols);

/* Files recorded by the crawl; NULL fields do not filter.  Columns:
 * filename project version variant python_tag abi_tag platform_tag url
 * sha256 meta_sha256 has_metadata requires_python yanked first_seen
 * last_seen gone_at object_sha256 trust. */
struct ow_file_filter {
	const char *project, *variant;
	const char *version, *python, *platform; /* GLOBs; python matches the abi tag too */
};
enum { OW_FILE_FILENAME = 0, OW_FILE_VARIANT = 3, OW_FILE_SHA256 = 8, OW_FILE_GONE_AT = 15,
       OW_FILE_OBJECT = 16, OW_FILE_NCOLS = 18 };
int ow_list_files(ow_store *s, const struct ow_file_filter *f, ow_row_fn fn, void *ud);

/* Index pages crawled.  Columns: url variant project status etag
 * last_modified body_sha256 page_time fetched_at changed_at files rejected
 * error. */
enum { OW_PAGE_URL = 0, OW_PAGE_STATUS = 3, OW_PAGE_FETCHED_AT = 8, OW_PAGE_FILES = 10,
       OW_PAGE_REJECTED = 11, OW_PAGE_NCOLS = 13 };
int ow_list_pages(ow_store *s, const char *project, const char *variant, ow_row_fn fn,
                  void *ud);

/* The dependency pages ({index}/{project}/, no variant) read before from
 * this index, successfully: fn gets each project name. */
int ow_list_dep_projects(ow_store *s, const char *index,
                         int (*fn)(void *ud, const char *project), void *ud);

#endif
