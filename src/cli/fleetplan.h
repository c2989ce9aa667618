/* fleetplan.h - the lab's machines (their probes) and the set each gets:
 * sync --probes makes the matrix from them and says who gets what, export
 * --probes writes it onto the stick as machines.json (docs/fleet.md). */
#ifndef OW_FLEETPLAN_H
#define OW_FLEETPLAN_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "cli.h"
#include "indexopts.h"

#define FLEET_MAX_GPUS 16

struct fleet_machine {
	char *name, *file;
	int driver;                /* 12080; 0 none */
	int ccs[FLEET_MAX_GPUS];   /* its GPUs' compute capabilities */
	size_t nccs;
	char python[16];           /* its first interpreter: cp312, cp313t; "" none */
	char platform[64];         /* its best platform tag */
	bool targetable;           /* python and platform make a target offwheel resolves for */
	json_t *probe;             /* the document, kept */
	/* the plan */
	int64_t set_id;            /* 0: nothing for it */
	char *target, *variant, *req; /* the set's target, variant, requirements/<req>.txt */
	char *why;                 /* nothing for it: why */
};

struct fleet {
	struct fleet_machine *m;
	size_t n;
};

/* One set the machines could get. */
struct fleet_set {
	int64_t id;
	const char *target;  /* as the store names it */
	const char *variant; /* cu128, cpu */
	const char *python, *platform;
	const char *req;     /* requirements/<req>.txt on a stick, NULL else */
	bool complete;
};

/* Read every probe of `paths` (files, or directories of *.json): 0 or an
 * exit code (printed). */
int fleet_load(struct cli *c, const struct cli_strlist *paths, struct fleet *f);
void fleet_dispose(struct fleet *f);
/* Add each machine's Python and platform to the lists (each once). */
int fleet_targets(const struct fleet *f, struct cli_strlist *pythons, struct cli_strlist *platforms);
/* Pick each machine's set among `sets` by the audits the store holds. */
int fleet_plan(ow_store *s, struct fleet *f, const struct fleet_set *sets, size_t n);
struct ow_resolve_report;
/* sync --probes, resolve --probes: each machine's set among the resolved
 * targets' complete sets. */
int fleet_plan_resolved(ow_store *s, struct fleet *f, const struct ow_resolve_report *r);
void fleet_plan_text(const struct cli *c, const struct fleet *f);
json_t *fleet_plan_json(const struct fleet *f);

/* "cu128-cp312-manylinux_2_28_x86_64" (or with a space after the
 * variant, as the store names targets): its three parts; -1 when it has
 * not got them or one is too long. */
struct fleet_target_parts {
	char variant[64], python[16], platform[128];
};
int fleet_split_target(const char *t, struct fleet_target_parts *out);

struct ow_export_plan;
/* export --probes: each machine's set among the plan's, machines.json's
 * text (*json) and INSTALL.txt's lines for it (*note), both owned. */
int fleet_export_texts(ow_store *s, struct fleet *f, const struct ow_export_plan *p, char **json,
                       char **note);

#endif
