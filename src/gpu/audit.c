/* audit.c - audit a library file, a wheel, a directory or a store object:
 * read the fatbin listings (fatbin.h) from files with pread, from wheel
 * members inflated into memory one at a time (wheel.h), and cache store
 * objects in the index (auditdb.c).  The audit object itself (its
 * constructors, the order of its libraries) is auditobj.c's.  The rule for data-section scans is
 * in audit.h. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "array.h"
#include "auditint.h"
#include "offwheel/error.h"
#include "fatbinkern.h"
#include "fbstream.h"
#include "wheel.h"
#include "store.h"
#include "fsbeneath.h"

#define DEFAULT_MAX_MEMBER (8ull << 30)
#define SCAN_MIN_SIZE (8ull << 20) /* auto scan: libraries of at least 8 MiB ... */
#define SCAN_FRACTION 16           /* ... whose fatbin sections hold < 1/16 of it */
#define MAX_DEPTH 64
#define MAX_WHEEL_JOBS 16
#define WHEEL_MEM_BUDGET (128ull << 20) /* members held whole in memory at once */
#define STREAM_FROM (16ull << 20) /* members from this size are listed as they inflate */

/* ---- one library: from a file or from memory ------------------------------ */

struct input {
	const void *buf; /* in memory, or NULL: read `fd` (or sp) */
	struct fb_sparse *sp; /* the bytes a stream kept (fbstream.h), or NULL */
	int fd;
	uint64_t size;
	int vendor; /* an NVIDIA library (ow_audit_is_vendor): data-scanned at any size */
};

static int list_input(const struct input *in, unsigned opts, struct ow_fatbin **fb)
{
	if (in->sp)
		return fb_scan_sparse(in->sp, opts, fb);
	if (in->buf)
		return ow_fatbin_scan_buffer(in->buf, (size_t)in->size, opts, fb);
	return ow_fatbin_read_fd(in->fd, opts, fb);
}

static int want_data_scan(const struct ow_fatbin *fb, uint64_t size, int vendor, int mode)
{
	/* device code files have no data sections; a stripped ELF was scanned whole */
	int hosts = fb->format == OW_FB_FMT_ELF || fb->format == OW_FB_FMT_PE ||
	            fb->format == OW_FB_FMT_AR;
	/* NVIDIA's libraries may keep all their modules in .rodata, loaded by hand
	 * (libcupti.so, 6 MB): scanned at any size */
	if (mode == OW_AUDIT_SCAN_NEVER || !hosts || fb->no_section_headers ||
	    (size < SCAN_MIN_SIZE && !vendor))
		return 0;
	uint64_t in_sections = 0;
	for (size_t i = 0; i < fb->n_modules; i++)
		if (!fb->modules[i].scanned)
			in_sections += fb->modules[i].size;
	return in_sections < size / SCAN_FRACTION;
}

/* The listing with the data-section rule applied; *scanned says whether data
 * sections were scanned.  *bytes gets what was read from disk. */
static int list_sections(const struct input *in, int mode, struct ow_fatbin **fb, int *scanned,
                         uint64_t *bytes)
{
	int always = mode == OW_AUDIT_SCAN_ALWAYS;
	int rc = list_input(in, always ? OW_FATBIN_SCAN_DATA : 0, fb);
	*scanned = !rc && always && (*fb)->format != OW_FB_FMT_RAW;
	*bytes = rc ? 0 : (*fb)->bytes_read;
	int vendor = !rc && (in->vendor || ow_audit_is_vendor_lib("", *fb));
	if (rc || always || !want_data_scan(*fb, in->size, vendor, mode))
		return rc;
	ow_fatbin_free(*fb);
	*scanned = 1;
	rc = list_input(in, OW_FATBIN_SCAN_DATA, fb);
	*bytes += rc ? 0 : (*fb)->bytes_read;
	return rc;
}

/* A plain listing: what the headers did not settle stays open. */
static void mark_unchecked(struct ow_fatbin *fb)
{
	for (size_t i = 0; i < fb->n_modules; i++) {
		struct ow_fatbin_module *m = &fb->modules[i];
		int known = m->no_kernels;
		for (size_t k = m->first; k < m->first + m->count && !known; k++)
			known = fb->entries[k].kernels > 0;
		m->unchecked = !m->relocatable && m->count > 0 && !known;
	}
}

/* The listing, then the kernel-less modules it left open (fatbinkern.h). */
static int list_library(const struct input *in, const struct ow_audit_opts *o,
                        struct ow_fatbin **fb, int *scanned, uint64_t *bytes)
{
	int rc = list_sections(in, o->scan, fb, scanned, bytes);
	const struct ow_kern_ask ask = {o->cc, o->driver,
	                                !rc && (in->vendor || ow_audit_is_vendor_lib("", *fb))};
	if (!rc && o->no_kernels && !o->cc)
		mark_unchecked(*fb);
	else if (!rc && in->sp)
		rc = ow_fatbin_count_kernels_oracle(*fb, &ask, fb_sparse_decision, in->sp);
	else if (!rc)
		rc = ow_fatbin_count_kernels(*fb, in->buf, in->size, in->buf ? -1 : in->fd, &ask, bytes);
	if (rc && *fb) {
		ow_fatbin_free(*fb);
		*fb = NULL;
	}
	return rc;
}

static int audit_lib_fd(struct ow_audit *a, int fd, const char *path, const char *shown,
                        const struct ow_audit_opts *o)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return ow_err(OW_EIO, "%s: %s", path, strerror(errno));
	struct input in = {.fd = fd, .size = (uint64_t)st.st_size, .vendor = ow_audit_is_vendor(shown)};
	struct ow_fatbin *fb;
	int scanned;
	uint64_t bytes;
	int rc = list_library(&in, o, &fb, &scanned, &bytes);
	if (rc)
		return ow_err_prefix(rc, "%s: ", path);
	a->bytes_in += bytes;
	return au_add_lib(a, shown, in.size, scanned, fb);
}

/* ---- a wheel: candidate members inflated, streamed or held whole -------- */

/* One pass of a wheel audit; passes run on threads (ow_wheel_each_member_jobs)
 * and share the audit and a budget of bytes held in memory at once.  A
 * member of stream_from bytes or more is listed as it inflates (fbstream.h);
 * a smaller one, or one the stream cannot take (an archive, a bare cubin, an
 * unusual layout), is held whole within the budget. */
struct wshared {
	struct ow_audit *a;
	const struct ow_audit_opts *o;
	pthread_mutex_t mu;
	pthread_cond_t freed;
	uint64_t held, budget;
	struct au_again_list again; /* this pass lists these members again (pass > 0) */
	struct au_again_list next;  /* members the next pass lists again */
	int second;         /* this is a pass over `again` */
};

struct wpass {
	struct wshared *sh;
	uint8_t *buf;
	size_t cap, len;
	uint64_t holding; /* of sh->held: this pass's member */
	fb_stream *st;    /* the member being streamed, or NULL */
	uint64_t size;    /* its declared size */
};

static uint64_t max_member(const struct ow_audit_opts *o)
{
	return o->max_member ? o->max_member : DEFAULT_MAX_MEMBER;
}

static uint64_t stream_from(const struct wshared *sh)
{
	return sh->o->stream_from ? sh->o->stream_from : STREAM_FROM;
}

static int w_pick(const char *name, uint64_t size, void *ud)
{
	(void)size;
	(void)ud;
	return ow_audit_is_candidate(name);
}

static int w_pick_again(const char *name, uint64_t size, void *ud)
{
	(void)size;
	return au_again_find(&((const struct wshared *)ud)->again, name) != NULL;
}

/* Wait until `size` more bytes fit the budget (or nothing else is held:
 * one member larger than the budget still goes, alone). */
static void budget_take(struct wpass *w, uint64_t size)
{
	struct wshared *sh = w->sh;
	pthread_mutex_lock(&sh->mu);
	while (sh->held && sh->held + size > sh->budget)
		pthread_cond_wait(&sh->freed, &sh->mu);
	sh->held += size;
	w->holding = size;
	pthread_mutex_unlock(&sh->mu);
}

static void budget_give(struct wpass *w)
{
	struct wshared *sh = w->sh;
	fb_stream_free(w->st);
	w->st = NULL;
	if (!w->holding)
		return;
	pthread_mutex_lock(&sh->mu);
	sh->held -= w->holding;
	w->holding = 0;
	pthread_cond_broadcast(&sh->freed);
	pthread_mutex_unlock(&sh->mu);
	/* the buffer goes too: a pass keeps no more than the member it reads */
	free(w->buf);
	w->buf = NULL;
	w->cap = 0;
}

/* Hold the member whole: a buffer of its size within the budget. */
static int hold_whole(struct wpass *w, const char *name, uint64_t size)
{
	budget_take(w, size);
	if (size > w->cap) {
		free(w->buf);
		w->cap = 0;
		if (!(w->buf = malloc((size_t)size ? (size_t)size : 1))) {
			budget_give(w);
			return ow_err(OW_ENOMEM, "%s: member %s: out of memory for %" PRIu64 " bytes",
				      w->sh->a->label, name, size);
		}
		w->cap = (size_t)size;
	}
	w->len = 0;
	return 0;
}

static int w_filter(const char *name, uint64_t size, void *ud)
{
	struct wpass *w = ud;
	struct wshared *sh = w->sh;
	struct ow_audit *a = sh->a;
	const struct au_again *ag = sh->second ? au_again_find(&sh->again, name) : NULL;
	if (sh->second && !ag)
		return OW_MEMBER_SKIP; /* the first pass counted it */
	if (!sh->second && !ow_audit_is_candidate(name)) {
		pthread_mutex_lock(&sh->mu);
		a->n_skipped++;
		pthread_mutex_unlock(&sh->mu);
		return OW_MEMBER_SKIP;
	}
	if (size > max_member(sh->o) || size > SIZE_MAX - 1)
		return ow_err(OW_ETOOBIG, "%s: member %s holds %" PRIu64 " bytes, more than the %"
		              PRIu64 " an audit reads into memory", a->label, name, size,
		              max_member(sh->o));
	w->size = size;
	w->len = 0;
	if (ag ? !ag->whole : size >= stream_from(sh)) {
		int decide = !(sh->o->no_kernels && !sh->o->cc), rc = 0;
		if (!(w->st = fb_stream_new(size, decide)))
			return ow_err(OW_ENOMEM, "%s: member %s: out of memory", a->label, name);
		for (int i = 0; ag && i < ag->n && !rc; i++) /* what the last pass missed */
			rc = fb_stream_want(w->st, ag->off[i], ag->len[i]);
		return rc ? rc : OW_MEMBER_READ;
	}
	int rc = hold_whole(w, name, size);
	return rc ? rc : OW_MEMBER_READ;
}

static int add_listed(struct wpass *w, const char *name, uint64_t len, int scanned,
		      struct ow_fatbin *fb)
{
	struct wshared *sh = w->sh;
	const struct au_again *ag = sh->second ? au_again_find(&sh->again, name) : NULL;
	char *note = ag ? au_again_note(ag) : NULL;
	if (ag && !note) {
		ow_fatbin_free(fb);
		return ow_err(OW_ENOMEM, "%s: out of memory", sh->a->label);
	}
	pthread_mutex_lock(&sh->mu);
	sh->a->bytes_in += len;
	int rc = au_add_lib(sh->a, name, len, scanned, fb);
	if (!rc)
		sh->a->libs[sh->a->n_libs - 1].reread = note;
	pthread_mutex_unlock(&sh->mu);
	if (rc)
		free(note);
	return rc;
}

static int w_finish_whole(struct wpass *w, const char *name)
{
	struct ow_audit *a = w->sh->a;
	struct input in = {.buf = w->buf ? w->buf : (const void *)"", .fd = -1, .size = w->len,
	                   .vendor = ow_audit_is_vendor(name)};
	struct ow_fatbin *fb;
	int scanned;
	uint64_t bytes;
	int rc = list_library(&in, w->sh->o, &fb, &scanned, &bytes);
	size_t len = w->len;
	budget_give(w);
	if (rc)
		return ow_err_prefix(rc, "%s: member %s: ", a->label, name);
	return add_listed(w, name, len, scanned, fb);
}

/* A streamed member: listed from what the stream kept; one whose listing
 * wanted a byte that was not kept goes to the next pass, which streams it
 * again keeping those bytes too (or, for a miss without a range, holds it
 * whole: auditagain.c). */
static int w_finish_stream(struct wpass *w, const char *name)
{
	struct wshared *sh = w->sh;
	struct fb_sparse *sp;
	int rc = fb_stream_finish(w->st, &sp);
	struct ow_fatbin *fb = NULL;
	int scanned = 0;
	uint64_t bytes;
	if (!rc) {
		struct input in = {.sp = sp, .fd = -1, .size = w->size, .vendor = ow_audit_is_vendor(name)};
		rc = list_library(&in, sh->o, &fb, &scanned, &bytes);
	}
	if (!rc || !sp || !sp->missed) {
		budget_give(w);
		if (rc)
			return ow_err_prefix(rc, "%s: member %s: ", sh->a->label, name);
		return add_listed(w, name, w->size, scanned, fb);
	}
	ow_fatbin_free(fb);
	char *why = strdup(ow_err_detail());
	ow_err_clear();
	pthread_mutex_lock(&sh->mu);
	rc = why ? au_again_push(&sh->next, name, sh->second ? au_again_find(&sh->again, name)
	                                                     : NULL, sp, why)
	         : ow_err(OW_ENOMEM, "%s: out of memory", sh->a->label);
	pthread_mutex_unlock(&sh->mu);
	free(why);
	budget_give(w);
	return rc;
}

/* The stream found an input it does not take: hold it whole from here. */
static int stream_to_whole(struct wpass *w, const char *name)
{
	size_t n;
	const uint8_t *head = fb_stream_head(w->st, &n);
	uint8_t *copy = malloc(n ? n : 1);
	if (!copy)
		return ow_err(OW_ENOMEM, "%s: member %s: out of memory", w->sh->a->label, name);
	memcpy(copy, head, n);
	fb_stream_free(w->st);
	w->st = NULL;
	int rc = hold_whole(w, name, w->size);
	if (!rc) {
		memcpy(w->buf, copy, n);
		w->len = n;
	}
	free(copy);
	return rc;
}

static int w_data(const char *name, const void *data, size_t len, void *ud)
{
	struct wpass *w = ud;
	if (w->st && !data)
		return w_finish_stream(w, name);
	if (!data)
		return w_finish_whole(w, name);
	if (w->st) {
		int rc = fb_stream_feed(w->st, data, len);
		if (!rc && fb_stream_whole(w->st) == 1)
			rc = stream_to_whole(w, name);
		return rc ? ow_err_prefix(rc, "%s: member %s: ", w->sh->a->label, name) : 0;
	}
	if (len > w->cap - w->len)
		return ow_err(OW_EZIP, "%s: member %s is longer than its declared size",
		              w->sh->a->label, name);
	memcpy(w->buf + w->len, data, len);
	w->len += len;
	return 0;
}

/* Passes: --jobs, else the cores, at most 16. */
static int wheel_jobs(const struct ow_audit_opts *o)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int j = o->jobs > 0 ? o->jobs : cpus > 0 ? (int)cpus : 1;
	return j > MAX_WHEEL_JOBS ? MAX_WHEEL_JOBS : j;
}

static int wheel_passes(ow_wheel *wh, struct wshared *sh, int jobs)
{
	struct wpass w[MAX_WHEEL_JOBS];
	void *uds[MAX_WHEEL_JOBS];
	memset(w, 0, sizeof w);
	for (int t = 0; t < jobs; t++) {
		w[t].sh = sh;
		uds[t] = &w[t];
	}
	int rc = sh->second
		 ? ow_wheel_each_member_jobs(wh, jobs, w_pick_again, sh, w_filter, w_data, uds)
		 : ow_wheel_each_member_jobs(wh, jobs, w_pick, NULL, w_filter, w_data, uds);
	for (int t = 0; t < jobs; t++) {
		budget_give(&w[t]);
		free(w[t].buf);
	}
	return rc;
}

static int audit_wheel_fd(struct ow_audit *a, int fd, const struct ow_audit_opts *o)
{
	ow_wheel *wh;
	int rc = ow_wheel_open_fd(fd, a->label, NULL, &wh);
	if (rc)
		return rc;
	int jobs = wheel_jobs(o);
	struct wshared sh = {.a = a, .o = o, .budget = WHEEL_MEM_BUDGET};
	pthread_mutex_init(&sh.mu, NULL);
	pthread_cond_init(&sh.freed, NULL);
	rc = wheel_passes(wh, &sh, jobs);
	/* each pass adds a kept range to a member or holds it whole: they end */
	while (!rc && sh.next.n) {
		au_again_free(&sh.again);
		sh.again = sh.next;
		sh.next = (struct au_again_list){0};
		sh.second = 1;
		rc = wheel_passes(wh, &sh, jobs);
	}
	au_again_free(&sh.again);
	au_again_free(&sh.next);
	pthread_cond_destroy(&sh.freed);
	pthread_mutex_destroy(&sh.mu);
	ow_wheel_close(wh);
	return rc;
}

/* ---- files and directories ---------------------------------------------------- */

static int is_zip(int fd)
{
	unsigned char m[4];
	return pread(fd, m, sizeof m, 0) == (ssize_t)sizeof m && !memcmp(m, "PK\3\4", 4);
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b && b[1] ? b + 1 : path;
}

/* A wheel (by its zip signature) or a library, open on fd. */
static int audit_fd(int fd, const char *source, const char *label,
                    const struct ow_audit_opts *o, struct ow_audit **out)
{
	int wheel = is_zip(fd);
	size_t ln = strlen(label);
	if (!wheel && ln >= 4 && !strcasecmp(label + ln - 4, ".whl")) {
		struct stat st;
		int empty = fstat(fd, &st) == 0 && st.st_size == 0;
		return ow_err(OW_EZIP, "%s: not a zip archive (%s), so not a wheel — the download is "
		              "damaged or not what its name says; fetch it again", label,
		              empty ? "an empty file" : "no zip signature \"PK\\3\\4\" at its start");
	}
	int rc = au_new(source, wheel ? base_name(label) : label,
	                      wheel ? OW_AUDIT_WHEEL : OW_AUDIT_LIBRARY, out);
	if (rc)
		return rc;
	rc = wheel ? audit_wheel_fd(*out, fd, o) : audit_lib_fd(*out, fd, source, label, o);
	if (rc) {
		ow_audit_free(*out);
		*out = NULL;
		return rc;
	}
	au_sort(*out);
	return 0;
}

static int open_ro(const char *path, int *fd)
{
	struct stat st;
	*fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (*fd < 0)
		return ow_err(errno == ENOENT ? OW_ENOENT : OW_EIO, "%s: %s", path, strerror(errno));
	if (fstat(*fd, &st) == 0 && S_ISREG(st.st_mode))
		return 0;
	close(*fd);
	*fd = -1;
	return ow_err(OW_EPOLICY, "%s: no longer a regular file — audit it again", path);
}

static int audit_file_in_dir(struct ow_audit *a, const char *path, const char *rel,
                             const struct ow_audit_opts *o)
{
	int fd, rc = open_ro(path, &fd);
	if (rc)
		return rc;
	rc = audit_lib_fd(a, fd, path, rel, o);
	close(fd);
	return rc;
}

struct walk {
	struct ow_audit *a;
	const struct ow_audit_opts *o;
	size_t root_len;
};

static int walk_dir(struct walk *w, const char *dir, int depth);

static int walk_entry(struct walk *w, const char *dir, const char *name, int depth)
{
	char *p;
	struct stat st;
	if (asprintf(&p, "%s/%s", dir, name) < 0)
		return ow_err(OW_ENOMEM, "audit: out of memory");
	int rc = 0;
	if (lstat(p, &st) != 0)
		rc = ow_err(OW_EIO, "%s: %s", p, strerror(errno));
	else if (S_ISDIR(st.st_mode))
		rc = walk_dir(w, p, depth + 1);
	else if (S_ISREG(st.st_mode) && ow_audit_is_candidate(name))
		rc = audit_file_in_dir(w->a, p, p + w->root_len, w->o);
	else if (S_ISREG(st.st_mode))
		w->a->n_skipped++;
	free(p);
	return rc;
}

/* Symlinks are not followed: site-packages links libfoo.so -> libfoo.so.1. */
static int walk_dir(struct walk *w, const char *dir, int depth)
{
	if (depth > MAX_DEPTH)
		return ow_err(OW_ETOOBIG, "%s: directories nested more than %d deep", dir, MAX_DEPTH);
	DIR *d = opendir(dir);
	if (!d)
		return ow_err(errno == ENOENT ? OW_ENOENT : OW_EIO, "%s: %s", dir, strerror(errno));
	struct dirent *de;
	int rc = 0;
	while (!rc && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			rc = walk_entry(w, dir, de->d_name, depth);
	closedir(d);
	return rc;
}

static int audit_dir(const char *path, const struct ow_audit_opts *o, struct ow_audit **out)
{
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	char *root = strndup(path, n);
	int rc = root ? au_new(path, root, OW_AUDIT_DIRECTORY, out)
	              : ow_err(OW_ENOMEM, "audit: out of memory");
	if (!rc) {
		struct walk w = {.a = *out, .o = o, .root_len = n + (n > 1 || root[0] != '/')};
		rc = walk_dir(&w, root, 0);
		au_sort(*out);
	}
	free(root);
	if (rc && *out) {
		ow_audit_free(*out);
		*out = NULL;
	}
	return rc;
}

static const struct ow_audit_opts no_opts;

int ow_audit_path(const char *path, const struct ow_audit_opts *o, struct ow_audit **out)
{
	struct stat st;
	*out = NULL;
	o = o ? o : &no_opts;
	if (stat(path, &st) != 0)
		return ow_err(errno == ENOENT ? OW_ENOENT : OW_EIO, "%s: %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return audit_dir(path, o, out);
	int fd, rc = ow_open_regular(path, &fd, &st);
	if (rc == OW_EPOLICY) {
		char why[512];
		snprintf(why, sizeof why, "%s", ow_err_detail());
		return ow_err(rc, "%s — give a wheel, a shared library or a directory", why);
	}
	if (rc)
		return rc;
	rc = audit_fd(fd, path, path, o, out);
	close(fd);
	return rc;
}

/* ---- store objects ------------------------------------------------------------- */

static int audit_object_fresh(ow_store *s, const char *hex, const char *ref, const char *label,
                              const struct ow_audit_opts *o, struct ow_audit **out)
{
	int fd;
	int rc = ow_store_open_object(s, hex, &fd);
	if (rc)
		return rc;
	/* what is cached must hold for every device: every module looked into */
	struct ow_audit_opts all = *o;
	if (!o->no_cache)
		all.cc = all.driver = all.no_kernels = 0;
	rc = audit_fd(fd, ref, label, &all, out);
	close(fd);
	if (!rc) {
		memcpy((*out)->sha256, hex, 65);
		if (!o->no_cache)
			rc = au_cache_save(s, *out, o->scan);
	}
	return rc;
}

static int audit_object_cached(ow_store *s, const char *hex, const char *ref, const char *label,
                               const struct ow_audit_opts *o, struct ow_audit **out)
{
	int rc = au_new(ref, label, OW_AUDIT_LIBRARY, out);
	if (!rc)
		rc = au_cache_load(s, hex, o->scan, *out);
	if (rc == 1) {
		memcpy((*out)->sha256, hex, 65);
		(*out)->from_cache = 1;
		if ((*out)->kind == OW_AUDIT_WHEEL) {
			free((*out)->label);
			/* analyzer: kept in (*out)->label, freed with the audit */
			(*out)->label = strdup(base_name(label));
		}
		au_sort(*out);
		return (*out)->label ? 1 : ow_err(OW_ENOMEM, "audit: out of memory");
	}
	ow_audit_free(*out);
	*out = NULL;
	return rc;
}

int ow_audit_object(ow_store *s, const char *ref, const struct ow_audit_opts *o,
                    struct ow_audit **out)
{
	char hex[65], label[1024];
	*out = NULL;
	o = o ? o : &no_opts;
	int rc = au_resolve(s, ref, hex, label, sizeof label);
	if (rc)
		return rc;
	rc = o->no_cache ? 0 : audit_object_cached(s, hex, ref, label, o, out);
	if (rc < 0)
		return rc;
	return rc == 1 ? 0 : audit_object_fresh(s, hex, ref, label, o, out);
}

int ow_audit_any(ow_store *s, const char *ref, const struct ow_audit_opts *o,
                 struct ow_audit **out)
{
	struct stat st;
	if (stat(ref, &st) == 0 || !s)
		return ow_audit_path(ref, o, out);
	return ow_audit_object(s, ref, o, out);
}
