/* The layout remembered per index root (roots, 0009) and what a crawl of
 * the default variant folders says about it. */
#include "testutil.h"

#include <string.h>

#include "offwheel/crawl.h"
#include "offwheel/error.h"
#include "store.h"

struct fx {
	char *home;
	ow_store *s;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof *f);
	f->home = tu_mkdtemp();
	if (ow_store_open(f->home, OW_STORE_WRITE, 5, "test", &f->s))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	ow_store_close(f->s);
	tu_rmtree(f->home);
	free(f->home);
	free(f);
	return 0;
}

static void test_layout_kept(void **state)
{
	struct fx *f = *state;
	enum ow_root_layout l = OW_ROOT_VARIANTS;
	const char *pypi = "https://pypi.org/simple", *whl = "https://download.pytorch.org/whl";
	assert_int_equal(ow_root_layout_get(f->s, pypi, &l), 0);
	assert_int_equal(l, OW_ROOT_UNKNOWN);
	assert_int_equal(ow_root_layout_put(f->s, pypi, OW_ROOT_FLAT), 0);
	assert_int_equal(ow_root_layout_put(f->s, whl, OW_ROOT_VARIANTS), 0);
	/* nothing learnt: what was known stays */
	assert_int_equal(ow_root_layout_put(f->s, pypi, OW_ROOT_UNKNOWN), 0);
	assert_int_equal(ow_root_layout_get(f->s, pypi, &l), 0);
	assert_int_equal(l, OW_ROOT_FLAT);
	assert_int_equal(ow_root_layout_get(f->s, whl, &l), 0);
	assert_int_equal(l, OW_ROOT_VARIANTS);
	/* a new probe's answer replaces the old one */
	assert_int_equal(ow_root_layout_put(f->s, pypi, OW_ROOT_VARIANTS), 0);
	assert_int_equal(ow_root_layout_get(f->s, pypi, &l), 0);
	assert_int_equal(l, OW_ROOT_VARIANTS);
	/* the URL as given: another spelling is another root */
	assert_int_equal(ow_root_layout_get(f->s, "https://pypi.org/simple/", &l), 0);
	assert_int_equal(l, OW_ROOT_UNKNOWN);
}

static enum ow_root_layout layout_of(const enum ow_page_outcome *o, size_t n, size_t *refreshed,
                                     size_t *not_found)
{
	struct ow_crawl_page pages[8];
	struct ow_crawl_report r = {.pages = pages, .npages = n};
	memset(pages, 0, sizeof pages);
	for (size_t i = 0; i < n; i++)
		pages[i].outcome = o[i];
	*refreshed = *not_found = 0;
	ow_crawl_count(&r, refreshed, not_found);
	return ow_crawl_layout(&r);
}

static void test_crawl_layout(void **state)
{
	(void)state;
	size_t ref, nf;
	static const enum ow_page_outcome all_missing[] = {OW_PAGE_MISSING, OW_PAGE_MISSING,
	                                                   OW_PAGE_MISSING};
	static const enum ow_page_outcome one_there[] = {OW_PAGE_MISSING, OW_PAGE_UNCHANGED,
	                                                 OW_PAGE_FAILED};
	static const enum ow_page_outcome one_failed[] = {OW_PAGE_MISSING, OW_PAGE_FAILED};
	static const enum ow_page_outcome answered[] = {OW_PAGE_NEW, OW_PAGE_CHANGED, OW_PAGE_SAME,
	                                                OW_PAGE_UNCHANGED, OW_PAGE_MISSING};
	assert_int_equal(layout_of(all_missing, 3, &ref, &nf), OW_ROOT_FLAT);
	assert_int_equal(ref, 0);
	assert_int_equal(nf, 3);
	assert_int_equal(layout_of(one_there, 3, &ref, &nf), OW_ROOT_VARIANTS);
	/* a page that failed might be there: nothing is concluded */
	assert_int_equal(layout_of(one_failed, 2, &ref, &nf), OW_ROOT_UNKNOWN);
	assert_int_equal(layout_of(NULL, 0, &ref, &nf), OW_ROOT_UNKNOWN);
	/* 200s and 304s are refreshed; 404s are not */
	layout_of(answered, 5, &ref, &nf);
	assert_int_equal(ref, 4);
	assert_int_equal(nf, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_layout_kept, setup, teardown),
		cmocka_unit_test(test_crawl_layout),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
