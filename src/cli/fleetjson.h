/* fleetjson.h - the documents of the lab as a fleet (docs/fleet.md): a
 * machine's probe (docs/json/probe.schema.json) written and read back, so
 * that sync, export, install and fleet see the machines as probe saw them. */
#ifndef OW_FLEETJSON_H
#define OW_FLEETJSON_H

#include <jansson.h>
#include <stddef.h>

#include "cli.h"
#include "offwheel/probe.h"

#define FLEET_PROBE_FORMAT "offwheel-probe-1"

/* The probe document (owned by the caller). */
json_t *fleet_probe_json(const struct ow_probe *p, long long now);
/* "12.8" for 12080 */
const char *fleet_driver_text(int driver, char *buf, size_t n);
/* Write doc (stolen) to path atomically (PATH.tmp, then rename), making
 * the file's directory when it is missing; 0 or prints the error and
 * returns an exit code. */
int fleet_write_json(struct cli *c, json_t *doc, const char *path);

#endif
