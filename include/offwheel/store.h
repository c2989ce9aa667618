/* store.h - the content-addressed object store.
 *
 *   HOME/objects/sha256/ab/<64 hex>   immutable verified bytes
 *   HOME/tmp/                          temp and partial files (same fs)
 *   HOME/index.db                      the index; table `objects` lists objects
 *   HOME/lock                          who holds the workspace lock (text only)
 *
 * The workspace lock is a flock on the HOME directory itself, so deleting
 * HOME/lock cannot let a second writer in; HOME/lock only names the holder
 * for the "waiting for ..." message.
 *
 * Write order: the object is published (fsynced, renamed, dir fsynced)
 * before its row is inserted; a row never points to a missing object, and
 * an object without a row is garbage that fsck reports and gc removes. */
#ifndef OW_PUBLIC_STORE_H
#define OW_PUBLIC_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "offwheel/common.h"

enum ow_store_mode {
	/* no lock: listing, verify (reads are safe alongside a writer).  HOME
	 * must hold an index ("no workspace at DIR" otherwise); nothing is
	 * created, and a HOME the process cannot write is opened read-only. */
	OW_STORE_READ = 0,
	OW_STORE_WRITE = 1, /* creates HOME; locks it, waiting up to lock_timeout seconds */
	OW_STORE_UPDATE = 2 /* as WRITE, but HOME must hold an index already (export:
	                     * a mistyped --home is "no workspace at DIR", not a
	                     * new empty workspace) */
};

typedef struct ow_store ow_store;

/* --home, else $OFFWHEEL_HOME, else $XDG_CACHE_HOME/offwheel, else
 * ~/.cache/offwheel. */
int ow_store_default_home(char *buf, size_t n);

int ow_store_open(const char *home, enum ow_store_mode mode, int lock_timeout, const char *what,
                  ow_store **out);
void ow_store_close(ow_store *s);

struct ow_obj_row {
	char sha256[OW_SHA256_HEX];
	uint64_t size;
	char kind[32];
	int64_t created_at;
};
/* Every object row; `kind` NULL for all.  *rows is malloc'd. */
int ow_store_list(ow_store *s, const char *kind, struct ow_obj_row **rows, size_t *n);
/* What the objects are: for each object the index names, its sha256 and
 * the name (a wheel's or .metadata file's name, a page's URL), in sha256
 * order.  *names is malloc'd; free it with ow_obj_names_free. */
struct ow_obj_name {
	char sha256[OW_SHA256_HEX];
	char *name;
};
int ow_store_object_names(ow_store *s, struct ow_obj_name **names, size_t *n);
void ow_obj_names_free(struct ow_obj_name *names, size_t n);

struct ow_verify_result {
	int rc;        /* 0 ok, OW_EHASH, OW_ENOENT, OW_EIO ... */
	uint64_t size; /* bytes hashed */
	char *detail;  /* owned: why it failed, NULL when rc is 0 */
};
/* Re-hash `n` objects with `jobs` threads, each file read once; results[i]
 * for rows[i] (each one's detail is set: free them with
 * ow_verify_results_dispose).  Returns the number of objects that failed. */
size_t ow_store_verify_many(const ow_store *s, const struct ow_obj_row *rows, size_t n, int jobs,
                            struct ow_verify_result *results);
/* Free the details of n results (the array itself is the caller's). */
void ow_verify_results_dispose(struct ow_verify_result *results, size_t n);

/* After a verification: mark the rows whose objects were found damaged
 * (wrong hash, wrong size, not a regular file), so that fetch and sync
 * repair them.  Returns how many were marked; nothing when the index is
 * read-only. */
size_t ow_store_mark_failed(ow_store *s, const struct ow_obj_row *rows,
                            const struct ow_verify_result *results, size_t n);

#endif
