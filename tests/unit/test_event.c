#include "testutil.h"

#include <pthread.h>
#include <string.h>

#include "event.h"

struct seen {
	int logs, progress, done;
	char last[256];
	enum ow_level level;
	uint64_t done_bytes;
};

static void collect(const struct ow_event *ev, void *ud)
{
	struct seen *s = ud;
	if (ev->kind == OW_EV_LOG) {
		s->logs++;
		s->level = ev->level;
		snprintf(s->last, sizeof s->last, "%s", ev->msg);
	} else if (ev->kind == OW_EV_PROGRESS) {
		s->progress++;
	} else {
		s->done++;
		s->done_bytes += ev->done;
	}
}

static void test_events_reach_the_handler(void **state)
{
	(void)state;
	struct seen s = {0};
	ow_event_set_handler(collect, &s);
	ow_log(OW_LOG_WARN, "waiting for %s (%d)", "lock", 7);
	ow_progress("torch.whl", 10, 100);
	ow_progress_done("torch.whl", 100);
	assert_int_equal(s.logs, 1);
	assert_int_equal(s.level, OW_LOG_WARN);
	assert_string_equal(s.last, "waiting for lock (7)");
	assert_int_equal(s.progress, 1);
	assert_int_equal(s.done, 1);
	/* no handler: events are dropped, nothing crashes */
	ow_event_set_handler(NULL, NULL);
	ow_log(OW_LOG_ERROR, "dropped");
	ow_progress_done("x", 1);
	assert_int_equal(s.logs, 1);
	assert_int_equal(s.done, 1);
}

struct kinds {
	int n[5];
	char plan_what[32];
	uint64_t plan_items, item_bytes;
};

static void count_kinds(const struct ow_event *ev, void *ud)
{
	struct kinds *k = ud;
	k->n[ev->kind]++;
	if (ev->kind == OW_EV_PLAN) {
		snprintf(k->plan_what, sizeof k->plan_what, "%s", ev->what);
		k->plan_items = ev->done;
	} else if (ev->kind == OW_EV_ITEM) {
		k->item_bytes += ev->done;
	}
}

/* A batch: its plan names the items; an item's end is its own kind, apart
 * from the transfers' ends (a display counts items, not transfers). */
static void test_plan_and_items(void **state)
{
	(void)state;
	struct kinds k = {0};
	ow_event_set_handler(count_kinds, &k);
	ow_progress_plan("wheels", 2, 0);
	ow_progress_done("a.whl", 10); /* its transfer */
	ow_progress_item("a.whl", 10); /* the item */
	ow_progress_item("b.whl", 5);
	ow_progress_plan(NULL, 0, 0);
	ow_event_set_handler(NULL, NULL);
	assert_int_equal(k.n[OW_EV_PLAN], 2);
	assert_int_equal(k.n[OW_EV_DONE], 1);
	assert_int_equal(k.n[OW_EV_ITEM], 2);
	assert_int_equal(k.item_bytes, 15);
	assert_string_equal(k.plan_what, ""); /* the end of the batch */
	assert_int_equal(k.plan_items, 0);
}

static struct seen shared;

static void *emit_many(void *arg)
{
	(void)arg;
	for (int i = 0; i < 1000; i++)
		ow_progress_done("x", 1);
	return NULL;
}

/* The handler runs under a lock: events from several threads are all seen. */
static void test_events_from_threads(void **state)
{
	(void)state;
	memset(&shared, 0, sizeof shared);
	ow_event_set_handler(collect, &shared);
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, emit_many, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	ow_event_set_handler(NULL, NULL);
	assert_int_equal(shared.done, 4000);
	assert_int_equal(shared.done_bytes, 4000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_events_reach_the_handler),
		cmocka_unit_test(test_plan_and_items),
		cmocka_unit_test(test_events_from_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
