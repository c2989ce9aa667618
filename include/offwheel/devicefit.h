/* devicefit.h - will a resolved set run on a given GPU?  (resolve/sync
 * --device; the rules: docs/fatbin.md.)  The torch wheel is audited when it is in the
 * store; otherwise the torchvision wheel of the same build — 7 MB instead of
 * 1 GB, built with the same architecture list — is fetched and audited, and
 * the answer is labelled a prediction until torch itself is audited. */
#ifndef OW_DEVICEFIT_H
#define OW_DEVICEFIT_H

#include "offwheel/fetch.h"
#include "offwheel/resolve.h"
#include "offwheel/store.h"

struct ow_device_fit {
	int runs;          /* 1 runs, 0 does not, -1 unknown (nothing could be audited) */
	int predicted;     /* judged from torchvision, not torch itself */
	char verdict[16];  /* native, jit, partial, none, no-code, unknown */
	char from[OW_FILENAME_MAX + 1]; /* the wheel that was audited */
	char detail[512];
};

/* Judge every complete target of `r` for compute capability `cc` (10*major
 * + minor) and driver (1000*major + 10*minor, 0 = unknown).  torchvision
 * wheels that are needed are fetched with `fo`.  fits[i] for r->targets[i]. */
int ow_device_fit_all(ow_store *s, const struct ow_fetch_opts *fo, const struct ow_resolve_report *r,
                      int cc, int driver, struct ow_device_fit *fits);

#endif
