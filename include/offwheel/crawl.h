/* crawl.h - the first stage: fetch index pages, record every file.
 *
 * For every variant × project it fetches {index}/{variant}/{project}/ (the
 * trailing slash matters), in parallel, with a conditional GET when the page
 * was seen before.  A new body is parsed (pagelinks.h) before anything of it
 * is stored; then the body becomes an object and, in one transaction, the
 * page row, one row per file and the page→file links are written.  Files
 * that vanish from a page are kept and marked gone (the nightly pages list
 * only the newest versions; older files stay downloadable) — unless a page
 * loses many at once (see ow_crawl_page.vanished).  A page must be whole: a
 * body delimited only by a closed connection must end with </html>, and a
 * page whose files all belong to another project is refused. */
#ifndef OW_CRAWL_H
#define OW_CRAWL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "offwheel/http.h"
#include "offwheel/store.h"
#include "offwheel/url.h"

#define OW_INDEX_NIGHTLY "https://download.pytorch.org/whl/nightly"
#define OW_INDEX_STABLE "https://download.pytorch.org/whl"
#define OW_INDEX_TEST "https://download.pytorch.org/whl/test"

/* "nightly" | "stable" | "test" -> the index URL; NULL if unknown. */
const char *ow_channel_index(const char *channel);

/* The variant folder a file URL lies in, judged by the name of its parent
 * directory (cu128, rocm6.4, cpu, cpu-cxx11-abi, xpu), "" when none. */
void ow_variant_of_url(const char *url, char *buf, size_t n);

/* One page to crawl: {index_url}/{variant}/{project}/ (variant "": the
 * root's {index_url}/{project}/). */
struct ow_crawl_ref {
	const char *index_url, *variant, *project;
};

struct ow_crawl_opts {
	const char *index_url;   /* without trailing slash */
	const char *const *variants; /* "" = the channel root folder */
	size_t nvariants;
	const char *const *projects;
	size_t nprojects;
	const struct ow_url_policy *policy; /* hosts; must allow the index's host */
	const struct ow_http_opts *http;    /* engine options (jobs, CA, timeouts) */
	bool force;                          /* no conditional GET; accept a page
	                                     * that lost many files at once */
	/* Instead of index_url x variants x projects: these pages, of any
	 * indexes, all in one engine run (a resolve's round: every root it
	 * asks, at once).  The report has one page per ref, in order. */
	const struct ow_crawl_ref *refs;
	size_t nrefs;
	/* pip's --find-links sources (docs/find-links.md), roots as the refs
	 * name them: a page whose index_url is one of these is not fetched from
	 * {root}/{project}/; the source itself (a page of links, or a local
	 * directory) is read once per crawl, and {root}/{project}/ is recorded
	 * with that project's files, for every project it lists (a project it
	 * does not list is MISSING).  A source is crawled as an index_url (with
	 * the variant "") or through refs. */
	const char *const *find_links;
	size_t nfind_links;
};

enum ow_page_outcome {
	OW_PAGE_NEW,       /* first fetch of this page */
	OW_PAGE_CHANGED,   /* 200 with a different body */
	OW_PAGE_SAME,      /* 200, same bytes as before */
	OW_PAGE_UNCHANGED, /* 304: the stored page still holds */
	OW_PAGE_MISSING,   /* 403/404: no such project here */
	OW_PAGE_FAILED     /* could not be fetched or was refused */
};

struct ow_crawl_page {
	char url[1024];
	char variant[OW_VARIANT_MAX];
	char project[128];
	enum ow_page_outcome outcome;
	int rc;       /* for FAILED */
	long status;  /* HTTP status */
	size_t files, added, gone, rejected; /* files: wheels and sdists */
	size_t sdists; /* of `files`, source distributions (resolve takes them with --allow-sdist) */
	size_t vanished; /* files the page listed before and lists no more; more
	                  * than 5 and 10 % of them at once fail the page (not
	                  * applied) unless opts.force */
	size_t skipped; /* legacy formats (.egg, .exe, ...), not wheels, not hostile,
	                 * and legacy sdist names (sympy-0.7.2-py3.2.tar.gz) */
	char **skips;   /* of `skipped`, the legacy sdist names, "FILE: why" */
	size_t nskips;
	char **reasons; /* `rejected` messages */
	char *detail;   /* FAILED or MISSING: why; NULL otherwise (or out of memory) */
};

struct ow_crawl_report {
	struct ow_crawl_page *pages;
	size_t npages;
	size_t failed; /* pages FAILED */
};

const char *ow_page_outcome_name(enum ow_page_outcome o);

/* What is known of an index root's layout (the workspace's roots table):
 * FLAT, one root with every project at {index}/{project}/ (none of the
 * default variant folders had a page: PyPI's /simple, a devpi index);
 * VARIANTS, a channel root with {index}/{variant}/{project}/ pages.  A root
 * remembered FLAT is not asked for its variant folders again; --force
 * (crawl, sync) asks again and remembers the answer. */
enum ow_root_layout { OW_ROOT_UNKNOWN = 0, OW_ROOT_FLAT, OW_ROOT_VARIANTS };
const char *ow_root_layout_name(enum ow_root_layout l);
int ow_root_layout_get(ow_store *s, const char *index_url, enum ow_root_layout *out);
/* Remember `layout` (UNKNOWN: nothing is written).  Store opened for writing. */
int ow_root_layout_put(ow_store *s, const char *index_url, enum ow_root_layout layout);
/* What a crawl of the variant folders showed: VARIANTS when a page exists,
 * FLAT when every page was missing (403/404), UNKNOWN when a page failed. */
enum ow_root_layout ow_crawl_layout(const struct ow_crawl_report *r);
/* Add the pages the server answered (200 or 304) to *refreshed and those it
 * does not have (403/404) to *not_found. */
void ow_crawl_count(const struct ow_crawl_report *r, size_t *refreshed, size_t *not_found);

struct ow_crawl_probe {
	enum ow_root_layout layout; /* how the index was read (UNKNOWN: a folder's page failed) */
	bool remembered;            /* FLAT from the roots table: no folder was asked for */
	size_t not_found;           /* folder pages asked for and not there (403/404) */
};
/* ow_crawl for variant folders that are the defaults, not the user's: a root
 * remembered FLAT is crawled as one root ({index}/{project}/) without asking
 * for the folders, unless o->force; otherwise the folders are asked for, the
 * layout is remembered, and a root with none of them is crawled as one root.
 * *out is the report of the last crawl (the root's when FLAT). */
int ow_crawl_probing(ow_store *s, const struct ow_crawl_opts *o, struct ow_crawl_report *out,
                     struct ow_crawl_probe *probe);
/* An index URL that is a find-links page (an nginx autoindex of wheels
 * given as --index-url): 1 when the workspace recorded {index}/{project}/
 * missing and the root o->index_url, read as a find-links page (one GET;
 * a local directory is listed), links distribution files (*nfiles of
 * them); 0 otherwise.  The caller says to use --find-links. */
int ow_crawl_find_links_hint(ow_store *s, const struct ow_crawl_opts *o, const char *project,
                             size_t *nfiles);
/* OW_EAUTH, with the first such page's detail, when a page failed for a
 * login (none given and the server asks for one, or the one given refused:
 * no retry and no later run mends that); else 0. */
int ow_crawl_auth_failed(const struct ow_crawl_report *r);
/* Add the links the pages of `r` rejected to `acc`. */
void ow_crawl_report_refusals(const struct ow_crawl_report *r, struct ow_link_refusals *acc);
/* Crawl; returns 0 when every page was done (missing projects included),
 * OW_EINCOMPLETE when some failed (the rest is stored), OW_EINTERRUPTED when
 * the process was interrupted (ow_interrupt; the pages done are stored), < 0
 * otherwise when nothing could start.  *out is filled in the first three
 * cases. */
int ow_crawl(ow_store *s, const struct ow_crawl_opts *o, struct ow_crawl_report *out);
void ow_crawl_report_dispose(struct ow_crawl_report *r);

#endif
