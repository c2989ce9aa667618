/* filemeta.c - a file's core metadata kept parsed in the index database
 * (table file_meta, fetch.h): written once when METADATA is first read,
 * whatever it came from, and read back by every later resolve. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "offwheel/error.h"
#include "offwheel/fetch.h"
#include "offwheel/str.h"
#include "event.h"
#include "hex.h"
#include "rangemeta.h"
#include "wheelmeta.h"
#include "store.h"
#include "digest.h"

/* The values one a line; a value holding a newline cannot be kept so. */
static int join_lines(char *const *v, size_t n, const char *what, char **out)
{
	struct ow_str b = {0};
	for (size_t i = 0; i < n; i++) {
		if (strchr(v[i], '\n')) {
			ow_str_dispose(&b);
			return ow_err(OW_EPARSE, "METADATA: a %s value holds a line break", what);
		}
		ow_str_puts(&b, v[i]);
		ow_str_put(&b, "\n", 1);
	}
	ow_str_put(&b, "", 0);
	if (!b.p && !b.err && !(b.p = calloc(1, 1)))
		b.err = OW_ENOMEM;
	return b.err ? (ow_str_dispose(&b), ow_err(OW_ENOMEM, "out of memory")) : ow_str_take(&b, out);
}

static int split_lines(const char *text, char ***v, size_t *n)
{
	size_t k = 0;
	for (const char *p = text; *p; p++)
		k += *p == '\n';
	*v = calloc(k + 1, sizeof **v);
	*n = 0;
	if (!*v)
		return ow_err(OW_ENOMEM, "out of memory");
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);
		/* analyzer: kept in (*v)[*n - 1], freed with the metadata (ow_file_meta_clear) */
		if (!((*v)[(*n)++] = strndup(p, l)))
			return ow_err(OW_ENOMEM, "out of memory");
		p += l + (nl != NULL);
	}
	return 0;
}

int ow_file_meta_record(ow_store *s, int64_t file_id, const char *source, const char *text,
                        size_t len)
{
	struct ow_metadata *md = NULL;
	char *reqs = NULL, *extras = NULL, hex[OW_SHA256_HEX];
	uint8_t dg[OW_SHA256_LEN];
	int rc = ow_metadata_parse(text, len, &md);
	if (!rc)
		rc = join_lines(md->requires_dist, md->n_requires_dist, "Requires-Dist", &reqs);
	if (!rc)
		rc = join_lines(md->provides_extra, md->n_provides_extra, "Provides-Extra", &extras);
	if (!rc)
		rc = ow_sha256_buf(text, len, dg);
	ow_stmt *st = rc ? NULL : ow_db_stmt(ow_store_db(s), OW_SQL_FMETA_PUT);
	if (!rc && !st)
		rc = OW_EDB;
	if (!rc) {
		ow_hex(dg, sizeof dg, hex);
		ow_stmt_int(st, 1, file_id);
		ow_stmt_text(st, 2, source);
		ow_stmt_text(st, 3, hex);
		ow_stmt_int(st, 4, (int64_t)len);
		ow_stmt_text(st, 5, md->name);
		ow_stmt_text(st, 6, md->version);
		ow_stmt_text(st, 7, md->requires_python);
		ow_stmt_text(st, 8, reqs);
		ow_stmt_text(st, 9, extras);
		ow_stmt_int(st, 10, (int64_t)time(NULL));
		rc = ow_stmt_run(st);
	}
	free(reqs);
	free(extras);
	ow_metadata_free(md);
	return rc;
}

static char *dup_col(ow_stmt *st, int i)
{
	return ow_col_is_null(st, i) ? NULL : strdup(ow_col_text(st, i));
}

int ow_file_meta_get(ow_store *s, int64_t file_id, struct ow_file_meta *out)
{
	memset(out, 0, sizeof *out);
	ow_stmt *st = ow_db_stmt(ow_store_db(s), OW_SQL_FMETA_GET);
	if (!st)
		return OW_EDB;
	ow_stmt_int(st, 1, file_id);
	int rc = ow_stmt_step(st);
	if (rc <= 0)
		return rc;
	struct ow_metadata *md = calloc(1, sizeof *md);
	if (!md) {
		ow_stmt_run(st);
		return ow_err(OW_ENOMEM, "out of memory");
	}
	snprintf(out->source, sizeof out->source, "%s", ow_col_text(st, 0));
	snprintf(out->sha256, sizeof out->sha256, "%s", ow_col_text(st, 1));
	md->name = dup_col(st, 2);
	md->version = dup_col(st, 3);
	md->requires_python = dup_col(st, 4);
	rc = md->name && md->version && (ow_col_is_null(st, 4) || md->requires_python)
	         ? 0
	         : ow_err(OW_ENOMEM, "out of memory");
	if (!rc)
		rc = split_lines(ow_col_text(st, 5), &md->requires_dist, &md->n_requires_dist);
	if (!rc)
		rc = split_lines(ow_col_text(st, 6), &md->provides_extra, &md->n_provides_extra);
	if (!rc && !ow_col_is_null(st, 7))
		rc = split_lines(ow_col_text(st, 7), &out->build_requires, &out->nbuild_requires);
	out->deps_dynamic = ow_col_int(st, 8) != 0;
	ow_stmt_run(st);
	out->md = md;
	if (rc) {
		ow_file_meta_clear(out);
		return rc;
	}
	return 1;
}

int ow_file_meta_set_build(ow_store *s, int64_t file_id, char *const *reqs, size_t n,
                           bool deps_dynamic)
{
	char *text = NULL;
	int rc = join_lines(reqs, n, "build-system requires", &text);
	ow_stmt *st = rc ? NULL : ow_db_stmt(ow_store_db(s), OW_SQL_FMETA_SET_BUILD);
	if (!rc && !st)
		rc = OW_EDB;
	if (!rc) {
		ow_stmt_int(st, 1, file_id);
		ow_stmt_text(st, 2, text);
		ow_stmt_int(st, 3, deps_dynamic);
		rc = ow_stmt_run(st);
	}
	free(text);
	return rc;
}

void ow_file_meta_clear(struct ow_file_meta *m)
{
	ow_metadata_free(m->md);
	m->md = NULL;
	for (size_t i = 0; i < m->nbuild_requires; i++)
		free(m->build_requires[i]);
	free(m->build_requires);
	m->build_requires = NULL;
	m->nbuild_requires = 0;
}

/* ---- the wheel's own METADATA against what ranges gave ------------------------ */

/* Sets resolved with the file's wrong metadata: incomplete, saying why. */
static int mark_sets_wrong(ow_store *s, int64_t file_id, const char *filename)
{
	char why[400];
	ow_stmt *st = ow_db_stmt(ow_store_db(s), OW_SQL_FMETA_SETS_WRONG);
	if (!st)
		return OW_EDB;
	snprintf(why, sizeof why, OW_SET_META_WRONG "the METADATA of %s read by range requests "
	         "was not the wheel's", filename);
	ow_stmt_int(st, 1, file_id);
	ow_stmt_text(st, 2, why);
	return ow_stmt_run(st);
}

int ow_fetch_check_range_meta(ow_store *s, int64_t file_id, const char *filename, int fd,
                              uint64_t size)
{
	struct ow_file_meta fm;
	struct ow_rangemeta rm = {0};
	int rc = ow_file_meta_get(s, file_id, &fm);
	if (rc <= 0)
		return rc;
	if (strcmp(fm.source, OW_META_RANGE)) {
		ow_file_meta_clear(&fm);
		return 0;
	}
	uint8_t dg[OW_SHA256_LEN];
	char hex[OW_SHA256_HEX];
	if (!(rc = ow_rangemeta_read_fd(fd, filename, size, &rm)) &&
	    !(rc = ow_sha256_buf(rm.text, rm.text_len, dg))) {
		ow_hex(dg, sizeof dg, hex);
		if (strcmp(hex, fm.sha256)) {
			ow_log(OW_LOG_WARN,
			       "%s: its METADATA (sha256 %.12s…) is not the one read earlier by range "
			       "requests (%.12s…) — the server changed the file or sent other bytes; the "
			       "wheel's own is kept now, and the sets resolved with the other are marked "
			       "incomplete until their targets are resolved again",
			       filename, hex, fm.sha256);
			rc = ow_file_meta_record(s, file_id, OW_META_WHEEL, rm.text, rm.text_len);
			rc = rc ? rc : mark_sets_wrong(s, file_id, filename);
			rc = rc ? rc : 1;
		}
	}
	ow_rangemeta_clear(&rm);
	ow_file_meta_clear(&fm);
	return rc;
}
