/* cmd_sync.c - offwheel sync: crawl + resolve + fetch, the main job. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "offwheel/crawl.h"
#include "offwheel/listing.h"
#include "fleetplan.h"
#include "interrupt.h"
#include "render.h"
#include "stackopts.h"
#include "targetopts.h"

static const char usage[] =
	"sync [--channel CH | --index-url URL] [--variant LIST] [--python LIST] "
	"[--platform LIST] [--date YYYYMMDD | --version V] [--device CC] [--probes DIR|FILE]";
static const char description[] =
	"The main job in one command: refresh the index pages (conditional GETs),\n"
	"resolve a matched torch / torchvision / torchaudio set with its whole\n"
	"dependency closure for every variant × python × platform, and download\n"
	"every member into the verified store (with the PEP 658 .metadata files).\n"
	"With --device only sets whose torch runs on that GPU are fetched; each set's\n"
	"verdict (and the library behind a failure) is recorded, and export refuses\n"
	"a set recorded as not running.\n"
	"Resumable as a whole: a re-run downloads only what is missing and resumes\n"
	"partial downloads.  A wheel whose own METADATA is not what range requests\n"
	"gave (an index without .metadata files) replaces it, and the targets are\n"
	"resolved and fetched again in the same run.  Exit 0 when every target is\n"
	"complete and stored, 4 when some target is incomplete or some file could\n"
	"not be downloaded, 3 when a file failed verification or no set runs on\n"
	"--device.\n"
	"With --probes (the files 'offwheel probe' wrote on the lab's machines) the\n"
	"matrix is every Python and platform of the machines, and the output names\n"
	"the set each machine gets, or why none fits it (docs/fleet.md).";

enum { OPT_PROBES = 900 };
static const struct cli_opt opts[] = {
	CLI_INDEX_OPTS, CLI_TARGET_OPTS, CLI_STACK_OPTS, CLI_MAX_AGE_OPT,
	{"probes", OPT_PROBES, required_argument, "DIR|FILE", "the machines' probes (offwheel probe): their Pythons and platforms are the targets, and each gets its set"},
	{NULL, 0, 0, NULL, NULL}};

struct sopts {
	struct cli_index_opts idx;
	struct cli_target_opts tgt;
	struct cli_stack_opts stack;
	size_t refreshed, not_found; /* index pages, by crawl_step */
	struct cli_strlist probes;
	struct fleet fleet;
};

static int on_opt(struct cli *c, int key, const char *arg, void *ud)
{
	struct sopts *o = ud;
	const struct cli_stack_opts_all all = {&o->stack, &o->idx, &o->tgt};
	if (key == OPT_PROBES)
		return cli_strlist_add_csv(&o->probes, arg);
	return cli_stack_opts_all_opt(c, &all, key, arg);
}

struct dep_pages {
	struct cli_strlist *out;
	const struct cli_strlist *skip; /* pages crawled already: a one root's own */
};

/* Dependency pages seen before on this index ({index}/{project}/). */
static int add_dep_page(void *ud, const char *project)
{
	struct dep_pages *d = ud;
	for (size_t i = 0; d->skip && i < d->skip->n; i++)
		if (!strcmp(d->skip->v[i], project))
			return 0;
	return cli_strlist_add_csv(d->out, project) ? OW_ENOMEM : 0;
}

static int known_dep_pages(ow_store *s, const char *index, const struct cli_strlist *skip,
                           struct cli_strlist *out)
{
	struct dep_pages d = {out, skip};
	return ow_list_dep_projects(s, index, add_dep_page, &d);
}

struct crawl_counts {
	size_t failed;    /* pages that could not be fetched */
	size_t refreshed; /* pages the server answered (200, or 304: unchanged) */
	size_t deps;      /* of those, dependency pages */
	size_t not_found; /* pages it does not have (403/404), variant folders included */
	struct ow_link_refusals rejected; /* links the pages read held and the policy refused */
};

static void count_pages(const struct ow_crawl_report *r, struct crawl_counts *n, bool deps)
{
	size_t refreshed = 0;
	ow_crawl_count(r, &refreshed, &n->not_found);
	n->refreshed += refreshed;
	n->deps += deps ? refreshed : 0;
	n->failed += r->failed;
	ow_crawl_report_refusals(r, &n->rejected);
}

/* The set's own pages: the default variant folders are asked for only while
 * the root's layout is not known (ow_crawl_probing). */
static int crawl_members(struct sopts *o, ow_store *s, struct ow_crawl_opts *co,
                         struct crawl_counts *n, bool *at_root)
{
	struct ow_crawl_report r;
	struct ow_crawl_probe probe = {0};
	co->variants = cli_index_opts_folders(&o->idx, &co->nvariants);
	int rc = o->idx.variants_default && !o->idx.flat ? ow_crawl_probing(s, co, &r, &probe)
	                                                 : ow_crawl(s, co, &r);
	if (rc && rc != OW_EINCOMPLETE && rc != OW_EINTERRUPTED)
		return rc;
	int stop = rc == OW_EINTERRUPTED ? rc : 0; /* the report is filled: counted, freed */
	/* a login missing or refused: resolve would only ask again */
	if ((rc = ow_crawl_auth_failed(&r))) {
		ow_crawl_report_dispose(&r);
		return rc;
	}
	count_pages(&r, n, false);
	n->not_found += probe.not_found;
	*at_root = probe.layout == OW_ROOT_FLAT || (co->nvariants == 1 && !*co->variants[0]);
	ow_crawl_report_dispose(&r);
	return stop;
}

/* Each --find-links source beside the index: read once, every project it
 * lists recorded (the members asked for by name). */
static int crawl_find_links(struct sopts *o, ow_store *s, struct ow_crawl_opts *co,
                            struct crawl_counts *n)
{
	static const char *const root[] = {""};
	struct ow_crawl_report r;
	int rc = 0;
	co->variants = root;
	co->nvariants = 1;
	co->projects = (const char *const *)o->idx.projects.v;
	co->nprojects = o->idx.projects.n;
	for (size_t i = 0; rc == 0 && i < o->idx.find_links.n; i++) {
		if (!strcmp(o->idx.find_links.v[i], o->idx.index))
			continue; /* --no-index: the index, crawled already */
		co->index_url = o->idx.find_links.v[i];
		rc = ow_crawl(s, co, &r);
		if (rc == 0 || rc == OW_EINCOMPLETE || rc == OW_EINTERRUPTED) {
			count_pages(&r, n, false);
			ow_crawl_report_dispose(&r);
			rc = rc == OW_EINTERRUPTED ? rc : 0;
		}
	}
	return rc;
}

static int crawl_step(struct cli *c, struct sopts *o, ow_store *s, size_t *failed,
                      struct ow_link_refusals *rejected)
{
	struct ow_crawl_opts co = {
		.index_url = o->idx.index,
		.projects = (const char *const *)o->idx.projects.v,
		.nprojects = o->idx.projects.n,
		.policy = &o->idx.policy,
		.http = &o->idx.http,
		.force = o->idx.force,
		.find_links = (const char *const *)o->idx.find_links.v,
		.nfind_links = o->idx.find_links.n,
	};
	struct ow_crawl_report r;
	struct crawl_counts n = {0};
	struct cli_strlist deps = {0};
	const char *root[] = {""};
	bool at_root = false;
	int rc = crawl_members(o, s, &co, &n, &at_root);
	/* the dependency pages seen before, on the index and on each extra index */
	for (size_t i = 0; i <= o->idx.extra.n && rc == 0; i++) {
		co.index_url = i ? o->idx.extra.v[i - 1] : o->idx.index;
		cli_strlist_dispose(&deps);
		if ((rc = known_dep_pages(s, co.index_url, !i && at_root ? &o->idx.projects : NULL,
		                          &deps)) ||
		    !deps.n)
			continue;
		co.variants = root;
		co.nvariants = 1;
		co.projects = (const char *const *)deps.v;
		co.nprojects = deps.n;
		rc = ow_crawl(s, &co, &r);
		if (rc == 0 || rc == OW_EINCOMPLETE || rc == OW_EINTERRUPTED) {
			count_pages(&r, &n, true);
			rc = rc == OW_EINTERRUPTED ? rc : ow_crawl_auth_failed(&r);
			ow_crawl_report_dispose(&r);
		}
	}
	cli_strlist_dispose(&deps);
	if (rc == 0)
		rc = crawl_find_links(o, s, &co, &n);
	*failed = n.failed;
	*rejected = n.rejected;
	o->refreshed = n.refreshed;
	o->not_found = n.not_found;
	if (rc == 0 && n.not_found)
		cli_say(c, "refreshed %zu index pages and %zu dependency pages (%zu asked for are not "
		           "on the index)\n",
		        n.refreshed - n.deps, n.deps, n.not_found);
	else if (rc == 0 && n.refreshed)
		cli_say(c, "refreshed %zu index pages and %zu dependency pages\n", n.refreshed - n.deps,
		        n.deps);
	return rc;
}

static int resolve_step(struct sopts *o, ow_store *s, struct ow_resolve_report *r,
                        struct ow_resolve_netio *net)
{
	*net = (struct ow_resolve_netio){.policy = &o->idx.policy, .http = &o->idx.http,
	                                 .http_small = &o->idx.http_small, .net = 1,
	                                 .find_links = (const char *const *)o->idx.find_links.v,
	                                 .nfind_links = o->idx.find_links.n};
	struct ow_resolve_io io;
	ow_resolve_io_net(&io, net);
	struct ow_resolve_opts ro;
	cli_target_resolve_opts(&ro, &o->idx, &o->tgt, &io);
	cli_stack_resolve_opts(&o->stack, &ro);
	return ow_resolve(s, &ro, r);
}

/* Members of the complete targets (that run on --device), each file once. */
static int64_t *wanted_files(const struct ow_resolve_report *r, const struct cli_fits *fits,
                             size_t *n)
{
	size_t cap = 0;
	for (size_t i = 0; i < r->ntargets; i++)
		cap += r->targets[i].nmembers;
	int64_t *ids = calloc(cap ? cap : 1, sizeof *ids);
	*n = 0;
	for (size_t i = 0; ids && i < r->ntargets; i++) {
		const struct ow_resolve_target *t = &r->targets[i];
		if (!t->complete || (fits->n && !cli_fits_runs(r, fits, i)))
			continue;
		for (size_t k = 0; k < t->nmembers; k++) {
			size_t j = 0;
			while (j < *n && ids[j] != t->members[k].file_id)
				j++;
			if (j == *n)
				ids[(*n)++] = t->members[k].file_id;
		}
	}
	return ids;
}

struct outcome {
	struct ow_resolve_report res;
	struct ow_resolve_netio net;
	struct cli_fits fits; /* --device: per device, per target */
	struct ow_fetch_report fetch, meta;
	int rrc, frc;
	size_t crawl_failed;
	struct ow_link_refusals crawl_rejected;
	struct cli_strlist replaced; /* wheels whose range metadata was wrong: resolved again */
};

/* The run was interrupted (Ctrl-C, SIGTERM): the resolve or the downloads
 * ended with OW_EINTERRUPTED. */
static int stopped(const struct outcome *out)
{
	return out->rrc == OW_EINTERRUPTED || out->frc == OW_EINTERRUPTED;
}

static int fetch_step(struct sopts *o, ow_store *s, struct outcome *out)
{
	struct ow_fetch_opts fo = {.policy = &o->idx.policy, .http = &o->idx.http};
	size_t n;
	int64_t *ids = wanted_files(&out->res, &out->fits, &n);
	if (!ids)
		return OW_ENOMEM;
	/* the .metadata files first: small, and export publishes them (PEP 658) */
	int mrc = ow_fetch_metadata(s, &fo, ids, n, &out->meta);
	out->frc = mrc == OW_EINTERRUPTED ? mrc : ow_fetch_files(s, &fo, ids, n, &out->fetch);
	free(ids);
	return out->frc == 0 || out->frc == OW_EINCOMPLETE || out->frc == OW_EVERIFY ||
	               out->frc == OW_ENOSPC || out->frc == OW_EINTERRUPTED
	           ? 0
	           : out->frc;
}

static int exit_code(struct sopts *o, const struct outcome *out)
{
	/* an index that could not be reached is incomplete, not "nothing runs" */
	if (out->res.unreachable)
		return 4;
	if (out->frc == OW_ENOSPC) /* the disk is full: an error (1), not "incomplete" */
		return ow_err_exit_code(OW_ENOSPC);
	if (out->frc == OW_EVERIFY || (out->fits.n && !cli_fits_running(&out->res, &out->fits)))
		return 3;
	if (out->rrc == OW_EINCOMPLETE || out->frc == OW_EINCOMPLETE || out->crawl_failed ||
	    out->fetch.meta_replaced)
		return 4;
	(void)o;
	return 0;
}

/* The wheels whose range metadata was wrong: resolved again with their own,
 * or (found again in the second pass) a re-run is needed. */
static void replaced_text(struct cli *c, const struct outcome *out)
{
	for (size_t i = 0; i < out->replaced.n; i++)
		cli_say(c, "%s: its METADATA read by range requests was not the wheel's own: "
		           "resolved again with the wheel's\n", out->replaced.v[i]);
	for (size_t i = 0; i < out->fetch.n; i++)
		if (out->fetch.items[i].meta_replaced)
			cli_say(c, "%s: its METADATA read by range requests was not the wheel's own: "
			           "its sets are marked incomplete — run sync again\n",
			        out->fetch.items[i].filename);
}

static void render(struct cli *c, struct sopts *o, struct outcome *out, int exitc)
{
	if (!c->json) {
		/* the matrix was printed before the downloads (matrix_text) */
		cli_fetch_render_text(c, &out->fetch, out->net.wheels);
		replaced_text(c, out);
		if (o->fleet.n)
			fleet_plan_text(c, &o->fleet);
		return;
	}
	json_t *doc = json_pack("{s:s, s:I, s:I, s:I, s:o, s:o, s:b, s:i}", "command", "sync",
	                        "pages_failed", (json_int_t)out->crawl_failed, "pages_refreshed",
	                        (json_int_t)o->refreshed, "pages_not_found", (json_int_t)o->not_found,
	                        "resolve",
	                        cli_resolve_report_json(&o->idx, &out->res, &out->net), "fetch",
	                        cli_fetch_report_json(&out->fetch), "complete", exitc == 0,
	                        "exit_code", exitc);
	if (out->fits.n)
		cli_fits_json_set(doc, &o->idx, &out->res, &out->fits);
	json_t *rep = json_array();
	for (size_t i = 0; i < out->replaced.n; i++)
		json_array_append_new(rep, json_string(out->replaced.v[i]));
	json_object_set_new(doc, "metadata_replaced", rep);
	if (o->fleet.n)
		json_object_set_new(doc, "machines", fleet_plan_json(&o->fleet));
	cli_json_out(doc);
}

static void outcome_clear(struct outcome *out)
{
	ow_fetch_report_dispose(&out->fetch);
	ow_fetch_report_dispose(&out->meta);
	cli_fits_dispose(&out->fits, out->res.ntargets); /* one per target: before res goes */
	ow_resolve_report_dispose(&out->res);
	ow_resolve_netio_clear(&out->net);
}

/* The matrix (and --device verdicts), printed and flushed before the
 * downloads start: visible while they run, and kept in a log file even when
 * the run is killed. */
static void matrix_text(struct cli *c, struct sopts *o, struct outcome *out)
{
	if (c->json)
		return;
	struct ow_link_refusals own = out->net.rejected;
	out->net.rejected = out->crawl_rejected; /* one count for the run */
	cli_resolve_render_text(c, &o->idx, &out->res, &out->net, !o->tgt.no_deps);
	if (out->fits.n)
		cli_fits_text(c, &o->idx, &out->res, &out->fits);
	out->net.rejected = own;
	fflush(stdout);
}

/* Resolve, judge --device, fetch: 0, or an error that ends the run. */
static int resolve_and_fetch(struct cli *c, struct sopts *o, ow_store *s, struct outcome *out)
{
	out->rrc = resolve_step(o, s, &out->res, &out->net);
	/* one count for the run: the sync's own crawl and resolve's on the way */
	ow_link_refusals_merge(&out->crawl_rejected, &out->net.rejected);
	if (out->rrc == OW_EINTERRUPTED)
		return 0; /* nothing is judged or fetched: run() says so */
	if (out->rrc && out->rrc != OW_EINCOMPLETE)
		return out->rrc;
	int rc = 0;
	if (o->tgt.ndevices) {
		struct ow_fetch_opts fo = {.policy = &o->idx.policy, .http = &o->idx.http};
		rc = cli_fits_judge(&out->fits, s, &fo, &out->res, o->tgt.devices, o->tgt.ndevices,
		                    o->tgt.driver);
	}
	if (rc)
		return rc;
	matrix_text(c, o, out);
	return fetch_step(o, s, out);
}

/* Fetched wheels whose own METADATA contradicted what range requests had
 * given: their sets were resolved from wrong metadata (and are marked so);
 * resolved and fetched once more, now with the wheels' own. */
static int again_if_metadata_wrong(struct cli *c, struct sopts *o, ow_store *s,
                                   struct outcome *out)
{
	if (!out->fetch.meta_replaced || stopped(out))
		return 0;
	for (size_t i = 0; i < out->fetch.n; i++)
		if (out->fetch.items[i].meta_replaced &&
		    cli_strlist_add_csv(&out->replaced, out->fetch.items[i].filename))
			return OW_ENOMEM;
	outcome_clear(out);
	return resolve_and_fetch(c, o, s, out);
}

static int run(struct cli *c, void *ud, ow_store *s)
{
	struct sopts *o = ud;
	struct outcome out = {0};
	char tmpdir[sizeof c->home + 8];
	snprintf(tmpdir, sizeof tmpdir, "%s/tmp", c->home);
	if (!o->idx.force) /* each download must fit on the workspace's disk */
		o->idx.http.space_dir = tmpdir;
	/* from the first page on: an interrupt stops the crawl, the resolve's
	 * rounds and the downloads alike, and leaves the workspace clean */
	cli_interrupt_arm();
	int rc = crawl_step(c, o, s, &out.crawl_failed, &out.crawl_rejected);
	int hint = rc ? 0 : cli_index_find_links_hint(c, &o->idx, s);
	if (rc || hint) { /* interrupted while crawling: nothing resolved */
		cli_interrupt_disarm();
		ow_link_refusals_dispose(&out.crawl_rejected);
		return rc == OW_EINTERRUPTED ? cli_interrupt_fail(c) : hint ? hint : cli_fail(c, rc);
	}
	rc = resolve_and_fetch(c, o, s, &out);
	if (!rc)
		rc = again_if_metadata_wrong(c, o, s, &out);
	if (!rc && o->fleet.n && !stopped(&out))
		rc = fleet_plan_resolved(s, &o->fleet, &out.res);
	cli_interrupt_disarm();
	ow_link_refusals_dispose(&out.net.rejected); /* counted in crawl_rejected */
	out.net.rejected = out.crawl_rejected;       /* moved: net owns them now */
	memset(&out.crawl_rejected, 0, sizeof out.crawl_rejected);
	if (rc == OW_EINTERRUPTED) { /* --device's audits, stopped: said as any interrupt */
		out.rrc = rc;
		rc = 0;
	}
	int exitc = rc ? cli_fail(c, rc) : exit_code(o, &out);
	if (!rc && stopped(&out) && !c->json)
		exitc = cli_interrupt_report(c, &out.fetch);
	else if (!rc)
		render(c, o, &out, exitc);
	if (!rc && stopped(&out))
		exitc = ow_err_exit_code(OW_EINTERRUPTED);
	outcome_clear(&out);
	cli_strlist_dispose(&out.replaced);
	return exitc;
}

int cmd_sync(struct cli *c, int argc, char **argv)
{
	struct sopts o = {0};
	const struct cli_spec cs = {opts, usage, description, on_opt, &o};
	int rc;
	if (cli_parse_no_operands(c, argc, argv, &cs, &rc) &&
	    !(rc = o.probes.n ? fleet_load(c, &o.probes, &o.fleet) : 0) &&
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
