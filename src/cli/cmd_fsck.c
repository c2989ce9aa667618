/* cmd_fsck.c - offwheel fsck: every invariant of the workspace. */
#include <stdlib.h>

#include "cli.h"
#include "clitext.h"
#include "offwheel/fsck.h"

static const char usage[] = "fsck [OPTIONS]";
static const char description[] =
	"Check every invariant of the workspace: the index database's integrity, that\n"
	"every row's object exists and hashes to its name, and what lies around as\n"
	"garbage (objects without a row, stray files, temp files) or as partial\n"
	"downloads.  Garbage is not an error ('offwheel gc' removes it); a missing or\n"
	"damaged object, anything in objects/ that is not a regular file, or a\n"
	"damaged database is (exit 3).  Objects found damaged are marked so that\n"
	"'offwheel fetch' or 'sync' fetches them again.  Names are shown escaped\n"
	"(control characters as \\xNN); in --json, bytes that are not UTF-8 become\n"
	"U+FFFD and the exact name is given as what_base64.";

/* Names come from the disk: whatever their bytes, one valid document. */
static json_t *issue_json(const struct ow_fsck_issue *is)
{
	json_t *o = json_object();
	if (!o || json_object_set_new(o, "kind", json_string(ow_fsck_kind_name(is->kind))) ||
	    cli_json_set_bytes(o, "what", is->what) || cli_json_set_bytes(o, "detail", is->detail)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *issues_json(const struct ow_fsck_report *r)
{
	json_t *a = json_array();
	for (size_t i = 0; i < r->nissues; i++)
		json_array_append_new(a, issue_json(&r->issues[i]));
	return a;
}

static void render_text(struct cli *c, const struct ow_fsck_report *r)
{
	for (size_t i = 0; i < r->nissues; i++) {
		const struct ow_fsck_issue *is = &r->issues[i];
		int err = is->kind <= OW_FSCK_DB;
		if (!err && c->verbosity <= 0)
			continue;
		char *what = cli_printable_dup(is->what), *detail = cli_printable_dup(is->detail);
		cli_wrapf(err ? stderr : stdout, "%s %s: %s\n", ow_fsck_kind_name(is->kind),
		        what ? what : "(out of memory)", detail ? detail : "(out of memory)");
		free(what);
		free(detail);
	}
	char b[32];
	cli_say(c, "checked %zu objects (%s): %zu error(s), %zu garbage file(s), %zu partial(s)%s\n",
	        r->rows, cli_bytes(r->bytes, b, sizeof b), r->errors, r->garbage, r->partials,
	        r->errors ? "" : " — clean");
	if (r->garbage && !c->json)
		cli_say(c, "run 'offwheel gc' to remove the garbage (-v lists it)\n");
}

static int run(struct cli *c, void *ud, ow_store *s)
{
	(void)ud;
	struct ow_fsck_report r;
	int rc = ow_fsck(s, c->jobs, &r);
	if (rc)
		return cli_fail(c, rc);
	if (c->json)
		cli_json_out(json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:o, s:b}", "command", "fsck",
		                       "objects", (json_int_t)r.rows, "bytes", (json_int_t)r.bytes,
		                       "errors", (json_int_t)r.errors, "garbage",
		                       (json_int_t)r.garbage, "partials", (json_int_t)r.partials,
		                       "issues", issues_json(&r), "clean", r.errors == 0));
	else
		render_text(c, &r);
	int exitc = r.errors ? 3 : 0;
	ow_fsck_report_dispose(&r);
	return exitc;
}

int cmd_fsck(struct cli *c, int argc, char **argv)
{
	const struct cli_spec cs = {NULL, usage, description, NULL, NULL};
	int exitc;
	if (!cli_parse_no_operands(c, argc, argv, &cs, &exitc))
		return exitc;
	return cli_with_store(c, OW_STORE_READ, run, NULL);
}
