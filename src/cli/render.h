/* render.h - output shared by several commands (resolve and sync print the
 * same matrix; fetch and sync the same download summary). */
#ifndef OW_RENDER_H
#define OW_RENDER_H

#include <jansson.h>

#include "cli.h"
#include "offwheel/devicefit.h"
#include "offwheel/fetch.h"
#include "indexopts.h"
#include "offwheel/resolve.h"

/* The matrix (cmd_resolve.c). */
/* `net`: what the run read over the network (METADATA by ranges); NULL none. */
json_t *cli_resolve_report_json(const struct cli_index_opts *o, const struct ow_resolve_report *r,
                            const struct ow_resolve_netio *net);
void cli_resolve_render_text(const struct cli *c, const struct cli_index_opts *o,
                         const struct ow_resolve_report *r, const struct ow_resolve_netio *net,
                         int deps);
json_t *cli_resolve_member_json(const struct ow_resolve_member *m);

/* Downloads (fetchrender.c). */
json_t *cli_fetch_report_json(const struct ow_fetch_report *r);
void cli_fetch_item_text(const struct cli *c, const struct ow_fetch_item *it);
/* `by_resolve`: wheels this run stored while resolving (counted as "had"). */
void cli_fetch_render_text(const struct cli *c, const struct ow_fetch_report *r, size_t by_resolve);

/* --device verdicts per target (devicerender.c); `o`: the index in use,
 * named with the variant that would run when none does. */
json_t *cli_device_fits_json(const struct cli_index_opts *o, const struct ow_resolve_report *r,
                         const struct ow_device_fit *fits, int cc);
void cli_device_fits_text(const struct cli *c, const struct cli_index_opts *o,
                      const struct ow_resolve_report *r, const struct ow_device_fit *fits, int cc);
/* How many complete targets run on the device. */
size_t cli_device_fits_running(const struct ow_resolve_report *r, const struct ow_device_fit *fits);

/* --device CC[,CC]: the verdicts per device, one fits array (one per
 * target) each; a set must run on every device named. */
struct cli_fits {
	size_t n;
	int cc[CLI_MAX_DEVICES];
	struct ow_device_fit *f[CLI_MAX_DEVICES];
};
int cli_fits_judge(struct cli_fits *fs, ow_store *s, const struct ow_fetch_opts *fo,
                   const struct ow_resolve_report *r, const int *ccs, size_t n, int driver);
void cli_fits_dispose(struct cli_fits *fs, size_t ntargets);
/* Target i is complete and runs on every device. */
bool cli_fits_runs(const struct ow_resolve_report *r, const struct cli_fits *fs, size_t i);
size_t cli_fits_running(const struct ow_resolve_report *r, const struct cli_fits *fs);
void cli_fits_text(const struct cli *c, const struct cli_index_opts *o,
                   const struct ow_resolve_report *r, const struct cli_fits *fs);
/* "device": the first device's verdicts (as before), "devices": every one. */
void cli_fits_json_set(json_t *doc, const struct cli_index_opts *o,
                       const struct ow_resolve_report *r, const struct cli_fits *fs);

#endif
