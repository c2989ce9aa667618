/* common.h - sizes the public structs are built with.
 *
 * Text fields of the API's structs are fixed arrays, NUL-terminated; these
 * are their sizes (the library refuses longer input with OW_ETOOBIG or
 * OW_EPARSE, so a field never holds a truncated value). */
#ifndef OW_COMMON_H
#define OW_COMMON_H

/* A SHA-256 as 64 lowercase hex digits + NUL. */
#define OW_SHA256_HEX 65
/* Ed25519 key sizes (a secret key is its 32-byte seed). */
#define OW_ED25519_SEED 32
#define OW_ED25519_PUB 32
/* A normalized project name ("pytorch-triton") + NUL. */
#define OW_NAME_MAX 128
/* The longest wheel filename accepted (without the NUL). */
#define OW_FILENAME_MAX 255
/* A path as Linux bounds it (PATH_MAX of <linux/limits.h>, with its NUL);
 * spelled here so that a public header compiles without feature macros. */
#define OW_PATH_MAX 4096
/* The longest version text accepted (without the NUL). */
#define OW_VER_TEXT_MAX 128
/* A variant folder name ("cu128", "rocm6.4", "cpu") + NUL: a longer
 * --variant is refused. */
#define OW_VARIANT_MAX 64

#endif
