/* tags.h - install targets: a CPython version and a platform.
 * Compatibility with a target follows pip's tag order for CPython,
 * computed for the target, never for the host. */
#ifndef OW_PUBLIC_TAGS_H
#define OW_PUBLIC_TAGS_H

#include <stdbool.h>
#include <stddef.h>

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

#endif
