/* store.c - content-addressed objects: publish while hashing, verify, list. */
#include "store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "event.h"
#include "fsutil.h"
#include "pool.h"

struct ow_store {
	char home[PATH_MAX];
	char tmp[PATH_MAX];
	char objects[PATH_MAX];
	ow_db *db;
	int lock_fd;
};

struct ow_obj_writer {
	ow_store *s;
	struct ow_tmp tmp;
	ow_sha256 *h;
	uint64_t size, cap;
};

int ow_store_default_home(char *buf, size_t n)
{
	const char *env = getenv("OFFWHEEL_HOME");
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	int w;
	if (env && *env)
		w = snprintf(buf, n, "%s", env);
	else if (xdg && *xdg)
		w = snprintf(buf, n, "%s/offwheel", xdg);
	else if (home && *home)
		w = snprintf(buf, n, "%s/.cache/offwheel", home);
	else
		return ow_err(OW_EINVAL, "no workspace: set --home, OFFWHEEL_HOME or HOME");
	if (w < 0 || (size_t)w >= n)
		return ow_err(OW_ERANGE, "workspace path too long");
	return 0;
}

static int make_layout(ow_store *s)
{
	int rc;
	if ((rc = ow_path_join(s->tmp, sizeof s->tmp, s->home, "tmp")) ||
	    (rc = ow_path_join(s->objects, sizeof s->objects, s->home, "objects/sha256")))
		return rc;
	if ((rc = ow_mkdir_p(s->tmp, 0755)) || (rc = ow_mkdir_p(s->objects, 0755)))
		return ow_err_prefix(rc, "workspace %s: ", s->home);
	return 0;
}

int ow_store_open(const char *home, enum ow_store_mode mode, int lock_timeout, const char *what,
                  ow_store **out)
{
	ow_store *s = calloc(1, sizeof *s);
	char path[PATH_MAX];
	int rc;
	if (!s)
		return ow_err(OW_ENOMEM, "out of memory");
	s->lock_fd = -1;
	if (snprintf(s->home, sizeof s->home, "%s", home) >= (int)sizeof s->home) {
		free(s);
		return ow_err(OW_ERANGE, "%s: workspace path too long", home);
	}
	if ((rc = ow_mkdir_p(s->home, 0755)) || (rc = make_layout(s)))
		goto fail;
	if (mode == OW_STORE_WRITE) {
		if ((rc = ow_path_join(path, sizeof path, s->home, "lock")) ||
		    (rc = ow_lock_acquire(path, what, lock_timeout, &s->lock_fd)))
			goto fail;
	}
	if ((rc = ow_path_join(path, sizeof path, s->home, "index.db")) ||
	    (rc = ow_db_open(path, &s->db)))
		goto fail;
	*out = s;
	return 0;
fail:
	ow_store_close(s);
	return rc;
}

void ow_store_close(ow_store *s)
{
	if (!s)
		return;
	ow_db_close(s->db);
	ow_lock_release(s->lock_fd);
	free(s);
}

ow_db *ow_store_db(ow_store *s) { return s->db; }
const char *ow_store_home(const ow_store *s) { return s->home; }
const char *ow_store_tmpdir(const ow_store *s) { return s->tmp; }

int ow_store_object_path(const ow_store *s, const char *hex, char *buf, size_t n)
{
	if (!ow_is_sha256_hex(hex))
		return ow_err(OW_EINVAL, "'%.80s' is not a sha256 object name", hex);
	int w = snprintf(buf, n, "%s/%.2s/%s", s->objects, hex, hex);
	if (w < 0 || (size_t)w >= n)
		return ow_err(OW_ERANGE, "object path too long");
	return 0;
}

int ow_obj_begin(ow_store *s, uint64_t cap, ow_obj_writer **out)
{
	ow_obj_writer *w = calloc(1, sizeof *w);
	int rc;
	if (!w)
		return ow_err(OW_ENOMEM, "out of memory");
	w->s = s;
	w->cap = cap;
	w->tmp.fd = -1;
	if ((rc = ow_sha256_new(&w->h)) ||
	    (rc = ow_tmp_create(s->tmp, OW_TMP_OBJECT_PREFIX, &w->tmp))) {
		ow_obj_abort(w);
		return rc;
	}
	*out = w;
	return 0;
}

int ow_obj_write(ow_obj_writer *w, const void *data, size_t len)
{
	if (w->cap && w->size + len > w->cap)
		return ow_err(OW_ETOOBIG, "object larger than its cap of %llu bytes",
		              (unsigned long long)w->cap);
	int rc = ow_sha256_update(w->h, data, len);
	if (!rc)
		rc = ow_write_all(w->tmp.fd, data, len);
	if (!rc)
		w->size += len;
	return rc;
}

void ow_obj_abort(ow_obj_writer *w)
{
	if (!w)
		return;
	ow_tmp_discard(&w->tmp);
	ow_sha256_free(w->h);
	free(w);
}

static int insert_row(ow_store *s, const char *hex, uint64_t size, const char *kind)
{
	ow_stmt *st = ow_db_stmt(s->db, OW_SQL_OBJ_INSERT);
	if (!st)
		return OW_EDB;
	ow_stmt_text(st, 1, hex);
	ow_stmt_int(st, 2, (int64_t)size);
	ow_stmt_text(st, 3, kind);
	ow_stmt_int(st, 4, (int64_t)time(NULL));
	return ow_stmt_run(st);
}

static int publish(ow_store *s, struct ow_tmp *tmp, const char *hex, uint64_t size,
                   const char *kind)
{
	char path[PATH_MAX], dir[PATH_MAX];
	int rc;
	if ((rc = ow_store_object_path(s, hex, path, sizeof path)) ||
	    (rc = ow_dirname(dir, sizeof dir, path)) || (rc = ow_mkdir_p(dir, 0755))) {
		ow_tmp_discard(tmp);
		return rc;
	}
	/* Renaming over an existing object is harmless: same name, same bytes
	 * (and it repairs a damaged copy).  The row comes only after. */
	if ((rc = ow_tmp_publish(tmp, path)))
		return rc;
	return insert_row(s, hex, size, kind);
}

int ow_obj_commit(ow_obj_writer *w, const char *expect_hex, const char *kind,
                  char hex_out[OW_SHA256_HEX])
{
	uint8_t d[OW_SHA256_LEN], e[OW_SHA256_LEN];
	char hex[OW_SHA256_HEX];
	int rc = ow_sha256_final(w->h, d);
	if (rc)
		goto out;
	ow_hex(d, sizeof d, hex);
	if (expect_hex) {
		if ((rc = ow_sha256_from_hex(expect_hex, e)))
			goto out;
		if (!ow_digest_eq(d, e, sizeof d)) {
			rc = ow_err(OW_EHASH, "sha256 mismatch: expected %.12s…, got %.12s… — not stored",
			            expect_hex, hex);
			goto out;
		}
	}
	rc = publish(w->s, &w->tmp, hex, w->size, kind);
	if (!rc && hex_out)
		memcpy(hex_out, hex, sizeof hex);
out:
	ow_obj_abort(w);
	return rc;
}

int ow_store_put_buf(ow_store *s, const void *data, size_t len, const char *expect_hex,
                     const char *kind, char hex_out[OW_SHA256_HEX])
{
	ow_obj_writer *w;
	int rc = ow_obj_begin(s, 0, &w);
	if (rc)
		return rc;
	if ((rc = ow_obj_write(w, data, len))) {
		ow_obj_abort(w);
		return rc;
	}
	return ow_obj_commit(w, expect_hex, kind, hex_out);
}

int ow_store_put_fd(ow_store *s, int fd, const char *expect_hex, const char *kind,
                    char hex_out[OW_SHA256_HEX])
{
	enum { CHUNK = 1 << 20 };
	ow_obj_writer *w;
	char *buf = malloc(CHUNK);
	int rc = buf ? ow_obj_begin(s, 0, &w) : ow_err(OW_ENOMEM, "out of memory");
	if (rc) {
		free(buf);
		return rc;
	}
	for (;;) {
		ssize_t n = read(fd, buf, CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? ow_err(OW_EIO, "read failed: %s", strerror(errno)) : 0;
			break;
		}
		if ((rc = ow_obj_write(w, buf, (size_t)n)))
			break;
	}
	free(buf);
	if (rc) {
		ow_obj_abort(w);
		return rc;
	}
	return ow_obj_commit(w, expect_hex, kind, hex_out);
}

int ow_store_adopt(ow_store *s, int fd, const char *tmp_path, const char *hex, uint64_t size,
                   const char *kind)
{
	struct ow_tmp t = {.fd = fd};
	if (snprintf(t.path, sizeof t.path, "%s", tmp_path) >= (int)sizeof t.path)
		return ow_err(OW_ERANGE, "temp path too long");
	return publish(s, &t, hex, size, kind);
}

int ow_store_has(ow_store *s, const char *hex, uint64_t *size, char *kind, size_t kind_n)
{
	ow_stmt *st = ow_db_stmt(s->db, OW_SQL_OBJ_GET);
	if (!st)
		return OW_EDB;
	ow_stmt_text(st, 1, hex);
	int rc = ow_stmt_step(st);
	if (rc == 1) {
		if (size)
			*size = (uint64_t)ow_col_int(st, 0);
		if (kind && kind_n)
			snprintf(kind, kind_n, "%s", ow_col_text(st, 1));
	}
	return rc;
}

int ow_store_open_object(ow_store *s, const char *hex, int *fd_out)
{
	char path[PATH_MAX];
	int rc = ow_store_object_path(s, hex, path, sizeof path);
	if (rc)
		return rc;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ow_err(errno == ENOENT ? OW_ENOENT : OW_EIO,
		              "object %.12s…: cannot open %s: %s — run 'offwheel fsck'", hex, path,
		              strerror(errno));
	*fd_out = fd;
	return 0;
}

static int check_digest(const char *hex, const uint8_t d[OW_SHA256_LEN])
{
	char got[OW_SHA256_HEX];
	ow_hex(d, OW_SHA256_LEN, got);
	if (!ow_digest_eq(got, hex, 64))
		return ow_err(OW_EHASH,
		              "object %.12s…: the bytes on disk hash to %.12s… — the file is damaged; "
		              "run 'offwheel fsck' and fetch it again",
		              hex, got);
	return 0;
}

int ow_store_load(ow_store *s, const char *hex, size_t max, char **buf, size_t *len)
{
	int fd, rc = ow_store_open_object(s, hex, &fd);
	if (rc)
		return rc;
	struct stat st;
	char *data = NULL;
	if (fstat(fd, &st) != 0 || (uint64_t)st.st_size > max) {
		rc = ow_err(OW_ETOOBIG, "object %.12s…: larger than %zu bytes", hex, max);
		goto out;
	}
	data = malloc((size_t)st.st_size + 1);
	if (!data) {
		rc = ow_err(OW_ENOMEM, "out of memory");
		goto out;
	}
	uint8_t d[OW_SHA256_LEN];
	if ((rc = ow_pread_all(fd, data, (size_t)st.st_size, 0)) ||
	    (rc = ow_sha256_buf(data, (size_t)st.st_size, d)) || (rc = check_digest(hex, d)))
		goto out;
	data[st.st_size] = '\0';
	*buf = data;
	*len = (size_t)st.st_size;
	data = NULL;
out:
	free(data);
	close(fd);
	return rc;
}

int ow_store_verify(const ow_store *s, const char *hex, uint64_t expect_size)
{
	char path[PATH_MAX];
	uint8_t d[OW_SHA256_LEN];
	uint64_t size = 0;
	int rc = ow_store_object_path(s, hex, path, sizeof path);
	if (rc)
		return rc;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ow_err(errno == ENOENT ? OW_ENOENT : OW_EIO, "object %.12s…: %s: %s", hex,
		              path, strerror(errno));
	rc = ow_sha256_fd(fd, d, &size);
	close(fd);
	if (rc)
		return ow_err_prefix(rc, "object %.12s…: ", hex);
	if ((rc = check_digest(hex, d)))
		return rc;
	if (expect_size != UINT64_MAX && size != expect_size)
		return ow_err(OW_EVERIFY, "object %.12s…: %llu bytes on disk, the index says %llu",
		              hex, (unsigned long long)size, (unsigned long long)expect_size);
	return 0;
}

int ow_store_remove(ow_store *s, const char *hex)
{
	char path[PATH_MAX];
	int rc = ow_store_object_path(s, hex, path, sizeof path);
	ow_stmt *st;
	if (rc)
		return rc;
	if (!(st = ow_db_stmt(s->db, OW_SQL_OBJ_DELETE)))
		return OW_EDB;
	ow_stmt_text(st, 1, hex);
	if ((rc = ow_stmt_run(st)))
		return rc;
	if (unlink(path) != 0 && errno != ENOENT)
		return ow_err(OW_EIO, "%s: cannot remove: %s", path, strerror(errno));
	char dir[PATH_MAX];
	if (!ow_dirname(dir, sizeof dir, path))
		ow_fsync_dir(dir);
	return 0;
}

int ow_store_list(ow_store *s, const char *kind, struct ow_obj_row **rows, size_t *n)
{
	ow_stmt *st = ow_db_stmt(s->db, kind ? OW_SQL_OBJ_LIST_KIND : OW_SQL_OBJ_LIST);
	struct ow_obj_row *v = NULL;
	size_t cnt = 0, cap = 0;
	int rc;
	if (!st)
		return OW_EDB;
	if (kind)
		ow_stmt_text(st, 1, kind);
	while ((rc = ow_stmt_step(st)) == 1) {
		if (cnt == cap) {
			cap = cap ? cap * 2 : 64;
			struct ow_obj_row *g = realloc(v, cap * sizeof *v);
			if (!g) {
				free(v);
				return ow_err(OW_ENOMEM, "out of memory");
			}
			v = g;
		}
		struct ow_obj_row *r = &v[cnt++];
		snprintf(r->sha256, sizeof r->sha256, "%s", ow_col_text(st, 0));
		r->size = (uint64_t)ow_col_int(st, 1);
		snprintf(r->kind, sizeof r->kind, "%s", ow_col_text(st, 2));
		r->created_at = ow_col_int(st, 3);
	}
	if (rc < 0) {
		free(v);
		return rc;
	}
	*rows = v;
	*n = cnt;
	return 0;
}

/* --- parallel verification ------------------------------------------------ */

struct verify_job {
	const ow_store *s;
	const struct ow_obj_row *rows;
	struct ow_verify_result *results;
};

static int verify_one(void *ud, size_t i)
{
	struct verify_job *j = ud;
	int rc = ow_store_verify(j->s, j->rows[i].sha256, j->rows[i].size);
	j->results[i].rc = rc;
	j->results[i].size = j->rows[i].size;
	if (rc)
		snprintf(j->results[i].detail, sizeof j->results[i].detail, "%s", ow_err_detail());
	ow_progress_done(j->rows[i].sha256, j->rows[i].size);
	return rc;
}

size_t ow_store_verify_many(const ow_store *s, const struct ow_obj_row *rows, size_t n, int jobs,
                            struct ow_verify_result *results)
{
	struct verify_job j = {.s = s, .rows = rows, .results = results};
	return ow_parallel_for(n, jobs, verify_one, &j);
}

/* --- walking the files on disk -------------------------------------------- */

static int is_hex2(const char *n)
{
	return strlen(n) == 2 && strspn(n, "0123456789abcdef") == 2;
}

static int scan_fanout(const ow_store *s, const char *sub, ow_disk_fn cb, void *ud)
{
	char dir[PATH_MAX], path[PATH_MAX];
	int rc = ow_path_join(dir, sizeof dir, s->objects, sub);
	if (rc)
		return rc;
	DIR *d = opendir(dir);
	if (!d)
		return ow_err(OW_EIO, "%s: cannot list: %s", dir, strerror(errno));
	struct dirent *e;
	while (!rc && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (ow_path_join(path, sizeof path, dir, e->d_name))
			continue;
		int good = ow_is_sha256_hex(e->d_name) && !strncmp(e->d_name, sub, 2);
		rc = cb(ud, good ? e->d_name : NULL, path);
	}
	closedir(d);
	return rc;
}

int ow_store_scan_disk(const ow_store *s, ow_disk_fn cb, void *ud)
{
	DIR *d = opendir(s->objects);
	char path[PATH_MAX];
	int rc = 0;
	if (!d)
		return ow_err(OW_EIO, "%s: cannot list: %s", s->objects, strerror(errno));
	struct dirent *e;
	while (!rc && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (is_hex2(e->d_name))
			rc = scan_fanout(s, e->d_name, cb, ud);
		else if (!ow_path_join(path, sizeof path, s->objects, e->d_name))
			rc = cb(ud, NULL, path);
	}
	closedir(d);
	return rc;
}
