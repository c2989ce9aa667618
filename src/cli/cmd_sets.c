/* cmd_sets.c - `offwheel ls sets`: the stored resolved sets. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "render.h"
#include "offwheel/resolve.h"

static json_t *members_json(struct cli *c, ow_store *s, int64_t id, int *rc)
{
	struct ow_resolve_member *m;
	size_t n;
	json_t *a = json_array();
	if ((*rc = ow_set_members(s, id, &m, &n)) < 0) {
		*rc = cli_fail(c, *rc);
		return a;
	}
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, resolve_member_json(&m[i]));
	ow_set_members_free(m, n);
	return a;
}

static json_t *set_json(struct cli *c, ow_store *s, const struct ow_set_row *r, int *rc)
{
	return json_pack("{s:I, s:s, s:s, s:s, s:s?, s:b, s:b, s:s?, s:I, s:I, s:I, s:o}", "id",
	                 (json_int_t)r->id, "target", r->target, "index_url", r->index_url,
	                 "selector", r->selector, "torch", *r->torch_version ? r->torch_version : NULL,
	                 "complete", r->complete, "with_deps", r->with_deps, "missing",
	                 *r->missing ? r->missing : NULL, "created_at", (json_int_t)r->created_at,
	                 "resolved_at", (json_int_t)r->resolved_at, "n_members",
	                 (json_int_t)r->nmembers, "members", members_json(c, s, r->id, rc));
}

#define SET_ROW "%5lld  %-16s  %-40s %-16s %-28s %-10s %5s  %s%s\n"

static void set_text(const struct cli *c, const struct ow_set_row *r)
{
	char when[32];
	time_t t = (time_t)r->resolved_at;
	strftime(when, sizeof when, "%Y-%m-%d %H:%M", localtime(&t));
	char files[24];
	snprintf(files, sizeof files, "%zu", r->nmembers);
	cli_out(c, SET_ROW, (long long)r->id, when, r->target, r->selector,
	        *r->torch_version ? r->torch_version : "-", r->complete ? "complete" : "incomplete",
	        files, *r->missing ? "missing " : "", r->missing);
}

int cli_ls_sets(struct cli *c, ow_store *s, const char *target)
{
	struct ow_set_row *rows;
	size_t n;
	int rc = ow_sets_list(s, target, &rows, &n);
	if (rc < 0)
		return cli_fail(c, rc);
	json_t *a = c->json ? json_array() : NULL;
	if (n && !a)
		cli_say(c, "%5s  %-16s  %-40s %-16s %-28s %-10s %5s\n", "ID", "RESOLVED", "TARGET",
		        "SELECTOR", "TORCH", "STATE", "FILES");
	for (size_t i = 0; i < n && !rc; i++) {
		if (a)
			json_array_append_new(a, set_json(c, s, &rows[i], &rc));
		else
			set_text(c, &rows[i]);
	}
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
