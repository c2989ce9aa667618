/* test_signify.c - Ed25519 (RFC 8032 vectors) and the signify file format:
 * round trips, strict parsing, the refusals check relies on; the export
 * path checks. */
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

#include "digest.h"
#include "offwheel/error.h"
#include "exportint.h"
#include "offwheel/signify.h"

static void unhex(const char *h, uint8_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		sscanf(h + 2 * i, "%2x", &v);
		out[i] = (uint8_t)v;
	}
}

/* RFC 8032 §7.1 tests 1 and 2. */
static void test_rfc8032_vectors(void **state)
{
	(void)state;
	static const struct { const char *sk, *pk, *msg, *sig; } v[] = {
	    {"9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
	     "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
	     "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"},
	    {"4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
	     "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
	     "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"},
	};
	for (size_t i = 0; i < 2; i++) {
		uint8_t sk[32], pk[32], want_pk[32], sig[64], want_sig[64], msg[1];
		size_t mlen = strlen(v[i].msg) / 2;
		unhex(v[i].sk, sk, 32);
		unhex(v[i].pk, want_pk, 32);
		unhex(v[i].sig, want_sig, 64);
		unhex(v[i].msg, msg, mlen);
		assert_int_equal(ow_ed25519_public(sk, pk), 0);
		assert_memory_equal(pk, want_pk, 32);
		assert_int_equal(ow_ed25519_sign(sk, msg, mlen, sig), 0);
		assert_memory_equal(sig, want_sig, 64);
		assert_int_equal(ow_ed25519_verify(pk, msg, mlen, sig), 0);
		sig[5] ^= 1;
		assert_int_equal(ow_ed25519_verify(pk, msg, mlen, sig), OW_ESIG);
	}
}

static void test_roundtrip_and_refusals(void **state)
{
	(void)state;
	struct ow_signify_sec sec, sec2;
	struct ow_signify_pub pub, pub2, other;
	char text[512], sig[512], bad[600];
	assert_int_equal(ow_signify_keygen(&sec, &pub), 0);
	assert_int_equal(ow_signify_sec_text(&sec, text, sizeof text), 0);
	assert_int_equal(ow_signify_sec_parse(text, strlen(text), &sec2), 0);
	assert_memory_equal(&sec, &sec2, sizeof sec);
	assert_int_equal(ow_signify_pub_text(&pub, text, sizeof text), 0);
	assert_int_equal(ow_signify_pub_parse(text, strlen(text), &pub2), 0);
	assert_memory_equal(&pub, &pub2, sizeof pub);
	const char msg[] = "abc  wheels/x.whl\n";
	assert_int_equal(ow_signify_sign(&sec, msg, strlen(msg), sig, sizeof sig), 0);
	assert_int_equal(ow_signify_verify(&pub, msg, strlen(msg), sig, strlen(sig)), 0);
	/* changed message */
	assert_int_equal(ow_signify_verify(&pub, "abd", 3, sig, strlen(sig)), OW_ESIG);
	assert_non_null(strstr(ow_err_detail(), "bad signature"));
	/* trailing data, missing newline, no comment */
	snprintf(bad, sizeof bad, "%sx\n", sig);
	assert_int_equal(ow_signify_verify(&pub, msg, strlen(msg), bad, strlen(bad)), OW_ESIG);
	assert_non_null(strstr(ow_err_detail(), "trailing data"));
	assert_int_equal(ow_signify_verify(&pub, msg, strlen(msg), sig, strlen(sig) - 1), OW_ESIG);
	assert_int_equal(ow_signify_verify(&pub, msg, strlen(msg), sig + 1, strlen(sig) - 1), OW_ESIG);
	/* another key */
	assert_int_equal(ow_signify_keygen(&sec2, &other), 0);
	assert_int_equal(ow_signify_verify(&other, msg, strlen(msg), sig, strlen(sig)), OW_ESIG);
	assert_non_null(strstr(ow_err_detail(), "unknown key"));
	/* a passphrase-protected secret key (kdfrounds 42) is refused */
	char *nl = strchr(text, '\n');
	(void)nl;
	assert_int_equal(ow_signify_sec_text(&sec, text, sizeof text), 0);
	char *b64 = strchr(text, '\n') + 1;
	uint8_t raw[104];
	assert_int_equal(ow_b64_decode(b64, strlen(b64) - 1, raw, sizeof raw), 0);
	raw[7] = 42;
	char enc[200];
	assert_int_equal(ow_b64_encode(raw, sizeof raw, enc, sizeof enc), 0);
	snprintf(bad, sizeof bad, "untrusted comment: x\n%s\n", enc);
	assert_int_equal(ow_signify_sec_parse(bad, strlen(bad), &sec2), OW_EUNSUPPORTED);
}

static void test_manifest_paths(void **state)
{
	(void)state;
	static const struct { const char *p; int bad; } v[] = {
	    {"wheels/torch-2.10.0+cpu-cp311-cp311-linux_x86_64.whl", 0}, {"simple/torch/index.html", 0},
	    {"../x", 1}, {"a/../b", 1}, {"/etc/passwd", 1}, {"a\\b", 1}, {"a//b", 1}, {"./a", 1},
	    {"", 1}, {"a/", 1}, {"c:x", 1}, {"a\nb", 1},
	};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
		assert_int_equal(ex_path_problem(v[i].p) != NULL, v[i].bad);
	struct ex_files f = {0};
	const char *other = NULL;
	ex_files_add(&f, "wheels/Torch.whl", 1, NULL);
	ex_files_add(&f, "wheels/a.whl", 1, NULL);
	assert_null(ex_files_case_clash(&f, &other));
	ex_files_add(&f, "wheels/torch.whl", 1, NULL);
	assert_non_null(ex_files_case_clash(&f, &other));
	ex_files_dispose(&f);
}

static void test_sums_parse(void **state)
{
	(void)state;
	struct ex_files f = {0};
	char ok[200];
	snprintf(ok, sizeof ok, "%064d  manifest.json\n%064d *wheels/a b.whl\n", 0, 1);
	assert_int_equal(ex_parse_sums(ok, strlen(ok), &f), 0);
	assert_int_equal(f.n, 2);
	assert_string_equal(f.v[1].path, "wheels/a b.whl");
	ex_files_dispose(&f);
	assert_int_equal(ex_parse_sums(ok, strlen(ok) - 1, &f), OW_EPARSE); /* unterminated */
	ex_files_dispose(&f);
	assert_int_equal(ex_parse_sums("xyz  a\n", 7, &f), OW_EPARSE);
	ex_files_dispose(&f);
}

/* Unreadable key files are errors naming the path, never a crash or a hang. */
static void test_key_files_unreadable(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp(), p[4200];
	struct ow_signify_pub pub;
	struct ow_signify_sec sec;
	static const char *const names[] = {"missing.pub", "adir", "fifo", "empty"};
	snprintf(p, sizeof p, "%s/adir", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof p, "%s/fifo", dir);
	assert_int_equal(mkfifo(p, 0644), 0);
	snprintf(p, sizeof p, "%s/empty", dir);
	assert_int_equal(tu_write_file(p, "", 0), 0);
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		snprintf(p, sizeof p, "%s/%s", dir, names[i]);
		assert_int_not_equal(ow_signify_load_pub(p, &pub), 0);
		assert_non_null(strstr(ow_err_detail(), p));
		assert_int_not_equal(ow_signify_load_sec(p, &sec), 0);
		assert_non_null(strstr(ow_err_detail(), p));
	}
	snprintf(p, sizeof p, "%s/adir", dir);
	ow_signify_load_pub(p, &pub);
	assert_non_null(strstr(ow_err_detail(), "is a directory"));
	tu_rmtree(dir);
	free(dir);
}

/* keygen's rules: no secret key named .pub, no overwrite without force. */
static void test_write_keys_refusals(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp(), s1[4200], p1[4200];
	struct ow_signify_sec sec;
	struct ow_signify_pub pub;
	assert_int_equal(ow_signify_keygen(&sec, &pub), 0);
	snprintf(s1, sizeof s1, "%s/lab.pub", dir);
	snprintf(p1, sizeof p1, "%s/lab.pub.pub", dir);
	assert_int_equal(ow_signify_write_keys(s1, p1, &sec, 0), OW_EINVAL);
	assert_int_equal(ow_signify_write_keys(s1, p1, &sec, 1), OW_EINVAL);
	assert_int_not_equal(access(s1, F_OK), 0);
	snprintf(s1, sizeof s1, "%s/lab.sec", dir);
	snprintf(p1, sizeof p1, "%s/lab.pub", dir);
	assert_int_equal(ow_signify_write_keys(s1, p1, &sec, 0), 0);
	assert_int_equal(ow_signify_write_keys(s1, p1, &sec, 0), OW_EEXIST);
	assert_non_null(strstr(ow_err_detail(), "--force"));
	struct ow_signify_sec sec2;
	assert_int_equal(ow_signify_keygen(&sec2, &pub), 0);
	assert_int_equal(ow_signify_write_keys(s1, p1, &sec2, 1), 0);
	struct ow_signify_sec got;
	assert_int_equal(ow_signify_load_sec(s1, &got), 0);
	assert_memory_equal(got.seed, sec2.seed, sizeof got.seed);
	tu_rmtree(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rfc8032_vectors),
	    cmocka_unit_test(test_roundtrip_and_refusals),
	    cmocka_unit_test(test_manifest_paths),
	    cmocka_unit_test(test_sums_parse),
	    cmocka_unit_test(test_key_files_unreadable),
	    cmocka_unit_test(test_write_keys_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
