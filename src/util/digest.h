/* digest.h - hashing and signatures (the only module that includes OpenSSL).
 * Streaming SHA-256 with hex / urlsafe-base64 output, constant-time compare,
 * and Ed25519 keys, signing and verification. */
#ifndef OW_DIGEST_H
#define OW_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#include "hex.h"
#include "offwheel/common.h"

typedef struct ow_sha256 ow_sha256;

int ow_sha256_new(ow_sha256 **out);
int ow_sha256_update(ow_sha256 *h, const void *data, size_t len);
/* Finish; `h` may be reused after ow_sha256_reset. */
int ow_sha256_final(ow_sha256 *h, uint8_t out[OW_SHA256_LEN]);
int ow_sha256_reset(ow_sha256 *h);
/* Copy the running state of `src` into `dst` (both allocated). */
int ow_sha256_copy(ow_sha256 *dst, const ow_sha256 *src);
void ow_sha256_free(ow_sha256 *h);

/* One-shot over a buffer. */
int ow_sha256_buf(const void *data, size_t len, uint8_t out[OW_SHA256_LEN]);
/* Hash a whole open file descriptor from its current offset to EOF with
 * large sequential reads; *size gets the byte count (may be NULL). */
int ow_sha256_fd(int fd, uint8_t out[OW_SHA256_LEN], uint64_t *size);

/* Constant-time equality of two byte strings of equal length. */
int ow_digest_eq(const void *a, const void *b, size_t len);
/* RECORD-style "sha256=<urlsafe b64, no padding>" digest text. */
int ow_b64url_nopad(const uint8_t *d, size_t len, char *out, size_t outsz);

/* SHA-512 of a buffer (signify's secret-key checksum). */
#define OW_SHA512_LEN 64
int ow_sha512_buf(const void *data, size_t len, uint8_t out[OW_SHA512_LEN]);
/* Cryptographically strong random bytes. */
int ow_random_bytes(void *buf, size_t len);
/* Standard base64 with padding: encode into out (NUL-terminated; needs
 * 4*ceil(len/3)+1 bytes); decode refuses anything but canonical base64 of
 * exactly `want` bytes (OW_EPARSE). */
int ow_b64_encode(const uint8_t *d, size_t len, char *out, size_t outsz);
int ow_b64_decode(const char *text, size_t text_len, uint8_t *out, size_t want);

/* Ed25519 (RFC 8032, pure).  A secret key is its 32-byte seed. */
#define OW_ED25519_SIG 64
int ow_ed25519_keygen(uint8_t seed[OW_ED25519_SEED], uint8_t pub[OW_ED25519_PUB]);
int ow_ed25519_public(const uint8_t seed[OW_ED25519_SEED], uint8_t pub[OW_ED25519_PUB]);
int ow_ed25519_sign(const uint8_t seed[OW_ED25519_SEED], const void *msg, size_t len,
                    uint8_t sig[OW_ED25519_SIG]);
/* 0 when `sig` is a valid signature of msg by pub; OW_ESIG otherwise. */
int ow_ed25519_verify(const uint8_t pub[OW_ED25519_PUB], const void *msg, size_t len,
                      const uint8_t sig[OW_ED25519_SIG]);

#endif
