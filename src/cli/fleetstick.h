/* fleetstick.h - a stick as the lab's machines see it (docs/fleet.md): its
 * sets (manifest.json), which machine gets which (machines.json), the set
 * `install` picks for this machine, and the machines' own files (probes/,
 * reports/) that `fleet` shows. */
#ifndef OW_FLEETSTICK_H
#define OW_FLEETSTICK_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "cli.h"
#include "fleetplan.h"
#include "offwheel/probe.h"

#define FLEET_REPORT_FORMAT "offwheel-report-1"
#define FLEET_MACHINES_FORMAT "offwheel-machines-1"

/* One set of the stick's manifest. */
struct stick_set {
	int64_t id;
	const char *target, *req; /* the manifest's; req: requirements/X.txt */
	struct fleet_target_parts parts;
	bool complete, parsed;    /* parsed: the target has its three parts */
	json_t *devices;          /* the manifest's verdicts for it (borrowed) */
};

struct stick {
	json_t *manifest;
	json_t *machines; /* machines.json's "machines" (NULL: no machines.json) */
	struct stick_set *sets;
	size_t nsets;
};

/* Read manifest.json (and machines.json when there is one) of `dir`: 0, or
 * an OW_E* code with its detail. */
int stick_load(const char *dir, struct stick *st);
void stick_dispose(struct stick *st);
/* machines.json's entry for `name`, NULL when it names no such machine */
json_t *stick_machine(const struct stick *st, const char *name);

/* The set for this machine. */
struct stick_pick {
	const struct stick_set *set;      /* NULL: nothing on the stick fits */
	const struct ow_probe_python *py; /* the interpreter the set is for */
	bool by_name;                     /* machines.json named the machine */
	char *why;                        /* set NULL: why (owned) */
};
/* By machines.json when it names p->name (the pick re-checked against
 * this machine's driver and GPUs), else by the probe: each interpreter's
 * ABI tag and the machine's platform tags against the sets' targets, and
 * ow_fleet_pick with the devices' verdicts the manifest carries.
 * OW_ENOMEM only. */
int stick_pick_for(const struct stick *st, const struct ow_probe *p, struct stick_pick *out);
void stick_pick_dispose(struct stick_pick *pk);

#endif
