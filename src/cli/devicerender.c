/* devicerender.c - the --device verdicts of resolve and sync. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "offwheel/doctor.h"
#include "offwheel/gpucompat.h"
#include "offwheel/str.h"
#include "render.h"

/* The variant that would run when no set does (doctor's table, judged by
 * the same rules as the audit), and where it is: `where` the variant's
 * folder on PyTorch's index (or the lab's mirror of it).  0 when there is
 * one to name. */
static int suggest(const struct ow_resolve_report *r, const struct ow_device_fit *fits, int cc,
                   struct ow_doctor_fix *fix, char *where, size_t n)
{
	char buf[2048];
	if (r->unreachable || cli_device_fits_running(r, fits) || ow_doctor_suggest(cc, 0, "", "", fix))
		return -1;
	const char *root = cli_index_opts_channel_url(fix->channel, buf, sizeof buf);
	snprintf(where, n, "%s/%s", root ? root : "", fix->variant);
	return 0;
}

/* The index in use is PyTorch's (a channel, or one of its variant
 * folders): then only the channel and variant change. */
static int on_pytorch_index(const struct cli_index_opts *o)
{
	static const char *const channels[] = {"stable", "nightly", "test"};
	char buf[2048];
	for (size_t i = 0; i < sizeof channels / sizeof *channels; i++) {
		const char *root = cli_index_opts_channel_url(channels[i], buf, sizeof buf);
		size_t n = root ? strlen(root) : 0;
		if (n && !strncmp(o->index, root, n) && (!o->index[n] || o->index[n] == '/'))
			return 1;
	}
	return 0;
}

static json_t *fault_json(const struct ow_device_fit *f)
{
	if (!f->library)
		return json_null();
	return json_pack("{s:s, s:I, s:I}", "library", f->library, "modules",
	                 (json_int_t)f->modules, "no_image", (json_int_t)f->no_image);
}

static json_t *fit_json(const struct ow_resolve_target *t, const struct ow_device_fit *f)
{
	/* a target that could not be judged: runs and audited are null */
	json_t *o = json_pack("{s:s, s:o, s:s, s:b, s:o, s:o}", "target", t->describe, "runs",
	                      f->runs < 0 ? json_null() : json_boolean(f->runs), "verdict",
	                      f->verdict, "predicted", f->predicted, "audited",
	                      *f->from ? json_string(f->from) : json_null(), "detail",
	                      f->detail && *f->detail ? json_string(f->detail) : json_null());
	if (o)
		json_object_set_new(o, "cause", fault_json(f));
	return o;
}

json_t *cli_device_fits_json(const struct cli_index_opts *o, const struct ow_resolve_report *r,
                         const struct ow_device_fit *fits, int cc)
{
	char ccs[16], where[2100];
	json_t *a = json_array();
	ow_gpu_format_cc(cc, ccs, sizeof ccs);
	for (size_t i = 0; i < r->ntargets; i++)
		json_array_append_new(a, fit_json(&r->targets[i], &fits[i]));
	struct ow_doctor_fix fix;
	json_t *sug = suggest(r, fits, cc, &fix, where, sizeof where)
	                  ? json_null()
	                  : json_pack("{s:s, s:s, s:s, s:s, s:s, s:b}", "channel", fix.channel,
	                              "variant", fix.variant, "why", fix.why, "index", where,
	                              "index_in_use", o->index, "same_index",
	                              on_pytorch_index(o));
	return json_pack("{s:s, s:o, s:o}", "cc", ccs, "targets", a, "suggest", sug);
}

static void suggest_text(const struct cli *c, const struct cli_index_opts *o,
                         const struct ow_resolve_report *r, const struct ow_device_fit *fits,
                         int cc, const char *ccs)
{
	struct ow_doctor_fix fix;
	char where[2100];
	if (suggest(r, fits, cc, &fix, where, sizeof where))
		return;
	int pytorch = on_pytorch_index(o);
	/* the command to run again is the one that was run: sync or resolve */
	const char *cmd = c->cmd && !strcmp(c->cmd, "sync") ? "sync" : "resolve";
	if (!strcmp(where, o->index)) /* the flags already used: another torch is the way */
		cli_say(c, "  no set here runs on %s: %s — the index in use is that one; try another "
		        "torch (--version V, or --date YYYYMMDD on a nightly channel)\n", ccs, fix.why);
	else if (pytorch && !o->index_url)
		cli_say(c, "  no set here runs on %s: %s — %s with --channel %s --variant %s "
		        "(%s; the index in use is %s)\n", ccs, fix.why, cmd, fix.channel, fix.variant,
		        where, o->index);
	else
		cli_say(c, "  no set here runs on %s with the index in use, %s: %s%s — %s with "
		        "--index-url %s (or --channel %s --variant %s in place of --index-url)%s\n", ccs,
		        o->index, fix.why, pytorch ? "" : ", on PyTorch's index", cmd, where, fix.channel,
		        fix.variant, pytorch ? "" : ", or try another torch of this index (--version V)");
}

void cli_device_fits_text(const struct cli *c, const struct cli_index_opts *o,
                      const struct ow_resolve_report *r, const struct ow_device_fit *fits, int cc)
{
	char ccs[16];
	ow_gpu_format_cc(cc, ccs, sizeof ccs);
	cli_say(c, "on a device of compute capability %s:\n", ccs);
	for (size_t i = 0; i < r->ntargets; i++) {
		const struct ow_device_fit *f = &fits[i];
		if (f->runs < 0 && !r->targets[i].complete)
			continue;
		cli_say(c, "  %-40s %s%s%s\n", r->targets[i].describe,
		        f->runs > 0 ? "runs" : f->runs == 0 ? "WOULD NOT RUN" : "unknown",
		        f->runs >= 0 ? " — " : "", f->runs >= 0 ? f->verdict : "");
		if (f->detail && *f->detail)
			cli_say(c, "      %s\n", f->detail);
	}
	suggest_text(c, o, r, fits, cc, ccs);
}

size_t cli_device_fits_running(const struct ow_resolve_report *r, const struct ow_device_fit *fits)
{
	size_t n = 0;
	for (size_t i = 0; i < r->ntargets; i++)
		n += r->targets[i].complete && fits[i].runs > 0;
	return n;
}

int cli_fits_judge(struct cli_fits *fs, ow_store *s, const struct ow_fetch_opts *fo,
                   const struct ow_resolve_report *r, const int *ccs, size_t n, int driver)
{
	memset(fs, 0, sizeof *fs);
	for (size_t d = 0; d < n && d < CLI_MAX_DEVICES; d++) {
		fs->f[d] = calloc(r->ntargets ? r->ntargets : 1, sizeof *fs->f[d]);
		if (!fs->f[d])
			return OW_ENOMEM;
		fs->cc[d] = ccs[d];
		fs->n++;
		int rc = ow_device_fit_all(s, fo, r, ccs[d], driver, fs->f[d]);
		if (rc)
			return rc;
	}
	return 0;
}

void cli_fits_dispose(struct cli_fits *fs, size_t ntargets)
{
	for (size_t d = 0; d < fs->n; d++)
		ow_device_fits_free(fs->f[d], ntargets);
	memset(fs, 0, sizeof *fs);
}

bool cli_fits_runs(const struct ow_resolve_report *r, const struct cli_fits *fs, size_t i)
{
	bool all = r->targets[i].complete;
	for (size_t d = 0; d < fs->n && all; d++)
		all = fs->f[d][i].runs > 0;
	return all;
}

size_t cli_fits_running(const struct ow_resolve_report *r, const struct cli_fits *fs)
{
	size_t n = 0;
	for (size_t i = 0; i < r->ntargets; i++)
		n += cli_fits_runs(r, fs, i);
	return n;
}

void cli_fits_text(const struct cli *c, const struct cli_index_opts *o,
                   const struct ow_resolve_report *r, const struct cli_fits *fs)
{
	for (size_t d = 0; d < fs->n; d++)
		cli_device_fits_text(c, o, r, fs->f[d], fs->cc[d]);
	if (fs->n < 2)
		return;
	struct ow_str b = {0};
	for (size_t d = 0; d < fs->n; d++) {
		char cc[16];
		ow_gpu_format_cc(fs->cc[d], cc, sizeof cc);
		ow_str_printf(&b, "%s%s", d ? (d + 1 == fs->n ? " and " : ", ") : "", cc);
	}
	size_t complete = 0;
	for (size_t i = 0; i < r->ntargets; i++)
		complete += r->targets[i].complete;
	cli_say(c, "on every device named (%s): %zu of %zu complete target(s) run\n",
	        b.p ? b.p : "?", cli_fits_running(r, fs), complete);
	ow_str_dispose(&b);
}

void cli_fits_json_set(json_t *doc, const struct cli_index_opts *o,
                       const struct ow_resolve_report *r, const struct cli_fits *fs)
{
	json_t *all = json_array();
	for (size_t d = 0; d < fs->n; d++)
		json_array_append_new(all, cli_device_fits_json(o, r, fs->f[d], fs->cc[d]));
	if (fs->n)
		json_object_set_new(doc, "device", cli_device_fits_json(o, r, fs->f[0], fs->cc[0]));
	json_object_set_new(doc, "devices", all);
}
