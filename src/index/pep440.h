/* pep440.h - PEP 440 versions and version specifiers.
 *
 * A version is parsed into a fixed-size struct (no heap): epoch, release
 * numbers, pre/post/dev parts and the local label.  Alternative spellings
 * ("1.0-alpha.1", "1.0c1", "1.0-1", "v1.0", "1.0.DEV") are accepted and
 * normalized as the spec says.  Inputs are bounded: a text or a canonical
 * form over OW_VER_TEXT_MAX, more than OW_VER_RELEASE_MAX release numbers,
 * or a number above OW_VER_NUM_MAX is rejected with OW_EPARSE. */
#ifndef OW_PEP440_H
#define OW_PEP440_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "offwheel/common.h"

#define OW_VER_RELEASE_MAX 16                       /* release numbers, "1.2.3" = 3 */
#define OW_VER_LOCAL_MAX 64                         /* normalized local label + NUL */
#define OW_VER_NUM_MAX UINT64_C(999999999999999999) /* 18 digits */
#define OW_SPEC_MAX 16                              /* specifiers in one set */

enum ow_pre_kind { OW_PRE_NONE = 0, OW_PRE_A, OW_PRE_B, OW_PRE_RC };

struct ow_version {
	uint64_t epoch;
	uint64_t release[OW_VER_RELEASE_MAX];
	size_t nrelease;
	enum ow_pre_kind pre;
	uint64_t pre_num;
	bool has_post;
	uint64_t post;
	bool has_dev;
	uint64_t dev;
	char local[OW_VER_LOCAL_MAX]; /* "cu128", "cpu.cxx11.abi"; "" when none */
};

/* Parse a version ("2.10.0.dev20251021+cu128").  Surrounding whitespace is
 * allowed, as the spec says. */
int ow_pep440_parse(struct ow_version *v, const char *text);
/* The same for a text that is not NUL-terminated (e.g. part of a filename). */
int ow_pep440_parse_n(struct ow_version *v, const char *text, size_t len);
/* Canonical text ("1.0a0.post0.dev0+ubuntu.1").  OW_ETOOBIG if cap is short;
 * OW_VER_TEXT_MAX + 1 is always enough for a parsed version. */
int ow_pep440_format(const struct ow_version *v, char *buf, size_t cap);
/* Parse + format in one step. */
int ow_pep440_normalize(const char *text, char *buf, size_t cap);
/* <0, 0, >0 in PEP 440 order (trailing zeros ignored, dev < a < b < rc <
 * final < post, local labels after their public version). */
int ow_pep440_cmp(const struct ow_version *a, const struct ow_version *b);
/* dst = src without its local label ("2.7.0+cu128" -> "2.7.0"). */
void ow_pep440_public(struct ow_version *dst, const struct ow_version *src);
/* A pre-release is one with a pre or a dev part. */
bool ow_pep440_is_prerelease(const struct ow_version *v);

/* ---- specifiers ------------------------------------------------------- */

enum ow_spec_op {
	OW_OP_EQ,         /* == */
	OW_OP_NE,         /* != */
	OW_OP_LE,         /* <= */
	OW_OP_GE,         /* >= */
	OW_OP_LT,         /* <  */
	OW_OP_GT,         /* >  */
	OW_OP_COMPATIBLE, /* ~= */
	OW_OP_ARBITRARY   /* === */
};

struct ow_spec {
	enum ow_spec_op op;
	bool wildcard;              /* "==2.10.*": only epoch + release are set */
	struct ow_version version;  /* unused for === */
	char text[OW_VER_TEXT_MAX]; /* the version as written (=== compares it) */
};

struct ow_specset {
	size_t n;
	struct ow_spec specs[OW_SPEC_MAX];
};

/* Parse a comma-separated set (">=2.0,<3", "==2.10.0.*", ""; spaces allowed). */
int ow_spec_parse(struct ow_specset *set, const char *text);
int ow_spec_parse_n(struct ow_specset *set, const char *text, size_t len);
/* Canonical text of the set (">=2.0,<3"), specifiers joined by ','. */
int ow_spec_format(const struct ow_specset *set, char *buf, size_t cap);
/* Whether every specifier admits v.  Pre-releases are admitted only if
 * allow_prereleases is set or a specifier names a pre-release itself. */
bool ow_spec_contains(const struct ow_specset *set, const struct ow_version *v,
                      bool allow_prereleases);
/* One specifier, without the pre-release filter. */
bool ow_spec_match(const struct ow_spec *spec, const struct ow_version *v);

#endif
