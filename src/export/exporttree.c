/* exporttree.c - what is already in an export directory, and the only
 * files of it that offwheel replaces or removes: those it wrote itself,
 * as its previous export's signed list (or this workspace's record of the
 * manifest) says, with their bytes unchanged.  Everything else is refused
 * before anything changes, never silently deleted. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db.h"
#include "offwheel/error.h"
#include "exportint.h"
#include "fmt.h"
#include "fsbeneath.h"
#include "store.h"

#define SUMS_MAX (64u << 20)
#define WALK_DEPTH 32
#define SHOW_MAX 8

void ex_prev_dispose(struct ex_prev *p)
{
	ex_files_dispose(&p->files);
	memset(p, 0, sizeof *p);
}

/* The manifest SHA256SUMS lists, parsed, when its hash matches. */
static int signed_manifest(int root, const struct ex_files *sums, struct ex_manifest *m)
{
	const struct ex_file *e = ex_files_find(sums, OW_EXPORT_MANIFEST);
	char hex[OW_SHA256_HEX];
	uint64_t n;
	if (!e || ex_hash_at(root, OW_EXPORT_MANIFEST, &n, hex) || strcmp(hex, e->sha256))
		return OW_EVERIFY;
	char *t = NULL;
	size_t len = 0;
	int rc = ow_read_beneath(root, OW_EXPORT_MANIFEST, SUMS_MAX, &t, &len);
	if (!rc)
		rc = ex_json_parse(t, len, m);
	free(t);
	return rc;
}

/* SHA256SUMS.sig by the key that signs now: its list, and its sequence. */
static int prev_by_signature(int root, const struct ow_signify_sec *key, struct ex_prev *p)
{
	char *sig = NULL, *sums = NULL;
	size_t sig_n = 0, sums_n = 0;
	struct ow_signify_pub pub;
	struct ex_manifest m = {0};
	ow_signify_pub_of(key, &pub);
	int rc = ow_read_beneath(root, OW_EXPORT_SIG, 4096, &sig, &sig_n);
	if (!rc)
		rc = ow_read_beneath(root, OW_EXPORT_SUMS, SUMS_MAX, &sums, &sums_n);
	if (!rc)
		rc = ow_signify_verify(&pub, sums, sums_n, sig, sig_n);
	if (!rc && !(rc = ex_parse_sums(sums, sums_n, &p->files))) {
		ex_files_sort(&p->files);
		p->trusted = "signature";
		if (!signed_manifest(root, &p->files, &m)) {
			p->signed_sequence = m.sequence;
			memcpy(p->signed_name, m.name, sizeof p->signed_name);
		}
		ex_manifest_dispose(&m);
	}
	free(sig);
	free(sums);
	if (rc)
		ex_files_dispose(&p->files);
	return rc;
}

/* manifest.json as this workspace wrote it (its sha256 is in `exports`):
 * an interrupted export leaves the previous one in place until the end. */
static int prev_by_record(ow_store *s, int root, struct ex_prev *p)
{
	char hex[OW_SHA256_HEX], *t = NULL;
	uint64_t n;
	size_t len = 0;
	struct ex_manifest m;
	int rc = ex_hash_at(root, OW_EXPORT_MANIFEST, &n, hex);
	if (rc)
		return rc;
	ow_stmt *st = ow_db_stmt(ow_store_db(s), OW_SQL_EXP_BY_MANIFEST);
	if (!st)
		return OW_EDB;
	ow_stmt_text(st, 1, hex);
	int row = ow_stmt_step(st);
	if (row <= 0)
		return row < 0 ? row : OW_ENOENT;
	if ((rc = ow_read_beneath(root, OW_EXPORT_MANIFEST, SUMS_MAX, &t, &len)) ||
	    (rc = ex_json_parse(t, len, &m))) {
		free(t);
		return rc;
	}
	free(t);
	p->files = m.files; /* moved */
	memset(&m.files, 0, sizeof m.files);
	ex_manifest_dispose(&m);
	ex_files_sort(&p->files);
	p->trusted = "workspace record";
	return 0;
}

int ex_prev_load(ow_store *s, int root, const struct ow_signify_sec *key, struct ex_prev *p)
{
	memset(p, 0, sizeof *p);
	if (key && prev_by_signature(root, key, p) == 0)
		return 0;
	int rc = prev_by_record(s, root, p);
	if (rc == OW_EDB)
		return rc;
	return 0; /* no trusted list: nothing will be removed */
}

/* ---- the walk ---- */

struct walk {
	int root;
	const struct ex_files *want;
	const struct ex_prev *prev;
	struct ex_files *remove;
	struct ow_str shown;
	size_t refused, links;
	int rc;
};

void ex_put_shown(struct ow_str *b, const char *name)
{
	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		if (*c < 0x20 || *c >= 0x7f || *c == '\\')
			ow_str_printf(b, "\\x%02x", *c);
		else
			ow_str_printf(b, "%c", *c);
}

static void refuse(struct walk *w, const char *rel, const char *why)
{
	if (w->refused++ >= SHOW_MAX)
		return;
	ow_str_printf(&w->shown, "%s", w->refused > 1 ? ", " : "");
	ex_put_shown(&w->shown, rel);
	ow_str_printf(&w->shown, " (%s)", why);
}

static int is_top_owned(const char *rel)
{
	return !strcmp(rel, OW_EXPORT_SUMS) || !strcmp(rel, OW_EXPORT_SIG) ||
	       !strcmp(rel, OW_EXPORT_MANIFEST) || !strcmp(rel, "INSTALL.txt");
}

static void regular_file(struct walk *w, int dfd, const char *name, const char *rel, int top)
{
	if ((top && is_top_owned(rel)) || ex_files_find(w->want, rel))
		return; /* a file of the new export: replaced, or kept when the same */
	if (ex_is_tmp_name(name)) {
		w->rc = ex_files_add(w->remove, rel, 0, NULL);
		return;
	}
	const struct ex_file *e = w->prev->trusted ? ex_files_find(&w->prev->files, rel) : NULL;
	char hex[OW_SHA256_HEX];
	uint64_t n;
	if (!e)
		refuse(w, rel, "not part of an export: no previous export of this key or workspace "
		               "lists it");
	else if (ex_hash_at(dfd, name, &n, hex) || strcmp(hex, e->sha256))
		refuse(w, rel, "changed since the previous export listed it");
	else
		w->rc = ex_files_add(w->remove, rel, n, hex);
}

static void walk_dir(struct walk *w, int dfd, const char *rel, int depth);

static void walk_entry(struct walk *w, int dfd, const char *name, const char *rel, int depth)
{
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return; /* gone meanwhile */
	if (S_ISLNK(st.st_mode) || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))) {
		w->links++;
		refuse(w, rel, S_ISLNK(st.st_mode) ? "a symbolic link: offwheel never writes through "
		                                     "one" : "not a regular file");
		return;
	}
	if (S_ISREG(st.st_mode)) {
		regular_file(w, dfd, name, rel, depth == 0);
		return;
	}
	if (depth == 0 && ow_export_lab_dir(rel))
		return; /* the lab's: what its machines wrote (docs/fleet.md) */
	if (ex_files_find(w->want, rel) || (depth == 0 && is_top_owned(rel))) {
		refuse(w, rel, "a directory where the export writes a file");
		return;
	}
	int sub = depth + 1 < WALK_DEPTH ? openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	                                                     O_CLOEXEC | O_NONBLOCK) : -1;
	if (sub < 0) {
		refuse(w, rel, depth + 1 < WALK_DEPTH ? strerror(errno) : "nested too deep");
		return;
	}
	walk_dir(w, sub, rel, depth + 1);
}

/* Takes dfd (closed here). */
static void walk_dir(struct walk *w, int dfd, const char *rel, int depth)
{
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		refuse(w, *rel ? rel : ".", strerror(errno));
		return;
	}
	struct dirent *e;
	while (!w->rc && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char r[PATH_MAX];
		int n = snprintf(r, sizeof r, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
		if (n < 0 || (size_t)n >= sizeof r)
			refuse(w, e->d_name, "path too long");
		else
			walk_entry(w, dirfd(d), e->d_name, r, depth);
	}
	closedir(d);
}

int ex_inventory(int root, const char *dir, const struct ex_files *want,
                  const struct ex_prev *prev, struct ex_files *remove)
{
	struct walk w = {.root = root, .want = want, .prev = prev, .remove = remove};
	int fd = openat(root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return ow_err(OW_EIO, "%s: cannot list: %s", dir, strerror(errno));
	walk_dir(&w, fd, "", 0);
	int rc = w.rc;
	if (!rc && w.shown.err)
		rc = w.shown.err;
	if (!rc && w.refused)
		rc = ow_err(w.links ? OW_EPOLICY : OW_EEXIST,
		            "%s: holds %zu entr%s offwheel did not write and will not touch: %s%s — "
		            "nothing was changed; move %s out of the directory (offwheel replaces or "
		            "removes only files its previous export listed), or export into an empty "
		            "directory", dir, w.refused, w.refused == 1 ? "y" : "ies",
		            w.shown.p ? w.shown.p : "", w.refused > SHOW_MAX ? ", ..." : "",
		            w.refused == 1 ? "it" : "them");
	ow_str_dispose(&w.shown);
	if (!rc)
		ex_files_sort(remove);
	return rc;
}

/* rmdir the directories above rel that are now empty, below the top level. */
static void prune_parents(int root, const char *rel)
{
	char d[PATH_MAX];
	snprintf(d, sizeof d, "%s", rel);
	for (char *sl; (sl = strrchr(d, '/'));) {
		*sl = '\0';
		if (!strchr(d, '/'))
			return; /* wheels/, simple/, requirements/ and the user's own stay */
		if (unlinkat(root, d, AT_REMOVEDIR) != 0)
			return;
	}
}

static int remove_one(int root, const char *rel)
{
	char dir[PATH_MAX];
	const char *sl = strrchr(rel, '/'), *name = sl ? sl + 1 : rel;
	/* a cut directory would name another one: refused */
	int dfd, rc = ow_fmt(dir, sizeof dir, "%.*s", sl ? (int)(sl - rel) : 0, rel);
	if (rc)
		return ow_err_prefix(rc, "%s: its directory: ", rel);
	rc = *dir ? ow_open_beneath(root, dir, O_RDONLY | O_DIRECTORY, 0, &dfd)
	          : ow_mkdir_beneath(root, "", 0, &dfd);
	if (rc)
		return rc == OW_ENOENT ? 0 : rc;
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))
		rc = ow_err(OW_EPOLICY, "%s: became %s during the export — left alone", rel,
		            ow_file_kind(st.st_mode));
	else if (unlinkat(dfd, name, 0) != 0 && errno != ENOENT)
		rc = ow_err(OW_EIO, "%s: cannot remove a stale file: %s", rel, strerror(errno));
	else if (fsync(dfd) != 0 && errno != EINVAL)
		rc = ow_err(OW_EIO, "%s: fsync of the directory failed: %s", dir, strerror(errno));
	close(dfd);
	if (!rc)
		prune_parents(root, rel);
	return rc;
}

int ex_remove(int root, const struct ex_files *remove, size_t *removed)
{
	*removed = 0;
	for (size_t i = 0; i < remove->n; i++) {
		int rc = remove_one(root, remove->v[i].path);
		if (rc)
			return rc;
		(*removed)++;
	}
	return 0;
}
