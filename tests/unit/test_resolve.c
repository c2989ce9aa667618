/* test_resolve.c - set matching: which torchvision / torchaudio goes with
 * which torch, from their pins (real pin forms: docs/index-quirks.md), with the
 * sample index's irregularities as tables (day off, missing day, stalled
 * platform, unpinned and >= pins, metadata not fetched yet). */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#include "resolveint.h"

#define MAXC 8

struct cand {
	const char *version;
	const char *pin; /* NULL unpinned */
	int meta;        /* 1 known, 0 not fetched, -1 not available */
};

struct tab {
	struct ow_version v[MAXC];
	struct rs_mc mc[MAXC];
	size_t n;
};

static void load(struct tab *t, const struct cand *c)
{
	t->n = 0;
	for (; c->version; c++, t->n++) {
		assert_int_equal(ow_pep440_parse(&t->v[t->n], c->version), 0);
		t->mc[t->n] = (struct rs_mc){&t->v[t->n], rs_version_date(&t->v[t->n]), c->meta, c->pin,
		                             true, 0};
	}
}

static const struct cand vision_dayoff[] = {
	{"0.25.0.dev20251022+cu128", "==2.10.0.dev20251021", 1}, /* built against the day before */
	{"0.25.0.dev20251020+cu128", "==2.10.0.dev20251020", 1},
	{"0.25.0.dev20251019+cu128", "==2.10.0.dev20251019", 1},
	{NULL, NULL, 0},
};

static const struct {
	const char *torch;
	const struct cand *cands;
	long want;
} one_cases[] = {
	{"2.10.0.dev20251021+cu128", vision_dayoff, 0}, /* the D+1 torchvision pins torch D */
	{"2.10.0.dev20251022+cu128", vision_dayoff, RS_NONE},
	{"2.10.0.dev20251020+cu128", vision_dayoff, 1},
	{"2.10.0.dev20251019", vision_dayoff, 2}, /* no local label on the cpu/ macOS wheels */
	{"2.10.0.dev20251018+cu128", vision_dayoff, RS_NONE},
	/* the newest candidate pins it exactly: an older one not fetched yet
	 * cannot change that, and is never read */
	{"2.10.0.dev20251021+cu128",
	 (const struct cand[]){{"0.25.0.dev20251022", "==2.10.0.dev20251021", 1},
	                       {"0.25.0.dev20251021", NULL, 0},
	                       {NULL, NULL, 0}},
	 0},
	/* a newer one not fetched yet and in scope: nothing is decided */
	{"2.10.0.dev20251021+cu128",
	 (const struct cand[]){{"0.25.0.dev20251022", NULL, 0},
	                       {"0.25.0.dev20251021", "==2.10.0.dev20251021", 1},
	                       {NULL, NULL, 0}},
	 RS_NEED},
	/* no exact pin among the known: an unknown older one might have it */
	{"2.10.0+cu128",
	 (const struct cand[]){{"0.26.0", ">=2.10", 1}, {"0.25.0", NULL, 0}, {NULL, NULL, 0}},
	 RS_NEED},
	/* out of scope (built a month before): not needed, not a match */
	{"2.10.0.dev20251121+cu128",
	 (const struct cand[]){{"0.25.0.dev20251021", NULL, 0}, {NULL, NULL, 0}}, RS_NONE},
	/* metadata not available: passed over */
	{"2.10.0.dev20251021",
	 (const struct cand[]){{"2.10.0.dev20251021", NULL, -1}, {NULL, NULL, 0}}, RS_NONE},
	/* stable torchaudio: ==, then unpinned, then >= */
	{"2.9.1+cu128",
	 (const struct cand[]){{"2.10.0", "==2.10.0", 1}, {"2.9.1", "==2.9.1", 1}, {NULL, NULL, 0}}, 1},
	{"2.12.0+cu130",
	 (const struct cand[]){{"2.11.0", ">=2.11", 1}, {"2.10.0", "==2.10.0", 1}, {NULL, NULL, 0}},
	 0},
	{"2.10.0+cu128",
	 (const struct cand[]){{"2.11.0", ">=2.11", 1}, {"2.10.0", NULL, 1}, {NULL, NULL, 0}}, 1},
	/* an exact pin wins over a newer unpinned build */
	{"2.10.0.dev20251021",
	 (const struct cand[]){{"2.10.0.dev20251022", NULL, 1},
	                       {"2.10.0.dev20251021", "==2.10.0.dev20251021", 1},
	                       {NULL, NULL, 0}},
	 1},
	/* a local pin only matches that build */
	{"2.7.0+cu126",
	 (const struct cand[]){{"0.22.0", "==2.7.0+cu128", 1}, {NULL, NULL, 0}}, RS_NONE},
	{"2.7.0+cu128",
	 (const struct cand[]){{"0.22.0", "==2.7.0+cu128", 1}, {NULL, NULL, 0}}, 0},
	/* one root holding two variants (an export of cu126 and cu128 sets, a
	 * devpi index): both builds pin the same torch; torch's own label wins */
	{"2.10.0+cu126",
	 (const struct cand[]){{"0.25.0+cu128", "==2.10.0", 1},
	                       {"0.25.0+cu126", "==2.10.0", 1},
	                       {NULL, NULL, 0}},
	 1},
	{"2.10.0+cu128",
	 (const struct cand[]){{"0.25.0+cu128", "==2.10.0", 1},
	                       {"0.25.0+cu126", "==2.10.0", 1},
	                       {NULL, NULL, 0}},
	 0},
	/* ... and a build for another variant is never taken, even as the only one */
	{"2.10.0+cu126",
	 (const struct cand[]){{"0.25.0+cu128", "==2.10.0", 1}, {NULL, NULL, 0}}, RS_NONE},
	/* the same label not fetched yet: its metadata is asked for first */
	{"2.10.0+cu126",
	 (const struct cand[]){{"0.25.0+cu128", "==2.10.0", 1},
	                       {"0.25.0+cu126", NULL, 0},
	                       {NULL, NULL, 0}},
	 RS_NEED},
	/* no label on torch (PyPI's): an unlabelled build before a labelled one */
	{"2.10.0",
	 (const struct cand[]){{"0.25.0+cpu", "==2.10.0", 1}, {"0.25.0", "==2.10.0", 1},
	                       {NULL, NULL, 0}},
	 1},
	/* a label that names no variant (a lab's own +lab1 rebuild) goes with any torch */
	{"2.10.0+cu126",
	 (const struct cand[]){{"0.25.0+lab1", "==2.10.0", 1}, {NULL, NULL, 0}}, 0},
};

static void test_match_one(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof one_cases / sizeof one_cases[0]; i++) {
		struct ow_version t;
		struct tab c;
		assert_int_equal(ow_pep440_parse(&t, one_cases[i].torch), 0);
		load(&c, one_cases[i].cands);
		long got = rs_match_one(&t, rs_version_date(&t), 0, c.mc, c.n, false);
		if (got != one_cases[i].want)
			fail_msg("case %zu (torch %s): got %ld, want %ld", i, one_cases[i].torch, got,
			         one_cases[i].want);
	}
}

/* The nightly days of the sample index (MANIFEST.json irregularities). */
static const struct cand torches[] = {
	{"2.10.0.dev20251022+cu128", NULL, 1}, {"2.10.0.dev20251021+cu128", NULL, 1},
	{"2.10.0.dev20251020+cu128", NULL, 1}, {"2.10.0.dev20251019+cu128", NULL, 1},
	{"2.10.0.dev20251018+cu128", NULL, 1}, {NULL, NULL, 0},
};
static const struct cand vision[] = {
	{"0.25.0.dev20251022+cu128", "==2.10.0.dev20251021", 1},
	{"0.25.0.dev20251020+cu128", "==2.10.0.dev20251020", 1},
	{"0.25.0.dev20251019+cu128", "==2.10.0.dev20251019", 1},
	{"0.25.0.dev20251018+cu128", "==2.10.0.dev20251018", 1},
	{NULL, NULL, 0},
};
static const struct cand audio_linux[] = { /* no 20251020 */
	{"2.10.0.dev20251022+cu128", "==2.10.0.dev20251022", 1},
	{"2.10.0.dev20251021+cu128", "==2.10.0.dev20251021", 1},
	{"2.10.0.dev20251019+cu128", "==2.10.0.dev20251019", 1},
	{"2.10.0.dev20251018+cu128", "==2.10.0.dev20251018", 1},
	{NULL, NULL, 0},
};
static const struct cand audio_windows[] = { /* stalled */
	{"2.10.0.dev20251018+cu128", "==2.10.0.dev20251018", 1},
	{NULL, NULL, 0},
};

static void choose(const struct cand *audio, size_t skip_torches, struct rs_choice *ch,
                   uint32_t *miss)
{
	static struct tab t, v, a;
	load(&t, torches);
	load(&v, vision);
	load(&a, audio);
	const struct rs_mc *projs[2] = {v.mc, a.mc};
	size_t n[2] = {v.n, a.n};
	ch->missing = miss;
	rs_choose(t.mc + skip_torches, t.n - skip_torches, projs, n, 2, false, ch);
}

/* --pair newest (pip's rule) against the default, on the real pins:
 * torchvision 0.29.0 says torch==2.14.0, 0.29.1 and 0.29.2 say >=2.14.0. */
static const struct cand vision_029[] = {
	{"0.29.2", ">=2.14.0", 1}, {"0.29.1", ">=2.14.0", 1}, {"0.29.0", "==2.14.0", 1}, {NULL, NULL, 0},
};
static const struct {
	const char *torch;
	const struct cand *cands;
	long matched, newest;
} pair_cases[] = {
	{"2.14.0+cu130", vision_029, 2, 0},
	{"2.15.0+cu130", vision_029, 0, 0},
	{"2.13.0", vision_029, RS_NONE, RS_NONE},
	/* the newest that admits torch is known: newest needs nothing more */
	{"2.14.0",
	 (const struct cand[]){{"0.29.2", ">=2.14.0", 1}, {"0.29.1", NULL, 0}, {NULL, NULL, 0}},
	 RS_NEED, 0},
	{"2.14.0",
	 (const struct cand[]){{"0.30.0", NULL, 0}, {"0.29.2", ">=2.14.0", 1}, {NULL, NULL, 0}},
	 RS_NEED, RS_NEED},
	/* a newer build that does not admit torch is passed over by both */
	{"2.14.0",
	 (const struct cand[]){{"0.30.0", ">=2.15.0", 1}, {"0.29.2", ">=2.14.0", 1}, {NULL, NULL, 0}},
	 1, 1},
	{"2.10.0.dev20251021",
	 (const struct cand[]){{"2.10.0.dev20251022", NULL, 1},
	                       {"2.10.0.dev20251021", "==2.10.0.dev20251021", 1},
	                       {NULL, NULL, 0}},
	 1, 0},
};

static void test_match_newest(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof pair_cases / sizeof pair_cases[0]; i++) {
		struct ow_version t;
		struct tab c;
		assert_int_equal(ow_pep440_parse(&t, pair_cases[i].torch), 0);
		load(&c, pair_cases[i].cands);
		long m = rs_match_one(&t, rs_version_date(&t), 0, c.mc, c.n, false);
		long n = rs_match_one(&t, rs_version_date(&t), 0, c.mc, c.n, true);
		if (m != pair_cases[i].matched || n != pair_cases[i].newest)
			fail_msg("case %zu (torch %s): matched %ld newest %ld, want %ld %ld", i,
			         pair_cases[i].torch, m, n, pair_cases[i].matched, pair_cases[i].newest);
	}
}

static void test_choose_latest(void **state)
{
	(void)state;
	struct rs_choice ch = {0};
	uint32_t miss[MAXC];
	choose(audio_linux, 0, &ch, miss);
	assert_int_equal(ch.torch, 1); /* 20251021 + vision 20251022 + audio 20251021 */
	assert_int_equal(ch.pick[0], 0);
	assert_int_equal(ch.pick[1], 1);
	assert_int_equal(ch.examined, 2);
	assert_int_equal(miss[0], 1u); /* torch 20251022: no torchvision */
	/* from 20251020 down: the missing torchaudio day is passed over */
	choose(audio_linux, 2, &ch, miss);
	assert_int_equal(ch.torch, 1);
	assert_int_equal(miss[0], 2u);
	assert_int_equal(ch.pick[0], 2);
	assert_int_equal(ch.pick[1], 2);
}

static void test_choose_stalled(void **state)
{
	(void)state;
	struct rs_choice ch = {0};
	uint32_t miss[MAXC];
	choose(audio_windows, 0, &ch, miss);
	assert_int_equal(ch.torch, 4);
	assert_int_equal(miss[0], 3u); /* neither */
	for (int i = 1; i < 4; i++)
		assert_int_equal(miss[i], 2u); /* torchaudio */
	/* an unusable torch (Requires-Python) is passed over, not reported */
	struct tab t, v, a;
	load(&t, torches);
	load(&v, vision);
	load(&a, audio_linux);
	t.mc[1].usable = false;
	const struct rs_mc *projs[2] = {v.mc, a.mc};
	size_t n[2] = {v.n, a.n};
	ch.missing = miss;
	rs_choose(t.mc, t.n, projs, n, 2, false, &ch);
	assert_int_equal(ch.torch, 3);
	assert_int_equal(miss[1], 0u);
	/* metadata still to come: RS_NEED */
	v.mc[1].meta = 0;
	rs_choose(t.mc, t.n, projs, n, 2, false, &ch);
	assert_int_equal(ch.torch, RS_NEED);
}

static void test_dates(void **state)
{
	(void)state;
	static const struct {
		const char *v;
		uint32_t date;
	} d[] = {{"2.10.0.dev20251021+cu128", 20251021}, {"2.10.0", 0}, {"2.10.0.dev1", 0},
	         {"0.25.0.dev20251399", 0}, {"1.0.dev20240229", 20240229}};
	for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) {
		struct ow_version v;
		assert_int_equal(ow_pep440_parse(&v, d[i].v), 0);
		assert_int_equal(rs_version_date(&v), d[i].date);
	}
	assert_int_equal(rs_day_number(19700101), 0);
	assert_int_equal(rs_day_number(20251101) - rs_day_number(20251030), 2);
	assert_int_equal(rs_day_number(20250301) - rs_day_number(20250228), 1);
	assert_int_equal(rs_day_number(20240301) - rs_day_number(20240228), 2);
	assert_true(rs_in_scope(20251101, 20251030));
	assert_false(rs_in_scope(20251101, 20251029));
	assert_true(rs_in_scope(20251101, 20251205)); /* newer builds always */
	assert_true(rs_in_scope(0, 20250101));
	assert_true(rs_in_scope(20250101, 0));
}

/* pip's order of build tags: none < "1" < "1a" < "2" < "10" (a number, then
 * the rest as text). */
static void test_build_tags(void **state)
{
	(void)state;
	static const char *const order[] = {NULL, "0", "1", "1a", "1b", "2", "10", "10x"};
	size_t n = sizeof order / sizeof order[0];
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			struct rs_build a, b;
			rs_build_parse(order[i], &a);
			rs_build_parse(order[j], &b);
			int want = i < j ? -1 : i > j;
			assert_int_equal(rs_build_cmp(&a, &b), want);
		}
	struct rs_build b;
	rs_build_parse("", &b);
	assert_int_equal(b.num, -1);
	rs_build_parse("99999999999999999999", &b); /* no overflow */
	assert_true(b.num > 0);
}

/* Stable releases carry no date in their version: the index's upload time
 * bounds the exact-pin search instead (PyPI's torchvision page lists every
 * release since 0.1.6; torchaudio 2.11.1 pins torch>=2.11, not ==). */
static void test_upload_scope(void **state)
{
	(void)state;
	struct tab c;
	struct ow_version t;
	assert_int_equal(ow_pep440_parse(&t, "2.15.0"), 0);
	load(&c, (const struct cand[]){{"2.11.1", ">=2.11", 1},
	                               {"2.11.0", NULL, 0},
	                               {"2.10.0", NULL, 0},
	                               {NULL, NULL, 0}});
	/* upload days unknown (an HTML page): an older one might pin 2.15.0 exactly */
	assert_int_equal(rs_match_one(&t, 0, 20261028, c.mc, c.n, false), RS_NEED);
	c.mc[0].uploaded = 20261028;
	c.mc[1].uploaded = 20260323;
	c.mc[2].uploaded = 20260121;
	/* uploaded months before torch: cannot pin it, never read; the loose pin wins */
	assert_int_equal(rs_match_one(&t, 0, 20261028, c.mc, c.n, false), 0);
	/* within RS_PIN_DAYS before torch's upload: it still could */
	c.mc[1].uploaded = 20261023;
	assert_int_equal(rs_match_one(&t, 0, 20261028, c.mc, c.n, false), RS_NEED);
	/* torch's upload unknown: no bound */
	c.mc[1].uploaded = 20260323;
	assert_int_equal(rs_match_one(&t, 0, 0, c.mc, c.n, false), RS_NEED);
	/* nothing admits yet: an unknown older one is needed whatever its age */
	c.mc[0].pin = "==2.11.1";
	assert_int_equal(rs_match_one(&t, 0, 20261028, c.mc, c.n, false), RS_NEED);
	assert_int_equal(rs_upload_day("2026-10-28T15:21:34Z"), 20261028);
	assert_int_equal(rs_upload_day("2026-09-30T17:56:58.137259Z"), 20260930);
	assert_int_equal(rs_upload_day("yesterday"), 0);
	assert_int_equal(rs_upload_day(NULL), 0);
}

/* The members and every requested project come from --index-url only,
 * under any spelling a Requires-Dist line may use (PEP 503). */
static void test_index_only(void **state)
{
	(void)state;
	struct ow_resolve_opts o = {0};
	static const char *const yes[] = {"torch", "TorchVision", "TORCHAUDIO", "Torch",
	                                  "torchVISION"};
	static const char *const no[] = {"filelock", "torchvisionx", "torch_audio", "Torch.Vision",
	                                 "pytorch-triton", "opt-einsum", "-torch", ""};
	for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
		assert_true(rs_index_only(&o, yes[i]));
	for (size_t i = 0; i < sizeof no / sizeof *no; i++)
		assert_false(rs_index_only(&o, no[i]));
	static const char *const projects[] = {"torch", "opt_einsum"};
	o.projects = projects;
	o.nprojects = 2;
	assert_true(rs_index_only(&o, "Opt.Einsum"));
	assert_true(rs_index_only(&o, "torchvision")); /* always, requested or not */
	assert_false(rs_index_only(&o, "filelock"));
}

/* ---- why a release has no file for a target (rs_unfit_why) ----------------- */

struct ufile {
	const char *py, *abi, *plat; /* NULL py, "" plat: the release's sdist */
	const char *rp;              /* data-requires-python, NULL none */
};

#define UF_MAX 16

/* The release 'version' of a list made of files, and why target t has none. */
static void unfit(const char *version, const struct ufile *f, const char *python,
                  const char *platform, char *out, size_t cap)
{
	struct rs_cand c[UF_MAX] = {{0}};
	char *tags[3 * UF_MAX], text[4 * UF_MAX][64];
	struct rs_list l = {.c = c, .tags = tags};
	struct ow_target t;
	assert_int_equal(ow_target_parse(&t, python, platform), 0);
	for (; f->plat || f->py; f++, l.n++) {
		char *k = text[4 * l.n];
		assert_int_equal(ow_pep440_parse(&c[l.n].v, version), 0);
		c[l.n].sdist = !f->py;
		snprintf(k, 64, "%s", f->rp ? f->rp : "");
		c[l.n].requires_python = f->rp ? k : NULL;
		c[l.n].tag = l.ntags;
		snprintf(k + 64, 64, "%s", f->py ? f->py : "");
		snprintf(k + 128, 64, "%s", f->abi ? f->abi : "");
		snprintf(k + 192, 64, "%s", f->plat);
		for (int i = 0; i < 3; i++)
			tags[3 * l.ntags + i] = k + 64 * (i + 1);
		l.ntags++;
	}
	struct ow_str s = {0};
	assert_int_equal(rs_unfit_why(&l, &c[0].v, &t, &s), 0);
	snprintf(out, cap, "%s", s.p ? s.p : "");
	ow_str_dispose(&s);
}

/* numpy 1.21.6 as PyPI lists it (Requires-Python >=3.7,<3.11) on Python 3.12:
 * the Requires-Python named first, then the ABIs its wheels are for. */
static void test_unfit_python(void **state)
{
	(void)state;
	static const char rp[] = ">=3.7,<3.11";
	static const struct ufile numpy[] = {
		{"cp37", "cp37m", "manylinux_2_12_x86_64.manylinux2010_x86_64", rp},
		{"cp38", "cp38", "manylinux_2_12_x86_64.manylinux2010_x86_64", rp},
		{"cp39", "cp39", "win_amd64", rp},
		{"cp310", "cp310", "manylinux_2_17_x86_64.manylinux2014_x86_64", rp},
		{"cp310", "cp310", "macosx_11_0_arm64", rp},
		{NULL, NULL, "", rp}, /* numpy-1.21.6.zip */
		{NULL, NULL, NULL, NULL},
	};
	char why[1024];
	unfit("1.21.6", numpy, "3.12", "linux-x86_64", why, sizeof why);
	assert_string_equal(why, "its Requires-Python '>=3.7,<3.11' excludes this target's Python "
	                         "3.12, and its wheels are for cp37m, cp38, cp39, cp310, not this "
	                         "target's cp312 (--python 3.10 would take it) (it has an sdist: "
	                         "--allow-sdist ships it, and the target builds it)");
	/* Python 3.9 on Linux: its cp39 wheel is for Windows, its Linux ones for others */
	unfit("1.21.6", numpy, "3.9", "linux-x86_64", why, sizeof why);
	assert_string_equal(why, "none of its 5 wheels is for this target (each fits its Python or "
	                         "its platform, none both) (--python 3.10 would take it) (it has an "
	                         "sdist: --allow-sdist ships it, and the target builds it)");
}

/* Wheels for a newer glibc or macOS than the target's: named, with the
 * --platform that takes one; another OS's only: named, no --platform. */
static void test_unfit_platform(void **state)
{
	(void)state;
	static const struct ufile guid[] = {
		{"cp39", "abi3", "manylinux_2_31_x86_64", ">=3.9"},
		{"cp39", "abi3", "manylinux_2_31_aarch64", ">=3.9"},
		{"cp39", "abi3", "macosx_14_0_arm64", ">=3.9"},
		{"cp39", "abi3", "macosx_15_0_arm64", ">=3.9"},
		{"cp39", "abi3", "win_amd64", ">=3.9"},
		{NULL, NULL, NULL, NULL},
	};
	char why[1024];
	unfit("1.7.3", guid, "3.12", "linux-x86_64", why, sizeof why);
	assert_string_equal(why, "its wheels are for macosx_14_0_arm64, macosx_15_0_arm64, "
	                         "manylinux_2_31_aarch64, manylinux_2_31_x86_64, win_amd64, not this "
	                         "target's "
	                         "manylinux_2_28_x86_64; --platform manylinux_2_31_x86_64 (a newer "
	                         "glibc than this target's manylinux_2_28) would take it");
	unfit("1.7.3", guid, "3.12", "macos-arm64", why, sizeof why);
	assert_non_null(strstr(why, "; --platform macosx_14_0_arm64 (a newer macOS than this "
	                            "target's macosx_11_0) would take it"));
	unfit("1.7.3", guid, "3.12", "windows-arm64", why, sizeof why);
	assert_null(strstr(why, "--platform"));
	assert_non_null(strstr(why, "not this target's win_arm64"));
	/* only an sdist; a Requires-Python alone */
	static const struct ufile sdist[] = {{NULL, NULL, "", NULL}, {NULL, NULL, NULL, NULL}};
	unfit("4.9.3", sdist, "3.12", "linux-x86_64", why, sizeof why);
	assert_string_equal(why, "it has only an sdist (--allow-sdist ships it, and the target "
	                         "builds it at install)");
	static const struct ufile pure[] = {{"py3", "none", "any", "<3.11"}, {NULL, NULL, NULL, NULL}};
	unfit("1.0", pure, "3.12", "linux-x86_64", why, sizeof why);
	assert_string_equal(why, "its Requires-Python '<3.11' excludes this target's Python 3.12");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match_one),
		cmocka_unit_test(test_match_newest),
		cmocka_unit_test(test_choose_latest),
		cmocka_unit_test(test_choose_stalled),
		cmocka_unit_test(test_dates),
		cmocka_unit_test(test_build_tags),
		cmocka_unit_test(test_upload_scope),
		cmocka_unit_test(test_index_only),
		cmocka_unit_test(test_unfit_python),
		cmocka_unit_test(test_unfit_platform),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
