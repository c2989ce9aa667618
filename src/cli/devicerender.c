/* devicerender.c - the --device verdicts of resolve and sync. */
#include <stdio.h>
#include <string.h>

#include "offwheel/doctor.h"
#include "offwheel/gpucompat.h"
#include "render.h"

/* When no set runs on the device: the variant that would (doctor's table,
 * judged by the same rules as the audit); 0 when there is one to name. */
static int suggest(const struct ow_resolve_report *r, const struct ow_device_fit *fits, int cc,
                   struct ow_doctor_fix *fix)
{
	if (r->unreachable || device_fits_running(r, fits) || ow_doctor_suggest(cc, 0, "", "", fix))
		return -1;
	return 0;
}

json_t *device_fits_json(const struct ow_resolve_report *r, const struct ow_device_fit *fits,
                         int cc)
{
	char ccs[16];
	json_t *a = json_array();
	ow_gpu_format_cc(cc, ccs, sizeof ccs);
	for (size_t i = 0; i < r->ntargets; i++)
		json_array_append_new(a, json_pack("{s:s, s:o, s:s, s:b, s:s?, s:s?}", "target",
		                                   r->targets[i].describe, "runs",
		                                   fits[i].runs < 0 ? json_null()
		                                                    : json_boolean(fits[i].runs),
		                                   "verdict", fits[i].verdict, "predicted",
		                                   fits[i].predicted, "audited",
		                                   *fits[i].from ? fits[i].from : NULL, "detail",
		                                   *fits[i].detail ? fits[i].detail : NULL));
	struct ow_doctor_fix fix;
	json_t *sug = suggest(r, fits, cc, &fix) ? json_null()
	              : json_pack("{s:s, s:s, s:s}", "channel", fix.channel, "variant",
	                          fix.variant, "why", fix.why);
	return json_pack("{s:s, s:o, s:o}", "cc", ccs, "targets", a, "suggest", sug);
}

void device_fits_text(const struct cli *c, const struct ow_resolve_report *r,
                      const struct ow_device_fit *fits, int cc)
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
		if (*f->detail)
			cli_say(c, "      %s\n", f->detail);
	}
	struct ow_doctor_fix fix;
	if (suggest(r, fits, cc, &fix) == 0)
		cli_say(c, "  no set here runs on %s: %s — resolve with --channel %s --variant %s\n",
		        ccs, fix.why, fix.channel, fix.variant);
}

size_t device_fits_running(const struct ow_resolve_report *r, const struct ow_device_fit *fits)
{
	size_t n = 0;
	for (size_t i = 0; i < r->ntargets; i++)
		n += r->targets[i].complete && fits[i].runs > 0;
	return n;
}
