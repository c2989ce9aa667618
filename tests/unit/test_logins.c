/* test_logins.c - the netrc parser (netrc.h) and the logins the engine asks
 * (offwheel/logins.h): netrc texts in the shapes curl's and Python's netrc
 * documentation show, URL userinfo split and decoded as pip does, and which
 * host gets which login. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netrc.h"
#include "offwheel/error.h"
#include "offwheel/logins.h"

static struct ow_netrc parsed(const char *text)
{
	struct ow_netrc n;
	int rc = ow_netrc_parse(text, strlen(text), &n);
	if (rc) {
		print_error("parse failed: %s\n", ow_err_detail());
		fail();
	}
	return n;
}

static void assert_entry(const struct ow_netrc *n, const char *host, const char *login,
                         const char *password)
{
	const struct ow_netrc_entry *e = ow_netrc_find(n, host, false);
	assert_non_null(e);
	assert_string_equal(e->login, login);
	assert_string_equal(e->password, password);
}

static void test_netrc_entries(void **state)
{
	(void)state;
	/* one entry per line, several on one line, spread over lines */
	struct ow_netrc n = parsed("machine nexus.lab.example login ci password tok3n\n"
	                           "machine Pypi.Mirror login alice password a1 "
	                           "machine third\n  login bob\n  password b2\n"
	                           "machine nexus.lab.example login second password nope\n");
	assert_int_equal(n.n, 4);
	assert_entry(&n, "nexus.lab.example", "ci", "tok3n"); /* the first entry wins */
	assert_entry(&n, "pypi.mirror", "alice", "a1");       /* names compare without case */
	assert_entry(&n, "PYPI.MIRROR", "alice", "a1");
	assert_entry(&n, "third", "bob", "b2");
	assert_null(ow_netrc_find(&n, "other", true)); /* no default entry */
	ow_netrc_dispose(&n);
	assert_int_equal(n.n, 0);
}

static void test_netrc_default_account_macdef(void **state)
{
	(void)state;
	struct ow_netrc n = parsed("# the lab's hosts\n"
	                           "machine host.one login u1 account acct password p1\n"
	                           "macdef init\n"
	                           "cd /pub\n"
	                           "machine evil login x password y\n"
	                           "\n"
	                           "default login anonymous password user@site\n"
	                           "machine host.two login u2 password p2");
	assert_int_equal(n.n, 3); /* the macro's body is not an entry */
	assert_entry(&n, "host.one", "u1", "p1");
	assert_entry(&n, "host.two", "u2", "p2"); /* no newline at the end */
	assert_null(ow_netrc_find(&n, "evil", false));
	const struct ow_netrc_entry *d = ow_netrc_find(&n, "elsewhere", true);
	assert_non_null(d);
	assert_null(d->machine);
	assert_string_equal(d->password, "user@site");
	assert_null(ow_netrc_find(&n, "elsewhere", false));
	ow_netrc_dispose(&n);
}

static void test_netrc_quotes_and_comments(void **state)
{
	(void)state;
	struct ow_netrc n = parsed("machine q login \"first last\" password \"pa ss\\\"w\\\\d\"\n"
	                           "  # a comment line\n"
	                           "machine h login __token__ password #not-a-comment\n"
	                           "machine tabs\tlogin\tt\tpassword\tp\r\n"
	                           "machine empty\n"
	                           "login stray password follows\n");
	assert_entry(&n, "q", "first last", "pa ss\"w\\d");
	assert_entry(&n, "h", "__token__", "#not-a-comment"); /* a value is taken as it is */
	assert_entry(&n, "tabs", "t", "p");
	assert_entry(&n, "empty", "stray", "follows");
	ow_netrc_dispose(&n);
	/* a login before any machine is skipped */
	n = parsed("login stray password x\nmachine m login l password p\n");
	assert_int_equal(n.n, 1);
	assert_entry(&n, "m", "l", "p");
	ow_netrc_dispose(&n);
	/* an entry that names no login or password has "" */
	n = parsed("machine bare\n");
	assert_entry(&n, "bare", "", "");
	ow_netrc_dispose(&n);
	n = parsed("");
	assert_int_equal(n.n, 0);
	ow_netrc_dispose(&n);
}

static void test_netrc_refused(void **state)
{
	(void)state;
	struct {
		const char *text;
		size_t len;
		int rc;
		const char *says;
	} bad[] = {
	    {"machine a login u password", 0, OW_EPARSE, "line 1: 'password' without a value"},
	    {"machine a\nlogin u\npassword \"unterminated\n", 0, OW_EPARSE,
	     "line 3: a quoted value has no closing"},
	    {"machine", 0, OW_EPARSE, "'machine' without a value"},
	    {"machine a login u\0 password p", 29, OW_EPARSE, "NUL byte at offset 17"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct ow_netrc n;
		size_t len = bad[i].len ? bad[i].len : strlen(bad[i].text);
		assert_int_equal(ow_netrc_parse(bad[i].text, len, &n), bad[i].rc);
		assert_non_null(strstr(ow_err_detail(), bad[i].says));
		assert_int_equal(n.n, 0);
		assert_null(n.v);
	}
	size_t big = OW_NETRC_MAX_BYTES + 1;
	char *text = malloc(big);
	assert_non_null(text);
	memset(text, ' ', big);
	struct ow_netrc n;
	assert_int_equal(ow_netrc_parse(text, big, &n), OW_ETOOBIG);
	assert_non_null(strstr(ow_err_detail(), "a netrc file may have"));
	free(text);
}

/* ---- logins ---------------------------------------------------------------- */

static int find(const ow_logins *l, const char *url, const char **user, const char **pw)
{
	struct ow_login lg;
	int rc = ow_logins_find(l, url, &lg);
	*user = rc == 1 ? lg.user : NULL;
	*pw = rc == 1 ? lg.password : NULL;
	return rc == 1 ? (int)lg.source : 0;
}

static void take(ow_logins *l, const char *url, const char *want)
{
	char *bare = NULL;
	assert_int_equal(ow_logins_take_url(l, url, &bare), 0);
	assert_string_equal(bare, want);
	free(bare);
}

static void test_url_userinfo(void **state)
{
	(void)state;
	ow_logins *l;
	const char *u, *p;
	assert_int_equal(ow_logins_new(&l), 0);
	/* pip's split: user up to the first ':', the rest the password, each
	 * percent-decoded once; the last '@' of the authority ends it */
	take(l, "https://lab%2Bci:Pa55%25w%40rd:x@nexus.lab:8443/repository/pypi/simple/",
	     "https://nexus.lab:8443/repository/pypi/simple/");
	take(l, "https://tok:en@w@rd@other.lab/simple", "https://other.lab/simple");
	take(l, "https://__token__:bad%zz%4@third.lab/x", "https://third.lab/x");
	take(l, "https://nobody.lab/simple", "https://nobody.lab/simple");
	take(l, "not a url", "not a url");
	take(l, "file:///srv/index", "file:///srv/index");
	assert_int_equal(find(l, "https://nexus.lab:8443/repository/pypi/simple/torch/", &u, &p),
	                 OW_LOGIN_URL);
	assert_string_equal(u, "lab+ci");
	assert_string_equal(p, "Pa55%w@rd:x");
	assert_int_equal(find(l, "https://other.lab:443/packages/a.whl", &u, &p), OW_LOGIN_URL);
	assert_string_equal(u, "tok");
	assert_string_equal(p, "en@w@rd");
	assert_int_equal(find(l, "https://third.lab/x/", &u, &p), OW_LOGIN_URL);
	assert_string_equal(p, "bad%zz%4"); /* not an escape: kept as written, as pip keeps it */
	/* scheme, host and port all count */
	assert_int_equal(find(l, "https://nexus.lab/simple/", &u, &p), 0);
	assert_int_equal(find(l, "http://nexus.lab:8443/simple/", &u, &p), 0);
	assert_int_equal(find(l, "https://files.nexus.lab:8443/a.whl", &u, &p), 0);
	assert_int_equal(find(l, "https://nobody.lab/simple/", &u, &p), 0);
	assert_int_equal(find(l, "file:///srv/index/torch/", &u, &p), 0);
	/* a second userinfo for the same host does not replace the first */
	take(l, "https://mallory:other@other.lab/simple", "https://other.lab/simple");
	assert_int_equal(find(l, "https://other.lab/", &u, &p), OW_LOGIN_URL);
	assert_string_equal(u, "tok");
	ow_logins_free(l);
}

static void test_userinfo_refused_unshown(void **state)
{
	(void)state;
	ow_logins *l;
	char *bare = NULL;
	assert_int_equal(ow_logins_new(&l), 0);
	assert_int_equal(ow_logins_take_url(l, "https://u:se%00cret@h.lab/s", &bare), OW_EINVAL);
	assert_null(bare);
	assert_non_null(strstr(ow_err_detail(), "https://***@h.lab/s"));
	assert_non_null(strstr(ow_err_detail(), "NUL"));
	assert_null(strstr(ow_err_detail(), "cret"));
	/* with no logins the userinfo is only dropped */
	assert_int_equal(ow_logins_take_url(NULL, "https://u:p@h.lab/s/", &bare), 0);
	assert_string_equal(bare, "https://h.lab/s/");
	free(bare);
	ow_logins_free(l);
	ow_logins_free(NULL);
}

static char *write_netrc(const char *dir, const char *text)
{
	char *path = NULL;
	assert_true(asprintf(&path, "%s/netrc", dir) > 0);
	assert_int_equal(tu_write_file(path, text, strlen(text)), 0);
	return path;
}

/* pip's order: a URL's password, else the netrc's host entry, else its
 * default (for the index hosts only), else a URL's user alone with "". */
static void test_netrc_and_url_together(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp(), *path;
	ow_logins *l;
	const char *u, *p;
	path = write_netrc(dir, "machine nexus.lab login nl password np\n"
	                        "machine token.lab login tl password tp\n"
	                        "default login dl password dp\n");
	assert_int_equal(ow_logins_new(&l), 0);
	setenv("NETRC", path, 1);
	assert_int_equal(ow_logins_read_netrc(l, NULL), 0);
	unsetenv("NETRC");
	assert_non_null(strstr(ow_logins_netrc_name(l), "$NETRC ("));
	take(l, "https://uu:up@nexus.lab/simple", "https://nexus.lab/simple");
	take(l, "https://onlyuser@token.lab/simple", "https://token.lab/simple");
	take(l, "https://tokenonly@solo.lab/simple", "https://solo.lab/simple");
	take(l, "https://root.lab/simple", "https://root.lab/simple");
	assert_int_equal(find(l, "https://nexus.lab/simple/torch/", &u, &p), OW_LOGIN_URL);
	assert_string_equal(u, "uu");
	assert_int_equal(find(l, "https://nexus.lab:444/x", &u, &p), OW_LOGIN_NETRC); /* any port */
	assert_string_equal(u, "nl");
	assert_int_equal(find(l, "https://token.lab/simple/", &u, &p), OW_LOGIN_NETRC);
	assert_string_equal(u, "tl");
	/* a user alone: the netrc first, its default included (pip's order) */
	assert_int_equal(find(l, "https://solo.lab/simple/", &u, &p), OW_LOGIN_NETRC);
	assert_string_equal(u, "dl");
	assert_int_equal(find(l, "https://root.lab/simple/", &u, &p), OW_LOGIN_NETRC);
	assert_string_equal(u, "dl");
	/* default never goes to a host the pages link to */
	assert_int_equal(find(l, "https://files.elsewhere/a.whl", &u, &p), 0);
	assert_int_equal(find(l, "https://root.lab:8443/a.whl", &u, &p), 0);
	ow_logins_free(l);
	/* without a netrc, a user alone goes with the password "" (a token) */
	assert_int_equal(ow_logins_new(&l), 0);
	take(l, "https://tokenonly@solo.lab/simple", "https://solo.lab/simple");
	assert_int_equal(find(l, "https://solo.lab/simple/", &u, &p), OW_LOGIN_URL);
	assert_string_equal(u, "tokenonly");
	assert_string_equal(p, "");
	ow_logins_free(l);
	free(path);
	tu_rmtree(dir);
	free(dir);
}

static void test_netrc_files(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp(), *path, *missing = NULL;
	ow_logins *l;
	const char *u, *p;
	assert_true(asprintf(&missing, "%s/none", dir) > 0);
	assert_int_equal(ow_logins_new(&l), 0);
	assert_int_equal(ow_logins_read_netrc(l, missing), 0); /* missing: no error */
	path = write_netrc(dir, "machine h.lab login u password\n");
	assert_int_equal(ow_logins_read_netrc(l, path), 0); /* malformed: a warning, no logins */
	take(l, "https://h.lab/simple", "https://h.lab/simple");
	assert_int_equal(find(l, "https://h.lab/simple/", &u, &p), 0);
	free(path);
	path = write_netrc(dir, "machine h.lab login u password p\n");
	assert_int_equal(ow_logins_read_netrc(l, path), 0);
	assert_int_equal(find(l, "https://h.lab/simple/", &u, &p), OW_LOGIN_NETRC);
	assert_string_equal(ow_logins_netrc_name(l), path);
	/* $HOME/.netrc when nothing else names one */
	char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	setenv("HOME", dir, 1);
	unsetenv("NETRC");
	ow_logins *l2;
	assert_int_equal(ow_logins_new(&l2), 0);
	assert_int_equal(ow_logins_read_netrc(l2, NULL), 0);
	assert_string_equal(ow_logins_netrc_name(l2), "~/.netrc");
	assert_int_equal(find(l2, "https://h.lab/simple/", &u, &p), 0); /* dir has no .netrc */
	ow_logins_free(l2);
	if (home)
		setenv("HOME", home, 1);
	free(home);
	ow_logins_free(l);
	free(path);
	free(missing);
	tu_rmtree(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_netrc_entries),
	    cmocka_unit_test(test_netrc_default_account_macdef),
	    cmocka_unit_test(test_netrc_quotes_and_comments),
	    cmocka_unit_test(test_netrc_refused),
	    cmocka_unit_test(test_url_userinfo),
	    cmocka_unit_test(test_userinfo_refused_unshown),
	    cmocka_unit_test(test_netrc_and_url_together),
	    cmocka_unit_test(test_netrc_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
