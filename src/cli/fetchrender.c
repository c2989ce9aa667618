/* fetchrender.c - a fetch report for people and for --json (render.h):
 * fetch and sync print it, and the interrupt report lists its stored files
 * with it. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli.h"
#include "offwheel/fetch.h"
#include "offwheel/str.h"
#include "render.h"

static json_t *item_json(const struct ow_fetch_item *it)
{
	json_t *o = json_pack("{s:s, s:s, s:s, s:I, s:I, s:b, s:s?, s:s?, s:s?}", "filename",
	                      it->filename, "url", it->url ? it->url : "", "outcome",
	                      ow_fetch_outcome_name(it->outcome), "bytes", (json_int_t)it->bytes,
	                      "received", (json_int_t)it->received, "resumed", it->resumed,
	                      "sha256", *it->sha256 ? it->sha256 : NULL, "trust", it->trust,
	                      "error",
	                      it->outcome >= OW_FETCH_REJECTED ? ow_fetch_item_detail(it) : NULL);
	json_t *r = json_pack("{s:s, s:I, s:I, s:s?, s:b}", "resume", ow_fetch_resume_name(it->resume),
	                      "partial", (json_int_t)it->partial, "resumed_from",
	                      (json_int_t)it->resumed_from, "resume_basis",
	                      ow_fetch_resume_basis_name(it->resume_basis), "restarted",
	                      it->restarted);
	json_object_update(o, r);
	json_decref(r);
	return o;
}

/* The one line that says what became of the bytes held before; "" when
 * there is nothing to say. */
static void resume_line(const struct ow_fetch_item *it, char *buf, size_t n)
{
	char at[32];
	buf[0] = '\0';
	switch (it->resume) {
	case OW_FETCH_RESUMED:
		cli_bytes(it->resumed_from, at, sizeof at);
		if (it->resume_basis == OW_FETCH_BASIS_IF_RANGE)
			snprintf(buf, n, "resumed at %s (If-Range %s)", at, it->validator);
		else
			snprintf(buf, n, "resumed at %s (no If-Range; the %s sha256 decides)", at,
			         it->resume_basis == OW_FETCH_BASIS_PINNED ? "pinned" : "published");
		break;
	case OW_FETCH_RESUME_REFUSED:
		snprintf(buf, n, "a partial of %s not resumed: no sha256 is known and the server "
		         "sent no ETag or Last-Modified to judge its bytes by; downloaded from zero",
		         cli_bytes(it->partial, at, sizeof at));
		break;
	case OW_FETCH_RESUME_IGNORED:
		snprintf(buf, n, "a partial of %s not resumed: the server sent the whole file to the "
		         "Range request; downloaded from zero", cli_bytes(it->partial, at, sizeof at));
		break;
	case OW_FETCH_RESUME_DISCARDED:
		snprintf(buf, n, "resume discarded: the resumed file did not %s; downloaded again "
		         "from zero",
		         it->resume_basis == OW_FETCH_BASIS_PINNED      ? "match its pinned sha256"
		         : it->resume_basis == OW_FETCH_BASIS_PUBLISHED ? "match its published sha256"
		                                                        : "verify");
		break;
	default:
		break;
	}
}

static void say_resume(const struct cli *c, const struct ow_fetch_item *it)
{
	char line[512], prefix[400];
	resume_line(it, line, sizeof line);
	if (!*line || c->json || c->verbosity < 0)
		return;
	snprintf(prefix, sizeof prefix, "offwheel %s: %s: ", c->cmd ? c->cmd : "fetch",
	         it->filename);
	cli_wrapped(stdout, prefix, line);
}

json_t *cli_fetch_report_json(const struct ow_fetch_report *r)
{
	json_t *a = json_array();
	for (size_t i = 0; i < r->n; i++)
		json_array_append_new(a, item_json(&r->items[i]));
	return json_pack("{s:s, s:o, s:I, s:I, s:I, s:I, s:I, s:f, s:b}", "command", "fetch",
	                 "files", a, "done", (json_int_t)r->done, "had", (json_int_t)r->had,
	                 "rejected", (json_int_t)r->rejected, "failed", (json_int_t)r->failed,
	                 "received", (json_int_t)r->received, "seconds", r->seconds, "complete",
	                 r->failed == 0 && r->rejected == 0);
}

/* "done     NAME  SIZE  TRUST"; too long for the terminal, the size goes
 * on a line of its own: the name is never cut. */
void cli_fetch_item_text(const struct cli *c, const struct ow_fetch_item *it)
{
	char head[300], tail[96], b[32];
	if (c->json || c->verbosity < 0)
		return;
	int n = snprintf(head, sizeof head, "%-8s %s", ow_fetch_outcome_name(it->outcome),
	                 it->filename);
	int k = snprintf(tail, sizeof tail, "%s%s%s%s", cli_bytes(it->bytes, b, sizeof b),
	                 it->resumed ? " (resumed)" : "", it->trust ? "  " : "",
	                 it->trust ? it->trust : "");
	int split = isatty(fileno(stdout)) && n + 2 + k > cli_columns(fileno(stdout), 80);
	cli_say(c, "%s%s%s\n", head, split ? "\n         " : "  ", tail);
}

/* ", 4 already there (downloaded while resolving, ...)" and the like: only
 * the counts that are not zero. */
static void summary_parts(const struct ow_fetch_report *r, size_t by_resolve, struct ow_str *b)
{
	if (r->had)
		ow_str_printf(b, ", %zu already there", r->had);
	if (r->had && by_resolve)
		ow_str_printf(b, " (%s%zu downloaded by this run to read their METADATA)",
		              by_resolve < r->had ? "of them " : "",
		              by_resolve < r->had ? by_resolve : r->had);
	if (r->rejected)
		ow_str_printf(b, ", %zu rejected", r->rejected);
	if (r->failed)
		ow_str_printf(b, ", %zu failed", r->failed);
}

void cli_fetch_render_text(const struct cli *c, const struct ow_fetch_report *r, size_t by_resolve)
{
	char b2[32], b3[32];
	struct ow_str sum = {0};
	cli_progress_clear();
	for (size_t i = 0; i < r->n; i++) {
		const struct ow_fetch_item *it = &r->items[i];
		say_resume(c, it);
		if (it->outcome >= OW_FETCH_REJECTED) {
			char prefix[300];
			snprintf(prefix, sizeof prefix, "%-8s %s: ", ow_fetch_outcome_name(it->outcome),
			         it->filename);
			cli_wrapped(stderr, prefix, ow_fetch_item_detail(it));
		} else if (it->outcome == OW_FETCH_DONE || c->verbosity > 0)
			cli_fetch_item_text(c, it);
	}
	if (!r->n || c->json || c->verbosity < 0)
		return;
	if (r->done)
		ow_str_printf(&sum, "%zu files: %zu downloaded (%s in %.1f s, %s)", r->n, r->done,
		              cli_bytes(r->received, b2, sizeof b2), r->seconds,
		              cli_rate(r->received, r->seconds, b3, sizeof b3));
	else
		ow_str_printf(&sum, "%zu files: none downloaded", r->n);
	summary_parts(r, by_resolve, &sum);
	char *text;
	if (ow_str_take(&sum, &text) == 0) { /* out of memory: no summary, the items were said */
		cli_wrapped(stdout, "", text);
		free(text);
	}
}
