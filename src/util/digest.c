/* digest.c - OpenSSL EVP streaming SHA-256 and helpers. */
#include "digest.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bytes.h"
#include "offwheel/error.h"

#define OW_READ_CHUNK (1u << 20)

struct ow_sha256 {
	EVP_MD_CTX *ctx;
};

int ow_sha256_new(ow_sha256 **out)
{
	ow_sha256 *h = calloc(1, sizeof *h);
	if (!h)
		return ow_err(OW_ENOMEM, "sha256: out of memory");
	h->ctx = EVP_MD_CTX_new();
	if (!h->ctx || EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) != 1) {
		ow_sha256_free(h);
		return ow_err(OW_EINTERNAL, "sha256: OpenSSL could not initialise SHA-256");
	}
	*out = h;
	return 0;
}

int ow_sha256_update(ow_sha256 *h, const void *data, size_t len)
{
	if (len && EVP_DigestUpdate(h->ctx, data, len) != 1)
		return ow_err(OW_EINTERNAL, "sha256: update failed");
	return 0;
}

int ow_sha256_final(ow_sha256 *h, uint8_t out[OW_SHA256_LEN])
{
	unsigned int n = 0;
	if (EVP_DigestFinal_ex(h->ctx, out, &n) != 1 || n != OW_SHA256_LEN)
		return ow_err(OW_EINTERNAL, "sha256: final failed");
	return 0;
}

int ow_sha256_reset(ow_sha256 *h)
{
	if (EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) != 1)
		return ow_err(OW_EINTERNAL, "sha256: reset failed");
	return 0;
}

int ow_sha256_copy(ow_sha256 *dst, const ow_sha256 *src)
{
	if (EVP_MD_CTX_copy_ex(dst->ctx, src->ctx) != 1)
		return ow_err(OW_EINTERNAL, "sha256: copy failed");
	return 0;
}

void ow_sha256_free(ow_sha256 *h)
{
	if (!h)
		return;
	EVP_MD_CTX_free(h->ctx);
	free(h);
}

int ow_sha256_buf(const void *data, size_t len, uint8_t out[OW_SHA256_LEN])
{
	unsigned int n = 0;
	if (EVP_Digest(data, len, out, &n, EVP_sha256(), NULL) != 1)
		return ow_err(OW_EINTERNAL, "sha256: digest failed");
	return 0;
}

int ow_sha256_fd(int fd, uint8_t out[OW_SHA256_LEN], uint64_t *size)
{
	ow_sha256 *h;
	int rc = ow_sha256_new(&h);
	if (rc)
		return rc;
	uint8_t *buf = malloc(OW_READ_CHUNK);
	if (!buf) {
		ow_sha256_free(h);
		return ow_err(OW_ENOMEM, "sha256: out of memory");
	}
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	uint64_t total = 0;
	for (;;) {
		ssize_t n = read(fd, buf, OW_READ_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = ow_err(OW_EIO, "read failed: %s", strerror(errno));
			break;
		}
		if (n == 0) {
			rc = ow_sha256_final(h, out);
			break;
		}
		total += (uint64_t)n;
		if ((rc = ow_sha256_update(h, buf, (size_t)n)))
			break;
	}
	free(buf);
	ow_sha256_free(h);
	if (!rc && size)
		*size = total;
	return rc;
}

int ow_digest_eq(const void *a, const void *b, size_t len)
{
	return CRYPTO_memcmp(a, b, len) == 0;
}

int ow_b64url_nopad(const uint8_t *d, size_t len, char *out, size_t outsz)
{
	static const char tab[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	size_t need = (len * 4 + 2) / 3 + 1, o = 0;
	if (outsz < need)
		return ow_err(OW_ERANGE, "base64: output buffer too small");
	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)d[i] << 16;
		size_t rem = len - i;
		if (rem > 1)
			v |= (uint32_t)d[i + 1] << 8;
		if (rem > 2)
			v |= d[i + 2];
		out[o++] = tab[(v >> 18) & 63];
		out[o++] = tab[(v >> 12) & 63];
		if (rem > 1)
			out[o++] = tab[(v >> 6) & 63];
		if (rem > 2)
			out[o++] = tab[v & 63];
	}
	out[o] = '\0';
	return 0;
}

int ow_sha512_buf(const void *data, size_t len, uint8_t out[OW_SHA512_LEN])
{
	unsigned int n = 0;
	if (EVP_Digest(data, len, out, &n, EVP_sha512(), NULL) != 1 || n != OW_SHA512_LEN)
		return ow_err(OW_EINTERNAL, "sha512: digest failed");
	return 0;
}

int ow_random_bytes(void *buf, size_t len)
{
	if (len > INT_MAX || RAND_bytes(buf, (int)len) != 1)
		return ow_err(OW_EINTERNAL, "random: OpenSSL could not produce random bytes");
	return 0;
}

int ow_b64_encode(const uint8_t *d, size_t len, char *out, size_t outsz)
{
	if (len > INT_MAX / 2 || outsz < 4 * ((len + 2) / 3) + 1)
		return ow_err(OW_ERANGE, "base64: output buffer too small");
	EVP_EncodeBlock((unsigned char *)out, d, (int)len);
	return 0;
}

/* EVP_DecodeBlock accepts whitespace and returns padded lengths: check the
 * shape first, then compare by re-encoding (canonical form only). */
int ow_b64_decode(const char *text, size_t text_len, uint8_t *out, size_t want)
{
	size_t enc = 4 * ((want + 2) / 3);
	if (text_len != enc || want > 4096)
		return ow_err(OW_EPARSE, "base64: %zu characters where %zu were expected", text_len, enc);
	uint8_t tmp[4096 + 3];
	char back[4 * ((4096 + 2) / 3) + 1];
	if (EVP_DecodeBlock(tmp, (const unsigned char *)text, (int)text_len) < (int)want)
		return ow_err(OW_EPARSE, "base64: not valid base64");
	EVP_EncodeBlock((unsigned char *)back, tmp, (int)want);
	if (memcmp(back, text, text_len) != 0)
		return ow_err(OW_EPARSE, "base64: not canonical base64");
	memcpy(out, tmp, want);
	return 0;
}

static EVP_PKEY *ed25519_private(const uint8_t seed[OW_ED25519_SEED])
{
	return EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, OW_ED25519_SEED);
}

int ow_ed25519_public(const uint8_t seed[OW_ED25519_SEED], uint8_t pub[OW_ED25519_PUB])
{
	EVP_PKEY *k = ed25519_private(seed);
	size_t n = OW_ED25519_PUB;
	int ok = k && EVP_PKEY_get_raw_public_key(k, pub, &n) == 1 && n == OW_ED25519_PUB;
	EVP_PKEY_free(k);
	return ok ? 0 : ow_err(OW_EINTERNAL, "ed25519: OpenSSL could not derive the public key");
}

int ow_ed25519_keygen(uint8_t seed[OW_ED25519_SEED], uint8_t pub[OW_ED25519_PUB])
{
	int rc = ow_random_bytes(seed, OW_ED25519_SEED);
	return rc ? rc : ow_ed25519_public(seed, pub);
}

int ow_ed25519_sign(const uint8_t seed[OW_ED25519_SEED], const void *msg, size_t len,
                    uint8_t sig[OW_ED25519_SIG])
{
	EVP_PKEY *k = ed25519_private(seed);
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	size_t n = OW_ED25519_SIG;
	int ok = k && ctx && EVP_DigestSignInit(ctx, NULL, NULL, NULL, k) == 1 &&
	         EVP_DigestSign(ctx, sig, &n, msg, len) == 1 && n == OW_ED25519_SIG;
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(k);
	return ok ? 0 : ow_err(OW_EINTERNAL, "ed25519: OpenSSL could not sign");
}

int ow_ed25519_verify(const uint8_t pub[OW_ED25519_PUB], const void *msg, size_t len,
                      const uint8_t sig[OW_ED25519_SIG])
{
	EVP_PKEY *k = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pub, OW_ED25519_PUB);
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int ok = k && ctx && EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, k) == 1 &&
	         EVP_DigestVerify(ctx, sig, OW_ED25519_SIG, msg, len) == 1;
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(k);
	return ok ? 0 : ow_err(OW_ESIG, "ed25519: the signature does not verify");
}
