/* exportcheck.c - check an export on the target: the signature before
 * anything else is trusted, then SHA256SUMS and the manifest, every file
 * re-hashed (in parallel), extra / missing files, expiry and rollback. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "offwheel/error.h"
#include "exportint.h"
#include "fsbeneath.h"
#include "fsutil.h"
#include "digest.h"
#include "offwheel/url.h"
#include "s3.h"

#define SUMS_MAX (64u << 20)

static void add_line(struct ow_check_problem **v, size_t *n, const char *kind, const char *path,
                     const char *fmt, va_list ap) OW_PRINTF(5, 0);

static void add_line(struct ow_check_problem **v, size_t *n, const char *kind, const char *path,
                     const char *fmt, va_list ap)
{
	struct ow_check_problem *g = ow_array_more(*v, *n, sizeof *g);
	if (!g)
		return;
	*v = g;
	struct ow_check_problem *p = &g[(*n)++];
	snprintf(p->kind, sizeof p->kind, "%s", kind);
	p->path = path ? strdup(path) : NULL;
	/* analyzer: p->path is in r->problems[n - 1], freed with the report */
	if (vasprintf(&p->detail, fmt, ap) < 0)
		p->detail = NULL;
}

static void problem(struct ow_check_report *r, const char *kind, const char *path,
                    const char *fmt, ...) OW_PRINTF(4, 5);

static void problem(struct ow_check_report *r, const char *kind, const char *path,
                    const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_line(&r->problems, &r->n, kind, path, fmt, ap);
	va_end(ap);
}

/* Worth telling, but no reason to refuse the export. */
static void warning(struct ow_check_report *r, const char *kind, const char *path,
                    const char *fmt, ...) OW_PRINTF(4, 5);

static void warning(struct ow_check_report *r, const char *kind, const char *path,
                    const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_line(&r->warnings, &r->nwarnings, kind, path, fmt, ap);
	va_end(ap);
}

static void free_lines(struct ow_check_problem **v, size_t *n)
{
	for (size_t i = 0; i < *n; i++) {
		free((*v)[i].path);
		free((*v)[i].detail);
	}
	free(*v);
	*v = NULL;
	*n = 0;
}

void ow_check_report_dispose(struct ow_check_report *r)
{
	if (!r)
		return;
	free_lines(&r->problems, &r->n);
	free_lines(&r->warnings, &r->nwarnings);
	ex_check_sets_free(r->sets, r->nsets);
	r->sets = NULL;
	r->nsets = 0;
}

int ow_check_default_state(char *buf, size_t n)
{
	const char *x = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	int w = x && *x ? snprintf(buf, n, "%s/offwheel/accepted.json", x)
	        : home && *home ? snprintf(buf, n, "%s/.local/state/offwheel/accepted.json", home)
	                        : -1;
	if (w < 0 || (size_t)w >= n)
		return ow_err(OW_EINVAL, "check: no $XDG_STATE_HOME or $HOME for the state file — "
		                         "give --state FILE");
	return 0;
}

/* Where the export is: a directory fd, or a store / web server. */
struct csrc {
	int root;
	struct ex_remote *rx;
};

/* A top-level file of the stick: regular (a FIFO or a link is never read). */
static int read_in(const struct csrc *src, const char *name, char **t, size_t *n)
{
	if (src->rx)
		return ex_remote_read(src->rx, name, t, n);
	return ow_read_beneath(src->root, name, SUMS_MAX, t, n);
}

/* The problem kind for a file that could not be read. */
static const char *unreadable_kind(int rc, const char *dflt)
{
	return rc == OW_EPOLICY ? (strstr(ow_err_detail(), "symbolic link") ? "link" : "special")
	                        : dflt;
}

/* Step 1: SHA256SUMS.sig over SHA256SUMS.  0 = trusted, else a problem. */
static int check_signature(const struct ow_check_opts *o, const struct csrc *root,
                           struct ow_check_report *r,
                           char **sums, size_t *sums_n)
{
	char *sig = NULL;
	size_t sig_n = 0;
	int rc = read_in(root, OW_EXPORT_SIG, &sig, &sig_n);
	if (rc && root->rx && (rc == OW_EIO || rc == OW_ENET || rc == OW_ETLS || rc == OW_ETIMEOUT ||
	                       rc == OW_EPOLICY || rc == OW_EHTTP))
		return rc; /* the store or server cannot be read: an error, not a verdict */
	if (rc) {
		problem(r, "signature", OW_EXPORT_SIG, "%s — the export is unsigned or incomplete "
		        "(interrupted); re-run 'offwheel export'", rc == OW_ENOENT ? "missing" :
		        ow_err_detail());
		return rc;
	}
	if ((rc = read_in(root, OW_EXPORT_SUMS, sums, sums_n)))
		problem(r, "signature", OW_EXPORT_SUMS, "%s — the export is incomplete",
		        rc == OW_ENOENT ? "missing" : ow_err_detail());
	else if ((rc = ow_signify_verify(o->pub, *sums, *sums_n, sig, sig_n)))
		problem(r, "signature", OW_EXPORT_SIG, "%s", ow_err_detail());
	free(sig);
	return rc;
}

/* Step 2: manifest.json must be the one SHA256SUMS names. */
static int load_manifest(const struct csrc *root, struct ow_check_report *r,
                         const struct ex_files *sums,
                         struct ex_manifest *m)
{
	const struct ex_file *e = ex_files_find(sums, OW_EXPORT_MANIFEST);
	char *t = NULL, hex[OW_SHA256_HEX];
	size_t n = 0;
	uint8_t d[OW_SHA256_LEN];
	int rc = e ? read_in(root, OW_EXPORT_MANIFEST, &t, &n) : OW_EVERIFY;
	if (!e)
		problem(r, "manifest", OW_EXPORT_SUMS, "the signed SHA256SUMS does not list manifest.json");
	else if (rc)
		problem(r, unreadable_kind(rc, "missing"), OW_EXPORT_MANIFEST, "%s", ow_err_detail());
	else if ((rc = ow_sha256_buf(t, n, d)) == 0) {
		ow_hex(d, sizeof d, hex);
		if (!ow_digest_eq(hex, e->sha256, 64)) {
			rc = OW_EVERIFY;
			problem(r, "hash", OW_EXPORT_MANIFEST, "sha256 %s, the signed SHA256SUMS says %s "
			        "(manifest edited after signing)", hex, e->sha256);
		} else if ((rc = ex_json_parse(t, n, m))) {
			problem(r, "manifest", OW_EXPORT_MANIFEST, "%s", ow_err_detail());
		} else { /* verified: counted with the files it lists, as export counts them */
			r->files++;
			r->bytes += n;
		}
	}
	free(t);
	return rc;
}

/* Step 3: the manifest's own claims (key, paths, agreement with SHA256SUMS). */
static void check_claims(const struct ow_check_opts *o, struct ow_check_report *r,
                         struct ex_manifest *m, const struct ex_files *sums)
{
	char id[OW_KEYID_HEX];
	ow_signify_keyid(o->pub->keynum, id);
	if (strcmp(m->key_id, id))
		problem(r, "manifest", OW_EXPORT_MANIFEST, "names key '%s' but was signed by %s",
		        m->key_id, id);
	if (m->sequence > OW_EXPORT_SEQ_MAX)
		problem(r, "manifest", OW_EXPORT_MANIFEST, "sequence %lld is out of range (at most "
		        "2^53)", (long long)m->sequence);
	ex_files_sort(&m->files);
	for (size_t i = 0; i < m->files.n; i++) {
		const struct ex_file *f = &m->files.v[i];
		const char *why = ex_path_problem(f->path);
		const struct ex_file *s = ex_files_find(sums, f->path);
		if (why)
			problem(r, "path", f->path, "%s", why);
		else if (i && !strcmp(f->path, m->files.v[i - 1].path))
			problem(r, "path", f->path, "listed twice in the manifest");
		else if (!s || strcmp(s->sha256, f->sha256))
			problem(r, "manifest", f->path, "manifest.json and SHA256SUMS disagree on it");
	}
	if (sums->n != m->files.n + 1)
		problem(r, "manifest", OW_EXPORT_SUMS, "lists %zu files, the manifest %zu (+ itself)",
		        sums->n, m->files.n);
	const char *other = NULL, *hit = ex_files_case_clash(&m->files, &other);
	if (hit && strcmp(hit, other))
		problem(r, "path", hit, "differs from '%s' only in case (one hides the other on "
		        "FAT/exFAT, Windows, macOS)", other);
}

static int is_meta_file(const char *rel)
{
	return !strcmp(rel, OW_EXPORT_SUMS) || !strcmp(rel, OW_EXPORT_SIG) ||
	       !strcmp(rel, OW_EXPORT_MANIFEST);
}

/* Step 4: what is on disk but not in the manifest; links, FIFOs and devices
 * are never fine (and never opened). */
static void walk(int dfd, const char *rel, const struct ex_files *want,
                 struct ow_check_report *r, int depth)
{
	DIR *d = depth < 32 ? fdopendir(dfd) : NULL;
	struct dirent *e;
	if (!d)
		close(dfd);
	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char rr[PATH_MAX];
		struct stat st;
		snprintf(rr, sizeof rr, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		int sub = S_ISDIR(st.st_mode) ? openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY |
		                                       O_NOFOLLOW | O_CLOEXEC) : -1;
		if (S_ISLNK(st.st_mode))
			problem(r, "link", rr, "a link (exports hold plain files only)");
		else if (S_ISDIR(st.st_mode) && depth == 0 && ow_export_lab_dir(rr)) {
			if (sub >= 0) /* the lab's probes and reports: not the export's (docs/fleet.md) */
				close(sub);
		} else if (S_ISDIR(st.st_mode) && sub >= 0)
			walk(sub, rr, want, r, depth + 1);
		else if (!S_ISREG(st.st_mode))
			problem(r, "special", rr, "%s (exports hold plain files only; never read)",
			        ow_file_kind(st.st_mode));
		else if (!ex_files_find(want, rr) && !(depth == 0 && is_meta_file(rr)))
			problem(r, "extra", rr, "not in the manifest%s",
			        strstr(rr, OW_EXPORT_TMP_PREFIX) ? " (a temp file of an interrupted export)"
			                                         : "");
	}
	if (d)
		closedir(d);
}

/* Step 4 on a store: objects under the prefix the manifest does not list.
 * A listing that fails (over the size cap, stalled, endless) is an error,
 * never a verdict: the check for extra objects is not skipped silently. */
static int walk_remote(struct ex_remote *rx, const struct ex_files *want,
                       struct ow_check_report *r)
{
	struct ex_files all = {0};
	int rc = ex_remote_list(rx, want->n + 3, &all); /* + SHA256SUMS{,.sig}, manifest */
	for (size_t i = 0; !rc && i < all.n; i++)
		if (!ex_files_find(want, all.v[i].path) && ex_s3_owned_path(all.v[i].path))
			problem(r, "extra", all.v[i].path, "not in the manifest");
	ex_files_dispose(&all);
	if (rc == OW_EUNSUPPORTED) /* a web server: nothing to list */
		return 0;
	if (rc) {
		char *why = strdup(ow_err_detail());
		rc = ow_err(OW_EINCOMPLETE, "cannot list the export's objects: %s — the check for "
		            "objects the manifest does not list could not run, so the export was not "
		            "judged; try again when the store answers", why ? why : "out of memory");
		free(why);
	}
	return rc;
}

static int check_files_remote(struct ex_remote *rx, struct ow_check_report *r,
                              const struct ex_files *f)
{
	int *rc = calloc(f->n + 1, sizeof *rc);
	char (*got)[OW_SHA256_HEX] = calloc(f->n + 1, sizeof *got);
	uint64_t *sizes = calloc(f->n + 1, sizeof *sizes);
	char **err = calloc(f->n + 1, sizeof *err);
	if (!rc || !got || !sizes || !err) {
		free(rc), free(got), free(sizes), free(err);
		return ow_err(OW_ENOMEM, "check: out of memory");
	}
	for (size_t i = 0; i < f->n; i++)
		rc[i] = ex_path_problem(f->v[i].path) ? 0 : 1;
	ex_remote_hash(rx, f, rc, got, sizes, err);
	for (size_t i = 0; i < f->n; i++) {
		const struct ex_file *e = &f->v[i];
		if (rc[i] == OW_ENOENT)
			problem(r, "missing", e->path, "missing (the export is incomplete)");
		else if (rc[i] == 3)
			problem(r, "size", e->path, "larger than the %llu bytes the manifest says",
			        (unsigned long long)e->size);
		else if (rc[i] < 0)
			problem(r, "missing", e->path, "cannot read it: %s", err[i] ? err[i] : "");
		else if (rc[i] == 2 && sizes[i] != e->size)
			problem(r, "size", e->path, "%llu bytes, the manifest says %llu",
			        (unsigned long long)sizes[i], (unsigned long long)e->size);
		else if (rc[i] == 2 && !ow_digest_eq(got[i], e->sha256, 64))
			problem(r, "hash", e->path, "sha256 %s, the manifest says %s", got[i], e->sha256);
		else if (rc[i] == 2) {
			r->files++;
			r->bytes += sizes[i];
		}
		free(err[i]);
	}
	free(rc), free(got), free(sizes), free(err);
	return 0;
}

struct hash_job {
	const struct ow_check_opts *o;
	int root;
	const struct ex_files *files;
	int *rc;
	char (*got)[OW_SHA256_HEX];
	uint64_t *sizes;
	size_t next;
	pthread_mutex_t mu;
};

static void *hash_worker(void *arg)
{
	struct hash_job *j = arg;
	for (;;) {
		pthread_mutex_lock(&j->mu);
		size_t i = j->next++;
		pthread_mutex_unlock(&j->mu);
		if (i >= j->files->n)
			return NULL;
		if (j->rc[i] != 1) /* 1 = to hash */
			continue;
		int rc = ex_hash_at(j->root, j->files->v[i].path, &j->sizes[i], j->got[i]);
		j->rc[i] = rc ? rc : 2; /* 2 = hashed */
	}
}

static void hash_all(struct hash_job *j)
{
	int n = j->o->jobs < 1 ? 1 : j->o->jobs > 32 ? 32 : j->o->jobs;
	pthread_t t[32];
	int started = 0;
	pthread_mutex_init(&j->mu, NULL);
	for (int i = 0; i < n; i++)
		started += pthread_create(&t[started], NULL, hash_worker, j) == 0;
	if (!started)
		hash_worker(j);
	for (int i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	pthread_mutex_destroy(&j->mu);
}

/* Which manifest files to hash: safe paths that are regular files of the right size. */
static void select_files(int root, const struct ex_files *f, struct ow_check_report *r,
                         int *todo)
{
	for (size_t i = 0; i < f->n; i++) {
		struct stat st;
		int fd, rc;
		todo[i] = 0;
		if (ex_path_problem(f->v[i].path))
			continue;
		if ((rc = ow_open_regular_beneath(root, f->v[i].path, &fd, &st))) {
			if (rc == OW_ENOENT)
				problem(r, "missing", f->v[i].path, "missing (the export is incomplete)");
			else
				problem(r, unreadable_kind(rc, "missing"), f->v[i].path, "%s", ow_err_detail());
			continue;
		}
		close(fd);
		if ((uint64_t)st.st_size != f->v[i].size)
			problem(r, "size", f->v[i].path, "%llu bytes, the manifest says %llu",
			        (unsigned long long)st.st_size, (unsigned long long)f->v[i].size);
		else
			todo[i] = 1;
	}
}

static int check_files(const struct ow_check_opts *o, int root, struct ow_check_report *r,
                       const struct ex_files *f)
{
	struct hash_job j = {.o = o, .root = root, .files = f};
	j.rc = calloc(f->n + 1, sizeof *j.rc);
	j.got = calloc(f->n + 1, sizeof *j.got);
	j.sizes = calloc(f->n + 1, sizeof *j.sizes);
	if (!j.rc || !j.got || !j.sizes) {
		free(j.rc), free(j.got), free(j.sizes);
		return ow_err(OW_ENOMEM, "check: out of memory");
	}
	select_files(root, f, r, j.rc);
	hash_all(&j);
	for (size_t i = 0; i < f->n; i++) {
		if (j.rc[i] < 0)
			problem(r, "missing", f->v[i].path, "cannot read it");
		else if (j.rc[i] == 2 && (!ow_digest_eq(j.got[i], f->v[i].sha256, 64) ||
		                          j.sizes[i] != f->v[i].size))
			problem(r, "hash", f->v[i].path, "sha256 %s, the manifest says %s", j.got[i],
			        f->v[i].sha256);
		else if (j.rc[i] == 2) {
			r->files++;
			r->bytes += j.sizes[i];
		}
	}
	free(j.rc), free(j.got), free(j.sizes);
	return 0;
}

static void check_expiry(struct ow_check_report *r, const struct ex_manifest *m, int64_t now)
{
	if (now <= m->expires)
		return;
	int64_t ago = now - m->expires, days = ago / 86400;
	if (days >= 1)
		problem(r, "expired", OW_EXPORT_MANIFEST, "expired %lld day%s ago — make a fresh "
		        "export", (long long)days, days == 1 ? "" : "s");
	else if (ago >= 3600)
		problem(r, "expired", OW_EXPORT_MANIFEST, "expired %lld hour%s ago — make a "
		        "fresh export", (long long)(ago / 3600), ago / 3600 == 1 ? "" : "s");
	else
		problem(r, "expired", OW_EXPORT_MANIFEST, "expired less than an hour ago — make "
		        "a fresh export");
}

/* An export with a name is held to what was accepted for its key and name,
 * and to what was accepted for the key alone before exports had names: one
 * sequence covered every stick of a key then, so an export below it is
 * older than one already taken.  One without a name, to the key alone. */
static void check_rollback(struct ow_check_report *r, const struct ex_manifest *m,
                           int64_t named, int64_t per_key)
{
	long long seq = m->sequence, next;
	r->accepted = named > per_key ? named : per_key;
	next = (long long)r->accepted + 1;
	if (m->sequence >= r->accepted)
		return;
	if (!*m->name)
		problem(r, "rollback", OW_EXPORT_MANIFEST, "sequence %lld is older than sequence %lld "
		        "already accepted for key %s (an old stick? or a new workspace signing with "
		        "this key: re-export with 'offwheel export --sequence %lld')", seq,
		        (long long)r->accepted, m->key_id, next);
	else if (named >= per_key)
		problem(r, "rollback", OW_EXPORT_MANIFEST, "'%s': sequence %lld is older than sequence "
		        "%lld already accepted for '%s' with key %s — an old copy of it; do not install "
		        "from it (if '%s' was exported again elsewhere with this key, re-export it with "
		        "'offwheel export --sequence %lld')", m->name, seq, (long long)named, m->name,
		        m->key_id, m->name, next);
	else
		problem(r, "rollback", OW_EXPORT_MANIFEST, "'%s': sequence %lld is older than sequence "
		        "%lld accepted for key %s from an export without a name (one sequence for every "
		        "stick of a key, before exports had names) — re-export with 'offwheel export "
		        "--sequence %lld'", m->name, seq, (long long)per_key, m->key_id, next);
}

/* Sequences follow the exporting machine's clock: one more than a day ahead
 * of this clock is valid, but every later export of it must be above it. */
#define AHEAD_WARN_S 86400
static void check_ahead(struct ow_check_report *r, const struct ex_manifest *m, int64_t now)
{
	if (m->sequence <= now || m->sequence - now <= AHEAD_WARN_S)
		return;
	warning(r, "ahead", OW_EXPORT_MANIFEST, "sequence %lld is %lld days ahead of this "
	        "machine's clock in Unix seconds (the exporting machine's clock was ahead, this "
	        "one's is behind, or --sequence was set high) — valid, but every later export %s%s%s "
	        "with key %s must be above it: offwheel export sees to that on this stick and in "
	        "the workspace that made it; elsewhere give --sequence %lld",
	        (long long)m->sequence, (long long)((m->sequence - now) / 86400),
	        *m->name ? "of '" : "", m->name, *m->name ? "'" : "", m->key_id,
	        (long long)m->sequence + 1);
}

/* Step 5: expiry and rollback, then remember the sequence. */
static int check_freshness(struct ow_check_report *r, const struct ex_manifest *m,
                           const char *state, int64_t now)
{
	int64_t named = 0, per_key = 0;
	int rc = ex_json_state_get(state, m->key_id, m->name, &named, &per_key);
	if (rc) {
		problem(r, "state", state, "%s", ow_err_detail());
		return 0;
	}
	check_expiry(r, m, now);
	check_rollback(r, m, named, per_key);
	if (r->n)
		return 0;
	check_ahead(r, m, now);
	rc = ex_json_state_put(state, m->key_id, m->name, m->sequence, now);
	if (rc)
		problem(r, "state", state, "cannot remember the sequence: %s", ow_err_detail());
	return 0;
}

/* Steps 3 to 5; an error only when the store could not be listed. */
static int check_manifest_and_files(const struct ow_check_opts *o, const struct csrc *src,
                                    struct ow_check_report *r,
                                    struct ex_manifest *m, const struct ex_files *sums,
                                    const char *state)
{
	r->sequence = m->sequence;
	r->created = m->created;
	r->expires = m->expires;
	snprintf(r->key_id, sizeof r->key_id, "%s", m->key_id);
	r->sets = m->sets; /* what it says of its sets and devices, for the report */
	r->nsets = m->nsets;
	m->sets = NULL;
	m->nsets = 0;
	snprintf(r->name, sizeof r->name, "%s", m->name);
	check_claims(o, r, m, sums);
	if (src->rx) {
		int rc = walk_remote(src->rx, &m->files, r);
		if (rc)
			return rc;
		check_files_remote(src->rx, r, &m->files);
	} else {
		int top = openat(src->root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (top >= 0)
			walk(top, "", &m->files, r, 0);
		check_files(o, src->root, r, &m->files);
	}
	check_freshness(r, m, state, o->now ? o->now : (int64_t)time(NULL));
	return 0;
}

int ow_export_check(const struct ow_check_opts *o, struct ow_check_report *r)
{
	char state[PATH_MAX], *sums_text = NULL;
	size_t sums_n = 0;
	int listing = 0; /* the store could not be listed */
	struct ex_files sums = {0};
	struct ex_manifest m = {0};
	memset(r, 0, sizeof *r);
	int rc = o->state_path ? 0 : ow_check_default_state(state, sizeof state);
	if (rc)
		return rc;
	struct csrc src = {.root = -1};
	int remote = ow_s3_is_url(o->dir) || !strncmp(o->dir, "http://", 7) ||
	             !strncmp(o->dir, "https://", 8);
	if (remote && (rc = ex_remote_open(o, &src.rx))) {
		ex_remote_free(src.rx);
		return rc;
	}
	int root = remote ? -1 : open(o->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* may be a link */
	src.root = root;
	if (!remote && root < 0) /* nothing there (an export killed before it began): not valid */
		problem(r, "missing", o->dir, "cannot open the export directory: %s", strerror(errno));
	else if ((rc = check_signature(o, &src, r, &sums_text, &sums_n)) == 0) {
		if ((rc = ex_parse_sums(sums_text, sums_n, &sums)))
			problem(r, "manifest", OW_EXPORT_SUMS, "%s", ow_err_detail());
		ex_files_sort(&sums);
		if (!rc && !load_manifest(&src, r, &sums, &m))
			listing = check_manifest_and_files(o, &src, r, &m, &sums,
			                                   o->state_path ? o->state_path : state);
	}
	int unreadable = src.rx && !r->n && rc; /* the store could not be read at all */
	if (listing) {
		unreadable = 1;
		rc = listing;
	}
	if (root >= 0)
		close(root);
	ex_remote_free(src.rx);
	free(sums_text);
	ex_files_dispose(&sums);
	ex_manifest_dispose(&m);
	if (unreadable)
		return rc;
	r->valid = r->n == 0;
	char shown[PATH_MAX];
	ow_url_printable(o->dir, shown, sizeof shown); /* userinfo as "***" */
	return r->valid ? 0 : ow_err(OW_EVERIFY, "%s: %zu problem%s", remote ? shown : o->dir, r->n,
	                             r->n == 1 ? "" : "s");
}
