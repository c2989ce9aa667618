/* fetchint.h - what fetch.c and fetchrange.c share (wheel subsystem only):
 * the helpers of fetchcommon.c, and fetch.c's whole-wheel download that
 * fetchrange.c hands a transfer to. */
#ifndef OW_FETCHINT_H
#define OW_FETCHINT_H

#include <stdint.h>

#include "offwheel/fetch.h"
#include "http.h"
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

/* ---- a whole wheel from a transfer fetch.c did not start -----------------
 * A range read that the server answered with the whole file (a server that
 * ignores Range; fetchrange.c asks with OW_HTTP_RANGE_OR_WHOLE): its bytes
 * go through the part file, hash and checks of ow_fetch_files, and the
 * wheel is published as the file's object only when it verifies — the
 * object fetch and sync then find stored.  Slots are the caller's items. */
struct wh_whole;

/* State for n slots whose transfers run on engine h (a refetch after a
 * failed verification is queued there). */
int wh_whole_new(ow_store *s, const struct ow_fetch_opts *o, ow_http *h, size_t n,
                 struct wh_whole **out);
/* Take over transfer `live` of file `id` in `slot`, before its first byte:
 * WH_QUEUE when its bytes go to wh_whole_data (and live's flags say how a
 * retry resumes), WH_SETTLED when nothing is to be written (the wheel is
 * stored already, or another slot downloads the same file): the outcome is
 * the slot's item.  Negative: an error (the slot's item says it). */
int wh_whole_adopt(struct wh_whole *w, size_t slot, int64_t id, struct ow_http_req *live);
int wh_whole_data(struct wh_whole *w, size_t slot, const struct ow_http_req *live,
                  const void *buf, size_t len);
int wh_whole_restart(struct wh_whole *w, size_t slot);
/* The adopted transfer ended: verify and publish, or record why not. */
void wh_whole_done(struct wh_whole *w, size_t slot, struct ow_http_req *live);
/* After the engine ran: the item of `slot` when it was adopted (its
 * outcome final), NULL when not. */
struct ow_fetch_item *wh_whole_item(struct wh_whole *w, size_t slot);
void wh_whole_free(struct wh_whole *w);

#endif
