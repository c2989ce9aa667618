/* signify.c - signify-format keys and signatures over digest.h's Ed25519. */
#include "offwheel/signify.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "offwheel/error.h"
#include "fsutil.h"
#include "digest.h"

#define COMMENT_PREFIX "untrusted comment: "
#define COMMENT_MAX 1024
#define PUB_LEN (2 + OW_KEYNUM_LEN + OW_ED25519_PUB)
#define SIG_LEN (2 + OW_KEYNUM_LEN + OW_ED25519_SIG)
#define SALT_LEN 16
#define CHECKSUM_LEN 8
#define SEC_LEN (2 + 2 + 4 + SALT_LEN + CHECKSUM_LEN + OW_KEYNUM_LEN + 64)

void ow_signify_keyid(const uint8_t keynum[OW_KEYNUM_LEN], char hex[OW_KEYID_HEX])
{
	ow_hex(keynum, OW_KEYNUM_LEN, hex);
}

void ow_signify_pub_of(const struct ow_signify_sec *sec, struct ow_signify_pub *pub)
{
	memcpy(pub->keynum, sec->keynum, OW_KEYNUM_LEN);
	memcpy(pub->pk, sec->pk, OW_ED25519_PUB);
}

int ow_signify_keygen(struct ow_signify_sec *sec, struct ow_signify_pub *pub)
{
	int rc = ow_random_bytes(sec->keynum, OW_KEYNUM_LEN);
	if (rc || (rc = ow_ed25519_keygen(sec->seed, sec->pk)))
		return rc;
	ow_signify_pub_of(sec, pub);
	return 0;
}

/* "untrusted comment: <comment>\n<base64>\n" */
static int file_text(const char *comment, const uint8_t *bin, size_t len, char *out, size_t n)
{
	char b64[4 * ((SEC_LEN + 2) / 3) + 1];
	int rc = ow_b64_encode(bin, len, b64, sizeof b64);
	if (rc)
		return rc;
	int w = snprintf(out, n, COMMENT_PREFIX "%s\n%s\n", comment, b64);
	return w < 0 || (size_t)w >= n ? ow_err(OW_ERANGE, "signify: buffer too small") : 0;
}

int ow_signify_pub_text(const struct ow_signify_pub *pub, char *out, size_t n)
{
	uint8_t bin[PUB_LEN] = {'E', 'd'};
	char id[OW_KEYID_HEX], comment[64];
	memcpy(bin + 2, pub->keynum, OW_KEYNUM_LEN);
	memcpy(bin + 2 + OW_KEYNUM_LEN, pub->pk, OW_ED25519_PUB);
	ow_signify_keyid(pub->keynum, id);
	snprintf(comment, sizeof comment, "offwheel public key %s", id);
	return file_text(comment, bin, sizeof bin, out, n);
}

static int sec_checksum(const struct ow_signify_sec *sec, uint8_t sum[CHECKSUM_LEN])
{
	uint8_t sk[64], h[OW_SHA512_LEN];
	memcpy(sk, sec->seed, 32);
	memcpy(sk + 32, sec->pk, 32);
	int rc = ow_sha512_buf(sk, sizeof sk, h);
	memcpy(sum, h, CHECKSUM_LEN);
	return rc;
}

int ow_signify_sec_text(const struct ow_signify_sec *sec, char *out, size_t n)
{
	uint8_t bin[SEC_LEN] = {'E', 'd', 'B', 'K', 0, 0, 0, 0}; /* kdfrounds 0 */
	uint8_t *p = bin + 8;
	int rc = ow_random_bytes(p, SALT_LEN);
	if (rc || (rc = sec_checksum(sec, p + SALT_LEN)))
		return rc;
	p += SALT_LEN + CHECKSUM_LEN;
	memcpy(p, sec->keynum, OW_KEYNUM_LEN);
	memcpy(p + OW_KEYNUM_LEN, sec->seed, 32);
	memcpy(p + OW_KEYNUM_LEN + 32, sec->pk, 32);
	char id[OW_KEYID_HEX], comment[64];
	ow_signify_keyid(sec->keynum, id);
	snprintf(comment, sizeof comment, "offwheel secret key %s", id);
	rc = file_text(comment, bin, sizeof bin, out, n);
	memset(bin, 0, sizeof bin);
	return rc;
}

/* Split the two lines strictly and decode the second into exactly `want` bytes. */
static int parse_file(const char *what, const char *text, size_t len, uint8_t *bin, size_t want)
{
	size_t pl = strlen(COMMENT_PREFIX);
	if (len < pl || memcmp(text, COMMENT_PREFIX, pl) != 0)
		return ow_err(OW_EPARSE, "%s: does not start with '" COMMENT_PREFIX "'", what);
	const char *nl = memchr(text, '\n', len);
	if (!nl || (size_t)(nl - text) > pl + COMMENT_MAX || memchr(text, '\0', (size_t)(nl - text)))
		return ow_err(OW_EPARSE, "%s: malformed comment line", what);
	const char *b = nl + 1, *end = text + len;
	const char *nl2 = memchr(b, '\n', (size_t)(end - b));
	if (!nl2)
		return ow_err(OW_EPARSE, "%s: the base64 line is missing or not terminated", what);
	if (nl2 + 1 != end)
		return ow_err(OW_EPARSE, "%s: trailing data after the signature/key line (%zu bytes)",
		              what, (size_t)(end - nl2 - 1));
	if (ow_b64_decode(b, (size_t)(nl2 - b), bin, want))
		return ow_err(OW_EPARSE, "%s: the key/signature line is not base64 of %zu bytes", what,
		              want);
	if (bin[0] != 'E' || bin[1] != 'd')
		return ow_err(OW_EPARSE, "%s: not an Ed25519 (\"Ed\") signify key or signature", what);
	return 0;
}

/* The key line decodes to `want` bytes of an Ed25519 key: the other kind of
 * key file was given (a secret key where the public one belongs, or back). */
static int is_key_of_size(const char *text, size_t len, size_t want)
{
	uint8_t bin[SEC_LEN];
	const char *nl = memchr(text, '\n', len), *end = text + len;
	if (!nl || want > sizeof bin)
		return 0;
	const char *b = nl + 1, *nl2 = memchr(b, '\n', (size_t)(end - b));
	int ok = nl2 && !ow_b64_decode(b, (size_t)(nl2 - b), bin, want) && bin[0] == 'E' &&
	         bin[1] == 'd';
	memset(bin, 0, sizeof bin);
	return ok;
}

int ow_signify_pub_parse(const char *text, size_t len, struct ow_signify_pub *out)
{
	uint8_t bin[PUB_LEN];
	int rc = parse_file("public key", text, len, bin, sizeof bin);
	if (rc && is_key_of_size(text, len, SEC_LEN))
		return ow_err(OW_EPARSE, "this is a secret key, not a public one — give its .pub "
		                         "(the secret key stays on the signing machine)");
	if (rc)
		return rc;
	memcpy(out->keynum, bin + 2, OW_KEYNUM_LEN);
	memcpy(out->pk, bin + 2 + OW_KEYNUM_LEN, OW_ED25519_PUB);
	return 0;
}

static int sec_check(const uint8_t *bin, struct ow_signify_sec *out)
{
	if (bin[2] != 'B' || bin[3] != 'K')
		return ow_err(OW_EPARSE, "secret key: unknown key derivation (not bcrypt_pbkdf)");
	if (bin[4] | bin[5] | bin[6] | bin[7])
		return ow_err(OW_EUNSUPPORTED, "secret key: protected by a passphrase, which offwheel "
		                               "does not read — make one with 'offwheel keygen' or "
		                               "'signify-openbsd -G -n'");
	const uint8_t *p = bin + 8 + SALT_LEN, *sum = p;
	p += CHECKSUM_LEN;
	memcpy(out->keynum, p, OW_KEYNUM_LEN);
	memcpy(out->seed, p + OW_KEYNUM_LEN, 32);
	memcpy(out->pk, p + OW_KEYNUM_LEN + 32, 32);
	uint8_t want[CHECKSUM_LEN], pk[OW_ED25519_PUB];
	int rc = sec_checksum(out, want);
	if (rc || (rc = ow_ed25519_public(out->seed, pk)))
		return rc;
	if (!ow_digest_eq(want, sum, CHECKSUM_LEN) || !ow_digest_eq(pk, out->pk, sizeof pk))
		return ow_err(OW_EPARSE, "secret key: checksum mismatch (corrupt key file)");
	return 0;
}

int ow_signify_sec_parse(const char *text, size_t len, struct ow_signify_sec *out)
{
	uint8_t bin[SEC_LEN];
	int rc = parse_file("secret key", text, len, bin, sizeof bin);
	if (rc && is_key_of_size(text, len, PUB_LEN))
		rc = ow_err(OW_EPARSE, "this is a public key — signing needs the secret key "
		                       "(the .sec that 'offwheel keygen' wrote beside it)");
	if (!rc)
		rc = sec_check(bin, out);
	memset(bin, 0, sizeof bin);
	return rc;
}

int ow_signify_sign(const struct ow_signify_sec *sec, const void *msg, size_t len, char *out,
                    size_t n)
{
	uint8_t bin[SIG_LEN] = {'E', 'd'};
	memcpy(bin + 2, sec->keynum, OW_KEYNUM_LEN);
	int rc = ow_ed25519_sign(sec->seed, msg, len, bin + 2 + OW_KEYNUM_LEN);
	if (rc)
		return rc;
	char id[OW_KEYID_HEX], comment[80];
	ow_signify_keyid(sec->keynum, id);
	snprintf(comment, sizeof comment, "verify with offwheel public key %s", id);
	return file_text(comment, bin, sizeof bin, out, n);
}

int ow_signify_verify(const struct ow_signify_pub *pub, const void *msg, size_t len,
                      const char *sig, size_t siglen)
{
	uint8_t bin[SIG_LEN];
	if (parse_file("signature", sig, siglen, bin, sizeof bin)) {
		char why[320];
		snprintf(why, sizeof why, "%s", ow_err_detail());
		return ow_err(OW_ESIG, "%s", why);
	}
	if (!ow_digest_eq(bin + 2, pub->keynum, OW_KEYNUM_LEN)) {
		char got[OW_KEYID_HEX], want[OW_KEYID_HEX];
		ow_signify_keyid(bin + 2, got);
		ow_signify_keyid(pub->keynum, want);
		return ow_err(OW_ESIG, "signature: made by unknown key %s, not by the trusted key %s",
		              got, want);
	}
	if (ow_ed25519_verify(pub->pk, msg, len, bin + 2 + OW_KEYNUM_LEN))
		return ow_err(OW_ESIG, "signature: bad signature (the signed file was changed or the "
		                       "signature is forged)");
	return 0;
}

int ow_read_small_file(const char *path, size_t max, char **buf, size_t *len)
{
	*buf = NULL;
	*len = 0;
	/* O_NONBLOCK: a FIFO in the key's place must not hang the command */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return ow_err(errno == ENOENT ? OW_ENOENT : OW_EIO, "%s: cannot open: %s", path,
		              strerror(errno));
	struct stat st = {0};
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		int e = errno;
		close(fd);
		return S_ISDIR(st.st_mode) ? ow_err(OW_EIO, "%s: is a directory, not a file", path)
		       : ow_err(OW_EIO, "%s: not a regular file (%s)", path,
		                S_ISFIFO(st.st_mode) ? "a FIFO" : strerror(e));
	}
	char *b = malloc(max + 1);
	size_t got = 0;
	ssize_t r = 1;
	while (b && got <= max && (r = read(fd, b + got, max + 1 - got)) != 0) {
		if (r < 0 && errno != EINTR)
			break;
		got += r > 0 ? (size_t)r : 0;
	}
	close(fd);
	if (!b || r < 0 || got > max) {
		free(b);
		return !b ? ow_err(OW_ENOMEM, "%s: out of memory", path)
		          : r < 0 ? ow_err(OW_EIO, "%s: read failed", path)
		                  : ow_err(OW_ETOOBIG, "%s: larger than %zu bytes", path, max);
	}
	b[got] = '\0';
	*buf = b;
	*len = got;
	return 0;
}

int ow_signify_load_pub(const char *path, struct ow_signify_pub *out)
{
	char *t = NULL;
	size_t n = 0;
	int rc = ow_read_small_file(path, OW_SIGNIFY_MAX_FILE, &t, &n);
	if (!rc && (rc = ow_signify_pub_parse(t, n, out)))
		ow_err_prefix(rc, "%s: ", path);
	free(t);
	return rc;
}

int ow_signify_load_sec(const char *path, struct ow_signify_sec *out)
{
	char *t = NULL;
	size_t n = 0;
	int rc = ow_read_small_file(path, OW_SIGNIFY_MAX_FILE, &t, &n);
	if (!rc && (rc = ow_signify_sec_parse(t, n, out)))
		ow_err_prefix(rc, "%s: ", path);
	if (t)
		memset(t, 0, n);
	free(t);
	return rc;
}

static int write_key(const char *path, const char *text, mode_t mode)
{
	char dir[4096];
	struct ow_tmp t;
	int rc = ow_dirname(dir, sizeof dir, path);
	if (rc || (rc = ow_tmp_create(dir, ".owkey-", &t)))
		return rc;
	if (fchmod(t.fd, mode) != 0) {
		ow_tmp_discard(&t);
		return ow_err(OW_EIO, "%s: chmod: %s", path, strerror(errno));
	}
	if ((rc = ow_write_all(t.fd, text, strlen(text)))) {
		ow_tmp_discard(&t);
		return rc;
	}
	return ow_tmp_publish(&t, path);
}

int ow_signify_write_keys(const char *sec_path, const char *pub_path,
                          const struct ow_signify_sec *sec, int force)
{
	struct stat st;
	size_t l = strlen(sec_path);
	if (l >= 4 && !strcmp(sec_path + l - 4, ".pub"))
		return ow_err(OW_EINVAL, "%s: a secret key named '.pub' would be handed out as the "
		                         "public key — name it KEY.sec (the public key becomes KEY.pub)",
		              sec_path);
	if (!strcmp(sec_path, pub_path))
		return ow_err(OW_EINVAL, "%s: the secret and the public key need different names",
		              sec_path);
	if (!force && (lstat(sec_path, &st) == 0 || lstat(pub_path, &st) == 0))
		return ow_err(OW_EEXIST, "%s: a key file already exists — pick another name, or give "
		                         "--force to replace it (exports signed with the old key then "
		                         "need the new public key)",
		              lstat(sec_path, &st) == 0 ? sec_path : pub_path);
	char sec_text[512], pub_text[512];
	struct ow_signify_pub pub;
	ow_signify_pub_of(sec, &pub);
	int rc = ow_signify_sec_text(sec, sec_text, sizeof sec_text);
	if (!rc)
		rc = ow_signify_pub_text(&pub, pub_text, sizeof pub_text);
	if (!rc)
		rc = write_key(sec_path, sec_text, 0600);
	memset(sec_text, 0, sizeof sec_text);
	return rc ? rc : write_key(pub_path, pub_text, 0644);
}
