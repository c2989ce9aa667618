/* fetch.c - downloads streamed through SHA-256 into HOME/tmp, published into
 * the store only when verified; resumable across runs. */
#include "offwheel/fetch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "offwheel/error.h"
#include "offwheel/str.h"
#include "event.h"
#include "fetchint.h"
#include "fsutil.h"
#include "hashpipe.h"
#include "pool.h"
#include "sdist.h"
#include "wheel.h"
#include "clock.h"
#include "store.h"
#include "http.h"
#include "digest.h"

struct fetch;

struct dl {
	struct ow_http_req req;
	struct ow_fetch_item *item;
	struct fetch *f;
	char published[OW_SHA256_HEX]; /* #sha256 of the page, "" when none */
	char meta_sha[OW_SHA256_HEX];  /* data-core-metadata hash, "" when none */
	char pinned[OW_SHA256_HEX];    /* a repair: the object verified before, "" when none */
	char *fetch_url; /* the item's URL, or its .metadata: owned, NULL until prepared */
	/* wheel downloads: a resumable part file */
	int fd;
	char part[PATH_MAX];
	char sidecar[PATH_MAX];
	int validator_saved;
	ow_sha256 *h;
	struct ow_hashpipe_stream hs; /* bytes are written and hashed on a worker */
	uint64_t size;
	/* metadata downloads: in memory */
	struct ow_http_membuf body;
	int refetched; /* bytes that failed verification were fetched again once */
	struct dl *same; /* wanted twice in this run: the one that downloads it */
	const char *stored_trust; /* OW_TRUST_* of the object already stored, NULL none */
};

struct fetch {
	ow_store *s;
	const struct ow_fetch_opts *o;
	int metadata; /* fetching .metadata files, not wheels */
	struct dl *dls;
	size_t n;
	ow_http *h;
	ow_hashpipe *pipe;
};

const char *ow_fetch_outcome_name(enum ow_fetch_outcome o)
{
	static const char *const n[] = {"done", "had", "rejected", "failed"};
	return (unsigned)o < sizeof n / sizeof n[0] ? n[o] : "?";
}

const char *ow_fetch_resume_name(enum ow_fetch_resume r)
{
	static const char *const n[] = {"none", "resumed", "not-resumed", "server-restarted",
	                                "discarded"};
	return (unsigned)r < sizeof n / sizeof n[0] ? n[r] : "?";
}

const char *ow_fetch_resume_basis_name(enum ow_fetch_resume_basis b)
{
	static const char *const n[] = {NULL, "if-range", "published-sha256", "pinned-sha256"};
	return (unsigned)b < sizeof n / sizeof n[0] ? n[b] : NULL;
}

/* --- lookups -------------------------------------------------------------------- */

int ow_fetch_lookup(ow_store *s, const char *item, int64_t **ids, size_t *n)
{
	int by_url = strstr(item, "://") != NULL;
	ow_stmt *st = ow_db_stmt(ow_store_db(s), by_url ? OW_SQL_FETCH_BY_URL : OW_SQL_FETCH_BY_NAME);
	if (!st)
		return OW_EDB;
	ow_stmt_text(st, 1, item);
	int rc = ow_stmt_step(st);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return ow_err(OW_ENOENT, "%s: not in the index — run 'offwheel crawl' for its project "
		                         "and variant first",
		              item);
	*ids = malloc(sizeof **ids);
	if (!*ids)
		return ow_err(OW_ENOMEM, "out of memory");
	(*ids)[0] = ow_col_int(st, 0);
	*n = 1;
	ow_stmt_run(st);
	return 0;
}

static int load_item(struct fetch *f, struct dl *d, int64_t id, char *object, char *meta_object,
                     int *has_meta)
{
	ow_stmt *st;
	int rc = wh_file_row(f->s, OW_SQL_FETCH_FILE_GET, id, d->item, &st);
	if (rc)
		return rc;
	snprintf(d->published, sizeof d->published, "%s", ow_col_is_null(st, 2) ? "" : ow_col_text(st, 2));
	snprintf(d->meta_sha, sizeof d->meta_sha, "%s", ow_col_is_null(st, 3) ? "" : ow_col_text(st, 3));
	*has_meta = ow_col_int(st, 4) != 0;
	snprintf(object, OW_SHA256_HEX, "%s", ow_col_is_null(st, 5) ? "" : ow_col_text(st, 5));
	snprintf(meta_object, OW_SHA256_HEX, "%s", ow_col_is_null(st, 6) ? "" : ow_col_text(st, 6));
	/* how the stored object was trusted when it was fetched */
	const char *t = ow_col_is_null(st, 7) ? "" : ow_col_text(st, 7);
	d->stored_trust = !strcmp(t, OW_TRUST_PUBLISHED) ? OW_TRUST_PUBLISHED
	                  : !strcmp(t, OW_TRUST_PINNED)  ? OW_TRUST_PINNED
	                                                 : NULL;
	ow_stmt_run(st);
	return 0;
}

/* --- recording outcomes --------------------------------------------------------- */

static void set_outcome(struct dl *d, enum ow_fetch_outcome o, int rc, const char *detail)
{
	d->item->outcome = o;
	d->item->rc = rc;
	free(d->item->detail);
	d->item->detail = detail && *detail ? strdup(detail) : NULL; /* NULL also out of memory */
	/* analyzer: kept in d->item->detail, freed by ow_fetch_report_dispose */
}

static int record_rejected(struct fetch *f, struct dl *d)
{
	ow_stmt *st = ow_db_stmt(ow_store_db(f->s), OW_SQL_FETCH_SET_REJECTED);
	if (!st)
		return OW_EDB;
	ow_stmt_int(st, 1, d->item->file_id);
	ow_stmt_text(st, 2, ow_fetch_item_detail(d->item));
	return ow_stmt_run(st);
}

static int record_object(struct fetch *f, int64_t id, enum ow_sql which, const char *hex,
                         const char *trust)
{
	ow_stmt *st = ow_db_stmt(ow_store_db(f->s), which);
	if (!st)
		return OW_EDB;
	ow_stmt_int(st, 1, id);
	ow_stmt_text(st, 2, hex);
	if (trust)
		ow_stmt_text(st, 3, trust);
	return ow_stmt_run(st);
}

/* --- the part file ------------------------------------------------------------- */

static void part_names(struct fetch *f, struct dl *d)
{
	uint8_t k[OW_SHA256_LEN];
	char hex[OW_SHA256_HEX];
	ow_sha256_buf(d->item->url, strlen(d->item->url), k);
	ow_hex(k, sizeof k, hex);
	snprintf(d->part, sizeof d->part, "%s/" OW_TMP_PARTIAL_PREFIX "%.40s.whl",
	         ow_store_tmpdir(f->s), hex);
	snprintf(d->sidecar, sizeof d->sidecar, "%s/" OW_TMP_PARTIAL_PREFIX "%.40s.validator",
	         ow_store_tmpdir(f->s), hex);
}

static void read_sidecar(struct dl *d, char *buf, size_t n)
{
	FILE *fp = fopen(d->sidecar, "r");
	buf[0] = '\0';
	if (!fp)
		return;
	if (!fgets(buf, (int)n, fp))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(fp);
}

/* The validator is written before the first byte it validates; without it
 * a resume is impossible and the next run starts from zero. */
static int write_sidecar(struct dl *d, const char *validator)
{
	struct ow_tmp t;
	char dir[PATH_MAX];
	int rc = ow_dirname(dir, sizeof dir, d->sidecar);
	if (rc || !*validator)
		return rc;
	if ((rc = ow_tmp_create(dir, "obj-", &t)))
		return rc;
	if ((rc = ow_write_all(t.fd, validator, strlen(validator)))) {
		ow_tmp_discard(&t);
		return rc;
	}
	close(t.fd);
	t.fd = -1;
	if (rename(t.path, d->sidecar) != 0) {
		rc = ow_err(OW_EIO, "%s: %s", d->sidecar, strerror(errno));
		ow_tmp_discard(&t);
	}
	return rc;
}

static void drop_part(struct dl *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
	unlink(d->part);
	unlink(d->sidecar);
}

/* Re-hash the bytes a previous run left, so the hash continues from them. */
static int rehash_part(struct dl *d, uint64_t n)
{
	enum { CHUNK = 1 << 20 };
	char *buf = malloc(CHUNK);
	uint64_t off = 0;
	int rc = buf ? 0 : ow_err(OW_ENOMEM, "out of memory");
	while (!rc && off < n) {
		size_t want = n - off < CHUNK ? (size_t)(n - off) : CHUNK;
		if (!(rc = ow_pread_all(d->fd, buf, want, off)))
			rc = ow_sha256_update(d->h, buf, want);
		off += want;
	}
	free(buf);
	return rc;
}

/* The file's whole hash is known: a resumed file is judged by it. */
static int hash_known(const struct dl *d)
{
	return *d->published || *d->pinned;
}

/* Continue after the `held` bytes of an earlier run when the resume rule
 * allows it (ow_http_resume_basis): 1 when resuming, 0 when not. */
static int resume_part(struct dl *d, uint64_t held, const char *validator)
{
	enum ow_http_resume b = ow_http_resume_basis(held, validator, hash_known(d));
	if (held && b == OW_HTTP_RESUME_NONE) {
		d->item->resume = OW_FETCH_RESUME_REFUSED;
		ow_log(OW_LOG_INFO, "%s: a partial of %llu bytes, but no known sha256 and no "
		       "validator to judge it by — downloading from zero", d->item->filename,
		       (unsigned long long)held);
	}
	/* the bytes held are read once, through the hash the rest continues */
	if (b == OW_HTTP_RESUME_NONE || rehash_part(d, held))
		return 0;
	d->size = held;
	d->req.resume_from = held;
	d->req.if_range = *validator && b == OW_HTTP_RESUME_IF_RANGE ? strdup(validator) : NULL;
	d->validator_saved = 1;
	ow_log(OW_LOG_INFO, "%s: resuming after %llu bytes (%s)", d->item->filename,
	       (unsigned long long)held,
	       b == OW_HTTP_RESUME_IF_RANGE ? "If-Range" : "plain Range; the sha256 decides");
	return 1;
}

static int open_part(struct dl *d)
{
	char validator[256];
	struct stat st;
	d->fd = open(d->part, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (d->fd < 0)
		return ow_err(errno == ENOSPC ? OW_ENOSPC : OW_EIO, "%s: %s", d->part, strerror(errno));
	read_sidecar(d, validator, sizeof validator);
	if (fstat(d->fd, &st) != 0)
		return ow_err(OW_EIO, "%s: %s", d->part, strerror(errno));
	int rc = ow_sha256_new(&d->h);
	if (rc)
		return rc;
	d->item->partial = (uint64_t)st.st_size;
	if (!resume_part(d, (uint64_t)st.st_size, validator) &&
	    (ftruncate(d->fd, 0) != 0 || ow_sha256_reset(d->h)))
		return ow_err(OW_EIO, "%s: cannot truncate: %s", d->part, strerror(errno));
	if (lseek(d->fd, (off_t)d->size, SEEK_SET) < 0)
		return ow_err(OW_EIO, "%s: %s", d->part, strerror(errno));
	d->hs.fd = d->fd;
	d->hs.h = d->h;
	return 0;
}

static int part_data(void *ud, const void *buf, size_t len)
{
	struct dl *d = ud;
	int rc;
	if (!d->validator_saved) {
		d->validator_saved = 1;
		if ((rc = write_sidecar(d, d->req.res.validator)))
			return rc;
	}
	if ((rc = ow_hashpipe_write(d->f->pipe, &d->hs, buf, len)))
		return ow_err_prefix(rc, "%s (partial kept for a resume): ", d->part);
	d->size += len;
	return 0;
}

static int part_restart(void *ud)
{
	struct dl *d = ud;
	ow_hashpipe_reset(d->f->pipe, &d->hs);
	unlink(d->sidecar);
	d->validator_saved = 0;
	d->size = 0;
	if (ftruncate(d->fd, 0) != 0 || lseek(d->fd, 0, SEEK_SET) < 0)
		return ow_err(OW_EIO, "%s: cannot truncate: %s", d->part, strerror(errno));
	return ow_sha256_reset(d->h);
}

/* --- verification of a finished wheel ----------------------------------------- */

struct meta_grab {
	ow_sha256 *h;
	int seen;
};

static int is_top_metadata(const char *name)
{
	const char *slash = strchr(name, '/');
	return slash && !strcmp(slash, "/METADATA") && slash - name > 10 &&
	       !strncmp(slash - 10, ".dist-info", 10);
}

static int grab_filter(const char *name, uint64_t size, void *ud)
{
	(void)size;
	(void)ud;
	return is_top_metadata(name);
}

static int grab_data(const char *name, const void *data, size_t len, void *ud)
{
	struct meta_grab *g = ud;
	(void)name;
	g->seen = 1;
	return data ? ow_sha256_update(g->h, data, len) : 0;
}

static int check_core_metadata(struct dl *d, struct meta_grab *g)
{
	uint8_t got[OW_SHA256_LEN], want[OW_SHA256_LEN];
	char hex[OW_SHA256_HEX];
	int rc;
	if (!*d->meta_sha || !g->seen)
		return 0;
	if ((rc = ow_sha256_final(g->h, got)) || (rc = ow_sha256_from_hex(d->meta_sha, want)))
		return rc;
	ow_hex(got, sizeof got, hex);
	if (!ow_digest_eq(got, want, sizeof got))
		return ow_err(OW_EHASH,
		              "%s: its METADATA hashes to %.12s…, the index's core-metadata hash is "
		              "%.12s… — the file was not stored; report it to the index",
		              d->item->filename, hex, d->meta_sha);
	return 0;
}

/* An sdist is read whole, and must be what its file name says (the
 * resolver would refuse its PKG-INFO; an object stored for it would be
 * kept and never used). */
static int verify_sdist(struct dl *d)
{
	struct ow_sdist_info si;
	int rc = ow_sdist_read_fd(d->fd, d->item->filename, &si);
	if (rc == 0)
		rc = ow_sdist_check_name(d->item->filename, &si);
	ow_sdist_info_dispose(&si);
	return rc;
}

/* No published hash: the file must prove itself — a wheel by its zip,
 * RECORD and METADATA; an sdist by reading whole as one (gzip's CRC to the
 * end, one top-level directory, a PKG-INFO, a pyproject.toml pip builds). */
static int verify_unpublished(struct dl *d)
{
	struct meta_grab g = {0};
	if (ow_sdist_filename(d->item->filename)) {
		int rc = verify_sdist(d);
		return rc ? ow_err_prefix(rc, "no published sha256, and the sdist does not verify: ")
		          : 0;
	}
	int rc = ow_sha256_new(&g.h);
	if (rc)
		return rc;
	struct ow_wheel_consumer c = {grab_filter, grab_data, &g};
	rc = ow_wheel_verify_fd(d->fd, d->item->filename, NULL, &c, NULL);
	if (rc)
		ow_err_prefix(rc, "no published sha256, and the wheel does not verify: ");
	else
		rc = check_core_metadata(d, &g);
	ow_sha256_free(g.h);
	return rc;
}

/* A repair must bring back the bytes that were verified before (for a
 * nightly wheel, the pinned hash): other bytes under the same name are not
 * taken silently. */
static int check_pinned(struct dl *d, const char *hex)
{
	if (!*d->pinned || ow_digest_eq(hex, d->pinned, 64))
		return 0;
	return ow_err(OW_EHASH,
	              "%s: the index now serves bytes that hash to %.12s…, not the %.12s… fetched "
	              "and verified before — not stored (the damaged copy was moved aside); "
	              "re-run 'offwheel crawl', or report it to the index",
	              d->item->filename, hex, d->pinned);
}

static int verify_wheel(struct dl *d, const char *hex)
{
	uint8_t got[OW_SHA256_LEN], want[OW_SHA256_LEN];
	int rc = check_pinned(d, hex);
	if (rc)
		return rc;
	if (!*d->published)
		return verify_unpublished(d);
	ow_sha256_from_hex(hex, got);
	if (ow_sha256_from_hex(d->published, want) || !ow_digest_eq(got, want, sizeof got))
		return ow_err(OW_EHASH,
		              "%s: sha256 mismatch: index says %.12s…, got %.12s… — the file was not "
		              "stored; re-run 'offwheel crawl' or report it to the index",
		              d->item->filename, d->published, hex);
	return ow_sdist_filename(d->item->filename) ? verify_sdist(d) : 0;
}

/* Bytes that fail verification may have been damaged on the way (a body cut
 * short without a Content-Length, a flipped bit): fetch them once more from
 * zero before calling the file bad.  0 when the new attempt is queued. */
static int refetch(struct fetch *f, struct dl *d)
{
	if (d->refetched++ || !f->h)
		return -1;
	if (d->item->resumed) {
		/* the bytes held were of another file, or damaged: never stitched */
		d->item->resume = OW_FETCH_RESUME_DISCARDED;
		d->item->resumed = 0;
		ow_log(OW_LOG_INFO, "%s: resume discarded: %s — downloading it again from zero",
		       d->item->filename, ow_err_detail());
	} else {
		ow_log(OW_LOG_WARN, "%s: %s — downloading it once more", d->item->filename,
		       ow_err_detail());
	}
	d->item->restarted = 1;
	unlink(d->sidecar);
	d->validator_saved = 0;
	d->size = 0;
	free((char *)(uintptr_t)d->req.if_range);
	d->req.if_range = NULL;
	d->req.resume_from = 0;
	memset(&d->req.res, 0, sizeof d->req.res);
	if (ftruncate(d->fd, 0) != 0 || lseek(d->fd, 0, SEEK_SET) < 0 || ow_sha256_reset(d->h))
		return -1;
	return ow_http_add(f->h, &d->req) ? -1 : 0;
}

/* 1 when the download was queued again, 0 when it is finished. */
static int finish_wheel(struct fetch *f, struct dl *d)
{
	uint8_t dg[OW_SHA256_LEN];
	char hex[OW_SHA256_HEX];
	int rc = ow_sha256_final(d->h, dg); /* on_done flushed the pipe */
	ow_hex(dg, sizeof dg, hex);
	if (!rc && (rc = verify_wheel(d, hex))) {
		char why[1024];
		snprintf(why, sizeof why, "%s", ow_err_detail());
		if (refetch(f, d) == 0)
			return 1;
		set_outcome(d, OW_FETCH_REJECTED, rc, why);
		record_rejected(f, d);
		drop_part(d);
		return 0;
	}
	const char *trust = *d->published ? OW_TRUST_PUBLISHED : OW_TRUST_PINNED;
	/* what resolve read by ranges is covered by no hash: compare it now */
	int meta = rc ? 0 : ow_fetch_check_range_meta(f->s, d->item->file_id, d->item->filename,
	                                              d->fd, d->size);
	if (meta < 0)
		ow_log(OW_LOG_WARN, "%s: %s", d->item->filename, ow_err_detail());
	d->item->meta_replaced = meta == 1;
	if (!rc) {
		rc = ow_store_adopt(f->s, d->fd, d->part, hex, d->size,
		                    ow_sdist_filename(d->item->filename) ? "sdist" : "wheel");
		d->fd = -1; /* adopt closed it, and removed the part file on failure */
	}
	if (!rc) {
		unlink(d->sidecar);
		rc = record_object(f, d->item->file_id, OW_SQL_FETCH_SET_OBJECT, hex, trust);
	}
	if (rc) {
		set_outcome(d, OW_FETCH_FAILED, rc, ow_err_detail());
		return 0;
	}
	memcpy(d->item->sha256, hex, sizeof hex);
	d->item->trust = trust;
	d->item->bytes = d->size;
	set_outcome(d, OW_FETCH_DONE, 0, NULL);
	return 0;
}

static void finish_metadata(struct fetch *f, struct dl *d)
{
	char hex[OW_SHA256_HEX];
	const char *expect = *d->meta_sha ? d->meta_sha : *d->pinned ? d->pinned : NULL;
	int rc = ow_store_put_buf(f->s, d->body.data ? d->body.data : "", d->body.len, expect,
	                          "metadata", hex);
	if (rc == OW_EHASH) {
		ow_err(rc, "%s.metadata: does not match the index's core-metadata hash %.12s… — not "
		           "stored; report it to the index",
		       d->item->filename, d->meta_sha);
		set_outcome(d, OW_FETCH_REJECTED, rc, ow_err_detail());
		record_rejected(f, d);
		return;
	}
	if (!rc)
		rc = record_object(f, d->item->file_id, OW_SQL_FETCH_SET_META, hex, NULL);
	if (rc) {
		set_outcome(d, OW_FETCH_FAILED, rc, ow_err_detail());
		return;
	}
	memcpy(d->item->sha256, hex, sizeof hex);
	d->item->bytes = d->body.len;
	set_outcome(d, OW_FETCH_DONE, 0, NULL);
}

/* What the transfer did with the bytes held before (ow_fetch_item). */
static void note_resume(struct dl *d, const struct ow_http_result *res)
{
	struct ow_fetch_item *it = d->item;
	it->received += res->received;
	it->restarted |= res->restarted;
	if (it->resume == OW_FETCH_RESUME_DISCARDED)
		return; /* the download once more from zero: that is the story */
	if (res->resumed) {
		it->resumed = 1;
		it->resume = OW_FETCH_RESUMED;
		it->resumed_from = res->resumed_from;
		it->resume_basis = res->resume_basis == OW_HTTP_RESUME_IF_RANGE ? OW_FETCH_BASIS_IF_RANGE
		                   : *d->published                            ? OW_FETCH_BASIS_PUBLISHED
		                                                              : OW_FETCH_BASIS_PINNED;
		snprintf(it->validator, sizeof it->validator, "%s",
		         it->resume_basis == OW_FETCH_BASIS_IF_RANGE ? res->validator : "");
	} else if (res->restarted && d->req.resume_from) {
		it->resume = OW_FETCH_RESUME_IGNORED;
	}
}

static void on_done(void *ud, struct ow_http_req *req)
{
	struct dl *d = ud;
	struct fetch *f = d->f;
	int flush = f->metadata ? 0 : ow_hashpipe_flush(f->pipe, &d->hs);
	note_resume(d, &req->res);
	if (req->res.rc) {
		set_outcome(d, OW_FETCH_FAILED, req->res.rc, req->res.detail);
		/* nothing to resume: refused before its first byte, over the size
		 * cap, or read from a local index (a file: URL is read whole) */
		if (!f->metadata && (d->size == 0 || req->res.rc == OW_ETOOBIG ||
		                     !strncmp(d->item->url, "file:", 5)))
			drop_part(d);
	} else if (flush)
		set_outcome(d, OW_FETCH_FAILED, flush, ow_err_detail());
	else if (f->metadata)
		finish_metadata(f, d);
	else if (finish_wheel(f, d))
		return; /* queued once more */
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
	ow_http_membuf_dispose(&d->body);
	ow_progress_item(d->item->filename, d->item->received);
}

/* --- setting up ----------------------------------------------------------------- */

static int mem_data(void *ud, const void *buf, size_t len)
{
	return ow_http_membuf_write(&((struct dl *)ud)->body, buf, len);
}

static int mem_restart(void *ud) { return ow_http_membuf_restart(&((struct dl *)ud)->body); }

static unsigned url_flags(const char *url)
{
	return !strncmp(url, "file:", 5) ? OW_HTTP_ALLOW_FILE
	       : !strncmp(url, "http:", 5) ? OW_HTTP_ALLOW_HTTP /* the policy decides */
	                                   : 0;
}

/* "Already there" only when the stored object can be trusted without
 * reading it: present, a regular file of its recorded size, not found
 * damaged by verify/fsck (with recheck: and hashing to its name).
 * Otherwise whatever lies there is moved aside (fsck reports it, gc removes
 * it) and the file is fetched again: WH_SETTLED keep it, WH_QUEUE fetch it,
 * < 0 error. */
static int keep_stored(struct fetch *f, struct dl *d, const char *have)
{
	char why[512], aside[PATH_MAX];
	int rc = ow_store_usable(f->s, have, &d->item->bytes, why, sizeof why);
	if (rc == 1 && f->o->recheck && ow_store_verify(f->s, have, d->item->bytes) != 0) {
		snprintf(why, sizeof why, "%s", ow_err_detail());
		ow_store_mark_damaged(f->s, have, why); /* kept if the download fails */
		rc = 0;
	}
	if (rc == 1) {
		memcpy(d->item->sha256, have, OW_SHA256_HEX);
		d->item->trust = f->metadata ? NULL : d->stored_trust;
		set_outcome(d, OW_FETCH_HAD, 0, NULL);
		return WH_SETTLED;
	}
	if (rc < 0 || (rc = ow_store_move_aside(f->s, have, aside, sizeof aside)))
		return rc;
	memcpy(d->pinned, have, OW_SHA256_HEX);
	d->item->bytes = 0;
	ow_log(OW_LOG_WARN, "%s: %s%s%s — fetching it again", d->item->filename, why,
	       *aside ? "; moved aside to " : "", aside);
	return WH_QUEUE;
}

/* WH_SETTLED when there is nothing to download, WH_QUEUE when d->req is ready. */
static int prepare(struct fetch *f, struct dl *d, int64_t id)
{
	char object[OW_SHA256_HEX], meta_object[OW_SHA256_HEX];
	int has_meta = 0;
	int rc = load_item(f, d, id, object, meta_object, &has_meta);
	if (rc)
		return rc;
	const char *have = f->metadata ? meta_object : object;
	if (*have && (rc = keep_stored(f, d, have)) != 0)
		return rc;
	if (f->metadata && !has_meta) {
		set_outcome(d, OW_FETCH_HAD, 0, "the index publishes no .metadata for it");
		return WH_SETTLED;
	}
	if (!(d->fetch_url = ow_aprintf("%s%s", d->item->url, f->metadata ? ".metadata" : "")))
		return ow_err(OW_ENOMEM, "%s: out of memory", d->item->filename);
	/* one file wanted twice (two sets that share it, one URL on two pages,
	 * the same published hash): one transfer, the others take its outcome */
	for (struct dl *o = f->dls; o < d; o++)
		if (o->req.url && !o->same &&
		    (!strcmp(o->fetch_url, d->fetch_url) ||
		     (*d->published && !strcmp(o->published, d->published)))) {
			d->same = o;
			return WH_SETTLED;
		}
	d->req.url = d->fetch_url;
	d->req.what = d->item->filename;
	d->req.ud = d;
	d->req.on_done = on_done;
	d->req.flags = url_flags(d->fetch_url);
	if (f->metadata) {
		d->body.cap = OW_METADATA_CAP;
		d->req.max_size = OW_METADATA_CAP;
		d->req.on_data = mem_data;
		d->req.on_restart = mem_restart;
		return WH_QUEUE;
	}
	d->req.max_size = f->o->max_size ? f->o->max_size : OW_FETCH_DEFAULT_CAP;
	d->req.on_data = part_data;
	d->req.on_restart = part_restart;
	if (hash_known(d))
		d->req.flags |= OW_HTTP_RESUME_BY_HASH;
	part_names(f, d);
	return open_part(d);
}

/* A file's own URL passed the link policy when its page was crawled; every
 * other hop (a redirect) must pass the policy now. */
static int allow_hop(void *ud, const char *url)
{
	struct fetch *f = ud;
	for (size_t i = 0; i < f->n; i++)
		if (f->dls[i].fetch_url && !strcmp(url, f->dls[i].fetch_url))
			return 0;
	return f->o->policy && ow_url_check_page(f->o->policy, url) != 0;
}


/* A file wanted twice: the outcome of the transfer that fetched it; its
 * row gets the same object. */
static int take_same(struct fetch *f, struct dl *d)
{
	const struct ow_fetch_item *o = d->same->item;
	struct ow_fetch_item *it = d->item;
	if (o->outcome == OW_FETCH_DONE || o->outcome == OW_FETCH_HAD) {
		int rc = d->item->file_id == o->file_id
		             ? 0
		             : record_object(f, it->file_id,
		                             f->metadata ? OW_SQL_FETCH_SET_META : OW_SQL_FETCH_SET_OBJECT,
		                             o->sha256, f->metadata ? NULL : o->trust);
		if (rc < 0)
			return rc;
		memcpy(it->sha256, o->sha256, sizeof it->sha256);
		it->trust = o->trust;
		it->bytes = o->bytes;
		set_outcome(d, OW_FETCH_HAD, 0, "the same file as another of this run, fetched once");
		return 0;
	}
	set_outcome(d, o->outcome, o->rc, o->detail);
	return 0;
}

static int summarize(struct ow_fetch_report *r)
{
	for (size_t i = 0; i < r->n; i++) {
		struct ow_fetch_item *it = &r->items[i];
		r->received += it->received;
		r->done += it->outcome == OW_FETCH_DONE;
		r->had += it->outcome == OW_FETCH_HAD;
		r->rejected += it->outcome == OW_FETCH_REJECTED;
		r->failed += it->outcome == OW_FETCH_FAILED;
		r->meta_replaced += it->meta_replaced != 0;
	}
	for (size_t i = 0; i < r->n; i++) /* a full disk is an error, not a flaky network */
		if (r->items[i].outcome == OW_FETCH_FAILED && r->items[i].rc == OW_ENOSPC)
			return ow_err(OW_ENOSPC, "%s: %s", r->items[i].filename,
			              ow_fetch_item_detail(&r->items[i]));
	if (ow_interrupted()) /* what finished is stored; the rest resumes next time */
		return ow_err(OW_EINTERRUPTED, "interrupted: %zu of %zu files stored (partials kept; "
		                               "re-run to resume)", r->done + r->had, r->n);
	if (r->failed)
		return ow_err(OW_EINCOMPLETE, "%zu of %zu files could not be downloaded (partials kept; "
		                              "re-run to resume)",
		              r->failed, r->n);
	if (r->rejected)
		return ow_err(OW_EVERIFY, "%zu of %zu files failed verification and were not stored",
		              r->rejected, r->n);
	return 0;
}

static int run(struct fetch *f, struct dl *dls, const int64_t *ids, size_t n,
               struct ow_fetch_report *r)
{
	struct ow_http_opts ho;
	ow_http *h = NULL;
	wh_http_opts(f->o, allow_hop, f, &ho);
	f->dls = dls;
	f->n = n;
	int rc = ow_hashpipe_new(&f->pipe, 16);
	if (!rc)
		rc = ow_http_new(&h, &ho);
	f->h = h;
	size_t queued = 0, had = 0;
	for (size_t i = 0; !rc && i < n; i++) {
		dls[i].item = &r->items[i];
		dls[i].f = f;
		dls[i].fd = -1;
		int p = prepare(f, &dls[i], ids[i]);
		if (p < 0)
			set_outcome(&dls[i], OW_FETCH_FAILED, p, ow_err_detail());
		else if (p == WH_QUEUE && !(rc = ow_http_add(h, &dls[i].req)))
			queued++;
		else if (p == WH_SETTLED) /* stored already: counted as done */
			had += r->items[i].outcome == OW_FETCH_HAD;
	}
	if (!rc && queued)
		ow_progress_plan_had(f->metadata ? ".metadata files" : "wheels", had, queued, 0);
	if (!rc)
		ow_http_run(h); /* outcomes are recorded per file by on_done */
	if (queued)
		ow_progress_plan(NULL, 0, 0);
	for (size_t i = 0; !rc && i < n; i++)
		if (dls[i].same)
			rc = take_same(f, &dls[i]);
	ow_http_free(h);
	ow_hashpipe_free(f->pipe);
	f->h = NULL;
	f->pipe = NULL;
	return rc;
}

/* What the downloads hold, after the pipe is gone. */
static void dls_free(struct dl *dls, size_t n)
{
	for (size_t i = 0; dls && i < n; i++) {
		if (dls[i].fd >= 0)
			close(dls[i].fd);
		ow_sha256_free(dls[i].h);
		ow_hashpipe_stream_done(&dls[i].hs);
		free((char *)(uintptr_t)dls[i].req.if_range);
		free(dls[i].fetch_url);
		ow_http_membuf_dispose(&dls[i].body);
	}
	free(dls);
}

static int fetch_many(ow_store *s, const struct ow_fetch_opts *o, const int64_t *ids, size_t n,
                      int metadata, struct ow_fetch_report *r)
{
	struct fetch f = {.s = s, .o = o, .metadata = metadata};
	double t0 = ow_mono_s();
	memset(r, 0, sizeof *r);
	struct dl *dls = calloc(n ? n : 1, sizeof *dls);
	r->items = calloc(n ? n : 1, sizeof *r->items);
	if (!dls || !r->items) {
		free(dls);
		free(r->items);
		r->items = NULL;
		return ow_err(OW_ENOMEM, "out of memory");
	}
	r->n = n;
	/* Metadata files are small and many: their rows are committed together
	 * (one sync of the index instead of two per file).  Each object is
	 * still published and fsynced before its row; a crash leaves only
	 * objects without rows, which fsck calls garbage. */
	int batch = metadata && ow_db_begin(ow_store_db(s)) == 0;
	int rc = run(&f, dls, ids, n, r);
	if (batch && (rc ? ow_db_rollback(ow_store_db(s)) : ow_db_commit(ow_store_db(s))) && !rc)
		rc = ow_err_prefix(OW_EDB, "committing the metadata rows: ");
	dls_free(dls, n);
	r->seconds = ow_mono_s() - t0;
	return rc ? rc : summarize(r);
}

int ow_fetch_files(ow_store *s, const struct ow_fetch_opts *o, const int64_t *ids, size_t n,
                   struct ow_fetch_report *r)
{
	return fetch_many(s, o, ids, n, 0, r);
}

int ow_fetch_metadata(ow_store *s, const struct ow_fetch_opts *o, const int64_t *ids, size_t n,
                      struct ow_fetch_report *r)
{
	return fetch_many(s, o, ids, n, 1, r);
}

void ow_fetch_report_dispose(struct ow_fetch_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; r->items && i < r->n; i++) {
		free(r->items[i].detail);
		free(r->items[i].url);
	}
	free(r->items);
	memset(r, 0, sizeof *r);
}

/* --- a whole wheel from another module's transfer (fetchint.h) ------------------ */

struct wh_whole {
	struct fetch f;
	struct ow_fetch_item *items;
	bool *adopted;
	size_t n;
};

int wh_whole_new(ow_store *s, const struct ow_fetch_opts *o, ow_http *h, size_t n,
                 struct wh_whole **out)
{
	struct wh_whole *w = calloc(1, sizeof *w);
	*out = NULL;
	if (!w)
		return ow_err(OW_ENOMEM, "out of memory");
	w->f = (struct fetch){.s = s, .o = o, .h = h, .n = n};
	w->f.dls = calloc(n ? n : 1, sizeof *w->f.dls);
	w->items = calloc(n ? n : 1, sizeof *w->items);
	w->adopted = calloc(n ? n : 1, sizeof *w->adopted);
	w->n = n;
	if (!w->f.dls || !w->items || !w->adopted) {
		wh_whole_free(w);
		return ow_err(OW_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		w->f.dls[i].item = &w->items[i];
		w->f.dls[i].f = &w->f;
		w->f.dls[i].fd = -1;
	}
	*out = w;
	return 0;
}

int wh_whole_adopt(struct wh_whole *w, size_t slot, int64_t id, struct ow_http_req *live)
{
	struct dl *d = &w->f.dls[slot];
	w->adopted[slot] = true;
	/* the worker that writes and hashes starts with the first wheel taken */
	int rc = w->f.pipe ? 0 : ow_hashpipe_new(&w->f.pipe, 16);
	if (!rc)
		rc = prepare(&w->f, d, id);
	if (rc == 0 && (d->size || d->req.resume_from)) {
		/* the transfer under way starts at byte zero: a partial an
		 * earlier run left is not continued by it */
		d->req.resume_from = 0;
		free((char *)(uintptr_t)d->req.if_range);
		d->req.if_range = NULL;
		d->item->resume = OW_FETCH_RESUME_IGNORED;
		rc = part_restart(d);
	}
	if (rc < 0) {
		set_outcome(d, OW_FETCH_FAILED, rc, ow_err_detail());
		return rc;
	}
	if (rc == 0 && hash_known(d))
		live->flags |= OW_HTTP_RESUME_BY_HASH;
	return rc;
}

int wh_whole_data(struct wh_whole *w, size_t slot, const struct ow_http_req *live,
                  const void *buf, size_t len)
{
	struct dl *d = &w->f.dls[slot];
	if (!d->validator_saved) /* what part_data keeps for a later resume */
		snprintf(d->req.res.validator, sizeof d->req.res.validator, "%s", live->res.validator);
	return part_data(d, buf, len);
}

int wh_whole_restart(struct wh_whole *w, size_t slot)
{
	return part_restart(&w->f.dls[slot]);
}

void wh_whole_done(struct wh_whole *w, size_t slot, struct ow_http_req *live)
{
	on_done(&w->f.dls[slot], live);
}

struct ow_fetch_item *wh_whole_item(struct wh_whole *w, size_t slot)
{
	if (slot >= w->n || !w->adopted[slot])
		return NULL;
	struct dl *d = &w->f.dls[slot];
	int rc = d->same ? take_same(&w->f, d) : 0;
	if (rc < 0)
		set_outcome(d, OW_FETCH_FAILED, rc, ow_err_detail());
	d->same = NULL;
	return d->item;
}

void wh_whole_free(struct wh_whole *w)
{
	if (!w)
		return;
	ow_hashpipe_free(w->f.pipe);
	dls_free(w->f.dls, w->n);
	for (size_t i = 0; w->items && i < w->n; i++) {
		free(w->items[i].detail);
		free(w->items[i].url);
	}
	free(w->items);
	free(w->adopted);
	free(w);
}

/* --- metadata of a stored file -------------------------------------------------- */

struct meta_text {
	char *buf;
	size_t len, cap;
};

static int text_data(const char *name, const void *data, size_t len, void *ud)
{
	struct meta_text *m = ud;
	(void)name;
	if (!data)
		return 0;
	if (m->len + len > OW_METADATA_CAP)
		return ow_err(OW_ETOOBIG, "METADATA larger than %zu bytes", OW_METADATA_CAP);
	char *g = ow_array_reserve(m->buf, &m->cap, m->len + len + 1, 1);
	if (!g)
		return ow_err(OW_ENOMEM, "out of memory");
	m->buf = g;
	memcpy(m->buf + m->len, data, len);
	m->len += len;
	m->buf[m->len] = '\0';
	return 0;
}

static int metadata_from_wheel(ow_store *s, const char *object, const char *filename, char **text,
                               size_t *len)
{
	struct meta_text m = {0};
	ow_wheel *w = NULL;
	int fd, rc = ow_store_verify(s, object, UINT64_MAX); /* every read checks the pin */
	if (rc || (rc = ow_store_open_object(s, object, &fd)))
		return rc;
	if (!(rc = ow_wheel_open_fd(fd, filename, NULL, &w)))
		rc = ow_wheel_each_member(w, grab_filter, text_data, &m);
	ow_wheel_close(w);
	close(fd);
	if (!rc && !m.buf)
		rc = ow_err(OW_EZIP, "%s: no .dist-info/METADATA", filename);
	if (rc) {
		free(m.buf);
		return rc;
	}
	*text = m.buf;
	*len = m.len;
	return 0;
}

int ow_file_metadata(ow_store *s, int64_t file_id, char **text, size_t *len)
{
	ow_stmt *st = ow_db_stmt(ow_store_db(s), OW_SQL_FETCH_FILE_GET);
	char object[OW_SHA256_HEX], meta[OW_SHA256_HEX], filename[256];
	if (!st)
		return OW_EDB;
	ow_stmt_int(st, 1, file_id);
	int rc = ow_stmt_step(st);
	if (rc <= 0)
		return rc < 0 ? rc : ow_err(OW_ENOENT, "file #%lld is not in the index", (long long)file_id);
	snprintf(filename, sizeof filename, "%s", ow_col_text(st, 1));
	snprintf(object, sizeof object, "%s", ow_col_is_null(st, 5) ? "" : ow_col_text(st, 5));
	snprintf(meta, sizeof meta, "%s", ow_col_is_null(st, 6) ? "" : ow_col_text(st, 6));
	ow_stmt_run(st);
	bool sdist = ow_sdist_filename(filename);
	const char *source = *meta ? OW_META_PEP658 : sdist ? OW_META_SDIST : OW_META_WHEEL;
	if (*meta)
		rc = ow_store_load(s, meta, OW_METADATA_CAP, text, len);
	else if (*object && sdist)
		return ow_sdist_metadata(s, file_id, object, filename, text, len);
	else if (*object)
		rc = metadata_from_wheel(s, object, filename, text, len);
	else
		return ow_err(OW_ENOENT, "%s: neither its .metadata nor the wheel has been fetched",
		              filename);
	/* read once: kept parsed, so that the object is not read again; text
	 * that does not parse is not kept (the caller's parse says why) */
	if (!rc && !ow_db_readonly(ow_store_db(s)) &&
	    ow_file_meta_record(s, file_id, source, *text, *len) < 0)
		ow_log(OW_LOG_DEBUG, "%s: metadata not kept parsed: %s", filename, ow_err_detail());
	return rc;
}

/* --- verify --deep -------------------------------------------------------------- */

struct deep_job {
	ow_store *s;
	const struct ow_obj_row *rows;
	char (*names)[256];
	struct ow_verify_result *res;
};

static int deep_one(void *ud, size_t i)
{
	struct deep_job *j = ud;
	if (!j->names[i][0] || j->res[i].rc)
		return 0; /* not a wheel, or already failed its hash */
	int fd, rc = ow_store_open_object(j->s, j->rows[i].sha256, &fd);
	if (!rc) {
		rc = ow_wheel_verify_fd(fd, j->names[i], NULL, NULL, NULL);
		close(fd);
	}
	if (rc) {
		j->res[i].rc = rc;
		free(j->res[i].detail);
		j->res[i].detail = ow_aprintf("object %.12s… (%s): %s", j->rows[i].sha256,
		                              j->names[i], ow_err_detail());
	}
	return rc;
}

static void name_of_object(ow_store *s, const char *hex, char *buf, size_t n)
{
	ow_stmt *st = ow_db_stmt(ow_store_db(s), OW_SQL_FETCH_NAME_OF_OBJECT);
	buf[0] = '\0';
	if (!st)
		return;
	ow_stmt_text(st, 1, hex);
	if (ow_stmt_step(st) == 1)
		snprintf(buf, n, "%s", ow_col_text(st, 0));
	ow_stmt_run(st);
}

size_t ow_verify_wheels(ow_store *s, const struct ow_obj_row *rows, size_t n, int jobs,
                        struct ow_verify_result *results)
{
	struct deep_job j = {.s = s, .rows = rows, .res = results};
	j.names = calloc(n ? n : 1, sizeof *j.names);
	if (!j.names)
		return n;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(rows[i].kind, "wheel"))
			name_of_object(s, rows[i].sha256, j.names[i], sizeof j.names[i]);
	size_t failed = ow_parallel_for(n, jobs, deep_one, &j);
	free(j.names);
	return failed;
}
