/* export.h - a self-contained tree for pip --no-index (USB stick, lab
 * server), signed, and its check on the target (format: docs/export-format.md).
 *
 *   DIR/simple/index.html, DIR/simple/<project>/index.html   PEP 503 + 658
 *   DIR/wheels/<file>.whl, DIR/wheels/<file>.whl.metadata      the bytes
 *   DIR/requirements/<target>.txt                              pinned, hashed
 *   DIR/INSTALL.txt                                            pip commands
 *   DIR/manifest.json    sets, targets, files (path size sha256), sequence,
 *                        creation, expiry, tool version, key id
 *   DIR/SHA256SUMS       sha256sum -c format: every file above (manifest too)
 *   DIR/SHA256SUMS.sig   signify signature of SHA256SUMS, written last
 *
 * The signature covers SHA256SUMS, which covers manifest.json: so the
 * sequence and expiry are inside the signed bytes, and a target without
 * offwheel checks everything with `signify-openbsd -V -p KEY.pub -m
 * SHA256SUMS && sha256sum -c SHA256SUMS`.  Every file is published
 * atomically; the old signature is removed before anything changes, so an
 * interrupted export is never valid.
 *
 * DIR is resolved once and opened as a directory fd; every path inside it
 * is opened beneath that fd without following links (fsbeneath.h).  Before
 * anything changes, the tree is walked: a link, a FIFO or a device anywhere
 * in it, or a file that is neither written by this export nor listed (hash
 * unchanged) by the previous export's trusted file list, makes the export
 * refuse, naming them.  Only listed, unchanged files are removed.  An
 * export has a name (signed, like the sequence); its sequence is above the
 * workspace's record for the key and name and the stick's own (only when
 * its signature verifies with that key), and at least the time in Unix
 * seconds, so workspaces sharing a key stay in order. */
#ifndef OW_EXPORT_H
#define OW_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "offwheel/signify.h"
#include "offwheel/store.h"

#define OW_EXPORT_SUMS "SHA256SUMS"
#define OW_EXPORT_SIG "SHA256SUMS.sig"
#define OW_EXPORT_MANIFEST "manifest.json"
#define OW_EXPORT_FORMAT "offwheel-export-1"
#define OW_EXPORT_TMP_PREFIX ".ow-tmp-"
#define OW_FAT32_MAX_FILE 0xFFFFFFFFull
/* Sequences stay far below overflow (and exact in a JSON double). */
#define OW_EXPORT_SEQ_MAX (INT64_C(1) << 53)
/* An export's name: what a target keeps its rollback state under, with
 * the key.  1 to 64 bytes of printable ASCII, no space at either end. */
#define OW_EXPORT_NAME_MAX 64

/* Whether a file of the stick is a source distribution (.tar.gz, .zip). */
bool ow_export_is_sdist(const char *filename);

struct ow_export_item { /* one wheel (or sdist) on the stick */
	char *filename, *project, *version, *requires_python;
	char *upload_time; /* the index's (PEP 700), as it gave it; NULL unknown */
	char object[OW_SHA256_HEX];      /* pinned hash = the file's sha256 */
	char meta_object[OW_SHA256_HEX]; /* "" when no PEP 658 metadata is stored */
	uint64_t size, meta_size;
};

/* A verdict the workspace recorded for a set on a device (resolve/sync
 * --device, audit --device, export --device: table set_devices). */
struct ow_export_device {
	int cc, driver;    /* 120 = 12.0; driver 12080 = 12.8, 0 not given */
	char verdict[16];  /* native, jit, partial, none, no-code, unknown */
	int runs;          /* 1 runs, 0 would not run, -1 unknown */
	bool predicted;     /* judged from torchvision, not torch */
	char *wheel;       /* the wheel judged; NULL unknown */
	char *library;     /* partial / none: the library that cannot run; NULL else */
	int64_t modules, no_image, judged_at;
	char *detail;      /* NULL when none */
};

/* The devices set_id was recorded as not running on ("12.0, 8.0" into
 * out, n bytes): 1 when there is one, 0 when none, or an error.  Why sync
 * --device left a set unfetched (ls sets, export --all-sets say so). */
int ow_export_refused_on(ow_store *s, int64_t set_id, char *out, size_t n);

struct ow_export_set {
	int64_t id; /* 0 for the --file pseudo set */
	char *target, *torch_version;
	char *req_name; /* requirements/<req_name>.txt */
	bool complete;
	size_t *members; /* indexes into plan.items */
	bool *build;     /* per member: only for building an sdist of the set on the
	                  * target (OW_ROLE_BUILD): on the stick, not in the
	                  * requirements file or the lock file */
	size_t n;
	struct ow_export_device *devices; /* every verdict recorded for it, by cc */
	size_t ndevices;
};

struct ow_export_skip { /* a set --all-sets (or the device rule) left out */
	int64_t id;
	char *target;
	char *reason;     /* owned, never NULL: "incomplete (no torchaudio)", "not fetched
	                     (0 of 19 files)", "would not run on 12.0: torch/lib/...: ..." */
	int device;       /* left out by the device rule */
};

/* The device rule: a set the workspace recorded as not running on a device
 * is refused (OW_ENOIMAGE naming the set, the device and the library)
 * unless `force`.  With `ccs`, only those devices decide: a set is taken
 * when it runs on every one of them and left out (skipped, with the
 * reason) otherwise; a device with no verdict recorded for the set (or
 * only a prediction from torchvision) is judged first through `judge`
 * (the CLI passes devicefit's, which records what it finds). */
struct ow_export_devices {
	const int *ccs;
	size_t n;
	bool force;
	int (*judge)(void *ud, ow_store *s, int64_t set_id, int cc);
	void *ud;
};

struct ow_export_plan {
	struct ow_export_item *items;
	size_t n;
	struct ow_export_set *sets;
	size_t nsets;
	struct ow_export_skip *skipped;
	size_t nskipped;
	const struct ow_export_devices *rule; /* NULL: the default rule (refuse, no judging) */
	/* --all-sets: only the sets resolved from this index (--index); NULL:
	 * every index, refused when the sets that would go come from more than
	 * one (the sample index's sets beside the lab's: one stick, one source) */
	const char *index_url;
	/* how every set was asked for, as messages name it: NULL "--all-sets"
	 * (export --probes asks for them to choose the machines' sets among) */
	const char *all_sets_as;
};

/* Build a plan: sets by id (duplicates ignored); the newest set of a target;
 * or fetched files by name (one pseudo set "files").  A member that is not
 * fetched is an error naming it (OW_EINCOMPLETE).  --all-sets is the newest
 * set of every target that is complete and fetched: the others (a sync with
 * --device fetches only the sets that run there) are listed in p->skipped,
 * and only when none is left is it an error. */
int ow_export_add_set(ow_store *s, struct ow_export_plan *p, int64_t set_id);
int ow_export_add_target(ow_store *s, struct ow_export_plan *p, const char *target);
int ow_export_add_all_sets(ow_store *s, struct ow_export_plan *p);
int ow_export_add_file(ow_store *s, struct ow_export_plan *p, const char *filename);
/* After the sets are added: OW_ENOIMAGE when the device rule left out
 * every set that was asked for, naming them. */
int ow_export_plan_devices_done(const struct ow_export_plan *p);
void ow_export_plan_dispose(struct ow_export_plan *p);

/* A file of the caller's on the stick (ow_export_opts.extras). */
struct ow_export_extra {
	const char *path; /* relative, at the top: "machines.json" */
	const char *text;
	size_t len;
};

/* Folders of the stick that belong to the lab, not to the export: what its
 * machines write there (probes/NAME.json, reports/NAME.json; docs/fleet.md)
 * is never signed, never removed by an export, and not an "extra" file to
 * check. */
bool ow_export_lab_dir(const char *rel);

struct ow_export_opts {
	/* Made (with its parents) only once the plan is complete, and removed
	 * again, with every directory this run made, when the export fails:
	 * DIR is left as it was found.  "s3://BUCKET/PREFIX" publishes to an
	 * S3-compatible store instead (src/export/exports3.c says how). */
	const char *dir;
	const char *endpoint; /* s3://: the store's URL (NULL: $AWS_ENDPOINT_URL_S3,
	                         $AWS_ENDPOINT_URL, else AWS) */
	const struct ow_signify_sec *key; /* NULL: unsigned (check will refuse it) */
	int expires_days;                 /* > 0 */
	int fat32;                        /* refuse files of 4 GiB and more */
	const char *nginx_conf;           /* write a server block there (NULL: no) */
	int64_t now;                      /* 0: time(NULL) */
	int jobs;                         /* files copied at once (capped at 4); < 1: 1 */
	int64_t sequence;                 /* 0: the next one; else this one (a new workspace
	                                     continuing an old key), above every one known */
	const char *tool;                 /* a Debian package (offwheel_*.deb) to put on the
	                                     stick as tools/NAME, listed and signed like the
	                                     rest, so targets install offwheel from it; NULL:
	                                     none (a tool of an earlier export is removed) */
	/* Files the caller made (export --probes: machines.json), written at
	 * their paths, listed and signed like the rest; a path of the export's
	 * own is refused.  install_note: text INSTALL.txt ends with (NULL none). */
	const struct ow_export_extra *extras;
	size_t nextras;
	const char *install_note;
	const char *name;                 /* the export's name (signed in manifest.json); NULL:
	                                     the name the stick's signed manifest already
	                                     has, else ow_export_default_name of DIR */
};

struct ow_export_report {
	size_t files, copied, kept, removed;
	uint64_t bytes_total, bytes_copied;
	int64_t sequence, created, expires;
	char key_id[OW_KEYID_HEX]; /* "" when unsigned */
	char manifest_sha256[OW_SHA256_HEX];
	char fs[16]; /* "fat32", "exfat", "fuse" or "" */
	double seconds;
	char dir[OW_PATH_MAX]; /* DIR as an absolute path, links resolved */
	char name[OW_EXPORT_NAME_MAX + 1];
};

/* NULL when `name` can name an export, else why not. */
const char *ow_export_name_problem(const char *name);
/* The default name of an export at `where` (a directory, or s3://BUCKET
 * [/PREFIX]): its last component, a trailing '/' ignored, so the bucket's
 * name when there is no prefix.  OW_EINVAL, saying to give --name, when
 * that is no valid name (the root directory, a name of control bytes). */
int ow_export_default_name(const char *where, char out[OW_EXPORT_NAME_MAX + 1]);

int ow_export_run(ow_store *s, const struct ow_export_plan *p, const struct ow_export_opts *o,
                  struct ow_export_report *r);

/* ---- check on the target ---- */

struct ow_check_problem {
	char kind[16]; /* signature, manifest, path, missing, extra, size, hash, link,
	                  expired, rollback, state */
	char *path;    /* NULL when not about one file */
	char *detail;
};

/* What the manifest says a set was audited for (its "devices"). */
struct ow_check_device {
	char cc[8];       /* "12.0" */
	char driver[16];  /* "12.8", "" not given */
	char verdict[16]; /* native, jit, partial, none, no-code, unknown */
	int runs;         /* 1, 0, -1 unknown */
	bool predicted;
	char *detail;     /* the library and counts behind a failure, else the detail; may be NULL */
};
struct ow_check_set {
	char *target;
	struct ow_check_device *devices;
	size_t n;
};

struct ow_check_report {
	int valid;
	int64_t sequence, created, expires, accepted; /* accepted: the state's before (0) */
	char key_id[OW_KEYID_HEX];
	size_t files;
	uint64_t bytes;
	struct ow_check_problem *problems;
	size_t n;
	struct ow_check_set *sets; /* from the manifest, once its hash matched SHA256SUMS */
	size_t nsets;
	char name[OW_EXPORT_NAME_MAX + 1]; /* "" for an export made before exports had names */
	/* Worth telling, not a reason to refuse (kind "ahead": a sequence more
	 * than a day ahead of the clock). */
	struct ow_check_problem *warnings;
	size_t nwarnings;
};

struct ow_check_opts {
	const char *dir;      /* a directory, s3://BUCKET/PREFIX, or http(s)://URL of one */
	const char *endpoint; /* s3:// as for export */
	const char *ca_file;  /* https: a private CA (NULL: $SSL_CERT_FILE, the system's) */
	const struct ow_signify_pub *pub;
	const char *state_path; /* NULL: ow_check_default_state */
	int jobs;
	int64_t now; /* 0: time(NULL) */
};

/* Signature first, then the manifest, then every file, then expiry and
 * rollback; on success the state file remembers the sequence for the key
 * and the export's name (per key alone for an export without a name).  Returns 0
 * when valid, OW_EVERIFY with problems listed, other codes on errors. */
int ow_export_check(const struct ow_check_opts *o, struct ow_check_report *r);
void ow_check_report_dispose(struct ow_check_report *r);
/* $XDG_STATE_HOME/offwheel/accepted.json, else ~/.local/state/offwheel/accepted.json */
int ow_check_default_state(char *buf, size_t n);

#endif
