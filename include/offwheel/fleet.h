/* fleet.h - which set each lab machine gets (docs/fleet.md).
 *
 * A machine with no NVIDIA driver (or no GPU) gets the CPU build.  One with
 * a driver gets the newest CUDA variant that (1) its driver supports: cuXY
 * needs a driver reporting CUDA X.Y or newer (cuDriverGetVersion), the
 * simple rule, without counting on minor-version compatibility (which
 * leaves out PTX JIT of newer PTX), and (2) runs on every one of its GPUs
 * by the audit (devicefit.h).  No such variant: nothing, with why. */
#ifndef OW_FLEET_H
#define OW_FLEET_H

#include <stddef.h>

/* The driver's CUDA version a variant needs, as cuDriverGetVersion
 * numbers: cu128 -> 12080, cu118 -> 11080; cpu -> 0; -1 for a variant that
 * is not CUDA (rocm6.4, xpu) or not known. */
int ow_variant_min_driver(const char *variant);
/* The oldest Linux driver release that reports CUDA version `cuda`
 * (12080 -> "570.26"), from NVIDIA's CUDA Toolkit release notes (Table 3,
 * docs/fleet.md); NULL when the table does not have it. */
const char *ow_cuda_min_linux_driver(int cuda);

/* One set a machine could get: a complete set for its Python and platform. */
struct ow_fleet_option {
	const char *variant; /* cu128, cpu */
	int runs;            /* on every GPU of the machine: 1 runs, 0 one cannot, -1 unknown */
	const char *why_not; /* runs == 0: the audit's reason, may be NULL */
};

/* Pick for a machine with `driver` (0 none) and `ngpus` GPUs among n
 * options: the index chosen, or -1 with *why (owned) saying for each option
 * why not ("cu128: the driver reports CUDA 11.8; cu128 needs 12.8 (Linux
 * driver 570.26 or newer)").  OW_ENOMEM only. */
int ow_fleet_pick(int driver, size_t ngpus, const struct ow_fleet_option *opts, size_t n,
                  int *chosen, char **why);

#endif
