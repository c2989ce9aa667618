/* fetchrange.c - the METADATA of remote wheels by HTTP range requests, for
 * files whose index publishes no PEP 658 .metadata (fetch.h).
 *
 * Per wheel, through the state machine of rangemeta.h: the tail (a suffix
 * range, which also tells the wheel's size), the central directory when the
 * tail did not hold it, then the METADATA member; every later read sends
 * the validator of the first answer as If-Range and the size as the one
 * expected, so bytes of two versions of a file are never mixed.  The
 * METADATA is parsed and kept in file_meta (source "range").  A server that
 * answers the first range with the whole file (200: it ignores Range) has
 * its answer taken as the wheel's download (OW_HTTP_RANGE_OR_WHOLE): the
 * bytes go through fetch.c's part file, hash and checks (wh_whole_*,
 * fetchint.h) and the verified wheel is stored as the file's object, so it
 * is sent once in a run, never once for its metadata and again for fetch.
 *
 * A wheel of a local index (a file: URL) goes through the same state
 * machine, the reads done with pread on the file and its size taken from
 * fstat, so a local tree of large wheels is never copied into the store
 * just for its metadata. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "offwheel/error.h"
#include "event.h"
#include "fetchint.h"
#include "fmt.h"
#include "fsutil.h"
#include "offwheel/fetch.h"
#include "rangemeta.h"
#include "store.h"
#include "http.h"
#include "digest.h"
#include "url.h"

struct rfetch;

struct rdl {
	struct ow_http_req req;
	struct ow_fetch_item *item;
	struct rfetch *f;
	struct ow_rangemeta rm;
	int started;          /* rm is set up: the size is known */
	int reread;           /* read again from the tail once: another version came */
	int whole;            /* enum rdl_whole: the server sent the whole file */
	char validator[256];  /* of the first answer, sent as If-Range after it */
	struct ow_http_membuf body;
};

/* A transfer whose first range the server answered with the whole file. */
enum rdl_whole {
	RDL_RANGES = 0, /* not that: range reads */
	RDL_TAKEN,      /* its bytes go to the whole-wheel download (wh_whole_*) */
	RDL_SETTLED,    /* nothing to write (stored already, or another slot's):
	                 * the transfer is stopped */
};

struct rfetch {
	ow_store *s;
	const struct ow_fetch_opts *o;
	struct rdl *dls;
	size_t n;
	ow_http *h;
	struct wh_whole *whole; /* the wheels servers sent whole */
};

int ow_fetch_host(const char *url, char *buf, size_t n)
{
	const char *p = strstr(url, "://");
	p = p ? p + 3 : url;
	size_t l = strcspn(p, "/?#");
	const char *at = memchr(p, '@', l);
	if (at) {
		l -= (size_t)(at + 1 - p);
		p = at + 1;
	}
	int rc = ow_fmt(buf, n, "%.*s", (int)l, p);
	return rc < 0 ? ow_err_prefix(rc, "the host of %s: ", url) : 0;
}

static void set_outcome(struct rdl *d, enum ow_fetch_outcome o, int rc, const char *detail)
{
	d->item->outcome = o;
	d->item->rc = rc;
	free(d->item->detail);
	d->item->detail = detail && *detail ? strdup(detail) : NULL; /* NULL also out of memory */
	/* analyzer: kept in d->item->detail, freed by ow_fetch_report_dispose */
}

/* The first read: the wheel's tail, which tells its size and validator. */
static void set_tail_read(struct rdl *d)
{
	d->req.flags |= OW_HTTP_RANGE_SUFFIX;
	d->req.range_off = 0;
	d->req.range_len = OW_RANGEMETA_TAIL;
	d->req.max_size = OW_RANGEMETA_TAIL;
	d->req.expected_size = 0;
	d->req.if_range = NULL;
	d->body.cap = (size_t)OW_RANGEMETA_TAIL;
	/* a 200 to it is the whole wheel: taken, never read twice */
	d->req.flags |= OW_HTTP_RANGE_OR_WHOLE;
	d->req.whole_max_size = d->f->o->max_size ? d->f->o->max_size : OW_FETCH_DEFAULT_CAP;
}

/* A later read came from another version of the file than the first (the
 * server ignored If-Range): everything read is dropped and the wheel read
 * again from its tail, once; 0 when that read is queued. */
static int reread_from_tail(struct rfetch *f, struct rdl *d)
{
	if (d->reread)
		return -1;
	ow_log(OW_LOG_INFO, "%s: a range came from another version of the file; reading it "
	                    "again from its end", d->item->filename);
	d->reread = 1;
	d->started = 0;
	d->validator[0] = '\0';
	ow_rangemeta_clear(&d->rm);
	memset(&d->rm, 0, sizeof d->rm);
	ow_http_membuf_dispose(&d->body);
	set_tail_read(d);
	return ow_http_add(f->h, &d->req);
}

/* Queue the read the state machine wants next. */
static int queue_next(struct rfetch *f, struct rdl *d)
{
	ow_http_membuf_dispose(&d->body);
	d->body.cap = (size_t)d->rm.want_len;
	d->req.range_off = d->rm.want_off;
	d->req.range_len = d->rm.want_len;
	d->req.flags &= ~(OW_HTTP_RANGE_SUFFIX | OW_HTTP_RANGE_OR_WHOLE);
	d->req.max_size = d->rm.want_len;
	d->req.expected_size = d->rm.size;
	d->req.if_range = *d->validator ? d->validator : NULL;
	return ow_http_add(f->h, &d->req);
}

/* The METADATA is read: kept parsed. */
static void keep_text(struct rfetch *f, struct rdl *d)
{
	int rc = ow_file_meta_record(f->s, d->item->file_id, OW_META_RANGE, d->rm.text,
	                             d->rm.text_len);
	if (rc == OW_EDB) {
		set_outcome(d, OW_FETCH_FAILED, rc, ow_err_detail());
		return;
	}
	if (rc) {
		ow_err_prefix(rc, "%s: its METADATA (read by range requests) is unusable: ",
		              d->item->filename);
		set_outcome(d, OW_FETCH_REJECTED, rc, ow_err_detail());
		return;
	}
	d->item->bytes = d->rm.text_len;
	set_outcome(d, OW_FETCH_DONE, 0, NULL);
}

/* A wheel of a local index: the reads of the state machine are preads on
 * the file named by its file: URL.  It is opened without following a
 * symlink at its end and without blocking, and must be a regular file; a
 * wheel that is a symlink is left to the whole-file fetch, as before. */
static void read_local(struct rfetch *f, struct rdl *d)
{
	struct ow_fetch_item *it = d->item;
	char *path = NULL;
	struct stat st;
	int fd = -1, rc = ow_url_file_path(it->url, &path);
	if (rc) {
		ow_err_prefix(rc, "%s: ", it->filename);
		set_outcome(d, OW_FETCH_REJECTED, rc, ow_err_detail());
		return;
	}
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ELOOP) {
		ow_log(OW_LOG_DEBUG, "%s: a symlink; the wheel is read whole", path);
		it->no_range = 1;
		set_outcome(d, OW_FETCH_FAILED, OW_EUNSUPPORTED, "a symlink: read whole");
	} else if (fd < 0) {
		rc = ow_err(errno == ENOENT ? OW_ENOENT : OW_EIO, "%s: cannot open %s: %s",
		            it->filename, path, strerror(errno));
		set_outcome(d, OW_FETCH_FAILED, rc, ow_err_detail());
	} else if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		rc = ow_err(OW_EPOLICY, "%s: %s is not a regular file", it->filename, path);
		set_outcome(d, OW_FETCH_REJECTED, rc, ow_err_detail());
	} else {
		rc = ow_rangemeta_read_fd(fd, it->filename, (uint64_t)st.st_size, &d->rm);
		it->received = d->rm.bytes_read;
		if (!rc) {
			keep_text(f, d);
		} else {
			/* the wheel's name is in the reason; the path tells where it lies */
			char *why = strdup(ow_err_detail());
			rc = ow_err(rc, "%s [%s]", why ? why : "", path);
			free(why);
			set_outcome(d, rc == OW_EIO || rc == OW_ENOMEM ? OW_FETCH_FAILED : OW_FETCH_REJECTED,
			            rc, ow_err_detail());
		}
	}
	if (fd >= 0)
		close(fd);
	if (it->outcome != OW_FETCH_DONE && !it->no_range)
		ow_log(OW_LOG_WARN, "%s", ow_fetch_item_detail(it));
	free(path);
	ow_progress_item(it->filename, it->received);
}

/* The server answered the first range with the whole file: the transfer
 * becomes the wheel's download, once, at its first sight (a byte, or the
 * end of an empty body). */
static int take_whole(struct rdl *d)
{
	if (d->whole)
		return 0;
	struct rfetch *f = d->f;
	size_t slot = (size_t)(d - f->dls);
	d->item->no_range = 1;
	int rc = wh_whole_adopt(f->whole, slot, d->item->file_id, &d->req);
	d->whole = rc == WH_QUEUE ? RDL_TAKEN : RDL_SETTLED;
	return rc < 0 ? rc : 0;
}

static void whole_done(struct rdl *d, struct ow_http_req *req)
{
	if (take_whole(d) == 0 && d->whole == RDL_TAKEN)
		wh_whole_done(d->f->whole, (size_t)(d - d->f->dls), req);
	d->item->no_range = 1;
}

static void on_done(void *ud, struct ow_http_req *req)
{
	struct rdl *d = ud;
	struct rfetch *f = d->f;
	if (req->res.range_ignored && (d->whole || (req->flags & OW_HTTP_RANGE_OR_WHOLE))) {
		whole_done(d, req); /* its outcome is the whole download's */
		return;
	}
	d->item->received += req->res.received;
	if (req->res.range_ignored && !d->started) {
		d->item->no_range = 1;
		set_outcome(d, OW_FETCH_FAILED, req->res.rc, req->res.detail);
	} else if (req->res.validator_changed && reread_from_tail(f, d) == 0) {
		return; /* the tail is asked for again */
	} else if (req->res.validator_changed) {
		int rc = ow_err(OW_EHTTP, "read twice, and twice a later range came from another "
		                "version of the file than its first: %s — use another mirror",
		                req->res.detail);
		set_outcome(d, OW_FETCH_REJECTED, rc, ow_err_detail());
	} else if (req->res.rc) {
		set_outcome(d, OW_FETCH_FAILED, req->res.rc, req->res.detail);
	} else {
		const struct ow_http_result *res = &req->res;
		const uint8_t *buf = (const uint8_t *)(d->body.data ? d->body.data : "");
		int rc = 0;
		if (!d->started) {
			snprintf(d->validator, sizeof d->validator, "%s", res->validator);
			rc = ow_rangemeta_init(&d->rm, d->item->filename, res->range_total);
			d->started = rc == 0;
			if (!rc && (d->rm.want_off != res->range_start || d->rm.want_len != d->body.len))
				rc = ow_err(OW_EHTTP, "%s: the server sent %zu bytes at %llu of %llu for its "
				            "tail, not the last %llu", d->item->filename, d->body.len,
				            (unsigned long long)res->range_start,
				            (unsigned long long)res->range_total,
				            (unsigned long long)d->rm.want_len);
		}
		if (!rc)
			rc = ow_rangemeta_feed(&d->rm, buf, d->body.len);
		if (rc == OW_RM_WANT_MORE && !(rc = queue_next(f, d)))
			return; /* the next read is queued */
		if (rc == OW_RM_HAVE_TEXT)
			keep_text(f, d);
		else
			set_outcome(d, rc == OW_ENOMEM ? OW_FETCH_FAILED : OW_FETCH_REJECTED, rc,
			            ow_err_detail());
	}
	ow_http_membuf_dispose(&d->body);
	ow_progress_item(d->item->filename, d->item->received);
}

static int mem_data(void *ud, const void *buf, size_t len)
{
	struct rdl *d = ud;
	int rc = d->req.res.range_ignored ? take_whole(d) : 0;
	if (rc)
		return rc;
	if (d->whole == RDL_SETTLED)
		return ow_err(OW_EUNSUPPORTED, "%s: nothing more to read (%s)", d->item->filename,
		              "stored already, or sent for another file of this run");
	if (d->whole == RDL_TAKEN)
		return wh_whole_data(d->f->whole, (size_t)(d - d->f->dls), &d->req, buf, len);
	return ow_http_membuf_write(&d->body, buf, len);
}

static int mem_restart(void *ud)
{
	struct rdl *d = ud;
	if (d->whole == RDL_TAKEN)
		return wh_whole_restart(d->f->whole, (size_t)(d - d->f->dls));
	return ow_http_membuf_restart(&d->body);
}

/* The outcome of each wheel taken whole replaces its item's (after the
 * engine ran: a refetch of one that failed verification ran too). */
static void whole_outcomes(struct rfetch *f, struct ow_fetch_report *r)
{
	for (size_t i = 0; i < f->n; i++) {
		struct ow_fetch_item *wi = f->whole ? wh_whole_item(f->whole, i) : NULL;
		if (!wi)
			continue;
		struct ow_fetch_item mine = r->items[i]; /* freed with the whole state */
		r->items[i] = *wi;
		*wi = mine;
		r->items[i].no_range = 1;
		r->items[i].whole = true;
		ow_progress_item(r->items[i].filename, r->items[i].received);
	}
}

/* WH_SETTLED when there is nothing to read for this file, WH_QUEUE when d->req
 * is ready. */
static int prepare(struct rfetch *f, struct rdl *d, int64_t id)
{
	ow_stmt *st;
	struct ow_fetch_item *it = d->item;
	int rc = wh_file_row(f->s, OW_SQL_FMETA_RANGE_ITEM, id, it, &st);
	if (rc)
		return rc;
	int has_meta = ow_col_int(st, 2) != 0, kept = !ow_col_is_null(st, 3),
	    stored = !ow_col_is_null(st, 4);
	ow_stmt_run(st);
	const char *why = kept       ? "its metadata is kept parsed already"
	                  : has_meta ? "the index publishes a .metadata for it"
	                  : stored   ? "the wheel is stored: its METADATA is read from it"
	                             : NULL;
	if (why) {
		set_outcome(d, OW_FETCH_HAD, 0, why);
		return WH_SETTLED;
	}
	if (!strncmp(it->url, "file:", 5)) {
		read_local(f, d); /* done here and now: nothing to queue */
		return WH_SETTLED;
	}
	if (strncmp(it->url, "https:", 6) && strncmp(it->url, "http:", 5)) {
		it->no_range = 1;
		set_outcome(d, OW_FETCH_FAILED, OW_EUNSUPPORTED, "not an http(s) URL: read whole");
		return WH_SETTLED;
	}
	d->req.url = it->url;
	d->req.what = it->filename;
	d->req.ud = d;
	d->req.on_done = on_done;
	d->req.on_data = mem_data;
	d->req.on_restart = mem_restart;
	d->req.flags = !strncmp(it->url, "http:", 5) ? OW_HTTP_ALLOW_HTTP : 0;
	set_tail_read(d);
	return WH_QUEUE;
}

/* A file's own URL passed the link policy when its page was crawled; every
 * other hop (a redirect) must pass the policy now. */
static int allow_hop(void *ud, const char *url)
{
	struct rfetch *f = ud;
	for (size_t i = 0; i < f->n; i++)
		if (f->dls[i].item->url && !strcmp(url, f->dls[i].item->url))
			return 0;
	return f->o->policy && ow_url_check_page(f->o->policy, url) != 0;
}

static int run(struct rfetch *f, const int64_t *ids, size_t n, struct ow_fetch_report *r)
{
	struct ow_http_opts ho;
	wh_http_opts(f->o, allow_hop, f, &ho);
	int rc = ow_http_new(&f->h, &ho);
	if (!rc)
		rc = wh_whole_new(f->s, f->o, f->h, n, &f->whole);
	size_t queued = 0;
	for (size_t i = 0; !rc && i < n; i++) {
		struct rdl *d = &f->dls[i];
		d->item = &r->items[i];
		d->f = f;
		int p = prepare(f, d, ids[i]);
		if (p < 0)
			set_outcome(d, OW_FETCH_FAILED, p, ow_err_detail());
		else if (p == WH_QUEUE && !(rc = ow_http_add(f->h, &d->req)))
			queued++;
	}
	if (!rc && queued)
		ow_progress_plan("METADATA range reads", queued, 0);
	if (!rc)
		ow_http_run(f->h); /* outcomes are recorded per file by on_done */
	if (queued)
		ow_progress_plan(NULL, 0, 0);
	whole_outcomes(f, r);
	ow_http_free(f->h);
	wh_whole_free(f->whole);
	f->h = NULL;
	f->whole = NULL;
	return rc;
}

int ow_fetch_range_metadata(ow_store *s, const struct ow_fetch_opts *o, const int64_t *ids,
                            size_t n, struct ow_fetch_report *r)
{
	struct rfetch f = {.s = s, .o = o, .n = n};
	double t0 = ow_mono_s();
	memset(r, 0, sizeof *r);
	f.dls = calloc(n ? n : 1, sizeof *f.dls);
	r->items = calloc(n ? n : 1, sizeof *r->items);
	if (!f.dls || !r->items) {
		free(f.dls);
		free(r->items);
		r->items = NULL;
		return ow_err(OW_ENOMEM, "out of memory");
	}
	r->n = n;
	for (size_t i = 0; i < n; i++)
		f.dls[i].item = &r->items[i];
	/* the rows of one call are committed together, as for .metadata files */
	int batch = ow_db_begin(ow_store_db(s)) == 0;
	int rc = run(&f, ids, n, r);
	if (batch && (rc ? ow_db_rollback(ow_store_db(s)) : ow_db_commit(ow_store_db(s))) && !rc)
		rc = ow_err_prefix(OW_EDB, "committing the metadata rows: ");
	for (size_t i = 0; i < n; i++) {
		ow_rangemeta_clear(&f.dls[i].rm);
		ow_http_membuf_dispose(&f.dls[i].body);
	}
	free(f.dls);
	r->seconds = ow_mono_s() - t0;
	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++) {
		const struct ow_fetch_item *it = &r->items[i];
		r->received += it->received;
		r->no_range += it->no_range;
		r->whole += it->whole && it->outcome == OW_FETCH_DONE;
		r->whole_bytes += it->whole ? it->received : 0;
		r->done += it->outcome == OW_FETCH_DONE;
		r->had += it->outcome == OW_FETCH_HAD;
		r->rejected += it->outcome == OW_FETCH_REJECTED;
		r->failed += it->outcome == OW_FETCH_FAILED && !it->no_range;
	}
	if (ow_interrupted()) /* what was read is kept */
		return ow_err(OW_EINTERRUPTED, "interrupted: the metadata of %zu of %zu wheels read",
		              r->done + r->had, r->n);
	if (r->failed)
		return ow_err(OW_EINCOMPLETE, "the metadata of %zu of %zu wheels could not be read by "
		              "range requests (re-run to try again)", r->failed, r->n);
	if (r->rejected)
		return ow_err(OW_EVERIFY, "the METADATA of %zu of %zu wheels read by range requests "
		              "was refused", r->rejected, r->n);
	return 0;
}
