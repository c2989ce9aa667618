/* test_pep440.c - versions and specifiers.  The expected values of the
 * normalization and specifier tables were checked against packaging 26
 * (Version, Specifier.contains(prereleases=True)); the versions come from
 * real torch / torchvision / torchaudio / triton wheels. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "offwheel/error.h"
#include "pep440.h"

static const struct {
	const char *in;
	const char *want; /* NULL: must be rejected */
} norm_cases[] = {
	{"2.10.0.dev20251021+cu128", "2.10.0.dev20251021+cu128"},
	{"0.25.0.dev20251021", "0.25.0.dev20251021"},
	{"2.10.0.dev20251021", "2.10.0.dev20251021"},
	{"2.7.0+cu128", "2.7.0+cu128"},
	{"2.4.1+cpu.cxx11.abi", "2.4.1+cpu.cxx11.abi"},
	{"3.5.0+git7416ffcb", "3.5.0+git7416ffcb"},
	{"2.5.1+rocm6.2", "2.5.1+rocm6.2"},
	{"1.13.1+cu117.with.pypi.cudnn", "1.13.1+cu117.with.pypi.cudnn"},
	{"0.16.0+cpu", "0.16.0+cpu"},
	{"2.1.0a0+git32f93b1", "2.1.0a0+git32f93b1"},
	{"1.0", "1.0"},
	{"v1.0", "1.0"},
	{"V1.0", "1.0"},
	{"1.0.0", "1.0.0"},
	{"1!1.0", "1!1.0"},
	{"0!1.0", "1.0"},
	{"1.0a", "1.0a0"},
	{"1.0a1", "1.0a1"},
	{"1.0.a1", "1.0a1"},
	{"1.0-a1", "1.0a1"},
	{"1.0_a_1", "1.0a1"},
	{"1.0alpha1", "1.0a1"},
	{"1.0ALPHA1", "1.0a1"},
	{"1.0beta2", "1.0b2"},
	{"1.0b", "1.0b0"},
	{"1.0c1", "1.0rc1"},
	{"1.0pre1", "1.0rc1"},
	{"1.0preview1", "1.0rc1"},
	{"1.0rc", "1.0rc0"},
	{"1.0-rc.1", "1.0rc1"},
	{"1.0RC1", "1.0rc1"},
	{"1.0post", "1.0.post0"},
	{"1.0.post1", "1.0.post1"},
	{"1.0-1", "1.0.post1"},
	{"1.0-r", "1.0.post0"},
	{"1.0rev3", "1.0.post3"},
	{"1.0r3", "1.0.post3"},
	{"1.0Post1", "1.0.post1"},
	{"1.0_post1", "1.0.post1"},
	{"1.0-post_1", "1.0.post1"},
	{"1.0.post.1", "1.0.post1"},
	{"1.0.dev", "1.0.dev0"},
	{"1.0dev1", "1.0.dev1"},
	{"1.0DEV1", "1.0.dev1"},
	{"1.0-dev-1", "1.0.dev1"},
	{"1.0-dev", "1.0.dev0"},
	{"1.0a1.post2.dev3", "1.0a1.post2.dev3"},
	{"1.0a.post.dev", "1.0a0.post0.dev0"},
	{"1.0+abc", "1.0+abc"},
	{"1.0+ABC.5", "1.0+abc.5"},
	{"1.0+abc-5_6", "1.0+abc.5.6"},
	{"1.0+01", "1.0+1"},
	{"1.0+a01", "1.0+a01"},
	{"1.0+ubuntu-1", "1.0+ubuntu.1"},
	{"1.0a.", "1.0a0"},
	{"1.0a-", "1.0a0"},
	{"1.0b.2", "1.0b2"},
	{"01.02.03", "1.2.3"},
	{"00!1.0", "1.0"},
	{"1.0a-1", "1.0a1"},
	{"1.0a1-1", "1.0a1.post1"},
	{"1.0.post1-1", NULL},
	{"1.0.post-1", "1.0.post1"},
	{"  1.0  ", "1.0"},
	{"1.0\n", "1.0"},
	{"1.0.dev.post1", NULL},
	{"1.0-", NULL},
	{"1.0.", NULL},
	{".1.0", NULL},
	{"1..0", NULL},
	{"1.0+", NULL},
	{"1.0+abc.", NULL},
	{"+abc", NULL},
	{"1.0.*", NULL},
	{"1.0a1a2", NULL},
	{"1.0-1-1", NULL},
	{"1.0.post1.dev1.dev2", NULL},
	{"1!", NULL},
	{"!1", NULL},
	{"1.0alph", NULL},
	{"1.0 a1", NULL},
	{"é", NULL},
	{"", NULL},
	{"1.0+abc..d", NULL},
	{"1.0+abc/d", NULL},
	{"1.0_", NULL},
	{"1.0+-a", NULL},
	{"a1.0", NULL},
	{"1.0 1.0", NULL},
	{"1.0++a", NULL},
	{"1.0+a+b", NULL},
};

static void test_normalize_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof norm_cases / sizeof norm_cases[0]; i++) {
		char buf[OW_VER_TEXT_MAX * 2];
		int rc = ow_pep440_normalize(norm_cases[i].in, buf, sizeof buf);
		if (!norm_cases[i].want) {
			if (rc != OW_EPARSE)
				fail_msg("'%s' was accepted as '%s'", norm_cases[i].in, buf);
			assert_true(strlen(ow_err_detail()) > 0);
			continue;
		}
		if (rc != 0)
			fail_msg("'%s' rejected: %s", norm_cases[i].in, ow_err_detail());
		assert_string_equal(buf, norm_cases[i].want);
	}
}

/* Strictly ascending, from the PEP 440 text's examples and real builds. */
static const char *const ascending[] = {
	"0.9", "1.0.dev0", "1.0.dev456", "1.0a1.dev1", "1.0a1", "1.0a2.dev456", "1.0a12.dev456",
	"1.0a12", "1.0b1.dev456", "1.0b2", "1.0b2.post345.dev456", "1.0b2.post345", "1.0rc1.dev456",
	"1.0rc1", "1.0", "1.0+abc.5", "1.0+abc.7", "1.0+5", "1.0.post456.dev34", "1.0.post456",
	"1.0.15", "1.1.dev1", "1.1", "2.4.1", "2.4.1+cpu", "2.4.1+cpu.cxx11.abi", "2.4.1+cu118",
	"2.7.0", "2.7.0+cu126", "2.7.0+cu128", "2.10.0.dev20251020+cu128", "2.10.0.dev20251021",
	"2.10.0.dev20251021+cpu", "2.10.0.dev20251021+cu126", "2.10.0.dev20251021+cu128",
	"2.10.0.dev20251022", "2.10.0", "2.10.0+cu130", "2.10.1", "10.0", "1!0.1",
};

static void parse_ok(struct ow_version *v, const char *s)
{
	if (ow_pep440_parse(v, s) != 0)
		fail_msg("'%s': %s", s, ow_err_detail());
}

static void test_order(void **state)
{
	(void)state;
	size_t n = sizeof ascending / sizeof ascending[0];
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < n; j++) {
			struct ow_version a, b;
			parse_ok(&a, ascending[i]);
			parse_ok(&b, ascending[j]);
			int c = ow_pep440_cmp(&a, &b);
			int want = (i > j) - (i < j);
			if ((c > 0) - (c < 0) != want)
				fail_msg("cmp(%s, %s) = %d, want %d", ascending[i], ascending[j], c, want);
		}
	}
}

static const char *const equal_pairs[][2] = {
	{"1.0", "1.0.0"},         {"1.0", "1.0.0.0.0"},     {"1.0", "v1.0"},
	{"1.0", "0!1.0"},         {"1.0a1", "1.0alpha1"},   {"1.0rc1", "1.0c1"},
	{"1.0.post0", "1.0-r"},   {"1.0+ABC", "1.0+abc"},   {"1.0+a.b", "1.0+a-b"},
	{"1.0+01", "1.0+1"},      {"2.7.0+cu128", "2.7+cu128"}, {"1.0.dev0", "1.0-dev"},
};

static void test_equal(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof equal_pairs / sizeof equal_pairs[0]; i++) {
		struct ow_version a, b;
		parse_ok(&a, equal_pairs[i][0]);
		parse_ok(&b, equal_pairs[i][1]);
		if (ow_pep440_cmp(&a, &b) != 0)
			fail_msg("%s != %s", equal_pairs[i][0], equal_pairs[i][1]);
	}
}

static void test_parts_and_public(void **state)
{
	(void)state;
	struct ow_version v, pub;
	char buf[64];
	parse_ok(&v, "2.10.0.dev20251021+cu128");
	assert_int_equal(v.nrelease, 3);
	assert_int_equal(v.release[1], 10);
	assert_true(v.has_dev);
	assert_int_equal(v.dev, 20251021);
	assert_string_equal(v.local, "cu128");
	assert_true(ow_pep440_is_prerelease(&v));
	ow_pep440_public(&pub, &v);
	assert_int_equal(ow_pep440_format(&pub, buf, sizeof buf), 0);
	assert_string_equal(buf, "2.10.0.dev20251021");
	ow_pep440_public(&v, &v);
	assert_string_equal(v.local, "");
	parse_ok(&v, "2.4.1+cpu.cxx11.abi");
	assert_false(ow_pep440_is_prerelease(&v));
	assert_string_equal(v.local, "cpu.cxx11.abi");
	parse_ok(&v, "1.0.post1");
	assert_false(ow_pep440_is_prerelease(&v));
	parse_ok(&v, "1.0rc2");
	assert_int_equal(v.pre, OW_PRE_RC);
	assert_true(ow_pep440_is_prerelease(&v));
}

static void test_bounds(void **state)
{
	(void)state;
	struct ow_version v;
	char big[400];
	memset(big, '1', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	assert_int_equal(ow_pep440_parse(&v, big), OW_EPARSE);
	assert_int_equal(ow_pep440_parse(&v, "999999999999999999"), 0);
	assert_int_equal(ow_pep440_parse(&v, "1000000000000000000"), OW_EPARSE);
	assert_int_equal(ow_pep440_parse(&v, "18446744073709551616"), OW_EPARSE);
	assert_int_equal(ow_pep440_parse(&v, "1.0.dev99999999999999999999"), OW_EPARSE);
	assert_int_equal(ow_pep440_parse(&v, "1.2.3.4.5.6.7.8.9.10.11.12.13.14.15.16"), 0);
	assert_int_equal(ow_pep440_parse(&v, "1.2.3.4.5.6.7.8.9.10.11.12.13.14.15.16.17"), OW_EPARSE);
	assert_non_null(strstr(ow_err_detail(), "release numbers"));
	/* a local label that does not fit is refused, never cut */
	char loc[200];
	snprintf(loc, sizeof loc, "1.0+%0100d", 7);
	memset(loc + 4, 'a', 100);
	assert_int_equal(ow_pep440_parse(&v, loc), OW_EPARSE);
	assert_int_equal(ow_pep440_parse_n(&v, "1.0\0garbage", 11), OW_EPARSE);
	assert_int_equal(ow_pep440_parse_n(&v, "1.0+cu128xyz", 9), 0);
	assert_string_equal(v.local, "cu128");
	char small[4];
	parse_ok(&v, "2.10.0");
	assert_int_equal(ow_pep440_format(&v, small, sizeof small), OW_ETOOBIG);
	/* the canonical form must fit too: "r" grows to ".post0" */
	char grow[200] = "123456789012345678";
	for (int i = 0; i < 5; i++)
		strncat(grow, ".123456789012345678", sizeof grow - strlen(grow) - 1);
	for (int i = 0; i < 4; i++)
		strncat(grow, ".1", sizeof grow - strlen(grow) - 1);
	strncat(grow, "r", sizeof grow - strlen(grow) - 1);
	assert_int_equal(strlen(grow), 122);
	assert_int_equal(ow_pep440_parse(&v, grow), 0); /* 127 once normalized */
	memmove(grow + 2, grow, strlen(grow) + 1);
	memcpy(grow, "1.", 2);
	assert_int_equal(ow_pep440_parse(&v, grow), OW_EPARSE); /* 124 -> 129 */
	assert_non_null(strstr(ow_err_detail(), "normalized"));
	char longest[OW_VER_TEXT_MAX + 1];
	parse_ok(&v, "99999999999999999!999999999999999999.999999999999999999rc999999999999999999"
		     ".post99999999.dev9999999+abc");
	assert_int_equal(ow_pep440_format(&v, longest, sizeof longest), 0);
}

/* Every version of the real index parses and its canonical form is stable. */
static void test_real_versions_roundtrip(void **state)
{
	(void)state;
	char *path = tu_fixture("tags/pytorch-wheels-2023-10.txt");
	size_t len;
	char *text = tu_read_file(path, &len);
	assert_non_null(text);
	size_t count = 0;
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (line[0] == '#')
			continue;
		char *v = strchr(line, '-') + 1;
		size_t k = strcspn(v, "-");
		struct ow_version a, b;
		char once[256], twice[256];
		if (ow_pep440_parse_n(&a, v, k) != 0)
			fail_msg("%s: %s", line, ow_err_detail());
		assert_int_equal(ow_pep440_format(&a, once, sizeof once), 0);
		parse_ok(&b, once);
		assert_int_equal(ow_pep440_format(&b, twice, sizeof twice), 0);
		assert_string_equal(once, twice);
		assert_int_equal(ow_pep440_cmp(&a, &b), 0);
		count++;
	}
	assert_true(count > 3000);
	free(text);
	free(path);
}

static const struct {
	const char *spec;
	const char *version;
	bool match;
} match_cases[] = {
	{"==2.10.0", "1.5.0", false},
	{"==2.10.0", "3.0a1", false},
	{"==2.10.0", "8.4.0", false},
	{"==2.10.0", "2.10.0.dev20251021+cu128", false},
	{"==2.10.0", "2.10.0.dev20251021", false},
	{"==2.10.0", "1.0.post1.dev1", false},
	{"==2.10.0", "2.9.0", false},
	{"==2.10.0", "8.3.0", false},
	{"==2.10.0", "1.0.dev1", false},
	{"==2.10.0.*", "1.0.post1", false},
	{"==2.10.0.*", "2.0.post1", false},
	{"==2.10.0.*", "2.10.0+cu126", true},
	{"==2.10.0.*", "2.10.1", false},
	{"==2.10.0.*", "1!2.0", false},
	{"==2.10.0.*", "5.3.0", false},
	{"==2.10.0.*", "2.10.0.dev20251021", true},
	{"==2.10.0.*", "2.2", false},
	{"==2.10.0.*", "1.0.dev1", false},
	{"==2.10.*", "1.0+local", false},
	{"==2.10.*", "1!2.0", false},
	{"==2.10.*", "2.10.0.dev20251021+cu128", true},
	{"==2.10.*", "1.0.dev1", false},
	{"==2.10.*", "2.11.0", false},
	{"==2.10.*", "2.0+local", false},
	{"==2.10.*", "1.0.dev1+l", false},
	{"==2.10.*", "8.4.0", false},
	{"==2.10.*", "1.0.post2.dev1", false},
	{"==2.*", "2.0+local", true},
	{"==2.*", "2.10.0+cu126", true},
	{"==2.*", "1.0+local", false},
	{"==2.*", "3.0", false},
	{"==2.*", "1.4.5", false},
	{"==2.*", "5.3.0", false},
	{"==2.*", "3.0a1", false},
	{"==2.*", "2.11.0", true},
	{"==2.*", "1.4.6", false},
	{"!=8.3.*", "1.0+local", true},
	{"!=8.3.*", "3.0.post1", true},
	{"!=8.3.*", "2.9.0", true},
	{"!=8.3.*", "1.0.dev1", true},
	{"!=8.3.*", "2.0", true},
	{"!=8.3.*", "8.3.0", false},
	{"!=8.3.*", "1.0.dev1+l", true},
	{"!=8.3.*", "2.10.0.dev20251021", true},
	{"!=8.3.*", "2.10.0.dev20251021+cu128", true},
	{">=5.3.0", "1.1", false},
	{">=5.3.0", "2.0.post1", false},
	{">=5.3.0", "1.0a1.post1", false},
	{">=5.3.0", "1.0.post1.dev1", false},
	{">=5.3.0", "1!2.0", true},
	{">=5.3.0", "1.5.0", false},
	{">=5.3.0", "1.0", false},
	{">=5.3.0", "1.0.post2.dev1", false},
	{">=5.3.0", "8.3.0", true},
	{"<3", "1.4.6", true},
	{"<3", "2.2", true},
	{"<3", "3.0.post1", false},
	{"<3", "0.9", true},
	{"<3", "2.10.1", true},
	{"<3", "1.1", true},
	{"<3", "1.0.post2.dev1", true},
	{"<3", "1.0a1.post1", true},
	{"<3", "1.4.5a5", true},
	{"<3.0a1", "2.0.0.0.1", true},
	{"<3.0a1", "1.4.5", true},
	{"<3.0a1", "2.10.0.dev20251021", true},
	{"<3.0a1", "2.11.0", true},
	{"<3.0a1", "1.0.post1", true},
	{"<3.0a1", "5.3.0", false},
	{"<3.0a1", "3.0.dev1", true},
	{"<3.0a1", "1.4.5a5", true},
	{"<3.0a1", "3.0a1", false},
	{"<=3.0", "1.0a1.post1", true},
	{"<=3.0", "5.3.0", false},
	{"<=3.0", "2.10.0+cu126", true},
	{"<=3.0", "2.10.0.dev20251021", true},
	{"<=3.0", "1.0+local", true},
	{"<=3.0", "1.5.0", true},
	{"<=3.0", "1.4.5a5", true},
	{"<=3.0", "2.2.post4", true},
	{"<=3.0", "1.1", true},
	{">2.0", "1.0.dev1+l", false},
	{">2.0", "1.0", false},
	{">2.0", "2.10.0.dev20251021", true},
	{">2.0", "2.10.1", true},
	{">2.0", "2.3", true},
	{">2.0", "1.0a1", false},
	{">2.0", "1.1", false},
	{">2.0", "2.10.0.dev20251021+cu128", true},
	{">2.0", "1.4.6", false},
	{">2.0.post1", "1.0.dev1", false},
	{">2.0.post1", "2.0.0.0.1", true},
	{">2.0.post1", "1.4.5", false},
	{">2.0.post1", "8.3.1", true},
	{">2.0.post1", "2.2.post4", true},
	{">2.0.post1", "2.10.0+cu128", true},
	{">2.0.post1", "1.0", false},
	{">2.0.post1", "1.0+local", false},
	{">2.0.post1", "3.0.dev1", true},
	{"~=2.2", "1.1", false},
	{"~=2.2", "2.11.0", true},
	{"~=2.2", "1.0a1.post1", false},
	{"~=2.2", "2.10.0.dev20251021+cu128", true},
	{"~=2.2", "2.0.post1", false},
	{"~=2.2", "1.4.5", false},
	{"~=2.2", "3.0", false},
	{"~=2.2", "2.2", true},
	{"~=2.2", "8.4.0", false},
	{"~=2.2.0", "8.4.0", false},
	{"~=2.2.0", "1.0a1.post1", false},
	{"~=2.2.0", "2.10.1", false},
	{"~=2.2.0", "3.0.dev1", false},
	{"~=2.2.0", "2.0.0.0.1", false},
	{"~=2.2.0", "1.1", false},
	{"~=2.2.0", "2.3", false},
	{"~=2.2.0", "3.0", false},
	{"~=2.2.0", "1!2.0", false},
	{"~=1.4.5a4", "1.0+local", false},
	{"~=1.4.5a4", "2.3", false},
	{"~=1.4.5a4", "5.3.0", false},
	{"~=1.4.5a4", "2.2.post4", false},
	{"~=1.4.5a4", "8.3.1", false},
	{"~=1.4.5a4", "2.0+local", false},
	{"~=1.4.5a4", "3.0a1", false},
	{"~=1.4.5a4", "2.10.1", false},
	{"~=1.4.5a4", "3.0.post1", false},
	{"~=2.2.post3", "3.0a1", false},
	{"~=2.2.post3", "2.0+local", false},
	{"~=2.2.post3", "0.9", false},
	{"~=2.2.post3", "2.10.0", true},
	{"~=2.2.post3", "1.0a1.post1", false},
	{"~=2.2.post3", "3.0.post1", false},
	{"~=2.2.post3", "2.2.1", true},
	{"~=2.2.post3", "1.4.5", false},
	{"~=2.2.post3", "1.0.dev1", false},
	{"===2.10.0", "3.0a1", false},
	{"===2.10.0", "5.3.0", false},
	{"===2.10.0", "1.0.post1.dev1", false},
	{"===2.10.0", "8.3.0", false},
	{"===2.10.0", "1.5.0", false},
	{"===2.10.0", "3.0", false},
	{"===2.10.0", "1.0.post1", false},
	{"===2.10.0", "2.10.0.dev20251021+cu128", false},
	{"===2.10.0", "1.0", false},
	{"==2.10.0+cu128", "1.0+local", false},
	{"==2.10.0+cu128", "8.4.0", false},
	{"==2.10.0+cu128", "0.9", false},
	{"==2.10.0+cu128", "1.0.dev1+l", false},
	{"==2.10.0+cu128", "1.0.dev1", false},
	{"==2.10.0+cu128", "2.9.0", false},
	{"==2.10.0+cu128", "1.0a1", false},
	{"==2.10.0+cu128", "1.1", false},
	{"==2.10.0+cu128", "2.10.0.dev20251021+cu128", false},
	{"==2.10.0.dev20251021", "2.0", false},
	{"==2.10.0.dev20251021", "2.10.0.dev20251021", true},
	{"==2.10.0.dev20251021", "2.0.post1", false},
	{"==2.10.0.dev20251021", "2.0.0.0.1", false},
	{"==2.10.0.dev20251021", "3.0.dev1", false},
	{"==2.10.0.dev20251021", "2.11.0", false},
	{"==2.10.0.dev20251021", "1.4.5a5", false},
	{"==2.10.0.dev20251021", "2.10.0.dev20251021+cu128", true},
	{"==2.10.0.dev20251021", "2.9.0", false},
	{">=2.11", "2.10.0", false},
	{">=2.11", "1.0.dev1", false},
	{">=2.11", "3.0a1", true},
	{">=2.11", "1.0.post1.dev1", false},
	{">=2.11", "2.9.0", false},
	{">=2.11", "8.3.0", true},
	{">=2.11", "2.10.0+cu128", false},
	{">=2.11", "2.10.0.dev20251021", false},
	{">=2.11", "2.0.post1", false},
	{"!=2.10.0+cu128", "1.1", true},
	{"!=2.10.0+cu128", "8.3.1", true},
	{"!=2.10.0+cu128", "3.0a1", true},
	{"!=2.10.0+cu128", "2.2.1", true},
	{"!=2.10.0+cu128", "2.2.post4", true},
	{"!=2.10.0+cu128", "8.3.0", true},
	{"!=2.10.0+cu128", "1.0a1", true},
	{"!=2.10.0+cu128", "2.11.0", true},
	{"!=2.10.0+cu128", "1.0.post1", true},
	{"==1!2.0", "1.0a1.post1", false},
	{"==1!2.0", "1.0", false},
	{"==1!2.0", "1.0a1", false},
	{"==1!2.0", "1.0.dev1+l", false},
	{"==1!2.0", "1.4.6", false},
	{"==1!2.0", "2.10.1", false},
	{"==1!2.0", "3.0a1", false},
	{"==1!2.0", "2.9.0", false},
	{"==1!2.0", "1.4.5a5", false},
	{"==2.0.0.0.*", "2.2.1", false},
	{"==2.0.0.0.*", "1.0a1", false},
	{"==2.0.0.0.*", "3.0.dev1", false},
	{"==2.0.0.0.*", "1.0.post2.dev1", false},
	{"==2.0.0.0.*", "2.10.0+cu128", false},
	{"==2.0.0.0.*", "2.0.post1", true},
	{"==2.0.0.0.*", "1.0.dev1", false},
	{"==2.0.0.0.*", "8.3.0", false},
	{"==2.0.0.0.*", "3.0a1", false},
	{"<1.0", "1.0.post1.dev1", false},
	{"<1.0", "2.10.0+cu128", false},
	{"<1.0", "1.0.post2.dev1", false},
	{"<1.0", "1.4.6", false},
	{"<1.0", "2.10.1", false},
	{"<1.0", "2.2.1", false},
	{"<1.0", "1.0.dev1+l", false},
	{"<1.0", "8.3.0", false},
	{"<1.0", "3.0.dev1", false},
	{"<1.0.post2", "2.2.post4", false},
	{"<1.0.post2", "2.0+local", false},
	{"<1.0.post2", "1.0.post1.dev1", true},
	{"<1.0.post2", "1.0.dev1+l", true},
	{"<1.0.post2", "1.0.post1", true},
	{"<1.0.post2", "1.4.5a5", false},
	{"<1.0.post2", "0.9", true},
	{"<1.0.post2", "2.0", false},
	{"<1.0.post2", "2.2", false},
	{">1.0", "8.4.0", true},
	{">1.0", "2.0+local", true},
	{">1.0", "2.0", true},
	{">1.0", "1.0.post2.dev1", false},
	{">1.0", "1.0a1.post1", false},
	{">1.0", "2.2.post4", true},
	{">1.0", "2.10.0+cu128", true},
	{">1.0", "1.0.dev1", false},
	{">1.0", "2.3", true},
	{">1.0a1", "1.0a1", false},
	{">1.0a1", "2.2.1", true},
	{">1.0a1", "2.0", true},
	{">1.0a1", "2.2.post4", true},
	{">1.0a1", "2.0.0.0.1", true},
	{">1.0a1", "1.0.dev1", false},
	{">1.0a1", "8.3.0", true},
	{">1.0a1", "2.10.1", true},
	{">1.0a1", "2.0+local", true},
	{">1.0.dev1", "2.9.0", true},
	{">1.0.dev1", "2.0+local", true},
	{">1.0.dev1", "1.0a1", true},
	{">1.0.dev1", "2.0", true},
	{">1.0.dev1", "1.4.5a5", true},
	{">1.0.dev1", "2.0.post1", true},
	{">1.0.dev1", "1.0.dev1+l", false},
	{">1.0.dev1", "2.10.0", true},
	{">1.0.dev1", "1.0.post2.dev1", true},
	{">=1.0.dev0", "2.2.post4", true},
	{">=1.0.dev0", "2.10.1", true},
	{">=1.0.dev0", "2.11.0", true},
	{">=1.0.dev0", "8.3.1", true},
	{">=1.0.dev0", "2.0", true},
	{">=1.0.dev0", "1.0a1", true},
	{">=1.0.dev0", "3.0.post1", true},
	{">=1.0.dev0", "1!2.0", true},
	{">=1.0.dev0", "1.4.5a5", true},
	{"!=1.0", "2.10.1", true},
	{"!=1.0", "8.4.0", true},
	{"!=1.0", "1.0", false},
	{"!=1.0", "0.9", true},
	{"!=1.0", "1.1", true},
	{"!=1.0", "3.0.dev1", true},
	{"!=1.0", "1.0.post1.dev1", true},
	{"!=1.0", "3.0", true},
	{"!=1.0", "2.10.0+cu128", true},
	{"==1.0a1", "3.0a1", false},
	{"==1.0a1", "1.0.dev1+l", false},
	{"==1.0a1", "1.0", false},
	{"==1.0a1", "1.1", false},
	{"==1.0a1", "1.0a1", true},
	{"==1.0a1", "2.2.post4", false},
	{"==1.0a1", "1.0.dev1", false},
	{"==1.0a1", "3.0", false},
	{"==1.0a1", "2.10.0+cu128", false},
	{"!=1.0a1", "2.10.0", true},
	{"!=1.0a1", "2.9.0", true},
	{"!=1.0a1", "1.0.post2.dev1", true},
	{"!=1.0a1", "3.0", true},
	{"!=1.0a1", "1!2.0", true},
	{"!=1.0a1", "2.0", true},
	{"!=1.0a1", "2.0.post1", true},
	{"!=1.0a1", "2.10.0+cu128", true},
	{"!=1.0a1", "2.2.1", true},
};

static void test_spec_match_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof match_cases / sizeof match_cases[0]; i++) {
		struct ow_specset set;
		struct ow_version v;
		if (ow_spec_parse(&set, match_cases[i].spec) != 0)
			fail_msg("%s: %s", match_cases[i].spec, ow_err_detail());
		parse_ok(&v, match_cases[i].version);
		assert_int_equal(set.n, 1);
		if (ow_spec_match(&set.specs[0], &v) != match_cases[i].match)
			fail_msg("'%s' %s '%s'", match_cases[i].version,
				 match_cases[i].match ? "should match" : "should not match",
				 match_cases[i].spec);
	}
}

/* Sets with the pre-release rule: allowed when asked or named by a specifier. */
static const struct {
	const char *spec;
	const char *version;
	bool allow_pre;
	bool want;
} contains_cases[] = {
	{"==2.10.0.dev20251021", "2.10.0.dev20251021+cu128", false, true},
	{"==2.10.0.dev20251021", "2.10.0.dev20251022+cu128", false, false},
	{"==2.7.0", "2.7.0+cu128", false, true},
	{"==2.7.0+cu128", "2.7.0+cu126", false, false},
	{"==2.7.0+cu128", "2.7.0+cu128", false, true},
	{"==2.7.0+cu128", "2.7.0", false, false},
	{">=2.11", "2.12.0.dev20260101+cu130", false, false},
	{">=2.11", "2.12.0.dev20260101+cu130", true, true},
	{">=2.11", "2.11.0+cu130", false, true},
	{">=2.11", "2.10.1", true, false},
	{"", "2.10.0", false, true},
	{"", "2.10.0.dev20251021", false, false},
	{"", "2.10.0.dev20251021", true, true},
	{"!=8.3.*,>=5.3.0", "8.3.2", false, false},
	{"!=8.3.*,>=5.3.0", "8.4.0", false, true},
	{"!=8.3.*,>=5.3.0", "5.2.0", false, false},
	{"!=8.3.*,>=5.3.0", "11.0.0", false, true},
	{"!=8.3.*,>=5.3.0", "11.0.0.dev1", false, false},
	{">=4.10.0", "4.15.0", false, true},
	{">=4.10.0", "4.9.0", false, false},
	{"==12.8.61", "12.8.61", false, true},
	{"==12.8.61", "12.8.57", false, false},
	{"==3.5.0+git7416ffcb", "3.5.0+git7416ffcb", false, true},
	{"==3.5.0+git7416ffcb", "3.5.0+git00000000", false, false},
	{">=2.0,<3", "2.5", false, true},
	{">=2.0,<3", "3.0a1", true, false},
	{">=2.0,<3", "3.0", false, false},
	{">=2.0,<3a5", "3.0a1", false, true},
	{"<3a5", "2.0", false, true},
	{"!=1.0a1", "1.0a2", false, false},
	{"==2.10.*", "2.10.0.dev20251021+cu128", false, false},
	{"==2.10.*", "2.10.0.dev20251021+cu128", true, true},
	{"~=0.25.0", "0.25.0.dev20251021", true, false}, /* a dev release sorts below 0.25.0 */
	{"~=0.25.0", "0.25.1.dev1", true, true},
	{"~=0.25.0", "0.26.0", true, false},
	{"===2.10.0+cu128", "2.10.0+cu128", false, true},
	{"===2.10.0", "2.10.0+cu128", false, false},
	{"===2.10", "2.10.0", false, false},
};

static void test_spec_contains(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof contains_cases / sizeof contains_cases[0]; i++) {
		struct ow_specset set;
		struct ow_version v;
		if (ow_spec_parse(&set, contains_cases[i].spec) != 0)
			fail_msg("%s: %s", contains_cases[i].spec, ow_err_detail());
		parse_ok(&v, contains_cases[i].version);
		if (ow_spec_contains(&set, &v, contains_cases[i].allow_pre) != contains_cases[i].want)
			fail_msg("case %zu: '%s' in '%s' (allow_pre %d) should be %d", i,
				 contains_cases[i].version, contains_cases[i].spec,
				 contains_cases[i].allow_pre, contains_cases[i].want);
	}
}

static const struct {
	const char *spec;
	bool ok;
} parse_cases[] = {
	{"=1.0", false},
	{"1.0", false},
	{"==", false},
	{">=1.0,,<2", false}, /* packaging's SpecifierSet allows it, its Requirement grammar does not */
	{"==v1.0a1.*", false},
	{"==1.0+cpu.*", false},
	{"~=1", false},
	{"~=1.0.*", false},
	{"<1.0+l", false},
	{">=1.0+l", false},
	{"<=1.0+l", false},
	{"~=1.0+l", false},
	{">1.0+l", false},
	{">=1.0.*", false},
	{"<1.*", false},
	{"=== ", false},
	{"==1.0 .*", false},
	{"==1.0.*.*", false},
	{">= 1.0 1.0", false},
	{"==1.0;", false},
	{"~=", false},
	{">>1.0", false},
	{"=<1.0", false},
	{",>=1.0", false},
	{"== 99999999999999999999", false}, /* over OW_VER_NUM_MAX */
	{">=2.0,<3", true},
	{"==2.10.0.*", true},
	{"~=2.2", true},
	{"!=8.3.*,>=5.3.0", true},
	{" >= 1.0 , < 2 ", true},
	{"", true},
	{"===foobar", true},
	{"==v1.0", true},
	{"==1.0.post1", true},
	{"==1!1.0.*", true},
	{">=1.0,", true},
	{"<=2.0a1", true},
};

static void test_spec_parse_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof parse_cases / sizeof parse_cases[0]; i++) {
		struct ow_specset set;
		int rc = ow_spec_parse(&set, parse_cases[i].spec);
		if ((rc == 0) != parse_cases[i].ok)
			fail_msg("'%s': rc %d, want %s", parse_cases[i].spec, rc,
				 parse_cases[i].ok ? "ok" : "EPARSE");
		if (!parse_cases[i].ok)
			assert_int_equal(rc, OW_EPARSE);
	}
}

static void test_spec_format_and_limits(void **state)
{
	(void)state;
	struct ow_specset set;
	char buf[256];
	assert_int_equal(ow_spec_parse(&set, " >= 2.0 , <3.0a1, ==2.10.*, ~=2.2, ===foo, !=2.5+Cu128"), 0);
	assert_int_equal(set.n, 6);
	assert_int_equal(ow_spec_format(&set, buf, sizeof buf), 0);
	assert_string_equal(buf, ">=2.0,<3.0a1,==2.10.*,~=2.2,===foo,!=2.5+cu128");
	assert_int_equal(ow_spec_format(&set, buf, 10), OW_ETOOBIG);
	char many[OW_SPEC_MAX * 8 + 16] = "";
	for (int i = 0; i <= OW_SPEC_MAX; i++)
		tu_fmt(many + strlen(many), sizeof many - strlen(many), "%s>=%d", i ? "," : "", i);
	assert_int_equal(ow_spec_parse(&set, many), OW_EPARSE);
	char longv[300] = "==";
	memset(longv + 2, '1', 250);
	longv[252] = '\0';
	assert_int_equal(ow_spec_parse(&set, longv), OW_EPARSE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_normalize_table),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_equal),
		cmocka_unit_test(test_parts_and_public),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_real_versions_roundtrip),
		cmocka_unit_test(test_spec_match_table),
		cmocka_unit_test(test_spec_contains),
		cmocka_unit_test(test_spec_parse_table),
		cmocka_unit_test(test_spec_format_and_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
