/* cmd_resolve.c - offwheel resolve: matched sets for a target matrix. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "fleetplan.h"
#include "interrupt.h"
#include "render.h"
#include "offwheel/export.h"
#include "offwheel/resolve.h"
#include "offwheel/str.h"
#include "stackopts.h"
#include "targetopts.h"

static const char usage[] =
	"resolve [--channel CH | --index-url URL] [--variant LIST] [--python LIST] "
	"[--platform LIST] [--date YYYYMMDD | --version V] [--no-deps] [--probes DIR|FILE]";
static const char description[] =
	"Pick a matched torch / torchvision / torchaudio set for every variant ×\n"
	"python × platform, with its full dependency closure, and print the matrix.\n"
	"torchvision and torchaudio are matched to torch by the pins in their\n"
	"metadata (PEP 658 .metadata files, else the wheel), never by date alone;\n"
	"'latest' is the newest torch that every project matches.  Pages not crawled\n"
	"yet and dependency pages ({index}/{project}/) are crawled on the way;\n"
	"stored pages fetched --max-age ago or longer are revalidated (conditional\n"
	"GETs), and the age of the oldest page used is printed.\n"
	"The sets are stored ('offwheel ls sets').  Exit 4 when a target has no\n"
	"complete set: it is shown with what is missing and the newest complete\n"
	"alternative.  With --probes (what 'offwheel probe' wrote on the lab's\n"
	"machines) the targets are the machines' Pythons and platforms, and the end\n"
	"names the set each machine would get, or why none fits (as sync --probes,\n"
	"without fetching; docs/fleet.md).";

enum { OPT_OFFLINE = 380, OPT_PROBES };

static const struct cli_opt opts[] = {
	CLI_INDEX_OPTS,
	CLI_TARGET_OPTS,
	CLI_STACK_OPTS,
	CLI_MAX_AGE_OPT,
	{"offline", OPT_OFFLINE, no_argument, NULL,
	 "use only what the workspace holds (no crawl, no metadata downloads); a target that "
	 "needs a page or metadata never read is incomplete and names it"},
	{"probes", OPT_PROBES, required_argument, "DIR|FILE", "the machines' probes (offwheel probe): their Pythons and platforms are the targets, and each is named with its set"},
	{NULL, 0, 0, NULL, NULL},
};

struct ropts {
	struct cli_index_opts idx;
	struct cli_target_opts tgt;
	struct cli_stack_opts stack;
	int offline;
	struct cli_strlist probes;
	struct fleet fleet;
};

static int on_opt(struct cli *c, int key, const char *arg, void *ud)
{
	struct ropts *o = ud;
	if (key == OPT_OFFLINE) {
		o->offline = 1;
		return 0;
	}
	if (key == OPT_PROBES)
		return cli_strlist_add_csv(&o->probes, arg);
	const struct cli_stack_opts_all all = {&o->stack, &o->idx, &o->tgt};
	return cli_stack_opts_all_opt(c, &all, key, arg);
}

/* ---- JSON -------------------------------------------------------------------- */

json_t *cli_resolve_member_json(const struct ow_resolve_member *m)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s?, s:s?, s:s?, s:I}", "project", m->project,
	                 "version", m->version, "role", ow_member_role_name(m->role), "filename",
	                 m->filename, "url", m->url, "sha256", *m->sha256 ? m->sha256 : NULL,
	                 "sha256_source", m->sha256_source, "required_by", m->required_by,
	                 "file_id", (json_int_t)m->file_id);
}

static json_t *strs_json(char *const *v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

static json_t *csv_json(const char *csv)
{
	json_t *a = json_array();
	while (*csv) {
		size_t n = strcspn(csv, ",");
		json_array_append_new(a, json_stringn(csv, n));
		csv += n + (csv[n] == ',');
	}
	return a;
}

/* The conflict in t->error as data: its causes (docs/json/resolve.schema.json). */
static json_t *causes_json(const struct ow_resolve_target *t)
{
	json_t *a = json_array();
	for (size_t i = 0; i < t->ncauses; i++) {
		const struct ow_cause *c = &t->causes[i];
		json_array_append_new(a, json_pack("{s:s, s:s?, s:s?, s:s?, s:s?, s:I, s:I, s:I}", "kind",
		                                   ow_cause_kind_name(c->kind), "project", c->project,
		                                   "spec", c->spec, "by", c->by, "detail", c->detail,
		                                   "count", (json_int_t)c->count, "depth",
		                                   (json_int_t)c->depth, "reason", (json_int_t)c->reason));
	}
	return a;
}

static json_t *target_json(const struct ow_resolve_report *r, const struct ow_resolve_target *t)
{
	json_t *versions = json_object(), *members = json_array(), *skipped = json_array();
	for (size_t p = 0; p < r->nprojects; p++)
		json_object_set_new(versions, r->projects[p],
		                    *t->versions[p] ? json_string(t->versions[p]) : json_null());
	for (size_t i = 0; i < t->nmembers; i++)
		json_array_append_new(members, cli_resolve_member_json(&t->members[i]));
	for (size_t i = 0; i < t->nskipped; i++)
		json_array_append_new(skipped, json_pack("{s:s, s:o, s:s?}", "torch", t->skipped[i].torch,
		                                         "missing", csv_json(t->skipped[i].missing),
		                                         "why", t->skipped[i].why && *t->skipped[i].why
		                                                    ? t->skipped[i].why
		                                                    : NULL));
	json_t *doc = json_pack("{s:s, s:s, s:s?, s:s, s:s, s:b, s:o, s:o, s:s?, s:s?, s:s?, s:o, "
	                 "s:o, s:o, s:I}",
	                 "target", t->describe, "variant", t->variant, "variant_from",
	                 t->variant_from, "python", t->python,
	                 "platform", t->platform, "complete", t->complete, "versions", versions,
	                 "missing", csv_json(t->missing), "newest_complete",
	                 *t->alternative ? t->alternative : NULL, "error", t->error, "hint",
	                 t->hint, "skipped",
	                 skipped, "notes", strs_json(t->notes, t->nnotes), "members", members,
	                 "set_id", (json_int_t)t->set_id);
	json_object_set_new(doc, "not_in_workspace", json_boolean(t->not_in_workspace));
	json_object_set_new(doc, "stack_conflict", json_boolean(t->stack_conflict));
	json_object_set_new(doc, "causes", causes_json(t));
	json_t *held = json_array();
	for (size_t i = 0; i < t->nheld; i++)
		json_array_append_new(held, json_pack("{s:s, s:s, s:s, s:s, s:b}", "project",
		                                      t->held[i].project, "version", t->held[i].version,
		                                      "newest", t->held[i].newest, "why", t->held[i].why,
		                                      "sdist", t->held[i].sdist));
	json_object_set_new(doc, "held_back", held);
	return doc;
}

/* "3 days" for a number of seconds: the unit that keeps it short. */
static void age_text(int64_t s, char *buf, size_t n)
{
	static const struct {
		int64_t secs, limit;
		const char *unit;
	} units[] = {{1, 120, "second"}, {60, 120 * 60, "minute"}, {3600, 48 * 3600, "hour"},
	             {86400, INT64_MAX, "day"}};
	size_t i = 0;
	s = s < 0 ? 0 : s;
	while (s >= units[i].limit)
		i++;
	int64_t v = s / units[i].secs;
	snprintf(buf, n, "%lld %s%s", (long long)v, units[i].unit, v == 1 ? "" : "s");
}

static void pages_text(const struct cli *c, const struct ow_resolve_report *r)
{
	char age[64];
	if (!r->pages_used)
		return;
	age_text((int64_t)time(NULL) - r->pages_oldest, age, sizeof age);
	cli_say(c, "index pages: %zu used, oldest fetched %s ago", r->pages_used, age);
	if (r->pages_revalidated)
		cli_say(c, "; %zu revalidated", r->pages_revalidated);
	cli_say(c, "\n");
}

static json_t *pages_json(const struct ow_resolve_report *r)
{
	int64_t age = r->pages_used ? (int64_t)time(NULL) - r->pages_oldest : 0;
	return json_pack("{s:I, s:o, s:o, s:I}", "used", (json_int_t)r->pages_used,
	                 "oldest_fetched_at",
	                 r->pages_used ? json_integer(r->pages_oldest) : json_null(), "oldest_age_s",
	                 r->pages_used ? json_integer(age < 0 ? 0 : age) : json_null(),
	                 "revalidated", (json_int_t)r->pages_revalidated);
}

static json_t *refusals_json(const struct ow_resolve_netio *net)
{
	json_t *a = json_array();
	for (size_t i = 0; net && i < net->rejected.n && i < OW_REFUSALS_KEPT; i++)
		if (net->rejected.first[i])
			json_array_append_new(a, json_string(net->rejected.first[i]));
	return a;
}

/* The projects the user named whose versions differ between the targets
 * (ow_resolve_report.spread), each version with its targets. */
static json_t *spread_json(const struct ow_resolve_report *r)
{
	json_t *a = json_array();
	for (size_t i = 0; i < r->nspread; i++) {
		const struct ow_resolve_spread *sp = &r->spread[i];
		json_t *vs = json_array();
		for (size_t v = 0; v < sp->nversions; v++) {
			json_t *ts = json_array();
			for (size_t k = 0; k < sp->versions[v].ntargets; k++)
				json_array_append_new(
					ts, json_string(r->targets[sp->versions[v].targets[k]].describe));
			json_array_append_new(vs, json_pack("{s:s, s:o}", "version",
			                                    sp->versions[v].version, "targets", ts));
		}
		json_array_append_new(a, json_pack("{s:s, s:o, s:s?}", "project", sp->project,
		                                   "versions", vs, "why", sp->why));
	}
	return a;
}

json_t *cli_resolve_report_json(const struct cli_index_opts *o, const struct ow_resolve_report *r,
                            const struct ow_resolve_netio *net)
{
	json_t *targets = json_array();
	for (size_t i = 0; i < r->ntargets; i++)
		json_array_append_new(targets, target_json(r, &r->targets[i]));
	json_t *extra = json_array();
	for (size_t i = 0; i < o->extra.n; i++)
		json_array_append_new(extra, json_string(o->extra.v[i]));
	json_t *doc = json_pack("{s:s, s:s, s:b, s:o, s:s, s:o, s:b, s:I, s:I, s:I, s:I, s:I, s:o, s:o}",
	                        "command", "resolve", "index_url", o->index, "flat", r->flat,
	                        "extra_index_urls", extra, "selector", r->selector, "projects",
	                        strs_json(r->projects, r->nprojects), "complete", r->incomplete == 0,
	                        "incomplete", (json_int_t)r->incomplete, "metadata_read",
	                        (json_int_t)r->metadata_read, "metadata_cached",
	                        (json_int_t)r->metadata_cached, "metadata_ranged",
	                        (json_int_t)(net ? net->ranged : 0), "metadata_range_bytes",
	                        (json_int_t)(net ? net->range_bytes : 0), "notes",
	                        strs_json(r->notes, r->nnotes), "targets", targets);
	json_object_set_new(doc, "index_pages", pages_json(r));
	json_object_set_new(doc, "layout_remembered", json_boolean(r->layout_remembered));
	json_object_set_new(doc, "links_rejected", json_integer(net ? (json_int_t)net->rejected.n : 0));
	json_object_set_new(doc, "links_rejected_first", refusals_json(net));
	json_object_set_new(doc, "spread", spread_json(r));
	return doc;
}

/* ---- the matrix ----------------------------------------------------------------- */

static size_t ndeps(const struct ow_resolve_target *t)
{
	size_t n = 0;
	for (size_t i = 0; i < t->nmembers; i++)
		n += t->members[i].role == OW_ROLE_DEP;
	return n;
}

/* Members that ship as source (the target builds them at install). */
static size_t nsdists(const struct ow_resolve_target *t)
{
	size_t n = 0;
	for (size_t i = 0; i < t->nmembers; i++)
		n += ow_export_is_sdist(t->members[i].filename);
	return n;
}

static void widths(const struct ow_resolve_report *r, int *w)
{
	w[0] = 6;
	for (size_t p = 0; p < r->nprojects; p++)
		w[p + 1] = (int)strlen(r->projects[p]);
	for (size_t i = 0; i < r->ntargets; i++) {
		const struct ow_resolve_target *t = &r->targets[i];
		w[0] = (int)strlen(t->describe) > w[0] ? (int)strlen(t->describe) : w[0];
		for (size_t p = 0; p < r->nprojects; p++)
			if ((int)strlen(t->versions[p]) > w[p + 1])
				w[p + 1] = (int)strlen(t->versions[p]);
	}
	for (size_t p = 0; p < r->nprojects; p++)
		w[p + 1] = w[p + 1] < 9 ? 9 : w[p + 1];
}

/* The wide table's width: the target, each project, the state. */
static int wide_width(const struct ow_resolve_report *r, const int *w)
{
	int n = w[0] + 12; /* "  INCOMPLETE" */
	for (size_t p = 0; p < r->nprojects; p++)
		n += 2 + w[p + 1];
	return n;
}

/* An indented line under a target's row, wrapped at spaces on a terminal. */
static void sub_line(const struct cli *c, const char *fmt, ...) OW_PRINTF(2, 3);
static void sub_line(const struct cli *c, const char *fmt, ...)
{
	char *buf = NULL;
	va_list ap;
	if (c->json || c->verbosity < 0)
		return;
	va_start(ap, fmt);
	int n = vasprintf(&buf, fmt, ap); /* a conflict's chain can be long: never cut */
	va_end(ap);
	fflush(stdout);
	cli_wrapped(stdout, "    ", n < 0 ? "(out of memory)" : buf);
	if (n >= 0)
		free(buf);
}

/* A project's cell: its version, "- missing" when it has none that fits,
 * "-" when the stack has no set (nothing was chosen: the error says why). */
static const char *version_cell(const struct ow_resolve_target *t, size_t p)
{
	return *t->versions[p] ? t->versions[p] : t->stack_conflict ? "-" : "- missing";
}

static void target_versions(const struct cli *c, const struct ow_resolve_report *r,
                            const struct ow_resolve_target *t, const int *w, int narrow)
{
	if (narrow) { /* the torch version beside the target, the others under it */
		cli_say(c, "  %-*s", w[1], version_cell(t, 0));
		return;
	}
	for (size_t p = 0; p < r->nprojects; p++)
		cli_say(c, "  %-*s", w[p + 1], version_cell(t, p));
}

static void target_stack(const struct cli *c, const struct ow_resolve_report *r,
                         const struct ow_resolve_target *t, const int *w)
{
	for (size_t p = 1; p < r->nprojects; p++)
		cli_say(c, "%*s  %s\n", w[0], "", version_cell(t, p));
}

/* A passed-over torch's why, said once for the later ones it repeats. */
static void skipped_text(const struct cli *c, const struct ow_resolve_target *t, size_t i)
{
	struct ow_str also = {0};
	for (size_t j = i + 1; j < t->nskipped; j++)
		if (t->skipped[j].same_as == i + 1)
			ow_str_printf(&also, "%s%s", also.p ? ", " : " (the same for torch ",
			              t->skipped[j].torch);
	sub_line(c, "newer torch %s passed over: %s%s%s", t->skipped[i].torch, t->skipped[i].why,
	         also.p ? also.p : "", also.p ? ")" : "");
	ow_str_dispose(&also);
}

/* The row's state: its dependencies, or that it is incomplete. */
static void state_text(const struct ow_resolve_target *t, int deps, char *buf, size_t n)
{
	if (t->complete && nsdists(t))
		snprintf(buf, n, "  %zu deps, %zu built from source", ndeps(t), nsdists(t));
	else if (t->complete && deps)
		snprintf(buf, n, "  %zu deps", ndeps(t));
	else
		snprintf(buf, n, "%s", t->complete ? "" : "  INCOMPLETE");
}

/* Whether a projects' versions text goes on the target's row: always in a
 * pipe (one greppable line per target), on a terminal when the row fits. */
static bool named_on_row(const struct ow_resolve_report *r, const int *w, int narrow,
                         size_t state_len, const char *named)
{
	int cols = cli_columns(1, 0);
	size_t row = (size_t)w[0] + state_len + 2 + strlen(named);
	for (size_t p = 0; p < (narrow ? 1 : r->nprojects); p++)
		row += 2 + (size_t)w[p + 1];
	return !cols || row <= (size_t)cols;
}

/* The versions of the projects the user named beyond the set's columns,
 * in the set's order ("vllm 0.21.0, lightning 2.5.1"); NULL when none, or
 * out of memory (said as a missing line, never a cut one).  Caller frees. */
static char *named_text(const struct ow_resolve_report *r, const struct ow_resolve_target *t)
{
	struct ow_str b = {0};
	for (size_t i = 0; t->complete && i < t->nmembers; i++) {
		const struct ow_resolve_member *m = &t->members[i];
		bool column = false;
		for (size_t p = 0; p < r->nprojects; p++)
			column |= !strcmp(r->projects[p], m->project);
		if (m->role == OW_ROLE_PROJECT && !column)
			ow_str_printf(&b, "%s%s %s", b.n ? ", " : "", m->project, m->version);
	}
	char *out = NULL;
	if (b.n && ow_str_take(&b, &out) < 0)
		out = NULL;
	ow_str_dispose(&b);
	return out;
}

static void target_text(const struct cli *c, const struct ow_resolve_report *r,
                        const struct ow_resolve_target *t, const int *w, int deps, int narrow)
{
	char state[96], *named = named_text(r, t);
	cli_say(c, "%-*s", w[0], t->describe);
	target_versions(c, r, t, w, narrow);
	state_text(t, deps, state, sizeof state);
	bool on_row = named && named_on_row(r, w, narrow, strlen(state), named);
	cli_say(c, "%s%s%s\n", state, on_row ? "  " : "", on_row ? named : "");
	if (narrow)
		target_stack(c, r, t, w);
	if (named && !on_row)
		sub_line(c, "%s", named);
	free(named);
	if (!*t->versions[0] && !t->no_variant && !t->unreachable && !t->not_in_workspace &&
	    !t->stack_conflict)
		sub_line(c, "no torch wheel fits this target%s%s",
		         *t->alternative ? "; newest complete set: torch " : "", t->alternative);
	else if (*t->missing && *t->versions[0])
		sub_line(c, "no %s matches torch %s; newest complete set: %s%s", t->missing,
		         t->versions[0], *t->alternative ? "torch " : "",
		         *t->alternative ? t->alternative : "none");
	if (t->error)
		sub_line(c, "%s", t->error);
	if (t->hint)
		sub_line(c, "%s", t->hint);
	for (size_t i = 0; t->complete && i < t->nskipped; i++)
		if (t->skipped[i].why && *t->skipped[i].why && !t->skipped[i].same_as)
			skipped_text(c, t, i);
		else if (!t->skipped[i].why || !*t->skipped[i].why)
			sub_line(c, "newer torch %s passed over: no matching %s", t->skipped[i].torch,
			         t->skipped[i].missing);
	for (size_t i = 0; i < t->nheld; i++)
		sub_line(c, "held back: %s %s, not %s: %s", t->held[i].project, t->held[i].version,
		         t->held[i].newest, t->held[i].why);
	for (size_t i = 0; i < t->nnotes; i++) /* the sdists it builds: always said */
		if (c->verbosity > 0 || strstr(t->notes[i], OW_RESOLVE_SDIST_NOTE))
			sub_line(c, "note: %s", t->notes[i]);
}

/* The header: one column per project, or in a narrow terminal the projects
 * named once, stacked in each row in this order. */
static void matrix_header(const struct cli *c, const struct ow_resolve_report *r, const int *w,
                          int narrow)
{
	cli_say(c, "%-*s", w[0], "TARGET");
	for (size_t p = 0; p < r->nprojects; p++) {
		if (narrow)
			cli_say(c, "%s%s", p ? " / " : "  ", r->projects[p]);
		else
			cli_say(c, "  %-*s", w[p + 1], r->projects[p]);
	}
	cli_say(c, "\n");
}

/* The targets of one version: named, or counted when it is the version
 * most of the run's targets got ("0.21.0 on 3 targets"). */
static void spread_version_text(struct ow_str *b, const struct ow_resolve_report *r,
                                const struct ow_resolve_spread_version *v, bool counted)
{
	ow_str_printf(b, "%s on ", v->version);
	if (counted) {
		ow_str_printf(b, "%zu targets", v->ntargets);
		return;
	}
	for (size_t k = 0; k < v->ntargets; k++)
		ow_str_printf(b, "%s%s", k ? ", " : "", ow_resolve_target_name(r, v->targets[k]));
}

/* The projects the user named whose versions differ between the targets:
 * one line each, the most common version counted, the others' targets
 * named, and why where the library knows ("vllm: 0.21.0 on 3 targets,
 * 0.11.2 on cp311-manylinux_2_28_aarch64: vllm 0.21.0 has no wheel for
 * cp311-manylinux_2_28_aarch64"). */
static void spread_text(const struct cli *c, const struct ow_resolve_report *r)
{
	for (size_t i = 0; !c->json && c->verbosity >= 0 && i < r->nspread; i++) {
		const struct ow_resolve_spread *sp = &r->spread[i];
		size_t most = 0;
		for (size_t v = 1; v < sp->nversions; v++)
			most = sp->versions[v].ntargets > sp->versions[most].ntargets ? v : most;
		struct ow_str b = {0};
		ow_str_printf(&b, "%s differs across targets: ", sp->project);
		for (size_t v = 0; v < sp->nversions; v++) {
			ow_str_puts(&b, v ? ", " : "");
			spread_version_text(&b, r, &sp->versions[v],
			                    v == most && sp->versions[v].ntargets > 1);
		}
		if (sp->why)
			ow_str_printf(&b, ": %s", sp->why);
		fflush(stdout);
		cli_wrapped(stdout, "", b.err ? "(out of memory)" : b.p);
		ow_str_dispose(&b);
	}
}

/* Links the pages crawled on the way rejected: a page whose links were all
 * refused otherwise looks like a project without a fitting wheel. */
static void refusals_text(const struct cli *c, const struct ow_link_refusals *r)
{
	size_t kept = r->n < OW_REFUSALS_KEPT ? r->n : OW_REFUSALS_KEPT;
	cli_say(c, "%zu link(s) on the index pages crawled were rejected (the link rule: "
	           "docs/index-quirks.md); the first:\n",
	        r->n);
	for (size_t i = 0; i < kept; i++)
		if (r->first[i])
			cli_say(c, "    rejected: %s\n", r->first[i]);
	if (kept < r->n)
		cli_say(c, "    ... %zu more (crawl --force -v lists them all)\n", r->n - kept);
}

void cli_resolve_render_text(const struct cli *c, const struct cli_index_opts *o,
                         const struct ow_resolve_report *r, const struct ow_resolve_netio *net,
                         int deps)
{
	int w[OW_RESOLVE_MAX_PROJECTS + 1];
	widths(r, w);
	int cols = cli_columns(1, 0), narrow = cols && wide_width(r, w) > cols && r->nprojects > 1;
	if (narrow) /* one version column, as wide as the widest of any project */
		for (size_t p = 2; p <= r->nprojects; p++)
			w[1] = w[p] > w[1] ? w[p] : w[1];
	matrix_header(c, r, w, narrow);
	for (size_t i = 0; i < r->ntargets; i++)
		target_text(c, r, &r->targets[i], w, deps, narrow);
	for (size_t i = 0; i < r->nnotes; i++)
		cli_say(c, "note: %s\n", r->notes[i]);
	spread_text(c, r);
	if (!c->json && c->verbosity >= 0) {
		char sum[2700]; /* the index URL (up to 2048), its source and the counts */
		/* an index that is not the one --channel names says where it came from */
		bool env = o->index_src && !strcmp(o->index_src, "OFFWHEEL_PYTORCH_URL");
		snprintf(sum, sizeof sum, "%s%s%s (%s): %zu target(s), %zu complete, %zu incomplete",
		         o->index, r->flat ? " as one root" : "",
		         env ? " (from OFFWHEEL_PYTORCH_URL, not download.pytorch.org)" : "",
		         r->selector, r->ntargets,
		         r->ntargets - r->incomplete, r->incomplete);
		fflush(stdout);
		cli_wrapped(stdout, "", sum);
	}
	pages_text(c, r);
	if (net && net->rejected.n)
		refusals_text(c, &net->rejected);
	char b[32] = "";
	if (net && net->range_bytes)
		cli_bytes(net->range_bytes, b, sizeof b);
	if (net && net->ranged)
		cli_say(c, "read the METADATA of %zu wheel(s) by range requests%s%s\n", net->ranged,
		        *b ? ": " : "", b);
	for (size_t i = 0; i < o->extra.n; i++)
		cli_say(c, "extra index %zu: %s (only for projects the indexes before it lack)\n", i + 1,
		        o->extra.v[i]);
}

/* --device: audit each complete set's torch, or predict from torchvision;
 * for every device named.  0, or an exit code (the error said). */
static int judge_devices(struct cli *c, struct ropts *o, ow_store *s,
                         const struct ow_resolve_report *r, struct cli_fits *fs)
{
	struct ow_fetch_opts fo = {.policy = &o->idx.policy, .http = &o->idx.http};
	int rc = cli_fits_judge(fs, s, &fo, r, o->tgt.devices, o->tgt.ndevices, o->tgt.driver);
	if (rc) {
		cli_fits_dispose(fs, r->ntargets);
		return cli_fail(c, rc);
	}
	return 0;
}

static int run(struct cli *c, void *ud, ow_store *s)
{
	struct ropts *o = ud;
	struct ow_resolve_netio net = {.policy = &o->idx.policy, .http = &o->idx.http,
	                              .http_small = &o->idx.http_small,
	                               .net = !o->offline,
	                               .find_links = (const char *const *)o->idx.find_links.v,
	                               .nfind_links = o->idx.find_links.n};
	struct ow_resolve_io io;
	ow_resolve_io_net(&io, &net);
	struct ow_resolve_opts ro;
	cli_target_resolve_opts(&ro, &o->idx, &o->tgt, &io);
	cli_stack_resolve_opts(&o->stack, &ro);
	struct ow_resolve_report r;
	cli_interrupt_arm();
	int rc = ow_resolve(s, &ro, &r);
	cli_interrupt_disarm();
	if (rc == OW_EINTERRUPTED) {
		ow_resolve_report_dispose(&r);
		ow_resolve_netio_clear(&net);
		return cli_interrupt_fail(c);
	}
	if (rc < 0 && rc != OW_EINCOMPLETE) {
		ow_resolve_netio_clear(&net);
		return cli_fail(c, rc);
	}
	int hint = rc == OW_EINCOMPLETE ? cli_index_find_links_hint(c, &o->idx, s) : 0;
	if (hint) {
		ow_resolve_report_dispose(&r);
		ow_resolve_netio_clear(&net);
		return hint;
	}
	struct cli_fits fits = {0};
	int exitc = rc == OW_EINCOMPLETE ? 4 : 0;
	if (o->tgt.ndevices && judge_devices(c, o, s, &r, &fits))
		exitc = 1;
	if (o->fleet.n && (rc = fleet_plan_resolved(s, &o->fleet, &r)) < 0)
		exitc = cli_fail(c, rc);
	json_t *doc = c->json ? cli_resolve_report_json(&o->idx, &r, &net) : NULL;
	if (doc && fits.n)
		cli_fits_json_set(doc, &o->idx, &r, &fits);
	if (doc && o->fleet.n)
		json_object_set_new(doc, "machines", fleet_plan_json(&o->fleet));
	if (doc)
		cli_json_out(doc);
	else
		cli_resolve_render_text(c, &o->idx, &r, &net, !o->tgt.no_deps);
	if (fits.n && !c->json)
		cli_fits_text(c, &o->idx, &r, &fits);
	if (o->fleet.n && !c->json)
		fleet_plan_text(c, &o->fleet);
	if (fits.n && !cli_fits_running(&r, &fits) && !r.unreachable)
		exitc = 3; /* no set runs on every device: "no kernel image" ahead */
	cli_fits_dispose(&fits, r.ntargets);
	ow_resolve_report_dispose(&r);
	ow_resolve_netio_clear(&net);
	return exitc;
}

int cmd_resolve(struct cli *c, int argc, char **argv)
{
	struct ropts o = {0};
	const struct cli_spec cs = {opts, usage, description, on_opt, &o};
	int rc;
	bool go = cli_parse_no_operands(c, argc, argv, &cs, &rc);
	o.idx.offline = o.offline;
	if (go && !(rc = o.probes.n ? fleet_load(c, &o.probes, &o.fleet) : 0) &&
	    !(rc = o.fleet.n && fleet_targets(&o.fleet, &o.tgt.pythons, &o.tgt.platforms)) &&
	    !(rc = cli_stack_opts_finish_all(c, &o.stack, &o.idx, &o.tgt)))
		rc = cli_with_store(c, OW_STORE_WRITE, run, &o);
	fleet_dispose(&o.fleet);
	cli_strlist_dispose(&o.probes);
	cli_index_opts_dispose(&o.idx);
	cli_target_opts_dispose(&o.tgt);
	cli_stack_opts_dispose(&o.stack);
	return rc;
}
