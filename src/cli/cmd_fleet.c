/* cmd_fleet.c - offwheel fleet: the lab's table from a stick (docs/fleet.md). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "clitext.h"
#include "fleetlab.h"
#include "mixedargs.h"
#include "offwheel/str.h"

static const char usage[] = "fleet STICK [--html FILE]";
static const char description[] =
	"The lab as the stick brings it back: one row per machine from its probe\n"
	"(probes/), its line of machines.json and its report (reports/, written by\n"
	"'offwheel install'): GPUs, driver, Python, the set, installed or not, the\n"
	"smoke's verdict, when; for a machine no set fits, why.  --html FILE writes\n"
	"the same as one self-contained page (no script, font or image from\n"
	"anywhere; readable offline): a row per machine, each step green or red, and\n"
	"the fix for each red one.  probes/ and reports/ are the lab's own, not\n"
	"signed: what they say is shown escaped, never obeyed.  Needs no workspace.";

enum { OPT_HTML = 256 };
static const struct cli_opt opts[] = {
	{"html", OPT_HTML, required_argument, "FILE", "also write the table as one self-contained HTML page"},
	{NULL, 0, 0, NULL, NULL},
};

static int on_opt(struct cli *c, int key, const char *arg, void *ud)
{
	(void)c;
	if (key != OPT_HTML)
		return 2;
	*(const char **)ud = arg;
	return 0;
}

static json_t *jbytes(const char *s)
{
	return s && *s ? cli_json_bytes(s, NULL) : json_null();
}

static json_t *row_json(const struct lab_row *r)
{
	json_t *steps = json_object(), *fixes = json_array();
	static const char *const keys[] = {"probed", "set", "installed", "smoke"};
	for (int s = 0; s < LAB_NSTEPS; s++) {
		json_object_set_new(steps, keys[s], json_string(lab_step_name(r->steps[s])));
		if (r->fix[s])
			json_array_append_new(fixes, cli_json_bytes(r->fix[s], NULL));
	}
	json_t *why = json_object_get(r->report, "why");
	if (!json_is_string(why))
		why = json_object_get(r->entry, "why");
	json_t *when = json_object_get(r->report, "finished_unix");
	return json_pack("{s:o, s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "name",
	                 cli_json_bytes(r->name, NULL), "probed", r->probe != NULL, "gpus",
	                 jbytes(r->gpus), "driver", jbytes(r->driver), "python", jbytes(r->python),
	                 "set", jbytes(r->set), "why", jbytes(json_string_value(why)), "installed",
	                 r->installed < 0 ? json_null() : json_boolean(r->installed), "smoke",
	                 jbytes(r->smoke), "when_unix",
	                 json_is_integer(when) ? json_incref(when) : json_null(), "steps", steps,
	                 "fixes", fixes);
}

static void render_json(const struct lab *lab, const char *stick, const char *html)
{
	json_t *rows = json_array(), *probs = json_array();
	for (size_t i = 0; i < lab->n; i++)
		json_array_append_new(rows, row_json(&lab->rows[i]));
	for (size_t i = 0; i < lab->nproblems; i++)
		json_array_append_new(probs, cli_json_bytes(lab->problems[i], NULL));
	cli_json_out(json_pack("{s:s, s:o, s:o, s:o, s:o, s:o}", "command", "fleet", "stick",
	                       cli_json_bytes(stick, NULL), "name", jbytes(lab->stick_name),
	                       "machines", rows, "problems", probs, "html", jbytes(html)));
}

/* The shown texts of a row, escaped for the terminal (owned). */
struct shown {
	char *f[7]; /* name, gpus, driver, python, set, installed + smoke, when */
};

static void shown_of(const struct lab_row *r, struct shown *s)
{
	char *inst = ow_aprintf("%s, smoke %s", r->installed < 0 ? "not installed"
	                                        : r->installed ? "installed" : "NOT INSTALLED",
	                        r->smoke ? r->smoke : "-");
	const char *src[7] = {r->name, r->gpus, r->driver, r->python, r->set, inst, r->when};
	for (int i = 0; i < 7; i++)
		s->f[i] = cli_terminal_dup(src[i] && *src[i] ? src[i] : "-");
	free(inst);
}

static void shown_dispose(struct shown *s)
{
	for (int i = 0; i < 7; i++)
		free(s->f[i]);
}

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

/* One line per machine in a pipe or a wide terminal; on a narrow one the
 * name on its line and the rest under it (wrapped by cli_out at words). */
static void row_text(const struct cli *c, const struct lab_row *r, const int *w, bool stacked)
{
	struct shown s;
	shown_of(r, &s);
	if (stacked)
		cli_out(c, "%s\n    GPU %s; driver %s; %s; set %s; %s; %s\n", or_empty(s.f[0]),
		        or_empty(s.f[1]), or_empty(s.f[2]), or_empty(s.f[3]), or_empty(s.f[4]),
		        or_empty(s.f[5]), or_empty(s.f[6]));
	else
		cli_out(c, "%-*s  %-*s  %-*s  %-*s  %-*s  %-*s  %s\n", w[0], or_empty(s.f[0]), w[1],
		        or_empty(s.f[1]), w[2], or_empty(s.f[2]), w[3], or_empty(s.f[3]), w[4],
		        or_empty(s.f[4]), w[5], or_empty(s.f[5]), or_empty(s.f[6]));
	for (int k = 0; k < LAB_NSTEPS; k++) {
		if (!r->fix[k] || r->steps[k] != LAB_FAILED)
			continue;
		char *fix = cli_terminal_dup(r->fix[k]);
		cli_out(c, "    %s: %s\n", lab_step_name(r->steps[k]), or_empty(fix));
		free(fix);
	}
	shown_dispose(&s);
}

static bool widths(const struct cli *c, const struct lab *lab, int *w)
{
	static const char *const heads[7] = {"MACHINE", "GPUS", "DRIVER", "PYTHON", "SET",
	                                     "INSTALLED, SMOKE", "WHEN"};
	int total = 0, cols = cli_columns(1, 0);
	for (int i = 0; i < 7; i++)
		w[i] = (int)strlen(heads[i]);
	for (size_t k = 0; k < lab->n; k++) {
		struct shown s;
		shown_of(&lab->rows[k], &s);
		for (int i = 0; i < 7; i++)
			if (s.f[i] && (int)strlen(s.f[i]) > w[i])
				w[i] = (int)strlen(s.f[i]);
		shown_dispose(&s);
	}
	for (int i = 0; i < 7; i++)
		total += w[i] + 2;
	bool stacked = cols > 0 && total > cols;
	if (!stacked)
		cli_out(c, "%-*s  %-*s  %-*s  %-*s  %-*s  %-*s  %s\n", w[0], heads[0], w[1], heads[1],
		        w[2], heads[2], w[3], heads[3], w[4], heads[4], w[5], heads[5], heads[6]);
	return stacked;
}

static void render_text(const struct cli *c, const struct lab *lab, const char *html)
{
	int w[7];
	bool stacked = widths(c, lab, w);
	size_t done = 0, nothing = 0;
	for (size_t i = 0; i < lab->n; i++) {
		row_text(c, &lab->rows[i], w, stacked);
		done += lab->rows[i].installed == 1;
		nothing += lab->rows[i].steps[LAB_SET] == LAB_FAILED;
	}
	for (size_t i = 0; i < lab->nproblems; i++) {
		char *p = cli_terminal_dup(lab->problems[i]);
		cli_wrapped(stderr, "offwheel fleet: warning: ", p ? p : "(out of memory)");
		free(p);
	}
	cli_say(c, "%zu machine%s: %zu installed, %zu with no set that fits\n", lab->n,
	        lab->n == 1 ? "" : "s", done, nothing);
	if (html) {
		char *h = cli_printable_dup(html);
		cli_say(c, "written to %s\n", h ? h : "");
		free(h);
	}
}

int cmd_fleet(struct cli *c, int argc, char **argv)
{
	const char *html = NULL;
	const struct cli_spec cs = {opts, usage, description, on_opt, &html};
	int nops, first = cli_parse_mixed(c, argc, argv, &cs, &nops);
	if (first < 0)
		return cli_parse_exit(first);
	if (nops != 1)
		return cli_usage_error(c, "fleet: name one stick (the export's directory)");
	struct lab lab;
	int rc = lab_load(argv[1], &lab);
	if (!rc && html)
		rc = lab_write_html(&lab, argv[1], html);
	if (rc)
		rc = cli_fail(c, rc);
	else if (c->json)
		render_json(&lab, argv[1], html);
	else
		render_text(c, &lab, html);
	lab_dispose(&lab);
	return rc;
}
