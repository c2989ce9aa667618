/* fsck.c - workspace invariants: rows vs files, hashes, db integrity. */
#include "fsck.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "fsutil.h"

static int add_issue_x(struct ow_fsck_report *r, enum ow_fsck_kind kind, const char *what,
                       const char *detail, int resumable)
{
	struct ow_fsck_issue *g = realloc(r->issues, (r->nissues + 1) * sizeof *g);
	if (!g)
		return ow_err(OW_ENOMEM, "out of memory");
	r->issues = g;
	struct ow_fsck_issue *i = &g[r->nissues++];
	i->kind = kind;
	i->resumable = resumable;
	snprintf(i->what, sizeof i->what, "%s", what);
	snprintf(i->detail, sizeof i->detail, "%s", detail ? detail : "");
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
	static const char *const names[] = {"missing", "corrupt", "db", "orphan", "stray",
	                                    "partial"};
	return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "?";
}

static int add_issue(struct ow_fsck_report *r, enum ow_fsck_kind kind, const char *what,
                     const char *detail)
{
	return add_issue_x(r, kind, what, detail, 0);
}

void ow_fsck_report_free(struct ow_fsck_report *r)
{
	if (!r)
		return;
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
	if (!hex)
		return add_issue(w->r, OW_FSCK_STRAY, path, "not an object name (garbage)");
	struct ow_obj_row key;
	snprintf(key.sha256, sizeof key.sha256, "%s", hex);
	if (w->nrows && bsearch(&key, w->rows, w->nrows, sizeof key, cmp_row))
		return 0;
	struct ow_obj_row *g = realloc(w->orphans, (w->norphans + 1) * sizeof *g);
	if (!g)
		return ow_err(OW_ENOMEM, "out of memory");
	w->orphans = g;
	memset(&g[w->norphans], 0, sizeof g[0]);
	memcpy(g[w->norphans].sha256, hex, OW_SHA256_HEX);
	g[w->norphans++].size = UINT64_MAX; /* unknown: no row */
	return 0;
}

static int hash_all(const ow_store *s, struct ow_fsck_report *r, const struct ow_obj_row *rows,
                    size_t n, int jobs, int orphans)
{
	struct ow_verify_result *res = calloc(n ? n : 1, sizeof *res);
	int rc = 0;
	if (!res)
		return ow_err(OW_ENOMEM, "out of memory");
	ow_store_verify_many(s, rows, n, jobs, res);
	for (size_t i = 0; i < n && !rc; i++) {
		r->bytes += res[i].rc ? 0 : res[i].size == UINT64_MAX ? 0 : res[i].size;
		if (!res[i].rc && orphans)
			rc = add_issue(r, OW_FSCK_ORPHAN, rows[i].sha256,
			               "object without a row (garbage; 'offwheel gc' removes it)");
		else if (res[i].rc == OW_ENOENT && !orphans)
			rc = add_issue(r, OW_FSCK_MISSING, rows[i].sha256, res[i].detail);
		else if (res[i].rc)
			rc = add_issue(r, OW_FSCK_CORRUPT, rows[i].sha256, res[i].detail);
	}
	free(res);
	return rc;
}

static int scan_tmp(ow_store *s, struct ow_fsck_report *r)
{
	DIR *d = opendir(ow_store_tmpdir(s));
	char path[PATH_MAX];
	int rc = 0;
	if (!d)
		return ow_err(OW_EIO, "%s: cannot list: %s", ow_store_tmpdir(s), strerror(errno));
	struct dirent *e;
	while (!rc && (e = readdir(d))) {
		if (e->d_name[0] == '.' || ow_path_join(path, sizeof path, ow_store_tmpdir(s), e->d_name))
			continue;
		int partial = !strncmp(e->d_name, OW_TMP_PARTIAL_PREFIX, strlen(OW_TMP_PARTIAL_PREFIX));
		rc = add_issue_x(r, OW_FSCK_PARTIAL, path,
		                 partial ? "partial download (a re-run resumes it)"
		                         : "temp file of an interrupted publish (garbage)",
		                 partial);
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

static int remove_file(const char *path, struct ow_gc_result *res, size_t *counter)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return 0;
	if (unlink(path) != 0)
		return ow_err(OW_EIO, "%s: cannot remove: %s", path, strerror(errno));
	res->freed += (uint64_t)st.st_size;
	(*counter)++;
	return 0;
}

int ow_gc_garbage(ow_store *s, int drop_partials, struct ow_gc_result *res)
{
	struct ow_fsck_report r;
	memset(res, 0, sizeof *res);
	int rc = fsck_run(s, 1, 0, &r);
	for (size_t i = 0; !rc && i < r.nissues; i++) {
		struct ow_fsck_issue *is = &r.issues[i];
		char path[PATH_MAX];
		if (is->kind == OW_FSCK_ORPHAN &&
		    !ow_store_object_path(s, is->what, path, sizeof path))
			rc = remove_file(path, res, &res->removed_objects);
		else if (is->kind == OW_FSCK_STRAY)
			rc = remove_file(is->what, res, &res->removed_objects);
		else if (is->kind == OW_FSCK_PARTIAL &&
		         (drop_partials || !is->resumable))
			rc = remove_file(is->what, res, &res->removed_tmp);
	}
	ow_fsck_report_free(&r);
	return rc;
}
