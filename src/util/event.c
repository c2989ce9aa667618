/* event.c - dispatch of progress and log events to one handler. */
#include "event.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

static ow_event_fn handler;
static void *handler_ud;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void ow_event_set_handler(ow_event_fn fn, void *ud)
{
	pthread_mutex_lock(&lock);
	handler = fn;
	handler_ud = ud;
	pthread_mutex_unlock(&lock);
}

static void emit(const struct ow_event *ev)
{
	pthread_mutex_lock(&lock);
	if (handler)
		handler(ev, handler_ud);
	pthread_mutex_unlock(&lock);
}

void ow_log(enum ow_level level, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	if (!handler)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	struct ow_event ev = {.kind = OW_EV_LOG, .level = level, .msg = buf};
	emit(&ev);
}

void ow_progress(const char *what, uint64_t done, uint64_t total)
{
	struct ow_event ev = {.kind = OW_EV_PROGRESS, .level = OW_LOG_INFO,
	                      .what = what, .done = done, .total = total};
	emit(&ev);
}

void ow_progress_plan_had(const char *what, uint64_t had, uint64_t items, uint64_t bytes)
{
	struct ow_event ev = {.kind = OW_EV_PLAN, .level = OW_LOG_INFO, .what = what ? what : "",
	                      .done = items, .total = bytes, .had = items ? had : 0};
	emit(&ev);
}

void ow_progress_plan(const char *what, uint64_t items, uint64_t bytes)
{
	ow_progress_plan_had(what, 0, items, bytes);
}

void ow_progress_item(const char *what, uint64_t bytes)
{
	struct ow_event ev = {.kind = OW_EV_ITEM, .level = OW_LOG_INFO,
	                      .what = what, .done = bytes, .total = bytes};
	emit(&ev);
}

void ow_progress_done(const char *what, uint64_t done)
{
	struct ow_event ev = {.kind = OW_EV_DONE, .level = OW_LOG_INFO,
	                      .what = what, .done = done, .total = done};
	emit(&ev);
}
