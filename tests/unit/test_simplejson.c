/* test_simplejson.c - PEP 691 JSON project pages: the real PyPI page of
 * filelock as JSON and as HTML must give the same links, field for field;
 * then one case per rule of the JSON form (api-version, core-metadata and
 * its older name, yanked forms, hashes, limits, malformed pages). */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "offwheel/error.h"
#include "pagelinks.h"
#include "simplejson.h"

#define PAGE "https://pypi.org/simple/filelock/"
#define FL "https://files.pythonhosted.org/packages/ab/cd/filelock-"
#define H64 "79e43df8e9fe509cd83a3899a7c186c8077cbbe4d200a1ed3705c2f3bb6bc487"

static struct ow_page *load(const char *rel)
{
	char *path = tu_fixture(rel);
	size_t len = 0;
	char *body = tu_read_file(path, &len);
	struct ow_page *p = NULL;
	assert_non_null(body);
	int rc = ow_page_parse(PAGE, body, len, NULL, NULL, &p);
	if (rc)
		print_error("%s: %s\n", rel, ow_err_detail());
	assert_int_equal(rc, 0);
	free(body);
	free(path);
	return p;
}

static void same_str(const char *what, size_t i, const char *a, const char *b)
{
	if ((a == NULL) != (b == NULL) || (a && strcmp(a, b)))
		fail_msg("link %zu %s: JSON \"%s\", HTML \"%s\"", i, what, a ? a : "(null)",
		         b ? b : "(null)");
}

static void test_real_page_json_equals_html(void **state)
{
	(void)state;
	struct ow_page *j = load("pypi-simple/filelock.json"), *h = load("pypi-simple/filelock.html");
	assert_int_equal(j->nrejected, 0);
	assert_int_equal(h->nrejected, 0);
	assert_int_equal(j->nlinks, 271);
	assert_int_equal(h->nlinks, j->nlinks);
	size_t yanked = 0, sdists = 0;
	for (size_t i = 0; i < j->nlinks; i++) {
		/* the two forms list the files in different orders: pair them by name */
		const struct ow_link *a = &j->links[i], *b = &h->links[0];
		size_t k = 0;
		while (k < h->nlinks && strcmp(h->links[k].filename, a->filename))
			k++;
		if (k == h->nlinks)
			fail_msg("%s: in the JSON page, not in the HTML one", a->filename);
		b = &h->links[k];
		same_str("filename", i, a->filename, b->filename);
		same_str("url", i, a->url, b->url);
		same_str("sha256", i, a->sha256, b->sha256);
		same_str("requires_python", i, a->requires_python, b->requires_python);
		same_str("yanked_reason", i, a->yanked_reason, b->yanked_reason);
		assert_int_equal(a->yanked, b->yanked);
		assert_int_equal(a->is_sdist, b->is_sdist);
		assert_int_equal(a->has_meta, 0); /* this PyPI serves no PEP 658 files */
		assert_int_equal(strlen(a->sha256), 64);
		assert_non_null(a->upload_time); /* PEP 700: only the JSON form has it */
		yanked += a->yanked;
		sdists += a->is_sdist;
	}
	assert_int_equal(yanked, 4);
	assert_true(sdists > 50);
	const struct ow_link *last = &j->links[j->nlinks - 1]; /* PyPI's JSON order */
	assert_string_equal(last->filename, "filelock-4.3.1.tar.gz");
	assert_string_equal(last->upload_time, "2026-11-23T18:01:13Z");
	ow_page_free(j);
	ow_page_free(h);
}

static struct ow_page *parse(const char *body, int want_rc)
{
	struct ow_page *p = NULL;
	int rc = ow_page_parse(PAGE, body, strlen(body), NULL, NULL, &p);
	if (rc != want_rc)
		fail_msg("rc %d (%s), want %d for: %s", rc, ow_err_detail(), want_rc, body);
	return p;
}

#define FILE_OBJ(extra) \
	"{\"filename\": \"filelock-3.13.1-py3-none-any.whl\", \"url\": \"" FL \
	"3.13.1-py3-none-any.whl\", \"hashes\": {\"sha256\": \"" H64 "\"}" extra "}"
#define DOC(ver, files) "{\"meta\": {\"api-version\": \"" ver "\"}, \"name\": \"filelock\", \"files\": [" files "]}"

static void test_core_metadata_forms(void **state)
{
	(void)state;
	struct ow_page *p = parse(DOC("1.1", FILE_OBJ(", \"core-metadata\": {\"sha256\": \"" H64 "\"}") ","
	                                  FILE_OBJ(", \"core-metadata\": true") ","
	                                  FILE_OBJ(", \"core-metadata\": false, \"dist-info-metadata\": true") ","
	                                  FILE_OBJ(", \"dist-info-metadata\": {\"sha256\": \"" H64 "\"}")),
	                          0);
	/* one file name four times: dedup keeps one; check the forms one by one */
	ow_page_free(p);
	static const struct {
		const char *extra;
		int has;
		const char *sha;
	} cases[] = {
	    {", \"core-metadata\": {\"sha256\": \"" H64 "\"}", 1, H64},
	    {", \"core-metadata\": true", 1, ""},
	    {", \"core-metadata\": false, \"dist-info-metadata\": true", 0, ""}, /* the new key wins */
	    {", \"dist-info-metadata\": {\"sha256\": \"" H64 "\"}", 1, H64},    /* PEP 691's name */
	    {", \"core-metadata\": {\"md5\": \"00\"}", 0, ""},                   /* no hash we use */
	    {"", 0, ""},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char body[1024];
		snprintf(body, sizeof body,
		         "{\"meta\": {\"api-version\": \"1.0\"}, \"files\": [{\"filename\": "
		         "\"filelock-3.13.1-py3-none-any.whl\", \"url\": \"" FL
		         "3.13.1-py3-none-any.whl\", \"hashes\": {}%s}]}",
		         cases[i].extra);
		p = parse(body, 0);
		assert_int_equal(p->nlinks, 1);
		if (p->links[0].has_meta != cases[i].has || strcmp(p->links[0].meta_sha256, cases[i].sha))
			fail_msg("case %zu: has_meta %d meta_sha256 \"%s\"", i, p->links[0].has_meta,
			         p->links[0].meta_sha256);
		assert_string_equal(p->links[0].sha256, ""); /* no hash given */
		ow_page_free(p);
	}
}

static void test_yanked_and_hashes(void **state)
{
	(void)state;
	struct ow_page *p = parse(
	    DOC("1.1", "{\"filename\": \"filelock-3.0.0-py3-none-any.whl\", \"url\": \"" FL
	               "3.0.0-py3-none-any.whl\", \"hashes\": {\"sha256\": \"" H64
	               "\"}, \"yanked\": \"broken release\", \"requires-python\": \">=3.8\"},"
	               "{\"filename\": \"filelock-3.0.1-py3-none-any.whl\", \"url\": \"" FL
	               "3.0.1-py3-none-any.whl#sha256=" H64 "\", \"hashes\": {}, \"yanked\": true},"
	               "{\"filename\": \"filelock-3.0.2-py3-none-any.whl\", \"url\": \"" FL
	               "3.0.2-py3-none-any.whl\", \"hashes\": {\"sha256\": \"" H64
	               "\"}, \"yanked\": false}"),
	    0);
	assert_int_equal(p->nlinks, 3);
	assert_true(p->links[0].yanked);
	assert_string_equal(p->links[0].yanked_reason, "broken release");
	assert_string_equal(p->links[0].requires_python, ">=3.8");
	assert_string_equal(p->links[0].sha256, H64);
	assert_true(p->links[1].yanked);
	assert_string_equal(p->links[1].yanked_reason, "");
	assert_string_equal(p->links[1].sha256, H64); /* from the url's fragment */
	assert_false(p->links[2].yanked);
	ow_page_free(p);
}

/* A "hashes" or "core-metadata" of the wrong type is a link that cannot be
 * checked: rejected with a reason, as HTML rejects a malformed #sha256 or
 * data-core-metadata, never read as "a file without a hash". */
static void test_bad_hashes_rejected(void **state)
{
	(void)state;
	static const struct {
		const char *hashes, *extra, *phrase;
	} cases[] = {
	    {"{\"sha256\": 5}", "", "not a string of hex digits"},
	    {"[\"" H64 "\"]", "", "\"hashes\" is not an object"},
	    {"\"" H64 "\"", "", "\"hashes\" is not an object"},
	    {"null", "", "\"hashes\" is not an object"},
	    {"{\"sha256\": \"" H64 "\", \"md5\": [1]}", "", "not a string of hex digits"},
	    {"{\"sha256\": \"zz\"}", "", "sha256"}, /* a string, not hex: the fragment check */
	    {"{}", ", \"core-metadata\": {\"sha256\": 5}", "\"core-metadata\" hash"},
	    {"{}", ", \"core-metadata\": 5", "\"core-metadata\" is neither"},
	    {"{}", ", \"dist-info-metadata\": [\"" H64 "\"]", "\"core-metadata\" is neither"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char body[1024];
		snprintf(body, sizeof body,
		         DOC("1.1", "{\"filename\": \"filelock-3.13.1-py3-none-any.whl\", \"url\": "
		                    "\"" FL "3.13.1-py3-none-any.whl\", \"hashes\": %s%s}"),
		         cases[i].hashes, cases[i].extra);
		struct ow_page *p = parse(body, 0);
		if (p->nlinks != 0 || p->nrejected != 1)
			fail_msg("case %zu: %zu links, %zu rejected", i, p->nlinks, p->nrejected);
		if (!strstr(p->rejected[0].reason, cases[i].phrase))
			fail_msg("case %zu: \"%s\" lacks \"%s\"", i, p->rejected[0].reason,
			         cases[i].phrase);
		assert_int_equal(p->rejected[0].line, 1);
		ow_page_free(p);
	}
}

static void test_refused(void **state)
{
	(void)state;
	static const struct {
		const char *body;
		int rc;
		const char *phrase;
	} cases[] = {
	    {DOC("2.0", ""), OW_EUNSUPPORTED, "api-version 2.0"},
	    {"{\"files\": []}", OW_EPARSE, "no meta.api-version"},
	    {"{\"meta\": {\"api-version\": \"1.0\"}}", OW_EPARSE, "no \"files\" list"},
	    {DOC("1.0", "{\"url\": \"" FL "1.0-py3-none-any.whl\"}"), OW_EPARSE, "files[0]"},
	    {DOC("1.0", "7"), OW_EPARSE, "files[0]"},
	    {"{\"meta\": {\"api-version\": \"1.0\"}, \"files\": [], \"files\": []}", OW_EPARSE,
	     "duplicate"},
	    {"{\"meta\": {\"api-version\": \"1.0\"}, \"files\": [", OW_EPARSE, "JSON page:"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct ow_page *p = parse(cases[i].body, cases[i].rc);
		assert_null(p);
		if (!strstr(ow_err_detail(), cases[i].phrase))
			fail_msg("case %zu: \"%s\" lacks \"%s\"", i, ow_err_detail(), cases[i].phrase);
	}
	/* an empty project is a page with no files, not an error */
	struct ow_page *e = parse(DOC("1.1", ""), 0);
	assert_int_equal(e->nlinks, 0);
	ow_page_free(e);
	/* a hostile link in a JSON page is rejected like one in HTML */
	struct ow_page *p = parse(DOC("1.1", FILE_OBJ("") ",{\"filename\": \"x-1.0-py3-none-any.whl\", "
	                                              "\"url\": \"file:///etc/passwd\", \"hashes\": {}}"),
	                          0);
	assert_int_equal(p->nlinks, 1);
	assert_int_equal(p->nrejected, 1);
	ow_page_free(p);
}

/* devpi-server answers PEP 691 with urls relative to the page, as its HTML
 * hrefs are: resolved against the page as pip does, then judged. */
static void test_relative_urls(void **state)
{
	(void)state;
	static const char body[] =
	    "{\"meta\": {\"api-version\": \"1.0\"}, \"name\": \"filelock\", \"files\": ["
	    "{\"filename\": \"filelock-3.19.1-py3-none-any.whl\", \"url\": "
	    "\"../../+f/d38/e30481def2077/filelock-3.19.1-py3-none-any.whl#sha256=" H64 "\", "
	    "\"hashes\": {\"sha256\": \"" H64 "\"}, \"requires-python\": \">=3.9\"},"
	    "{\"filename\": \"filelock-3.19.0-py3-none-any.whl\", \"url\": "
	    "\"../../%2e%2e/filelock-3.19.0-py3-none-any.whl\", \"hashes\": {}}]}";
	const char *page = "https://pypi.org/root/lab/+simple/filelock/";
	struct ow_page *p = NULL;
	assert_int_equal(ow_page_parse(page, body, strlen(body), NULL, NULL, &p), 0);
	assert_int_equal(p->nlinks, 1);
	assert_string_equal(p->links[0].url, "https://pypi.org/root/lab/+f/d38/e30481def2077/"
	                                     "filelock-3.19.1-py3-none-any.whl");
	assert_string_equal(p->links[0].sha256, H64);
	assert_int_equal(p->nrejected, 1);
	if (!strstr(p->rejected[0].reason, "path traversal"))
		fail_msg("\"%s\" lacks \"path traversal\"", p->rejected[0].reason);
	ow_page_free(p);
}

static void test_limits(void **state)
{
	(void)state;
	struct ow_html_limits lim;
	struct ow_html_doc *d = NULL;
	const char *body = DOC("1.0", FILE_OBJ("") "," FILE_OBJ(""));
	ow_html_limits_default(&lim);
	lim.max_anchors = 1;
	assert_int_equal(ow_simple_json_parse(body, strlen(body), &lim, &d), OW_ETOOBIG);
	lim.max_anchors = 2;
	lim.max_bytes = 10;
	assert_int_equal(ow_simple_json_parse(body, strlen(body), &lim, &d), OW_ETOOBIG);
	lim.max_bytes = 1 << 20;
	assert_int_equal(ow_simple_json_parse(body, strlen(body), &lim, &d), 0);
	assert_int_equal(d->nanchors, 2);
	assert_int_equal(d->anchors[1].line, 2);
	ow_html_doc_free(d);
	assert_true(ow_simple_json_sniff(" \n{", 3));
	assert_true(ow_simple_json_sniff("\xEF\xBB\xBF{", 4));
	assert_false(ow_simple_json_sniff("<html>{", 7));
	assert_false(ow_simple_json_sniff("", 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_real_page_json_equals_html),
	    cmocka_unit_test(test_core_metadata_forms),
	    cmocka_unit_test(test_yanked_and_hashes),
	    cmocka_unit_test(test_refused),
	    cmocka_unit_test(test_bad_hashes_rejected),
	    cmocka_unit_test(test_relative_urls),
	    cmocka_unit_test(test_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
