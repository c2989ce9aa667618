/* test_url.c - URL parsing, RFC 3986 resolution, decoding, #sha256, and the
 * link policy: one named test per refused link of docs/index-quirks.md,
 * each on a page whose good link must survive. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "offwheel/error.h"
#include "pagelinks.h"
#include "url.h"

#define PAGE "https://download.pytorch.org/whl/cpu/torch/"
#define GOOD_FILE "torch-2.4.1+cpu-cp310-cp310-linux_x86_64.whl"
#define GOOD_HASH "833490a28ac156762ed6adaa7c695879564fa2fd0dc51bcf3fdb2c7b47dc55e6"
#define GOOD_HREF "/whl/cpu/torch-2.4.1%2Bcpu-cp310-cp310-linux_x86_64.whl#sha256=" GOOD_HASH
#define GOOD_A "<a href=\"" GOOD_HREF "\">" GOOD_FILE "</a><br/>\n"
#define WHL "torch-2.4.1-cp310-cp310-manylinux_2_17_aarch64.manylinux2014_aarch64.whl"
#define H64 "fa27b048d32198cda6e9cff0bf768e8683d98743903b7e5d2b1f5098ded1d343"
#define H64B "30be2844d0c939161a11073bfbaf645f1c7cb43f62f46cc6e4df1c119fb2a798"

static void assert_has(const char *hay, const char *needle)
{
	if (!hay || !strstr(hay, needle)) {
		print_error("expected \"%s\" in \"%s\"\n", needle, hay ? hay : "(null)");
		fail();
	}
}

/* --- resolution ---------------------------------------------------------- */

struct rcase {
	const char *base, *href, *want;
};

#define RFC "http://a/b/c/d;p?q"
#define NIGHTLY "https://download.pytorch.org/whl/nightly/cu126/torch/"

static const struct rcase resolve_cases[] = {
    /* RFC 3986 §5.4.1 normal examples */
    {RFC, "g:h", "g:h"},
    {RFC, "g", "http://a/b/c/g"},
    {RFC, "./g", "http://a/b/c/g"},
    {RFC, "g/", "http://a/b/c/g/"},
    {RFC, "/g", "http://a/g"},
    {RFC, "//g", "http://g"},
    {RFC, "?y", "http://a/b/c/d;p?y"},
    {RFC, "g?y", "http://a/b/c/g?y"},
    {RFC, "#s", "http://a/b/c/d;p?q#s"},
    {RFC, "g#s", "http://a/b/c/g#s"},
    {RFC, "g?y#s", "http://a/b/c/g?y#s"},
    {RFC, ";x", "http://a/b/c/;x"},
    {RFC, "g;x", "http://a/b/c/g;x"},
    {RFC, "g;x?y#s", "http://a/b/c/g;x?y#s"},
    {RFC, "", "http://a/b/c/d;p?q"},
    {RFC, ".", "http://a/b/c/"},
    {RFC, "./", "http://a/b/c/"},
    {RFC, "..", "http://a/b/"},
    {RFC, "../", "http://a/b/"},
    {RFC, "../g", "http://a/b/g"},
    {RFC, "../..", "http://a/"},
    {RFC, "../../", "http://a/"},
    {RFC, "../../g", "http://a/g"},
    /* §5.4.2 abnormal examples */
    {RFC, "../../../g", "http://a/g"},
    {RFC, "../../../../g", "http://a/g"},
    {RFC, "/./g", "http://a/g"},
    {RFC, "/../g", "http://a/g"},
    {RFC, "g.", "http://a/b/c/g."},
    {RFC, ".g", "http://a/b/c/.g"},
    {RFC, "g..", "http://a/b/c/g.."},
    {RFC, "..g", "http://a/b/c/..g"},
    {RFC, "./../g", "http://a/b/g"},
    {RFC, "./g/.", "http://a/b/c/g/"},
    {RFC, "g/./h", "http://a/b/c/g/h"},
    {RFC, "g/../h", "http://a/b/c/h"},
    {RFC, "g;x=1/./y", "http://a/b/c/g;x=1/y"},
    {RFC, "g;x=1/../y", "http://a/b/c/y"},
    {RFC, "g?y/./x", "http://a/b/c/g?y/./x"},
    {RFC, "g?y/../x", "http://a/b/c/g?y/../x"},
    {RFC, "g#s/./x", "http://a/b/c/g#s/./x"},
    {RFC, "g#s/../x", "http://a/b/c/g#s/../x"},
    {RFC, "http:g", "http:g"},
    /* the forms seen on the PyTorch index */
    {NIGHTLY, "/whl/nightly/cu126/torch-2.6.0.dev20250102%2Bcu126-cp313-cp313-win_amd64.whl",
     "https://download.pytorch.org/whl/nightly/cu126/"
     "torch-2.6.0.dev20250102%2Bcu126-cp313-cp313-win_amd64.whl"},
    {NIGHTLY, "https://download-r2.pytorch.org/whl/cu128/t.whl#sha256=ab",
     "https://download-r2.pytorch.org/whl/cu128/t.whl#sha256=ab"},
    {NIGHTLY, "t-1.whl", NIGHTLY "t-1.whl"},
    {NIGHTLY, "//download-r2.pytorch.org/x.whl", "https://download-r2.pytorch.org/x.whl"},
    {"https://Download.PyTorch.org:443/whl/", "x.whl",
     "https://download.pytorch.org:443/whl/x.whl"},
    {"file:///srv/index/torch/", "../wheels/t.whl", "file:///srv/index/wheels/t.whl"},
    {"https://h", "x.whl", "https://h/x.whl"},
};

static void test_resolve_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof resolve_cases / sizeof resolve_cases[0]; i++) {
		const struct rcase *c = &resolve_cases[i];
		char *out = NULL;
		int rc = ow_url_resolve(c->base, c->href, &out);
		if (rc || strcmp(out, c->want)) {
			print_error("resolve(%s, %s) = %s (rc %d %s), want %s\n", c->base, c->href,
			            out ? out : "-", rc, ow_err_detail(), c->want);
			fail();
		}
		free(out);
	}
}

/* --- parsing ------------------------------------------------------------- */

static void test_parse_components(void **state)
{
	(void)state;
	struct ow_url u;
	assert_int_equal(ow_url_parse("HTTPS://User:pw@Example.ORG:8443/a/b%2Bc?x=1#frag", &u), 0);
	assert_string_equal(u.scheme, "https");
	assert_string_equal(u.userinfo, "User:pw");
	assert_string_equal(u.host, "example.org");
	assert_int_equal(u.port, 8443);
	assert_string_equal(u.path, "/a/b%2Bc");
	assert_string_equal(u.query, "x=1");
	assert_string_equal(u.fragment, "frag");
	ow_url_clear(&u);
	assert_int_equal(ow_url_parse("http://[::1]:8080/", &u), 0);
	assert_string_equal(u.host, "[::1]");
	assert_int_equal(u.port, 8080);
	ow_url_clear(&u);
	assert_int_equal(ow_url_parse("file:///srv/x", &u), 0);
	assert_string_equal(u.host, "");
	assert_string_equal(u.path, "/srv/x");
	assert_null(u.query);
	ow_url_clear(&u);
}

static void test_parse_rejects(void **state)
{
	(void)state;
	static const char *const bad[] = {
	    "relative/path",    "https:///nohost", "https://h:/",    "https://h:0/",
	    "https://h:65536/", "https://h:8x/",   "https://ho st/", "https://h%41/",
	    "https://[::1/",    "https://[zz]/",   "http:",          "//h/x",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct ow_url u;
		if (ow_url_parse(bad[i], &u) != OW_EPARSE) {
			print_error("accepted \"%s\"\n", bad[i]);
			fail();
		}
		assert_null(u.scheme);
	}
	ow_url_clear(NULL);
}

static void test_format_roundtrip(void **state)
{
	(void)state;
	const char *s = "https://u@h:1/p?q#f";
	struct ow_url u;
	char *out = NULL;
	assert_int_equal(ow_url_parse(s, &u), 0);
	assert_int_equal(ow_url_format(&u, &out), 0);
	assert_string_equal(out, s);
	free(out);
	ow_url_clear(&u);
}

/* --- decoding ------------------------------------------------------------ */

static void test_percent_decode_once(void **state)
{
	(void)state;
	static const struct {
		const char *in, *want; /* want NULL: an error */
	} cases[] = {
	    {"torch-2.4.1%2Bcpu", "torch-2.4.1+cpu"},
	    {"%252B", "%2B"}, /* once, not twice */
	    {"a%2fb", "a/b"},
	    {"plain", "plain"},
	    {"%zz", NULL},
	    {"%2", NULL},
	    {"%", NULL},
	    {"x%00y", NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *out = NULL;
		int rc = ow_url_percent_decode(cases[i].in, strlen(cases[i].in), &out);
		if (cases[i].want) {
			assert_int_equal(rc, 0);
			assert_string_equal(out, cases[i].want);
		} else {
			assert_int_equal(rc, OW_EPARSE);
		}
		free(out);
	}
}

static void test_basename_decoded(void **state)
{
	(void)state;
	char *b = NULL;
	assert_int_equal(ow_url_basename_decoded("https://download.pytorch.org/whl/cpu/"
	                                         "torch-2.4.1%2Bcpu-cp310-cp310-linux_x86_64.whl"
	                                         "?x=1#sha256=00",
	                                         &b),
	                 0);
	assert_string_equal(b, GOOD_FILE);
	free(b);
	assert_int_equal(ow_url_basename_decoded("/whl/x%252B.whl", &b), 0);
	assert_string_equal(b, "x%2B.whl");
	free(b);
	assert_int_equal(ow_url_basename_decoded("https://h/whl/", &b), OW_EPARSE);
	assert_has(ow_err_detail(), "empty file name");
	assert_int_equal(ow_url_basename_decoded("https://h/a%2Fb.whl", &b), OW_EPARSE);
	assert_has(ow_err_detail(), "'/'");
	assert_int_equal(ow_url_basename_decoded("https://h/a%5Cb.whl", &b), OW_EPARSE);
	assert_int_equal(ow_url_basename_decoded("https://h/a%0Ab.whl", &b), OW_EPARSE);
	assert_has(ow_err_detail(), "control character");
}

/* --- file: URLs to paths ------------------------------------------------ */

static void test_file_path(void **state)
{
	(void)state;
	static const struct {
		const char *url, *want; /* want NULL: refused */
	} cases[] = {
	    {"file:///srv/www/whl/torch-2.4.1%2Bcpu-cp310-none-any.whl",
	     "/srv/www/whl/torch-2.4.1+cpu-cp310-none-any.whl"},
	    {"file://localhost/srv/a%20b.whl?x=1#sha256=00", "/srv/a b.whl"},
	    {"file:///srv/%252B.whl", "/srv/%2B.whl"}, /* decoded once */
	    {"file:///", "/"},
	    {"file://otherhost/srv/a.whl", NULL},
	    {"file://user@localhost/srv/a.whl", NULL},
	    {"file://localhost:99/srv/a.whl", NULL},
	    {"file:srv/a.whl", NULL},
	    {"https://h/srv/a.whl", NULL},
	    {"file:///srv/%2E%2E/etc/passwd", NULL},
	    {"file:///srv/./a.whl", NULL},
	    {"file:///srv/a%00.whl", NULL},
	    {"file:///srv/a%0A.whl", NULL},
	    {"file:///srv/a%5Cb.whl", NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *out = NULL;
		int rc = ow_url_file_path(cases[i].url, &out);
		if (cases[i].want) {
			assert_int_equal(rc, 0);
			assert_string_equal(out, cases[i].want);
		} else {
			if (rc == 0)
				print_error("%s: accepted as %s\n", cases[i].url, out);
			assert_true(rc < 0);
			assert_null(out);
		}
		free(out);
	}
}

/* --- the #sha256 fragment ------------------------------------------------ */

static void test_fragment_sha256(void **state)
{
	(void)state;
	static const struct {
		const char *href, *want, *err; /* err: phrase of the error, NULL if ok */
	} cases[] = {
	    {"x.whl", "", NULL},
	    {"x.whl#", "", NULL},
	    {"x.whl#sha256=" H64, H64, NULL},
	    {"x.whl#SHA256=FA27B048D32198CDA6E9CFF0BF768E8683D98743903B7E5D2B1F5098DED1D343", H64,
	     NULL},
	    {"x.whl#md5=0123", "", NULL},
	    {"x.whl#md5=0123&sha256=" H64, H64, NULL},
	    {"x.whl#sha256=" H64 "0", NULL, "65 characters"},
	    {"x.whl#sha256=abc", NULL, "expected 64 hex digits"},
	    {"x.whl#sha256=", NULL, "expected 64 hex digits"},
	    {"x.whl#sha256="
	     "ga27b048d32198cda6e9cff0bf768e8683d98743903b7e5d2b1f5098ded1d343",
	     NULL, "non-hex"},
	    {"x.whl#sha256=" H64 "&sha256=" H64B, NULL, "given twice"},
	    {"x.whl#sha256=" H64 "&sha256=" H64, NULL, "given twice"},
	    {"x.whl#sha256=" H64 "#sha256=" H64B, NULL, "two '#'"},
	    {"x.whl#sha256", NULL, "without a value"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char out[65] = "junk";
		int rc = ow_url_fragment_sha256(cases[i].href, out);
		if (cases[i].err) {
			assert_int_equal(rc, OW_EPARSE);
			assert_has(ow_err_detail(), cases[i].err);
			assert_string_equal(out, "");
		} else {
			assert_int_equal(rc, 0);
			assert_string_equal(out, cases[i].want);
		}
	}
}

/* --- policy, direct ------------------------------------------------------ */

static void test_policy_defaults_and_hosts(void **state)
{
	(void)state;
	struct ow_url_policy p;
	char *out = NULL;
	assert_int_equal(ow_url_policy_init(&p), 0);
	assert_int_equal(p.nhosts, 5);
	assert_int_equal(ow_url_check_page(&p, PAGE), 0);
	assert_int_equal(
	    ow_url_check(&p, PAGE, "HTTPS://Files.PythonHosted.org/p/a.whl#sha256=1", &out), 0);
	assert_string_equal(out, "https://files.pythonhosted.org/p/a.whl");
	free(out);
	assert_int_equal(ow_url_check(&p, PAGE, "https://pypi.nvidia.com/x/y.whl", &out), 0);
	free(out);
	assert_int_equal(ow_url_check_page(&p, "https://evil.example/simple/torch/"), OW_EPOLICY);
	assert_has(ow_err_detail(), "not an allowed index host");
	assert_int_equal(ow_url_check_page(&p, "http://download.pytorch.org/whl/"), OW_EPOLICY);
	assert_has(ow_err_detail(), "plain http");
	assert_int_equal(ow_url_check_page(&p, "ftp://download.pytorch.org/whl/"), OW_EPOLICY);
	assert_int_equal(ow_url_check_page(&p, "https://u@download.pytorch.org/whl/"), OW_EPOLICY);
	assert_has(ow_err_detail(), "userinfo");
	assert_int_equal(ow_url_policy_add_host(&p, "user@bad"), OW_EINVAL);
	assert_int_equal(ow_url_policy_add_host(&p, "Mirror.Example:8443"), 0);
	assert_string_equal(p.hosts[5], "mirror.example:8443");
	assert_int_equal(ow_url_check(&p, PAGE, "https://mirror.example:8443/a.whl", &out), 0);
	free(out);
	assert_int_equal(ow_url_check(&p, PAGE, "https://mirror.example/a.whl", &out), OW_EPOLICY);
	assert_has(ow_err_detail(), "not an allowed download host");
	ow_url_policy_clear(&p);
	ow_url_policy_clear(NULL);
}

static void test_policy_trusted_http(void **state)
{
	(void)state;
	struct ow_url_policy p;
	const char *page = "http://mirror.lan:8080/simple/torch/";
	char *out = NULL;
	assert_int_equal(ow_url_policy_init(&p), 0);
	assert_int_equal(ow_url_check_page(&p, page), OW_EPOLICY);
	assert_int_equal(ow_url_policy_add_trusted(&p, "mirror.lan:8080"), 0);
	assert_int_equal(ow_url_check_page(&p, page), 0);
	/* ".." is read as pip reads it: resolved against the page, then judged */
	assert_int_equal(ow_url_check(&p, page, "../../files/t-1-py3-none-any.whl", &out), 0);
	assert_string_equal(out, "http://mirror.lan:8080/files/t-1-py3-none-any.whl");
	free(out);
	assert_int_equal(ow_url_check(&p, page, "../%2e%2e/files/t-1-py3-none-any.whl", &out),
	                 OW_EPOLICY);
	assert_has(ow_err_detail(), "path traversal");
	assert_int_equal(ow_url_check(&p, page, "/files/t-1-py3-none-any.whl", &out), 0);
	assert_string_equal(out, "http://mirror.lan:8080/files/t-1-py3-none-any.whl");
	free(out);
	assert_int_equal(ow_url_check(&p, page, "http://mirror.lan:9090/t.whl", &out), OW_EPOLICY);
	assert_int_equal(ow_url_check(&p, page, "http://download.pytorch.org/t.whl", &out),
	                 OW_EPOLICY);
	assert_has(ow_err_detail(), "plain http link refused");
	assert_int_equal(ow_url_check(&p, page, "https://download.pytorch.org/t.whl", &out), 0);
	free(out);
	ow_url_policy_clear(&p);
}

static void test_policy_file_index(void **state)
{
	(void)state;
	struct ow_url_policy p;
	const char *page = "file:///srv/index/simple/torch/";
	char *out = NULL;
	assert_int_equal(ow_url_policy_init(&p), 0);
	assert_int_equal(ow_url_check_page(&p, page), OW_EPOLICY);
	assert_has(ow_err_detail(), "file:// indexes are not allowed");
	p.allow_file = 1;
	assert_int_equal(ow_url_check_page(&p, page), 0);
	/* no root known: a file: link has nothing to stay inside, refused */
	assert_int_equal(ow_url_check(&p, page, "t-1-py3-none-any.whl", &out), OW_EPOLICY);
	assert_has(ow_err_detail(), "no local index root is known");
	assert_int_equal(ow_url_policy_add_file_root(&p, "file:///srv/index/simple/"), 0);
	assert_int_equal(p.nfile_roots, 1);
	assert_string_equal(p.file_roots[0], "/srv/index"); /* beside simple/: wheels/ */
	assert_int_equal(ow_url_policy_add_file_root(&p, "file:///srv/index/simple/torch"), 0);
	assert_string_equal(p.file_roots[1], "/srv/index/simple/torch");
	assert_int_equal(ow_url_policy_add_file_root(&p, "https://h/x"), OW_EINVAL);
	assert_int_equal(ow_url_policy_add_file_root(&p, "file:///srv/%2e%2e/x"), OW_EINVAL);
	assert_int_equal(ow_url_check_page(&p, page), 0);
	assert_int_equal(ow_url_check_page(&p, "file:///srv/indexx/torch/"), OW_EPOLICY);
	assert_has(ow_err_detail(), "outside the index root \"/srv/index/\"");
	assert_int_equal(ow_url_check(&p, page, "t-1-py3-none-any.whl", &out), 0);
	assert_string_equal(out, "file:///srv/index/simple/torch/t-1-py3-none-any.whl");
	free(out);
	assert_int_equal(ow_url_check(&p, page, "file://otherhost/t.whl", &out), OW_EPOLICY);
	assert_has(ow_err_detail(), "remote host");
	assert_int_equal(ow_url_check(&p, page, "https://download.pytorch.org/t.whl", &out), 0);
	free(out);
	ow_url_policy_clear(&p);
}

/* Links of a local index stay below its root, however they are spelled. */
static void test_policy_file_root(void **state)
{
	(void)state;
	static const struct {
		const char *href;
		const char *want; /* NULL: refused with `why` */
		const char *why;
	} cases[] = {
	    {"t-1-py3-none-any.whl", "file:///srv/idx/torch/t-1-py3-none-any.whl", NULL},
	    {"../../idx/wheels/t-1-py3-none-any.whl", "file:///srv/idx/wheels/t-1-py3-none-any.whl",
	     NULL},
	    {"../wheels/t-1-py3-none-any.whl", "file:///srv/idx/wheels/t-1-py3-none-any.whl", NULL},
	    {"/srv/idx", "file:///srv/idx", NULL},
	    {"/srv/idx/wheels/t.whl", "file:///srv/idx/wheels/t.whl", NULL},
	    {"file:///srv/idx/wheels/t.whl", "file:///srv/idx/wheels/t.whl", NULL},
	    {"file://localhost/srv/idx/t.whl", "file://localhost/srv/idx/t.whl", NULL},
	    {"file:///etc/t-1-py3-none-any.whl", NULL, "outside the index root \"/srv/idx/\""},
	    {"/abs/t-1-py3-none-any.whl", NULL,
	     "file: path \"/abs/t-1-py3-none-any.whl\" lies outside"},
	    {"../../../outside/t.whl", NULL, "file: path \"/outside/t.whl\" lies outside"},
	    {"../../idxx/t.whl", NULL, "lies outside"},
	    {"../%2e%2e/t.whl", NULL, "path traversal"},
	    {"..%2f..%2fetc/t.whl", NULL, "path traversal"},
	    {"file://evil/srv/idx/t.whl", NULL, "remote host"},
	};
	const char *page = "file:///srv/idx/torch/";
	struct ow_url_policy p;
	assert_int_equal(ow_url_policy_init(&p), 0);
	p.allow_file = 1;
	assert_int_equal(ow_url_policy_add_file_root(&p, "file:///srv/idx"), 0);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *out = NULL;
		int rc = ow_url_check(&p, page, cases[i].href, &out);
		if (cases[i].want ? rc || strcmp(out, cases[i].want) : rc != OW_EPOLICY) {
			print_error("%s: rc %d (%s) out %s\n", cases[i].href, rc, ow_err_detail(),
			            out ? out : "-");
			fail();
		}
		if (!cases[i].want) {
			assert_has(ow_err_detail(), cases[i].why);
			assert_has(ow_err_detail(), "href \"");
		}
		free(out);
	}
	/* the opt-in lets a local index point anywhere on this machine */
	char *out = NULL;
	p.allow_file_outside_root = 1;
	assert_int_equal(ow_url_check(&p, page, "file:///etc/t-1-py3-none-any.whl", &out), 0);
	free(out);
	assert_int_equal(ow_url_check(&p, page, "../%2e%2e/t.whl", &out), OW_EPOLICY);
	ow_url_policy_clear(&p);
}

/* The rejected links a report carries: all counted, the first few kept. */
static void test_link_refusals(void **state)
{
	(void)state;
	struct ow_link_refusals a = {0}, b = {0};
	ow_link_refusals_add(&a, "P1", "href \"x\": why");
	assert_int_equal(a.n, 1);
	assert_string_equal(a.first[0], "P1: href \"x\": why");
	for (int i = 0; i < 5; i++)
		ow_link_refusals_add(&b, "P2", "r");
	assert_int_equal(b.n, 5);
	ow_link_refusals_merge(&a, &b);
	assert_int_equal(a.n, 6);
	assert_string_equal(a.first[0], "P1: href \"x\": why");
	assert_string_equal(a.first[2], "P2: r");
	struct ow_link_refusals c = {0};
	ow_link_refusals_merge(&c, &b);
	assert_int_equal(c.n, 5);
	assert_string_equal(c.first[OW_REFUSALS_KEPT - 1], "P2: r");
	ow_link_refusals_merge(&b, &(struct ow_link_refusals){0});
	assert_int_equal(b.n, 5);
	/* a reason longer than any fixed field is kept whole */
	char *page = malloc(5000);
	memset(page, 'p', 4999);
	page[4999] = '\0';
	struct ow_link_refusals d = {0};
	ow_link_refusals_add(&d, page, "too long");
	assert_int_equal(strlen(d.first[0]), 4999 + strlen(": too long"));
	assert_non_null(strstr(d.first[0], "p: too long"));
	free(page);
	ow_link_refusals_dispose(&a);
	ow_link_refusals_dispose(&b);
	ow_link_refusals_dispose(&c);
	ow_link_refusals_dispose(&d);
	assert_int_equal(d.n, 0);
	assert_null(d.first[0]);
}

/* Hrefs as real index servers write them, read against their pages as pip
 * reads them: resolved first (RFC 3986), then judged. */
static void test_policy_real_hrefs(void **state)
{
	(void)state;
	static const struct {
		const char *page, *href, *want;
	} cases[] = {
	    /* devpi-server 6.x, /+simple/ pages */
	    {"https://devpi.lab/root/lab/+simple/filelock/",
	     "../../+f/d38/e30481def2077/filelock-3.19.1-py3-none-any.whl#sha256=" H64,
	     "https://devpi.lab/root/lab/+f/d38/e30481def2077/filelock-3.19.1-py3-none-any.whl"},
	    {"https://devpi.lab/root/pypi/+simple/torch/",
	     "../../+e/https_download.pytorch.org_whl_cu128/torch-2.8.0%2Bcu128-cp312-cp312-"
	     "manylinux_2_28_x86_64.whl",
	     "https://devpi.lab/root/pypi/+e/https_download.pytorch.org_whl_cu128/"
	     "torch-2.8.0%2Bcu128-cp312-cp312-manylinux_2_28_x86_64.whl"},
	    /* bandersnatch: simple/<p>/index.html beside packages/ */
	    {"https://mirror.lab/pypi/simple/filelock/",
	     "../../packages/8f/1f/0ab6e5aa4bdfd4ae0e1ff6fad4de5ec4e0a1c6d4ec2bc6fbb8b98a7c8f71/"
	     "filelock-3.19.1-py3-none-any.whl#sha256=" H64,
	     "https://mirror.lab/pypi/packages/8f/1f/"
	     "0ab6e5aa4bdfd4ae0e1ff6fad4de5ec4e0a1c6d4ec2bc6fb"
	     "b8b98a7c8f71/filelock-3.19.1-py3-none-any.whl"},
	    /* pypiserver: absolute paths */
	    {"https://pypiserver.lab/simple/filelock/",
	     "/packages/filelock-3.19.1-py3-none-any.whl",
	     "https://pypiserver.lab/packages/filelock-3.19.1-py3-none-any.whl"},
	    /* offwheel's own export: simple/<p>/index.html beside wheels/ */
	    {"https://exp.lab/cu128/simple/torch/",
	     "../../wheels/torch-2.8.0%2Bcu128-cp312-cp312-"
	     "linux_x86_64.whl#sha256=" H64,
	     "https://exp.lab/cu128/wheels/torch-2.8.0%2Bcu128-cp312-cp312-linux_x86_64.whl"},
	    /* climbing above the host's root stops there (RFC 3986 §5.2.4) */
	    {"https://mirror.lab/simple/filelock/", "../../../../x/f-1-py3-none-any.whl",
	     "https://mirror.lab/x/f-1-py3-none-any.whl"},
	    /* a ".." that resolves onto another allowed https host is fine */
	    {"https://mirror.lab/simple/f/", "https://download.pytorch.org/whl/cpu/../cu128/t.whl",
	     "https://download.pytorch.org/whl/cu128/t.whl"},
	};
	static const struct {
		const char *page, *href, *why;
	} refused[] = {
	    {"https://mirror.lab/simple/f/", "../../%2e%2e/f-1-py3-none-any.whl", "path traversal"},
	    {"https://mirror.lab/simple/f/", "../%2E/f-1-py3-none-any.whl", "path traversal"},
	    {"https://mirror.lab/simple/f/", "..%2F..%2Fpackages/f-1-py3-none-any.whl",
	     "path traversal"},
	    {"https://mirror.lab/simple/f/", "../../pack%2Fages/f-1-py3-none-any.whl",
	     "encoded '/'"},
	    {"https://mirror.lab/simple/f/", "../..\\packages/f.whl", "backslash"},
	    {"https://mirror.lab/simple/f/", "https://evil.example/../simple/f.whl",
	     "not an allowed download host"},
	    {"https://mirror.lab/simple/f/", "//evil.example/../f.whl", "foreign host"},
	    {"https://mirror.lab/simple/f/", "../../%0a/f.whl", "control character"},
	};
	struct ow_url_policy p;
	assert_int_equal(ow_url_policy_init(&p), 0);
	const char *hosts[] = {"devpi.lab", "mirror.lab", "pypiserver.lab", "exp.lab"};
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(ow_url_policy_add_host(&p, hosts[i]), 0);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *out = NULL;
		int rc = ow_url_check(&p, cases[i].page, cases[i].href, &out);
		if (rc || strcmp(out, cases[i].want)) {
			print_error("%s on %s: rc %d (%s) -> %s\n", cases[i].href, cases[i].page,
			            rc, ow_err_detail(), out ? out : "-");
			fail();
		}
		free(out);
	}
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		char *out = NULL;
		int rc = ow_url_check(&p, refused[i].page, refused[i].href, &out);
		if (rc != OW_EPOLICY) {
			print_error("%s: rc %d, want a refusal\n", refused[i].href, rc);
			fail();
		}
		assert_has(ow_err_detail(), refused[i].why);
	}
	ow_url_policy_clear(&p);
}

/* --- hostile links: one named test each ---------------------------------- */

struct hcase {
	const char *name;
	const char *anchors; /* HTML added after the good link */
	const char *phrase;  /* must appear in every rejection reason */
	size_t rejected;     /* how many rejections */
	size_t good;         /* links kept, the good one included */
};

static char long_href[OW_URL_MAX_LEN + 200];

static struct hcase hostile[] = {
    {"javascript_href", "<a href=\"javascript:alert(1)\">" WHL "</a>",
     "scheme \"javascript:\" is not allowed", 1, 1},
    {"javascript_mixed_case", "<a href=\"JaVaScRiPt:alert(1)\">" WHL "</a>", "is not allowed", 1,
     1},
    {"data_href", "<a href=\"data:application/zip;base64,UEsDBA==\">" WHL "</a>",
     "scheme \"data:\" is not allowed", 1, 1},
    {"file_from_https_index", "<a href=\"file:///etc/passwd\">passwd</a>",
     "file: link from a non-file index", 1, 1},
    {"ftp_href", "<a href=\"ftp://download.pytorch.org/whl/" WHL "\">" WHL "</a>",
     "scheme \"ftp:\" is not allowed", 1, 1},
    {"host_not_allowed", "<a href=\"https://evil.example/whl/" WHL "\">" WHL "</a>",
     "host \"evil.example\" is not an allowed download host", 1, 1},
    {"scheme_relative_foreign_host", "<a href=\"//evil.example/whl/" WHL "\">" WHL "</a>",
     "scheme-relative link (//host/...) to a foreign host", 1, 1},
    {"scheme_relative_allowed_foreign_host",
     "<a href=\"//files.pythonhosted.org/" WHL "\">" WHL "</a>", "foreign host", 1, 1},
    {"userinfo", "<a href=\"https://user:pw@download.pytorch.org/whl/" WHL "\">" WHL "</a>",
     "userinfo", 1, 1},
    {"userinfo_relative", "<a href=\"//user@download.pytorch.org/whl/" WHL "\">" WHL "</a>",
     "userinfo", 1, 1},
    {"http_from_https_index", "<a href=\"http://download.pytorch.org/whl/" WHL "\">" WHL "</a>",
     "plain http link from an https index refused", 1, 1},
    {"backslash", "<a href=\"/whl\\cpu\\" WHL "\">" WHL "</a>", "backslash", 1, 1},
    {"encoded_dot_dot_slash", "<a href=\"/whl/%2e%2e%2fsecret/" WHL "\">" WHL "</a>",
     "path traversal", 1, 1},
    {"encoded_dot_dot_segment", "<a href=\"/whl/%2E%2E/" WHL "\">" WHL "</a>", "path traversal", 1,
     1},
    {"literal_dot_dot_resolved", "<a href=\"../../" WHL "\">" WHL "</a>", "", 0, 2},
    {"dot_dot_to_foreign_host", "<a href=\"https://evil.example/whl/../" WHL "\">" WHL "</a>",
     "not an allowed download host", 1, 1},
    {"encoded_dot_after_resolution", "<a href=\"../../%2e/" WHL "\">" WHL "</a>", "path traversal",
     1, 1},
    {"double_encoded_slash", "<a href=\"/whl/cpu%252F" WHL "\">cpu%2F" WHL "</a>",
     "double-encoded escape \"%252F\"", 1, 1},
    {"encoded_nul", "<a href=\"/whl/" WHL "%00.html\">" WHL "</a>", "%00", 1, 1},
    {"crlf", "<a href=\"/whl/" WHL "&#13;&#10;Set-Cookie: x\">" WHL "</a>", "CR/LF", 1, 1},
    {"tab_control_char", "<a href=\"/whl/&#9;" WHL "\">" WHL "</a>", "control character", 1, 1},
    {"non_ascii_href", "<a href=\"/whl/t\xc3\xa9.whl\">t\xc3\xa9.whl</a>", "non-ASCII", 1, 1},
    {"space_in_href", "<a href=\"/whl/a b.whl\">a b.whl</a>", "space", 1, 1},
    {"anchor_text_not_basename", "<a href=\"/whl/cpu/" WHL "\">torch-9.9.9-py3-none-any.whl</a>",
     "anchor text \"torch-9.9.9-py3-none-any.whl\" is not the URL's file name", 1, 1},
    {"basename_not_a_wheel", "<a href=\"/whl/cpu/torch-2.4.1.rar\">torch-2.4.1.rar</a>",
     "is not a wheel", 1, 1},
    {"wheel_with_too_few_parts", "<a href=\"/whl/torch-2.4.1.whl\">torch-2.4.1.whl</a>",
     "is not a wheel file name", 1, 1},
    {"basename_with_slash", "<a href=\"/whl/cpu%2F" WHL "\">cpu/" WHL "</a>", "encoded '/'", 1, 1},
    {"empty_basename", "<a href=\"/whl/cpu/\">cpu</a>", "empty file name", 1, 1},
    {"same_file_different_hashes",
     "<a href=\"/whl/" WHL "#sha256=" H64 "\">" WHL "</a>"
     "<a href=\"/whl/" WHL "#sha256=" H64B "\">" WHL "</a>",
     "listed 2 times at https://download.pytorch.org/whl/" WHL " with different #sha256", 2, 1},
    {"same_file_with_and_without_hash",
     "<a href=\"/whl/" WHL "#sha256=" H64 "\">" WHL "</a><a href=\"/whl/" WHL "\">" WHL "</a>",
     "conflict", 2, 1},
    {"sha256_wrong_length", "<a href=\"/whl/" WHL "#sha256=abc123\">" WHL "</a>",
     "malformed #sha256 fragment: #sha256 has 6 characters", 1, 1},
    {"sha256_non_hex",
     "<a href=\"/whl/" WHL "#sha256="
     "z"
     "a27b048d32198cda6e9cff0bf768e8683d98743903b7e5d2b1f5098ded1d343\">" WHL "</a>",
     "non-hex character 'z'", 1, 1},
    {"sha256_two_fragments", "<a href=\"/whl/" WHL "#sha256=" H64 "#sha256=" H64B "\">" WHL "</a>",
     "two '#' fragments", 1, 1},
    {"sha256_given_twice",
     "<a href=\"/whl/" WHL "#sha256=" H64 "&amp;sha256=" H64B "\">" WHL "</a>",
     "#sha256 given twice", 1, 1},
    {"core_metadata_disagrees",
     "<a href=\"/whl/" WHL "\" data-core-metadata=\"sha256=" H64 "\" "
     "data-dist-info-metadata=\"sha256=" H64B "\">" WHL "</a>",
     "disagree", 1, 1},
    {"core_metadata_bad_hash",
     "<a href=\"/whl/" WHL "\" data-core-metadata=\"sha256=xyz\">" WHL "</a>",
     "data-core-metadata=\"sha256=xyz\": sha256 is not 64 hex digits", 1, 1},
    {"overlong_href", long_href, "longer than 8192 bytes", 1, 1},
    {"same_file_same_hash_deduped",
     "<a href=\"/whl/" WHL "#sha256=" H64 "\">" WHL "</a><a href=\"/whl/" WHL "#sha256=" H64
     "\">" WHL "</a>",
     "", 0, 2},
    {"same_name_two_folders_kept",
     "<a href=\"/whl/cu75/" WHL "#sha256=" H64 "\">" WHL "</a><a href=\"/whl/cu80/" WHL
     "#sha256=" H64B "\">" WHL "</a>",
     "", 0, 3},
};

static void hostile_case(void **state)
{
	const struct hcase *c = *state;
	char *body = NULL;
	size_t n = strlen(c->anchors) + 512;
	struct ow_page *p = NULL;
	body = malloc(n);
	assert_non_null(body);
	snprintf(body, n, "%s%s<br/>\n</body></html>\n",
	         "<!DOCTYPE html>\n<html><body><h1>Links for torch</h1>\n" GOOD_A, c->anchors);
	int rc = ow_page_parse(PAGE, body, strlen(body), NULL, NULL, &p);
	free(body);
	if (rc) {
		print_error("%s: page refused: %s\n", c->name, ow_err_detail());
		fail();
	}
	assert_int_equal(p->nlinks, c->good);
	assert_string_equal(p->links[0].filename, GOOD_FILE);
	assert_string_equal(p->links[0].sha256, GOOD_HASH);
	if (p->nrejected != c->rejected)
		print_error("%s: %zu rejected (%s)\n", c->name, p->nrejected,
		            p->nrejected ? p->rejected[0].reason : "-");
	assert_int_equal(p->nrejected, c->rejected);
	for (size_t i = 0; i < p->nrejected; i++) {
		assert_has(p->rejected[i].reason, c->phrase);
		assert_has(p->rejected[i].reason, "href \"");
		assert_int_equal(p->rejected[i].line, 4);
	}
	ow_page_free(p);
}

static void fill_long_href(void)
{
	const char *pre = "<a href=\"/whl/";
	size_t n = strlen(pre);
	memcpy(long_href, pre, n);
	memset(long_href + n, 'a', OW_URL_MAX_LEN);
	memcpy(long_href + n + OW_URL_MAX_LEN, ".whl\">x.whl</a>", 16);
}

/* Messages quote hostile hrefs, but never the credentials in them. */
static void test_printable_hides_userinfo(void **state)
{
	(void)state;
	char buf[256];
	ow_url_printable("https://alice:s3cret@download.pytorch.org/whl/x.whl", buf, sizeof buf);
	assert_string_equal(buf, "https://***@download.pytorch.org/whl/x.whl");
	assert_null(strstr(buf, "s3cret"));
	ow_url_printable("https://download.pytorch.org/whl/a@b.whl", buf, sizeof buf);
	assert_string_equal(buf, "https://download.pytorch.org/whl/a@b.whl");
	struct ow_url_policy pol;
	char *out = NULL;
	assert_int_equal(ow_url_policy_init(&pol), 0);
	assert_int_not_equal(ow_url_check(&pol, "https://download.pytorch.org/whl/torch/",
	                                  "https://bob:hunter2@download.pytorch.org/t.whl", &out),
	                     0);
	assert_null(strstr(ow_err_detail(), "hunter2"));
	assert_non_null(strstr(ow_err_detail(), "userinfo"));
	ow_url_policy_clear(&pol);
}

int main(void)
{
	static const struct CMUnitTest fixed[] = {
	    cmocka_unit_test(test_resolve_table),
	    cmocka_unit_test(test_parse_components),
	    cmocka_unit_test(test_parse_rejects),
	    cmocka_unit_test(test_format_roundtrip),
	    cmocka_unit_test(test_percent_decode_once),
	    cmocka_unit_test(test_basename_decoded),
	    cmocka_unit_test(test_file_path),
	    cmocka_unit_test(test_fragment_sha256),
	    cmocka_unit_test(test_policy_defaults_and_hosts),
	    cmocka_unit_test(test_policy_trusted_http),
	    cmocka_unit_test(test_policy_file_index),
	    cmocka_unit_test(test_policy_file_root),
	    cmocka_unit_test(test_policy_real_hrefs),
	    cmocka_unit_test(test_link_refusals),
	    cmocka_unit_test(test_printable_hides_userinfo),
	};
	enum { NFIXED = sizeof fixed / sizeof fixed[0], NH = sizeof hostile / sizeof hostile[0] };
	struct CMUnitTest tests[NFIXED + NH];
	fill_long_href();
	memcpy(tests, fixed, sizeof fixed);
	for (size_t i = 0; i < NH; i++) {
		struct CMUnitTest t = {hostile[i].name, hostile_case, NULL, NULL,
		                       (void *)&hostile[i]};
		tests[NFIXED + i] = t;
	}
	return _cmocka_run_group_tests("url", tests, NFIXED + NH, NULL, NULL);
}
