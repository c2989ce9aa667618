/* fleetlab.h - the lab as a stick brings it back (docs/fleet.md): one row
 * per machine from its probe (probes/), its line of machines.json and its
 * report (reports/), with the state of each step and the fix for each one
 * that failed.  probes/ and reports/ are written by the lab's machines and
 * are not signed: every string of them is hostile input to whoever shows
 * it (cmd_fleet.c escapes for the terminal and JSON, fleethtml.c for HTML). */
#ifndef OW_FLEETLAB_H
#define OW_FLEETLAB_H

#include <jansson.h>
#include <stddef.h>

/* A file of probes/ or reports/ larger than this is not read. */
#define FLEET_LAB_FILE_MAX (1u << 20)

enum lab_step { LAB_OK, LAB_FAILED, LAB_PENDING, LAB_NA };
enum { LAB_PROBED, LAB_SET, LAB_INSTALLED, LAB_SMOKE, LAB_NSTEPS };

struct lab_row {
	char *name;                 /* as the files give it (any bytes) */
	json_t *probe, *entry, *report; /* each NULL when absent */
	/* what the table shows ("" when not known; owned) */
	char *gpus, *driver, *python, *set, *when;
	const char *smoke;          /* the report's verdict, NULL none */
	int installed;              /* 1, 0, -1 no report */
	enum lab_step steps[LAB_NSTEPS];
	char *fix[LAB_NSTEPS];      /* per failed or pending step: what to do (owned) */
};

struct lab {
	struct lab_row *rows;
	size_t n;
	char **problems; /* files that could not be read, and why (owned) */
	size_t nproblems;
	char *stick_name; /* the manifest's name, NULL unknown */
};

/* Read DIR's probes/, reports/ and machines.json: 0 or OW_ENOMEM, or
 * OW_ENOENT when DIR holds none of them. */
int lab_load(const char *dir, struct lab *lab);
void lab_dispose(struct lab *lab);
const char *lab_step_name(enum lab_step s);
/* The table's texts, the steps and their fixes of a row whose documents
 * are read (fleetrow.c); 0 or OW_ENOMEM. */
int lab_fill_row(struct lab_row *r);

/* fleet --html: the page, self-contained (fleethtml.c); 0 or OW_EIO. */
int lab_write_html(const struct lab *lab, const char *stick, const char *path);

#endif
