/* fleethtml.c - fleet --html: the lab as one self-contained page (see
 * fleetlab.h).  Inline CSS only: no script, font, image or style sheet is
 * fetched from anywhere, and the page's Content-Security-Policy forbids
 * every fetch, so it reads the same offline.  Every string of the lab's
 * files is escaped twice over: cli_terminal_dup makes control bytes, bidi
 * overrides and invalid UTF-8 visible text, then & < > " ' become entities. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clitext.h"
#include "fleetlab.h"
#include "offwheel/error.h"
#include "offwheel/str.h"

static void esc(struct ow_str *b, const char *s)
{
	char *t = cli_terminal_dup(s ? s : "");
	for (const char *p = t ? t : "(out of memory)"; *p; p++) {
		switch (*p) {
		case '&': ow_str_puts(b, "&amp;"); break;
		case '<': ow_str_puts(b, "&lt;"); break;
		case '>': ow_str_puts(b, "&gt;"); break;
		case '"': ow_str_puts(b, "&quot;"); break;
		case '\'': ow_str_puts(b, "&#39;"); break;
		default: ow_str_put(b, p, 1);
		}
	}
	free(t);
}

static const char css[] =
	"body{font:15px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;background:#fff}"
	"h1{font-size:1.4em;margin:0 0 .2em}p.sub{color:#555;margin:0 0 1em}"
	"table{border-collapse:collapse;width:100%}"
	"th,td{border:1px solid #ccc;padding:.35em .5em;text-align:left;vertical-align:top}"
	"thead th{background:#f2f2f2;position:sticky;top:0}"
	"td.step{text-align:center;font-weight:600;white-space:nowrap}"
	".ok{background:#d9f2d9;color:#145214}.failed{background:#f9d0d0;color:#7a0b0b}"
	".pending{background:#eee;color:#555}.na{background:#f6f6f6;color:#777}"
	"tr.fix td{background:#fff8e6;font-size:.92em;border-top:none}"
	"tr.fix ul{margin:.2em 0 .2em 1.2em;padding:0}"
	"code{font:13px ui-monospace,monospace;background:#f4f4f4;padding:0 .2em}";

static const char *step_mark(enum lab_step s)
{
	static const char *const marks[] = {"&#10003; ", "&#10007; ", "&#8230; ", "&#8211; "};
	return marks[s];
}

static void head(struct ow_str *b, const struct lab *lab, const char *stick)
{
	char when[40];
	time_t now = time(NULL);
	struct tm tm;
	if (!gmtime_r(&now, &tm) || !strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", &tm))
		when[0] = '\0';
	ow_str_puts(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	               "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	               "style-src 'unsafe-inline'\">\n<meta name=\"viewport\" "
	               "content=\"width=device-width, initial-scale=1\">\n<title>The lab: ");
	esc(b, lab->stick_name ? lab->stick_name : stick);
	ow_str_printf(b, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>The lab: ", css);
	esc(b, lab->stick_name ? lab->stick_name : stick);
	ow_str_puts(b, "</h1>\n<p class=\"sub\">");
	ow_str_printf(b, "%zu machine%s, from the stick at <code>", lab->n, lab->n == 1 ? "" : "s");
	esc(b, stick);
	ow_str_printf(b, "</code> (probes/, machines.json, reports/); made %s by offwheel %s. "
	                 "Each step: &#10003; done, &#10007; failed (the fix is under the row), "
	                 "&#8230; not yet, &#8211; does not apply.</p>\n",
	              when, OW_VERSION);
	ow_str_puts(b, "<table>\n<thead><tr><th>Machine</th><th>GPUs</th><th>Driver</th>"
	               "<th>Python</th><th>Set</th><th>Probed</th><th>Set chosen</th>"
	               "<th>Installed</th><th>Smoke</th><th>When</th></tr></thead>\n<tbody>\n");
}

static void cell(struct ow_str *b, const char *text)
{
	ow_str_puts(b, "<td>");
	esc(b, text && *text ? text : "-");
	ow_str_puts(b, "</td>");
}

static void row(struct ow_str *b, const struct lab_row *r)
{
	static const char *const cls[] = {"ok", "failed", "pending", "na"};
	static const char *const words[] = {"probed", "set", "installed", "smoke"};
	ow_str_puts(b, "<tr class=\"machine\"><th scope=\"row\">");
	esc(b, r->name);
	ow_str_puts(b, "</th>");
	cell(b, r->gpus);
	cell(b, r->driver);
	cell(b, r->python);
	cell(b, r->set);
	for (int s = 0; s < LAB_NSTEPS; s++) {
		const char *word = s == LAB_SMOKE && r->smoke ? r->smoke : words[s];
		ow_str_printf(b, "<td class=\"step %s\">%s", cls[r->steps[s]], step_mark(r->steps[s]));
		if (r->steps[s] != LAB_NA)
			esc(b, word);
		else if (s == LAB_SMOKE && r->smoke && !strcmp(r->smoke, "no-driver"))
			ow_str_puts(b, "no GPU");
		ow_str_puts(b, "</td>");
	}
	cell(b, r->when);
	ow_str_puts(b, "</tr>\n");
	bool any = false;
	for (int s = 0; s < LAB_NSTEPS; s++)
		any = any || (r->fix[s] && r->steps[s] != LAB_OK);
	if (!any)
		return;
	ow_str_puts(b, "<tr class=\"fix\"><td colspan=\"10\"><ul>");
	for (int s = 0; s < LAB_NSTEPS; s++) {
		if (!r->fix[s] || r->steps[s] == LAB_OK)
			continue;
		ow_str_printf(b, "<li class=\"%s\"><b>%s:</b> ", cls[r->steps[s]], words[s]);
		esc(b, r->fix[s]);
		ow_str_puts(b, "</li>");
	}
	ow_str_puts(b, "</ul></td></tr>\n");
}

int lab_write_html(const struct lab *lab, const char *stick, const char *path)
{
	struct ow_str b = {0};
	char *text = NULL, *tmp = ow_aprintf("%s.tmp", path);
	head(&b, lab, stick);
	for (size_t i = 0; i < lab->n; i++)
		row(&b, &lab->rows[i]);
	ow_str_puts(&b, "</tbody>\n</table>\n");
	for (size_t i = 0; i < lab->nproblems; i++) {
		ow_str_puts(&b, i ? "<br>" : "<p class=\"sub\">Not read: ");
		esc(&b, lab->problems[i]);
	}
	ow_str_puts(&b, lab->nproblems ? "</p>\n</body>\n</html>\n" : "</body>\n</html>\n");
	int rc = ow_str_take(&b, &text) || !tmp ? ow_err(OW_ENOMEM, "out of memory") : 0;
	FILE *f = rc ? NULL : fopen(tmp, "w");
	bool bad = !rc && (!f || fputs(text, f) < 0);
	if (f && fclose(f))
		bad = true;
	if (!rc && !bad && rename(tmp, path))
		bad = true;
	if (bad) {
		rc = ow_err(OW_EIO, "--html %s: cannot write it: %s", path, strerror(errno));
		remove(tmp);
	}
	free(text);
	free(tmp);
	return rc;
}
