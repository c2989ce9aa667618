/* event.h - progress and log events.  The library never prints: it emits
 * events, and the CLI (or a test) installs the handler that renders them. */
#ifndef OW_PUBLIC_EVENT_H
#define OW_PUBLIC_EVENT_H

#include <stdint.h>

enum ow_level { OW_LOG_ERROR = 0, OW_LOG_WARN, OW_LOG_INFO, OW_LOG_DEBUG };

enum ow_event_kind {
	OW_EV_LOG,      /* a message at a level */
	OW_EV_PROGRESS, /* a transfer or job advanced: what, done, total */
	OW_EV_DONE,     /* a transfer or job finished: what, done */
	OW_EV_PLAN,     /* a batch is about to start: what = what its items are
	                 * ("wheels"), done = items, total = bytes (0 unknown);
	                 * done = 0 ends the batch */
	OW_EV_ITEM      /* an item of the batch finished (stored or not): what,
	                 * done = bytes received.  One per item, whatever the
	                 * transfers (retries, redirects) it took */
};

struct ow_event {
	enum ow_event_kind kind;
	enum ow_level level;
	const char *msg;  /* OW_EV_LOG */
	const char *what; /* PROGRESS/DONE: the thing (file name, page url) */
	uint64_t done;    /* bytes or items so far */
	uint64_t total;   /* 0 when unknown */
	uint64_t had;     /* PLAN: items of the same kind already done before
	                   * the batch (stored earlier), counted, never moved */
};

typedef void (*ow_event_fn)(const struct ow_event *ev, void *ud);

/* Install the handler (NULL drops every event).  Thread-safe to call events
 * from several threads; the handler is called under a mutex. */
void ow_event_set_handler(ow_event_fn fn, void *ud);

#endif
