/* fetchint.h - what fetch.c and fetchrange.c share (wheel subsystem only). */
#ifndef OW_FETCHINT_H
#define OW_FETCHINT_H

#include <stdint.h>

#include "offwheel/fetch.h"
#include "store.h"

/* Run `sql` (its ?1 the file id) and copy the file's URL (column 0) and
 * name (column 1) into `it`: 0 with the statement on the row (the caller
 * reads the other columns, then resets it with ow_stmt_run), or an error
 * (OW_ENOENT: no such file). */
int wh_file_row(ow_store *s, enum ow_sql sql, int64_t id, struct ow_fetch_item *it,
                ow_stmt **out);

/* What preparing one file's transfer came to, beside a negative error. */
enum wh_prepared {
	WH_QUEUE = 0, /* its request is ready for the engine */
	WH_SETTLED,   /* nothing to transfer: its outcome is set already */
};

/* The engine options of a fetch: the caller's (or the defaults) with every
 * hop passed through `allow`. */
void wh_http_opts(const struct ow_fetch_opts *o, ow_http_allow_fn allow, void *ud,
                  struct ow_http_opts *out);

#endif
