/* cmd_fetch.c - offwheel fetch: download files into the verified store. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "offwheel/fetch.h"
#include "indexopts.h"
#include "interrupt.h"
#include "render.h"
#include "offwheel/resolve.h"
#include "offwheel/str.h"

static const char usage[] = "fetch [OPTIONS] FILE.whl|URL|set:ID...";
static const char description[] =
	"Download wheels recorded by 'offwheel crawl' into the verified store, in\n"
	"parallel.  A file is published only when it verifies: against the index's\n"
	"#sha256 when one is published, else by strict zip validation, every RECORD\n"
	"hash, METADATA name/version and the page's core-metadata hash (then its own\n"
	"hash is pinned).  An interrupted download is resumed by the next run when\n"
	"something will judge the result: the file's known sha256 (a plain Range),\n"
	"else the server's ETag or Last-Modified (If-Range); one line says which.\n"
	"set:ID fetches every member of a resolved set ('offwheel ls sets').\n"
	"A stored file is fetched again when its object is missing, not a regular\n"
	"file of the recorded size, or found damaged by 'offwheel verify' (the damaged\n"
	"copy is moved aside to tmp/); --force also re-hashes stored files first.\n"
	"Exit 3 when a file failed verification (it was not stored), 4 when some could\n"
	"not be downloaded (the rest is stored).";

enum { OPT_MAX_SIZE = 400, OPT_METADATA };
static const struct cli_opt opts[] = {
	CLI_INDEX_OPTS,
	{"max-size", OPT_MAX_SIZE, required_argument, "MB", "refuse files larger than this (8192)"},
	{"metadata", OPT_METADATA, no_argument, NULL, "fetch the PEP 658 .metadata files instead"},
	{NULL, 0, 0, NULL, NULL},
};

struct fetch_args {
	struct cli_index_opts idx;
	int max_mb;
	int metadata;
};

static int on_opt(struct cli *c, int key, const char *arg, void *ud)
{
	struct fetch_args *a = ud;
	if (key == OPT_MAX_SIZE)
		return cli_int_arg(c, "--max-size", arg, 1, 1 << 20, &a->max_mb);
	if (key == OPT_METADATA) {
		a->metadata = 1;
		return 0;
	}
	int rc = cli_index_opt(c, &a->idx, key, arg);
	return rc == -1 ? 2 : rc;
}

/* set:ID -> the file ids of the set's members. */
static int lookup_set(ow_store *s, const char *item, int64_t **ids, size_t *n)
{
	struct ow_resolve_member *m = NULL;
	size_t k = 0;
	int64_t id;
	int rc = ow_set_ref_members(s, item, &id, &m, &k);
	if (!rc && !(*ids = calloc(k, sizeof **ids)))
		rc = ow_err(OW_ENOMEM, "out of memory");
	for (size_t i = 0; !rc && i < k; i++)
		(*ids)[i] = m[i].file_id;
	*n = rc ? 0 : k;
	ow_set_members_free(m, k);
	return rc;
}

static int lookup_all(struct cli *c, ow_store *s, char **items, int n, int64_t **ids, size_t *nids)
{
	*ids = NULL;
	*nids = 0;
	for (int i = 0; i < n; i++) {
		int64_t *one;
		size_t k;
		int rc = !strncmp(items[i], "set:", 4) ? lookup_set(s, items[i], &one, &k)
		                                        : ow_fetch_lookup(s, items[i], &one, &k);
		if (rc)
			return cli_fail(c, rc);
		int64_t *g = realloc(*ids, (*nids + k) * sizeof *g);
		if (!g) {
			free(one);
			return 1;
		}
		*ids = g;
		memcpy(*ids + *nids, one, k * sizeof *one);
		*nids += k;
		free(one);
	}
	return 0;
}

static json_t *item_json(const struct ow_fetch_item *it)
{
	json_t *o = json_pack("{s:s, s:s, s:s, s:I, s:I, s:b, s:s?, s:s?, s:s?}", "filename",
	                      it->filename, "url", it->url ? it->url : "", "outcome",
	                      ow_fetch_outcome_name(it->outcome), "bytes", (json_int_t)it->bytes,
	                      "received", (json_int_t)it->received, "resumed", it->resumed,
	                      "sha256", *it->sha256 ? it->sha256 : NULL, "trust", it->trust,
	                      "error",
	                      it->outcome >= OW_FETCH_REJECTED ? ow_fetch_item_detail(it) : NULL);
	json_t *r = json_pack("{s:s, s:I, s:I, s:s?, s:b}", "resume", ow_fetch_resume_name(it->resume),
	                      "partial", (json_int_t)it->partial, "resumed_from",
	                      (json_int_t)it->resumed_from, "resume_basis",
	                      ow_fetch_resume_basis_name(it->resume_basis), "restarted",
	                      it->restarted);
	json_object_update(o, r);
	json_decref(r);
	return o;
}

/* The one line that says what became of the bytes held before; "" when
 * there is nothing to say. */
static void resume_line(const struct ow_fetch_item *it, char *buf, size_t n)
{
	char at[32];
	buf[0] = '\0';
	switch (it->resume) {
	case OW_FETCH_RESUMED:
		cli_bytes(it->resumed_from, at, sizeof at);
		if (it->resume_basis == OW_FETCH_BASIS_IF_RANGE)
			snprintf(buf, n, "resumed at %s (If-Range %s)", at, it->validator);
		else
			snprintf(buf, n, "resumed at %s (no If-Range; the %s sha256 decides)", at,
			         it->resume_basis == OW_FETCH_BASIS_PINNED ? "pinned" : "published");
		break;
	case OW_FETCH_RESUME_REFUSED:
		snprintf(buf, n, "a partial of %s not resumed: no sha256 is known and the server "
		         "sent no ETag or Last-Modified to judge its bytes by; downloaded from zero",
		         cli_bytes(it->partial, at, sizeof at));
		break;
	case OW_FETCH_RESUME_IGNORED:
		snprintf(buf, n, "a partial of %s not resumed: the server sent the whole file to the "
		         "Range request; downloaded from zero", cli_bytes(it->partial, at, sizeof at));
		break;
	case OW_FETCH_RESUME_DISCARDED:
		snprintf(buf, n, "resume discarded: the resumed file did not %s; downloaded again "
		         "from zero",
		         it->resume_basis == OW_FETCH_BASIS_PINNED      ? "match its pinned sha256"
		         : it->resume_basis == OW_FETCH_BASIS_PUBLISHED ? "match its published sha256"
		                                                        : "verify");
		break;
	default:
		break;
	}
}

static void say_resume(const struct cli *c, const struct ow_fetch_item *it)
{
	char line[512], prefix[400];
	resume_line(it, line, sizeof line);
	if (!*line || c->json || c->verbosity < 0)
		return;
	snprintf(prefix, sizeof prefix, "offwheel %s: %s: ", c->cmd ? c->cmd : "fetch",
	         it->filename);
	cli_wrapped(stdout, prefix, line);
}

json_t *cli_fetch_report_json(const struct ow_fetch_report *r)
{
	json_t *a = json_array();
	for (size_t i = 0; i < r->n; i++)
		json_array_append_new(a, item_json(&r->items[i]));
	return json_pack("{s:s, s:o, s:I, s:I, s:I, s:I, s:I, s:f, s:b}", "command", "fetch",
	                 "files", a, "done", (json_int_t)r->done, "had", (json_int_t)r->had,
	                 "rejected", (json_int_t)r->rejected, "failed", (json_int_t)r->failed,
	                 "received", (json_int_t)r->received, "seconds", r->seconds, "complete",
	                 r->failed == 0 && r->rejected == 0);
}

/* "done     NAME  SIZE  TRUST"; too long for the terminal, the size goes
 * on a line of its own: the name is never cut. */
void cli_fetch_item_text(const struct cli *c, const struct ow_fetch_item *it)
{
	char head[300], tail[96], b[32];
	if (c->json || c->verbosity < 0)
		return;
	int n = snprintf(head, sizeof head, "%-8s %s", ow_fetch_outcome_name(it->outcome),
	                 it->filename);
	int k = snprintf(tail, sizeof tail, "%s%s%s%s", cli_bytes(it->bytes, b, sizeof b),
	                 it->resumed ? " (resumed)" : "", it->trust ? "  " : "",
	                 it->trust ? it->trust : "");
	int split = isatty(fileno(stdout)) && n + 2 + k > cli_columns(fileno(stdout), 80);
	cli_say(c, "%s%s%s\n", head, split ? "\n         " : "  ", tail);
}

/* ", 4 already there (downloaded while resolving, ...)" and the like: only
 * the counts that are not zero. */
static void summary_parts(const struct ow_fetch_report *r, size_t by_resolve, struct ow_str *b)
{
	if (r->had)
		ow_str_printf(b, ", %zu already there", r->had);
	if (r->had && by_resolve)
		ow_str_printf(b, " (%s%zu downloaded by this run to read their METADATA)",
		              by_resolve < r->had ? "of them " : "",
		              by_resolve < r->had ? by_resolve : r->had);
	if (r->rejected)
		ow_str_printf(b, ", %zu rejected", r->rejected);
	if (r->failed)
		ow_str_printf(b, ", %zu failed", r->failed);
}

void cli_fetch_render_text(const struct cli *c, const struct ow_fetch_report *r, size_t by_resolve)
{
	char b2[32], b3[32];
	struct ow_str sum = {0};
	cli_progress_clear();
	for (size_t i = 0; i < r->n; i++) {
		const struct ow_fetch_item *it = &r->items[i];
		say_resume(c, it);
		if (it->outcome >= OW_FETCH_REJECTED) {
			char prefix[300];
			snprintf(prefix, sizeof prefix, "%-8s %s: ", ow_fetch_outcome_name(it->outcome),
			         it->filename);
			cli_wrapped(stderr, prefix, ow_fetch_item_detail(it));
		} else if (it->outcome == OW_FETCH_DONE || c->verbosity > 0)
			cli_fetch_item_text(c, it);
	}
	if (!r->n || c->json || c->verbosity < 0)
		return;
	if (r->done)
		ow_str_printf(&sum, "%zu files: %zu downloaded (%s in %.1f s, %s)", r->n, r->done,
		              cli_bytes(r->received, b2, sizeof b2), r->seconds,
		              cli_rate(r->received, r->seconds, b3, sizeof b3));
	else
		ow_str_printf(&sum, "%zu files: none downloaded", r->n);
	summary_parts(r, by_resolve, &sum);
	char *text;
	if (ow_str_take(&sum, &text) == 0) { /* out of memory: no summary, the items were said */
		cli_wrapped(stdout, "", text);
		free(text);
	}
}

static void render(struct cli *c, const struct ow_fetch_report *r)
{
	if (c->json)
		cli_json_out(cli_fetch_report_json(r));
	else
		cli_fetch_render_text(c, r, 0);
}

int cmd_fetch(struct cli *c, int argc, char **argv)
{
	struct fetch_args a = {.max_mb = 8192};
	const struct cli_spec cs = {opts, usage, description, on_opt, &a};
	int first = cli_parse(c, argc, argv, &cs);
	int rc = first < 0 ? cli_parse_exit(first) : 0;
	if (first >= 0 && first >= argc)
		rc = cli_usage_error(c, "fetch: name the files (wheel file names or URLs)");
	if (first < 0 || rc || (rc = cli_index_opts_finish(c, &a.idx)) ||
	    (a.idx.extra.n && (rc = cli_usage_error(c, "fetch: --extra-index-url is for resolve "
	                                            "and sync, which look dependencies up there")))) {
		cli_index_opts_dispose(&a.idx);
		return rc;
	}
	ow_store *s = NULL;
	int64_t *ids = NULL;
	size_t n = 0;
	if (!(rc = cli_open_store(c, OW_STORE_WRITE, &s)) &&
	    !(rc = lookup_all(c, s, argv + first, argc - first, &ids, &n))) {
		char tmpdir[sizeof c->home + 8];
		snprintf(tmpdir, sizeof tmpdir, "%s/tmp", c->home);
		if (!a.idx.force) /* each download must fit on the workspace's disk */
			a.idx.http.space_dir = tmpdir;
		struct ow_fetch_opts fo = {.policy = &a.idx.policy, .http = &a.idx.http,
		                           .max_size = (uint64_t)a.max_mb << 20,
		                           .recheck = a.idx.force};
		struct ow_fetch_report r;
		cli_interrupt_arm();
		int frc = a.metadata ? ow_fetch_metadata(s, &fo, ids, n, &r)
		                     : ow_fetch_files(s, &fo, ids, n, &r);
		cli_interrupt_disarm();
		int ok = frc == 0 || frc == OW_EINCOMPLETE || frc == OW_EVERIFY || frc == OW_ENOSPC;
		if (ok && cli_interrupted() && !c->json)
			rc = cli_interrupt_report(c, &r);
		else if (ok)
			render(c, &r);
		if (!rc)
			rc = cli_interrupted() ? 128 + cli_interrupted()
			     : frc ? (ok ? ow_err_exit_code(frc) : cli_fail(c, frc))
			           : 0;
		ow_fetch_report_dispose(&r);
	}
	free(ids);
	ow_store_close(s);
	cli_index_opts_dispose(&a.idx);
	return rc;
}
