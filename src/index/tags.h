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
#include "offwheel/tags.h"

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

/* Priority of the best tag of the wheel for the target: 0 is the best
 * (cpXY-cpXY-newest platform), larger is worse, -1 means incompatible. */
int ow_tags_compatible(const struct ow_target *t, const struct ow_wheel_name *w);
/* The same for three compressed tag sets ("cp312", "abi3", "manylinux2014_x86_64"). */
int ow_tags_priority(const struct ow_target *t, const char *python, const char *abi,
                     const char *platform);

/* A target's tag order built once, for many lookups (the order of a macOS
 * target lists hundreds of platform tags: building it for every file of a
 * page costs more than the rest of a resolve). */
typedef struct ow_tagorder ow_tagorder;
ow_tagorder *ow_tagorder_new(const struct ow_target *t); /* NULL: out of memory */
int ow_tagorder_priority(const ow_tagorder *o, const char *python, const char *abi,
                         const char *platform);
void ow_tagorder_free(ow_tagorder *o);
/* The target's platform tags, best first (packaging.tags.platform_tags on
 * such a machine: manylinux_2_X down to the oldest with the legacy aliases,
 * then linux_ARCH; macOS versions and formats; the Windows tag): how many,
 * and the i-th (NULL past the end). */
size_t ow_tagorder_platforms(const ow_tagorder *o);
const char *ow_tagorder_platform(const ow_tagorder *o, size_t i);

#endif
