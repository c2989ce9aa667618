/* wheel.c - the libarchive pass over a validated wheel (the only file that
 * includes libarchive).  Seekable zip reader only: it reads the central
 * directory, which zipcheck has already proven to agree with the local
 * headers; streaming mode would trust local headers instead.  Every entry
 * libarchive returns is matched against the validated table, and any status
 * other than ARCHIVE_OK (ARCHIVE_WARN included: bad CRC, short data) fails. */
#include "wheel.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <locale.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "offwheel/error.h"
#include "pool.h"

#define READ_BUF (1u << 20)
#define TAIL "the file is not a valid wheel"
/* A parallel pass that stopped because another failed (positive: never an
 * OW_E* code, which are negative) */
#define PASS_STOPPED 1

struct ow_wheel {
	int fd;
	char *label;
	struct ow_wheel_limits lim;
	struct ow_zip *z;
	uint8_t *buf;
};

/* The pread-backed input libarchive reads from. */
struct src {
	int fd;
	uint64_t off, size;
	uint8_t *buf;
};

struct pass {
	ow_wheel *w;
	struct archive *a;
	ow_wheel_filter_fn filter;
	ow_wheel_data_fn data;
	void *ud;
	unsigned opts;
	const int *owner; /* parallel passes: the pass each member belongs to */
	int me;
	atomic_int *stop; /* another pass failed: stop early (set and read by
	                   * every pass: an atomic, relaxed: it orders nothing) */
};

void ow_wheel_limits_default(struct ow_wheel_limits *lim)
{
	ow_zip_limits_default(&lim->zip);
	lim->max_meta_size = 64u << 20;
}

int ow_wheel_open_fd(int fd, const char *label, const struct ow_wheel_limits *lim, ow_wheel **out)
{
	ow_wheel *w = calloc(1, sizeof *w);
	*out = NULL;
	if (!w)
		return ow_err(OW_ENOMEM, "out of memory");
	w->fd = fd;
	w->label = strdup(label ? label : "archive");
	w->buf = malloc(READ_BUF);
	if (lim)
		w->lim = *lim;
	else
		ow_wheel_limits_default(&w->lim);
	int rc = w->label && w->buf ? 0 : ow_err(OW_ENOMEM, "out of memory");
	if (!rc)
		rc = ow_zip_check_fd(fd, w->label, &w->lim.zip, &w->z);
	if (rc) {
		ow_wheel_close(w);
		return rc;
	}
	*out = w;
	return 0;
}

const struct ow_zip *ow_wheel_zip(const ow_wheel *w)
{
	return w->z;
}

void ow_wheel_close(ow_wheel *w)
{
	if (!w)
		return;
	ow_zip_free(w->z);
	free(w->buf);
	free(w->label);
	free(w);
}

/* ---- libarchive input callbacks ------------------------------------------ */

static la_ssize_t src_read(struct archive *a, void *ud, const void **buf)
{
	struct src *s = ud;
	size_t want = s->size - s->off < READ_BUF ? (size_t)(s->size - s->off) : READ_BUF;
	ssize_t r;
	do
		r = pread(s->fd, s->buf, want, (off_t)s->off);
	while (r < 0 && errno == EINTR);
	if (r < 0) {
		archive_set_error(a, errno, "read failed: %s", strerror(errno));
		return ARCHIVE_FATAL;
	}
	s->off += (uint64_t)r;
	*buf = s->buf;
	return r;
}

static la_int64_t src_seek(struct archive *a, void *ud, la_int64_t off, int whence)
{
	struct src *s = ud;
	int64_t base = whence == SEEK_SET   ? 0
	               : whence == SEEK_CUR ? (int64_t)s->off
	                                    : (int64_t)s->size;
	(void)a;
	if (off < -base || base + off > (int64_t)s->size)
		return ARCHIVE_FATAL;
	s->off = (uint64_t)(base + off);
	return (la_int64_t)s->off;
}

static la_int64_t src_skip(struct archive *a, void *ud, la_int64_t req)
{
	struct src *s = ud;
	uint64_t n = req < 0 ? 0 : (uint64_t)req;
	(void)a;
	if (n > s->size - s->off)
		n = s->size - s->off;
	s->off += n;
	return (la_int64_t)n;
}

/* ---- the pass ------------------------------------------------------------ */

/* libarchive's reason on one line: some of its messages hold a newline (a
 * damaged member's start gave "…\n…" in the middle of ours). */
static int la_fail(const struct pass *p, const char *what)
{
	const char *e = archive_error_string(p->a);
	char why[256];
	size_t n = 0;
	for (; e && *e && n + 1 < sizeof why; e++) {
		char c = (unsigned char)*e < 0x20 || *e == 0x7f ? ' ' : *e;
		if (c != ' ' || (n && why[n - 1] != ' '))
			why[n++] = c;
	}
	while (n && why[n - 1] == ' ')
		n--;
	why[n] = '\0';
	return ow_err(OW_EZIP, "%s: %s: %s — " TAIL, p->w->label, what,
	              n ? why : "the zip reader gave no reason");
}

static int member_fail(const struct pass *p, const struct ow_zip_entry *en, const char *why)
{
	char shown[600];
	ow_zip_name_show(en->name, en->name_len, shown, sizeof shown);
	return ow_err(OW_EZIP, "%s: member '%s': %s — " TAIL, p->w->label, shown, why);
}

static int pass_open(struct pass *p, struct src *s)
{
	p->a = archive_read_new();
	if (!p->a)
		return ow_err(OW_ENOMEM, "out of memory");
	if (archive_read_support_format_zip_seekable(p->a) != ARCHIVE_OK ||
	    archive_read_set_options(p->a, "zip:hdrcharset=UTF-8") != ARCHIVE_OK)
		return la_fail(p, "libarchive setup");
	archive_read_set_callback_data(p->a, s);
	archive_read_set_read_callback(p->a, src_read);
	archive_read_set_seek_callback(p->a, src_seek);
	archive_read_set_skip_callback(p->a, src_skip);
	if (archive_read_open1(p->a) != ARCHIVE_OK)
		return la_fail(p, "libarchive cannot open the archive");
	return 0;
}

static int check_header(const struct pass *p, struct archive_entry *ae,
                        const struct ow_zip_entry *en)
{
	const char *name = archive_entry_pathname_utf8(ae);
	if (!name)
		name = archive_entry_pathname(ae);
	if (!name || strcmp(name, en->name) != 0)
		return member_fail(p, en, "libarchive returns a different member here");
	if (archive_entry_filetype(ae) != (en->is_dir ? AE_IFDIR : AE_IFREG))
		return member_fail(p, en, "libarchive sees another file type");
	if (!en->is_dir &&
	    (!archive_entry_size_is_set(ae) || (uint64_t)archive_entry_size(ae) != en->usize))
		return member_fail(p, en, "libarchive sees another size");
	return 0;
}

static int stream_data(const struct pass *p, const struct ow_zip_entry *en, int want)
{
	uint64_t done = 0;
	for (;;) {
		const void *buf;
		size_t len;
		la_int64_t off;
		int r = archive_read_data_block(p->a, &buf, &len, &off);
		if (r == ARCHIVE_EOF)
			break;
		if (r != ARCHIVE_OK)
			return la_fail(p, en->name);
		if ((uint64_t)off != done || len > en->usize - done)
			return member_fail(p, en,
			                   "decompressed data does not match the declared size");
		done += len;
		int rc = want && len ? p->data(en->name, buf, len, p->ud) : 0;
		if (rc < 0)
			return rc;
	}
	if (done != en->usize)
		return member_fail(p, en, "decompressed data is shorter than the declared size");
	return want ? p->data(en->name, NULL, 0, p->ud) : 0;
}

/* The seekable reader knows each member's compressed size from the central
 * directory: skipping moves the read offset without inflating. */
static int skip_data(const struct pass *p, const struct ow_zip_entry *en)
{
	if (archive_read_data_skip(p->a) != ARCHIVE_OK)
		return la_fail(p, en->name);
	return 0;
}

static int pass_entry(const struct pass *p, const struct ow_zip_entry *en)
{
	struct archive_entry *ae;
	int r = archive_read_next_header(p->a, &ae);
	if (r != ARCHIVE_OK)
		return la_fail(p,
		               r == ARCHIVE_EOF ? "libarchive lists fewer members" : "libarchive");
	int rc = check_header(p, ae, en);
	if (rc || en->is_dir)
		return rc;
	if (p->stop && atomic_load_explicit(p->stop, memory_order_relaxed))
		return PASS_STOPPED; /* the failing pass's error is the one reported */
	int mine = !p->owner || p->owner[en - p->w->z->e] == p->me;
	int want = !mine ? 0 : p->filter ? p->filter(en->name, en->usize, p->ud) : 1;
	if (want < 0)
		return want;
	if (!want && (p->opts & OW_WHEEL_SKIP_UNWANTED))
		return skip_data(p, en);
	return stream_data(p, en, want && p->data);
}

static int pass_run(struct pass *p)
{
	const struct ow_zip *z = p->w->z;
	struct archive_entry *ae;
	for (size_t i = 0; i < z->n; i++) {
		int rc = pass_entry(p, &z->e[i]);
		if (rc)
			return rc;
	}
	if (archive_read_next_header(p->a, &ae) != ARCHIVE_EOF)
		return la_fail(p, "libarchive lists more members than the central directory");
	return 0;
}

/* libarchive converts member names to the current locale's charset and
 * warns when it cannot (any non-ASCII name under LC_CTYPE=C); run the pass
 * under a UTF-8 LC_CTYPE for this thread only. */
static int pass_with_utf8(struct pass *p, struct src *s)
{
	locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
	locale_t old = utf8 ? uselocale(utf8) : (locale_t)0;
	int rc = pass_open(p, s);
	if (!rc)
		rc = pass_run(p);
	if (p->a)
		archive_read_free(p->a);
	if (utf8) {
		uselocale(old);
		freelocale(utf8);
	}
	return rc;
}

int ow_wheel_each_member_opts(ow_wheel *w, unsigned opts, ow_wheel_filter_fn filter,
                              ow_wheel_data_fn data, void *ud)
{
	struct src s = {.fd = w->fd, .size = w->z->file_size, .buf = w->buf};
	struct pass p = {.w = w, .filter = filter, .data = data, .ud = ud, .opts = opts};
	return pass_with_utf8(&p, &s);
}

int ow_wheel_each_member(ow_wheel *w, ow_wheel_filter_fn filter, ow_wheel_data_fn data, void *ud)
{
	return ow_wheel_each_member_opts(w, 0, filter, data, ud);
}

/* ---- parallel passes ---------------------------------------------------- */

struct par {
	ow_wheel *w;
	ow_wheel_filter_fn filter;
	ow_wheel_data_fn data;
	void *const *uds;
	int *owner;
	atomic_int stop;
};

static int par_worker(void *ud, size_t t)
{
	struct par *q = ud;
	struct src s = {.fd = q->w->fd, .size = q->w->z->file_size, .buf = malloc(READ_BUF)};
	struct pass p = {.w = q->w, .filter = q->filter, .data = q->data, .ud = q->uds[t],
	                 .opts = OW_WHEEL_SKIP_UNWANTED, .owner = q->owner, .me = (int)t,
	                 .stop = &q->stop};
	int rc = s.buf ? pass_with_utf8(&p, &s) : ow_err(OW_ENOMEM, "out of memory");
	free(s.buf);
	if (rc && rc != PASS_STOPPED)
		atomic_store_explicit(&q->stop, 1, memory_order_relaxed);
	return rc; /* the pool keeps the error of the lowest pass that failed */
}

/* Largest wanted member first, each to the pass with the fewest bytes so
 * far; members not wanted go to pass 0 (whose filter still sees them). */
static int assign(const struct ow_zip *z, int jobs, ow_wheel_pick_fn pick, void *pick_ud,
                  int *owner)
{
	size_t *order = malloc((z->n ? z->n : 1) * sizeof *order), n = 0;
	uint64_t *load = calloc((size_t)jobs, sizeof *load);
	if (!order || !load) {
		free(order);
		free(load);
		return ow_err(OW_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < z->n; i++) {
		owner[i] = 0;
		if (!z->e[i].is_dir && pick(z->e[i].name, z->e[i].usize, pick_ud))
			order[n++] = i;
	}
	for (size_t i = 1; i < n; i++) /* insertion sort by size, descending */
		for (size_t j = i; j > 0 && z->e[order[j]].usize > z->e[order[j - 1]].usize; j--) {
			size_t t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (size_t i = 0; i < n; i++) {
		int best = 0;
		for (int t = 1; t < jobs; t++)
			if (load[t] < load[best])
				best = t;
		owner[order[i]] = best;
		load[best] += z->e[order[i]].usize;
	}
	free(order);
	free(load);
	return 0;
}

int ow_wheel_each_member_jobs(ow_wheel *w, int jobs, ow_wheel_pick_fn pick, void *pick_ud,
                              ow_wheel_filter_fn filter, ow_wheel_data_fn data, void *const *uds)
{
	if (jobs <= 1)
		return ow_wheel_each_member_opts(w, OW_WHEEL_SKIP_UNWANTED, filter, data, uds[0]);
	struct par q = {.w = w, .filter = filter, .data = data, .uds = uds};
	q.owner = malloc((w->z->n ? w->z->n : 1) * sizeof *q.owner);
	int rc = q.owner ? assign(w->z, jobs, pick, pick_ud, q.owner)
	                 : ow_err(OW_ENOMEM, "out of memory");
	/* the error of the pass that failed first in member order would need
	 * each pass's position; the lowest pass number with a real error is
	 * reported (deterministic for one damaged member) */
	if (!rc)
		rc = ow_parallel_run((size_t)jobs, jobs, par_worker, &q);
	free(q.owner);
	return rc;
}

/* ---- a streamed pass over a source distribution --------------------------- */

/* An sdist is a gzip'ed tar (or, before PEP 625, a zip) read front to back:
 * nothing in it is trusted to say where its members are, and gzip's CRC
 * covers the whole stream, so every byte is inflated once, in order. */
struct stream {
	struct archive *a;
	const char *label;
	const struct ow_archive_limits *lim;
	ow_wheel_filter_fn filter;
	ow_wheel_data_fn data;
	void *ud;
	uint64_t total;
	size_t members;
};

static int stream_fail(const struct stream *st, const char *what)
{
	const char *e = archive_error_string(st->a);
	return ow_err(OW_EZIP, "%s: %s: %.200s — the file is not a readable source distribution",
	              st->label, what, e && *e ? e : "the archive reader gave no reason");
}

/* A member name must stay inside the archive's tree: not absolute, no "..". */
static int stream_name_ok(const char *name)
{
	if (!*name || *name == '/' || strlen(name) > 4096)
		return 0;
	for (const char *p = name; p && *p; p = strchr(p, '/'), p = p ? p + 1 : NULL)
		if (p[0] == '.' && p[1] == '.' && (p[2] == '/' || !p[2]))
			return 0;
	return 1;
}

static int stream_member(struct stream *st, struct archive_entry *ae)
{
	const char *name = archive_entry_pathname_utf8(ae);
	if (!name)
		name = archive_entry_pathname(ae);
	if (!name || !stream_name_ok(name))
		return ow_err(OW_EZIP, "%s: a member named \"%.200s\" leaves the archive's tree — "
		                       "refused", st->label, name ? name : "(none)");
	if (++st->members > st->lim->max_members)
		return ow_err(OW_ETOOBIG, "%s: more than %zu members — refused", st->label,
		              st->lim->max_members);
	if (archive_entry_filetype(ae) != AE_IFREG)
		return 0; /* directories and links carry no bytes offwheel reads */
	int want = st->filter(name, (uint64_t)archive_entry_size(ae), st->ud);
	if (want < 0)
		return want;
	for (;;) {
		const void *buf;
		size_t len;
		la_int64_t off;
		int r = archive_read_data_block(st->a, &buf, &len, &off);
		if (r == ARCHIVE_EOF)
			break;
		if (r != ARCHIVE_OK)
			return stream_fail(st, name);
		if ((st->total += len) > st->lim->max_total)
			return ow_err(OW_ETOOBIG, "%s: more than %llu bytes unpacked — refused", st->label,
			              (unsigned long long)st->lim->max_total);
		int rc = want > 0 && len ? st->data(name, buf, len, st->ud) : 0;
		if (rc < 0)
			return rc;
	}
	return want > 0 ? st->data(name, NULL, 0, st->ud) : 0;
}

static int stream_run(struct stream *st, int fd)
{
	if (archive_read_support_filter_gzip(st->a) != ARCHIVE_OK ||
	    archive_read_support_format_tar(st->a) != ARCHIVE_OK ||
	    archive_read_support_format_zip_streamable(st->a) != ARCHIVE_OK)
		return stream_fail(st, "libarchive setup");
	if (archive_read_open_fd(st->a, fd, READ_BUF) != ARCHIVE_OK)
		return stream_fail(st, "cannot open the archive");
	for (;;) {
		struct archive_entry *ae;
		int r = archive_read_next_header(st->a, &ae);
		if (r == ARCHIVE_EOF)
			return st->members ? 0 : ow_err(OW_EZIP, "%s: an empty archive", st->label);
		if (r != ARCHIVE_OK)
			return stream_fail(st, "a damaged member header");
		int rc = stream_member(st, ae);
		if (rc < 0)
			return rc;
	}
}

int ow_archive_each_member(int fd, const char *label, const struct ow_archive_limits *lim,
                           ow_wheel_filter_fn filter, ow_wheel_data_fn data, void *ud)
{
	struct stream st = {.label = label, .lim = lim, .filter = filter, .data = data, .ud = ud};
	if (lseek(fd, 0, SEEK_SET) < 0)
		return ow_err(OW_EIO, "%s: cannot read: %s", label, strerror(errno));
	locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
	locale_t old = utf8 ? uselocale(utf8) : (locale_t)0;
	int rc = (st.a = archive_read_new()) ? stream_run(&st, fd) : ow_err(OW_ENOMEM, "out of memory");
	if (st.a)
		archive_read_free(st.a);
	if (utf8) {
		uselocale(old);
		freelocale(utf8);
	}
	return rc;
}
