/* exportint.h - shared between the export modules (not a public header). */
#ifndef OW_EXPORTINT_H
#define OW_EXPORTINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "offwheel/error.h"
#include "offwheel/export.h"
#include "offwheel/str.h"

/* Text HTML-escaped onto b. */
void ex_put_html(struct ow_str *b, const char *text);
/* A hostile name is shown, never replayed: control characters, '\\' and
 * bytes beyond ASCII as \xNN. */
void ex_put_shown(struct ow_str *b, const char *name);

/* A file of the tree: relative path, size, sha256. */
struct ex_file {
	char *path;
	uint64_t size;
	char sha256[OW_SHA256_HEX];
};
struct ex_files {
	struct ex_file *v;
	size_t n;
};
int ex_files_add(struct ex_files *f, const char *path, uint64_t size, const char *sha256);
void ex_files_dispose(struct ex_files *f);
/* Sort by path; then 1 when a path (case-folded) repeats, naming it. */
void ex_files_sort(struct ex_files *f);
const struct ex_file *ex_files_find(const struct ex_files *f, const char *path);
/* The first pair of paths equal when ASCII case is ignored, or NULL. */
const char *ex_files_case_clash(const struct ex_files *f, const char **other);
/* A manifest path: relative, '/'-separated, no '.', '..', empty component,
 * backslash, ':', control char or leading '/'; NULL when fine, else why. */
const char *ex_path_problem(const char *path);

/* What goes into the manifest besides the files. */
struct ex_meta {
	int64_t sequence, created, expires;
	char key_id[OW_KEYID_HEX];
	const char *dir;
	const char *tool; /* the tools/ file's name, NULL when there is none */
	const struct ow_export_extra *extras; /* the caller's files (opts.extras) */
	size_t nextras;
	const char *install_note;
	char name[OW_EXPORT_NAME_MAX + 1];
};

/* Text of the generated files (malloc'd into *out). */
int ex_gen_simple_root(const struct ow_export_plan *p, struct ow_str *out);
int ex_gen_project_page(const struct ow_export_plan *p, const char *project, struct ow_str *out);
/* Whether member i of a set is there only to build one of its sdists (a
 * set made without roles, build NULL, has none). */
static inline bool ex_build_only(const struct ow_export_set *set, size_t i)
{
	return set->build && set->build[i];
}
int ex_gen_requirements(const struct ow_export_plan *p, const struct ow_export_set *set,
                         struct ow_str *out);
int ex_gen_install(const struct ow_export_plan *p, const struct ex_meta *m, struct ow_str *out);
/* A set's target as an installer sees it: the interpreter and the values
 * of the markers sys_platform and platform_machine there. */
struct ex_target {
	int py_major, py_minor;
	bool freethreaded;
	char sys_platform[16], machine[16];
};
/* The target of a set's describe text ("cu128 cp311-manylinux_2_28_x86_64"). */
int ex_target_of(const char *describe, struct ex_target *t);
/* pylock.<req_name>.toml: the set as a PEP 751 lock file (exportlock.c). */
int ex_gen_pylock(const struct ow_export_plan *p, const struct ow_export_set *set,
                  struct ow_str *out);
int ex_gen_nginx(const char *dir, struct ow_str *out);
/* wheels/index.html: every wheel on one page (pip --find-links). */
int ex_gen_links(const struct ow_export_plan *p, struct ow_str *out);
/* A caching reverse proxy in front of an export at `url` (an object
 * store's HTTP gateway: URL of the prefix, no trailing '/'). */
int ex_gen_nginx_proxy(const char *url, struct ow_str *out);
int ex_gen_sums(const struct ex_files *f, struct ow_str *out);
/* Parse SHA256SUMS strictly ("<64 hex>  <path>" or " *<path>" lines). */
int ex_parse_sums(const char *text, size_t len, struct ex_files *out);

/* JSON (jansson lives in exportjson.c only). */
struct ex_manifest {
	char format[32];
	int64_t sequence, created, expires;
	char key_id[OW_KEYID_HEX];
	struct ex_files files;
	struct ow_check_set *sets; /* targets and their device verdicts */
	size_t nsets;
	char name[OW_EXPORT_NAME_MAX + 1]; /* "" when the manifest has none (an older export) */
};
int ex_json_manifest(const struct ow_export_plan *p, const struct ex_meta *m,
                      const struct ex_files *f, struct ow_str *out);
int ex_json_parse(const char *text, size_t len, struct ex_manifest *m);
void ex_manifest_dispose(struct ex_manifest *m);
void ex_check_sets_free(struct ow_check_set *sets, size_t n);
/* The accepted-sequence state file.  An export with a name is kept under
 * its key and name, one without (made before exports had names) under its
 * key alone, as offwheel always kept it.  get: *named is the sequence
 * accepted for (key, name) (0 when none, or when name is ""), *per_key the
 * one for the key alone (0 when none). */
int ex_json_state_get(const char *path, const char *key_id, const char *name, int64_t *named,
                      int64_t *per_key);
int ex_json_state_put(const char *path, const char *key_id, const char *name, int64_t seq,
                      int64_t now);

/* The device rule (exportdevice.c). */
/* Every verdict recorded for a set, by cc and driver. */
int ex_devices_load(ow_store *s, int64_t set_id, struct ow_export_device **out, size_t *n);
void ex_devices_free(struct ow_export_device *d, size_t n);
/* Apply `rule` (NULL: the default) to set `id`: its verdicts (judged first
 * where the rule says) into r->d.  0 with r->why "" = take it; 0 with a
 * reason in r->why = leave it out (--device); OW_ENOIMAGE = refuse, the
 * detail says which device (r->fail_cc) and library. */
struct ex_rule_result {
	struct ow_export_device *d; /* the set's verdicts (ex_devices_free) */
	size_t n;
	char *why; /* the caller's buffer of why_n bytes */
	size_t why_n;
	int fail_cc; /* the device refused on, with OW_ENOIMAGE */
};
int ex_device_rule(ow_store *s, const struct ow_export_devices *rule, int64_t id,
                   const char *target, struct ex_rule_result *r);
/* "12.0" for 120; "12.8" for 12080. */
void ex_cc_text(int cc, char *buf, size_t n);
void ex_driver_text(int driver, char *buf, size_t n);

/* Files (exportcopy.c).  `root` and `dirfd` are directory fds of the
 * export tree (fsbeneath.h): nothing is opened through a link, nothing is
 * read that fstat did not confirm regular. */
/* Open a store object for reading: a regular file (O_NONBLOCK|O_NOFOLLOW)
 * of exactly `size` bytes, else OW_EHASH naming it (the store is damaged). */
int ex_open_object(ow_store *s, const char *hex, uint64_t size, int *fd);
/* Read a whole object of `size` (<= max) bytes and check its hash. */
int ex_load_object(ow_store *s, const char *hex, uint64_t size, size_t max, char **buf,
                    size_t *len);
/* Copy a store object to dirfd/name, hashing while copying and stopping at
 * `size`; kept when the file is already there with the right bytes (*copied 0). */
int ex_copy_object(ow_store *s, const char *hex, uint64_t size, int dirfd, const char *name,
                    int *copied);
/* Write a text file atomically unless the same bytes are there; records it. */
int ex_write_text(int root, const char *rel, const struct ow_str *b, struct ex_files *rec);
/* Hash a regular file beneath dirfd: size and sha256 (OW_ENOENT when missing,
 * OW_EPOLICY when a link or not a regular file). */
int ex_hash_at(int dirfd, const char *rel, uint64_t *size, char hex[OW_SHA256_HEX]);
/* A temp file name of an export (".ow-tmp-" + 12 hex digits)? */
int ex_is_tmp_name(const char *name);
/* "fat32", "exfat", "fuse" or "" for the file system of an open fd. */
void ex_fs_kind(int fd, char *kind, size_t n);

/* What is already in DIR (exporttree.c). */
struct ex_prev { /* the previous export's file list, when trusted */
	struct ex_files files; /* sorted; path + sha256 */
	const char *trusted;    /* NULL, "signature" or "workspace record" */
	int64_t signed_sequence; /* the stick's sequence when signed by the signing key, else 0 */
	char signed_name[OW_EXPORT_NAME_MAX + 1]; /* its name then, else "" */
};
/* Trusted: SHA256SUMS whose SHA256SUMS.sig verifies with `key`'s public key,
 * else a manifest.json whose sha256 this workspace recorded as one it wrote. */
int ex_prev_load(ow_store *s, int root, const struct ow_signify_sec *key, struct ex_prev *p);
void ex_prev_dispose(struct ex_prev *p);
/* Walk DIR (never following a link): every entry must be a directory, a
 * file the new export writes (`want`), an export temp file, or a file the
 * trusted previous list names with its hash unchanged (those go to
 * `remove`).  Anything else (a user's file, a link, a FIFO, a device) is
 * refused before anything changes, naming up to 8 of them. */
int ex_inventory(int root, const char *dir, const struct ex_files *want,
                  const struct ex_prev *prev, struct ex_files *remove);
/* Remove the files of ex_inventory's list (and directories they leave
 * empty below the top level); *removed counts files. */
int ex_remove(int root, const struct ex_files *remove, size_t *removed);

/* An export on an S3-compatible store (exports3.c): the order of the steps
 * is there.  ex_s3_begin opens the target, lists the prefix, loads the
 * trusted previous list into *prev and aborts unfinished uploads of keys in
 * `want`; ex_s3_wheel / ex_s3_text add the new tree's objects (and record
 * them in rec, as a directory export does); ex_s3_publish sends them. */
struct ex_s3run;
int ex_s3_begin(ow_store *s, const struct ow_export_opts *o, const struct ex_files *want,
                struct ex_s3run **out, struct ex_prev *prev);
int ex_s3_wheel(struct ex_s3run *u, const char *rel, const char *hex, uint64_t size,
                struct ex_files *rec);
int ex_s3_text(struct ex_s3run *u, const char *rel, const struct ow_str *b, struct ex_files *rec);
int ex_s3_publish(struct ex_s3run *u, const struct ex_files *want, const struct ex_prev *prev,
                  struct ow_export_report *r);
const char *ex_s3_url(const struct ex_s3run *u);
/* A key in the export's own folders (simple/, wheels/, requirements/,
 * tools/): the only places an object store export removes from, and where
 * check counts objects the manifest does not list. */
int ex_s3_owned_path(const char *key);
/* The store's plain HTTP URL of the prefix (ENDPOINT/BUCKET/PREFIX). */
int ex_s3_gateway(const struct ex_s3run *u, char *out, size_t n);
void ex_s3_free(struct ex_s3run *u);

/* An export read over the network (s3:// or http(s)://) for check. */
struct ex_remote;
int ex_remote_open(const struct ow_check_opts *o, struct ex_remote **out);
void ex_remote_free(struct ex_remote *x);
/* A small file of the tree into memory (OW_ENOENT when absent). */
int ex_remote_read(struct ex_remote *x, const char *rel, char **t, size_t *n);
/* Every object under the prefix of an export of `expect` files (s3:// only;
 * OW_EUNSUPPORTED otherwise). */
int ex_remote_list(struct ex_remote *x, size_t expect, struct ex_files *out);
/* Stream the files whose rc[i] is 1 through SHA-256 in parallel: rc[i]
 * becomes 2 (got, sizes set), 3 (larger than the manifest says) or an
 * error code with err[i] its detail. */
int ex_remote_hash(struct ex_remote *x, const struct ex_files *f, int *rc,
                   char (*got)[OW_SHA256_HEX], uint64_t *sizes, char **err);

/* "cu128-cp311-manylinux_2_28_x86_64" (a requirements file's name) as the
 * target it names, "cu128 cp311-manylinux_2_28_x86_64"; 1 when arg has a
 * space already or no '-'. */
int ow_export_target_of_req_name(const char *arg, char *out, size_t n);

#endif
