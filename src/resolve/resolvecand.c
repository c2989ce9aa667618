/* resolvecand.c - candidate wheels per project from the crawled index, the
 * per-target view of them, and the metadata cache with its fetch rounds. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "offwheel/error.h"
#include "event.h"
#include "fmt.h"
#include "offwheel/fetch.h"
#include "resolveint.h"
#include "tags.h"
#include "wheelmeta.h"
#include "store.h"

static char *dup_col(ow_stmt *st, int i)
{
	return ow_col_is_null(st, i) ? NULL : strdup(ow_col_text(st, i));
}

static void cand_free(struct rs_cand *c)
{
	free(c->filename);
	free(c->url);
	free(c->version_text);
	free(c->sha256);
	free(c->object_sha256);
	free(c->requires_python);
}

static void list_clear(struct rs_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		cand_free(&l->c[i]);
	free(l->c);
	for (size_t i = 0; i < 3 * l->ntags; i++)
		free(l->tags[i]);
	free(l->tags);
	free(l->why);
	l->why = NULL;
	l->c = NULL;
	l->tags = NULL;
	l->n = l->ntags = 0;
}

/* Intern the tag triple of a row: files of one project share few triples,
 * so the priority is computed once per triple and target. */
static int intern_tag(struct rs_list *l, ow_stmt *st, size_t *idx)
{
	const char *py = ow_col_text(st, 3), *abi = ow_col_text(st, 4), *pl = ow_col_text(st, 5);
	for (size_t i = 0; i < l->ntags; i++)
		if (!strcmp(l->tags[3 * i], py) && !strcmp(l->tags[3 * i + 1], abi) &&
		    !strcmp(l->tags[3 * i + 2], pl)) {
			*idx = i;
			return 0;
		}
	char **g = ow_array_grow(l->tags, 3 * l->ntags, 3, sizeof *g);
	if (!g)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	l->tags = g;
	char **t = &g[3 * l->ntags];
	t[0] = strdup(py);
	t[1] = strdup(abi);
	t[2] = strdup(pl);
	if (!t[0] || !t[1] || !t[2]) {
		free(t[0]), free(t[1]), free(t[2]);
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	}
	*idx = l->ntags++;
	return 0;
}

static int add_row(struct rs_list *l, ow_stmt *st, size_t *cap)
{
	struct rs_cand *g = ow_array_reserve(l->c, cap, l->n + 1, sizeof *g);
	if (!g)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	l->c = g;
	struct rs_cand *c = &l->c[l->n];
	memset(c, 0, sizeof *c);
	if (ow_pep440_parse(&c->v, ow_col_text(st, 2)) < 0)
		return 0; /* the crawl checked it; skip rather than fail the run */
	c->id = ow_col_int(st, 0);
	c->filename = dup_col(st, 1);
	c->version_text = dup_col(st, 2);
	c->url = dup_col(st, 6);
	c->sha256 = dup_col(st, 7);
	c->object_sha256 = dup_col(st, 8);
	c->requires_python = dup_col(st, 9);
	c->yanked = ow_col_int(st, 10) != 0;
	c->has_metadata = ow_col_int(st, 11) != 0;
	rs_build_parse(ow_col_is_null(st, 12) ? NULL : ow_col_text(st, 12), &c->build);
	c->uploaded = rs_upload_day(ow_col_is_null(st, 13) ? NULL : ow_col_text(st, 13));
	c->sdist = !strcmp(ow_col_text(st, 14), "sdist");
	c->date = rs_version_date(&c->v);
	l->n++;
	return intern_tag(l, st, &c->tag);
}

static void page_url(const char *root, const char *variant, const char *project, char *url,
                     size_t n)
{
	if (*variant)
		snprintf(url, n, "%s/%s/%s/", root, variant, project);
	else
		snprintf(url, n, "%s/%s/", root, project);
}

/* Where an index page stands; a function that answers one answers a
 * negative OW_E* code (below all of these) on error. */
enum pg_state {
	PG_MISSING = -1,    /* the crawl found no page (`why` says, "HTTP 404") */
	PG_NOT_CRAWLED = 0, /* not crawled (page_state: a crawl is queued) */
	PG_STORED = 1,
	PG_FAILED = 2,      /* tried this run and still not there */
	PG_ABSENT = 3,      /* offline: never crawled, so not in the workspace */
};

/* Room for why a page is missing: the crawl's detail (ow_crawl_page.detail)
 * as it stored it. */
#define RS_WHY_MAX 1024

/* PG_STORED (*fetched: when), PG_MISSING or PG_NOT_CRAWLED; < PG_MISSING error. */
static int page_status(struct rs_ctx *x, const char *url, char *why, size_t n, int64_t *fetched)
{
	ow_stmt *st = ow_db_stmt(ow_store_db(x->s), OW_SQL_RS_PAGE_STATUS);
	if (!st)
		return OW_EDB;
	ow_stmt_text(st, 1, url);
	int rc = ow_stmt_step(st);
	if (rc <= 0)
		return rc < 0 ? rc : PG_NOT_CRAWLED;
	*fetched = ow_col_int(st, 2);
	if (strcmp(ow_col_text(st, 0), "missing"))
		return PG_STORED;
	/* the crawl wrote "no such project here (HTTP 404)" */
	const char *e = ow_col_is_null(st, 1) ? "" : ow_col_text(st, 1), *h = strstr(e, "(HTTP ");
	if (h)
		rc = ow_fmt(why, n, "%.*s", (int)strcspn(h + 1, ")"), h + 1);
	else
		rc = ow_fmt(why, n, "%s", *e ? e : "no such project here");
	return rc < 0 ? ow_err_prefix(rc, "resolve: %s: why it is missing: ", url) : PG_MISSING;
}

static int read_rows(struct rs_list *l, ow_stmt *st)
{
	size_t cap = 0;
	int rc;
	while ((rc = ow_stmt_step(st)) == 1)
		if ((rc = add_row(l, st, &cap)) < 0)
			return rc;
	return rc;
}

static int add_once(char ***v, size_t *n, const char *s, bool *added)
{
	*added = false;
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*v)[i], s))
			return 0;
	char **g = ow_array_more(*v, *n, sizeof *g);
	if (!g || !(g[*n] = strdup(s))) {
		if (g)
			*v = g;
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	}
	*v = g;
	(*n)++;
	*added = true;
	return 0;
}

/* A stored page read by the run: kept once, with its latest fetch time. */
static int note_used(struct rs_ctx *x, const char *url, int64_t fetched)
{
	for (size_t i = 0; i < x->nused; i++)
		if (!strcmp(x->used[i].url, url)) {
			if (fetched > x->used[i].fetched_at)
				x->used[i].fetched_at = fetched;
			return 0;
		}
	struct rs_page_use *g = ow_array_more(x->used, x->nused, sizeof *g);
	if (!g)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	x->used = g;
	if (!(g[x->nused].url = strdup(url)))
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	g[x->nused++].fetched_at = fetched;
	return 0;
}

int64_t rs_pages_oldest(const struct rs_ctx *x)
{
	int64_t oldest = 0;
	for (size_t i = 0; i < x->nused; i++)
		if (!oldest || x->used[i].fetched_at < oldest)
			oldest = x->used[i].fetched_at;
	return oldest;
}

/* What revalidate decided for a stored page, beside a negative error. */
enum reval {
	REVAL_READ = 0, /* read it as it is (fresh, or tried this run: a failed
	                 * revalidation keeps the stored page) */
	REVAL_QUEUED,   /* its conditional GET is queued now */
};

/* A stored page at least max_age old is revalidated once per run (a
 * conditional GET). */
static int revalidate(struct rs_ctx *x, const char *root, const char *variant,
                      const char *project, const char *url, int64_t fetched)
{
	if (!x->o->revalidate || x->o->offline || x->now - fetched < x->o->max_age)
		return REVAL_READ;
	int rc = rs_need_crawl(x, root, variant, project);
	if (rc != 0)
		return rc < 0 ? rc : REVAL_READ;
	bool added;
	if ((rc = add_once(&x->stale, &x->nstale, url, &added)) < 0)
		return rc;
	if (added)
		ow_log(OW_LOG_INFO, "%s: fetched %lld s ago, revalidating", url,
		       (long long)(x->now - fetched));
	return REVAL_QUEUED;
}

/* A project's page: {root}/{variant}/{project}/ ("" variant: none). */
struct page_ref {
	const char *root, *variant, *project;
};

/* Where a page stands (an enum pg_state, PG_NOT_CRAWLED with its crawl
 * queued), < PG_MISSING error; url gets its URL, why what is wrong with it. */
static int page_state(struct rs_ctx *x, const struct page_ref *pr, char *url, size_t urln,
                      char *why, size_t whyn)
{
	const char *root = pr->root, *variant = pr->variant, *project = pr->project;
	int64_t fetched = 0;
	page_url(root, variant, project, url, urln);
	int ps = page_status(x, url, why, whyn, &fetched), rc;
	if (ps == PG_STORED && (rc = revalidate(x, root, variant, project, url, fetched)) != 0)
		return rc < 0 ? rc : PG_NOT_CRAWLED;
	if (ps == PG_STORED && (rc = note_used(x, url, fetched)) < 0)
		return rc;
	if (ps != PG_NOT_CRAWLED)
		return ps;
	if (x->o->offline)
		return PG_ABSENT;
	if ((ps = rs_need_crawl(x, root, variant, project)) == 1)
		return PG_FAILED;
	return ps < 0 ? ps : PG_NOT_CRAWLED;
}

/* Offline, a page the workspace does not have: why, in the words the
 * target's error uses. */
static int absent_why(struct rs_list *l, const char *url)
{
	free(l->why);
	l->absent = true;
	if (asprintf(&l->why, "no page in the workspace for %s", url) < 0) {
		l->why = NULL;
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	}
	return 0;
}

/* What a list is, loaded from a page in state ps. */
static enum rs_list_state list_state(int ps)
{
	return ps == PG_STORED        ? RS_LIST_LOADED
	       : ps == PG_NOT_CRAWLED ? RS_LIST_NOT_CRAWLED
	                              : RS_LIST_MISSING;
}

/* pip's --find-links sources beside the index, one pool of candidates:
 * each source's page {source}/{project}/ (a source has no variant
 * folders; --no-index's index is its first source, skipped here).  Their
 * combined state: PG_NOT_CRAWLED while one is being crawled (all are
 * queued at once), PG_FAILED or PG_ABSENT for one that could not be read
 * (its URL in `url`), PG_STORED when one lists the project, else
 * PG_MISSING; < PG_MISSING error. */
static int fl_look(struct rs_ctx *x, const char *project, char *url, size_t urln)
{
	const struct ow_resolve_opts *o = x->o;
	int out = PG_MISSING;
	for (size_t i = 0; i < o->nfind_links; i++) {
		char u[2048], why[RS_WHY_MAX];
		if (!strcmp(o->find_links[i], o->index_url))
			continue;
		const struct page_ref pr = {o->find_links[i], "", project};
		int ps = page_state(x, &pr, u, sizeof u, why, sizeof why);
		if (ps < PG_MISSING)
			return ps;
		if (ps == PG_NOT_CRAWLED || out == PG_NOT_CRAWLED)
			out = PG_NOT_CRAWLED;
		else if (ps == PG_FAILED || ps == PG_ABSENT || out == PG_FAILED || out == PG_ABSENT) {
			if (ps == PG_FAILED || ps == PG_ABSENT)
				snprintf(url, urln, "%s", u);
			out = ps == PG_FAILED || ps == PG_ABSENT ? ps : out;
		} else if (ps == PG_STORED)
			out = PG_STORED;
	}
	return out;
}

/* The files of the project on every find-links source that lists it. */
static int fl_rows(struct rs_ctx *x, struct rs_list *l)
{
	const struct ow_resolve_opts *o = x->o;
	int rc = 0;
	for (size_t i = 0; !rc && i < o->nfind_links; i++) {
		char url[2048], why[RS_WHY_MAX];
		int64_t fetched;
		if (!strcmp(o->find_links[i], o->index_url))
			continue;
		page_url(o->find_links[i], "", l->project, url, sizeof url);
		if ((rc = page_status(x, url, why, sizeof why, &fetched)) != PG_STORED) {
			rc = rc < PG_MISSING ? rc : 0;
			continue;
		}
		ow_stmt *st = ow_db_stmt(ow_store_db(x->s), OW_SQL_RS_PAGE_FILES);
		if (!st)
			return OW_EDB;
		ow_stmt_text(st, 1, url);
		ow_stmt_text(st, 2, l->project);
		rc = read_rows(l, st);
	}
	return rc < 0 ? rc : 0;
}

/* The index's page said `ps` of the list; the find-links sources join:
 * the combined state, l->why set for a source that could not be read.
 * A set member of a channel root with variant folders is pooled only when
 * its folder's page exists. */
static int fl_join(struct rs_ctx *x, struct rs_list *l, int ps)
{
	char url[2048] = "";
	if (!x->o->nfind_links || ps < PG_MISSING || ps == PG_FAILED || ps == PG_ABSENT)
		return ps; /* an index that cannot be read is never passed over */
	/* a variant folder the index lacks stays missing: the sources have no
	 * folders, and a channel root with none of them is read as one root */
	if (ps == PG_MISSING && !l->dep && !x->o->flat)
		return ps;
	int fs = fl_look(x, l->project, url, sizeof url);
	if (fs < PG_MISSING || fs == PG_MISSING || ps == PG_NOT_CRAWLED)
		return fs < PG_MISSING ? fs : ps;
	if (fs == PG_NOT_CRAWLED || fs == PG_FAILED || fs == PG_ABSENT) {
		free(l->why);
		l->why = NULL;
		if (fs == PG_FAILED && asprintf(&l->why, "the find-links source's page %s could not "
		                                         "be read", url) < 0)
			return ow_err(OW_ENOMEM, "resolve: out of memory");
		if (fs == PG_ABSENT)
			return absent_why(l, url) < 0 ? OW_ENOMEM : PG_ABSENT;
		l->unreachable = fs == PG_FAILED;
		return fs;
	}
	return PG_STORED; /* fs stored: the index's own state (stored or missing) joins */
}

/* The list settled by the find-links sources (*done): still being
 * crawled or unreadable there, or loaded from them alone (the index has
 * no page); else (!*done) the index's page is read, the sources' rows
 * after it. */
static int fl_settle(struct rs_ctx *x, struct rs_list *l, int ps, bool *done)
{
	int js = fl_join(x, l, ps);
	*done = js != ps && js >= PG_MISSING;
	if (js < PG_MISSING || !*done)
		return js < PG_MISSING ? js : 0;
	if (js != PG_STORED) {
		l->state = list_state(js);
		return 0;
	}
	free(l->why);
	l->why = NULL;
	l->state = RS_LIST_LOADED;
	return fl_rows(x, l);
}

/* Why the page at url could not be had: its own error (a transfer that
 * failed, or a page that came but could not be read), else with `any` the
 * run's first, else that it could not be fetched. */
static int failed_why(struct rs_ctx *x, struct rs_list *l, const char *url, bool any)
{
	const struct ow_resolve_io *io = x->o->io;
	const char *err = io && io->page_error ? io->page_error(io->ud, url) : NULL;
	if (!err && any) /* this page's own error, else the run's first */
		err = io && io->fetch_error ? io->fetch_error(io->ud) : "";
	if ((err && *err ? asprintf(&l->why, "%s", err)
	                 : asprintf(&l->why, "%s could not be fetched", url)) < 0)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	return 0;
}

/* A set member: {index}/{variant}/{project}/ (and files of the channel
 * root it lists or that a root page listed); on a flat root {index}/{project}/,
 * its files filtered by the root's variant folder when it is one. */
static int load_member(struct rs_ctx *x, struct rs_list *l)
{
	char url[2048], why[RS_WHY_MAX];
	const struct page_ref pr = {x->o->index_url, l->variant, l->project};
	int ps = page_state(x, &pr, url, sizeof url, why, sizeof why), rc;
	bool done;
	if (ps < PG_MISSING)
		return ps;
	if ((rc = fl_settle(x, l, ps, &done)) < 0 || done)
		return rc;
	l->unreachable = ps == PG_FAILED;
	l->state = list_state(ps);
	free(l->why);
	l->why = NULL;
	if (l->unreachable && (rc = failed_why(x, l, url, true)) < 0)
		return rc;
	if (ps == PG_MISSING && !l->unreachable &&
	    asprintf(&l->why, "no page at %s (%s)", url, *why ? why : "missing") < 0)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	if (ps == PG_ABSENT)
		return absent_why(l, url);
	if (ps != PG_STORED)
		return 0;
	const char *variant = x->o->flat ? x->o->variants[0] : l->variant;
	/* one root that names no variant: every file its pages list */
	bool any = x->o->flat && !*variant;
	ow_stmt *st = ow_db_stmt(ow_store_db(x->s), any ? OW_SQL_RS_FILES_ANY : OW_SQL_RS_FILES);
	if (!st)
		return OW_EDB;
	ow_stmt_text(st, 1, x->o->index_url);
	ow_stmt_text(st, 2, l->project);
	if (!any)
		ow_stmt_text(st, 3, variant);
	rc = read_rows(l, st);
	return rc < 0 ? rc : fl_rows(x, l);
}

/* Where a dependency's page is, as pip with --index-url {index}/{variant}
 * looks: {index}/{variant}/{project}/; only when that page does not exist
 * (404), the channel root's {index}/{project}/; only when neither exists,
 * each --extra-index-url's {extra}/{project}/ in turn.  The first page that
 * exists is the project's only source (first-index: an extra index never
 * adds versions to, or shadows, a project an earlier root has).  A project
 * rs_index_only() names is never asked of an extra index.  Missing
 * everywhere, or a page that could not be fetched: the reason in l->why. */
struct dep_look {
	char url[2048], why[RS_WHY_MAX];
	int ps;
};

/* index_only: the project an extra index was not asked for, named. */
static int dep_missing_text(struct rs_list *l, const struct dep_look *look, size_t n,
                            const char *index_only)
{
	size_t len = 0, cap = index_only ? strlen(index_only) + 64 : 0;
	for (size_t i = 0; i < n; i++)
		cap += strlen(look[i].url) + strlen(look[i].why) + 16;
	char *t = malloc(cap + 32);
	if (!t)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	len = (size_t)snprintf(t, cap + 32, "no page at ");
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(t + len, cap + 32 - len, "%s%s (%s)", i ? " nor at " : "",
		                        look[i].url, *look[i].why ? look[i].why : "missing");
	if (index_only)
		snprintf(t + len, cap + 32 - len, "; %s is only taken from --index-url, never from an extra index",
		         index_only);
	l->why = t;
	return 0;
}

static bool same_name(const char *a, const char *b)
{
	char na[OW_NAME_MAX], nb[OW_NAME_MAX];
	return ow_name_normalize(a, strlen(a), na, sizeof na) == 0 &&
	       ow_name_normalize(b, strlen(b), nb, sizeof nb) == 0 && !strcmp(na, nb);
}

bool rs_index_only(const struct ow_resolve_opts *o, const char *project)
{
	static const char *const three[] = {"torch", "torchvision", "torchaudio"};
	for (size_t i = 0; i < sizeof three / sizeof *three; i++)
		if (same_name(project, three[i]))
			return true;
	for (size_t i = 0; o->projects && i < o->nprojects; i++)
		if (same_name(project, o->projects[i]))
			return true;
	return false;
}

/* The page of look `from` is being crawled: queue the index's other look
 * (the variant folder's page and the channel root's) in the same round, so
 * that a project the variant folder lacks costs one round trip, not two
 * (pip's order is kept: the answers are read in that order next round).
 * An extra index is still asked only once the index has no page: it never
 * learns of a project the index has.  Pages already stored are left
 * alone. */
static int look_ahead(struct rs_ctx *x, const struct rs_list *l, size_t from, size_t maxn)
{
	const struct ow_resolve_opts *o = x->o;
	if (maxn > 2)
		maxn = 2;
	for (size_t i = from; i < maxn; i++) {
		const char *root = i < 2 ? o->index_url : o->extra_index_urls[i - 2];
		const char *variant = i == 0 ? l->variant : "";
		char url[2048], why[RS_WHY_MAX];
		int64_t fetched;
		if (i == 1 && !*l->variant)
			continue;
		page_url(root, variant, l->project, url, sizeof url);
		int ps = page_status(x, url, why, sizeof why, &fetched);
		if (ps == PG_NOT_CRAWLED && (ps = rs_need_crawl(x, root, variant, l->project)) < 0)
			return ps;
	}
	return 0;
}

static int load_dep(struct rs_ctx *x, struct rs_list *l)
{
	const struct ow_resolve_opts *o = x->o;
	struct dep_look look[2 + 8];
	bool index_only = rs_index_only(o, l->project);
	size_t nextra = index_only ? 0 : o->nextra_index_urls < 8 ? o->nextra_index_urls : 8;
	size_t n = 0, maxn = 2 + nextra;
	int ps = PG_MISSING, rc = 0;
	for (size_t i = 0; i < maxn && ps == PG_MISSING; i++) {
		const char *root = i < 2 ? o->index_url : o->extra_index_urls[i - 2];
		const char *variant = i == 0 ? l->variant : "";
		if (i == 1 && !*l->variant)
			continue; /* {index}/{project}/ was the first look */
		struct dep_look *lk = &look[n++];
		lk->why[0] = '\0';
		const struct page_ref pr = {root, variant, l->project};
		ps = lk->ps = page_state(x, &pr, lk->url, sizeof lk->url, lk->why, sizeof lk->why);
	}
	if (ps < PG_MISSING)
		return ps;
	if (ps == PG_NOT_CRAWLED && (rc = look_ahead(x, l, n, maxn)) < 0)
		return rc;
	bool done;
	if ((rc = fl_settle(x, l, ps, &done)) < 0 || done)
		return rc;
	l->state = list_state(ps);
	free(l->why);
	l->why = NULL;
	if (ps == PG_FAILED)
		rc = failed_why(x, l, look[n - 1].url, false);
	else if (ps == PG_MISSING)
		rc = dep_missing_text(l, look, n, index_only && o->nextra_index_urls ? l->project : NULL);
	else if (ps == PG_ABSENT)
		rc = absent_why(l, look[n - 1].url);
	if (rc < 0 || ps != PG_STORED)
		return rc;
	if (n > (*l->variant ? 2u : 1u))
		ow_log(OW_LOG_INFO, "%s: taken from the extra index %s (no earlier index has it)",
		       l->project, look[n - 1].url);
	ow_stmt *st = ow_db_stmt(ow_store_db(x->s), OW_SQL_RS_PAGE_FILES);
	if (!st)
		return OW_EDB;
	ow_stmt_text(st, 1, look[n - 1].url);
	ow_stmt_text(st, 2, l->project);
	rc = read_rows(l, st);
	return rc < 0 ? rc : fl_rows(x, l);
}

int rs_list_get(struct rs_ctx *x, const char *project, const char *variant, bool dep,
                struct rs_list **out)
{
	for (size_t i = 0; i < x->nlists; i++)
		if (!strcmp(x->lists[i].project, project) && !strcmp(x->lists[i].variant, variant) &&
		    x->lists[i].dep == dep) {
			*out = &x->lists[i];
			return 0;
		}
	struct rs_list *g = ow_array_more(x->lists, x->nlists, sizeof *g);
	if (!g)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	x->lists = g;
	char *pr = strdup(project), *va = strdup(variant);
	if (!pr || !va) {
		free(pr), free(va);
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	}
	struct rs_list *l = &g[x->nlists++];
	memset(l, 0, sizeof *l);
	l->project = pr;
	l->variant = va;
	l->dep = dep;
	*out = l;
	return dep ? load_dep(x, l) : load_member(x, l);
}

/* ---- the view of a list for one target ------------------------------------ */

bool rs_python_ok(const struct ow_target *t, const char *requires_python)
{
	struct ow_specset set;
	struct ow_version v;
	char buf[sizeof "-2147483648.-2147483648.-2147483648"];
	if (!requires_python || !*requires_python)
		return true;
	if (ow_spec_parse(&set, requires_python) < 0)
		return true; /* pip ignores an unparsable Requires-Python too */
	snprintf(buf, sizeof buf, "%d.%d.%d", t->py_major, t->py_minor, t->py_patch);
	return ow_pep440_parse(&v, buf) < 0 || ow_spec_contains(&set, &v, true);
}

struct ranked {
	struct rs_cand *c;
	int prio;
};

void rs_build_parse(const char *tag, struct rs_build *b)
{
	*b = (struct rs_build){.num = -1};
	if (!tag || !*tag)
		return;
	size_t n = strspn(tag, "0123456789");
	b->num = 0;
	for (size_t i = 0; i < n && b->num < 100000000; i++)
		b->num = b->num * 10 + (tag[i] - '0');
	snprintf(b->rest, sizeof b->rest, "%s", tag + n);
}

int rs_build_cmp(const struct rs_build *a, const struct rs_build *b)
{
	if (a->num != b->num)
		return a->num < b->num ? -1 : 1;
	int c = strcmp(a->rest, b->rest);
	return c < 0 ? -1 : c > 0;
}

/* Newest version first; within one version the best tag, then the highest
 * build tag (pip and uv: a file with a build tag beats one without). */
static int by_version_then_prio(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	int c = ow_pep440_cmp(&y->c->v, &x->c->v);
	if (c)
		return c;
	if (x->prio != y->prio)
		return x->prio - y->prio;
	return rs_build_cmp(&y->c->build, &x->c->build);
}

/* An sdist ranks below every wheel of its version: pip's and uv's order
 * when source builds are allowed (the newest version, a wheel where it has
 * one). */
#define RS_SDIST_PRIO 1000000

/* The priority of candidate c for the target: -1 when it cannot be used. */
static int cand_prio(const struct rs_ctx *x, const struct rs_list *l, const struct rs_cand *c,
                     const int *prio)
{
	if (c->sdist)
		return l->dep && x->o->allow_sdist ? RS_SDIST_PRIO : -1;
	return prio[c->tag];
}

int rs_view(struct rs_ctx *x, const struct rs_list *l, const struct ow_target *t,
            struct rs_cand ***out, size_t *n)
{
	int *prio = malloc((l->ntags + 1) * sizeof *prio);
	struct ranked *r = malloc((l->n + 1) * sizeof *r);
	ow_tagorder *order = ow_tagorder_new(t);
	*out = malloc((l->n + 1) * sizeof **out);
	if (!prio || !r || !*out || !order) {
		free(prio), free(r), free(*out), ow_tagorder_free(order);
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	}
	for (size_t i = 0; i < l->ntags; i++)
		prio[i] = ow_tagorder_priority(order, l->tags[3 * i], l->tags[3 * i + 1],
		                               l->tags[3 * i + 2]);
	ow_tagorder_free(order);
	size_t k = 0;
	for (size_t i = 0; i < l->n; i++) {
		int pr = cand_prio(x, l, &l->c[i], prio);
		if (pr >= 0 && rs_python_ok(t, l->c[i].requires_python))
			r[k++] = (struct ranked){&l->c[i], pr};
	}
	qsort(r, k, sizeof *r, by_version_then_prio);
	*n = 0;
	for (size_t i = 0; i < k; i++)
		if (!*n || ow_pep440_cmp(&(*out)[*n - 1]->v, &r[i].c->v) != 0)
			(*out)[(*n)++] = r[i].c;
	free(prio);
	free(r);
	return 0;
}

/* ---- metadata cache ---------------------------------------------------------- */

static struct rs_meta *meta_slot(struct rs_ctx *x, int64_t id)
{
	size_t m = x->meta_cap - 1, i = (size_t)((uint64_t)id * 0x9E3779B97F4A7C15u >> 20) & m;
	while (x->meta[i].id && x->meta[i].id != id)
		i = (i + 1) & m;
	return &x->meta[i];
}

static int meta_grow(struct rs_ctx *x)
{
	if (x->meta_cap && (x->meta_count + 1) * 2 < x->meta_cap)
		return 0;
	struct rs_meta *old = x->meta;
	size_t oc = x->meta_cap;
	x->meta_cap = oc ? oc * 2 : 1024;
	if (!(x->meta = calloc(x->meta_cap, sizeof *x->meta)))
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	for (size_t i = 0; i < oc; i++)
		if (old[i].id)
			*meta_slot(x, old[i].id) = old[i];
	free(old);
	return 0;
}

/* Metadata is the file's only if it names the file's project and version
 * (PEP 503 names, PEP 440 equality): a .metadata that matches the page's
 * hash but says "evil-torch 9.9.9" is not the metadata of torch 2.0.0. */
/* An sdist's file name as a wheel name: "name-version.tar.gz". */
static int sdist_name_parse(struct ow_wheel_name *w, const char *fn)
{
	size_t n = strlen(fn), stem = n - (n > 7 && !strcmp(fn + n - 7, ".tar.gz") ? 7 : 4);
	const char *dash = memrchr(fn, '-', stem);
	memset(w, 0, sizeof *w);
	if (!dash || (size_t)(fn + stem - dash - 1) >= sizeof w->version_text)
		return ow_err(OW_EPARSE, "\"%s\" is not an sdist file name", fn);
	size_t vl = (size_t)(fn + stem - dash - 1);
	memcpy(w->version_text, dash + 1, vl);
	w->version_text[vl] = '\0';
	return ow_name_normalize(fn, (size_t)(dash - fn), w->name, sizeof w->name);
}

static int meta_matches(const struct rs_cand *c, const struct ow_metadata *md)
{
	struct ow_wheel_name w;
	struct ow_version v;
	char name[OW_NAME_MAX];
	int rc = c->sdist ? sdist_name_parse(&w, c->filename) : ow_wheel_name_parse(&w, c->filename);
	if (rc < 0)
		return rc;
	int bad_name = ow_name_normalize(md->name, strlen(md->name), name, sizeof name) < 0 ||
	               strcmp(name, w.name);
	int bad_version = ow_pep440_parse(&v, md->version) < 0 || ow_pep440_cmp(&v, &c->v);
	if (!bad_name && !bad_version)
		return 0;
	return ow_err(OW_EVERIFY,
	              "its metadata says Name: %.80s, Version: %.60s, but the file name says %s "
	              "%s — metadata that contradicts its file name is not used; report it to the "
	              "index",
	              md->name, md->version, w.name, w.version_text);
}

/* Take the fields resolve uses from md (freed either way). */
static int meta_take(struct rs_meta *m, const struct rs_cand *c, struct ow_metadata *md)
{
	int rc;
	if (md->n_requires_dist > OW_METADATA_MAX_REQUIRES) /* stored before the cap */
		rc = ow_err(OW_ETOOBIG,
		            "%zu Requires-Dist lines, more than the %u allowed — the metadata is "
		            "refused; report it to the index",
		            md->n_requires_dist, OW_METADATA_MAX_REQUIRES);
	else
		rc = meta_matches(c, md);
	if (rc < 0) {
		ow_metadata_free(md);
		return rc;
	}
	m->name = md->name;
	m->requires_python = md->requires_python;
	m->reqs = md->requires_dist;
	m->nreqs = md->n_requires_dist;
	md->name = md->requires_python = NULL;
	md->requires_dist = NULL;
	md->n_requires_dist = 0;
	ow_metadata_free(md);
	m->state = RS_META_PARSED;
	return 0;
}

static int meta_fill(struct rs_meta *m, const struct rs_cand *c, const char *text, size_t len)
{
	struct ow_metadata *md;
	int rc = ow_metadata_parse(text, len, &md);
	return rc < 0 ? rc : meta_take(m, c, md);
}

static int queue_need(struct rs_ctx *x, int64_t id)
{
	for (size_t i = 0; i < x->nneed; i++)
		if (x->need[i] == id)
			return 0;
	int64_t *g = ow_array_reserve(x->need, &x->need_cap, x->nneed + 1, sizeof *g);
	if (!g)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	x->need = g;
	x->need[x->nneed++] = id;
	return 0;
}

/* Keep why (the current error detail) for the messages; state -1. */
static int meta_refused(struct rs_meta *m)
{
	free(m->why);
	m->why = strdup(ow_err_detail());
	/* analyzer: m is x->meta[k] (meta_slot), whose why is freed with the context */
	return -1;
}

/* An sdist's build requirements, kept beside its PKG-INFO (fm, or read
 * from the database when fm is NULL): moved into m. */
static int meta_build(struct rs_ctx *x, const struct rs_cand *c, struct rs_meta *m,
                      struct ow_file_meta *fm)
{
	struct ow_file_meta got = {0};
	int rc = fm ? 1 : ow_file_meta_get(x->s, c->id, &got);
	if (!fm)
		fm = &got;
	if (rc == 1 && fm->build_requires) {
		m->build = fm->build_requires, m->nbuild = fm->nbuild_requires;
		m->deps_dynamic = fm->deps_dynamic;
		fm->build_requires = NULL, fm->nbuild_requires = 0;
	} else if (rc >= 0) {
		rc = ow_err(OW_ENOENT, "%s: its build requirements are not kept in the workspace "
		                       "(read-only?) — re-run", c->filename);
	}
	ow_file_meta_clear(&got);
	return rc < 0 ? rc : 0;
}

/* Read what the store has; -1 state when it has nothing after a round. */
static int meta_load(struct rs_ctx *x, const struct rs_cand *c, struct rs_meta *m, bool fetched)
{
	char *text = NULL;
	size_t len = 0;
	const struct ow_resolve_io *io = x->o->io;
	struct ow_file_meta fm;
	/* parsed before (any run): no object is read */
	int rc = ow_file_meta_get(x->s, c->id, &fm);
	if (rc == 1) {
		x->metadata_cached++;
		rc = meta_take(m, c, fm.md);
		fm.md = NULL;
		if (rc == 0 && c->sdist)
			rc = meta_build(x, c, m, &fm);
		ow_file_meta_clear(&fm);
		if (rc < 0) {
			ow_log(OW_LOG_WARN, "%s: unusable metadata: %s", c->filename, ow_err_detail());
			return meta_refused(m);
		}
		return 1;
	}
	if (rc < 0) {
		ow_log(OW_LOG_WARN, "%s: stored metadata unreadable: %s", c->filename, ow_err_detail());
		return meta_refused(m);
	}
	rc = io->file_metadata(io->ud, x->s, c->id, &text, &len);
	if (rc == 0) {
		x->metadata_read++;
		rc = meta_fill(m, c, text, len);
		free(text);
		if (rc == 0 && c->sdist)
			rc = meta_build(x, c, m, NULL);
		if (rc < 0) {
			ow_log(OW_LOG_WARN, "%s: unusable metadata: %s", c->filename, ow_err_detail());
			return meta_refused(m);
		}
		return 1;
	}
	if (rc != OW_ENOENT || fetched) {
		if (!ow_interrupted()) /* a cancelled read is no finding */
			ow_log(OW_LOG_WARN, "%s: no metadata: %s", c->filename, ow_err_detail());
		return meta_refused(m);
	}
	return 0;
}

/* Offline, metadata the workspace does not have stays unknown: noted as
 * the target's gap, never queued, never taken as "none". */
static const struct rs_meta *meta_absent(struct rs_ctx *x, const struct rs_cand *c)
{
	rs_note_gap(x, "%.*s %s: metadata never read (%s)", (int)strcspn(c->filename, "-"),
	            c->filename, c->version_text, c->filename);
	return NULL;
}

const struct rs_meta *rs_meta_get(struct rs_ctx *x, const struct rs_cand *c)
{
	if (meta_grow(x) < 0)
		return NULL;
	struct rs_meta *m = meta_slot(x, c->id);
	if (m->id == c->id && m->state)
		return m;
	if (m->id == c->id && x->o->offline)
		return meta_absent(x, c);
	if (m->id == c->id && m->queued == x->round)
		return NULL; /* queued for this round's fetch */
	bool asked = m->id == c->id; /* an earlier round fetched it */
	int st = meta_load(x, c, m, asked);
	if (!m->id)
		x->meta_count++;
	m->id = c->id;
	if (st == 0 && x->o->offline)
		return meta_absent(x, c);
	if (st == 0) {
		m->queued = x->round;
		queue_need(x, c->id);
		return NULL;
	}
	m->state = st;
	return m;
}

const struct rs_meta *rs_meta_peek(struct rs_ctx *x, const struct rs_cand *c)
{
	if (meta_grow(x) < 0)
		return NULL;
	struct rs_meta *m = meta_slot(x, c->id);
	if (m->id == c->id && (m->state || m->queued == x->round || x->o->offline))
		return m->state ? m : NULL;
	/* queued by an earlier round, so fetched since: read what it gave */
	bool fetched = m->id == c->id;
	struct rs_meta tmp = {.id = c->id};
	int st = meta_load(x, c, &tmp, fetched);
	if (st == 0)
		return NULL;
	tmp.state = st;
	*m = tmp;
	x->meta_count += !fetched;
	return m;
}

int rs_need_crawl(struct rs_ctx *x, const char *root, const char *variant, const char *project)
{
	for (size_t i = 0; i < x->ncrawl; i++)
		if (!strcmp(x->crawl_r[i], root) && !strcmp(x->crawl_v[i], variant) &&
		    !strcmp(x->crawl_p[i], project))
			return i < x->crawl_done;
	const char **gr = ow_array_more(x->crawl_r, x->ncrawl, sizeof *gr);
	if (gr)
		x->crawl_r = gr;
	char **gv = ow_array_more(x->crawl_v, x->ncrawl, sizeof *gv);
	if (gv)
		x->crawl_v = gv;
	char **gp = ow_array_more(x->crawl_p, x->ncrawl, sizeof *gp);
	if (gp)
		x->crawl_p = gp;
	if (!gr || !gv || !gp)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	char *v = strdup(variant), *p = strdup(project);
	if (!v || !p) {
		free(v), free(p);
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	}
	x->crawl_r[x->ncrawl] = root;
	x->crawl_v[x->ncrawl] = v;
	x->crawl_p[x->ncrawl++] = p;
	/* analyzer: v and p are x->crawl_v and x->crawl_p[x->ncrawl - 1], freed with the context */
	return 0;
}

/* Lists that waited for a crawl are dropped and loaded again on next use. */
static void forget_uncrawled(struct rs_ctx *x)
{
	size_t k = 0;
	for (size_t i = 0; i < x->nlists; i++) {
		if (x->lists[i].state == RS_LIST_NOT_CRAWLED) {
			list_clear(&x->lists[i]);
			free(x->lists[i].project);
			free(x->lists[i].variant);
			continue;
		}
		x->lists[k++] = x->lists[i];
	}
	x->nlists = k;
}

/* The queued pages, of every root, in one io->crawl (one engine run). */
static int run_crawls(struct rs_ctx *x)
{
	const struct ow_resolve_io *io = x->o->io;
	size_t from = x->crawl_done, n = x->ncrawl - from;
	struct ow_crawl_ref *refs = n ? malloc(n * sizeof *refs) : NULL;
	int rc = !n || refs ? 0 : ow_err(OW_ENOMEM, "resolve: out of memory");
	for (size_t i = 0; rc == 0 && i < n; i++)
		refs[i] = (struct ow_crawl_ref){x->crawl_r[from + i], x->crawl_v[from + i],
		                                x->crawl_p[from + i]};
	if (rc == 0 && n)
		rc = io->crawl(io->ud, x->s, refs, n);
	free(refs);
	x->crawl_done = x->ncrawl;
	forget_uncrawled(x);
	return rc;
}

int rs_round(struct rs_ctx *x)
{
	const struct ow_resolve_io *io = x->o->io;
	int rc = run_crawls(x);
	if (rc < 0 && rc != OW_EINCOMPLETE)
		return rc;
	if (x->nneed && (rc = io->fetch_metadata(io->ud, x->s, x->need, x->nneed)) < 0 &&
	    rc != OW_EINCOMPLETE && rc != OW_EVERIFY)
		return rc;
	x->nneed = 0;
	x->round++;
	return 0;
}

int rs_note_gap(struct rs_ctx *x, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (x->gap.p && strstr(x->gap.p, buf))
		return 0;
	if (x->ngap++ < 3)
		ow_str_printf(&x->gap, "%s%s", x->gap.n ? "; " : "", buf);
	else if (x->ngap == 4)
		ow_str_puts(&x->gap, "; …");
	return x->gap.err;
}

void rs_ctx_dispose(struct rs_ctx *x)
{
	for (size_t i = 0; i < x->nlists; i++) {
		list_clear(&x->lists[i]);
		free(x->lists[i].project);
		free(x->lists[i].variant);
	}
	free(x->lists);
	for (size_t i = 0; i < x->meta_cap; i++) {
		struct rs_meta *m = &x->meta[i];
		for (size_t j = 0; j < m->nreqs; j++)
			free(m->reqs[j]);
		free(m->reqs);
		free(m->name);
		free(m->requires_python);
		free(m->why);
		for (size_t j = 0; j < m->nbuild; j++)
			free(m->build[j]);
		free(m->build);
	}
	free(x->meta);
	free(x->need);
	for (size_t i = 0; i < x->ncrawl; i++)
		free(x->crawl_v[i]), free(x->crawl_p[i]);
	free(x->crawl_r);
	free(x->crawl_v);
	free(x->crawl_p);
	for (size_t i = 0; i < x->nused; i++)
		free(x->used[i].url);
	free(x->used);
	for (size_t i = 0; i < x->nstale; i++)
		free(x->stale[i]);
	free(x->stale);
	ow_str_dispose(&x->gap);
}

bool rs_index_stored(struct rs_ctx *x)
{
	ow_stmt *st = ow_db_stmt(ow_store_db(x->s), OW_SQL_RS_INDEX_HAS_PAGES);
	if (!st)
		return false;
	ow_stmt_text(st, 1, x->o->index_url);
	bool has = ow_stmt_step(st) == 1 && ow_col_int(st, 0);
	ow_stmt_run(st); /* ends the SELECT */
	return has;
}
