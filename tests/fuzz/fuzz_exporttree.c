/* fuzz_exporttree.c - export into a directory the input has filled with
 * hostile things: files, links to directories and files (inside and outside
 * the tree), FIFOs, non-UTF-8 names, under the names an export uses and
 * others.  Asserted every run:
 *   - nothing outside DIR changed (a sentinel tree beside it, compared);
 *   - no regular file was removed unless the previous, signed export listed
 *     it with the same bytes (or it is an export temp file), and a file the
 *     new export does not write keeps its bytes;
 *   - every link and FIFO that was there is still there, untouched;
 *   - a refused export changed nothing but (at most) the old signature;
 *   - a successful export passes `check`.
 * A tiny store (two wheels, one .metadata) and a previous signed export of
 * both are made once per process; each run copies that export, plants the
 * input's entries and exports one or both wheels.
 *
 * Input: a list of ops, 3+ bytes each: kind, name selector, parameter. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "offwheel/export.h"
#include "exportint.h"
#include "offwheel/signify.h"
#include "store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_OPS 24
#define MAX_ENTRIES 512

/* snprintf that stops the run when the text does not fit: a fuzz run must
 * never act on a silently cut path */
__attribute__((format(printf, 3, 4))) static void fit(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(buf, n, fmt, ap);
	va_end(ap);
	if (k < 0 || (size_t)k >= n)
		abort();
}

static char g_base[512];
static ow_store *g_store;
static struct ow_signify_sec g_key;
static struct ow_export_item g_items[2];
static int64_t g_now = 1700000000;

/* ---- a snapshot of a tree, links never followed ---- */

struct entry {
	char path[600];
	mode_t type;
	uint64_t hash; /* content (files) or target (links), FNV-1a */
};
struct snap {
	struct entry v[MAX_ENTRIES];
	size_t n;
	int overflow;
};

static uint64_t fnv(const void *p, size_t n, uint64_t h)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

static uint64_t file_hash(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
	uint64_t h = 1469598103934665603ull;
	char buf[4096];
	ssize_t n;
	if (fd < 0)
		return 0;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		h = fnv(buf, (size_t)n, h);
	close(fd);
	return h;
}

static struct snap *g_snap;
static size_t g_prefix;

static int snap_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)flag, (void)ftw;
	struct snap *s = g_snap;
	if (s->n == MAX_ENTRIES) {
		s->overflow = 1;
		return 0;
	}
	struct entry *e = &s->v[s->n++];
	snprintf(e->path, sizeof e->path, "%s", path + g_prefix);
	e->type = st->st_mode & S_IFMT;
	e->hash = 0;
	if (S_ISREG(st->st_mode))
		e->hash = file_hash(path);
	else if (S_ISLNK(st->st_mode)) {
		char t[4096];
		ssize_t n = readlink(path, t, sizeof t);
		e->hash = fnv(t, n > 0 ? (size_t)n : 0, 1);
	}
	return 0;
}

static void snapshot(const char *root, struct snap *s)
{
	s->n = 0;
	s->overflow = 0;
	g_snap = s;
	g_prefix = strlen(root);
	nftw(root, snap_one, 16, FTW_PHYS);
}

static const struct entry *snap_find(const struct snap *s, const char *path)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].path, path))
			return &s->v[i];
	return NULL;
}

static void must(int ok, const char *what, const char *path)
{
	if (!ok) {
		fprintf(stderr, "fuzz_exporttree: %s: %s\n", what, path);
		abort();
	}
}

/* ---- helpers ---- */

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static void rmtree(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void write_file(const char *path, const void *data, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);
	if (fd >= 0) {
		(void)!write(fd, data, n);
		close(fd);
	}
}

static int cp_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)ftw;
	char dst[8192], *buf;
	size_t n;
	snprintf(dst, sizeof dst, "%s/tmpl-copy%s", g_base, path + g_prefix);
	if (flag == FTW_D)
		return mkdir(dst, 0755) && errno != EEXIST;
	if (!S_ISREG(st->st_mode) || ow_read_small_file(path, 1 << 20, &buf, &n))
		return 0;
	write_file(dst, buf, n);
	free(buf);
	return 0;
}

/* base/prev (the signed export of both wheels) -> base/tmpl-copy, renamed to dir */
static void copy_prev(const char *dir)
{
	char src[1024], tmp[1024];
	snprintf(src, sizeof src, "%s/prev", g_base);
	snprintf(tmp, sizeof tmp, "%s/tmpl-copy", g_base);
	g_prefix = strlen(src);
	nftw(src, cp_one, 16, FTW_PHYS);
	rename(tmp, dir);
}

static int make_plan(struct ow_export_plan *p, int which)
{
	memset(p, 0, sizeof *p);
	p->items = calloc(2, sizeof *p->items);
	p->sets = calloc(1, sizeof *p->sets);
	if (!p->items || !p->sets)
		return -1;
	p->nsets = 1;
	p->sets[0].id = 1;
	p->sets[0].target = strdup("linux x86_64 cpu");
	p->sets[0].req_name = strdup("cpu");
	p->sets[0].members = calloc(2, sizeof(size_t));
	for (int i = 0; i < 2; i++) {
		if (!(which & (1 << i)))
			continue;
		struct ow_export_item *it = &p->items[p->n];
		*it = g_items[i];
		it->filename = strdup(g_items[i].filename);
		it->project = strdup(g_items[i].project);
		it->version = strdup(g_items[i].version);
		it->requires_python = NULL;
		p->sets[0].members[p->sets[0].n++] = p->n++;
	}
	return 0;
}

static int export_into(const char *dir, int which, struct ow_export_report *r)
{
	struct ow_export_plan p;
	if (make_plan(&p, which))
		abort();
	struct ow_export_opts o = {.dir = dir, .key = &g_key, .expires_days = 30, .now = ++g_now,
	                           .jobs = 1};
	int rc = ow_export_run(g_store, &p, &o, r);
	ow_export_plan_dispose(&p);
	return rc;
}

static int put(const char *text, struct ow_export_item *it, int meta)
{
	char hex[OW_SHA256_HEX];
	int rc = ow_store_put_buf(g_store, text, strlen(text), NULL, meta ? "metadata" : "wheel", hex);
	if (rc)
		return rc;
	snprintf(meta ? it->meta_object : it->object, OW_SHA256_HEX, "%s", hex);
	*(meta ? &it->meta_size : &it->size) = strlen(text);
	return 0;
}

static void cleanup(void)
{
	ow_store_close(g_store);
	g_store = NULL;
	rmtree(g_base);
}

static void init_once(void)
{
	const char *t = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
	snprintf(g_base, sizeof g_base, "%s/ow-fuzz-exporttree-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(g_base))
		abort();
	atexit(cleanup);
	char home[4200], prev[4200];
	struct ow_signify_pub pub;
	snprintf(home, sizeof home, "%s/home", g_base);
	snprintf(prev, sizeof prev, "%s/prev", g_base);
	g_items[0] = (struct ow_export_item){.filename = (char *)"demo-1.0-py3-none-any.whl",
	                                     .project = (char *)"demo", .version = (char *)"1.0"};
	g_items[1] = (struct ow_export_item){.filename = (char *)"other_pkg-2.0-py3-none-any.whl",
	                                     .project = (char *)"other-pkg", .version = (char *)"2.0"};
	struct ow_export_report r;
	if (ow_store_open(home, OW_STORE_WRITE, 0, "fuzz", &g_store) ||
	    ow_signify_keygen(&g_key, &pub) || put("PK demo wheel bytes", &g_items[0], 0) ||
	    put("Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n", &g_items[0], 1) ||
	    put("PK other wheel bytes", &g_items[1], 0) || export_into(prev, 3, &r)) {
		fprintf(stderr, "fuzz_exporttree: setup failed: %s\n", ow_err_detail());
		abort();
	}
}

/* ---- the input's tree ---- */

static const char *const names[] = {
	"wheels", "simple", "requirements", "simple/demo", "simple/other-pkg", "simple/new",
	"wheels/demo-1.0-py3-none-any.whl", "wheels/demo-1.0-py3-none-any.whl.metadata",
	"wheels/other_pkg-2.0-py3-none-any.whl", "wheels/my-own-1.0-py3-none-any.whl",
	"requirements/cpu.txt", "requirements/dev.txt", "simple/index.html",
	"simple/demo/index.html", "simple/other-pkg/index.html", "manifest.json", "SHA256SUMS",
	"SHA256SUMS.sig", "INSTALL.txt", ".ow-tmp-abc123", "wheels/.ow-tmp-0123456789ab",
	"photo.jpg", "simple/new/index.html",
};
static const char *const targets[] = {"../outside", "../outside/sub", "../outside/f.txt", "..",
                                      ".", "wheels", "/nonexistent"};

/* A name from the table, or raw bytes (non-UTF-8 too) under a table dir. */
static void pick_name(const uint8_t *op, const uint8_t *raw, size_t rn, char *out, size_t n)
{
	size_t k = sizeof names / sizeof names[0];
	if (op[1] < 200 || !rn) {
		snprintf(out, n, "%s", names[op[1] % k]);
		return;
	}
	char comp[20];
	size_t m = 0;
	for (size_t i = 0; i < rn && m < 16; i++)
		if (raw[i] != '/' && raw[i] != 0)
			comp[m++] = (char)raw[i];
	comp[m] = '\0';
	if (!m || !strcmp(comp, ".") || !strcmp(comp, ".."))
		snprintf(comp, sizeof comp, "x");
	snprintf(out, n, "%s/%s", names[op[2] % 3], comp);
}

static void mkparents(const char *path)
{
	char p[8192];
	fit(p, sizeof p, "%s", path);
	for (char *s = strchr(p + strlen(g_base) + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
}

/* Planting through a link planted before would reach outside DIR (or the
 * store): such an op is skipped. */
static int through_link(const char *dir, const char *rel)
{
	char p[4800];
	struct stat st;
	for (const char *c = rel; (c = strchr(c, '/')); c++) {
		fit(p, sizeof p, "%s/%.*s", dir, (int)(c - rel), rel);
		if (lstat(p, &st) == 0 && !S_ISDIR(st.st_mode))
			return 1;
	}
	return 0;
}

static void apply_op(const char *dir, const uint8_t *op, const uint8_t *raw, size_t rn)
{
	char rel[600], path[4800];
	pick_name(op, raw, rn, rel, sizeof rel);
	if (through_link(dir, rel))
		return;
	fit(path, sizeof path, "%s/%s", dir, rel);
	if (op[0] % 7 != 6)
		mkparents(path);
	switch (op[0] % 7) {
	case 0: mkdir(path, 0755); break;
	case 1: unlink(path), write_file(path, raw, rn); break;
	case 2:
	case 3: /* a link that cannot be made (the name is taken) is fine too */
		unlink(path);
		if (symlink(targets[op[2] % (sizeof targets / sizeof targets[0])], path) != 0)
			break;
		break;
	case 4: unlink(path), mkfifo(path, 0644); break;
	case 5: write_file(path, "changed", 7); break;
	default: rmtree(path);
	}
}

/* ---- the invariants ---- */

enum outcome { EXPORTED, REFUSED, FAILED };

static void check_dir_after(const struct snap *before, const struct snap *after,
                            const struct ex_files *prev, const struct snap *prev_snap,
                            enum outcome how)
{
	for (size_t i = 0; i < before->n; i++) {
		const struct entry *b = &before->v[i], *a = snap_find(after, b->path);
		const char *rel = b->path[0] == '/' ? b->path + 1 : b->path;
		const char *base = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
		if (!*rel || b->type == S_IFDIR)
			continue;
		if (b->type != S_IFREG) { /* links, FIFOs: an export never goes on with them */
			must(how == REFUSED, "went on past a link or FIFO", rel);
			must(a && a->type == b->type && a->hash == b->hash, "link/FIFO changed", rel);
			continue;
		}
		if (how == REFUSED) { /* before anything changed: not even the signature */
			must(a && a->type == S_IFREG && a->hash == b->hash, "refused export changed", rel);
			continue;
		}
		if (!strcmp(rel, OW_EXPORT_SIG) || (a && a->type == S_IFREG))
			continue; /* kept, or replaced by an export file of the same name */
		/* removed: only a listed file with the bytes it was listed with */
		const struct entry *p = snap_find(prev_snap, b->path);
		must(ex_is_tmp_name(base) ||
		         (ex_files_find(prev, rel) && p && p->hash == b->hash),
		     "removed a file the previous signed export did not list unchanged", rel);
	}
}

static void check_valid(const char *dir)
{
	char state[4200];
	struct ow_signify_pub pub;
	struct ow_check_report r;
	snprintf(state, sizeof state, "%s/state.json", g_base);
	unlink(state);
	ow_signify_pub_of(&g_key, &pub);
	struct ow_check_opts o = {.dir = dir, .pub = &pub, .state_path = state, .jobs = 1,
	                          .now = g_now};
	int rc = ow_export_check(&o, &r);
	for (size_t i = 0; rc && i < r.n; i++)
		fprintf(stderr, "  %s %s: %s\n", r.problems[i].kind,
		        r.problems[i].path ? r.problems[i].path : "", r.problems[i].detail);
	ow_check_report_dispose(&r);
	must(rc == 0, "a successful export does not pass check", dir);
}

static struct snap g_before, g_after, g_out0, g_out1, g_prev;
static struct ex_files g_prev_list;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!g_store) {
		init_once();
		char prev[4200], *t;
		size_t n;
		snprintf(prev, sizeof prev, "%s/prev/SHA256SUMS", g_base);
		if (ow_read_small_file(prev, 1 << 20, &t, &n) || ex_parse_sums(t, n, &g_prev_list))
			abort();
		free(t);
		ex_files_sort(&g_prev_list);
		snprintf(prev, sizeof prev, "%s/prev", g_base);
		snapshot(prev, &g_prev);
	}
	if (size < 1 || size > 4096)
		return 0;
	char dir[4200], out[4200];
	snprintf(dir, sizeof dir, "%s/DIR", g_base);
	snprintf(out, sizeof out, "%s/outside", g_base);
	rmtree(dir);
	rmtree(out);
	mkdir(out, 0755);
	char sub[4300];
	fit(sub, sizeof sub, "%s/sub", out);
	mkdir(sub, 0755);
	fit(sub, sizeof sub, "%s/f.txt", out);
	write_file(sub, "sentinel", 8);
	fit(sub, sizeof sub, "%s/sub/index.html", out);
	write_file(sub, "<html>keep</html>", 17);
	int which = 1 + data[0] % 3, fresh = data[0] & 0x80;
	if (fresh)
		mkdir(dir, 0755);
	else
		copy_prev(dir);
	size_t pos = 1;
	for (int k = 0; k < MAX_OPS && pos + 3 <= size; k++) {
		size_t rn = data[pos + 2] % 12;
		if (pos + 3 + rn > size)
			rn = size - pos - 3;
		apply_op(dir, data + pos, data + pos + 3, rn);
		pos += 3 + rn;
	}
	snapshot(dir, &g_before);
	snapshot(out, &g_out0);
	struct ow_export_report r;
	int rc = export_into(dir, which, &r);
	if (getenv("OW_FUZZ_VERBOSE"))
		fprintf(stderr, "export: rc %d, removed %zu: %s\n", rc, r.removed,
		        rc ? ow_err_detail() : "ok");
	snapshot(dir, &g_after);
	snapshot(out, &g_out1);
	must(g_out0.n == g_out1.n, "an entry appeared or vanished outside DIR", out);
	for (size_t i = 0; i < g_out0.n; i++) {
		const struct entry *b = &g_out0.v[i], *a = snap_find(&g_out1, b->path);
		must(a && a->type == b->type && a->hash == b->hash, "changed outside DIR", b->path);
	}
	enum outcome how = !rc ? EXPORTED : strstr(ow_err_detail(), "nothing was changed") ? REFUSED
	                                                                                  : FAILED;
	check_dir_after(&g_before, &g_after, fresh ? &(struct ex_files){0} : &g_prev_list, &g_prev,
	                how);
	if (rc == 0)
		check_valid(dir);
	return 0;
}
