/* resolveio.c - resolve's pages and metadata through crawl.h and fetch.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "offwheel/crawl.h"
#include "offwheel/error.h"
#include "event.h"
#include "offwheel/fetch.h"
#include "offwheel/resolve.h"
#include "sdist.h"
#include "store.h"

/* A page that could not be fetched: the first one for fetch_error, each one
 * for page_error.  Returns rc, or OW_ENOMEM. */
static int keep_page_error(struct ow_resolve_netio *c, const char *url, const char *detail,
                           int rc)
{
	if (!c->crawl_error && !(c->crawl_error = strdup(detail)))
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	struct ow_resolve_page_error *g = ow_array_more(c->page_errors, c->npage_errors, sizeof *g);
	if (!g)
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	c->page_errors = g;
	g[c->npage_errors] = (struct ow_resolve_page_error){strdup(url), strdup(detail)};
	if (!g[c->npage_errors].url || !g[c->npage_errors].detail) {
		free(g[c->npage_errors].url), free(g[c->npage_errors].detail);
		return ow_err(OW_ENOMEM, "resolve: out of memory");
	}
	c->npage_errors++;
	return rc;
}

/* The options of the small transfers (pages, .metadata files, range
 * reads): http_small's, with the run's pool of connections, made at the
 * first round, so that every later round reuses them (one TLS handshake per
 * host for the whole resolve, not one per host and round). */
static int small_opts(struct ow_resolve_netio *c, struct ow_http_opts *out)
{
	const struct ow_http_opts *base = c->http_small ? c->http_small : c->http;
	if (base)
		*out = *base;
	else
		ow_http_opts_default(out);
	int rc = c->pool ? 0 : ow_http_pool_new(&c->pool);
	out->pool = c->pool;
	return rc;
}

static int net_crawl(void *ud, ow_store *s, const struct ow_crawl_ref *pages, size_t n)
{
	struct ow_resolve_netio *c = ud;
	struct ow_http_opts ho;
	if (!c->net || !n)
		return 0;
	int rc = small_opts(c, &ho);
	if (rc)
		return rc;
	struct ow_crawl_opts o = {.refs = pages, .nrefs = n, .policy = c->policy, .http = &ho,
	                          .find_links = c->find_links, .nfind_links = c->nfind_links};
	struct ow_crawl_report r;
	rc = ow_crawl(s, &o, &r);
	if (rc == 0 || rc == OW_EINCOMPLETE || rc == OW_EINTERRUPTED) { /* r is filled */
		for (size_t p = 0; p < r.npages && rc != OW_ENOMEM; p++)
			if (r.pages[p].outcome == OW_PAGE_FAILED)
				rc = keep_page_error(c, r.pages[p].url, r.pages[p].detail, rc);
		/* a login missing or refused is no network trouble, and no later
		 * round fixes it: the resolve stops with the server's word */
		if (rc != OW_ENOMEM && ow_crawl_auth_failed(&r))
			rc = OW_EAUTH;
		c->crawled += r.npages;
		ow_crawl_report_refusals(&r, &c->rejected);
		ow_crawl_report_dispose(&r);
	}
	return rc;
}

enum fetch_kind { FK_METADATA, FK_RANGE, FK_WHEEL };

static const struct ow_resolve_cause *cause_of(const struct ow_resolve_netio *c, int64_t id)
{
	for (size_t i = 0; i < c->ncauses; i++)
		if (c->causes[i].file_id == id)
			return &c->causes[i];
	return NULL;
}

/* The first reason a file's metadata could not be had; later ones (a
 * whole-wheel fallback failing after a refused range) are kept out. */
static void keep_causes(struct ow_resolve_netio *c, const struct ow_fetch_report *r)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct ow_fetch_item *it = &r->items[i];
		if (it->outcome < OW_FETCH_REJECTED || cause_of(c, it->file_id) ||
		    (it->no_range && it->outcome == OW_FETCH_FAILED)) /* read whole next */
			continue;
		struct ow_resolve_cause *g =
		    ow_array_reserve(c->causes, &c->causes_cap, c->ncauses + 1, sizeof *g);
		char *d = strdup(it->detail ? it->detail : "the fetch failed");
		if (g) /* the old block is gone when it moved, even if d failed */
			c->causes = g;
		if (!g || !d) {
			free(d);
			return; /* the generic text then: nothing is lost but the reason */
		}
		c->causes[c->ncauses++] = (struct ow_resolve_cause){it->file_id, it->rc, d};
	}
}

static int fetch_some(struct ow_resolve_netio *c, ow_store *s, const int64_t *ids, size_t n,
                      enum fetch_kind kind, struct ow_fetch_report *keep)
{
	struct ow_http_opts ho;
	struct ow_fetch_opts o = {.policy = c->policy, .http = c->http};
	struct ow_fetch_report r;
	if (!n)
		return 0;
	int rc = kind == FK_WHEEL ? 0 : small_opts(c, &ho);
	if (rc)
		return rc;
	if (kind != FK_WHEEL)
		o.http = &ho;
	rc = kind == FK_METADATA ? ow_fetch_metadata(s, &o, ids, n, &r)
	         : kind == FK_RANGE  ? ow_fetch_range_metadata(s, &o, ids, n, &r)
	                             : ow_fetch_files(s, &o, ids, n, &r);
	if (rc == 0 || rc == OW_EINCOMPLETE || rc == OW_EVERIFY || rc == OW_EINTERRUPTED) {
		c->fetched += r.done + r.had;
		c->failed += r.rejected + r.failed;
		keep_causes(c, &r);
		for (size_t i = 0; i < r.n; i++) /* as for a page (net_crawl) */
			if (r.items[i].rc == OW_EAUTH) {
				rc = ow_err(OW_EAUTH, "%s", ow_fetch_item_detail(&r.items[i]));
				break;
			}
		c->wheels += kind == FK_WHEEL ? r.done : kind == FK_RANGE ? r.whole : 0;
		if (kind == FK_RANGE) {
			c->ranged += r.done - r.whole;
			c->range_bytes += r.received - r.whole_bytes;
		}
		if (keep)
			*keep = r;
		else
			ow_fetch_report_dispose(&r);
	}
	return rc;
}

static struct ow_resolve_norange *no_range_host(const struct ow_resolve_netio *c,
                                                const char *host)
{
	for (size_t i = 0; i < c->n_no_range_hosts; i++)
		if (!strcmp(c->no_range_hosts[i].host, host))
			return &c->no_range_hosts[i];
	return NULL;
}

/* The host of an http(s) URL found to ignore Range, remembered (a new one
 * with *fresh set); NULL when it cannot be: out of memory, or a host too
 * long to be one (its ranges are tried again, which costs a request, never
 * a wrong answer). */
static struct ow_resolve_norange *remember_no_range(struct ow_resolve_netio *c, const char *url,
                                                    bool *fresh)
{
	char host[256];
	struct ow_resolve_norange *k;
	*fresh = false;
	if (!url || strncmp(url, "http", 4) || ow_fetch_host(url, host, sizeof host) != 0)
		return NULL;
	if ((k = no_range_host(c, host)))
		return k;
	struct ow_resolve_norange *g = ow_array_more(c->no_range_hosts, c->n_no_range_hosts, sizeof *g);
	if (!g)
		return NULL;
	c->no_range_hosts = g;
	k = &g[c->n_no_range_hosts];
	*k = (struct ow_resolve_norange){strdup(host), 0, 0};
	if (!k->host)
		return NULL;
	c->n_no_range_hosts++;
	*fresh = true;
	return k;
}

/* The range reads' report: wheels the server sent whole were taken (and
 * stored); those that could not be completed, or were not http(s), go to
 * whl[] for a whole download.  Each host found to ignore Range is said
 * once per run (the first round it shows in), with what it cost so far. */
static void no_range_round(struct ow_resolve_netio *c, const struct ow_fetch_report *rr,
                           int64_t *whl, size_t *nw)
{
	struct ow_resolve_norange *said[16];
	size_t nsaid = 0;
	for (size_t i = 0; i < rr->n; i++) {
		const struct ow_fetch_item *it = &rr->items[i];
		bool fresh;
		if (!it->no_range)
			continue;
		if (it->outcome == OW_FETCH_FAILED)
			whl[(*nw)++] = it->file_id;
		struct ow_resolve_norange *k = remember_no_range(c, it->url, &fresh);
		if (k && it->whole && it->outcome == OW_FETCH_DONE)
			k->files++, k->bytes += it->received;
		if (fresh && nsaid < sizeof said / sizeof *said)
			said[nsaid++] = k;
	}
	for (size_t i = 0; i < nsaid; i++) {
		double mb = (double)said[i]->bytes / 1e6;
		ow_log(OW_LOG_WARN, "%s ignores Range requests: metadata costs whole wheels (%zu "
		       "file%s, %.*f %s so far); those wheels are kept and not fetched again",
		       said[i]->host, said[i]->files, said[i]->files == 1 ? "" : "s", mb < 1 ? 0 : 1,
		       mb < 1 ? mb * 1000 : mb, mb < 1 ? "kB" : "MB");
	}
}

/* Wheels of a host known to ignore Range, downloaded whole: its cost. */
static void whole_cost(struct ow_resolve_netio *c, const struct ow_fetch_report *r)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct ow_fetch_item *it = &r->items[i];
		char host[256];
		struct ow_resolve_norange *k = NULL;
		if (it->outcome == OW_FETCH_DONE && it->url && !ow_sdist_filename(it->filename) &&
		    ow_fetch_host(it->url, host, sizeof host) == 0)
			k = no_range_host(c, host);
		if (k)
			k->files++, k->bytes += it->received;
	}
}

/* .metadata where the page announced one; else the METADATA by range
 * requests (pread on a local index's file); else (a host that ignores ranges,
 * a local wheel that is a symlink, an sdist) the whole file. */
static int net_fetch(void *ud, ow_store *s, const int64_t *ids, size_t n)
{
	struct ow_resolve_netio *c = ud;
	if (!c->net)
		return 0;
	int64_t *meta = malloc((n + 1) * sizeof *meta), *rng = malloc((n + 1) * sizeof *rng),
	        *whl = malloc((n + 1) * sizeof *whl);
	size_t nm = 0, nr = 0, nw = 0;
	int rc = meta && rng && whl ? 0 : ow_err(OW_ENOMEM, "resolve: out of memory");
	ow_db *db = ow_store_db(s);
	for (size_t i = 0; !rc && i < n; i++) {
		char host[256];
		ow_stmt *st = ow_db_stmt(db, OW_SQL_RS_HAS_META);
		if (!st) {
			rc = OW_EDB;
			break;
		}
		ow_stmt_int(st, 1, ids[i]);
		if ((rc = ow_stmt_step(st)) < 0)
			break;
		rc = 0;
		int long_host = ow_fetch_host(ow_col_text(st, 1), host, sizeof host) < 0;
		if (ow_col_int(st, 0))
			meta[nm++] = ids[i];
		else if (!strcmp(ow_col_text(st, 2), "sdist"))
			whl[nw++] = ids[i]; /* PKG-INFO lies in a gzip stream: the whole file */
		else if (!long_host && no_range_host(c, host))
			whl[nw++] = ids[i]; /* known this run to ignore ranges */
		else
			rng[nr++] = ids[i];
		ow_stmt_run(st);
	}
	if (!rc)
		rc = fetch_some(c, s, meta, nm, FK_METADATA, NULL);
	struct ow_fetch_report rr = {0};
	if (rc == 0 || rc == OW_EINCOMPLETE || rc == OW_EVERIFY) {
		int r2 = fetch_some(c, s, rng, nr, FK_RANGE, &rr);
		rc = rc ? rc : r2;
		no_range_round(c, &rr, whl, &nw);
		ow_fetch_report_dispose(&rr);
	}
	if (rc == 0 || rc == OW_EINCOMPLETE || rc == OW_EVERIFY) {
		int r2 = fetch_some(c, s, whl, nw, FK_WHEEL, &rr);
		rc = rc ? rc : r2;
		whole_cost(c, &rr);
		ow_fetch_report_dispose(&rr);
	}
	free(meta);
	free(rng);
	free(whl);
	return rc;
}

/* A file whose fetch failed this run: that failure, not "never fetched". */
static int net_meta(void *ud, ow_store *s, int64_t id, char **text, size_t *len)
{
	const struct ow_resolve_cause *why = cause_of(ud, id);
	int rc = ow_file_metadata(s, id, text, len);
	if (rc == OW_ENOENT && why)
		return ow_err(why->rc < 0 ? why->rc : OW_EHTTP, "%s", why->detail);
	return rc;
}

static const char *net_error(void *ud)
{
	const char *e = ((struct ow_resolve_netio *)ud)->crawl_error;
	return e ? e : "";
}

static const char *net_page_error(void *ud, const char *url)
{
	const struct ow_resolve_netio *c = ud;
	for (size_t i = c->npage_errors; i-- > 0;)
		if (!strcmp(c->page_errors[i].url, url))
			return c->page_errors[i].detail;
	return NULL;
}

void ow_resolve_io_net(struct ow_resolve_io *io, struct ow_resolve_netio *ctx)
{
	*io = (struct ow_resolve_io){net_crawl, net_fetch, net_meta, net_error, ctx, net_page_error};
}

void ow_resolve_netio_clear(struct ow_resolve_netio *ctx)
{
	for (size_t i = 0; i < ctx->npage_errors; i++)
		free(ctx->page_errors[i].url), free(ctx->page_errors[i].detail);
	free(ctx->page_errors);
	ctx->page_errors = NULL;
	ctx->npage_errors = 0;
	for (size_t i = 0; i < ctx->ncauses; i++)
		free(ctx->causes[i].detail);
	free(ctx->causes);
	ctx->causes = NULL;
	ctx->ncauses = ctx->causes_cap = 0;
	free(ctx->crawl_error);
	ctx->crawl_error = NULL;
	for (size_t i = 0; i < ctx->n_no_range_hosts; i++)
		free(ctx->no_range_hosts[i].host);
	free(ctx->no_range_hosts);
	ctx->no_range_hosts = NULL;
	ctx->n_no_range_hosts = 0;
	ow_link_refusals_dispose(&ctx->rejected);
	ow_http_pool_free(ctx->pool);
	ctx->pool = NULL;
}
