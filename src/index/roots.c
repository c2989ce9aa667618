/* roots.c - what is known of an index root's layout (the roots table). */
#include <string.h>
#include <time.h>

#include "offwheel/crawl.h"
#include "offwheel/error.h"
#include "event.h"
#include "store.h"

static const char *const layout_names[] = {"unknown", "flat", "variants"};

const char *ow_root_layout_name(enum ow_root_layout l)
{
	return (unsigned)l < sizeof layout_names / sizeof layout_names[0] ? layout_names[l] : "?";
}

int ow_root_layout_get(ow_store *s, const char *index_url, enum ow_root_layout *out)
{
	*out = OW_ROOT_UNKNOWN;
	ow_stmt *st = ow_db_stmt(ow_store_db(s), OW_SQL_ROOT_LAYOUT_GET);
	if (!st)
		return OW_EDB;
	ow_stmt_text(st, 1, index_url);
	int rc = ow_stmt_step(st);
	if (rc == 1) {
		const char *name = ow_col_text(st, 0);
		*out = !strcmp(name, "flat")       ? OW_ROOT_FLAT
		       : !strcmp(name, "variants") ? OW_ROOT_VARIANTS
		                                   : OW_ROOT_UNKNOWN;
		ow_stmt_run(st); /* ends the read */
	}
	return rc < 0 ? rc : 0;
}

int ow_root_layout_put(ow_store *s, const char *index_url, enum ow_root_layout layout)
{
	if (layout == OW_ROOT_UNKNOWN)
		return 0;
	ow_stmt *st = ow_db_stmt(ow_store_db(s), OW_SQL_ROOT_LAYOUT_PUT);
	if (!st)
		return OW_EDB;
	ow_stmt_text(st, 1, index_url);
	ow_stmt_text(st, 2, ow_root_layout_name(layout));
	ow_stmt_int(st, 3, (int64_t)time(NULL));
	return ow_stmt_run(st);
}

enum ow_root_layout ow_crawl_layout(const struct ow_crawl_report *r)
{
	size_t missing = 0;
	for (size_t i = 0; i < r->npages; i++) {
		enum ow_page_outcome o = r->pages[i].outcome;
		if (o != OW_PAGE_MISSING && o != OW_PAGE_FAILED)
			return OW_ROOT_VARIANTS;
		missing += o == OW_PAGE_MISSING;
	}
	/* a page that failed might have been there: nothing is concluded */
	return r->npages && missing == r->npages ? OW_ROOT_FLAT : OW_ROOT_UNKNOWN;
}

void ow_crawl_count(const struct ow_crawl_report *r, size_t *refreshed, size_t *not_found)
{
	for (size_t i = 0; i < r->npages; i++) {
		enum ow_page_outcome o = r->pages[i].outcome;
		*not_found += o == OW_PAGE_MISSING;
		*refreshed += o != OW_PAGE_MISSING && o != OW_PAGE_FAILED;
	}
}

int ow_crawl_auth_failed(const struct ow_crawl_report *r)
{
	for (size_t i = 0; i < r->npages; i++)
		if (r->pages[i].outcome == OW_PAGE_FAILED && r->pages[i].rc == OW_EAUTH)
			return ow_err(OW_EAUTH, "%s", r->pages[i].detail ? r->pages[i].detail : "");
	return 0;
}

static const char *const root_folder[] = {""};

static int crawl_root(ow_store *s, const struct ow_crawl_opts *o, struct ow_crawl_report *out)
{
	struct ow_crawl_opts flat = *o;
	flat.variants = root_folder;
	flat.nvariants = 1;
	return ow_crawl(s, &flat, out);
}

int ow_crawl_probing(ow_store *s, const struct ow_crawl_opts *o, struct ow_crawl_report *out,
                     struct ow_crawl_probe *probe)
{
	enum ow_root_layout known = OW_ROOT_UNKNOWN;
	memset(probe, 0, sizeof *probe);
	int rc = o->force ? 0 : ow_root_layout_get(s, o->index_url, &known);
	if (rc < 0)
		return rc;
	if (known == OW_ROOT_FLAT) {
		probe->layout = OW_ROOT_FLAT;
		probe->remembered = true;
		return crawl_root(s, o, out);
	}
	if ((rc = ow_crawl(s, o, out)) < 0 && rc != OW_EINCOMPLETE && rc != OW_EINTERRUPTED)
		return rc;
	probe->layout = ow_crawl_layout(out);
	if (ow_root_layout_put(s, o->index_url, probe->layout) < 0)
		ow_log(OW_LOG_WARN, "%s: its layout could not be remembered: %s", o->index_url,
		       ow_err_detail());
	if (probe->layout != OW_ROOT_FLAT)
		return rc;
	probe->not_found = out->npages;
	ow_crawl_report_dispose(out);
	return crawl_root(s, o, out);
}
