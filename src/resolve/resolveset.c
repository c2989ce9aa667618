/* resolveset.c - which torchvision / torchaudio goes with which torch: the
 * pins in their metadata decide; dates only bound the search. */
#include <stdio.h>
#include <string.h>

#include "resolveint.h"

uint32_t rs_version_date(const struct ow_version *v)
{
	if (!v->has_dev || v->dev < 19700101 || v->dev > 99991231)
		return 0;
	uint32_t d = (uint32_t)v->dev, m = d / 100 % 100, day = d % 100;
	return m >= 1 && m <= 12 && day >= 1 && day <= 31 ? d : 0;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (civil calendar). */
long rs_day_number(uint32_t ymd)
{
	long y = (long)(ymd / 10000), m = (long)(ymd / 100 % 100), d = (long)(ymd % 100);
	y -= m <= 2;
	long era = (y >= 0 ? y : y - 399) / 400;
	long yoe = y - era * 400;
	long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

bool rs_in_scope(uint32_t td, uint32_t cd)
{
	return !td || !cd || rs_day_number(cd) + 2 >= rs_day_number(td);
}

/* How a candidate's torch pin takes torch t: not at all, among others (a
 * range, or no pin), or with an exact == (preferred). */
enum pin_fit { PIN_REFUSES, PIN_ADMITS, PIN_EXACT };

static enum pin_fit pin_admits(const char *pin, const struct ow_version *t)
{
	struct ow_specset set;
	if (!pin)
		return PIN_ADMITS;
	if (ow_spec_parse(&set, pin) < 0 || !ow_spec_contains(&set, t, true))
		return PIN_REFUSES;
	for (size_t i = 0; i < set.n; i++)
		if (set.specs[i].op == OW_OP_EQ && !set.specs[i].wildcard)
			return PIN_EXACT;
	return PIN_ADMITS;
}

uint32_t rs_upload_day(const char *iso)
{
	unsigned y, m, d;
	int used = 0;
	if (!iso || sscanf(iso, "%4u-%2u-%2u%n", &y, &m, &d, &used) != 3 || used != 10 || y < 1990 ||
	    m < 1 || m > 12 || d < 1 || d > 31)
		return 0;
	return y * 10000 + m * 100 + d;
}

/* Whether a candidate uploaded on day cu can pin a torch first uploaded on tu. */
static bool may_pin(uint32_t tu, uint32_t cu)
{
	return !tu || !cu || rs_day_number(cu) + RS_PIN_DAYS >= rs_day_number(tu);
}

/* A local label that names a build variant: cu128, cpu, rocm6.4, xpu (and
 * their dotted tails, cpu.cxx11.abi). */
static bool variant_label(const char *local)
{
	return (!strncmp(local, "cu", 2) && local[2] >= '0' && local[2] <= '9') ||
	       !strncmp(local, "rocm", 4) || !strncmp(local, "cpu", 3) || !strncmp(local, "xpu", 3);
}

/* How well a candidate's local label goes with torch's: the same label (both
 * none, or +cu126 with +cu126) is preferred; a build for another variant
 * (+cu128 beside a +cu126 torch) is never taken — one index root can hold
 * both (an export of two variants, a devpi index), and each carries the
 * same torch pin. */
enum label_fit { LABEL_SAME, LABEL_OTHER, LABEL_CLASH };

static enum label_fit label_fit(const struct ow_version *t, const struct ow_version *c)
{
	if (!strcmp(t->local, c->local))
		return LABEL_SAME;
	return variant_label(t->local) && variant_label(c->local) ? LABEL_CLASH : LABEL_OTHER;
}

static long match_pass(const struct ow_version *t, uint32_t td, uint32_t tu,
                       const struct rs_mc *cs, size_t n, bool newest, enum label_fit worst)
{
	long loose = RS_NONE;
	for (size_t i = 0; i < n; i++) {
		if (!rs_in_scope(td, cs[i].date) || !cs[i].usable || label_fit(t, cs[i].v) > worst)
			continue; /* unusable before its metadata is known (yanked): never needed */
		if (cs[i].meta == RS_META_QUEUED) {
			if (loose == RS_NONE || may_pin(tu, cs[i].uploaded))
				return RS_NEED;
			continue; /* older than the answer so far and too old to pin t: never read */
		}
		if (cs[i].meta == RS_META_NONE)
			continue;
		enum pin_fit a = pin_admits(cs[i].pin, t);
		if (a == PIN_EXACT)
			return (long)i; /* the newest exact pin: nothing older can beat it */
		if (a != PIN_REFUSES && loose == RS_NONE)
			loose = (long)i;
		if (a != PIN_REFUSES && newest)
			break; /* pip's rule: the newest the pin admits, look no further */
	}
	return loose;
}

/* First among the builds with torch's own local label; only when none of
 * them fits, among the others that are not built for another variant. */
long rs_match_one(const struct ow_version *t, uint32_t td, uint32_t tu, const struct rs_mc *cs,
                  size_t n, bool newest)
{
	long same = match_pass(t, td, tu, cs, n, newest, LABEL_SAME);
	return same != RS_NONE ? same : match_pass(t, td, tu, cs, n, newest, LABEL_OTHER);
}

/* Match every project for torch t; bit p of the result = projs[p] missing. */
static uint32_t match_all(const struct rs_mc *t, const struct rs_mc *const *projs,
                          const size_t *nprojs, size_t np, bool newest, long *pick, bool *need)
{
	uint32_t miss = 0;
	for (size_t p = 0; p < np; p++) {
		pick[p] = rs_match_one(t->v, t->date, t->uploaded, projs[p], nprojs[p], newest);
		if (pick[p] == RS_NEED)
			*need = true;
		else if (pick[p] == RS_NONE)
			miss |= 1u << p;
	}
	return miss;
}

void rs_choose(const struct rs_mc *torches, size_t window, const struct rs_mc *const *projs,
               const size_t *nprojs, size_t np, bool newest, struct rs_choice *out)
{
	out->torch = RS_NONE;
	out->examined = 0;
	for (size_t i = 0; i < window; i++) {
		out->examined = i + 1;
		out->missing[i] = 0;
		if (!torches[i].usable)
			continue;
		bool need = false;
		uint32_t miss = match_all(&torches[i], projs, nprojs, np, newest, out->pick, &need);
		if (need) {
			out->torch = RS_NEED;
			return;
		}
		out->missing[i] = miss;
		if (!miss) {
			out->torch = (long)i;
			return;
		}
	}
}
