/* fetchcommon.c - what fetch.c and fetchrange.c both start from
 * (fetchint.h): the engine options of a fetch and a file's index row. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "offwheel/error.h"
#include "fetchint.h"

void wh_http_opts(const struct ow_fetch_opts *o, ow_http_allow_fn allow, void *ud,
                  struct ow_http_opts *out)
{
	if (o->http)
		*out = *o->http;
	else
		ow_http_opts_default(out);
	out->allow_url = allow;
	out->allow_ud = ud;
}

int wh_file_row(ow_store *s, enum ow_sql sql, int64_t id, struct ow_fetch_item *it,
                ow_stmt **out)
{
	ow_stmt *st = ow_db_stmt(ow_store_db(s), sql);
	if (!st)
		return OW_EDB;
	ow_stmt_int(st, 1, id);
	int rc = ow_stmt_step(st);
	if (rc <= 0)
		return rc < 0 ? rc : ow_err(OW_ENOENT, "file #%lld is not in the index", (long long)id);
	it->file_id = id;
	free(it->url);
	if (!(it->url = strdup(ow_col_text(st, 0)))) {
		ow_stmt_run(st);
		return ow_err(OW_ENOMEM, "file #%lld: out of memory", (long long)id);
	}
	snprintf(it->filename, sizeof it->filename, "%s", ow_col_text(st, 1));
	*out = st;
	return 0;
}
