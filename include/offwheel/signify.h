/* signify.h - Ed25519 keys and signatures in OpenBSD signify's format, so
 * that a stock `signify-openbsd -V -p KEY.pub -m FILE` verifies what
 * offwheel signs.  Files are two lines: "untrusted comment: ..." and the
 * base64 of a fixed binary layout (the comment is not signed):
 *
 *   public key  "Ed" keynum[8] pk[32]
 *   secret key  "Ed" "BK" kdfrounds[4, big endian] salt[16] checksum[8]
 *               keynum[8] seed[32] pk[32]    (checksum: SHA-512(seed|pk)[0..8])
 *   signature   "Ed" keynum[8] sig[64]      (Ed25519 over the file's bytes)
 *
 * Secret keys are written unencrypted (kdfrounds 0, as `signify -G -n`);
 * encrypted ones are refused with a message.  The key id is the keynum in hex. */
#ifndef OW_SIGNIFY_H
#define OW_SIGNIFY_H

#include <stddef.h>
#include <stdint.h>

#include "offwheel/common.h"

#define OW_KEYNUM_LEN 8
#define OW_KEYID_HEX 17 /* 16 hex digits + NUL */
#define OW_SIGNIFY_MAX_FILE 4096

struct ow_signify_pub {
	uint8_t keynum[OW_KEYNUM_LEN];
	uint8_t pk[OW_ED25519_PUB];
};

struct ow_signify_sec {
	uint8_t keynum[OW_KEYNUM_LEN];
	uint8_t seed[OW_ED25519_SEED];
	uint8_t pk[OW_ED25519_PUB];
};

void ow_signify_keyid(const uint8_t keynum[OW_KEYNUM_LEN], char hex[OW_KEYID_HEX]);
/* A fresh key pair with a random keynum. */
int ow_signify_keygen(struct ow_signify_sec *sec, struct ow_signify_pub *pub);
void ow_signify_pub_of(const struct ow_signify_sec *sec, struct ow_signify_pub *pub);

/* The file texts (NUL-terminated into out). */
int ow_signify_pub_text(const struct ow_signify_pub *pub, char *out, size_t n);
int ow_signify_sec_text(const struct ow_signify_sec *sec, char *out, size_t n);
/* Parse key files strictly (exact two lines, nothing after); OW_EPARSE or
 * OW_EUNSUPPORTED (encrypted secret key) with a detail. */
int ow_signify_pub_parse(const char *text, size_t len, struct ow_signify_pub *out);
int ow_signify_sec_parse(const char *text, size_t len, struct ow_signify_sec *out);

/* Sign msg; the signature file text goes to out. */
int ow_signify_sign(const struct ow_signify_sec *sec, const void *msg, size_t len, char *out,
                    size_t n);
/* Check a signature file text against msg: OW_ESIG with a detail naming the
 * cause (malformed, trailing data, signed by another key, bad signature). */
int ow_signify_verify(const struct ow_signify_pub *pub, const void *msg, size_t len,
                      const char *sig, size_t siglen);

/* Load / write key files.  write: the secret key (mode 0600) and the public
 * key, each published atomically; refuses a secret key name ending ".pub"
 * (OW_EINVAL) and, unless `force`, to overwrite either file (OW_EEXIST). */
int ow_signify_load_pub(const char *path, struct ow_signify_pub *out);
int ow_signify_load_sec(const char *path, struct ow_signify_sec *out);
int ow_signify_write_keys(const char *sec_path, const char *pub_path,
                          const struct ow_signify_sec *sec, int force);
/* Read a small regular file (at most `max` bytes) into a malloc'd
 * NUL-terminated buffer; a directory or FIFO is an error, never waited on.
 * *buf is NULL on failure. */
int ow_read_small_file(const char *path, size_t max, char **buf, size_t *len);

#endif
