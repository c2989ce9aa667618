/* targetopts.h - the options that say which machines the wheels are for and
 * which set to pick (resolve, sync, fetch, export): --python, --platform,
 * --date, --version, --no-deps, --pre, --allow-sdist, --pair. */
#ifndef OW_TARGETOPTS_H
#define OW_TARGETOPTS_H

#include <stddef.h>

#include "cli.h"
#include "indexopts.h"
#include "offwheel/tags.h"

enum { TGT_PYTHON = 340, TGT_PLATFORM, TGT_DATE, TGT_VERSION, TGT_NO_DEPS, TGT_PRE, TGT_DEVICE,
       TGT_DRIVER, TGT_PAIR, TGT_ALLOW_SDIST };

#define CLI_TARGET_OPTS                                                                          \
	{"python", TGT_PYTHON, required_argument, "LIST",                                        \
	 "target Pythons: 3.11,3.12,3.13t or cp312 (default: the host's python3)"},              \
	{"platform", TGT_PLATFORM, required_argument, "LIST",                                    \
	 "target platforms: linux-x86_64, linux-aarch64, windows-x86_64, macos-arm64 or pip "    \
	 "tags such as manylinux_2_28_x86_64, win_amd64 (default: the host)"},                   \
	{"date", TGT_DATE, required_argument, "YYYYMMDD", "the nightly torch of that date"},     \
	{"version", TGT_VERSION, required_argument, "V",                                         \
	 "the torch of that version (2.9.1; local labels ignored)"},                             \
	{"no-deps", TGT_NO_DEPS, no_argument, NULL, "only the sets, not their dependencies"},    \
	{"pre", TGT_PRE, no_argument, NULL, "allow pre-releases of dependencies"},               \
	{"allow-sdist", TGT_ALLOW_SDIST, no_argument, NULL,                                      \
	 "a dependency with no wheel for a target ships as its sdist, with what building it "    \
	 "needs; the target builds it at install (pip's default; without it, only wheels)"},   \
	{"pair", TGT_PAIR, required_argument, "RULE",                                            \
	 "matched (default): the torchvision/torchaudio released for that torch (== pin); "      \
	 "newest: pip's rule, the newest whose pin admits it"},                                  \
	{"device", TGT_DEVICE, required_argument, "CC[,CC]",                                     \
	 "only sets whose torch runs on every compute capability named (12.0, sm_120; at most " \
	 "8); the verdicts are recorded per set (export refuses one that does not run)"},        \
	{"driver", TGT_DRIVER, required_argument, "X.Y",                                         \
	 "with --device: the target's driver, for PTX JIT (default: unknown)"}

struct cli_target_opts {
	struct cli_strlist pythons, platforms;
	const char *date, *version;
	int no_deps, pre, allow_sdist;
	int pair_newest;
	int device, driver; /* --device as 10*major+minor (the first), 0 when not given */
	int devices[CLI_MAX_DEVICES]; /* every --device, each once */
	size_t ndevices;
	/* filled by cli_target_opts_finish: pythons × platforms */
	struct ow_target *targets;
	size_t ntargets;
};

/* 0 handled, an exit code on a bad value, -1 when the key is not ours. */
int cli_target_opt(struct cli *c, struct cli_target_opts *o, int key, const char *arg);
/* Defaults (the host) and the parsed targets; 0 or an exit code. */
int cli_target_opts_finish(struct cli *c, struct cli_target_opts *o);
void cli_target_opts_dispose(struct cli_target_opts *o);

struct ow_resolve_opts;
struct ow_resolve_io;
/* The resolve options the index and target options say (resolve, sync). */
void cli_target_resolve_opts(struct ow_resolve_opts *ro, const struct cli_index_opts *idx,
                         const struct cli_target_opts *tgt, const struct ow_resolve_io *io);

/* --device CC[,CC]: the compute capabilities added to ccs[*n] (each once,
 * at most CLI_MAX_DEVICES); a usage error (exit 2) names a bad one. */
int cli_parse_devices(struct cli *c, const char *arg, int *ccs, size_t *n);

#endif
