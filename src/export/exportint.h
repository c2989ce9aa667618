/* exportint.h - shared between the export modules (not a public header). */
#ifndef OW_EXPORTINT_H
#define OW_EXPORTINT_H

#include <stddef.h>
#include <stdint.h>

#include "offwheel/error.h"
#include "offwheel/export.h"
#include "offwheel/str.h"

/* Text HTML-escaped onto b. */
void ow_xput_html(struct ow_str *b, const char *text);

/* A file of the tree: relative path, size, sha256. */
struct ow_xfile {
	char *path;
	uint64_t size;
	char sha256[OW_SHA256_HEX];
};
struct ow_xfiles {
	struct ow_xfile *v;
	size_t n;
};
int ow_xfiles_add(struct ow_xfiles *f, const char *path, uint64_t size, const char *sha256);
void ow_xfiles_free(struct ow_xfiles *f);
/* Sort by path; then 1 when a path (case-folded) repeats, naming it. */
void ow_xfiles_sort(struct ow_xfiles *f);
const struct ow_xfile *ow_xfiles_find(const struct ow_xfiles *f, const char *path);
/* The first pair of paths equal when ASCII case is ignored, or NULL. */
const char *ow_xfiles_case_clash(const struct ow_xfiles *f, const char **other);
/* A manifest path: relative, '/'-separated, no '.', '..', empty component,
 * backslash, ':', control char or leading '/'; NULL when fine, else why. */
const char *ow_xpath_problem(const char *path);

/* What goes into the manifest besides the files. */
struct ow_xmeta {
	int64_t sequence, created, expires;
	char key_id[OW_KEYID_HEX];
	const char *dir;
};

/* Text of the generated files (malloc'd into *out). */
int ow_xgen_simple_root(const struct ow_export_plan *p, struct ow_str *out);
int ow_xgen_project_page(const struct ow_export_plan *p, const char *project, struct ow_str *out);
int ow_xgen_requirements(const struct ow_export_plan *p, const struct ow_export_set *set,
                         struct ow_str *out);
int ow_xgen_install(const struct ow_export_plan *p, const struct ow_xmeta *m, struct ow_str *out);
int ow_xgen_nginx(const char *dir, struct ow_str *out);
int ow_xgen_sums(const struct ow_xfiles *f, struct ow_str *out);
/* Parse SHA256SUMS strictly ("<64 hex>  <path>" or " *<path>" lines). */
int ow_xparse_sums(const char *text, size_t len, struct ow_xfiles *out);

/* JSON (jansson lives in exportjson.c only). */
struct ow_xmanifest {
	char format[32];
	int64_t sequence, created, expires;
	char key_id[OW_KEYID_HEX];
	struct ow_xfiles files;
};
int ow_xjson_manifest(const struct ow_export_plan *p, const struct ow_xmeta *m,
                      const struct ow_xfiles *f, struct ow_str *out);
int ow_xjson_parse(const char *text, size_t len, struct ow_xmanifest *m);
void ow_xmanifest_free(struct ow_xmanifest *m);
/* The accepted-sequence state file: *seq 0 when the key is not known. */
int ow_xjson_state_get(const char *path, const char *key_id, int64_t *seq);
int ow_xjson_state_put(const char *path, const char *key_id, int64_t seq, int64_t now);

/* Files (exportcopy.c).  `root` and `dirfd` are directory fds of the
 * export tree (fsbeneath.h): nothing is opened through a link, nothing is
 * read that fstat did not confirm regular. */
/* Open a store object for reading: a regular file (O_NONBLOCK|O_NOFOLLOW)
 * of exactly `size` bytes, else OW_EHASH naming it (the store is damaged). */
int ow_xopen_object(ow_store *s, const char *hex, uint64_t size, int *fd);
/* Read a whole object of `size` (<= max) bytes and check its hash. */
int ow_xload_object(ow_store *s, const char *hex, uint64_t size, size_t max, char **buf,
                    size_t *len);
/* Copy a store object to dirfd/name, hashing while copying and stopping at
 * `size`; kept when the file is already there with the right bytes (*copied 0). */
int ow_xcopy_object(ow_store *s, const char *hex, uint64_t size, int dirfd, const char *name,
                    int *copied);
/* Write a text file atomically unless the same bytes are there; records it. */
int ow_xwrite_text(int root, const char *rel, const struct ow_str *b, struct ow_xfiles *rec);
/* Hash a regular file beneath dirfd: size and sha256 (OW_ENOENT when missing,
 * OW_EPOLICY when a link or not a regular file). */
int ow_xhash_at(int dirfd, const char *rel, uint64_t *size, char hex[OW_SHA256_HEX]);
/* A temp file name of an export (".ow-tmp-" + 12 hex digits)? */
int ow_xis_tmp_name(const char *name);
/* "fat32", "exfat", "fuse" or "" for the file system of an open fd. */
void ow_xfs_kind(int fd, char *kind, size_t n);

/* What is already in DIR (exporttree.c). */
struct ow_xprev { /* the previous export's file list, when trusted */
	struct ow_xfiles files; /* sorted; path + sha256 */
	const char *trusted;    /* NULL, "signature" or "workspace record" */
	int64_t signed_sequence; /* the stick's sequence when signed by the signing key, else 0 */
};
/* Trusted: SHA256SUMS whose SHA256SUMS.sig verifies with `key`'s public key,
 * else a manifest.json whose sha256 this workspace recorded as one it wrote. */
int ow_xprev_load(ow_store *s, int root, const struct ow_signify_sec *key, struct ow_xprev *p);
void ow_xprev_free(struct ow_xprev *p);
/* Walk DIR (never following a link): every entry must be a directory, a
 * file the new export writes (`want`), an export temp file, or a file the
 * trusted previous list names with its hash unchanged (those go to
 * `remove`).  Anything else (a user's file, a link, a FIFO, a device) is
 * refused before anything changes, naming up to 8 of them. */
int ow_xinventory(int root, const char *dir, const struct ow_xfiles *want,
                  const struct ow_xprev *prev, struct ow_xfiles *remove);
/* Remove the files of ow_xinventory's list (and directories they leave
 * empty below the top level); *removed counts files. */
int ow_xremove(int root, const struct ow_xfiles *remove, size_t *removed);

#endif
