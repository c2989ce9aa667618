/* tags.h - wheel filenames, install targets and tag compatibility.
 *
 * A wheel filename is {name}-{version}(-{build})?-{python}-{abi}-{platform}.whl
 * (binary distribution format spec); each tag part may be a compressed set
 * joined by '.' ("py2.py3", "manylinux_2_17_x86_64.manylinux2014_x86_64").
 *
 * A target is the machine the wheels are for: a CPython version (optionally
 * free-threaded) and a platform.  Compatibility follows pip's tag order
 * (packaging.tags.sys_tags for CPython), computed for the target, never for
 * the host. */
#ifndef OW_TAGS_H
#define OW_TAGS_H

#include <stdbool.h>
#include <stddef.h>

#include "pep440.h"

#define OW_NAME_MAX 128     /* project name + NUL */
#define OW_FILENAME_MAX 255 /* longest wheel filename accepted */
#define OW_TAGSET_MAX 128   /* one compressed tag set + NUL */
#define OW_BUILD_MAX 32     /* build tag + NUL */

/* PEP 503 normalization: lowercase, runs of '-', '_', '.' become '-'.
 * Only [A-Za-z0-9._-] is accepted, starting and ending with a letter or
 * digit; OW_EPARSE otherwise, OW_ETOOBIG when it does not fit. */
int ow_name_normalize(const char *name, size_t len, char *out, size_t cap);

struct ow_wheel_name {
	char name[OW_NAME_MAX];                 /* normalized: "pytorch-triton" */
	char version_text[OW_VER_TEXT_MAX + 1]; /* as written: "2.7.0+cu128" */
	struct ow_version version;
	char build[OW_BUILD_MAX];     /* "" when there is none */
	char python[OW_TAGSET_MAX];   /* "cp312", "py2.py3" (lowercased) */
	char abi[OW_TAGSET_MAX];      /* "cp312", "cp313t", "abi3", "none" */
	char platform[OW_TAGSET_MAX]; /* "manylinux_2_28_x86_64", "any" */
};

/* Parse a wheel filename (a basename, never a path). */
int ow_wheel_name_parse(struct ow_wheel_name *w, const char *filename);
/* The same for bytes that may hold a NUL (rejected). */
int ow_wheel_name_parse_n(struct ow_wheel_name *w, const char *filename, size_t len);

enum ow_os { OW_OS_LINUX, OW_OS_WINDOWS, OW_OS_MACOS };

struct ow_target {
	int py_major, py_minor, py_patch; /* 3, 12, 0 */
	bool freethreaded;                /* "3.13t": abi cp313t, abi3t, never abi3 */
	enum ow_os os;
	char arch[16];                /* x86_64, aarch64 (Linux); amd64, arm64, win32 (Windows);
	                               * arm64, x86_64 (macOS) */
	int glibc_major, glibc_minor; /* Linux: newest manylinux_X_Y; 0.0 = linux_ARCH only */
	int macos_major, macos_minor; /* macOS: oldest system to support */
};

/* Default glibc for the shorthands linux-x86_64 and linux-aarch64:
 * 2.28 (manylinux_2_28), what PyTorch builds for since 2.6 and what RHEL 8,
 * Debian 10 and Ubuntu 18.10 and newer have. */
#define OW_TARGET_GLIBC_MAJOR 2
#define OW_TARGET_GLIBC_MINOR 28

/* python: "3.12", "3.13t", "3.12.4", "cp312", "cp313t".
 * platform: a pip platform tag (manylinux_2_28_x86_64, manylinux2014_aarch64,
 * linux_x86_64, win_amd64, win_arm64, macosx_11_0_arm64, macosx_10_15_x86_64)
 * or a shorthand: linux-x86_64, linux-aarch64 (manylinux_2_28_*),
 * windows-x86_64 / windows-amd64 (win_amd64), windows-arm64 (win_arm64),
 * macos-arm64 (macosx_11_0_arm64), macos-x86_64 (macosx_10_15_x86_64). */
int ow_target_parse(struct ow_target *t, const char *python, const char *platform);
/* "cp312-manylinux_2_28_x86_64", "cp313t-win_amd64", "cp312-macosx_11_0_arm64". */
int ow_target_describe(const struct ow_target *t, char *buf, size_t cap);

/* Priority of the best tag of the wheel for the target: 0 is the best
 * (cpXY-cpXY-newest platform), larger is worse, -1 means incompatible. */
int ow_tags_compatible(const struct ow_target *t, const struct ow_wheel_name *w);
/* The same for three compressed tag sets ("cp312", "abi3", "manylinux2014_x86_64"). */
int ow_tags_priority(const struct ow_target *t, const char *python, const char *abi,
                     const char *platform);

#endif
