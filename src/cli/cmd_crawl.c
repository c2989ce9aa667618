/* cmd_crawl.c - offwheel crawl: fetch index pages, record every file. */
#include <stdbool.h>
#include <string.h>

#include "cli.h"
#include "offwheel/crawl.h"
#include "indexopts.h"

static const char usage[] = "crawl [--channel CH | --index-url URL | --no-index] [--find-links URL|DIR] "
                            "[--variant LIST] [--project LIST]";
static const char description[] =
	"Fetch the index pages {index}/{variant}/{project}/ in parallel and record\n"
	"every wheel they list (version, tags, variant folder, published hashes).\n"
	"A page seen before is asked for with a conditional GET; files that vanish\n"
	"from a page are kept (marked gone), but a page that loses more than 10\n"
	"percent (and more than 5) of its files at once is not applied unless\n"
	"--force.  A page must arrive whole: one cut short, one of another project\n"
	"or a 304 to a first request fails.  Bad links are rejected with a reason\n"
	"while the good links of the same page are kept.  Exit 4 when some pages\n"
	"could not be fetched (the others are recorded).";

static const struct cli_opt opts[] = {CLI_INDEX_OPTS, {NULL, 0, 0, NULL, NULL}};

static int on_opt(struct cli *c, int key, const char *arg, void *ud)
{
	int rc = cli_index_opt(c, ud, key, arg);
	return rc == -1 ? 2 : rc;
}

static json_t *page_json(const struct ow_crawl_page *p)
{
	json_t *reasons = json_array();
	for (size_t i = 0; i < p->rejected; i++)
		json_array_append_new(reasons, json_string(p->reasons[i]));
	return json_pack("{s:s, s:s, s:s, s:s, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:s?}", "url", p->url,
	                 "variant", p->variant, "project", p->project, "outcome",
	                 ow_page_outcome_name(p->outcome), "http_status", (int)p->status, "files",
	                 (json_int_t)p->files, "sdists", (json_int_t)p->sdists, "added", (json_int_t)p->added, "gone",
	                 (json_int_t)p->gone, "vanished", (json_int_t)p->vanished, "skipped", (json_int_t)p->skipped, "rejected", (json_int_t)p->rejected,
	                 "rejected_reasons", reasons, "error",
	                 p->outcome == OW_PAGE_FAILED || p->outcome == OW_PAGE_MISSING
	                     ? (p->detail ? p->detail : "")
	                     : NULL);
}

static void page_text(const struct cli *c, const struct ow_crawl_page *p)
{
	char where[200];
	snprintf(where, sizeof where, "%s%s%s", p->variant, *p->variant ? "/" : "", p->project);
	if (p->outcome == OW_PAGE_FAILED || p->outcome == OW_PAGE_MISSING) {
		cli_say(c, "%-28s %-9s %s\n", where, ow_page_outcome_name(p->outcome),
		        p->detail ? p->detail : "");
		return;
	}
	cli_say(c, "%-28s %-9s %5zu files: %zu new, %zu gone, %zu rejected", where,
	        ow_page_outcome_name(p->outcome), p->files, p->added, p->gone, p->rejected);
	if (p->sdists)
		cli_say(c, ", %zu of them sdists", p->sdists);
	if (p->skipped)
		cli_say(c, ", %zu skipped (.egg/.exe/old sdist formats%s)", p->skipped,
		        p->nskips && c->verbosity <= 0 ? "; -v names them" : "");
	cli_say(c, "\n");
	for (size_t i = 0; c->verbosity > 0 && i < p->nskips; i++)
		cli_say(c, "    skipped: %s\n", p->skips[i]);
	if (p->vanished > 5 && p->vanished * 10 > p->files + p->vanished)
		cli_say(c, "    warning: %zu files vanished from the page at once (accepted: --force)\n",
		        p->vanished);
	size_t show = c->verbosity > 0 ? p->rejected : p->rejected < 3 ? p->rejected : 3;
	for (size_t i = 0; i < show; i++)
		cli_say(c, "    rejected: %s\n", p->reasons[i]);
	if (show < p->rejected)
		cli_say(c, "    ... %zu more rejected links (-v lists them)\n", p->rejected - show);
}

static void render(struct cli *c, const struct cli_index_opts *o, const struct ow_crawl_report *r)
{
	size_t files = 0, added = 0, gone = 0, rejected = 0;
	json_t *pages = c->json ? json_array() : NULL;
	for (size_t i = 0; i < r->npages; i++) {
		const struct ow_crawl_page *p = &r->pages[i];
		files += p->files, added += p->added, gone += p->gone, rejected += p->rejected;
		if (pages)
			json_array_append_new(pages, page_json(p));
		else
			page_text(c, p);
	}
	if (pages)
		cli_json_out(json_pack("{s:s, s:s, s:o, s:I, s:I, s:I, s:I, s:I, s:b}", "command",
		                       "crawl", "index_url", o->index, "pages", pages, "files",
		                       (json_int_t)files, "added", (json_int_t)added, "gone",
		                       (json_int_t)gone, "rejected", (json_int_t)rejected,
		                       "pages_failed", (json_int_t)r->failed, "complete",
		                       r->failed == 0));
	else
		cli_say(c, "%s: %zu pages, %zu files listed (%zu new, %zu gone), %zu links rejected, "
		           "%zu pages failed\n",
		        o->index, r->npages, files, added, gone, rejected, r->failed);
}

/* Move the pages of `more` to the end of `r`. */
static int report_append(struct ow_crawl_report *r, struct ow_crawl_report *more)
{
	struct ow_crawl_page *g = realloc(r->pages, (r->npages + more->npages + 1) * sizeof *g);
	if (!g)
		return OW_ENOMEM;
	r->pages = g;
	memcpy(g + r->npages, more->pages, more->npages * sizeof *g);
	r->npages += more->npages;
	r->failed += more->failed;
	free(more->pages);
	more->pages = NULL;
	more->npages = 0;
	return 0;
}

/* Each --find-links source beside the index, for the same projects; its
 * pages join the report.  crc: the index's crawl; the run's outcome. */
static int crawl_find_links(ow_store *s, const struct cli_index_opts *o,
                            struct ow_crawl_opts *co, struct ow_crawl_report *r, int crc)
{
	static const char *const root[] = {""};
	co->variants = root;
	co->nvariants = 1;
	for (size_t i = 0; i < o->find_links.n; i++) {
		struct ow_crawl_report more;
		if (!strcmp(o->find_links.v[i], o->index))
			continue; /* --no-index: crawled as the index */
		co->index_url = o->find_links.v[i];
		int rc = ow_crawl(s, co, &more);
		if (rc != 0 && rc != OW_EINCOMPLETE)
			return rc;
		crc = crc ? crc : rc;
		rc = report_append(r, &more);
		ow_crawl_report_dispose(&more);
		if (rc)
			return rc;
	}
	return crc;
}

int cmd_crawl(struct cli *c, int argc, char **argv)
{
	struct cli_index_opts o = {0};
	const struct cli_spec cs = {opts, usage, description, on_opt, &o};
	int rc;
	if (!cli_parse_no_operands(c, argc, argv, &cs, &rc) || (rc = cli_index_opts_finish(c, &o)) ||
	    (o.extra.n && (rc = cli_usage_error(c, "crawl: --extra-index-url is for resolve "
	                                            "and sync, which look dependencies up there")))) {
		cli_index_opts_dispose(&o);
		return rc;
	}
	ow_store *s;
	if ((rc = cli_open_store(c, OW_STORE_WRITE, &s))) {
		cli_index_opts_dispose(&o);
		return rc;
	}
	struct ow_crawl_opts co = {
		.index_url = o.index,
		.projects = (const char *const *)o.projects.v,
		.nprojects = o.projects.n,
		.policy = &o.policy,
		.http = &o.http,
		.force = o.force,
	};
	co.variants = cli_index_opts_folders(&o, &co.nvariants);
	co.find_links = (const char *const *)o.find_links.v;
	co.nfind_links = o.find_links.n;
	struct ow_crawl_report r;
	struct ow_crawl_probe probe = {0};
	int crc = o.variants_default && !o.flat ? ow_crawl_probing(s, &co, &r, &probe)
	                                        : ow_crawl(s, &co, &r);
	if (crc == 0 || crc == OW_EINCOMPLETE)
		crc = crawl_find_links(s, &o, &co, &r, crc);
	if (probe.layout == OW_ROOT_FLAT && probe.remembered)
		cli_say(c, "%s is one root (found before; --force asks for its variant folders "
		           "again): crawling {index}/{project}/\n",
		        o.index);
	else if (probe.layout == OW_ROOT_FLAT)
		/* none of the default variant folders: one root (PyPI, a mirror) */
		cli_say(c, "%s has no folder for any default variant: crawling it as one root "
		           "({index}/{project}/)\n",
		        o.index);
	if (crc == 0 || crc == OW_EINCOMPLETE)
		render(c, &o, &r);
	else
		rc = cli_fail(c, crc);
	if (crc == OW_EINCOMPLETE) /* a login missing or refused is an error, not incomplete */
		rc = ow_crawl_auth_failed(&r) ? ow_err_exit_code(OW_EAUTH) : 4;
	int hint = crc == 0 || crc == OW_EINCOMPLETE ? cli_index_find_links_hint(c, &o, s) : 0;
	if (hint)
		rc = hint;
	ow_crawl_report_dispose(&r);
	ow_store_close(s);
	cli_index_opts_dispose(&o);
	return rc;
}
