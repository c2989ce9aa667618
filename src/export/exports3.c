/* exports3.c - an export published to an S3-compatible object store, and
 * read back from one (or from any HTTP server holding the tree) to check it.
 *
 * Publishing keeps the directory export's promise on the store, where
 * nothing is atomic but a single PUT:
 *   1. list the prefix; the previous export's file list is trusted when its
 *      SHA256SUMS.sig verifies with the signing key (or its manifest.json is
 *      one this workspace recorded);
 *   2. unfinished multipart uploads of keys this export writes are aborted;
 *   3. every object the new tree holds is HEADed where the listing has one
 *      of the same size: equal checksum -> kept, never sent again;
 *   4. the old SHA256SUMS.sig is deleted first: from here the prefix is not
 *      valid until the end;
 *   5. wheels and their .metadata go up (parallel), then pages, lists,
 *      INSTALL.txt (parallel), then manifest.json, SHA256SUMS, and the
 *      signature last, each PUT carrying its SHA-256 so the store refuses a
 *      damaged body;
 *   6. only then are the objects the previous trusted list named and the new
 *      one does not removed.  Nothing else under the prefix is touched.
 * A run killed anywhere leaves no signature, or the new one over a complete
 * tree: a prefix is never valid and wrong. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "db.h"
#include "digest.h"
#include "event.h"
#include "exportint.h"
#include "offwheel/error.h"
#include "pool.h"
#include "s3.h"
#include "store.h"

#define TEXT_MAX (64u << 20)
#define CONN_MAX 16

/* Connections for parallel requests: one per worker, handed out under a lock. */
struct conns {
	ow_http_conn *v[CONN_MAX];
	int busy[CONN_MAX];
	int n;
	pthread_mutex_t mu;
};

static int conns_open(struct conns *c, int n, const struct ow_http_opts *o)
{
	memset(c, 0, sizeof *c);
	c->n = n < 1 ? 1 : n > CONN_MAX ? CONN_MAX : n;
	pthread_mutex_init(&c->mu, NULL);
	for (int i = 0; i < c->n; i++) {
		int rc = ow_http_conn_new(&c->v[i], o);
		if (rc)
			return rc;
	}
	return 0;
}

static void conns_close(struct conns *c)
{
	for (int i = 0; i < c->n; i++)
		ow_http_conn_free(c->v[i]);
	pthread_mutex_destroy(&c->mu);
	memset(c, 0, sizeof *c);
}

static int conn_take(struct conns *c)
{
	pthread_mutex_lock(&c->mu);
	int k = 0;
	while (k < c->n && c->busy[k])
		k++;
	if (k < c->n)
		c->busy[k] = 1;
	pthread_mutex_unlock(&c->mu);
	return k < c->n ? k : -1; /* workers <= connections: never -1 */
}

static void conn_give(struct conns *c, int k)
{
	pthread_mutex_lock(&c->mu);
	c->busy[k] = 0;
	pthread_mutex_unlock(&c->mu);
}

/* ---- one object of the new tree ----------------------------------------------- */

enum { OBJ_WHEEL, OBJ_TEXT, OBJ_LATE };

struct s3obj {
	char *key;
	const char *hex_src;   /* store object (wheels, metadata), else NULL */
	struct ow_str text;    /* generated text */
	uint64_t size;
	char sha256[OW_SHA256_HEX];
	int phase;             /* OBJ_WHEEL, OBJ_TEXT, OBJ_LATE (manifest, sums, sig) */
	int keep;              /* already there with these bytes */
};

struct ex_s3run {
	struct ow_s3 s3;
	char url[1100]; /* s3://BUCKET/PREFIX as given, normalised */
	struct conns cn;
	int jobs;
	struct ex_files listing; /* the prefix's objects (path, size), sorted */
	struct s3obj *v;
	size_t n;
	ow_store *store;
	char key_id[OW_KEYID_HEX]; /* or "unsigned" */
	uint64_t done, total;
	pthread_mutex_t mu;
	int failed; /* (atomic) an object failed: the others of the step are not started */
};

static const struct ex_file *listed(const struct ex_s3run *u, const char *key)
{
	return ex_files_find(&u->listing, key);
}

/* Every object under the prefix as a sorted file list (path, size), for an
 * export of `expect` files. */
static int list_files(ow_http_conn *c, const struct ow_s3 *s, size_t expect,
                      struct ex_files *out)
{
	struct ow_s3_list l;
	int rc = ow_s3_list(c, s, expect, &l);
	for (size_t i = 0; !rc && i < l.n; i++)
		rc = ex_files_add(out, l.v[i].key, l.v[i].size, NULL);
	if (!rc)
		ex_files_sort(out);
	ow_s3_list_dispose(&l);
	return rc;
}

static const char *content_type(const char *key)
{
	size_t n = strlen(key);
#define ENDS(s) (n >= sizeof s - 1 && !strcmp(key + n - (sizeof s - 1), s))
	if (ENDS(".html"))
		return "text/html; charset=utf-8";
	if (ENDS(".json"))
		return "application/json";
	if (ENDS(".whl") || ENDS(".zip"))
		return "application/zip";
	if (ENDS(".tar.gz"))
		return "application/gzip";
	if (ENDS(".deb"))
		return "application/vnd.debian.binary-package";
	return "text/plain; charset=utf-8";
#undef ENDS
}

static int add_obj(struct ex_s3run *u, const char *key, const char *hex_src, uint64_t size,
                   const char *sha256, int phase, struct s3obj **out)
{
	struct s3obj *g = ow_array_more(u->v, u->n, sizeof *g);
	if (!g)
		return ow_err(OW_ENOMEM, "out of memory");
	u->v = g;
	struct s3obj *o = &g[u->n];
	memset(o, 0, sizeof *o);
	/* analyzer: o->key is u->v[u->n], counted and freed with the run */
	if (!(o->key = strdup(key)))
		return ow_err(OW_ENOMEM, "out of memory");
	u->n++;
	o->hex_src = hex_src;
	o->size = size;
	o->phase = phase;
	snprintf(o->sha256, sizeof o->sha256, "%s", sha256);
	if (out)
		*out = o;
	return 0;
}

int ex_s3_text(struct ex_s3run *u, const char *rel, const struct ow_str *b, struct ex_files *rec)
{
	uint8_t d[OW_SHA256_LEN];
	char hex[OW_SHA256_HEX];
	struct s3obj *o = NULL;
	ow_sha256_buf(b->p ? b->p : "", b->n, d);
	ow_hex(d, sizeof d, hex);
	int late = !strcmp(rel, OW_EXPORT_MANIFEST) || !strcmp(rel, OW_EXPORT_SUMS) ||
	           !strcmp(rel, OW_EXPORT_SIG);
	int rc = add_obj(u, rel, NULL, b->n, hex, late ? OBJ_LATE : OBJ_TEXT, &o);
	if (!rc) {
		ow_str_put(&o->text, b->p ? b->p : "", b->n);
		if (o->text.err)
			rc = ow_err(OW_ENOMEM, "out of memory");
	}
	if (!rc && !strcmp(rel, OW_EXPORT_SIG))
		return 0; /* the signature is not listed in SHA256SUMS */
	return rc ? rc : ex_files_add(rec, rel, b->n, hex);
}

int ex_s3_wheel(struct ex_s3run *u, const char *rel, const char *hex, uint64_t size,
                struct ex_files *rec)
{
	int rc = add_obj(u, rel, hex, size, hex, OBJ_WHEEL, NULL);
	return rc ? rc : ex_files_add(rec, rel, size, hex);
}

/* ---- the previous export on the store ------------------------------------------- */

static int mem_get(ow_http_conn *c, const struct ow_s3 *s, const char *key, char **t,
                   size_t *n)
{
	struct ow_http_membuf m = {.cap = TEXT_MAX};
	int rc = ow_s3_get(c, s, key, ow_http_membuf_write, ow_http_membuf_restart, &m, TEXT_MAX);
	if (rc) {
		ow_http_membuf_dispose(&m);
		return rc;
	}
	if (!m.data && !(m.data = calloc(1, 1)))
		return ow_err(OW_ENOMEM, "out of memory");
	*t = m.data;
	*n = m.len;
	return 0;
}

static int prev_signed(struct ex_s3run *u, const struct ow_signify_sec *key, struct ex_prev *p)
{
	char *sig = NULL, *sums = NULL, *man = NULL;
	size_t sn = 0, un = 0, mn = 0;
	struct ow_signify_pub pub;
	ow_http_conn *c = u->cn.v[0];
	ow_signify_pub_of(key, &pub);
	int rc = mem_get(c, &u->s3, OW_EXPORT_SIG, &sig, &sn);
	if (!rc)
		rc = mem_get(c, &u->s3, OW_EXPORT_SUMS, &sums, &un);
	if (!rc)
		rc = ow_signify_verify(&pub, sums, un, sig, sn);
	if (!rc && !(rc = ex_parse_sums(sums, un, &p->files))) {
		ex_files_sort(&p->files);
		p->trusted = "signature";
		const struct ex_file *e = ex_files_find(&p->files, OW_EXPORT_MANIFEST);
		struct ex_manifest m = {0};
		uint8_t d[OW_SHA256_LEN];
		char hex[OW_SHA256_HEX];
		if (e && !mem_get(c, &u->s3, OW_EXPORT_MANIFEST, &man, &mn) &&
		    !ow_sha256_buf(man, mn, d)) {
			ow_hex(d, sizeof d, hex);
			if (!strcmp(hex, e->sha256) && !ex_json_parse(man, mn, &m)) {
				p->signed_sequence = m.sequence;
				memcpy(p->signed_name, m.name, sizeof p->signed_name);
			}
		}
		ex_manifest_dispose(&m);
	}
	free(sig);
	free(sums);
	free(man);
	if (rc)
		ex_files_dispose(&p->files);
	return rc;
}

static int prev_recorded(struct ex_s3run *u, struct ex_prev *p)
{
	char *t = NULL, hex[OW_SHA256_HEX];
	size_t n = 0;
	uint8_t d[OW_SHA256_LEN];
	struct ex_manifest m = {0};
	int rc = mem_get(u->cn.v[0], &u->s3, OW_EXPORT_MANIFEST, &t, &n);
	if (rc)
		return rc;
	ow_sha256_buf(t, n, d);
	ow_hex(d, sizeof d, hex);
	ow_stmt *st = ow_db_stmt(ow_store_db(u->store), OW_SQL_EXP_BY_MANIFEST);
	if (!st) {
		free(t);
		return OW_EDB;
	}
	ow_stmt_text(st, 1, hex);
	int row = ow_stmt_step(st);
	if (row <= 0 || (rc = ex_json_parse(t, n, &m))) {
		free(t);
		return row < 0 ? row : rc ? rc : OW_ENOENT;
	}
	free(t);
	p->files = m.files;
	memset(&m.files, 0, sizeof m.files);
	ex_manifest_dispose(&m);
	ex_files_sort(&p->files);
	p->trusted = "workspace record";
	return 0;
}

static int want_key(const void *ud, const char *key)
{
	const struct ex_files *want = ud;
	return ex_files_find(want, key) || !strcmp(key, OW_EXPORT_MANIFEST) ||
	       !strcmp(key, OW_EXPORT_SUMS) || !strcmp(key, OW_EXPORT_SIG) ||
	       !strcmp(key, "INSTALL.txt");
}

int ex_s3_begin(ow_store *s, const struct ow_export_opts *o, const struct ex_files *want,
                struct ex_s3run **out, struct ex_prev *prev)
{
	struct ex_s3run *u = calloc(1, sizeof *u);
	*out = u;
	memset(prev, 0, sizeof *prev);
	if (!u)
		return ow_err(OW_ENOMEM, "out of memory");
	u->store = s;
	pthread_mutex_init(&u->mu, NULL);
	u->jobs = o->jobs < 1 ? 1 : o->jobs > 8 ? 8 : o->jobs;
	int rc = ow_s3_open(o->dir, o->endpoint, 1, NULL, &u->s3);
	if (o->key)
		ow_signify_keyid(o->key->keynum, u->key_id);
	else
		snprintf(u->key_id, sizeof u->key_id, "unsigned");
	snprintf(u->s3.owner_hdr, sizeof u->s3.owner_hdr, "x-amz-meta-offwheel-key: %s", u->key_id);
	if (!rc)
		rc = conns_open(&u->cn, u->jobs, &u->s3.http);
	/* bucket and prefix are bounded by their arrays, so url[1100] holds them */
	size_t pl = strnlen(u->s3.prefix, sizeof u->s3.prefix);
	snprintf(u->url, sizeof u->url, "s3://%s%s%.*s", u->s3.bucket, pl ? "/" : "",
	         pl ? (int)pl - 1 : 0, u->s3.prefix);
	if (!rc)
		rc = list_files(u->cn.v[0], &u->s3, want->n, &u->listing);
	if (rc)
		return rc;
	if (listed(u, OW_EXPORT_SIG) && o->key && prev_signed(u, o->key, prev) == 0)
		return 0;
	ex_prev_dispose(prev);
	if (listed(u, OW_EXPORT_MANIFEST) && (rc = prev_recorded(u, prev)) == OW_EDB)
		return rc;
	ow_err_clear();
	size_t aborted = 0;
	rc = ow_s3_abort_uploads(u->cn.v[0], &u->s3, want_key, want, &aborted);
	if (rc == OW_EHTTP || rc == OW_EPARSE) /* a store without the uploads listing */
		rc = 0;
	if (aborted)
		ow_log(OW_LOG_INFO, "export: aborted %zu unfinished upload%s of an interrupted export", aborted,
		        aborted == 1 ? "" : "s");
	return rc;
}

const char *ex_s3_url(const struct ex_s3run *u)
{
	return u->url;
}

int ex_s3_gateway(const struct ex_s3run *u, char *out, size_t n)
{
	size_t bl = strlen(u->s3.base), pl = strlen(u->s3.prefix);
	if (bl + pl >= n)
		return ow_err(OW_ETOOBIG, "the gateway URL is too long");
	memcpy(out, u->s3.base, bl);
	memcpy(out + bl, u->s3.prefix, pl);
	out[bl + pl] = '\0';
	while (bl + pl > 0 && out[bl + pl - 1] == '/')
		out[--pl + bl] = '\0';
	/* the gateway is read anonymously: an endpoint's user:password@ stays out */
	char *auth = strstr(out, "://");
	auth = auth ? auth + 3 : out;
	char *at = memrchr(auth, '@', strcspn(auth, "/?#"));
	if (at)
		memmove(auth, at + 1, strlen(at + 1) + 1);
	return 0;
}

void ex_s3_free(struct ex_s3run *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->n; i++) {
		free(u->v[i].key);
		ow_str_dispose(&u->v[i].text);
	}
	free(u->v);
	ex_files_dispose(&u->listing);
	conns_close(&u->cn);
	pthread_mutex_destroy(&u->mu);
	memset(&u->s3, 0, sizeof u->s3); /* the secret */
	free(u);
}

/* ---- publishing ------------------------------------------------------------------ */

struct phase_run {
	struct ex_s3run *u;
	size_t *idx; /* objects of this step */
	int head;    /* 1: HEAD to decide keep, 0: PUT */
};

static int put_obj(struct ex_s3run *u, ow_http_conn *c, struct s3obj *o)
{
	struct ow_s3_put_req put = {.key = o->key, .fd = -1, .len = o->size, .sha256 = o->sha256,
	                           .content_type = content_type(o->key)};
	if (!o->hex_src) {
		put.body = o->text.p ? o->text.p : "";
		return ow_s3_put(c, &u->s3, &put);
	}
	int rc = ex_open_object(u->store, o->hex_src, o->size, &put.fd);
	if (rc)
		return rc;
	rc = ow_s3_put(c, &u->s3, &put);
	close(put.fd);
	return rc;
}

static int phase_worker(void *ud, size_t i)
{
	struct phase_run *pr = ud;
	struct ex_s3run *u = pr->u;
	struct s3obj *o = &u->v[pr->idx[i]];
	if (__atomic_load_n(&u->failed, __ATOMIC_RELAXED))
		return 0;
	int k = conn_take(&u->cn);
	if (k < 0)
		return ow_err(OW_EINTERNAL, "export: no free connection");
	ow_http_conn *c = u->cn.v[k];
	int rc = 0;
	if (pr->head) {
		uint64_t size = 0;
		char sha[65];
		rc = ow_s3_head(c, &u->s3, o->key, &size, sha, NULL);
		o->keep = !rc && size == o->size && !strcmp(sha, o->sha256);
		if (rc == OW_ENOENT) /* listed a moment ago, gone now: upload it */
			rc = 0;
	} else {
		rc = put_obj(u, c, o);
		pthread_mutex_lock(&u->mu);
		u->done += o->size;
		ow_progress("export", u->done, u->total);
		pthread_mutex_unlock(&u->mu);
	}
	conn_give(&u->cn, k);
	if (rc)
		__atomic_store_n(&u->failed, 1, __ATOMIC_RELAXED);
	return rc; /* the pool keeps the error of the first object (in order) that failed */
}

/* Run the objects whose index `pick` accepts; the first error wins. */
static int run_phase(struct ex_s3run *u, int head, int (*pick)(const struct ex_s3run *u,
                                                                 const struct s3obj *o, int arg),
                     int arg, int jobs)
{
	size_t *idx = calloc(u->n + 1, sizeof *idx), k = 0;
	if (!idx)
		return ow_err(OW_ENOMEM, "out of memory");
	for (size_t i = 0; i < u->n; i++)
		if (pick(u, &u->v[i], arg))
			idx[k++] = i;
	struct phase_run pr = {.u = u, .idx = idx, .head = head};
	int rc = ow_parallel_run(k, jobs, phase_worker, &pr);
	free(idx);
	return rc;
}

static int pick_head(const struct ex_s3run *u, const struct s3obj *o, int arg)
{
	const struct ex_file *l = o->phase == OBJ_LATE ? NULL : listed(u, o->key);
	return l && l->size == o->size;
}

static int pick_put(const struct ex_s3run *u, const struct s3obj *o, int phase)
{
	return o->phase == phase && !o->keep;
}

static int pick_late(const struct ex_s3run *u, const struct s3obj *o, int which)
{
	static const char *const names[] = {OW_EXPORT_MANIFEST, OW_EXPORT_SUMS, OW_EXPORT_SIG};
	return o->phase == OBJ_LATE && !strcmp(o->key, names[which]);
}

int ex_s3_publish(struct ex_s3run *u, const struct ex_files *want, const struct ex_prev *prev,
                  struct ow_export_report *r)
{
	int rc = run_phase(u, 1, pick_head, 0, u->jobs);
	/* from here the prefix is not valid until the new signature is written */
	if (!rc && listed(u, OW_EXPORT_SIG))
		rc = ow_s3_delete(u->cn.v[0], &u->s3, OW_EXPORT_SIG);
	for (size_t i = 0; i < u->n; i++)
		u->total += u->v[i].keep ? 0 : u->v[i].size;
	if (!rc)
		rc = run_phase(u, 0, pick_put, OBJ_WHEEL, u->jobs);
	if (!rc)
		rc = run_phase(u, 0, pick_put, OBJ_TEXT, u->jobs);
	for (int w = 0; !rc && w < 3; w++)
		rc = run_phase(u, 0, pick_late, w, 1);
	for (size_t i = 0; i < u->n; i++) {
		const struct s3obj *o = &u->v[i];
		/* counted as a directory export counts: the files of the manifest */
		if (!strcmp(o->key, OW_EXPORT_SIG) || !strcmp(o->key, OW_EXPORT_SUMS))
			continue;
		r->copied += (size_t)!o->keep;
		r->kept += (size_t)o->keep;
		r->bytes_copied += o->keep ? 0 : o->size;
		r->bytes_total += o->size;
	}
	/* last: what an earlier export wrote and this one does not list — the
	 * previous trusted list names it, or (left by a run killed between its
	 * signature and this step) the object says it was written with this key */
	for (size_t i = 0; !rc && i < u->listing.n; i++) {
		const char *key = u->listing.v[i].path;
		if (want_key(want, key) || ex_path_problem(key) || !ex_s3_owned_path(key))
			continue;
		int ours = ex_files_find(&prev->files, key) != NULL;
		if (!ours) {
			uint64_t size;
			char sha[65], owner[32];
			ours = !ow_s3_head(u->cn.v[0], &u->s3, key, &size, sha, owner) &&
			       !strcmp(owner, u->key_id);
		}
		if (ours && !(rc = ow_s3_delete(u->cn.v[0], &u->s3, key)))
			r->removed++;
	}
	return rc;
}

int ex_s3_owned_path(const char *key)
{
	return !strncmp(key, "simple/", 7) || !strncmp(key, "wheels/", 7) ||
	       !strncmp(key, "requirements/", 13) || !strncmp(key, "tools/", 6) ||
	       (!strncmp(key, "pylock.", 7) && !strchr(key, '/'));
}

/* ---- reading an export back (check) ----------------------------------------------- */

struct ex_remote {
	struct ow_s3 s3;
	int listable; /* s3://: the listing shows extra objects */
	struct conns cn;
	int jobs;
};

int ex_remote_open(const struct ow_check_opts *o, struct ex_remote **out)
{
	struct ex_remote *x = calloc(1, sizeof *x);
	*out = x;
	if (!x)
		return ow_err(OW_ENOMEM, "out of memory");
	struct ow_http_opts h;
	ow_http_opts_default(&h);
	h.ca_file = o->ca_file;
	x->jobs = o->jobs < 1 ? 1 : o->jobs > 8 ? 8 : o->jobs;
	int rc;
	if (ow_s3_is_url(o->dir)) {
		rc = ow_s3_open(o->dir, o->endpoint, 0, &h, &x->s3);
		x->listable = !rc;
	} else {
		rc = ow_s3_open_http(o->dir, &h, &x->s3);
	}
	return rc ? rc : conns_open(&x->cn, x->jobs, &x->s3.http);
}

void ex_remote_free(struct ex_remote *x)
{
	if (!x)
		return;
	conns_close(&x->cn);
	memset(&x->s3, 0, sizeof x->s3);
	free(x);
}

int ex_remote_read(struct ex_remote *x, const char *rel, char **t, size_t *n)
{
	return mem_get(x->cn.v[0], &x->s3, rel, t, n);
}

/* Every key under the prefix (OW_EUNSUPPORTED when the source cannot list). */
int ex_remote_list(struct ex_remote *x, size_t expect, struct ex_files *out)
{
	return x->listable ? list_files(x->cn.v[0], &x->s3, expect, out) : OW_EUNSUPPORTED;
}

struct rhash {
	struct ex_remote *x;
	const struct ex_files *f;
	int *rc; /* in: 1 = to hash; out: 2 hashed, <0 error */
	char (*got)[OW_SHA256_HEX];
	uint64_t *sizes;
	char **err;
};

struct rsink {
	ow_sha256 *h;
	uint64_t n;
};

static int rsink_data(void *ud, const void *buf, size_t len)
{
	struct rsink *k = ud;
	k->n += len;
	return ow_sha256_update(k->h, buf, len);
}

static int rsink_restart(void *ud)
{
	struct rsink *k = ud;
	k->n = 0;
	return ow_sha256_reset(k->h);
}

static int rhash_worker(void *ud, size_t i)
{
	struct rhash *j = ud;
	if (j->rc[i] != 1)
		return 0;
	int k = conn_take(&j->x->cn);
	struct rsink s = {0};
	uint8_t d[OW_SHA256_LEN];
	int rc = k < 0 ? OW_EINTERNAL : ow_sha256_new(&s.h);
	if (!rc) /* a byte more than the manifest says is enough to know it is wrong */
		rc = ow_s3_get(j->x->cn.v[k], &j->x->s3, j->f->v[i].path, rsink_data, rsink_restart,
		               &s, j->f->v[i].size + 1);
	if (!rc && !(rc = ow_sha256_final(s.h, d))) {
		ow_hex(d, sizeof d, j->got[i]);
		j->sizes[i] = s.n;
	}
	if (k >= 0)
		conn_give(&j->x->cn, k);
	ow_sha256_free(s.h);
	if (rc)
		/* analyzer: kept in j->err[i], which the caller frees */
		j->err[i] = strdup(ow_err_detail());
	j->rc[i] = rc ? (rc == OW_ETOOBIG ? 3 : rc) : 2;
	return 0;
}

int ex_remote_hash(struct ex_remote *x, const struct ex_files *f, int *rc,
                   char (*got)[OW_SHA256_HEX], uint64_t *sizes, char **err)
{
	struct rhash j = {.x = x, .f = f, .rc = rc, .got = got, .sizes = sizes, .err = err};
	ow_parallel_for(f->n, x->jobs, rhash_worker, &j);
	return 0;
}
