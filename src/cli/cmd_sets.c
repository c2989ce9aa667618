/* cmd_sets.c - `offwheel ls sets`: the stored resolved sets. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "render.h"
#include "offwheel/export.h"
#include "offwheel/resolve.h"
#include "offwheel/str.h"

/* How many members of the set are in the store. */
static size_t fetched_of(const struct ow_resolve_member *m, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += m[i].object[0] != '\0';
	return k;
}

static size_t fetched_count(ow_store *s, int64_t id, size_t *n_out)
{
	struct ow_resolve_member *m;
	size_t n;
	*n_out = 0;
	if (ow_set_members(s, id, &m, &n) < 0)
		return 0;
	size_t k = fetched_of(m, n);
	ow_set_members_free(m, n);
	*n_out = n;
	return k;
}

/* The devices a recorded verdict says the set does not run on ("12.0, 8.0"):
 * 1 when there is one (an error reading them counts as none: the row still
 * says what is fetched). */
static int refused_on(ow_store *s, int64_t id, char *ccs, size_t n)
{
	int rc = ow_export_refused_on(s, id, ccs, n);
	if (rc < 0)
		ow_err_clear();
	return rc > 0;
}

static json_t *ccs_json(const char *ccs)
{
	json_t *a = json_array();
	while (*ccs) {
		size_t n = strcspn(ccs, ",");
		json_array_append_new(a, json_stringn(ccs, n));
		ccs += n + (ccs[n] == ',');
		ccs += *ccs == ' ';
	}
	return a;
}

/* One set with its members, read once for both the list and the count. */
static json_t *set_json(struct cli *c, ow_store *s, const struct ow_set_row *r, int *rc)
{
	struct ow_resolve_member *m = NULL;
	size_t n = 0;
	json_t *a = json_array();
	if ((*rc = ow_set_members(s, r->id, &m, &n)) < 0)
		*rc = cli_fail(c, *rc);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, cli_resolve_member_json(&m[i]));
	size_t k = fetched_of(m, n);
	ow_set_members_free(m, n);
	json_t *o = json_pack("{s:I, s:s, s:s, s:s, s:s?, s:b, s:b, s:s?, s:I, s:I, s:I, s:I, s:o}", "id",
	                 (json_int_t)r->id, "target", r->target, "index_url", r->index_url,
	                 "selector", r->selector, "torch", *r->torch_version ? r->torch_version : NULL,
	                 "complete", r->complete, "with_deps", r->with_deps, "missing",
	                 *r->missing ? r->missing : NULL, "created_at", (json_int_t)r->created_at,
	                 "resolved_at", (json_int_t)r->resolved_at, "n_members",
	                 (json_int_t)r->nmembers, "fetched", (json_int_t)k, "members", a);
	char ccs[64];
	if (o && refused_on(s, r->id, ccs, sizeof ccs))
		json_object_set_new(o, "would_not_run_on", ccs_json(ccs));
	return o;
}

/* STATE: what the set is good for now.  "fetched" (every file in the
 * store: export it), "3/18 fetched", "not fetched" (resolved only: 'offwheel
 * fetch set:ID'), or "incomplete" with what is missing. */
static void state_text(ow_store *s, const struct ow_set_row *r, char *buf, size_t cap,
                       size_t room)
{
	size_t n, k = fetched_count(s, r->id, &n);
	char ccs[64];
	size_t nmissing = *r->missing ? 1 : 0;
	for (const char *p = r->missing; *p; p++)
		nmissing += *p == ',';
	if (!r->complete && 14 + strlen(r->missing) > room) /* 80 columns: count them, or not */
		snprintf(buf, cap, nmissing && room >= 21 ? "incomplete: %zu missing" : "incomplete",
		         nmissing);
	else if (!r->complete)
		snprintf(buf, cap, "incomplete%s%s", *r->missing ? ": no " : "", r->missing);
	else if (n && k == n)
		snprintf(buf, cap, "fetched");
	else if (refused_on(s, r->id, ccs, sizeof ccs)) /* why sync --device left it */
		snprintf(buf, cap, "would not run on %s", ccs);
	else if (k)
		snprintf(buf, cap, "%zu/%zu fetched", k, n);
	else
		snprintf(buf, cap, "not fetched");
}

struct widths {
	int target, torch;
	int stacked; /* a terminal too narrow for a row: each set on two lines or more */
};

/* The torch version without a local label that only repeats the target's
 * variant ("2.10.0.dev20251021+cu128" in a cu128 row: "2.10.0.dev20251021"). */
static void torch_text(const struct ow_set_row *r, char *buf, size_t cap)
{
	const char *plus = strchr(r->torch_version, '+');
	size_t vlen = strcspn(r->target, " ");
	if (plus && strlen(plus + 1) == vlen && !strncmp(plus + 1, r->target, vlen))
		snprintf(buf, cap, "%.*s", (int)(plus - r->torch_version), r->torch_version);
	else
		snprintf(buf, cap, "%s", *r->torch_version ? r->torch_version : "-");
}

/* -v: under the row, what the lab named beside torch, with the versions
 * this set took ("torchvision 0.25.0, vllm 0.21.0, hydra-core 1.3.8"). */
static void set_named_text(const struct cli *c, ow_store *s, const struct ow_set_row *r)
{
	struct ow_resolve_member *m = NULL;
	size_t n = 0;
	struct ow_str b = {0};
	if (ow_set_members(s, r->id, &m, &n) < 0)
		return; /* the row says the set; its members are not readable now */
	for (size_t i = 0; i < n; i++)
		if (m[i].role == OW_ROLE_VISION || m[i].role == OW_ROLE_AUDIO ||
		    m[i].role == OW_ROLE_PROJECT)
			ow_str_printf(&b, "%s%s %s", b.n ? ", " : "", m[i].project, m[i].version);
	ow_set_members_free(m, n);
	if (b.n || b.err) {
		fflush(stdout);
		cli_wrapped(stdout, "      ", b.err ? "(out of memory)" : b.p);
	}
	ow_str_dispose(&b);
}

static void when_text(const struct ow_set_row *r, char *when, size_t n)
{
	time_t t = (time_t)r->resolved_at;
	strftime(when, n, "%Y-%m-%d %H:%M", localtime(&t));
}

/* The stacked row: the id and target, then under them torch's version and
 * the state (-v: when, the selector and the files too), wrapped at words. */
static void set_stacked(const struct cli *c, ow_store *s, const struct ow_set_row *r,
                        const char *torch, const char *state)
{
	char when[32];
	when_text(r, when, sizeof when);
	cli_out(c, "%4lld  %s\n", (long long)r->id, r->target);
	if (c->verbosity > 0) {
		cli_out(c, "      %s  %s  %s  %zu files  %s\n", torch, when, r->selector, r->nmembers,
		        state);
		set_named_text(c, s, r);
	} else {
		cli_out(c, "      %s  %s\n", torch, state);
	}
}

static void set_text(const struct cli *c, ow_store *s, const struct ow_set_row *r,
                     const struct widths *w)
{
	/* room for the longest missing list (state_text writes it whole only when it
	 * fits `room`, but the compiler sees the field's size) */
	char state[sizeof "incomplete: no " + OW_RESOLVE_MISSING_MAX], torch[OW_VER_TEXT_MAX + 1];
	torch_text(r, torch, sizeof torch);
	size_t used = 4 + 2 + (size_t)w->target + 2 + (size_t)w->torch + 2;
	state_text(s, r, state, sizeof state,
	           c->verbosity > 0 || used >= 80 || w->stacked ? 200 : 80 - used);
	if (w->stacked) {
		set_stacked(c, s, r, torch, state);
		return;
	}
	if (c->verbosity > 0) { /* -v: when and how it was resolved, too */
		char when[32];
		when_text(r, when, sizeof when);
		cli_out(c, "%4lld  %-*s  %-*s  %-16s  %s  %zu files  %s\n", (long long)r->id, w->target,
		        r->target, w->torch, torch, when, r->selector, r->nmembers, state);
		set_named_text(c, s, r);
		return;
	}
	cli_out(c, "%4lld  %-*s  %-*s  %s\n", (long long)r->id, w->target, r->target, w->torch,
	        torch, state);
}

static void widths_of(const struct ow_set_row *rows, size_t n, struct widths *w)
{
	*w = (struct widths){6, 5, 0};
	for (size_t i = 0; i < n; i++) {
		char torch[OW_VER_TEXT_MAX + 1];
		torch_text(&rows[i], torch, sizeof torch);
		int t = (int)strlen(rows[i].target), v = (int)strlen(torch);
		w->target = t > w->target ? t : w->target;
		w->torch = v > w->torch ? v : w->torch;
	}
}

/* Which index each set came from: one line per index, its sets' ids
 * (every line with -v; without it only when there is more than one, the
 * case where an --all-sets export must be told which). */
static void indexes_text(const struct cli *c, const struct ow_set_row *rows, size_t n)
{
	size_t distinct = 0;
	for (size_t i = 0; i < n; i++) {
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = !strcmp(rows[j].index_url, rows[i].index_url);
		distinct += !seen;
	}
	if (distinct < 2 && c->verbosity <= 0)
		return;
	for (size_t i = 0; i < n; i++) {
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = !strcmp(rows[j].index_url, rows[i].index_url);
		if (seen)
			continue;
		size_t k = 0;
		for (size_t j = i; j < n; j++)
			k += !strcmp(rows[j].index_url, rows[i].index_url);
		cli_say(c, "%zu from %s%s", k, rows[i].index_url, c->verbosity > 0 ? ": set" : "\n");
		for (size_t j = i; j < n && c->verbosity > 0; j++)
			if (!strcmp(rows[j].index_url, rows[i].index_url))
				cli_say(c, " %lld", (long long)rows[j].id);
		if (c->verbosity > 0)
			cli_say(c, "\n");
	}
}

/* Whether a row of the table is wider than the terminal (never in a pipe:
 * there each set stays one greppable row). */
static int stacked_layout(const struct cli *c, ow_store *s, const struct ow_set_row *rows,
                          size_t n, const struct widths *w)
{
	int cols = c->json ? 0 : cli_columns(1, 0);
	if (!cols || !n)
		return 0;
	size_t state_w = 0, sel_w = 0;
	for (size_t i = 0; i < n; i++) {
		char state[sizeof "incomplete: no " + OW_RESOLVE_MISSING_MAX];
		state_text(s, &rows[i], state, sizeof state, 200);
		state_w = strlen(state) > state_w ? strlen(state) : state_w;
		sel_w = strlen(rows[i].selector) > sel_w ? strlen(rows[i].selector) : sel_w;
	}
	size_t row = 6 + (size_t)w->target + 2 + (size_t)w->torch + 2 + state_w;
	if (c->verbosity > 0) /* RESOLVED, SELECTOR and "NN files" too */
		row += 16 + 2 + sel_w + 2 + 10 + 2;
	return row > (size_t)cols;
}

static void header_text(const struct cli *c, const struct widths *w)
{
	if (w->stacked) {
		cli_say(c, "  ID  TARGET\n      %s\n", c->verbosity > 0 ? "TORCH  RESOLVED  SELECTOR, "
		                                          "FILES, STATE" : "TORCH  STATE");
	} else if (c->verbosity > 0) {
		cli_say(c, "%4s  %-*s  %-*s  %-16s  %s\n", "ID", w->target, "TARGET", w->torch,
		        "TORCH", "RESOLVED", "SELECTOR, FILES, STATE");
	} else {
		cli_say(c, "%4s  %-*s  %-*s  %s\n", "ID", w->target, "TARGET", w->torch, "TORCH",
		        "STATE");
	}
}

int cli_ls_sets(struct cli *c, ow_store *s, const char *target)
{
	struct ow_set_row *rows;
	size_t n;
	int rc = ow_sets_list(s, target, &rows, &n);
	if (rc < 0)
		return cli_fail(c, rc);
	json_t *a = c->json ? json_array() : NULL;
	struct widths w;
	widths_of(rows, n, &w);
	w.stacked = stacked_layout(c, s, rows, n, &w);
	if (n && !a)
		header_text(c, &w);
	for (size_t i = 0; i < n && !rc; i++) {
		if (a)
			json_array_append_new(a, set_json(c, s, &rows[i], &rc));
		else
			set_text(c, s, &rows[i], &w);
	}
	if (!a && !rc)
		indexes_text(c, rows, n);
	free(rows);
	if (a && !rc)
		cli_json_out(json_pack("{s:s, s:I, s:o}", "command", "ls sets", "count", (json_int_t)n,
		                       "sets", a));
	else if (a)
		json_decref(a);
	else
		cli_say(c, "%zu sets\n", n);
	return rc;
}
