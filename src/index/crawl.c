/* crawl.c - index pages -> pages, files and page_files rows. */
#include "offwheel/crawl.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "array.h"
#include "offwheel/str.h"
#include "digest.h"
#include "offwheel/error.h"
#include "offwheel/str.h"
#include "event.h"
#include "findlinks.h"
#include "fmt.h"
#include "pagelinks.h"
#include "tags.h"
#include "store.h"
#include "http.h"

#define PAGE_CAP ((size_t)64 << 20)

struct fl_src;

struct page_job {
	struct ow_http_req req;
	struct fl_src *fl; /* a find-links source's page: read from its listing */
	struct ow_http_membuf body;
	struct ow_crawl_page *page;
	struct crawl *cr;
	char index_url[1024];
	char fetch_url[1100]; /* file:// pages are read from <dir>/index.html */
	char old_body[OW_SHA256_HEX];
	char etag[256], last_modified[64];
	int seen_before;
	size_t old_files;    /* files the stored page lists */
	size_t old_rejected; /* links it held that were rejected */
};

struct crawl {
	ow_store *s;
	const struct ow_crawl_opts *o;
	int64_t now;
	struct fl_src *fl; /* the find-links sources the refs name, each once */
	size_t nfl;
	bool read_only; /* the sources are read, nothing of them stored */
};

const char *ow_channel_index(const char *channel)
{
	if (!strcmp(channel, "nightly"))
		return OW_INDEX_NIGHTLY;
	if (!strcmp(channel, "stable"))
		return OW_INDEX_STABLE;
	if (!strcmp(channel, "test"))
		return OW_INDEX_TEST;
	return NULL;
}

const char *ow_page_outcome_name(enum ow_page_outcome o)
{
	static const char *const n[] = {"new", "changed", "same", "unchanged", "missing", "failed"};
	return (unsigned)o < sizeof n / sizeof n[0] ? n[o] : "?";
}

static int is_variant_folder(const char *s, size_t n)
{
	if (n >= 3 && !strncmp(s, "cu", 2) && strspn(s + 2, "0123456789") == n - 2)
		return 1;
	if (n > 4 && !strncmp(s, "rocm", 4) && strspn(s + 4, "0123456789.") == n - 4)
		return 1;
	if ((n == 3 && !strncmp(s, "cpu", 3)) || (n == 3 && !strncmp(s, "xpu", 3)))
		return 1;
	return n > 4 && (!strncmp(s, "cpu-", 4) || !strncmp(s, "cpu_", 4));
}

void ow_variant_of_url(const char *url, char *buf, size_t n)
{
	const char *end = strrchr(url, '/');
	buf[0] = '\0';
	if (!end)
		return;
	const char *start = end;
	while (start > url && start[-1] != '/')
		start--;
	size_t len = (size_t)(end - start);
	if (is_variant_folder(start, len) && len < n) {
		memcpy(buf, start, len);
		buf[len] = '\0';
	}
}

/* --- the database side of one page ---------------------------------------- */

static int load_previous(struct crawl *cr, struct page_job *j)
{
	ow_stmt *st = ow_db_stmt(ow_store_db(cr->s), OW_SQL_PAGE_GET);
	if (!st)
		return OW_EDB;
	ow_stmt_text(st, 1, j->page->url);
	int rc = ow_stmt_step(st);
	if (rc == 1 && !ow_col_is_null(st, 3) && !strcmp(ow_col_text(st, 4), "ok")) {
		j->seen_before = 1;
		snprintf(j->etag, sizeof j->etag, "%s", ow_col_is_null(st, 1) ? "" : ow_col_text(st, 1));
		snprintf(j->last_modified, sizeof j->last_modified, "%s",
		         ow_col_is_null(st, 2) ? "" : ow_col_text(st, 2));
		snprintf(j->old_body, sizeof j->old_body, "%s", ow_col_text(st, 3));
		j->old_files = (size_t)ow_col_int(st, 5);
		j->old_rejected = (size_t)ow_col_int(st, 6);
	}
	return rc < 0 ? rc : 0;
}

static const char *opt_text(const char *s) { return s && *s ? s : NULL; }

static int upsert_page(struct crawl *cr, struct page_job *j, const char *status, const char *body,
                       const struct ow_page *pg, int64_t *page_id)
{
	struct ow_crawl_page *p = j->page;
	ow_stmt *st = ow_db_stmt(ow_store_db(cr->s), OW_SQL_PAGE_UPSERT);
	if (!st)
		return OW_EDB;
	ow_stmt_text(st, 1, p->url);
	ow_stmt_text(st, 2, j->index_url);
	ow_stmt_text(st, 3, p->variant);
	ow_stmt_text(st, 4, p->project);
	ow_stmt_text(st, 5, status);
	ow_stmt_text(st, 6, opt_text(j->req.res.etag));
	ow_stmt_text(st, 7, opt_text(j->req.res.last_modified));
	ow_stmt_text(st, 8, body);
	if (pg && pg->has_timestamp)
		ow_stmt_int(st, 9, pg->timestamp);
	ow_stmt_int(st, 10, cr->now);
	if (body && strcmp(body, j->old_body))
		ow_stmt_int(st, 11, cr->now);
	if (pg) {
		ow_stmt_int(st, 12, (int64_t)p->files);
		ow_stmt_int(st, 13, (int64_t)p->rejected);
	}
	ow_stmt_text(st, 14, opt_text(p->detail));
	int rc = ow_stmt_step(st);
	if (rc == 1)
		*page_id = ow_col_int(st, 0);
	ow_stmt_run(st);
	return rc < 0 ? rc : 0;
}

static int add_reason(struct ow_crawl_page *p, const char *fmt, ...) OW_PRINTF(2, 3);
static int add_reason(struct ow_crawl_page *p, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	char **g = ow_array_more(p->reasons, p->rejected, sizeof *g);
	if (!g)
		return ow_err(OW_ENOMEM, "out of memory");
	p->reasons = g;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (!(g[p->rejected] = strdup(buf)))
		return ow_err(OW_ENOMEM, "out of memory");
	p->rejected++;
	return 0;
}

/* A legacy sdist name of this page's project (sympy-0.7.2-py3.2.tar.gz:
 * "sympy-" and then no PEP 440 version): pip passes over such a link without
 * a word, so it is counted with the skipped formats, and named (crawl -v),
 * never reported as a rejected link. */
static bool legacy_sdist(const struct ow_link *l, const char *project)
{
	size_t n = strlen(project);
	if (!l->is_sdist || strlen(l->filename) <= n)
		return false;
	for (size_t i = 0; i < n; i++) {
		char a = (char)tolower((unsigned char)l->filename[i]);
		if (a != project[i] && !(strchr("_.", a) && project[i] == '-'))
			return false;
	}
	return l->filename[n] == '-';
}

static int add_skip(struct ow_crawl_page *p, const struct ow_link *l, const char *why)
{
	char **g = ow_array_more(p->skips, p->nskips, sizeof *g);
	if (!g)
		return ow_err(OW_ENOMEM, "out of memory");
	p->skips = g;
	if (!(g[p->nskips] = ow_aprintf("%s: %s", l->filename, why)))
		return ow_err(OW_ENOMEM, "out of memory");
	p->nskips++;
	p->skipped++;
	return 0;
}

/* A link that is not a file of this page's project: skipped when it is a
 * legacy sdist name of it, rejected otherwise. */
static int refuse_link(struct ow_crawl_page *p, const struct ow_link *l, const char *why)
{
	if (legacy_sdist(l, p->project))
		return add_skip(p, l, why);
	return add_reason(p, "%s: %s", l->filename, why);
}

static void bind_link_attrs(ow_stmt *st, const struct ow_link *l, int first)
{
	/* FILE_SEEN: ?3 sha256 ?4 meta ?5 has_meta ?6 requires_python ?7 yanked
	 * ?8 reason ?9 upload_time; FILE_INSERT uses 11..17 for the same */
	int o = first;
	ow_stmt_text(st, o, opt_text(l->sha256));
	ow_stmt_text(st, o + 1, opt_text(l->meta_sha256));
	ow_stmt_int(st, o + 2, l->has_meta);
	ow_stmt_text(st, o + 3, l->requires_python);
	ow_stmt_int(st, o + 4, l->yanked);
	ow_stmt_text(st, o + 5, l->yanked_reason);
	ow_stmt_text(st, o + 6, l->upload_time);
}

static int insert_file(struct crawl *cr, struct page_job *j, const struct ow_link *l,
                       const struct ow_wheel_name *w, int64_t *id)
{
	char variant[64];
	ow_stmt *st = ow_db_stmt(ow_store_db(cr->s), OW_SQL_FILE_INSERT);
	if (!st)
		return OW_EDB;
	ow_variant_of_url(l->url, variant, sizeof variant);
	ow_stmt_text(st, 1, l->url);
	ow_stmt_text(st, 2, l->filename);
	ow_stmt_text(st, 3, w->name);
	ow_stmt_text(st, 4, w->version_text);
	ow_stmt_text(st, 5, opt_text(w->build));
	ow_stmt_text(st, 6, w->python);
	ow_stmt_text(st, 7, w->abi);
	ow_stmt_text(st, 8, w->platform);
	ow_stmt_text(st, 9, variant);
	ow_stmt_text(st, 10, j->index_url);
	bind_link_attrs(st, l, 11);
	ow_stmt_int(st, 18, cr->now);
	ow_stmt_text(st, 19, l->is_sdist ? "sdist" : "wheel");
	int rc = ow_stmt_run(st);
	/* a URL already recorded (another page lists it) inserts nothing */
	*id = !rc && ow_db_changes(ow_store_db(cr->s)) > 0 ? ow_db_last_rowid(ow_store_db(cr->s)) : 0;
	return rc;
}

/* An sdist's name and version as a wheel name with no tags: no target's
 * tag order admits it, so only a resolve asked to take sdists sees it. */
static int sdist_name(const struct ow_link *l, struct ow_wheel_name *w)
{
	memset(w, 0, sizeof *w);
	int rc = ow_name_normalize(l->name, strlen(l->name), w->name, sizeof w->name);
	if (rc < 0)
		return rc;
	if (strlen(l->version) >= sizeof w->version_text)
		return ow_err(OW_EPARSE, "version \"%.40s…\" too long", l->version);
	snprintf(w->version_text, sizeof w->version_text, "%s", l->version);
	return ow_pep440_parse(&w->version, l->version);
}

/* Record one link; *id gets its file row.  A link whose file name is not a
 * wheel or sdist of this project, or whose published hash changed, is
 * rejected. */
static int record_link(struct crawl *cr, struct page_job *j, const struct ow_link *l, int64_t *id)
{
	struct ow_crawl_page *p = j->page;
	struct ow_wheel_name w;
	*id = 0;
	if (l->is_sdist ? sdist_name(l, &w) : ow_wheel_name_parse(&w, l->filename))
		return refuse_link(p, l, ow_err_detail());
	if (strcmp(w.name, p->project)) {
		char *why = ow_aprintf("a file of project '%s' on the page of another project",
		                       w.name);
		int rc = why ? refuse_link(p, l, why) : ow_err(OW_ENOMEM, "out of memory");
		free(why);
		return rc;
	}
	/* a new file is inserted at once (one lookup of its URL, not two) */
	int rc = insert_file(cr, j, l, &w, id);
	if (rc || *id) {
		p->added += *id != 0;
		return rc;
	}
	ow_stmt *st = ow_db_stmt(ow_store_db(cr->s), OW_SQL_FILE_ID_BY_URL);
	if (!st)
		return OW_EDB;
	ow_stmt_text(st, 1, l->url);
	if ((rc = ow_stmt_step(st)) <= 0)
		return rc < 0 ? rc : ow_err(OW_EDB, "%s: its file row is gone", l->url);
	*id = ow_col_int(st, 0);
	if (!ow_col_is_null(st, 1) && *l->sha256 && strcmp(ow_col_text(st, 1), l->sha256)) {
		char was[OW_SHA256_HEX];
		snprintf(was, sizeof was, "%s", ow_col_text(st, 1));
		ow_stmt_run(st);
		*id = 0;
		return add_reason(p, "%s: the published sha256 changed (was %.12s…) — kept the old "
		                     "record; report it to the index",
		                  l->filename, was);
	}
	ow_stmt_run(st);
	if (!(st = ow_db_stmt(ow_store_db(cr->s), OW_SQL_FILE_SEEN)))
		return OW_EDB;
	ow_stmt_int(st, 1, *id);
	ow_stmt_int(st, 2, cr->now);
	bind_link_attrs(st, l, 3);
	return ow_stmt_run(st);
}

/* *added: 1 when the link is new, 0 when the page had it already. */
static int link_page_file(struct crawl *cr, int64_t page_id, int64_t file_id, int *added)
{
	ow_stmt *st = ow_db_stmt(ow_store_db(cr->s), OW_SQL_PAGE_FILES_ADD);
	if (!st)
		return OW_EDB;
	ow_stmt_int(st, 1, page_id);
	ow_stmt_int(st, 2, file_id);
	int rc = ow_stmt_run(st);
	if (added)
		*added = ow_db_changes(ow_store_db(cr->s)) > 0;
	return rc;
}

/* The files the page listed before (`old`) that no page lists now are gone. */
static int mark_gone(struct crawl *cr, const int64_t *old, size_t nold, size_t *gone)
{
	ow_db *db = ow_store_db(cr->s);
	int rc = 0;
	*gone = 0;
	for (size_t i = 0; !rc && i < nold; i++) {
		ow_stmt *st = ow_db_stmt(db, OW_SQL_FILE_MARK_GONE);
		if (!st)
			return OW_EDB;
		ow_stmt_int(st, 1, cr->now);
		ow_stmt_int(st, 2, old[i]);
		if (!(rc = ow_stmt_run(st)))
			*gone += (size_t)ow_db_changes(db);
	}
	return rc;
}

/* The ids of the files the page links now (before it is relinked). */
static int old_links(struct crawl *cr, int64_t page_id, int64_t **out, size_t *n)
{
	size_t cap = 0;
	int rc;
	*out = NULL;
	*n = 0;
	ow_stmt *st = ow_db_stmt(ow_store_db(cr->s), OW_SQL_PAGE_FILE_IDS);
	if (!st)
		return OW_EDB;
	ow_stmt_int(st, 1, page_id);
	while ((rc = ow_stmt_step(st)) == 1) {
		int64_t *g = ow_array_reserve(*out, &cap, *n + 1, sizeof *g);
		if (!g) {
			ow_stmt_run(st);
			return ow_err(OW_ENOMEM, "out of memory");
		}
		*out = g;
		g[(*n)++] = ow_col_int(st, 0);
	}
	return rc;
}

static int clear_links(struct crawl *cr, int64_t page_id)
{
	ow_stmt *st = ow_db_stmt(ow_store_db(cr->s), OW_SQL_PAGE_FILES_CLEAR);
	if (!st)
		return OW_EDB;
	ow_stmt_int(st, 1, page_id);
	return ow_stmt_run(st);
}

/* A page that loses many files at once is more likely cut short or
 * replaced than pruned: more than VANISH_MIN files and more than
 * VANISH_PCT % of what it listed before. */
#define VANISH_MIN 5
#define VANISH_PCT 10

static int too_many_vanished(const struct page_job *j, size_t vanished)
{
	return j->seen_before && vanished > VANISH_MIN && vanished * 100 > j->old_files * VANISH_PCT;
}

static int refuse_shrink(struct page_job *j)
{
	struct ow_crawl_page *p = j->page;
	return ow_err(OW_EINCOMPLETE,
	              "%s: %zu of the %zu files the page listed before are gone from it at once "
	              "(it now lists %zu; more than %d %% and more than %d) — not applied, the "
	              "stored page is kept; if the index really dropped them, re-run with --force "
	              "to accept", p->url, p->vanished, j->old_files, p->files, VANISH_PCT, VANISH_MIN);
}

/* Link the page's files; the links it had and still has are counted first
 * (before the old links are cleared) to know how many vanished.  A page
 * that links nothing yet (its first crawl) keeps none: its files are
 * linked once, without the count and the clearing (a cold resolve links
 * tens of thousands of files). */
static int relink(struct crawl *cr, struct page_job *j, int64_t page_id, const int64_t *ids,
                  size_t n, size_t nold)
{
	size_t kept = 0;
	int added = 0, rc = 0;
	if (!nold) {
		j->page->vanished = j->seen_before ? j->old_files : 0;
		for (size_t i = 0; !rc && i < n; i++)
			rc = link_page_file(cr, page_id, ids[i], NULL);
		return rc;
	}
	for (size_t i = 0; !rc && i < n; i++)
		if (!(rc = link_page_file(cr, page_id, ids[i], &added)))
			kept += !added;
	j->page->vanished = j->seen_before && j->old_files > kept ? j->old_files - kept : 0;
	if (rc || (rc = clear_links(cr, page_id)))
		return rc;
	for (size_t i = 0; !rc && i < n; i++)
		rc = link_page_file(cr, page_id, ids[i], NULL);
	return rc;
}

static int record_links(struct crawl *cr, struct page_job *j, const struct ow_page *pg,
                        int64_t page_id)
{
	struct ow_crawl_page *p = j->page;
	int64_t *ids = malloc((pg->nlinks + 1) * sizeof *ids);
	int rc = ids ? 0 : ow_err(OW_ENOMEM, "out of memory");
	p->skipped = pg->nskipped;
	for (size_t i = 0; !rc && i < pg->nrejected; i++)
		rc = add_reason(p, "%s", pg->rejected[i].reason);
	for (size_t i = 0; !rc && i < pg->nlinks; i++) {
		int64_t id;
		if (!(rc = record_link(cr, j, &pg->links[i], &id)) && id) {
			ids[p->files++] = id;
			p->sdists += pg->links[i].is_sdist;
		}
	}
	int64_t *old = NULL;
	size_t nold = 0;
	if (!rc)
		rc = old_links(cr, page_id, &old, &nold);
	if (!rc)
		rc = relink(cr, j, page_id, ids, p->files, nold);
	free(ids);
	if (!rc && too_many_vanished(j, p->vanished) && !cr->o->force)
		rc = refuse_shrink(j);
	else if (!rc)
		rc = mark_gone(cr, old, nold, &p->gone);
	free(old);
	return rc;
}

/* A body delimited only by the connection's close (HTTP/1.x without
 * Content-Length or chunked framing) cannot show it was cut short; such a
 * page is taken only when the document shows it is complete: HTML whose
 * last tag, after trailing comments (the <!--TIMESTAMP n--> of the PyTorch
 * pages) and white space, is </html>; or a PEP 691 JSON object, which its
 * parser refuses when cut anywhere before the closing brace. */
static int is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f';
}

static int json_object(const char *b, size_t n)
{
	size_t i = n >= 3 && !memcmp(b, "\xef\xbb\xbf", 3) ? 3 : 0;
	while (i < n && is_ws(b[i]))
		i++;
	return i < n && b[i] == '{';
}

static int html_complete(const char *b, size_t n)
{
	for (;;) {
		while (n && is_ws(b[n - 1]))
			n--;
		if (n < 3 || memcmp(b + n - 3, "-->", 3))
			break;
		const char *open = NULL;
		for (size_t i = n - 3; i >= 4 && !open; i--)
			if (!memcmp(b + i - 4, "<!--", 4))
				open = b + i - 4;
		if (!open)
			return 0;
		n = (size_t)(open - b);
	}
	return n >= 7 && !strncasecmp(b + n - 7, "</html>", 7);
}

static int check_complete(const struct page_job *j)
{
	if (!j->req.res.close_delimited || html_complete(j->body.data, j->body.len) ||
	    json_object(j->body.data, j->body.len))
		return 0;
	return ow_err(OW_EINCOMPLETE,
	              "%s: the server closed the connection after %zu bytes without a "
	              "Content-Length or chunked framing, and the page does not end with </html> "
	              "— it may be cut short, so nothing of it is stored; retry, or use another "
	              "mirror", j->page->url, j->body.len);
}

/* A page whose files all belong to one other project is that project's page
 * served at this URL (as a redirect to it would be): refused whole. */
static int check_project(const struct page_job *j, const struct ow_page *pg)
{
	char norm[128], other[128] = "";
	size_t own = 0, foreign = 0;
	for (size_t i = 0; i < pg->nlinks; i++) {
		const char *nm = pg->links[i].name;
		if (!nm || ow_name_normalize(nm, strlen(nm), norm, sizeof norm))
			continue;
		if (!strcmp(norm, j->page->project))
			own++;
		else if (foreign++ == 0)
			snprintf(other, sizeof other, "%s", norm);
	}
	if (own || !foreign)
		return 0;
	return ow_err(OW_EPOLICY,
	              "%s: all %zu files on the page belong to another project ('%s' first), none "
	              "to '%s' — the index serves another project's page at this URL; refused, "
	              "nothing of it is stored", j->page->url, foreign, other, j->page->project);
}

/* A 200: parse first (nothing of a refused page is stored), then the body
 * object, then every row in one transaction. */
/* Each page is one unit of work inside the crawl's one transaction
 * (ow_crawl): a page that fails leaves the others; the whole run commits
 * once, so a round of 90 pages waits for one journal sync, not 90. */
static int unit_begin(ow_db *db) { return ow_db_savepoint(db); }
static int unit_end(ow_db *db) { return ow_db_release(db); }
static void unit_undo(ow_db *db) { (void)ow_db_rollback_to(db); }

static int store_page(struct crawl *cr, struct page_job *j)
{
	struct ow_page *pg = NULL;
	char hex[OW_SHA256_HEX];
	int64_t page_id = 0;
	ow_db *db = ow_store_db(cr->s);
	int rc = check_complete(j);
	if (rc)
		return rc;
	rc = ow_page_parse(j->page->url, j->body.data ? j->body.data : "", j->body.len, NULL,
	                   cr->o->policy, &pg);
	if (rc)
		return ow_err_prefix(rc, "%s: ", j->page->url);
	if ((rc = check_project(j, pg)))
		goto out;
	if ((rc = ow_store_put_buf(cr->s, j->body.data, j->body.len, NULL, "page", hex)))
		goto out;
	j->page->outcome = !j->seen_before ? OW_PAGE_NEW
	                   : strcmp(hex, j->old_body) ? OW_PAGE_CHANGED : OW_PAGE_SAME;
	if ((rc = unit_begin(db)))
		goto out;
	if ((rc = upsert_page(cr, j, "ok", hex, NULL, &page_id)) ||
	    (rc = record_links(cr, j, pg, page_id)) ||
	    (rc = upsert_page(cr, j, "ok", hex, pg, &page_id)) || (rc = unit_end(db)))
		unit_undo(db);
out:
	ow_page_free(pg);
	return rc;
}

static int touch_unchanged(struct crawl *cr, struct page_job *j)
{
	int64_t page_id = 0;
	ow_db *db = ow_store_db(cr->s);
	ow_stmt *st;
	int rc = unit_begin(db);
	if (rc)
		return rc;
	if ((rc = upsert_page(cr, j, "ok", NULL, NULL, &page_id)))
		goto fail;
	st = ow_db_stmt(db, OW_SQL_PAGE_FILES_TOUCH);
	if (!st) {
		rc = OW_EDB;
		goto fail;
	}
	ow_stmt_int(st, 1, page_id);
	ow_stmt_int(st, 2, cr->now);
	if (!(rc = ow_stmt_run(st)) && !(rc = unit_end(db)))
		return 0;
fail:
	unit_undo(db);
	return rc;
}

/* The page's detail, replacing any it had; out of memory leaves none. */
static void set_detail(struct ow_crawl_page *p, const char *fmt, ...) OW_PRINTF(2, 3);

static void set_detail(struct ow_crawl_page *p, const char *fmt, ...)
{
	va_list ap;
	free(p->detail);
	va_start(ap, fmt);
	if (vasprintf(&p->detail, fmt, ap) < 0)
		p->detail = NULL;
	va_end(ap);
}

static void record_missing(struct crawl *cr, struct page_job *j)
{
	int64_t id;
	if (j->req.res.status)
		set_detail(j->page, "no such project here (HTTP %ld)", j->req.res.status);
	else
		set_detail(j->page, "no such project here (no %.900s)", j->fetch_url); /* resolve reads it back into 1 kB */
	if (unit_begin(ow_store_db(cr->s)) == 0 &&
	    upsert_page(cr, j, "missing", NULL, NULL, &id) == 0)
		unit_end(ow_store_db(cr->s));
	else
		unit_undo(ow_store_db(cr->s));
}

static void fail_page(struct page_job *j, int rc, const char *detail)
{
	j->page->outcome = OW_PAGE_FAILED;
	j->page->rc = rc;
	set_detail(j->page, "%s", detail);
}

/* A project page that redirects must stay the same project's page. */
static int check_redirect(struct page_job *j, const struct ow_http_req *req)
{
	char tail[160];
	const char *eff = req->res.effective_url;
	if (!req->res.redirects || !*eff)
		return 0;
	snprintf(tail, sizeof tail, "/%s/", j->page->project);
	size_t n = strlen(eff), k = strlen(tail);
	if (n >= k && !strcmp(eff + n - k, tail))
		return 0;
	return ow_err(OW_EPOLICY, "%s: redirected to %.300s, which is not the page of project '%s' "
	                          "— refused; the index is misconfigured or hostile",
	              j->page->url, eff, j->page->project);
}

/* An unchanged page (304) that held rejected links is parsed again from its
 * stored body: the link rule may take today what it refused when the page
 * was read (an older offwheel refused every "../" link).  0 when it was;
 * else the page is left as it is stored. */
static int reread_stored(struct crawl *cr, struct page_job *j)
{
	char *buf = NULL;
	size_t len = 0;
	int rc = ow_store_load(cr->s, j->old_body, PAGE_CAP, &buf, &len);
	if (rc)
		return rc; /* gone or damaged: the stored links stand */
	rc = ow_http_membuf_write(&j->body, buf, len);
	free(buf);
	if (rc)
		return rc;
	if ((rc = store_page(cr, j)))
		fail_page(j, rc, ow_err_detail());
	return 0;
}

static void on_page_done(void *ud, struct ow_http_req *req)
{
	struct page_job *j = ud;
	struct crawl *cr = j->cr;
	int rc = req->res.rc;
	j->page->status = req->res.status;
	if (rc == OW_ENOENT) {
		j->page->outcome = OW_PAGE_MISSING;
		record_missing(cr, j);
	} else if (rc) {
		fail_page(j, rc, req->res.detail);
	} else if ((rc = check_redirect(j, req))) {
		fail_page(j, rc, ow_err_detail());
	} else if (req->res.not_modified && j->old_rejected && !reread_stored(cr, j)) {
		/* read again from the store, as a 200 with the same body */
	} else if (req->res.not_modified) {
		j->page->outcome = OW_PAGE_UNCHANGED;
		j->page->files = j->old_files;
		if ((rc = touch_unchanged(cr, j)))
			fail_page(j, rc, ow_err_detail());
	} else if ((rc = store_page(cr, j))) {
		fail_page(j, rc, ow_err_detail());
	}
	ow_http_membuf_dispose(&j->body);
	ow_progress_item(j->page->url, 0); /* its transfer said "done" */
}

/* --- setting up the jobs ---------------------------------------------------- */

static int page_url(char *buf, size_t n, const char *index, const char *variant,
                    const char *project)
{
	int w = *variant ? snprintf(buf, n, "%s/%s/%s/", index, variant, project)
	                 : snprintf(buf, n, "%s/%s/", index, project);
	if (w < 0 || (size_t)w >= n)
		return ow_err(OW_ERANGE, "%s: index URL too long", index);
	return 0;
}

/* The engine hands `ud` to on_data/on_restart; route them to the body. */
static int job_data(void *ud, const void *buf, size_t len)
{
	return ow_http_membuf_write(&((struct page_job *)ud)->body, buf, len);
}

static int job_restart(void *ud) { return ow_http_membuf_restart(&((struct page_job *)ud)->body); }

static int prepare_job(struct crawl *cr, struct page_job *j, struct ow_crawl_page *p,
                       const struct ow_crawl_ref *ref)
{
	int rc;
	const char *variant = ref->variant, *project = ref->project;
	j->cr = cr;
	j->page = p;
	snprintf(j->index_url, sizeof j->index_url, "%s", ref->index_url);
	if (ow_fmt(p->variant, sizeof p->variant, "%s", variant)) /* a cut one would be stored */
		return ow_err(OW_EINVAL, "variant '%.60s...': %zu bytes, longer than the %d an index "
		              "folder name may be (cu128, cpu, rocm6.4)", variant, strlen(variant),
		              OW_VARIANT_MAX - 1);
	if ((rc = ow_name_normalize(project, strlen(project), p->project, sizeof p->project)))
		return ow_err_prefix(rc, "project '%s': ", project);
	if ((rc = page_url(p->url, sizeof p->url, ref->index_url, variant, p->project)) ||
	    (rc = load_previous(cr, j)))
		return rc;
	j->body.cap = PAGE_CAP;
	struct ow_http_req *r = &j->req;
	snprintf(j->fetch_url, sizeof j->fetch_url, "%s%s", p->url,
	         !strncmp(p->url, "file:", 5) ? "index.html" : "");
	r->url = j->fetch_url;
	r->what = p->url;
	r->on_data = job_data;
	r->on_restart = job_restart;
	r->on_done = on_page_done;
	r->ud = j;
	r->max_size = PAGE_CAP;
	/* PEP 691: an index that can answers in JSON, others send their HTML
	 * (download.pytorch.org's static pages); pagelinks reads either */
	r->accept = "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, "
	            "text/html;q=0.1";
	r->flags = !strncmp(p->url, "file:", 5) ? OW_HTTP_ALLOW_FILE : 0;
	if (!strncmp(p->url, "http:", 5))
		r->flags |= OW_HTTP_ALLOW_HTTP; /* the index URL passed the trusted-host check */
	if (j->seen_before && !cr->o->force) {
		r->if_none_match = opt_text(j->etag);
		r->if_modified_since = opt_text(j->last_modified);
	}
	return 0;
}

static int check_index(const struct ow_crawl_opts *o, const char *index_url)
{
	if (!index_url || !*index_url)
		return ow_err(OW_EINVAL, "no index URL");
	if (ow_url_check_page(o->policy, index_url))
		return ow_err_prefix(OW_EPOLICY, "index %s: ", index_url);
	return 0;
}

/* The pages of a crawl: o->refs, or index_url x variants x projects. */
static int crawl_refs(const struct ow_crawl_opts *o, struct ow_crawl_ref **out, size_t *n)
{
	*n = o->refs ? o->nrefs : o->nvariants * o->nprojects;
	*out = calloc(*n ? *n : 1, sizeof **out);
	if (!*out)
		return ow_err(OW_ENOMEM, "out of memory");
	for (size_t i = 0; o->refs && i < *n; i++)
		(*out)[i] = o->refs[i];
	for (size_t v = 0; !o->refs && v < o->nvariants; v++)
		for (size_t p = 0; p < o->nprojects; p++)
			(*out)[v * o->nprojects + p] =
			    (struct ow_crawl_ref){o->index_url, o->variants[v], o->projects[p]};
	for (size_t i = 0; i < *n; i++) {
		int rc = i && !strcmp((*out)[i].index_url, (*out)[i - 1].index_url)
		             ? 0
		             : check_index(o, (*out)[i].index_url);
		if (rc) {
			free(*out);
			return rc;
		}
	}
	return !*n && !o->refs ? check_index(o, o->index_url) : 0;
}

/* --- find-links sources (docs/find-links.md) -------------------------------- */

struct fl_src {
	const char *root;      /* as the refs name it (the options own it) */
	char *fetch_url;       /* what is read: the root, or the root with a '/' */
	char *base;            /* what its links are relative to (after redirects) */
	struct ow_http_req req; /* http(s) sources: the one request */
	struct ow_http_membuf body;
	int rc;
	char *detail; /* rc: why it could not be read */
};

static bool is_find_links(const struct ow_crawl_opts *o, const char *root)
{
	for (size_t i = 0; i < o->nfind_links; i++)
		if (!strcmp(o->find_links[i], root))
			return true;
	return false;
}

static void fl_fail(struct fl_src *f, int rc, const char *detail)
{
	f->rc = rc;
	free(f->detail);
	f->detail = ow_aprintf("find-links source %s: %s", f->fetch_url, detail);
}

static int fl_data(void *ud, const void *buf, size_t len)
{
	return ow_http_membuf_write(&((struct fl_src *)ud)->body, buf, len);
}

static int fl_restart(void *ud) { return ow_http_membuf_restart(&((struct fl_src *)ud)->body); }

static void fl_done(void *ud, struct ow_http_req *req)
{
	struct fl_src *f = ud;
	char why[1200];
	const char *eff = req->res.effective_url;
	if (req->res.rc == OW_ENOENT) {
		snprintf(why, sizeof why, "not found (HTTP %ld); give a page or directory that links "
		                          "the wheels", req->res.status);
		fl_fail(f, OW_EINCOMPLETE, why);
	} else if (req->res.rc)
		fl_fail(f, req->res.rc, req->res.detail);
	else if (req->res.close_delimited && !html_complete(f->body.data, f->body.len))
		fl_fail(f, OW_EINCOMPLETE, "the server closed the connection without a Content-Length "
		                           "or chunked framing and the page does not end with </html> "
		                           "— it may be cut short; retry");
	else if (!(f->base = strdup(*eff ? eff : f->fetch_url)))
		fl_fail(f, OW_ENOMEM, "out of memory");
	ow_progress_item(f->fetch_url, 0);
}

/* Read a local source now; set up the request of a remote one. */
static int fl_open(struct crawl *cr, struct fl_src *f)
{
	char *page = NULL;
	size_t len = 0;
	f->body.cap = PAGE_CAP;
	int rc = ow_find_links_fetch_url(f->root, &f->fetch_url);
	if (rc || strncmp(f->root, "file:", 5)) {
		f->req = (struct ow_http_req){.url = f->fetch_url, .what = f->fetch_url,
		                              .on_data = fl_data, .on_restart = fl_restart,
		                              .on_done = fl_done, .ud = f, .max_size = PAGE_CAP,
		                              .accept = "text/html"};
		f->req.flags = !strncmp(f->root, "http:", 5) ? OW_HTTP_ALLOW_HTTP : 0;
		return rc;
	}
	rc = ow_find_links_local(f->root, PAGE_CAP, &page, &len, &f->base);
	if (rc == OW_ENOMEM)
		return rc;
	if (rc)
		fl_fail(f, rc, ow_err_detail());
	else if ((rc = ow_http_membuf_write(&f->body, page, len)))
		fl_fail(f, rc, ow_err_detail());
	free(page);
	return rc == OW_ENOMEM ? rc : 0;
}

/* One source per find-links root the jobs name; each job points at its. */
static int fl_setup(struct crawl *cr, struct page_job *jobs, size_t n)
{
	int rc = 0;
	cr->fl = calloc(cr->o->nfind_links + 1, sizeof *cr->fl);
	if (!cr->fl)
		return ow_err(OW_ENOMEM, "out of memory");
	for (size_t i = 0; !rc && i < n; i++) {
		if (!is_find_links(cr->o, jobs[i].index_url))
			continue;
		size_t k = 0;
		while (k < cr->nfl && strcmp(cr->fl[k].root, jobs[i].index_url))
			k++;
		if (k == cr->nfl) {
			for (size_t r = 0; r < cr->o->nfind_links; r++)
				if (!strcmp(cr->o->find_links[r], jobs[i].index_url))
					cr->fl[k].root = cr->o->find_links[r];
			cr->nfl++;
			rc = fl_open(cr, &cr->fl[k]);
		}
		jobs[i].fl = &cr->fl[k];
	}
	return rc;
}

static void fl_dispose(struct crawl *cr)
{
	for (size_t i = 0; i < cr->nfl; i++) {
		free(cr->fl[i].fetch_url);
		free(cr->fl[i].base);
		free(cr->fl[i].detail);
		ow_http_membuf_dispose(&cr->fl[i].body);
	}
	free(cr->fl);
}

static int fl_missing(struct crawl *cr, struct page_job *j, const char *why)
{
	int64_t id;
	ow_db *db = ow_store_db(cr->s);
	j->page->outcome = OW_PAGE_MISSING;
	set_detail(j->page, "%s", why);
	int rc = unit_begin(db);
	if (rc)
		return rc;
	if ((rc = upsert_page(cr, j, "missing", NULL, NULL, &id)) || (rc = unit_end(db)))
		unit_undo(db);
	return rc;
}

/* The page {root}/{project}/ of a source: the files of its listing that are
 * that project's (the listing's refused links and skipped ones are told
 * on the first page only: `whole`). */
static int fl_store_page(struct crawl *cr, struct page_job *j, const struct ow_page *pg,
                         const char *hex, bool whole)
{
	struct ow_crawl_page *p = j->page;
	struct ow_page sub = {.links = malloc((pg->nlinks + 1) * sizeof *sub.links)};
	char norm[128];
	int64_t page_id = 0;
	ow_db *db = ow_store_db(cr->s);
	if (!sub.links)
		return ow_err(OW_ENOMEM, "out of memory");
	for (size_t i = 0; i < pg->nlinks; i++)
		if (!ow_name_normalize(pg->links[i].name, strlen(pg->links[i].name), norm, sizeof norm) &&
		    !strcmp(norm, p->project))
			sub.links[sub.nlinks++] = pg->links[i]; /* borrowed: pg frees them */
	if (whole) {
		sub.rejected = pg->rejected, sub.nrejected = pg->nrejected;
		sub.nskipped = pg->nskipped;
	}
	int rc = 0;
	if (*p->variant || !sub.nlinks) {
		char *why = ow_aprintf("no file of %s in the find-links source %s%s", p->project,
		                       j->fl->base, *p->variant ? " (it has no variant folders)" : "");
		rc = fl_missing(cr, j, why ? why : "no file of the project in the find-links source");
		free(why);
	} else if (!(rc = unit_begin(db))) {
		p->outcome = !j->seen_before ? OW_PAGE_NEW
		             : strcmp(hex, j->old_body) ? OW_PAGE_CHANGED : OW_PAGE_SAME;
		if ((rc = upsert_page(cr, j, "ok", hex, NULL, &page_id)) ||
		    (rc = record_links(cr, j, &sub, page_id)) ||
		    (rc = upsert_page(cr, j, "ok", hex, &sub, &page_id)) || (rc = unit_end(db)))
			unit_undo(db);
	}
	free(sub.links);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_names(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* The projects the listing has files of, normalized, sorted, each once. */
static int fl_projects(const struct ow_page *pg, char ***out, size_t *n)
{
	char norm[128];
	size_t k = 0;
	char **v = calloc(pg->nlinks + 1, sizeof *v);
	if (!v)
		return ow_err(OW_ENOMEM, "out of memory");
	for (size_t i = 0; i < pg->nlinks; i++) {
		if (ow_name_normalize(pg->links[i].name, strlen(pg->links[i].name), norm, sizeof norm))
			continue;
		if (!(v[k] = strdup(norm))) {
			free_names(v, k);
			return ow_err(OW_ENOMEM, "out of memory");
		}
		k++;
	}
	qsort(v, k, sizeof *v, cmp_str);
	*n = 0;
	for (size_t i = 0; i < k; i++)
		if (*n && !strcmp(v[*n - 1], v[i]))
			free(v[i]);
		else
			v[(*n)++] = v[i];
	*out = v;
	return 0;
}

/* The projects of the listing nobody asked for are recorded too: the
 * resolver asks for them next, and the listing is read once. */
static int fl_others(struct crawl *cr, struct fl_src *f, struct page_job *jobs, size_t n,
                     const struct ow_page *pg, const char *hex)
{
	char **names = NULL;
	size_t nn = 0;
	int rc = fl_projects(pg, &names, &nn);
	for (size_t i = 0; !rc && i < nn; i++) {
		bool asked = false;
		for (size_t k = 0; k < n && !asked; k++)
			asked = jobs[k].fl == f && !strcmp(jobs[k].page->project, names[i]);
		if (asked)
			continue;
		struct page_job tj = {0};
		struct ow_crawl_page tp = {0};
		const struct ow_crawl_ref ref = {f->root, "", names[i]};
		if (!(rc = prepare_job(cr, &tj, &tp, &ref)))
			tj.fl = f;
		if (!rc && (rc = fl_store_page(cr, &tj, pg, hex, false)) && rc != OW_ENOMEM)
			rc = 0; /* only asked pages report; the resolver asks this one again */
		for (size_t r = 0; r < tp.rejected; r++)
			free(tp.reasons[r]);
		free(tp.reasons);
		free(tp.detail);
	}
	free_names(names, nn);
	return rc;
}

/* Every page of one source, from its listing parsed once. */
static int fl_store_src(struct crawl *cr, struct fl_src *f, struct page_job *jobs, size_t n)
{
	struct ow_page *pg = NULL;
	char hex[OW_SHA256_HEX];
	bool first = true;
	int rc = ow_page_parse_find_links(f->base, f->body.data ? f->body.data : "", f->body.len,
	                                  NULL, cr->o->policy, &pg);
	if (!rc)
		rc = ow_store_put_buf(cr->s, f->body.data ? f->body.data : "", f->body.len, NULL,
		                      "page", hex);
	if (rc) {
		ow_page_free(pg);
		fl_fail(f, rc, ow_err_detail());
		return rc == OW_ENOMEM ? rc : 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (jobs[i].fl != f)
			continue;
		if ((rc = fl_store_page(cr, &jobs[i], pg, hex, first)) == OW_ENOMEM)
			break;
		if (rc)
			fail_page(&jobs[i], rc, ow_err_detail());
		first = first && rc;
		rc = 0;
	}
	if (!rc)
		rc = fl_others(cr, f, jobs, n, pg, hex);
	ow_page_free(pg);
	return rc;
}

/* After the engine's run: the pages of every find-links source. */
static int fl_store_all(struct crawl *cr, struct page_job *jobs, size_t n)
{
	int rc = 0;
	for (size_t k = 0; !rc && k < cr->nfl; k++)
		if (!cr->fl[k].rc)
			rc = fl_store_src(cr, &cr->fl[k], jobs, n);
	for (size_t i = 0; !rc && i < n; i++)
		if (jobs[i].fl && jobs[i].fl->rc)
			fail_page(&jobs[i], jobs[i].fl->rc, jobs[i].fl->detail ? jobs[i].fl->detail
			                                                          : "out of memory");
	return rc;
}

/* Every hop of every transfer, redirects included, passes the link policy. */
static int allow_hop(void *ud, const char *url)
{
	return ow_url_check_page(ud, url) != 0;
}

static int run_jobs(struct crawl *cr, struct page_job *jobs, size_t n)
{
	ow_http *h;
	struct ow_http_opts ho;
	if (cr->o->http)
		ho = *cr->o->http;
	else
		ow_http_opts_default(&ho);
	ho.allow_url = allow_hop;
	ho.allow_ud = (void *)(uintptr_t)cr->o->policy;
	ow_db *db = ow_store_db(cr->s);
	bool mine = !ow_db_in_tx(db); /* else the caller's transaction holds the pages */
	int rc = ow_http_new(&h, &ho);
	if (!rc && mine)
		rc = ow_db_begin(db);
	for (size_t i = 0; !rc && i < n; i++)
		rc = jobs[i].fl ? 0 : ow_http_add(h, &jobs[i].req);
	for (size_t i = 0; !rc && i < cr->nfl; i++)
		rc = cr->fl[i].req.url ? ow_http_add(h, &cr->fl[i].req) : 0;
	if (!rc)
		ow_http_run(h); /* each page's outcome is recorded by on_page_done */
	ow_http_free(h);
	if (!rc && !cr->read_only)
		rc = fl_store_all(cr, jobs, n);
	if (mine && ow_db_in_tx(db)) {
		int c = ow_db_commit(db);
		if (c) {
			ow_db_rollback(db);
			rc = rc ? rc : c;
		}
	}
	return rc;
}

int ow_crawl(ow_store *s, const struct ow_crawl_opts *o, struct ow_crawl_report *out)
{
	struct crawl cr = {.s = s, .o = o, .now = (int64_t)time(NULL)};
	struct ow_crawl_ref *refs;
	size_t n;
	memset(out, 0, sizeof *out);
	int rc = crawl_refs(o, &refs, &n);
	if (rc)
		return rc;
	struct page_job *jobs = calloc(n ? n : 1, sizeof *jobs);
	out->pages = calloc(n ? n : 1, sizeof *out->pages);
	if (!jobs || !out->pages) {
		free(jobs);
		free(refs);
		return ow_err(OW_ENOMEM, "out of memory");
	}
	out->npages = n;
	for (size_t i = 0; !rc && i < n; i++)
		rc = prepare_job(&cr, &jobs[i], &out->pages[i], &refs[i]);
	if (!rc)
		rc = fl_setup(&cr, jobs, n);
	if (!rc)
		rc = run_jobs(&cr, jobs, n);
	fl_dispose(&cr);
	for (size_t i = 0; i < n; i++)
		ow_http_membuf_dispose(&jobs[i].body);
	free(jobs);
	free(refs);
	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++)
		out->failed += out->pages[i].outcome == OW_PAGE_FAILED;
	if (ow_interrupted()) /* the pages done are stored */
		return ow_err(OW_EINTERRUPTED, "interrupted: %zu of %zu pages crawled", n - out->failed,
		              n);
	return out->failed ? ow_err(OW_EINCOMPLETE, "%zu of %zu pages could not be crawled",
	                            out->failed, n)
	                   : 0;
}

/* The stored status of a page: 1 when recorded missing (403/404). */
static int page_missing(ow_store *s, const char *url)
{
	ow_stmt *st = ow_db_stmt(ow_store_db(s), OW_SQL_PAGE_GET);
	if (!st)
		return OW_EDB;
	ow_stmt_text(st, 1, url);
	int rc = ow_stmt_step(st);
	if (rc == 1) {
		rc = !strcmp(ow_col_text(st, 4), "missing");
		ow_stmt_run(st);
	}
	return rc;
}

/* Read a root as a find-links page: how many distribution files it links. */
static int root_links(const struct ow_crawl_opts *o, struct crawl *cr, size_t *nfiles)
{
	struct ow_page *pg = NULL;
	struct page_job none = {0};
	cr->fl = calloc(1, sizeof *cr->fl);
	if (!cr->fl)
		return ow_err(OW_ENOMEM, "out of memory");
	cr->nfl = 1;
	cr->fl->root = o->index_url;
	int rc = fl_open(cr, cr->fl);
	if (!rc && cr->fl->req.url)
		rc = run_jobs(cr, &none, 0);
	if (!rc && !cr->fl->rc)
		rc = ow_page_parse_find_links(cr->fl->base, cr->fl->body.data ? cr->fl->body.data : "",
		                              cr->fl->body.len, NULL, o->policy, &pg);
	*nfiles = pg ? pg->nlinks : 0;
	ow_page_free(pg);
	fl_dispose(cr);
	return rc == OW_ENOMEM ? rc : 0;
}

int ow_crawl_find_links_hint(ow_store *s, const struct ow_crawl_opts *o, const char *project,
                             size_t *nfiles)
{
	char url[1024], norm[128];
	struct crawl cr = {.s = s, .o = o, .now = (int64_t)time(NULL), .read_only = true};
	*nfiles = 0;
	if (is_find_links(o, o->index_url) ||
	    ow_name_normalize(project, strlen(project), norm, sizeof norm) ||
	    page_url(url, sizeof url, o->index_url, "", norm))
		return 0;
	int rc = page_missing(s, url);
	if (rc == 1 && (rc = root_links(o, &cr, nfiles)) == 0)
		rc = *nfiles > 0;
	return rc;
}

void ow_crawl_report_refusals(const struct ow_crawl_report *r, struct ow_link_refusals *acc)
{
	for (size_t i = 0; i < r->npages; i++)
		for (size_t k = 0; k < r->pages[i].rejected; k++)
			ow_link_refusals_add(acc, r->pages[i].url, r->pages[i].reasons[k]);
}

void ow_crawl_report_dispose(struct ow_crawl_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->npages; i++) {
		for (size_t k = 0; k < r->pages[i].rejected; k++)
			free(r->pages[i].reasons[k]);
		free(r->pages[i].reasons);
		for (size_t k = 0; k < r->pages[i].nskips; k++)
			free(r->pages[i].skips[k]);
		free(r->pages[i].skips);
		free(r->pages[i].detail);
	}
	free(r->pages);
	memset(r, 0, sizeof *r);
}
