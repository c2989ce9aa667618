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
		int ok = frc == 0 || frc == OW_EINCOMPLETE || frc == OW_EVERIFY || frc == OW_ENOSPC ||
		         frc == OW_EINTERRUPTED; /* a report: what was stored, what was not */
		if (frc == OW_EINTERRUPTED && !c->json)
			rc = cli_interrupt_report(c, &r);
		else if (ok)
			render(c, &r);
		if (!rc)
			rc = frc ? (ok ? ow_err_exit_code(frc) : cli_fail(c, frc)) : 0;
		ow_fetch_report_dispose(&r);
	}
	free(ids);
	ow_store_close(s);
	cli_index_opts_dispose(&a.idx);
	return rc;
}
