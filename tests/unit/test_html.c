/* test_html.c - PEP 503 pages: the real PyTorch pages in
 * tests/fixtures/pytorch-index (counts, sampled rows, hashes, metadata
 * hashes, local labels), the attributes of copied dependency pages, and the
 * refused pages of docs/index-quirks.md (one named test each). */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "offwheel/error.h"
#include "html.h"
#include "pagelinks.h"

#define IDX "https://download.pytorch.org/whl/"

static void assert_has(const char *hay, const char *needle)
{
	if (!hay || !strstr(hay, needle)) {
		print_error("expected \"%s\" in \"%s\"\n", needle, hay ? hay : "(null)");
		fail();
	}
}

static struct ow_page *load(const char *rel, const char *page_url)
{
	char *path = tu_fixture(rel);
	size_t len = 0;
	char *body = tu_read_file(path, &len);
	struct ow_page *p = NULL;
	assert_non_null(body);
	int rc = ow_page_parse(page_url, body, len, NULL, NULL, &p);
	if (rc)
		print_error("%s: %s\n", rel, ow_err_detail());
	assert_int_equal(rc, 0);
	free(body);
	free(path);
	return p;
}

static const struct ow_link *by_url(const struct ow_page *p, const char *url)
{
	for (size_t i = 0; i < p->nlinks; i++)
		if (!strcmp(p->links[i].url, url))
			return &p->links[i];
	print_error("no link %s\n", url);
	fail();
	return NULL;
}

/* --- the real pages ------------------------------------------------------ */

static void test_real_page_counts(void **state)
{
	(void)state;
	static const struct {
		const char *rel, *url;
		size_t links, rejected;
		long long ts;
	} pages[] = {
	    {"pytorch-index/whl-2023-10/torch_index.html", IDX "torch/", 1494, 0, 1697195006},
	    {"pytorch-index/whl-2023-10/torchvision_index.html", IDX "torchvision/", 1115, 0,
	     1697205825},
	    {"pytorch-index/whl-2023-10/torchaudio_index.html", IDX "torchaudio/", 700, 0,
	     1697205824},
	    {"pytorch-index/whl-2023-10/triton_index.html", IDX "triton/", 13, 0, 1697205825},
	    {"pytorch-index/whl-2023-10/numpy_index.html", IDX "numpy/", 17, 0, 1697205824},
	    {"pytorch-index/whl-2023-10/pytorch-triton-rocm_index.html", IDX "pytorch-triton-rocm/",
	     13, 0, 1697205824},
	    /* the root page lists projects, not files: every anchor is rejected */
	    {"pytorch-index/whl-2023-10/index.html", IDX, 0, 38, 1697200930},
	};
	for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++) {
		struct ow_page *p = load(pages[i].rel, pages[i].url);
		if (p->nlinks != pages[i].links || p->nrejected != pages[i].rejected)
			print_error("%s: %zu links %zu rejected\n", pages[i].rel, p->nlinks,
			            p->nrejected);
		assert_int_equal(p->nlinks, pages[i].links);
		assert_int_equal(p->nrejected, pages[i].rejected);
		assert_true(p->has_timestamp);
		assert_int_equal(p->timestamp, pages[i].ts);
		ow_page_free(p);
	}
}

struct row {
	const char *url, *filename, *version, *sha256;
};

static void check_rows(const struct ow_page *p, const struct row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct ow_link *l = by_url(p, rows[i].url);
		assert_string_equal(l->filename, rows[i].filename);
		assert_string_equal(l->text, rows[i].filename);
		assert_string_equal(l->version, rows[i].version);
		assert_string_equal(l->sha256, rows[i].sha256);
		assert_false(l->is_sdist);
		assert_false(l->yanked);
		assert_null(l->requires_python);
	}
}

static void test_torch_rows(void **state)
{
	(void)state;
	static const struct row rows[] = {
	    {IDX "cpu-cxx11-abi/torch-2.0.0%2Bcpu.cxx11.abi-cp310-cp310-linux_x86_64.whl",
	     "torch-2.0.0+cpu.cxx11.abi-cp310-cp310-linux_x86_64.whl", "2.0.0+cpu.cxx11.abi",
	     "c334eeb746b1ca896ba6be84d3a9796b1f9b74efa1a5a818662c9b9d59f97550"},
	    {IDX "cu121/torch-2.1.0%2Bcu121-cp311-cp311-win_amd64.whl",
	     "torch-2.1.0+cu121-cp311-cp311-win_amd64.whl", "2.1.0+cu121",
	     "3b7c6dd1ab12a9c70b29bf1ea34fcf2c519233c58c619c1a553d328955c8a602"},
	    {IDX "torch-2.0.1-cp39-cp39-manylinux2014_aarch64.whl",
	     "torch-2.0.1-cp39-cp39-manylinux2014_aarch64.whl", "2.0.1",
	     "423e0ae257b756bb45a4b49072046772d1ad0c592265c5080070e0767da4e490"},
	    /* one file name in two variant folders: two files, two hashes */
	    {IDX "cu75/torch-0.1.10.post1-cp27-none-linux_x86_64.whl",
	     "torch-0.1.10.post1-cp27-none-linux_x86_64.whl", "0.1.10.post1",
	     "b6095d67c8227b1ccfbd20ded94f9a209c03d8579c69ee7cdebb661a517d2309"},
	    {IDX "cu80/torch-0.1.10.post1-cp27-none-linux_x86_64.whl",
	     "torch-0.1.10.post1-cp27-none-linux_x86_64.whl", "0.1.10.post1",
	     "311ae7ba41102b7a4aee92cadcad9a7fefc358bb89aace60c711f0201a037c4e"},
	};
	struct ow_page *p = load("pytorch-index/whl-2023-10/torch_index.html", IDX "torch/");
	check_rows(p, rows, sizeof rows / sizeof rows[0]);
	assert_string_equal(p->links[0].name, "torch");
	assert_int_equal(p->links[0].line, 5);
	ow_page_free(p);
}

static void test_vision_audio_rows(void **state)
{
	(void)state;
	static const struct row vision[] = {
	    {IDX "cu121/torchvision-0.16.0%2Bcu121-cp311-cp311-linux_x86_64.whl",
	     "torchvision-0.16.0+cu121-cp311-cp311-linux_x86_64.whl", "0.16.0+cu121",
	     "7a325270c7806571ceddbd27c8ece5c163cceb476f09dcca7eb5157073216b22"},
	    {IDX "torchvision-0.2.0-py2.py3-none-any.whl", "torchvision-0.2.0-py2.py3-none-any.whl",
	     "0.2.0", "4da0ffb8559430c452e47efb35be36460c9d8b81747c214854a520b5f3364961"},
	};
	static const struct row audio[] = {
	    {IDX "cpu/torchaudio-2.1.0-cp311-cp311-macosx_11_0_arm64.whl",
	     "torchaudio-2.1.0-cp311-cp311-macosx_11_0_arm64.whl", "2.1.0",
	     "fc97182abab2065d8bbf56f3732883e40acfcfec38f2581c97710b1fca93c4a7"},
	    {IDX "rocm5.6/torchaudio-2.1.0%2Brocm5.6-cp310-cp310-linux_x86_64.whl",
	     "torchaudio-2.1.0+rocm5.6-cp310-cp310-linux_x86_64.whl", "2.1.0+rocm5.6", ""},
	};
	struct ow_page *p =
	    load("pytorch-index/whl-2023-10/torchvision_index.html", IDX "torchvision/");
	check_rows(p, vision, sizeof vision / sizeof vision[0]);
	ow_page_free(p);
	p = load("pytorch-index/whl-2023-10/torchaudio_index.html", IDX "torchaudio/");
	check_rows(p, audio, sizeof audio / sizeof audio[0]);
	ow_page_free(p);
}

static void test_cpu_snippet_local_labels(void **state)
{
	(void)state;
	struct ow_page *p =
	    load("pytorch-index/whl_cpu_torch_2.4.1_snippet.html", IDX "cpu/torch/");
	assert_int_equal(p->nlinks, 20);
	assert_int_equal(p->nrejected, 0);
	assert_false(p->has_timestamp);
	const struct ow_link *l = &p->links[0];
	assert_string_equal(
	    l->href, "/whl/cpu/torch-2.4.1%2Bcpu-cp310-cp310-linux_x86_64.whl"
	             "#sha256=833490a28ac156762ed6adaa7c695879564fa2fd0dc51bcf3fdb2c7b47dc55e6");
	assert_string_equal(l->url, IDX "cpu/torch-2.4.1%2Bcpu-cp310-cp310-linux_x86_64.whl");
	assert_string_equal(l->filename, "torch-2.4.1+cpu-cp310-cp310-linux_x86_64.whl");
	assert_string_equal(l->version, "2.4.1+cpu");
	/* macOS and aarch64 CPU wheels sit in cpu/ without +cpu */
	l = by_url(p, IDX "cpu/torch-2.4.1-cp312-none-macosx_11_0_arm64.whl");
	assert_string_equal(l->version, "2.4.1");
	assert_string_equal(l->sha256,
	                    "72b484d5b6cec1a735bf3fa5a1c4883d01748698c5e9cfdbeb4ffab7c7987e0d");
	ow_page_free(p);
}

static void test_nightly_snippet_metadata_no_hash(void **state)
{
	(void)state;
	struct ow_page *p = load("pytorch-index/whl_nightly_cu126_torch_snippet_2025-01-03.html",
	                         IDX "nightly/cu126/torch/");
	assert_int_equal(p->nlinks, 21);
	assert_int_equal(p->nrejected, 0);
	size_t with_meta = 0;
	for (size_t i = 0; i < p->nlinks; i++) {
		assert_string_equal(p->links[i].sha256, "");
		with_meta += p->links[i].has_meta;
	}
	assert_int_equal(with_meta, 16);
	const struct ow_link *l = &p->links[0];
	assert_string_equal(l->version, "2.6.0.dev20250102+cu126");
	assert_false(l->has_meta);
	assert_string_equal(l->meta_sha256, "");
	l = by_url(p, IDX
	           "nightly/cu126/torch-2.6.0.dev20250103%2Bcu126-cp310-cp310-linux_aarch64.whl");
	assert_string_equal(l->filename,
	                    "torch-2.6.0.dev20250103+cu126-cp310-cp310-linux_aarch64.whl");
	assert_true(l->has_meta);
	assert_string_equal(l->meta_sha256,
	                    "3217e3132055e58b637de9707757c7cc46317d928264f38baf9187c063f1fb34");
	l = by_url(
	    p, IDX
	    "nightly/cu126/torch-2.6.0.dev20250103%2Bcu126-cp313-cp313t-manylinux_2_28_x86_64.whl");
	assert_string_equal(l->meta_sha256,
	                    "89dc22f0edddfefd1e9a2979ce4a9f9b3b350911d7af1c12907f5bed4e950b3c");
	ow_page_free(p);
}

static void test_r2_snippet_second_host(void **state)
{
	(void)state;
	struct ow_page *p = load("pytorch-index/whl_cu128_torch_2.11.0_r2_snippet_2026-04-22.html",
	                         IDX "cu128/torch/");
	assert_int_equal(p->nlinks, 1);
	const struct ow_link *l = &p->links[0];
	assert_string_equal(l->url, "https://download-r2.pytorch.org/whl/cu128/"
	                            "torch-2.11.0%2Bcu128-cp310-cp310-manylinux_2_28_x86_64.whl");
	assert_string_equal(l->filename,
	                    "torch-2.11.0+cu128-cp310-cp310-manylinux_2_28_x86_64.whl");
	assert_string_equal(l->sha256, "");
	assert_true(l->has_meta);
	assert_string_equal(l->meta_sha256,
	                    "de881a744ff66b27fffc338c1624660cf7c87d3019574ad71e3dda886b2a172b");
	ow_page_free(p);
}

static void test_270_snippet_aarch64_without_hash(void **state)
{
	(void)state;
	struct ow_page *p =
	    load("pytorch-index/whl_torch_2.7.0_cu128_snippet_2025-04.html", IDX "torch/");
	assert_int_equal(p->nlinks, 18);
	for (size_t i = 0; i < p->nlinks; i++) {
		const struct ow_link *l = &p->links[i];
		int aarch64 = strstr(l->filename, "aarch64") != NULL;
		assert_int_equal(l->sha256[0] == '\0', aarch64);
		assert_true(l->has_meta);
		assert_string_equal(l->version, "2.7.0+cu128");
	}
	const struct ow_link *l =
	    by_url(p, IDX "cu128/torch-2.7.0%2Bcu128-cp313-cp313t-win_amd64.whl");
	assert_string_equal(l->sha256,
	                    "3559e98be824c2b12ab807319cd61c6174d73a524c9961317de8e8a44133c5c5");
	assert_string_equal(l->meta_sha256,
	                    "5328f06cf7c42c53b380ab25403cb75bbdc4cce7c73229da2f02c9b68476807b");
	ow_page_free(p);
}

static void test_single_row_snippets(void **state)
{
	(void)state;
	struct ow_page *p =
	    load("pytorch-index/whl_cu126_torch_2.6.0_snippet_2025-10-01.html", IDX "cu126/torch/");
	assert_int_equal(p->nlinks, 1);
	assert_string_equal(p->links[0].sha256,
	                    "c55280b4da58e565d8a25e0e844dc27d0c96aaada7b90b4de70a45397faf604e");
	assert_string_equal(p->links[0].meta_sha256,
	                    "46e820dd4ceeddb24f74880c68c670cb37a310c0b5f5be7a6052fb6649401fd4");
	ow_page_free(p);
	p = load("pytorch-index/whl_torchvision_0.24.0_cu128_win_snippet_2025-10-15.html",
	         IDX "cu128/torchvision/");
	assert_int_equal(p->nlinks, 1);
	assert_string_equal(p->links[0].version, "0.24.0+cu128");
	assert_string_equal(p->links[0].sha256, "");
	ow_page_free(p);
}

/* --- attributes of copied dependency pages ------------------------------- */

#define FL "https://files.pythonhosted.org/packages/ab/cd/filelock-"
#define H64 "fa27b048d32198cda6e9cff0bf768e8683d98743903b7e5d2b1f5098ded1d343"

static void test_dependency_attributes(void **state)
{
	(void)state;
	const char *body =
	    "<!DOCTYPE html><html><head><title>Links for filelock</title></head><body>\n"
	    "<h1>Links for filelock</h1>\n"
	    "<a href=\"" FL "3.13.1-py3-none-any.whl#sha256=" H64
	    "\" data-requires-python=\"&gt;=3.8\" "
	    "data-dist-info-metadata=\"true\" "
	    "data-core-metadata=\"true\">filelock-3.13.1-py3-none-any.whl</a><br/>\n"
	    "<a href=\"" FL "3.0.0-py3-none-any.whl#md5=0123\" data-yanked=\"broken &amp; bad\" "
	    "data-upload-time=\"2023-10-13T09:00:00.123456Z\">filelock-3.0.0-py3-none-any.whl</"
	    "a><br/>\n"
	    "<a href=\"" FL
	    "3.0.1-py3-none-any.whl\" data-yanked data-dist-info-metadata=\"md5=ab\">\n"
	    "   filelock-3.0.1-py3-none-any.whl\n</a><br/>\n"
	    "<a href=\"" FL "3.13.1.tar.gz\" data-core-metadata=\"sha256=" H64
	    "\">filelock-3.13.1.tar.gz</a>\n"
	    "<a name=\"bottom\">no href: not a link</a>\n"
	    "</body></html>\n<!-- generated -->\n";
	struct ow_page *p = NULL;
	assert_int_equal(
	    ow_page_parse("https://pypi.org/simple/filelock/", body, strlen(body), NULL, NULL, &p),
	    0);
	assert_int_equal(p->nlinks, 4);
	assert_int_equal(p->nrejected, 0);
	assert_false(p->has_timestamp);
	const struct ow_link *l = &p->links[0];
	assert_string_equal(l->requires_python, ">=3.8");
	assert_true(l->has_meta);
	assert_string_equal(l->meta_sha256, "");
	assert_string_equal(l->sha256, H64);
	assert_false(l->yanked);
	assert_null(l->yanked_reason);
	assert_null(l->upload_time);
	l = &p->links[1];
	assert_true(l->yanked);
	assert_string_equal(l->yanked_reason, "broken & bad");
	assert_string_equal(l->upload_time, "2023-10-13T09:00:00.123456Z");
	assert_string_equal(l->sha256, "");
	assert_false(l->has_meta);
	l = &p->links[2];
	assert_true(l->yanked);
	assert_string_equal(l->yanked_reason, "");
	assert_string_equal(l->text, "filelock-3.0.1-py3-none-any.whl");
	assert_true(l->has_meta);
	assert_string_equal(l->meta_sha256, "");
	l = &p->links[3];
	assert_true(l->is_sdist);
	assert_string_equal(l->name, "filelock");
	assert_string_equal(l->version, "3.13.1");
	assert_string_equal(l->meta_sha256, H64);
	ow_page_free(p);
}

static void test_timestamp_trailer(void **state)
{
	(void)state;
	static const struct {
		const char *tail;
		int has;
		long long ts;
	} cases[] = {
	    {"</html>\n<!--TIMESTAMP 1697195006-->\n", 1, 1697195006},
	    {"</html>\n<!-- TIMESTAMP 42 -->", 1, 42},
	    {"</html>\n<!--TIMESTAMP abc-->", 0, 0},
	    {"</html>\n<!--TIMESTAMP -5-->", 0, 0},
	    {"</html>\n<!--TIMESTAMP 99999999999999999999999-->", 0, 0},
	    {"</html>\n<!--TIMESTAMPS 7-->", 0, 0},
	    {"</html>\n<!--TIMESTAMP 1-->\n<!--TIMESTAMP 2-->", 1, 1},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char body[512];
		struct ow_html_doc *d = NULL;
		snprintf(body, sizeof body, "<html><body><a href=\"/a\">a</a></body>%s",
		         cases[i].tail);
		assert_int_equal(ow_html_parse(body, strlen(body), NULL, &d), 0);
		assert_int_equal(d->nanchors, 1);
		assert_int_equal(d->has_timestamp, cases[i].has);
		assert_int_equal(d->timestamp, cases[i].ts);
		ow_html_doc_free(d);
	}
	ow_html_doc_free(NULL);
	ow_page_free(NULL);
}

static void test_raw_anchors(void **state)
{
	(void)state;
	const char *body = "<html><body><a href=\"/x\">one<a href=\"/y\"> two &#43; <b>bold</b></a>"
	                   "<a>no href</a><A HREF=\"/z\" HREF=\"/ignored\">z</A></body></html>";
	struct ow_html_doc *d = NULL;
	assert_int_equal(ow_html_parse(body, strlen(body), NULL, &d), 0);
	assert_int_equal(d->nanchors, 3);
	assert_string_equal(d->anchors[0].href, "/x");
	assert_string_equal(d->anchors[0].text, "one");
	assert_string_equal(d->anchors[1].text, "two + bold");
	assert_string_equal(d->anchors[2].href, "/z");
	assert_null(d->anchors[2].yanked);
	ow_html_doc_free(d);
}

/* Links that pip's parser (or a browser) would not see: inside CDATA, raw
 * text elements, unrendered content.  libxml2 reads the inner <a> of all but
 * script and style as elements, so each case checks the skip. */
static void test_hidden_links_skipped(void **state)
{
	(void)state;
	static const struct {
		const char *name, *before, *after;
	} wraps[] = {
	    {"cdata", "<![CDATA[", "]]>"},
	    {"cdata multi-line", "<![CDATA[\n\n", "\n]]>"},
	    {"textarea", "<textarea>", "</textarea>"},
	    {"template", "<template>", "</template>"},
	    {"noscript", "<noscript>", "</noscript>"},
	    {"title in body", "<title>", "</title>"},
	    {"script", "<script>document.write('", "')</script>"},
	    {"style", "<style>", "</style>"},
	    {"nested noscript in template", "<template><noscript>", "</noscript></template>"},
	};
	for (size_t i = 0; i < sizeof wraps / sizeof wraps[0]; i++) {
		char body[1024];
		snprintf(body, sizeof body,
		         "<html><head><title>Links for x</title></head><body>\n%s"
		         "<a href=\"hidden-1.0-py3-none-any.whl\">hidden-1.0-py3-none-any.whl</a>%s\n"
		         "<a href=\"x-1.0-py3-none-any.whl\">x-1.0-py3-none-any.whl</a>\n"
		         "</body></html>\n",
		         wraps[i].before, wraps[i].after);
		struct ow_html_doc *d = NULL;
		int rc = ow_html_parse(body, strlen(body), NULL, &d);
		if (rc || d->nanchors != 1 || strcmp(d->anchors[0].href, "x-1.0-py3-none-any.whl")) {
			print_error("%s: rc %d, %zu anchors, first %s\n", wraps[i].name, rc,
			            d ? d->nanchors : 0, d && d->nanchors ? d->anchors[0].href : "-");
			fail();
		}
		/* blanking keeps the newlines: the visible link's line is right */
		int want = 3 + (strchr(wraps[i].before, '\n') ? 2 : 0) +
		           (strchr(wraps[i].after, '\n') ? 1 : 0);
		assert_int_equal(d->anchors[0].line, want);
		assert_string_equal(d->anchors[0].text, "x-1.0-py3-none-any.whl");
		ow_html_doc_free(d);
	}
	/* an unterminated CDATA section hides the rest of the page */
	const char *cut = "<html><body><a href=\"a\">a</a><![CDATA[<a href=\"b\">b</a></body></html>";
	struct ow_html_doc *d = NULL;
	assert_int_equal(ow_html_parse(cut, strlen(cut), NULL, &d), 0);
	assert_int_equal(d->nanchors, 1);
	assert_string_equal(d->anchors[0].href, "a");
	ow_html_doc_free(d);
}

static void test_empty_project_pages_ok(void **state)
{
	(void)state;
	static const char *const ok[] = {
	    "<!DOCTYPE html><html><body><h1>Links for foo</h1></body></html>",
	    "<html><head><title>Links for foo</title></head><body>\n</body></html>",
	    "<html></html>",
	};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		struct ow_page *p = NULL;
		assert_int_equal(ow_page_parse(IDX "foo/", ok[i], strlen(ok[i]), NULL, NULL, &p),
		                 0);
		assert_int_equal(p->nlinks, 0);
		ow_page_free(p);
	}
}

/* --- hostile pages: one named test each ---------------------------------- */

#define GOOD_A                                                                                     \
	"<a href=\"/whl/cpu/torch-2.4.1%2Bcpu-cp310-cp310-linux_x86_64.whl\">"                     \
	"torch-2.4.1+cpu-cp310-cp310-linux_x86_64.whl</a>"

struct pcase {
	const char *name;
	char *(*make)(size_t *len); /* builds the body */
	int rc;
	const char *phrase;
};

static char *dup_str(const char *s, size_t *len)
{
	*len = strlen(s);
	char *b = malloc(*len + 1);
	assert_non_null(b);
	memcpy(b, s, *len + 1);
	return b;
}

static char *repeat(const char *head, const char *unit, size_t n, const char *tail, size_t *len)
{
	size_t h = strlen(head), u = strlen(unit), t = strlen(tail);
	char *b = malloc(h + u * n + t + 1);
	assert_non_null(b);
	memcpy(b, head, h);
	for (size_t i = 0; i < n; i++)
		memcpy(b + h + i * u, unit, u);
	memcpy(b + h + u * n, tail, t + 1);
	*len = h + u * n + t;
	return b;
}

static char *make_oversized(size_t *len)
{
	*len = OW_HTML_MAX_BYTES + 1;
	char *b = malloc(*len);
	assert_non_null(b);
	memset(b, ' ', *len);
	memcpy(b, "<html>", 6);
	return b;
}

static char *make_million_anchors(size_t *len)
{
	return repeat("<html><body>\n", "<a href=\"x\">x</a>", 1000000, "</body></html>", len);
}

static char *make_deep_nesting(size_t *len)
{
	return repeat("<html><body>\n" GOOD_A, "<div>", 100000, "</body></html>", len);
}

static char *make_invalid_utf8(size_t *len)
{
	return dup_str("<html><body>" GOOD_A "<a href=\"/x\">caf\xe9</a></body></html>", len);
}

static char *make_overlong_utf8(size_t *len)
{
	return dup_str("<html><body>" GOOD_A "<a href=\"/x\">\xc0\xaf</a></body></html>", len);
}

static char *make_surrogate_utf8(size_t *len)
{
	return dup_str("<html><body>" GOOD_A "\xed\xa0\x80</body></html>", len);
}

static char *make_nul_bytes(size_t *len)
{
	static const char s[] = "<html><body>" GOOD_A "\0<a href=\"/x\">x</a></body></html>";
	char *b = malloc(sizeof s);
	assert_non_null(b);
	memcpy(b, s, sizeof s);
	*len = sizeof s - 1;
	return b;
}

static char *make_portal_form(size_t *len)
{
	return dup_str("<html><head><title>Hotel WiFi</title></head><body><h1>Welcome</h1>"
	               "<form action=\"/login\"><input name=\"room\"></form>"
	               "<a href=\"/terms\">Terms</a></body></html>",
	               len);
}

static char *make_portal_refresh(size_t *len)
{
	return dup_str(
	    "<html><head><meta http-equiv=\"Refresh\" content=\"0; url=http://10.0.0.1/\">"
	    "</head><body>Redirecting</body></html>",
	    len);
}

static char *make_portal_text(size_t *len)
{
	return dup_str("<html><head><title>Airport Wi-Fi</title></head><body><p>Please accept the "
	               "terms of use to continue.</p></body></html>",
	               len);
}

static char *make_json(size_t *len)
{
	/* JSON that is not a PEP 691 page (those are read: test_simplejson.c) */
	return dup_str("\n{\"message\": \"Not Found\", \"code\": 404}", len);
}

static char *make_json_array(size_t *len)
{
	return dup_str("[{\"filename\": \"torch-2.4.1-cp310-cp310-linux_x86_64.whl\"}]", len);
}

static char *make_base_href(size_t *len)
{
	return dup_str("<html><head><base href=\"https://evil.example/\"></head><body>" GOOD_A
	               "</body></html>",
	               len);
}

static char *make_empty(size_t *len)
{
	return dup_str(" \r\n\t ", len);
}

static char *make_plain_text(size_t *len)
{
	return dup_str("Service Unavailable", len);
}

static struct pcase page_cases[] = {
    {"oversized_page", make_oversized, OW_ETOOBIG, "over the 67108864-byte cap"},
    {"million_anchors", make_million_anchors, OW_ETOOBIG, "more than 200000 anchors"},
    {"deep_nesting", make_deep_nesting, OW_ETOOBIG, "nested deeper than 256"},
    {"invalid_utf8", make_invalid_utf8, OW_EPARSE, "invalid UTF-8 at byte"},
    {"overlong_utf8", make_overlong_utf8, OW_EPARSE, "invalid UTF-8"},
    {"surrogate_utf8", make_surrogate_utf8, OW_EPARSE, "invalid UTF-8"},
    {"nul_bytes", make_nul_bytes, OW_EPARSE, "NUL byte at offset"},
    {"captive_portal_form", make_portal_form, OW_EPARSE,
     "looks like a captive portal or login page (it has a <form>; title \"Hotel WiFi\")"},
    {"captive_portal_refresh", make_portal_refresh, OW_EPARSE, "meta http-equiv=refresh"},
    {"captive_portal_no_links", make_portal_text, OW_EPARSE,
     "no links and text that is not an index (title \"Airport Wi-Fi\")"},
    {"json_object", make_json, OW_EPARSE, "JSON page: no meta.api-version"},
    {"json_array", make_json_array, OW_EPARSE, "looks like JSON"},
    {"base_href", make_base_href, OW_EPOLICY, "<base href=\"https://evil.example/\">"},
    {"empty_body", make_empty, OW_EPARSE, "empty body"},
    {"plain_text", make_plain_text, OW_EPARSE, "no HTML markup"},
};

static void page_case(void **state)
{
	const struct pcase *c = *state;
	size_t len = 0;
	char *body = c->make(&len);
	struct ow_page *p = NULL;
	int rc = ow_page_parse(IDX "cpu/torch/", body, len, NULL, NULL, &p);
	free(body);
	if (rc != c->rc)
		print_error("%s: rc %s (%s)\n", c->name, ow_err_name(rc), ow_err_detail());
	assert_int_equal(rc, c->rc);
	assert_null(p);
	assert_has(ow_err_detail(), c->phrase);
}

static void test_custom_limits(void **state)
{
	(void)state;
	struct ow_html_limits lim;
	struct ow_html_doc *d = NULL;
	const char *body = "<html><body><a href=\"/a\">a</a><a href=\"/b\">b</a></body></html>";
	ow_html_limits_default(&lim);
	lim.max_anchors = 1;
	assert_int_equal(ow_html_parse(body, strlen(body), &lim, &d), OW_ETOOBIG);
	lim.max_anchors = 2;
	lim.max_bytes = 10;
	assert_int_equal(ow_html_parse(body, strlen(body), &lim, &d), OW_ETOOBIG);
	lim.max_bytes = 1000;
	lim.max_depth = 2;
	assert_int_equal(ow_html_parse(body, strlen(body), &lim, &d), OW_ETOOBIG);
	lim.max_depth = 3;
	assert_int_equal(ow_html_parse(body, strlen(body), &lim, &d), 0);
	assert_int_equal(d->nanchors, 2);
	ow_html_doc_free(d);
}

/* An <a> with n attributes `d<i>=1` after its href (and, with quoted, a
 * quoted value holding '>' and blanks first, which does not end the tag). */
static char *many_attrs(size_t n, int quoted)
{
	char *b = malloc(n * 16 + 200);
	size_t l = 0;
	assert_non_null(b);
	l += (size_t)sprintf(b, "<html><body><a href=\"/x-1.0.tar.gz\"%s",
	                     quoted ? " title=\"a > b c d\"" : "");
	for (size_t i = 0; i < n; i++)
		l += (size_t)sprintf(b + l, " d%zu=1", i);
	sprintf(b + l, ">x</a></body></html>");
	return b;
}

/* tmpl with its '@' replaced by words. */
static void with_words(char *out, size_t n, const char *tmpl, const char *words)
{
	const char *at = strchr(tmpl, '@');
	assert_non_null(at);
	tu_fmt(out, n, "%.*s%s%s", (int)(at - tmpl), tmpl, words, at + 1);
}

/* libxml2 compares each attribute of a tag with all before it: 200,000 on
 * one <a> took a minute of CPU.  Over OW_HTML_MAX_ATTRS the page is refused
 * before libxml2 sees it, in linear time. */
static void test_attribute_cap(void **state)
{
	(void)state;
	struct ow_html_doc *d = NULL;
	char *b = many_attrs(OW_HTML_MAX_ATTRS - 1, 0); /* with href: exactly the cap */
	assert_int_equal(ow_html_parse(b, strlen(b), NULL, &d), 0);
	assert_int_equal(d->nanchors, 1);
	ow_html_doc_free(d);
	free(b);
	for (int quoted = 0; quoted <= 1; quoted++) {
		b = many_attrs(OW_HTML_MAX_ATTRS, quoted);
		assert_int_equal(ow_html_parse(b, strlen(b), NULL, &d), OW_EPARSE);
		assert_has(ow_err_detail(), "<a> at byte 12 has more than 64 attributes");
		free(b);
	}
	/* no tags in comments or script text (an inline script's `i<n` is no tag);
	 * what libxml2 may parse as a tag is counted */
	static const char *const ok[] = {
	    "<html><body><!-- <a @> --><a href=\"/x-1.0.tar.gz\">x</a></body></html>",
	    ("<html><head><script>for (i=0; i<n @; i++) {}</script></head><body><a href=\"/x.tar.gz\">"
	     "x</a></body></html>"), /* one string: clang's -Wstring-concatenation */
	    "<html><head><style>p<q @</style></head><body><a href=\"/x.tar.gz\">x</a></body></html>",
	};
	static const char *const refused[] = {
	    "<html><body><!--> <a @> --><a href=\"/x-1.0.tar.gz\">x</a></body></html>",
	    "<html><body><!-- x --!> <a @> --><a href=\"/x-1.0.tar.gz\">x</a></body></html>",
	    "<html><body><script/><a @></a><!-- </b> --></body></html>",
	    "<html><body><_x @><a href=\"/x-1.0.tar.gz\">x</a></body></html>",
	};
	char words[70 * 4 + 1] = "", page[1024];
	for (int i = 0; i < 70; i++)
		strcat(words, " w=1");
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		with_words(page, sizeof page, ok[i], words);
		if (ow_html_parse(page, strlen(page), NULL, &d))
			fail_msg("ok[%zu]: %s", i, ow_err_detail());
		ow_html_doc_free(d);
	}
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		with_words(page, sizeof page, refused[i], words);
		if (ow_html_parse(page, strlen(page), NULL, &d) != OW_EPARSE)
			fail_msg("refused[%zu] was not", i);
		assert_has(ow_err_detail(), "more than 64 attributes");
	}
	b = many_attrs(200000, 0);
	double t0 = ow_mono_s();
	assert_int_equal(ow_html_parse(b, strlen(b), NULL, &d), OW_EPARSE);
	double took = ow_mono_s() - t0;
	assert_has(ow_err_detail(), "more than 64 attributes");
	if (took > 2.0)
		fail_msg("200,000 attributes took %.1f s", took);
	free(b);
}

static void test_page_url_refused(void **state)
{
	(void)state;
	struct ow_page *p = NULL;
	const char *body = "<html><body>" GOOD_A "</body></html>";
	assert_int_equal(ow_page_parse("http://download.pytorch.org/whl/cpu/torch/", body,
	                               strlen(body), NULL, NULL, &p),
	                 OW_EPOLICY);
	assert_has(ow_err_detail(), "plain http");
	assert_null(p);
}

/* PyPI pages of old projects (setuptools, six, numpy) still list eggs,
 * Windows installers and .tar.bz2 sdists next to the wheels. pip ignores
 * them; so do we: counted as skipped, never a rejection (which would read as
 * a hostile page) and never a link. */
static void test_legacy_links_skipped(void **state)
{
	(void)state;
	const char *body =
	    "<html><body>\n"
	    "<a href=\"https://files.pythonhosted.org/packages/ab/cd/setuptools-0.6c11-py2.7.egg#md5=fe1f\">"
	    "setuptools-0.6c11-py2.7.egg</a>\n"
	    "<a href=\"https://files.pythonhosted.org/packages/ab/cd/setuptools-0.6c11.win32-py2.7.exe\">"
	    "setuptools-0.6c11.win32-py2.7.exe</a>\n"
	    "<a href=\"https://files.pythonhosted.org/packages/ab/cd/setuptools-0.7.tar.bz2?x=1\">setuptools-0.7.tar.bz2</a>\n"
	    "<a href=\"https://files.pythonhosted.org/packages/ab/cd/setuptools-0.7.TGZ\">setuptools-0.7.TGZ</a>\n"
	    "<a href=\"https://files.pythonhosted.org/packages/ab/cd/setuptools-0.7.msi\">setuptools-0.7.msi</a>\n"
	    "<a href=\"https://files.pythonhosted.org/packages/ab/cd/setuptools-0.6c11.tar.gz\">setuptools-0.6c11.tar.gz</a>\n"
	    "<a href=\"https://files.pythonhosted.org/packages/ab/cd/setuptools-80.9.0-py3-none-any.whl#sha256=" H64
	    "\">setuptools-80.9.0-py3-none-any.whl</a>\n"
	    "<a href=\"https://files.pythonhosted.org/packages/ab/cd/setuptools-80.9.0-py3-none-any.whl.exe\">"
	    "trap</a>\n"
	    "<a href=\"https://files.pythonhosted.org/packages/ab/cd/not-a-dist.txt\">x</a>\n"
	    "</body></html>\n";
	struct ow_page *p = NULL;
	assert_int_equal(
	    ow_page_parse("https://pypi.org/simple/setuptools/", body, strlen(body), NULL, NULL, &p),
	    0);
	assert_int_equal(p->nskipped, 6);
	assert_int_equal(p->nlinks, 2);
	assert_true(p->links[0].is_sdist);
	assert_string_equal(p->links[0].version, "0.6c11");
	assert_false(p->links[1].is_sdist);
	assert_string_equal(p->links[1].version, "80.9.0");
	assert_int_equal(p->nrejected, 1);
	assert_has(p->rejected[0].reason, "not-a-dist.txt");
	ow_page_free(p);
}

/* pip's --find-links: an nginx autoindex (real output of nginx 1.22 with
 * `autoindex on`) cuts a long name's link text; the file is named by its
 * href.  ../, a sort link and a README pass without a word; a wheel on a
 * host not allowed is still refused. */
static void test_find_links_autoindex(void **state)
{
	(void)state;
	static const char body[] =
	    "<html>\r\n<head><title>Index of /wheels/</title></head>\r\n<body>\r\n"
	    "<h1>Index of /wheels/</h1><hr><pre><a href=\"../\">../</a>\r\n"
	    "<a href=\"?C=N;O=D\">Name</a>\r\n"
	    "<a href=\"README.txt\">README.txt</a>   07-Dec-2026 20:10   8\r\n"
	    "<a href=\"MarkupSafe-3.0.2-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl\">"
	    "MarkupSafe-3.0.2-cp311-cp311-manylinux_2_17_x86..&gt;</a> 07-Dec-2026 20:10  22961\r\n"
	    "<a href=\"torch-2.9.0%2Bcpu-cp311-cp311-manylinux_2_28_x86_64.whl#sha256="
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\">"
	    "torch-2.9.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl</a>  07-Dec-2026 20:10  971\r\n"
	    "<a href=\"https://evil.example/x-1.0-py3-none-any.whl\">x-1.0-py3-none-any.whl</a>\r\n"
	    "</pre><hr></body>\r\n</html>\r\n";
	const char *url = "http://127.0.0.1:8080/wheels/";
	struct ow_url_policy pol;
	struct ow_page *p = NULL;
	assert_int_equal(ow_url_policy_init(&pol), 0);
	assert_int_equal(ow_url_policy_add_trusted(&pol, "127.0.0.1"), 0);
	assert_int_equal(ow_page_parse_find_links(url, body, strlen(body), NULL, &pol, &p), 0);
	assert_int_equal(p->nlinks, 2);
	assert_string_equal(p->links[0].filename,
	                    "MarkupSafe-3.0.2-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl");
	assert_string_equal(p->links[0].name, "MarkupSafe");
	assert_string_equal(p->links[1].filename, "torch-2.9.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl");
	assert_string_equal(p->links[1].version, "2.9.0+cpu");
	assert_string_equal(p->links[1].sha256,
	                    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	assert_int_equal(p->nrejected, 1);
	assert_non_null(strstr(p->rejected[0].reason, "evil.example"));
	assert_int_equal(p->nskipped, 0);
	ow_page_free(p);
	/* as an index page the cut text is refused: the text must be the name */
	assert_int_equal(ow_page_parse(url, body, strlen(body), NULL, &pol, &p), 0);
	assert_int_equal(p->nlinks, 1);
	ow_page_free(p);
	ow_url_policy_clear(&pol);
}

int main(void)
{
	static const struct CMUnitTest fixed[] = {
	    cmocka_unit_test(test_real_page_counts),
	    cmocka_unit_test(test_torch_rows),
	    cmocka_unit_test(test_vision_audio_rows),
	    cmocka_unit_test(test_cpu_snippet_local_labels),
	    cmocka_unit_test(test_nightly_snippet_metadata_no_hash),
	    cmocka_unit_test(test_r2_snippet_second_host),
	    cmocka_unit_test(test_270_snippet_aarch64_without_hash),
	    cmocka_unit_test(test_single_row_snippets),
	    cmocka_unit_test(test_dependency_attributes),
	    cmocka_unit_test(test_timestamp_trailer),
	    cmocka_unit_test(test_raw_anchors),
	    cmocka_unit_test(test_hidden_links_skipped),
	    cmocka_unit_test(test_empty_project_pages_ok),
	    cmocka_unit_test(test_custom_limits),
	    cmocka_unit_test(test_page_url_refused),
	    cmocka_unit_test(test_attribute_cap),
    cmocka_unit_test(test_legacy_links_skipped),
	    cmocka_unit_test(test_find_links_autoindex),
	};
	enum { NF = sizeof fixed / sizeof fixed[0], NP = sizeof page_cases / sizeof page_cases[0] };
	struct CMUnitTest tests[NF + NP];
	memcpy(tests, fixed, sizeof fixed);
	for (size_t i = 0; i < NP; i++) {
		struct CMUnitTest t = {page_cases[i].name, page_case, NULL, NULL, &page_cases[i]};
		tests[NF + i] = t;
	}
	return _cmocka_run_group_tests("html", tests, NF + NP, NULL, NULL);
}
