/* fleet.c - which set each lab machine gets (see fleet.h). */
#include "offwheel/fleet.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "offwheel/error.h"
#include "offwheel/str.h"

int ow_variant_min_driver(const char *variant)
{
	if (strcmp(variant, "cpu") == 0)
		return 0;
	if (strncmp(variant, "cu", 2) != 0)
		return -1;
	const char *d = variant + 2;
	size_t n = strspn(d, "0123456789");
	if (n < 3 || n > 4 || d[n])
		return -1;
	int v = (int)strtol(d, NULL, 10); /* 3 or 4 digits, checked above */
	return (v / 10) * 1000 + (v % 10) * 10; /* 128 -> 12080, 130 -> 13000 */
}

/* NVIDIA, CUDA Toolkit release notes, Table 3 "CUDA Toolkit and
 * Corresponding Driver Versions" (Toolkit Driver Version, Linux x86_64):
 * the driver each toolkit release ships with, which reports that CUDA
 * version; docs/fleet.md cites it. */
static const struct {
	int cuda;
	const char *linux_driver;
} min_driver[] = {
	{11080, "520.61.05"}, {12000, "525.60.13"}, {12010, "530.30.02"}, {12020, "535.54.03"},
	{12030, "545.23.06"}, {12040, "550.54.14"}, {12050, "555.42.02"}, {12060, "560.28.03"},
	{12080, "570.26"},    {12090, "575.51.03"}, {13000, "580.65.06"},
};

const char *ow_cuda_min_linux_driver(int cuda)
{
	for (size_t i = 0; i < sizeof min_driver / sizeof *min_driver; i++)
		if (min_driver[i].cuda == cuda)
			return min_driver[i].linux_driver;
	return NULL;
}

static void why_driver(struct ow_str *b, const char *variant, int driver, int need)
{
	const char *rel = ow_cuda_min_linux_driver(need);
	ow_str_printf(b, "%s: the driver reports CUDA %d.%d; %s needs %d.%d", variant,
	              driver / 1000, driver % 1000 / 10, variant, need / 1000, need % 1000 / 10);
	if (rel)
		ow_str_printf(b, " (NVIDIA driver %s or newer)", rel);
}

/* Whether option o fits, else its reason appended to b. */
static bool fits(const struct ow_fleet_option *o, int driver, size_t ngpus, struct ow_str *b)
{
	int need = ow_variant_min_driver(o->variant);
	size_t at = b->n;
	if (b->n)
		ow_str_puts(b, "; ");
	if (!driver || !ngpus) {
		if (need == 0)
			return true;
		ow_str_printf(b, "%s: needs an NVIDIA driver and GPU", o->variant);
	} else if (need <= 0) {
		ow_str_printf(b, "%s: not a CUDA build (the machine has a GPU)", o->variant);
	} else if (need > driver) {
		why_driver(b, o->variant, driver, need);
	} else if (o->runs == 0) {
		ow_str_printf(b, "%s: no build for its GPU (%s)", o->variant,
		              o->why_not ? o->why_not : "the audit says it would not run");
	} else {
		b->n = at;
		if (b->p)
			b->p[at] = '\0';
		return true;
	}
	return false;
}

int ow_fleet_pick(int driver, size_t ngpus, const struct ow_fleet_option *opts, size_t n,
                  int *chosen, char **why)
{
	struct ow_str b = {0};
	int best = -1, best_need = -1;
	*chosen = -1;
	*why = NULL;
	for (size_t i = 0; i < n; i++) {
		if (!fits(&opts[i], driver, ngpus, &b))
			continue;
		int need = ow_variant_min_driver(opts[i].variant);
		/* the newest CUDA; one known to run before one not judged */
		bool better = best < 0 || (opts[i].runs == 1 && opts[best].runs != 1) ||
		              (opts[i].runs == opts[best].runs && need > best_need);
		if (better) {
			best = (int)i;
			best_need = need;
		}
	}
	if (best < 0 && !n)
		ow_str_puts(&b, "no complete set for its Python and platform");
	*chosen = best;
	if (best >= 0) {
		ow_str_dispose(&b);
		return 0;
	}
	return ow_str_take(&b, why) ? ow_err(OW_ENOMEM, "out of memory") : 0;
}
