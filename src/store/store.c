/* store.c - content-addressed objects: publish while hashing, verify, list. */
#include "store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "offwheel/error.h"
#include "event.h"
#include "fmt.h"
#include "fsutil.h"
#include "pool.h"

struct ow_store {
	char home[PATH_MAX];
	char tmp[PATH_MAX];
	char objects[PATH_MAX];
	ow_db *db;
	int lock_fd; /* the HOME directory, flocked by a writer */
	int info_fd; /* HOME/lock: who holds it (text only) */
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

static int make_layout(ow_store *s, int create)
{
	int rc;
	if ((rc = ow_path_join(s->tmp, sizeof s->tmp, s->home, "tmp")) ||
	    (rc = ow_path_join(s->objects, sizeof s->objects, s->home, "objects/sha256")))
		return rc;
	if (create && ((rc = ow_mkdir_p(s->tmp, 0755)) || (rc = ow_mkdir_p(s->objects, 0755))))
		return ow_err_prefix(rc, "workspace %s: ", s->home);
	return 0;
}

/* --- the workspace lock ---------------------------------------------------- */

/* The lock is a flock on the HOME directory: a user can delete HOME/lock
 * (or index.db, moving it aside) without letting a second writer in.  HOME/lock
 * only says who holds it. */
static void read_holder(const ow_store *s, char *buf, size_t n)
{
	char path[PATH_MAX];
	ssize_t got = -1;
	int fd = ow_path_join(path, sizeof path, s->home, "lock")
	             ? -1
	             : open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		got = pread(fd, buf, n - 1, 0);
	if (fd >= 0)
		close(fd);
	buf[got > 0 ? got : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	for (char *p = buf; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	if (!buf[0])
		snprintf(buf, n, "another process");
}

static void write_holder(ow_store *s, const char *what)
{
	char path[PATH_MAX], line[256];
	if (ow_path_join(path, sizeof path, s->home, "lock"))
		return;
	s->info_fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
	struct stat st;
	if (s->info_fd < 0 || fstat(s->info_fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		if (s->info_fd >= 0)
			close(s->info_fd);
		s->info_fd = -1; /* only informational: the flock is what matters */
		return;
	}
	int w = snprintf(line, sizeof line, "pid %ld (%s)\n", (long)getpid(), what ? what : "offwheel");
	if (ftruncate(s->info_fd, 0) == 0 && w > 0)
		(void)!pwrite(s->info_fd, line, (size_t)w, 0);
}

static int lock_home(ow_store *s, const char *what, int timeout_s)
{
	s->lock_fd = open(s->home, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->lock_fd < 0)
		return ow_err(OW_EIO, "%s: cannot open the workspace to lock it: %s", s->home,
		              strerror(errno));
	struct timespec start, now, nap = {0, 100 * 1000 * 1000};
	clock_gettime(CLOCK_MONOTONIC, &start);
	int said = 0;
	while (flock(s->lock_fd, LOCK_EX | LOCK_NB) != 0) {
		char holder[200];
		if (errno != EWOULDBLOCK && errno != EINTR)
			return ow_err(OW_EIO, "%s: cannot lock the workspace: %s", s->home,
			              strerror(errno));
		read_holder(s, holder, sizeof holder);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec >= timeout_s)
			return ow_err(OW_ELOCKED,
			              "%s: the workspace is in use by %s; waited %d s — wait for it "
			              "to finish, or use another --home",
			              s->home, holder, timeout_s);
		if (!said++)
			ow_log(OW_LOG_WARN, "waiting for the workspace lock on %s held by %s ...",
			       s->home, holder);
		nanosleep(&nap, NULL);
	}
	write_holder(s, what);
	return 0;
}

static void unlock_home(ow_store *s)
{
	if (s->info_fd >= 0) {
		(void)!ftruncate(s->info_fd, 0); /* before the flock goes: no stale name */
		close(s->info_fd);
	}
	if (s->lock_fd >= 0)
		close(s->lock_fd); /* releases the flock */
}

/* A reader never creates a workspace: a mistyped --home is an error. */
static int check_exists(const ow_store *s)
{
	char path[PATH_MAX];
	struct stat st;
	int rc = ow_path_join(path, sizeof path, s->home, "index.db");
	if (rc)
		return rc;
	if (stat(s->home, &st) != 0 || !S_ISDIR(st.st_mode) || lstat(path, &st) != 0)
		return ow_err(OW_ENOENT,
		              "no workspace at %s — check --home / $OFFWHEEL_HOME ('offwheel crawl', "
		              "'sync' or 'fetch' create one)",
		              s->home);
	return 0;
}

/* Readers open the index read-only when they may not write the workspace
 * (a copy on read-only media, another user's cache). */
static int can_write(const ow_store *s, const char *db_path)
{
	return access(s->home, W_OK) == 0 && access(db_path, W_OK) == 0;
}

int ow_store_open(const char *home, enum ow_store_mode mode, int lock_timeout, const char *what,
                  ow_store **out)
{
	ow_store *s = calloc(1, sizeof *s);
	char path[PATH_MAX];
	int rc;
	if (!s)
		return ow_err(OW_ENOMEM, "out of memory");
	s->lock_fd = s->info_fd = -1;
	if (snprintf(s->home, sizeof s->home, "%s", home) >= (int)sizeof s->home) {
		free(s);
		return ow_err(OW_ERANGE, "%s: workspace path too long", home);
	}
	int writer = mode == OW_STORE_WRITE || mode == OW_STORE_UPDATE;
	if (mode == OW_STORE_WRITE && (rc = ow_mkdir_p(s->home, 0755)))
		goto fail;
	if ((rc = make_layout(s, 0)) || (mode != OW_STORE_WRITE && (rc = check_exists(s))))
		goto fail;
	if (writer && (rc = lock_home(s, what, lock_timeout)))
		goto fail;
	if ((rc = ow_path_join(path, sizeof path, s->home, "index.db")))
		goto fail;
	rc = writer || can_write(s, path) ? ow_db_open(path, &s->db)
	                                  : ow_db_open_readonly(path, &s->db);
	/* the layout only once the index is known to be ours */
	if (rc || (writer && (rc = make_layout(s, 1))))
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
	unlock_home(s);
	free(s);
}

ow_db *ow_store_db(ow_store *s) { return s->db; }
const char *ow_store_home(const ow_store *s) { return s->home; }
const char *ow_store_tmpdir(const ow_store *s) { return s->tmp; }

int ow_store_object_path(const ow_store *s, const char *hex, char *buf, size_t n)
{
	if (!ow_is_sha256_hex(hex))
		return ow_err(OW_EINVAL, "'%.80s' is not a sha256 object name", hex);
	/* <objects>/<first two hex digits>/<64 hex digits> */
	size_t ol = strlen(s->objects);
	if (ol + 1 + 2 + 1 + 64 >= n)
		return ow_err(OW_ERANGE, "object path too long");
	memcpy(buf, s->objects, ol);
	buf[ol] = '/';
	memcpy(buf + ol + 1, hex, 2);
	buf[ol + 3] = '/';
	memcpy(buf + ol + 4, hex, 65);
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
	if (!w)
		return ow_err(OW_EINVAL, "ow_obj_write: no writer");
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
	ow_obj_writer *w = NULL;
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
	ow_obj_writer *w = NULL;
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
	if (snprintf(t.path, sizeof t.path, "%s", tmp_path) >= (int)sizeof t.path) {
		close(fd); /* as publish() does on its errors: the fd is always consumed */
		unlink(tmp_path);
		return ow_err(OW_ERANGE, "%.80s...: temp path too long", tmp_path);
	}
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
		if (kind && kind_n && (rc = ow_fmt(kind, kind_n, "%s", ow_col_text(st, 1))) < 0)
			return ow_err_prefix(rc, "object %s: its kind: ", hex);
		rc = 1;
	}
	return rc;
}

static const char *file_type(mode_t m)
{
	return S_ISLNK(m) ? "a symbolic link" : S_ISFIFO(m) ? "a FIFO" : S_ISDIR(m) ? "a directory"
	       : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device"
	       : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/* What lies at `path`, looked at without opening it: 0 a regular file of
 * expect_size bytes (UINT64_MAX: any), else an error naming what is wrong. */
static int check_file(const char *path, const char *hex, uint64_t expect_size, struct stat *st)
{
	if (lstat(path, st) != 0)
		return ow_err(errno == ENOENT ? OW_ENOENT : OW_EIO, "object %.12s…: %s: %s", hex, path,
		              strerror(errno));
	if (!S_ISREG(st->st_mode))
		return ow_err(OW_EVERIFY,
		              "object %.12s…: %s is %s, not a regular file — damage, not read; fetch "
		              "it again",
		              hex, path, file_type(st->st_mode));
	if (expect_size != UINT64_MAX && (uint64_t)st->st_size != expect_size)
		return ow_err(OW_EVERIFY,
		              "object %.12s…: %llu bytes on disk, the index says %llu — the file is "
		              "damaged; fetch it again",
		              hex, (unsigned long long)st->st_size, (unsigned long long)expect_size);
	return 0;
}

/* Open an object file: never follows a link, never blocks on a FIFO, and
 * the file opened is the regular file that was checked. */
static int open_regular(const char *path, const char *hex, uint64_t expect_size, int *fd_out,
                        uint64_t *size_out)
{
	struct stat before, st;
	int rc = check_file(path, hex, expect_size, &before);
	if (rc)
		return rc;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return ow_err(errno == ENOENT ? OW_ENOENT : errno == ELOOP ? OW_EVERIFY : OW_EIO,
		              "object %.12s…: cannot open %s: %s — run 'offwheel fsck'", hex, path,
		              strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_ino != before.st_ino ||
	    st.st_dev != before.st_dev || st.st_size != before.st_size) {
		close(fd);
		return ow_err(OW_EVERIFY, "object %.12s…: %s changed while it was opened — not read",
		              hex, path);
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	*fd_out = fd;
	if (size_out)
		*size_out = (uint64_t)st.st_size;
	return 0;
}

int ow_store_open_object(ow_store *s, const char *hex, int *fd_out)
{
	char path[PATH_MAX];
	int rc = ow_store_object_path(s, hex, path, sizeof path);
	if (rc)
		return rc;
	/* no row lookup: this runs on worker threads (verify --deep) */
	return open_regular(path, hex, UINT64_MAX, fd_out, NULL);
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
	uint64_t size;
	char path[PATH_MAX];
	int fd, rc = ow_store_object_path(s, hex, path, sizeof path);
	if (rc)
		return rc;
	if ((rc = open_regular(path, hex, UINT64_MAX, &fd, &size)))
		return rc;
	char *data = NULL;
	if (size > max) {
		rc = ow_err(OW_ETOOBIG, "object %.12s…: larger than %zu bytes", hex, max);
		goto out;
	}
	data = malloc((size_t)size + 1);
	if (!data) {
		rc = ow_err(OW_ENOMEM, "out of memory");
		goto out;
	}
	uint8_t d[OW_SHA256_LEN];
	if ((rc = ow_pread_all(fd, data, (size_t)size, 0)) ||
	    (rc = ow_sha256_buf(data, (size_t)size, d)) || (rc = check_digest(hex, d)))
		goto out;
	data[size] = '\0';
	*buf = data;
	*len = (size_t)size;
	data = NULL;
out:
	free(data);
	close(fd);
	return rc;
}

/* Hash exactly `size` bytes of fd: a file that is shorter is an error, and
 * nothing past `size` is read. */
static int hash_exact(int fd, uint64_t size, uint8_t d[OW_SHA256_LEN])
{
	enum { CHUNK = 1 << 20 };
	ow_sha256 *h;
	char *buf = malloc(CHUNK);
	int rc = buf ? ow_sha256_new(&h) : ow_err(OW_ENOMEM, "out of memory");
	if (rc) {
		free(buf);
		return rc;
	}
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	for (uint64_t off = 0; !rc && off < size;) {
		size_t want = size - off < CHUNK ? (size_t)(size - off) : CHUNK;
		ssize_t n = read(fd, buf, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			rc = ow_err(OW_EIO, "%s after %llu of %llu bytes",
			            n < 0 ? strerror(errno) : "unexpected end of file",
			            (unsigned long long)off, (unsigned long long)size);
		else if (!(rc = ow_sha256_update(h, buf, (size_t)n)))
			off += (uint64_t)n;
	}
	if (!rc)
		rc = ow_sha256_final(h, d);
	ow_sha256_free(h);
	free(buf);
	return rc;
}

int ow_store_verify(const ow_store *s, const char *hex, uint64_t expect_size)
{
	char path[PATH_MAX];
	uint8_t d[OW_SHA256_LEN];
	uint64_t size = 0;
	int fd, rc = ow_store_object_path(s, hex, path, sizeof path);
	if (rc || (rc = open_regular(path, hex, expect_size, &fd, &size)))
		return rc;
	rc = hash_exact(fd, size, d);
	close(fd);
	if (rc)
		return ow_err_prefix(rc, "object %.12s…: ", hex);
	return check_digest(hex, d);
}

int ow_store_usable(ow_store *s, const char *hex, uint64_t *size, char *why, size_t why_n)
{
	char path[PATH_MAX];
	struct stat st;
	uint64_t want = 0;
	ow_stmt *q = ow_db_stmt(s->db, OW_SQL_OBJ_GET);
	if (!q)
		return OW_EDB;
	ow_stmt_text(q, 1, hex);
	int rc = ow_stmt_step(q);
	if (rc <= 0) {
		if (rc == 0)
			snprintf(why, why_n, "object %.12s…: no row", hex);
		return rc;
	}
	want = (uint64_t)ow_col_int(q, 0);
	if (!ow_col_is_null(q, 3)) {
		snprintf(why, why_n, "object %.12s… was found damaged: %s", hex, ow_col_text(q, 3));
		ow_stmt_run(q);
		return 0;
	}
	ow_stmt_run(q);
	if (size)
		*size = want;
	if ((rc = ow_store_object_path(s, hex, path, sizeof path)))
		return rc;
	if (check_file(path, hex, want, &st) == 0)
		return 1;
	snprintf(why, why_n, "%s", ow_err_detail());
	return 0;
}

int ow_store_mark_damaged(ow_store *s, const char *hex, const char *detail)
{
	ow_stmt *st = ow_db_stmt(s->db, OW_SQL_OBJ_MARK_DAMAGED);
	if (!st)
		return OW_EDB;
	ow_stmt_text(st, 1, hex);
	ow_stmt_text(st, 2, detail && *detail ? detail : "damaged");
	return ow_stmt_run(st);
}

int ow_store_move_aside(ow_store *s, const char *hex, char *moved_to, size_t n)
{
	char path[PATH_MAX], aside[PATH_MAX], dir[PATH_MAX];
	struct stat st;
	int rc = ow_store_object_path(s, hex, path, sizeof path);
	if (moved_to && n)
		moved_to[0] = '\0';
	if (rc)
		return rc;
	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : ow_err(OW_EIO, "%s: %s", path, strerror(errno));
	/* a unique name: the same object may be damaged and moved aside twice */
	if (ow_fmt(aside, sizeof aside, "%s/" OW_TMP_DAMAGED_PREFIX "%s-%lld-%ld", s->tmp, hex,
	           (long long)time(NULL), (long)getpid()) < 0)
		return ow_err(OW_ERANGE, "temp path too long");
	size_t w = strlen(aside);
	if (moved_to && n && w >= n) /* refused before the move: never a cut name */
		return ow_err(OW_ERANGE, "%s: too long for the caller's %zu bytes", aside, n);
	if (rename(path, aside) != 0)
		return ow_err(OW_EIO, "%s: cannot move the damaged object aside to %s: %s", path, aside,
		              strerror(errno));
	if (!ow_dirname(dir, sizeof dir, path))
		ow_fsync_dir(dir);
	ow_fsync_dir(s->tmp);
	if (moved_to && n)
		memcpy(moved_to, aside, w + 1);
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
		struct ow_obj_row *g = ow_array_reserve(v, &cap, cnt + 1, sizeof *g);
		if (!g) {
			free(v);
			return ow_err(OW_ENOMEM, "out of memory");
		}
		v = g;
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
	j->results[i].detail = rc ? ow_err_detail_dup() : NULL;
	ow_progress_done(j->rows[i].sha256, j->rows[i].size);
	return rc;
}

size_t ow_store_verify_many(const ow_store *s, const struct ow_obj_row *rows, size_t n, int jobs,
                            struct ow_verify_result *results)
{
	struct verify_job j = {.s = s, .rows = rows, .results = results};
	return ow_parallel_for(n, jobs, verify_one, &j);
}

void ow_verify_results_dispose(struct ow_verify_result *results, size_t n)
{
	for (size_t i = 0; results && i < n; i++) {
		free(results[i].detail);
		results[i].detail = NULL;
	}
}

size_t ow_store_mark_failed(ow_store *s, const struct ow_obj_row *rows,
                            const struct ow_verify_result *results, size_t n)
{
	size_t marked = 0;
	if (ow_db_readonly(s->db))
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((results[i].rc == OW_EHASH || results[i].rc == OW_EVERIFY) &&
		    ow_store_mark_damaged(s, rows[i].sha256, results[i].detail) == 0)
			marked++;
	return marked;
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
	/* never through a link: gc would remove files outside the workspace */
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (fd >= 0 && !d)
		close(fd);
	if (!d && (errno == ENOTDIR || errno == ENOENT || errno == ELOOP))
		return cb(ud, NULL, dir); /* a file or a link where a fan-out directory belongs */
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
	if (!d && errno == ENOENT)
		return 0; /* a reader does not create it: no objects */
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

int ow_store_object_names(ow_store *s, struct ow_obj_name **names, size_t *n)
{
	ow_stmt *st = ow_db_stmt(s->db, OW_SQL_OBJ_NAMES);
	*names = NULL;
	*n = 0;
	if (!st)
		return OW_EDB;
	int rc;
	while ((rc = ow_stmt_step(st)) == 1) {
		struct ow_obj_name *g = ow_array_more(*names, *n, sizeof *g);
		if (!g) {
			ow_stmt_run(st);
			return ow_err(OW_ENOMEM, "out of memory");
		}
		*names = g;
		snprintf(g[*n].sha256, sizeof g->sha256, "%s", ow_col_text(st, 0));
		/* analyzer: kept in (*names)[*n - 1], freed by ow_obj_names_free */
		if (!(g[*n].name = strdup(ow_col_text(st, 1) ? ow_col_text(st, 1) : ""))) {
			ow_stmt_run(st);
			return ow_err(OW_ENOMEM, "out of memory");
		}
		(*n)++;
	}
	return rc < 0 ? rc : 0;
}

void ow_obj_names_free(struct ow_obj_name *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i].name);
	free(names);
}
