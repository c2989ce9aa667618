/* devicefit.h - will a resolved set run on a given GPU?  (resolve/sync
 * --device; the rules: docs/fatbin.md.)  The torch wheel is audited when it is in the
 * store; otherwise the torchvision wheel of the same build — 7 MB instead of
 * 1 GB, built with the same architecture list — is fetched and audited, and
 * the answer is labelled a prediction until torch itself is audited.
 *
 * Every verdict on a stored set is remembered in the index (table
 * set_devices, index/schema/0010_set_devices.sql), per set, compute
 * capability and driver: export ships a set only where the workspace does
 * not know it to fail a device it was asked for. */
#ifndef OW_DEVICEFIT_H
#define OW_DEVICEFIT_H

#include <stdbool.h>

#include "offwheel/audit.h"
#include "offwheel/fetch.h"
#include "offwheel/resolve.h"
#include "offwheel/store.h"

struct ow_device_fit {
	int runs;          /* 1 runs, 0 does not, -1 unknown (nothing could be audited) */
	bool predicted;     /* judged from torchvision, not torch itself */
	char verdict[16];  /* native, jit, partial, none, no-code, unknown */
	char from[OW_FILENAME_MAX + 1]; /* the wheel that was audited */
	char *detail;      /* owned: why (the fault, the prediction), NULL when none */
	/* partial / none: the library the device cannot run (the wheel's own
	 * before NVIDIA's, owned), its modules with code and how many of them
	 * have no usable image (NULL / 0 else) */
	char *library;
	size_t modules, no_image;
};

/* A fit starts zeroed ({0}, calloc); the functions below that fill one free
 * what it held before.  Dispose frees its texts and zeroes it;
 * ow_device_fits_free disposes n of them and frees the array. */
void ow_device_fit_dispose(struct ow_device_fit *f);
void ow_device_fits_free(struct ow_device_fit *fits, size_t n);

/* Judge every complete target of `r` for compute capability `cc` (10*major
 * + minor) and driver (1000*major + 10*minor, 0 = unknown).  torchvision
 * wheels that are needed are fetched with `fo`.  fits[i] for r->targets[i]
 * (r->ntargets of them, zeroed or filled before);
 * the verdict of each stored set (set_id > 0) is recorded. */
int ow_device_fit_all(ow_store *s, const struct ow_fetch_opts *fo, const struct ow_resolve_report *r,
                      int cc, int driver, struct ow_device_fit *fits);

/* Judge one stored set from what the store holds (torch, else torchvision:
 * a prediction; nothing is fetched) and record it.  f->runs -1 when neither
 * is stored. */
int ow_device_fit_set(ow_store *s, int64_t set_id, int cc, int driver, struct ow_device_fit *f);

/* The verdict on an audited wheel `wheel` (its file name): what
 * ow_device_fit_all says of a set whose torch it is. */
int ow_device_fit_audit(const struct ow_audit *a, const char *wheel, int cc, int driver,
                        struct ow_device_fit *f);

/* Remember f for set_id (replacing an earlier verdict for the same cc and
 * driver).  Nothing on a read-only index; a failure is logged, not
 * returned: the verdict is derived data, the command still stands. */
void ow_device_fit_record(ow_store *s, int64_t set_id, int cc, int driver,
                          const struct ow_device_fit *f);

/* After an audit of a store object for a device: record the verdict for
 * every set whose torch wheel that object is (audit set:N, audit FILE). */
void ow_device_fit_record_torch(ow_store *s, const struct ow_audit *a, int cc, int driver);

#endif
