/* wheelverify.c - wheel semantics on top of one ow_wheel_each_member pass:
 * a single .dist-info matching the filename, RECORD checked member by member
 * (sha256 and size of what was actually decompressed), METADATA Name and
 * Version equal to the filename's (wheel spec; core metadata spec). */
#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "digest.h"
#include "offwheel/error.h"
#include "wheel.h"

#define TAIL "the file is not a valid wheel"
#define NAME_MAX_LEN 256
#define N_CAPTURE 3

static const char *const capture_leaf[N_CAPTURE] = {"METADATA", "RECORD", "WHEEL"};
enum { CAP_METADATA, CAP_RECORD, CAP_WHEEL };

struct capture {
	char *buf;
	size_t len;
	int seen;
};

struct vstate {
	const char *label;
	const struct ow_zip *z;
	size_t cur; /* index of the member being streamed */
	ow_sha256 *h;
	uint8_t (*dig)[OW_SHA256_LEN];
	const char *di; /* "name-version.dist-info" */
	size_t di_len;
	struct capture cap[N_CAPTURE];
	int cap_cur;
	size_t max_meta;
	const struct ow_wheel_consumer *cons;
	int cons_want;
};

static int vfail(int code, const struct vstate *v, const char *fmt, ...) OW_PRINTF(3, 4);
static int vfail(int code, const struct vstate *v, const char *fmt, ...)
{
	char why[1400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	return ow_err(code, "%s: %s — " TAIL, v->label, why);
}

static const char *shown(const char *s, size_t n, char *buf, size_t bufsz)
{
	ow_zip_name_show(s, n, buf, bufsz);
	return buf;
}

/* ---- names and versions -------------------------------------------------- */

/* PEP 503: lowercase, runs of '-', '_' and '.' become one '-'. */
static void norm_name(const char *s, size_t n, char *out, size_t outsz)
{
	size_t o = 0;
	for (size_t i = 0; i < n && o + 1 < outsz; i++) {
		if (strchr("-_.", s[i])) {
			if (o == 0 || out[o - 1] != '-')
				out[o++] = '-';
			continue;
		}
		out[o++] = (char)tolower((unsigned char)s[i]);
	}
	out[o] = '\0';
}

static int same_name(const char *a, size_t an, const char *b, size_t bn)
{
	char x[NAME_MAX_LEN], y[NAME_MAX_LEN];
	norm_name(a, an, x, sizeof x);
	norm_name(b, bn, y, sizeof y);
	return strcmp(x, y) == 0;
}

/* Plain normalized compare until pep440 lands: case, and '_' for '-' (the
 * filename escape). */
static int same_version(const char *a, size_t an, const char *b, size_t bn)
{
	if (an != bn)
		return 0;
	for (size_t i = 0; i < an; i++) {
		char x = (char)tolower((unsigned char)a[i]), y = (char)tolower((unsigned char)b[i]);
		if (x != y && !(strchr("-_", x) && strchr("-_", y)))
			return 0;
	}
	return 1;
}

static int copy_part(const char *s, size_t n, char *out, size_t outsz)
{
	if (n == 0 || n >= outsz)
		return -1;
	memcpy(out, s, n);
	out[n] = '\0';
	return 0;
}

int ow_wheel_filename_name_version(const char *filename, char *name, size_t namesz, char *version,
                                   size_t versionsz)
{
	const char *base = strrchr(filename, '/');
	base = base ? base + 1 : filename;
	size_t n = strlen(base), dashes = 0;
	if (n < 5 || strcmp(base + n - 4, ".whl") != 0)
		return ow_err(OW_EINVAL, "'%.300s' is not a wheel filename (no .whl suffix)", base);
	for (size_t i = 0; i < n - 4; i++)
		dashes += base[i] == '-';
	const char *d1 = strchr(base, '-');
	const char *d2 = d1 ? strchr(d1 + 1, '-') : NULL;
	if ((dashes != 4 && dashes != 5) || !d1 || !d2 ||
	    copy_part(base, (size_t)(d1 - base), name, namesz) ||
	    copy_part(d1 + 1, (size_t)(d2 - d1 - 1), version, versionsz))
		return ow_err(OW_EINVAL,
		              "'%.300s' is not a wheel filename "
		              "(name-version[-build]-python-abi-platform.whl)",
		              base);
	return 0;
}

/* ---- .dist-info ---------------------------------------------------------- */

static size_t top_len(const struct ow_zip_entry *en)
{
	const char *slash = memchr(en->name, '/', en->name_len);
	return slash ? (size_t)(slash - en->name) : 0;
}

static int ends_with(const char *s, size_t n, const char *suf)
{
	size_t k = strlen(suf);
	return n > k && memcmp(s + n - k, suf, k) == 0;
}

static int find_dist_info(struct vstate *v)
{
	char a[300], b[300];
	for (size_t i = 0; i < v->z->n; i++) {
		const struct ow_zip_entry *en = &v->z->e[i];
		size_t t = top_len(en);
		if (!ends_with(en->name, t, ".dist-info"))
			continue;
		if (v->di && (t != v->di_len || memcmp(en->name, v->di, t) != 0))
			return vfail(OW_EZIP, v, "two .dist-info directories ('%s' and '%s')",
			             shown(v->di, v->di_len, a, sizeof a),
			             shown(en->name, t, b, sizeof b));
		v->di = en->name;
		v->di_len = t;
	}
	if (!v->di)
		return vfail(OW_EZIP, v, "no .dist-info directory");
	return 0;
}

static int check_data_dirs(const struct vstate *v, size_t stem_len)
{
	char a[300];
	for (size_t i = 0; i < v->z->n; i++) {
		const struct ow_zip_entry *en = &v->z->e[i];
		size_t t = top_len(en);
		if (ends_with(en->name, t, ".data") &&
		    (t != stem_len + 5 || memcmp(en->name, v->di, stem_len) != 0))
			return vfail(OW_EZIP, v, "'%s' does not match the .dist-info directory",
			             shown(en->name, t, a, sizeof a));
	}
	return 0;
}

static int check_dist_info(const struct vstate *v, const char *name, const char *version)
{
	char a[300];
	size_t stem = v->di_len - strlen(".dist-info");
	const char *dash = memchr(v->di, '-', stem);
	if (!dash || strchr(version, '-') ||
	    memchr(dash + 1, '-', stem - (size_t)(dash - v->di) - 1))
		return vfail(OW_EZIP, v, "'%s' is not NAME-VERSION.dist-info",
		             shown(v->di, v->di_len, a, sizeof a));
	size_t nlen = (size_t)(dash - v->di);
	if (!same_name(v->di, nlen, name, strlen(name)) ||
	    !same_version(dash + 1, stem - nlen - 1, version, strlen(version)))
		return vfail(OW_EZIP, v,
		             ".dist-info directory '%s' does not match the filename (%s %s)",
		             shown(v->di, v->di_len, a, sizeof a), name, version);
	return check_data_dirs(v, stem);
}

/* ---- the pass ------------------------------------------------------------ */

static int capture_index(const struct vstate *v, const char *name)
{
	if (strncmp(name, v->di, v->di_len) != 0 || name[v->di_len] != '/')
		return -1;
	for (int i = 0; i < N_CAPTURE; i++)
		if (strcmp(name + v->di_len + 1, capture_leaf[i]) == 0)
			return i;
	return -1;
}

static int start_capture(struct vstate *v, const char *name, uint64_t size)
{
	int k = capture_index(v, name);
	v->cap_cur = k;
	if (k < 0)
		return 0;
	if (size > v->max_meta)
		return vfail(OW_EZIP, v, "%s is %llu bytes, over the cap of %zu", name,
		             (unsigned long long)size, v->max_meta);
	v->cap[k].buf = malloc((size_t)size + 1);
	if (!v->cap[k].buf)
		return ow_err(OW_ENOMEM, "out of memory");
	v->cap[k].len = 0;
	v->cap[k].seen = 1;
	return 0;
}

static int on_member(const char *name, uint64_t size, void *ud)
{
	struct vstate *v = ud;
	while (v->cur < v->z->n && v->z->e[v->cur].is_dir)
		v->cur++;
	if (v->cur >= v->z->n || strcmp(v->z->e[v->cur].name, name) != 0)
		return ow_err(OW_EINTERNAL, "%s: member order changed during the pass", v->label);
	int rc = ow_sha256_reset(v->h);
	if (!rc)
		rc = start_capture(v, name, size);
	if (rc)
		return rc;
	v->cons_want =
	    v->cons && v->cons->filter ? v->cons->filter(name, size, v->cons->ud) : v->cons != NULL;
	return v->cons_want < 0 ? v->cons_want : OW_MEMBER_READ; /* every member is hashed */
}

static int member_end(struct vstate *v, const char *name)
{
	int rc = ow_sha256_final(v->h, v->dig[v->cur]);
	if (v->cap_cur >= 0)
		v->cap[v->cap_cur].buf[v->cap[v->cap_cur].len] = '\0';
	v->cur++;
	if (!rc && v->cons_want && v->cons->data)
		rc = v->cons->data(name, NULL, 0, v->cons->ud);
	return rc;
}

static int on_data(const char *name, const void *data, size_t len, void *ud)
{
	struct vstate *v = ud;
	if (!data)
		return member_end(v, name);
	int rc = ow_sha256_update(v->h, data, len);
	if (!rc && v->cap_cur >= 0) {
		struct capture *c = &v->cap[v->cap_cur];
		memcpy(c->buf + c->len, data, len); /* bounded: the pass checks the size */
		c->len += len;
	}
	if (!rc && v->cons_want && v->cons->data)
		rc = v->cons->data(name, data, len, v->cons->ud);
	return rc;
}

/* ---- RECORD -------------------------------------------------------------- */

static int row_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ow_record_row *)a)->path,
	              ((const struct ow_record_row *)b)->path);
}

static int entry_cmp(const void *a, const void *b, void *ctx)
{
	const struct ow_zip *z = ctx;
	return strcmp(z->e[*(const size_t *)a].name, z->e[*(const size_t *)b].name);
}

static int may_be_unhashed(const struct vstate *v, const char *path)
{
	if (strncmp(path, v->di, v->di_len) != 0 || path[v->di_len] != '/')
		return 0;
	const char *leaf = path + v->di_len + 1;
	return strcmp(leaf, "RECORD") == 0 || strcmp(leaf, "RECORD.jws") == 0 ||
	       strcmp(leaf, "RECORD.p7s") == 0;
}

static int check_row(const struct vstate *v, size_t idx, const struct ow_record_row *r)
{
	const struct ow_zip_entry *en = &v->z->e[idx];
	char a[600], got[48], want[48];
	if (!r->has_hash || !r->has_size) {
		if (may_be_unhashed(v, r->path))
			return 0;
		return vfail(OW_ERECORD, v, "RECORD line %zu: no hash or size for '%s'", r->line,
		             shown(r->path, r->path_len, a, sizeof a));
	}
	if (r->size != en->usize)
		return vfail(OW_ERECORD, v,
		             "RECORD: member '%s' is %llu bytes but RECORD says %llu",
		             shown(r->path, r->path_len, a, sizeof a),
		             (unsigned long long)en->usize, (unsigned long long)r->size);
	if (ow_digest_eq(r->sha256, v->dig[idx], OW_SHA256_LEN))
		return 0;
	ow_b64url_nopad(v->dig[idx], OW_SHA256_LEN, got, sizeof got);
	ow_b64url_nopad(r->sha256, OW_SHA256_LEN, want, sizeof want);
	return vfail(OW_ERECORD, v, "RECORD: member '%s' has sha256=%s but RECORD says sha256=%s",
	             shown(r->path, r->path_len, a, sizeof a), got, want);
}

static int check_record_dups(const struct vstate *v, const struct ow_record *rec)
{
	char a[600];
	for (size_t i = 1; i < rec->n; i++)
		if (strcmp(rec->rows[i - 1].path, rec->rows[i].path) == 0)
			return vfail(OW_ERECORD, v, "RECORD lists '%s' twice",
			             shown(rec->rows[i].path, rec->rows[i].path_len, a, sizeof a));
	return 0;
}

static size_t *sorted_files(const struct ow_zip *z, size_t *n)
{
	size_t *idx = malloc((z->n ? z->n : 1) * sizeof *idx);
	*n = 0;
	if (!idx)
		return NULL;
	for (size_t i = 0; i < z->n; i++)
		if (!z->e[i].is_dir)
			idx[(*n)++] = i;
	qsort_r(idx, *n, sizeof *idx, entry_cmp, (void *)(uintptr_t)z);
	return idx;
}

static int merge_record(const struct vstate *v, const struct ow_record *rec, const size_t *idx,
                        size_t nf)
{
	char a[600];
	size_t i = 0, j = 0;
	while (i < nf || j < rec->n) {
		int c = i == nf       ? 1
		        : j == rec->n ? -1
		                      : strcmp(v->z->e[idx[i]].name, rec->rows[j].path);
		if (c < 0) {
			const struct ow_zip_entry *en = &v->z->e[idx[i]];
			return vfail(OW_ERECORD, v, "member '%s' is not listed in RECORD",
			             shown(en->name, en->name_len, a, sizeof a));
		}
		if (c > 0)
			return vfail(OW_ERECORD, v,
			             "RECORD lists '%s' but the archive has no such member",
			             shown(rec->rows[j].path, rec->rows[j].path_len, a, sizeof a));
		int rc = check_row(v, idx[i++], &rec->rows[j++]);
		if (rc)
			return rc;
	}
	return 0;
}

static int check_record(const struct vstate *v)
{
	const struct capture *c = &v->cap[CAP_RECORD];
	struct ow_record *rec = NULL;
	size_t nf = 0;
	if (!c->seen)
		return vfail(OW_ERECORD, v, "no %.*s/RECORD", (int)v->di_len, v->di);
	int rc = ow_record_parse(c->buf, c->len, &rec);
	if (rc)
		return ow_err_prefix(rc, "%s: ", v->label);
	qsort(rec->rows, rec->n, sizeof *rec->rows, row_cmp);
	size_t *idx = sorted_files(v->z, &nf);
	rc = idx ? check_record_dups(v, rec) : ow_err(OW_ENOMEM, "out of memory");
	if (!rc)
		rc = merge_record(v, rec, idx, nf);
	free(idx);
	ow_record_free(rec);
	return rc;
}

/* ---- METADATA and WHEEL -------------------------------------------------- */

static int check_metadata(const struct vstate *v, const char *name, const char *version,
                          struct ow_metadata **md)
{
	const struct capture *c = &v->cap[CAP_METADATA];
	if (!c->seen)
		return vfail(OW_ERECORD, v, "no %.*s/METADATA", (int)v->di_len, v->di);
	int rc = ow_metadata_parse(c->buf, c->len, md);
	if (rc)
		return ow_err_prefix(OW_ERECORD, "%s: ", v->label);
	if (!same_name((*md)->name, strlen((*md)->name), name, strlen(name)) ||
	    !same_version((*md)->version, strlen((*md)->version), version, strlen(version)))
		return vfail(OW_ERECORD, v,
		             "METADATA says %.200s %.200s but the filename says %s %s", (*md)->name,
		             (*md)->version, name, version);
	return 0;
}

static int check_wheel_file(const struct vstate *v)
{
	const struct capture *c = &v->cap[CAP_WHEEL];
	if (!c->seen)
		return vfail(OW_ERECORD, v, "no %.*s/WHEEL", (int)v->di_len, v->di);
	const char *p = c->buf;
	while (p && strncmp(p, "Wheel-Version:", 14) != 0)
		p = (p = strchr(p, '\n')) ? p + 1 : NULL;
	if (!p || strncmp(p + 14 + strspn(p + 14, " \t"), "1.", 2) != 0)
		return vfail(OW_ERECORD, v, "WHEEL has no Wheel-Version 1.x");
	return 0;
}

/* ---- entry point --------------------------------------------------------- */

struct names {
	char name[NAME_MAX_LEN];
	char version[NAME_MAX_LEN];
};

static int fill_info(struct vstate *v, struct ow_metadata *md, struct ow_wheel_info **out)
{
	struct ow_wheel_info *info = calloc(1, sizeof *info);
	if (!info)
		return ow_err(OW_ENOMEM, "out of memory");
	info->dist_info = strndup(v->di, v->di_len);
	info->metadata = md;
	info->wheel_text = v->cap[CAP_WHEEL].buf;
	v->cap[CAP_WHEEL].buf = NULL;
	for (size_t i = 0; i < v->z->n; i++)
		info->n_members += !v->z->e[i].is_dir;
	info->total_size = v->z->total_usize;
	*out = info;
	return info->dist_info ? 0 : ow_err(OW_ENOMEM, "out of memory");
}

static int verify_checks(struct vstate *v, const struct names *nv, struct ow_wheel_info **out)
{
	struct ow_metadata *md = NULL;
	int rc = check_record(v);
	if (!rc)
		rc = check_metadata(v, nv->name, nv->version, &md);
	if (!rc)
		rc = check_wheel_file(v);
	if (!rc && out)
		rc = fill_info(v, md, out);
	else
		ow_metadata_free(md);
	return rc;
}

static int verify_open(ow_wheel *w, struct vstate *v, const struct names *nv,
                       const struct ow_wheel_consumer *cons)
{
	v->z = ow_wheel_zip(w);
	v->cons = cons;
	v->cap_cur = -1;
	v->dig = calloc(v->z->n, sizeof *v->dig);
	if (!v->dig || ow_sha256_new(&v->h))
		return ow_err(OW_ENOMEM, "out of memory");
	int rc = find_dist_info(v);
	if (!rc)
		rc = check_dist_info(v, nv->name, nv->version);
	if (!rc)
		rc = ow_wheel_each_member(w, on_member, on_data, v);
	return rc;
}

int ow_wheel_verify_fd(int fd, const char *filename, const struct ow_wheel_limits *lim,
                       const struct ow_wheel_consumer *consumer, struct ow_wheel_info **out)
{
	struct names nv;
	struct ow_wheel_limits def;
	ow_wheel *w = NULL;
	struct vstate v = {.label = filename};
	if (out)
		*out = NULL;
	if (!lim) {
		ow_wheel_limits_default(&def);
		lim = &def;
	}
	v.max_meta = lim->max_meta_size;
	int rc = ow_wheel_filename_name_version(filename, nv.name, sizeof nv.name, nv.version,
	                                        sizeof nv.version);
	if (!rc)
		rc = ow_wheel_open_fd(fd, filename, lim, &w);
	if (!rc)
		rc = verify_open(w, &v, &nv, consumer);
	if (!rc)
		rc = verify_checks(&v, &nv, out);
	for (int i = 0; i < N_CAPTURE; i++)
		free(v.cap[i].buf);
	free(v.dig);
	ow_sha256_free(v.h);
	ow_wheel_close(w);
	return rc;
}

void ow_wheel_info_free(struct ow_wheel_info *info)
{
	if (!info)
		return;
	free(info->dist_info);
	ow_metadata_free(info->metadata);
	free(info->wheel_text);
	free(info);
}
