/* export.c - write an export tree: refuse unsafe names, drop the old
 * signature, copy wheels while hashing, generate pages and lists, remove what
 * the previous export listed and this one does not, then manifest,
 * SHA256SUMS and the signature last. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db.h"
#include "offwheel/error.h"
#include "event.h"
#include "exportint.h"
#include "fsbeneath.h"
#include "fsutil.h"
#include "pool.h"
#include "s3.h"
#include "store.h"

static int check_names(const struct ow_export_plan *p, const struct ow_export_opts *o,
                       const char *fs)
{
	int fat32 = o->fat32 || !strcmp(fs, "fat32");
	for (size_t i = 0; i < p->n; i++) {
		const struct ow_export_item *it = &p->items[i];
		if (!ow_safe_component(it->filename) || !strncmp(it->filename, ".ow-", 4))
			return ow_err(OW_EPOLICY, "%s: not a name every file system accepts (no '/', '\\', "
			                          "':' or control characters)", it->filename);
		if (!ow_safe_component(it->project))
			return ow_err(OW_EPOLICY, "%s: unsafe project name '%s'", it->filename, it->project);
		if (fat32 && (it->size > OW_FAT32_MAX_FILE || it->meta_size > OW_FAT32_MAX_FILE))
			return ow_err(OW_EPOLICY, "%s: %llu bytes — FAT32 stores at most 4 GiB - 1 per "
			                          "file; format the stick as exFAT (or export elsewhere)",
			              it->filename, (unsigned long long)it->size);
	}
	return 0;
}

/* Every path the export will hold: refuse case collisions up front. */
static int check_case(const struct ow_export_plan *p)
{
	struct ex_files f = {0};
	char rel[PATH_MAX];
	int rc = 0;
	for (size_t i = 0; !rc && i < p->n; i++) {
		snprintf(rel, sizeof rel, "wheels/%s", p->items[i].filename);
		rc = ex_files_add(&f, rel, 0, NULL);
		snprintf(rel, sizeof rel, "wheels/%s.metadata", p->items[i].filename);
		if (!rc && p->items[i].meta_object[0])
			rc = ex_files_add(&f, rel, 0, NULL);
	}
	for (size_t i = 0; !rc && i < p->nsets; i++) {
		snprintf(rel, sizeof rel, "requirements/%s.txt", p->sets[i].req_name);
		rc = ex_files_add(&f, rel, 0, NULL);
		snprintf(rel, sizeof rel, "pylock.%s.toml", p->sets[i].req_name);
		if (!rc)
			rc = ex_files_add(&f, rel, 0, NULL);
	}
	const char *other = NULL, *hit = rc ? NULL : ex_files_case_clash(&f, &other);
	if (hit && strcmp(hit, other))
		rc = ow_err(OW_EPOLICY, "'%s' and '%s' differ only in case: FAT/exFAT sticks and "
		                        "Windows/macOS cannot hold both", other, hit);
	ex_files_dispose(&f);
	return rc;
}

/* Every path the new export writes (sorted): what the walk may replace. */
static int wanted_paths(const struct ow_export_plan *p, const struct ex_meta *m,
                        struct ex_files *f)
{
	char rel[PATH_MAX];
	const char *tool = m->tool;
	int rc = ex_files_add(f, "simple/index.html", 0, NULL);
	for (size_t i = 0; !rc && i < m->nextras; i++)
		rc = ex_files_add(f, m->extras[i].path, 0, NULL);
	if (!rc)
		rc = ex_files_add(f, "wheels/index.html", 0, NULL);
	snprintf(rel, sizeof rel, "tools/%s", tool ? tool : "");
	if (!rc && tool)
		rc = ex_files_add(f, rel, 0, NULL);
	for (size_t i = 0; !rc && i < p->n; i++) {
		snprintf(rel, sizeof rel, "wheels/%s", p->items[i].filename);
		rc = ex_files_add(f, rel, 0, NULL);
		snprintf(rel, sizeof rel, "wheels/%s.metadata", p->items[i].filename);
		if (!rc && p->items[i].meta_object[0])
			rc = ex_files_add(f, rel, 0, NULL);
		snprintf(rel, sizeof rel, "simple/%s/index.html", p->items[i].project);
		if (!rc)
			rc = ex_files_add(f, rel, 0, NULL);
	}
	for (size_t i = 0; !rc && i < p->nsets; i++) {
		snprintf(rel, sizeof rel, "requirements/%s.txt", p->sets[i].req_name);
		rc = ex_files_add(f, rel, 0, NULL);
		snprintf(rel, sizeof rel, "pylock.%s.toml", p->sets[i].req_name);
		if (!rc)
			rc = ex_files_add(f, rel, 0, NULL);
	}
	ex_files_sort(f);
	return rc;
}

/* One export run: the directory (opened once) and what it found there. */
struct xrun {
	const char *dir; /* for messages */
	int root;        /* O_DIRECTORY fd of dir */
	struct ex_prev prev;
	struct ex_files remove;
	/* Undo while only new wheels were added (the copy phase): the old
	 * signature's bytes, and whether wheels/ was made by this run. */
	char oldsig[4096];
	ssize_t oldsig_len; /* -1: there was none */
	int undoable, made_wheels;
	const struct ow_str *tool; /* the bytes of opts.tool, read before anything changed */
	struct ex_s3run *s3;       /* publishing to an object store: texts go there */
};

/* The old signature goes first: from here on the tree is not valid until
 * the new signature is written.  Its bytes are kept, so that an export that
 * fails while copying can put the tree back as it was. */
static int drop_signature(struct xrun *x)
{
	int root = x->root;
	const char *dir = x->dir;
	x->oldsig_len = -1;
	int fd = openat(root, OW_EXPORT_SIG, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd >= 0) {
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < (off_t)sizeof x->oldsig)
			x->oldsig_len = read(fd, x->oldsig, sizeof x->oldsig);
		close(fd);
	}
	if (unlinkat(root, OW_EXPORT_SIG, 0) != 0 && errno != ENOENT)
		return ow_err(OW_EIO, "%s/%s: cannot remove the old signature: %s", dir, OW_EXPORT_SIG,
		              strerror(errno));
	if (fsync(root) != 0 && errno != EINVAL)
		return ow_err(OW_EIO, "%s: fsync of the directory failed: %s", dir, strerror(errno));
	return 0;
}

static int seq_out_of_range(const char *what, int64_t seq)
{
	return ow_err(OW_ERANGE, "%s sequence %lld is out of range (1 to 2^53) — the record was "
	                         "tampered with; export with a new key (offwheel keygen)",
	              what, (long long)seq);
}

/* The export's name: --name, else the one the stick's signed manifest has
 * (a stick mounted elsewhere stays the same stick), else DIR's last
 * component. */
static int choose_name(const struct ow_export_opts *o, const struct ex_prev *prev,
                       const char *where, struct ex_meta *m)
{
	if (o->name || prev->signed_name[0]) {
		snprintf(m->name, sizeof m->name, "%s", o->name ? o->name : prev->signed_name);
		return 0;
	}
	return ow_export_default_name(where, m->name);
}

/* Above the workspace's record for the key and name, and the stick's
 * sequence only when its signature verified with that key (never unsigned
 * bytes); by default also at least the time of the export in Unix seconds,
 * so that workspaces sharing a key stay in order. */
static int next_sequence(ow_store *s, const struct ex_prev *prev, const struct ex_meta *m,
                         int64_t asked, int64_t *seq)
{
	ow_stmt *st = ow_db_stmt(ow_store_db(s), OW_SQL_EXP_SEQ_MAX);
	if (!st)
		return OW_EDB;
	ow_stmt_text(st, 1, *m->key_id ? m->key_id : NULL);
	ow_stmt_text(st, 2, m->name);
	int row = ow_stmt_step(st);
	if (row < 0)
		return row;
	int64_t db = row ? ow_col_int(st, 0) : 0, stick = prev->signed_sequence;
	if (db < 0 || db > OW_EXPORT_SEQ_MAX)
		return seq_out_of_range("the workspace's last", db);
	if (stick < 0 || stick > OW_EXPORT_SEQ_MAX)
		return seq_out_of_range("the stick's signed", stick);
	int64_t last = db > stick ? db : stick;
	if (asked && asked <= last)
		return ow_err(OW_EINVAL, "--sequence %lld: not above %lld, the last sequence %s for '%s' "
		                         "with key %s — targets would refuse it as a rollback; give "
		                         "%lld or more",
		              (long long)asked, (long long)last,
		              db >= stick ? "this workspace signed" : "signed on this stick", m->name,
		              *m->key_id ? m->key_id : "(unsigned)", (long long)last + 1);
	if (asked)
		*seq = asked;
	else /* a clock behind the last export still goes up */
		*seq = last + 1 > m->created ? last + 1 : m->created;
	if (*seq > OW_EXPORT_SEQ_MAX)
		return seq_out_of_range("the next", *seq);
	return 0;
}

/* One file of wheels/: copied (or found intact) by a worker; the report and
 * the file list are filled afterwards, in plan order. */
struct copy_job {
	const char *hex;
	uint64_t size;
	char name[272]; /* a file name (<= 255) + ".metadata" */
	int rc, copied;
	char *err; /* the worker's error detail */
};

struct copy_all {
	ow_store *s;
	int wdir;
	struct copy_job *v;
	uint64_t done, total;
	pthread_mutex_t mu;
};

static int copy_worker(void *ud, size_t i)
{
	struct copy_all *a = ud;
	struct copy_job *j = &a->v[i];
	j->rc = ex_copy_object(a->s, j->hex, j->size, a->wdir, j->name, &j->copied);
	if (j->rc && !(j->err = strdup(ow_err_detail())))
		j->rc = OW_ENOMEM;
	pthread_mutex_lock(&a->mu);
	a->done += j->size;
	ow_progress("export", a->done, a->total);
	pthread_mutex_unlock(&a->mu);
	return j->rc != 0;
}

static int plan_jobs(const struct ow_export_plan *p, struct copy_job **out, size_t *n)
{
	struct copy_job *v = calloc(2 * p->n + 1, sizeof *v);
	if (!v)
		return ow_err(OW_ENOMEM, "export: out of memory");
	size_t k = 0;
	for (size_t i = 0; i < p->n; i++) {
		const struct ow_export_item *it = &p->items[i];
		if (strlen(it->filename) > 255) {
			free(v);
			return ow_err(OW_EINVAL, "%.80s...: file name longer than 255 bytes", it->filename);
		}
		v[k].hex = it->object;
		v[k].size = it->size;
		snprintf(v[k++].name, sizeof v->name, "%s", it->filename);
		if (!it->meta_object[0])
			continue;
		v[k].hex = it->meta_object;
		v[k].size = it->meta_size;
		snprintf(v[k++].name, sizeof v->name, "%s.metadata", it->filename);
	}
	*out = v;
	*n = k;
	return 0;
}

static int collect_jobs(struct copy_all *a, size_t n, struct ex_files *rec,
                        struct ow_export_report *r)
{
	char rel[PATH_MAX];
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		const struct copy_job *j = &a->v[i];
		if (!rc && j->rc)
			rc = ow_err(j->rc, "%s", j->err ? j->err : "out of memory");
		if (rc)
			continue;
		r->copied += (size_t)j->copied;
		r->kept += (size_t)!j->copied;
		r->bytes_copied += j->copied ? j->size : 0;
		r->bytes_total += j->size;
		rc = ow_path_join(rel, sizeof rel, "wheels", j->name);
		if (!rc)
			rc = ex_files_add(rec, rel, j->size, j->hex);
	}
	return rc;
}

/* Up to 4 files at once: hashing keeps pace with a disk on several cores,
 * and a USB stick gets no more writers than it can take. */
static int copy_wheels(ow_store *s, const struct ow_export_plan *p, const struct ow_export_opts *o,
                       struct xrun *x, struct ex_files *rec, struct ow_export_report *r)
{
	struct copy_all a = {.s = s, .wdir = -1};
	size_t n = 0;
	struct stat st;
	x->made_wheels = fstatat(x->root, "wheels", &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT;
	x->undoable = 1;
	int rc = ow_mkdir_beneath(x->root, "wheels", 0755, &a.wdir);
	if (rc)
		return ow_err_prefix(rc, "%s/", x->dir);
	if ((rc = plan_jobs(p, &a.v, &n))) {
		close(a.wdir);
		return rc;
	}
	for (size_t i = 0; i < n; i++)
		a.total += a.v[i].size;
	pthread_mutex_init(&a.mu, NULL);
	ow_parallel_for(n, o->jobs < 1 ? 1 : o->jobs > 4 ? 4 : o->jobs, copy_worker, &a);
	pthread_mutex_destroy(&a.mu);
	rc = collect_jobs(&a, n, rec, r);
	for (size_t i = 0; rc && i < n; i++) /* undo: the files this run added */
		if (a.v[i].copied)
			unlinkat(a.wdir, a.v[i].name, 0);
	for (size_t i = 0; i < n; i++)
		free(a.v[i].err);
	free(a.v);
	close(a.wdir);
	return rc;
}

static int write_text(const struct xrun *x, const char *rel, const struct ow_str *b,
                      struct ex_files *rec)
{
	if (x->s3)
		return ex_s3_text(x->s3, rel, b, rec);
	int rc = ex_write_text(x->root, rel, b, rec);
	return rc ? ow_err_prefix(rc, "%s/", x->dir) : 0;
}

static int write_pages(const struct ow_export_plan *p, const struct xrun *x, struct ex_files *rec)
{
	struct ow_str b = {0};
	char rel[PATH_MAX];
	int rc = ex_gen_simple_root(p, &b);
	if (!rc)
		rc = write_text(x, "simple/index.html", &b, rec);
	ow_str_dispose(&b);
	if (!rc && !(rc = ex_gen_links(p, &b)))
		rc = write_text(x, "wheels/index.html", &b, rec);
	for (size_t i = 0; !rc && i < p->n; i++) {
		snprintf(rel, sizeof rel, "simple/%s/index.html", p->items[i].project);
		int seen = 0;
		for (size_t j = 0; j < i; j++)
			seen |= !strcmp(p->items[j].project, p->items[i].project);
		if (seen)
			continue;
		ow_str_dispose(&b);
		if (!(rc = ex_gen_project_page(p, p->items[i].project, &b)))
			rc = write_text(x, rel, &b, rec);
	}
	ow_str_dispose(&b);
	return rc;
}

static int write_lists(const struct ow_export_plan *p, const struct ex_meta *m,
                       const struct xrun *x, struct ex_files *rec)
{
	struct ow_str b = {0};
	char rel[PATH_MAX];
	int rc = 0;
	for (size_t i = 0; !rc && i < p->nsets; i++) {
		ow_str_dispose(&b);
		snprintf(rel, sizeof rel, "requirements/%s.txt", p->sets[i].req_name);
		if (!(rc = ex_gen_requirements(p, &p->sets[i], &b)))
			rc = write_text(x, rel, &b, rec);
		ow_str_dispose(&b);
		snprintf(rel, sizeof rel, "pylock.%s.toml", p->sets[i].req_name);
		if (!rc && !(rc = ex_gen_pylock(p, &p->sets[i], &b)))
			rc = write_text(x, rel, &b, rec);
	}
	ow_str_dispose(&b);
	if (!rc && !(rc = ex_gen_install(p, m, &b)))
		rc = write_text(x, "INSTALL.txt", &b, rec);
	ow_str_dispose(&b);
	if (!rc && m->tool) {
		snprintf(rel, sizeof rel, "tools/%s", m->tool);
		rc = write_text(x, rel, x->tool, rec);
	}
	for (size_t i = 0; !rc && i < m->nextras; i++) {
		const struct ow_str e = {.p = (char *)(uintptr_t)m->extras[i].text,
		                         .n = m->extras[i].len};
		rc = write_text(x, m->extras[i].path, &e, rec);
	}
	return rc;
}

/* The export's size as `check` reports it: every file SHA256SUMS lists
 * (the wheels, the pages and lists, manifest.json) and their bytes. */
static void count_signed(const struct ex_files *rec, struct ow_export_report *r)
{
	r->files = rec->n;
	r->bytes_total = 0;
	for (size_t i = 0; i < rec->n; i++)
		r->bytes_total += rec->v[i].size;
}

/* manifest.json, then SHA256SUMS (which lists it), then the signature. */
static int write_signed(const struct ow_export_plan *p, const struct ex_meta *m,
                        const struct ow_export_opts *o, const struct xrun *x,
                        struct ex_files *rec, struct ow_export_report *r)
{
	struct ow_str b = {0};
	struct ex_files top = {0};
	ex_files_sort(rec);
	int rc = ex_json_manifest(p, m, rec, &b);
	if (!rc)
		rc = write_text(x, OW_EXPORT_MANIFEST, &b, &top);
	if (!rc) {
		snprintf(r->manifest_sha256, sizeof r->manifest_sha256, "%s", top.v[0].sha256);
		rc = ex_files_add(rec, OW_EXPORT_MANIFEST, top.v[0].size, top.v[0].sha256);
	}
	ex_files_sort(rec);
	ow_str_dispose(&b);
	if (!rc && !(rc = ex_gen_sums(rec, &b)))
		rc = write_text(x, OW_EXPORT_SUMS, &b, &top);
	if (!rc && o->key) {
		char sig[512];
		struct ow_str sb = {.p = sig, .cap = sizeof sig};
		if (!(rc = ow_signify_sign(o->key, b.p, b.n, sig, sizeof sig))) {
			sb.n = strlen(sig);
			rc = write_text(x, OW_EXPORT_SIG, &sb, &top);
		}
	}
	ow_str_dispose(&b);
	ex_files_dispose(&top);
	return rc;
}

static int record_export(ow_store *s, const struct ex_meta *m, const struct ow_export_report *r)
{
	ow_stmt *st = ow_db_stmt(ow_store_db(s), OW_SQL_EXP_INSERT);
	if (!st)
		return OW_EDB;
	ow_stmt_text(st, 1, m->dir);
	ow_stmt_int(st, 2, m->sequence);
	ow_stmt_text(st, 3, r->manifest_sha256);
	ow_stmt_text(st, 4, m->key_id[0] ? m->key_id : NULL);
	ow_stmt_int(st, 5, (int64_t)r->files);
	ow_stmt_int(st, 6, (int64_t)r->bytes_total);
	ow_stmt_int(st, 7, m->created);
	ow_stmt_int(st, 8, m->expires);
	ow_stmt_text(st, 9, m->name);
	return ow_stmt_run(st);
}

/* The server block goes where the user asked (outside DIR, as a rule). */
static int write_nginx(const char *path, const char *dir, const char *gateway)
{
	struct ow_str b = {0};
	char parent[PATH_MAX];
	struct ow_tmp t;
	int rc = gateway ? ex_gen_nginx_proxy(gateway, &b) : ex_gen_nginx(dir, &b);
	if (!rc && !(rc = ow_dirname(parent, sizeof parent, path)) &&
	    !(rc = ow_tmp_create(parent, OW_EXPORT_TMP_PREFIX, &t))) {
		if ((rc = ow_write_all(t.fd, b.p, b.n)))
			ow_tmp_discard(&t);
		else
			rc = ow_tmp_publish(&t, path);
	}
	ow_str_dispose(&b);
	return rc;
}

/* A failure in the copy phase: the copied wheels are gone again (copy_wheels);
 * wheels/ goes if this run made it, and the old signature comes back, so DIR
 * is as it was found.  The error being reported is kept. */
static void undo(struct xrun *x, int code)
{
	char *keep = strdup(ow_err_detail());
	if (x->made_wheels)
		unlinkat(x->root, "wheels", AT_REMOVEDIR);
	struct ow_tmpat t = {.fd = -1};
	if (x->oldsig_len >= 0 && ow_tmpat_create(x->root, OW_EXPORT_TMP_PREFIX, &t) == 0) {
		if (ow_write_all(t.fd, x->oldsig, (size_t)x->oldsig_len))
			ow_tmpat_discard(&t);
		else
			ow_tmpat_publish(&t, OW_EXPORT_SIG);
	}
	ow_err(code, "%s", keep ? keep : "out of memory");
	free(keep);
}

/* The server block is not part of the signed tree: a path inside DIR would
 * be an unlisted file there (and check would refuse the stick), so it is
 * refused before anything changes, as is one whose directory is missing. */
static int nginx_path_ok(const char *path, const char *dir)
{
	char parent[PATH_MAX], real[PATH_MAX];
	int rc = ow_dirname(parent, sizeof parent, path);
	if (rc)
		return rc;
	if (!realpath(parent, real))
		return ow_err(OW_ENOENT, "--nginx-conf %s: cannot use %s: %s — name a file in an "
		                         "existing directory", path, parent, strerror(errno));
	size_t n = strlen(dir);
	if (!strncmp(real, dir, n) && (real[n] == '\0' || real[n] == '/'))
		return ow_err(OW_EINVAL, "--nginx-conf %s: inside the export %s, whose files are all "
		                         "signed and checked — write it outside (for example "
		                         "%s.nginx.conf)", path, dir, dir);
	return 0;
}

/* DIR itself may be a link: it is resolved here, once. */
static int open_root(const char *dir, int *fd)
{
	if (!*dir)
		return ow_err(OW_EINVAL, "export: the directory name is empty — name the directory to "
		                         "write");
	int rc = ow_mkdir_p(dir, 0755);
	if (rc)
		return rc;
	*fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*fd < 0)
		return ow_err(OW_EIO, "%s: cannot open the directory: %s", dir, strerror(errno));
	return 0;
}

static int prepare(ow_store *s, const struct ow_export_plan *p, const struct ow_export_opts *o,
                   struct xrun *x, struct ow_export_report *r, struct ex_meta *m)
{
	struct ex_files want = {0};
	ex_fs_kind(x->root, r->fs, sizeof r->fs);
	int rc = check_names(p, o, r->fs);
	if (rc || (rc = check_case(p)) || (rc = wanted_paths(p, m, &want)) ||
	    (rc = ex_prev_load(s, x->root, o->key, &x->prev)) ||
	    (rc = ex_inventory(x->root, x->dir, &want, &x->prev, &x->remove))) {
		ex_files_dispose(&want);
		return rc;
	}
	ex_files_dispose(&want);
	if (o->key)
		ow_signify_keyid(o->key->keynum, m->key_id);
	m->created = o->now ? o->now : (int64_t)time(NULL);
	m->expires = m->created + (int64_t)o->expires_days * 86400;
	m->dir = o->dir;
	if ((rc = choose_name(o, &x->prev, o->dir, m)) ||
	    (rc = next_sequence(s, &x->prev, m, o->sequence, &m->sequence)))
		return rc;
	return drop_signature(x);
}

static int run_steps(ow_store *s, const struct ow_export_plan *p, const struct ow_export_opts *o,
                     struct xrun *x, struct ow_export_report *r, struct ex_meta *m)
{
	struct ex_files rec = {0};
	int rc = prepare(s, p, o, x, r, m);
	if (!rc)
		rc = copy_wheels(s, p, o, x, &rec, r);
	if (!rc) {
		x->undoable = 0; /* pages and lists change in place from here */
		rc = write_pages(p, x, &rec);
	}
	if (!rc)
		rc = write_lists(p, m, x, &rec);
	if (!rc && (rc = ex_remove(x->root, &x->remove, &r->removed)))
		rc = ow_err_prefix(rc, "%s/", x->dir);
	if (!rc)
		rc = write_signed(p, m, o, x, &rec, r);
	count_signed(&rec, r);
	ex_files_dispose(&rec);
	return rc;
}

/* The package's name goes into INSTALL.txt's `sudo apt install ./tools/NAME`
 * and into the signed tree: only the characters of Debian's own package
 * file names (letters, digits, . _ + ~ -), never a '.' first, and .deb. */
static int tool_name_ok(const char *base)
{
	size_t len = strlen(base);
	return len >= 5 && len <= 200 && base[0] != '.' && !strcmp(base + len - 4, ".deb") &&
	       strspn(base, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._+~-") ==
	               len;
}

static int bad_tool_name(const char *path)
{
	struct ow_str shown = {0};
	ex_put_shown(&shown, path);
	int rc = ow_err(OW_EINVAL, "--with-tool '%s': not a package name to put on a stick "
	                           "(NAME.deb of letters, digits and . _ + ~ - only, as Debian names "
	                           "its packages) — give the offwheel_*.deb that 'cpack -G DEB' made",
	                shown.p ? shown.p : "");
	ow_str_dispose(&shown);
	return rc;
}

/* --with-tool: a Debian package (an ar archive whose first member is
 * debian-binary), read whole once; *name points into `path`. */
#define OW_TOOL_MAX (256u << 20)
static int load_tool(const char *path, struct ow_str *b, const char **name)
{
	static const char magic[] = "!<arch>\ndebian-binary";
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (!tool_name_ok(base))
		return bad_tool_name(path);
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return ow_err(errno == ENOENT ? OW_ENOENT : OW_EIO, "--with-tool %s: cannot open: %s", path,
		              strerror(errno));
	int rc = 0;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > OW_TOOL_MAX)
		rc = ow_err(OW_EINVAL, "--with-tool %s: not a regular file of at most 256 MiB", path);
	char buf[1 << 16];
	ssize_t n;
	while (!rc && (n = read(fd, buf, sizeof buf)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			rc = ow_err(OW_EIO, "--with-tool %s: read failed: %s", path, strerror(errno));
		else if (b->n + (size_t)n > OW_TOOL_MAX)
			rc = ow_err(OW_EINVAL, "--with-tool %s: grew past 256 MiB while read", path);
		else
			ow_str_put(b, buf, (size_t)n);
	}
	close(fd);
	if (!rc && b->err)
		rc = ow_err(b->err, "--with-tool %s: out of memory", path);
	if (!rc && (b->n < sizeof magic - 1 || memcmp(b->p, magic, sizeof magic - 1)))
		rc = ow_err(OW_EINVAL, "--with-tool %s: not a Debian package (no debian-binary member "
		                       "first) — give the offwheel_*.deb that 'cpack -G DEB' made",
		            path);
	*name = base;
	return rc;
}

/* An object store: the same tree, built in memory and sent (exports3.c). */
static int run_s3(ow_store *s, const struct ow_export_plan *p, const struct ow_export_opts *o,
                  struct xrun *x, struct ow_export_report *r, struct ex_meta *m)
{
	struct ex_files want = {0}, rec = {0};
	char rel[PATH_MAX];
	int rc = check_names(p, o, "");
	if (!rc && !(rc = check_case(p)) && !(rc = wanted_paths(p, m, &want)))
		rc = ex_s3_begin(s, o, &want, &x->s3, &x->prev);
	m->created = o->now ? o->now : (int64_t)time(NULL);
	m->expires = m->created + (int64_t)o->expires_days * 86400;
	if (!rc) {
		snprintf(r->dir, sizeof r->dir, "%s", ex_s3_url(x->s3));
		m->dir = r->dir;
		if (o->key)
			ow_signify_keyid(o->key->keynum, m->key_id);
		if (!(rc = choose_name(o, &x->prev, r->dir, m)))
			rc = next_sequence(s, &x->prev, m, o->sequence, &m->sequence);
	}
	for (size_t i = 0; !rc && i < p->n; i++) {
		const struct ow_export_item *it = &p->items[i];
		snprintf(rel, sizeof rel, "wheels/%s", it->filename);
		rc = ex_s3_wheel(x->s3, rel, it->object, it->size, &rec);
		snprintf(rel, sizeof rel, "wheels/%s.metadata", it->filename);
		if (!rc && it->meta_object[0])
			rc = ex_s3_wheel(x->s3, rel, it->meta_object, it->meta_size, &rec);
	}
	if (!rc)
		rc = write_pages(p, x, &rec);
	if (!rc)
		rc = write_lists(p, m, x, &rec);
	if (!rc)
		rc = write_signed(p, m, o, x, &rec, r);
	if (!rc)
		rc = ex_s3_publish(x->s3, &want, &x->prev, r);
	count_signed(&rec, r);
	ex_files_dispose(&want);
	ex_files_dispose(&rec);
	return rc;
}

static int export_s3(ow_store *s, const struct ow_export_plan *p, const struct ow_export_opts *o,
                     struct ow_export_report *r, struct ex_meta *m, struct xrun *x)
{
	int rc = run_s3(s, p, o, x, r, m);
	if (!rc)
		rc = record_export(s, m, r);
	if (!rc && o->nginx_conf) {
		char gw[PATH_MAX];
		/* the store's own HTTP URL of the prefix: the endpoint's path-style form */
		rc = ex_s3_gateway(x->s3, gw, sizeof gw);
		if (!rc)
			rc = write_nginx(o->nginx_conf, r->dir, gw);
	}
	ex_s3_free(x->s3);
	x->s3 = NULL;
	return rc;
}

/* The export to a directory: made if it is not there (and removed again
 * when the export fails), the tree written, the export recorded. */
static int export_dir(ow_store *s, const struct ow_export_plan *p, const struct ow_export_opts *o,
                      struct ow_export_report *r, struct ex_meta *m, struct xrun *x)
{
	char made[PATH_MAX] = "";
	struct ow_export_opts ro = *o; /* o with the resolved directory */
	int rc = ow_mkdir_p_made(o->dir, 0755, made, sizeof made);
	if (rc)
		goto fail;
	if (!realpath(o->dir, r->dir)) {
		rc = ow_err(OW_EIO, "%s: cannot resolve the path: %s", o->dir, strerror(errno));
		goto fail;
	}
	ro.dir = x->dir = r->dir;
	if (o->nginx_conf && (rc = nginx_path_ok(o->nginx_conf, r->dir)))
		goto fail;
	if ((rc = open_root(r->dir, &x->root)))
		goto fail;
	if ((rc = run_steps(s, p, &ro, x, r, m))) {
		if (x->undoable)
			undo(x, rc);
		goto fail;
	}
	if ((rc = record_export(s, m, r)))
		goto fail;
	if (o->nginx_conf && (rc = write_nginx(o->nginx_conf, r->dir, NULL)))
		goto fail;
	return 0;
fail:
	if (*made)
		ow_rmdir_made(o->dir, made);
	return rc;
}

bool ow_export_lab_dir(const char *rel)
{
	return !strcmp(rel, "probes") || !strcmp(rel, "reports");
}

/* The caller's files: plain names at the top, none of the export's own */
static int extras_problem(const struct ow_export_opts *o)
{
	for (size_t i = 0; i < o->nextras; i++) {
		const char *p = o->extras[i].path;
		if (strchr(p, '/') || ex_path_problem(p) || !strcmp(p, "INSTALL.txt") ||
		    !strcmp(p, OW_EXPORT_SUMS) || !strcmp(p, OW_EXPORT_SIG) ||
		    !strcmp(p, OW_EXPORT_MANIFEST) || !strncmp(p, "pylock.", 7))
			return ow_err(OW_EINVAL, "export: '%s' cannot be a file of the caller's", p);
	}
	return 0;
}

int ow_export_run(ow_store *s, const struct ow_export_plan *p, const struct ow_export_opts *o,
                  struct ow_export_report *r)
{
	struct timespec t0, t1;
	struct ex_meta m = {0};
	struct xrun x = {.root = -1};
	memset(r, 0, sizeof *r);
	if (o->expires_days <= 0 || !p->nsets)
		return ow_err(OW_EINVAL, "export: nothing to export or no expiry");
	if (o->sequence < 0 || o->sequence > OW_EXPORT_SEQ_MAX)
		return ow_err(OW_EINVAL, "--sequence %lld: out of range (1 to 2^53)",
		              (long long)o->sequence);
	const char *why = o->name ? ow_export_name_problem(o->name) : NULL;
	if (why)
		return ow_err(OW_EINVAL, "--name: not an export name: %s — give printable ASCII, at "
		                         "most 64 bytes", why);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct ow_str tool = {0};
	m.extras = o->extras;
	m.nextras = o->nextras;
	m.install_note = o->install_note;
	int rc = extras_problem(o);
	if (!rc && o->tool)
		rc = load_tool(o->tool, &tool, &m.tool);
	x.tool = &tool;
	if (!rc)
		rc = ow_s3_is_url(o->dir) ? export_s3(s, p, o, r, &m, &x) : export_dir(s, p, o, r, &m, &x);
	ow_str_dispose(&tool);
	if (x.root >= 0)
		close(x.root);
	ex_prev_dispose(&x.prev);
	ex_files_dispose(&x.remove);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	r->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	r->sequence = m.sequence;
	r->created = m.created;
	r->expires = m.expires;
	snprintf(r->key_id, sizeof r->key_id, "%s", m.key_id);
	snprintf(r->name, sizeof r->name, "%s", m.name);
	return rc;
}
