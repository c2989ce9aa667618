/* fsck.c - workspace invariants: rows vs files, hashes, db integrity. */
#include "offwheel/fsck.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "db.h"
#include "offwheel/error.h"
#include "offwheel/str.h"
#include "event.h"
#include "fsutil.h"
#include "store.h"

static int add_issue_x(struct ow_fsck_report *r, enum ow_fsck_kind kind, const char *what,
                       const char *detail, int resumable)
{
	struct ow_fsck_issue *g = ow_array_more(r->issues, r->nissues, sizeof *g);
	if (!g)
		return ow_err(OW_ENOMEM, "out of memory");
	r->issues = g;
	/* whole, or no issue: a path cut short would name another file to gc */
	char *w = strdup(what), *d = strdup(detail ? detail : "");
	if (!w || !d) {
		free(w);
		free(d);
		return ow_err(OW_ENOMEM, "out of memory");
	}
	struct ow_fsck_issue *i = &g[r->nissues++];
	i->kind = kind;
	i->resumable = resumable;
	i->what = w;
	i->detail = d;
	if (kind <= OW_FSCK_DB)
		r->errors++;
	else if (kind == OW_FSCK_PARTIAL)
		r->partials++;
	else
		r->garbage++;
	return 0;
}

const char *ow_fsck_kind_name(enum ow_fsck_kind k)
{
	static const char *const names[] = {"missing", "corrupt", "db",     "orphan",
	                                    "stray",   "partial", "aside"};
	return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "?";
}

static int add_issue(struct ow_fsck_report *r, enum ow_fsck_kind kind, const char *what,
                     const char *detail)
{
	return add_issue_x(r, kind, what, detail, 0);
}

void ow_fsck_report_dispose(struct ow_fsck_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nissues; i++) {
		free(r->issues[i].what);
		free(r->issues[i].detail);
	}
	free(r->issues);
	memset(r, 0, sizeof *r);
}

static int cmp_row(const void *a, const void *b)
{
	return strcmp(((const struct ow_obj_row *)a)->sha256, ((const struct ow_obj_row *)b)->sha256);
}

/* Files on disk: collect orphans (good names without a row) and strays. */
struct disk_walk {
	struct ow_fsck_report *r;
	const struct ow_obj_row *rows;
	size_t nrows;
	struct ow_obj_row *orphans;
	size_t norphans;
};

static int on_disk_file(void *ud, const char *hex, const char *path)
{
	struct disk_walk *w = ud;
	struct stat st;
	if (!hex)
		return add_issue(w->r, OW_FSCK_STRAY, path,
		                 lstat(path, &st) == 0 && S_ISDIR(st.st_mode)
		                     ? "a directory that is not an object name (gc leaves it: remove "
		                       "it by hand)"
		                     : "not an object name (garbage)");
	struct ow_obj_row key;
	snprintf(key.sha256, sizeof key.sha256, "%s", hex);
	if (w->nrows && bsearch(&key, w->rows, w->nrows, sizeof key, cmp_row))
		return 0;
	struct ow_obj_row *g = ow_array_more(w->orphans, w->norphans, sizeof *g);
	if (!g)
		return ow_err(OW_ENOMEM, "out of memory");
	w->orphans = g;
	memset(&g[w->norphans], 0, sizeof g[0]);
	memcpy(g[w->norphans].sha256, hex, OW_SHA256_HEX);
	g[w->norphans++].size = UINT64_MAX; /* unknown: no row */
	return 0;
}

/* A damaged or missing object that a file row points to: the detail names
 * the file and the one command that fetches it again. */
static char *repair_hint(ow_store *s, const char *hex, const char *detail)
{
	ow_stmt *st = ow_db_stmt(ow_store_db(s), OW_SQL_FSCK_FILE_OF);
	const char *fn = NULL;
	if (!detail)
		detail = "";
	if (st) {
		ow_stmt_text(st, 1, hex);
		if (ow_stmt_step(st) == 1)
			fn = ow_col_text(st, 0);
	}
	int wheel = fn ? (int)ow_col_int(st, 1) : 0;
	char *out = fn ? ow_aprintf("%s — it is %s%s; 'offwheel fetch %s%s' fetches it again", detail,
	                            wheel ? "" : "the metadata of ", fn, wheel ? "" : "--metadata ", fn)
	               : strdup(detail);
	if (st)
		ow_stmt_run(st);
	return out;
}

static int hash_all(ow_store *s, struct ow_fsck_report *r, const struct ow_obj_row *rows,
                    size_t n, int jobs, int orphans)
{
	struct ow_verify_result *res = calloc(n ? n : 1, sizeof *res);
	int rc = 0;
	if (!res)
		return ow_err(OW_ENOMEM, "out of memory");
	ow_store_verify_many(s, rows, n, jobs, res);
	if (!orphans)
		ow_store_mark_failed(s, rows, res, n); /* so that fetch and sync repair them */
	for (size_t i = 0; i < n && !rc; i++) {
		r->bytes += res[i].rc ? 0 : res[i].size == UINT64_MAX ? 0 : res[i].size;
		if (!res[i].rc && orphans)
			rc = add_issue(r, OW_FSCK_ORPHAN, rows[i].sha256,
			               "object without a row (garbage; 'offwheel gc' removes it)");
		else if (orphans && res[i].rc != OW_ENOENT) /* nothing relies on it: garbage */
			rc = add_issue(r, OW_FSCK_ORPHAN, rows[i].sha256, res[i].detail);
		else if (res[i].rc) {
			char *d = repair_hint(s, rows[i].sha256, res[i].detail);
			rc = d ? add_issue(r, res[i].rc == OW_ENOENT && !orphans ? OW_FSCK_MISSING
			                                                         : OW_FSCK_CORRUPT,
			                   rows[i].sha256, d)
			       : ow_err(OW_ENOMEM, "out of memory");
			free(d);
		}
	}
	ow_verify_results_dispose(res, n);
	free(res);
	return rc;
}

static int tmp_issue(struct ow_fsck_report *r, const char *name, const char *path)
{
	struct stat st;
	if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return add_issue(r, OW_FSCK_PARTIAL, path,
		                 "a directory in tmp/ (gc leaves it: remove it by hand)");
	if (!strncmp(name, OW_TMP_DAMAGED_PREFIX, strlen(OW_TMP_DAMAGED_PREFIX)))
		return add_issue(r, OW_FSCK_ASIDE, path,
		                 "a damaged object moved aside when it was fetched again (garbage; "
		                 "'offwheel gc' removes it)");
	int partial = !strncmp(name, OW_TMP_PARTIAL_PREFIX, strlen(OW_TMP_PARTIAL_PREFIX));
	return add_issue_x(r, OW_FSCK_PARTIAL, path,
	                   partial ? "partial download (a re-run resumes it)"
	                           : "temp file of an interrupted publish (garbage)",
	                   partial);
}

static int scan_tmp(ow_store *s, struct ow_fsck_report *r)
{
	DIR *d = opendir(ow_store_tmpdir(s));
	char path[PATH_MAX];
	int rc = 0;
	if (!d && errno == ENOENT)
		return 0; /* a reader does not create it */
	if (!d)
		return ow_err(OW_EIO, "%s: cannot list: %s", ow_store_tmpdir(s), strerror(errno));
	struct dirent *e;
	while (!rc && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (ow_path_join(path, sizeof path, ow_store_tmpdir(s), e->d_name))
			continue;
		rc = tmp_issue(r, e->d_name, path);
	}
	closedir(d);
	return rc;
}

static int check_db(ow_store *s, struct ow_fsck_report *r)
{
	char *problems = NULL;
	int rc = ow_db_check(ow_store_db(s), &problems);
	if (!rc && problems)
		rc = add_issue(r, OW_FSCK_DB, "index.db", problems);
	free(problems);
	return rc;
}

static int list_orphans(struct ow_fsck_report *r, const struct ow_obj_row *o, size_t n)
{
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++)
		rc = add_issue(r, OW_FSCK_ORPHAN, o[i].sha256, "object without a row (not hashed)");
	return rc;
}

static int fsck_run(ow_store *s, int jobs, int hash, struct ow_fsck_report *r)
{
	struct ow_obj_row *rows = NULL;
	size_t n = 0;
	memset(r, 0, sizeof *r);
	int rc = check_db(s, r);
	if (!rc)
		rc = ow_store_list(s, NULL, &rows, &n);
	if (rc)
		return rc;
	if (n)
		qsort(rows, n, sizeof *rows, cmp_row);
	r->rows = n;
	struct disk_walk w = {.r = r, .rows = rows, .nrows = n};
	if (!(rc = ow_store_scan_disk(s, on_disk_file, &w))) {
		if (hash)
			rc = hash_all(s, r, rows, n, jobs, 0);
		if (!rc)
			rc = hash ? hash_all(s, r, w.orphans, w.norphans, jobs, 1)
			          : list_orphans(r, w.orphans, w.norphans);
		if (!rc)
			rc = scan_tmp(s, r);
	}
	free(w.orphans);
	free(rows);
	return rc;
}

int ow_fsck(ow_store *s, int jobs, struct ow_fsck_report *r)
{
	return fsck_run(s, jobs, 1, r);
}

/* Remove one garbage file, unless it is young (a writer's, perhaps) or not
 * a file: those are counted, reported, and gc goes on. */
static void remove_file(const char *path, const struct ow_gc_opts *o, struct ow_gc_result *res,
                        size_t *counter)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return;
	if (S_ISDIR(st.st_mode)) {
		ow_log(OW_LOG_WARN, "%s: a directory, not removed (gc removes only files) — remove it "
		                    "by hand if nothing of yours is in it",
		       path);
		res->left++;
		return;
	}
	int64_t age = (int64_t)time(NULL) - (int64_t)st.st_mtime;
	if (o->prune_s > 0 && age < o->prune_s) {
		ow_log(OW_LOG_INFO, "%s: kept, %" PRId64 " s old (younger than --prune)", path, age);
		res->kept_young++;
		return;
	}
	if (unlink(path) != 0) {
		ow_log(OW_LOG_WARN, "%s: cannot remove: %s", path, strerror(errno));
		res->left++;
		return;
	}
	res->freed += S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
	(*counter)++;
}

int ow_gc_garbage(ow_store *s, const struct ow_gc_opts *o, struct ow_gc_result *res)
{
	struct ow_fsck_report r;
	memset(res, 0, sizeof *res);
	int rc = fsck_run(s, 1, 0, &r);
	for (size_t i = 0; !rc && i < r.nissues; i++) {
		struct ow_fsck_issue *is = &r.issues[i];
		char path[PATH_MAX];
		if (is->kind == OW_FSCK_ORPHAN &&
		           !ow_store_object_path(s, is->what, path, sizeof path))
			remove_file(path, o, res, &res->removed_objects);
		else if (is->kind == OW_FSCK_STRAY || is->kind == OW_FSCK_ASIDE)
			remove_file(is->what, o, res, &res->removed_objects);
		else if (is->kind == OW_FSCK_PARTIAL && (o->drop_partials || !is->resumable))
			remove_file(is->what, o, res, &res->removed_tmp);
	}
	ow_fsck_report_dispose(&r);
	return rc;
}

int ow_gc_parse_prune(const char *text, int64_t *seconds)
{
	static const struct {
		char unit;
		int64_t mul;
	} units[] = {{'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}, {'w', 604800}};
	if (!strcmp(text, "now")) {
		*seconds = 0;
		return 0;
	}
	char *end;
	errno = 0;
	long long v = strtoll(text, &end, 10);
	if (end == text || *text == '-' || *text == '+' || errno || v < 0)
		return ow_err(OW_EINVAL, "--prune: '%s' is not now, N, Ns, Nm, Nh, Nd or Nw", text);
	int64_t mul = *end ? 0 : 1;
	for (size_t i = 0; *end && i < sizeof units / sizeof units[0]; i++)
		if (end[0] == units[i].unit && end[1] == '\0')
			mul = units[i].mul;
	if (!mul || v > INT64_MAX / mul / 2)
		return ow_err(OW_EINVAL, "--prune: '%s' is not now, N, Ns, Nm, Nh, Nd or Nw", text);
	*seconds = (int64_t)v * mul;
	return 0;
}
