/* event.h (internal) - how the library emits the events of
 * offwheel/event.h. */
#ifndef OW_EVENT_H
#define OW_EVENT_H

#include <stdint.h>

#include "offwheel/error.h"
#include "offwheel/event.h"

void ow_log(enum ow_level level, const char *fmt, ...) OW_PRINTF(2, 3);
void ow_progress(const char *what, uint64_t done, uint64_t total);
void ow_progress_done(const char *what, uint64_t done);
/* Announce a batch of `items` jobs of `bytes` in all (0 when unknown), so a
 * display can say "3 of 19 wheels" and give an ETA for the whole batch;
 * `what` names the items.  `items` 0 ends the batch. */
void ow_progress_plan(const char *what, uint64_t items, uint64_t bytes);
/* The same for a batch whose `had` other items were done before it (files
 * already stored): a display counts them, "30 of 32 wheels", so the total
 * matches the batch of the same files before it. */
void ow_progress_plan_had(const char *what, uint64_t had, uint64_t items, uint64_t bytes);
/* One item of the batch finished; `bytes` received for it. */
void ow_progress_item(const char *what, uint64_t bytes);

#endif
