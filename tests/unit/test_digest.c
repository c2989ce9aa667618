#include "testutil.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "digest.h"
#include "offwheel/error.h"

/* FIPS 180-2 / NIST vectors. */
static const struct {
	const char *msg;
	const char *hex;
} vectors[] = {
	{"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
	{"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
	{"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
	 "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
};

static void test_vectors_oneshot_and_streaming(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
		uint8_t d[32], d2[32];
		char hex[65];
		assert_int_equal(ow_sha256_buf(vectors[i].msg, strlen(vectors[i].msg), d), 0);
		ow_hex(d, 32, hex);
		assert_string_equal(hex, vectors[i].hex);
		ow_sha256 *h;
		assert_int_equal(ow_sha256_new(&h), 0);
		for (const char *p = vectors[i].msg; *p; p++)
			assert_int_equal(ow_sha256_update(h, p, 1), 0);
		assert_int_equal(ow_sha256_final(h, d2), 0);
		assert_memory_equal(d, d2, 32);
		ow_sha256_free(h);
	}
}

static void test_million_a_via_fd(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp();
	char path[4096];
	snprintf(path, sizeof path, "%s/a", dir);
	char *buf = malloc(1000000);
	memset(buf, 'a', 1000000);
	assert_int_equal(tu_write_file(path, buf, 1000000), 0);
	int fd = open(path, O_RDONLY);
	uint8_t d[32];
	uint64_t size = 0;
	char hex[65];
	assert_int_equal(ow_sha256_fd(fd, d, &size), 0);
	close(fd);
	ow_hex(d, 32, hex);
	assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	assert_int_equal(size, 1000000);
	free(buf);
	tu_rmtree(dir);
	free(dir);
}

static void test_hex_parse_and_compare(void **state)
{
	(void)state;
	uint8_t d[32], e[32];
	assert_int_equal(ow_sha256_from_hex(vectors[1].hex, d), 0);
	char upper[65];
	for (int i = 0; i < 64; i++)
		upper[i] = (char)(vectors[1].hex[i] >= 'a' ? vectors[1].hex[i] - 32 : vectors[1].hex[i]);
	upper[64] = 0;
	assert_int_equal(ow_sha256_from_hex(upper, e), 0);
	assert_true(ow_digest_eq(d, e, 32));
	e[31] ^= 1;
	assert_false(ow_digest_eq(d, e, 32));
	assert_int_equal(ow_sha256_from_hex("abc", d), OW_EPARSE);
	assert_int_equal(ow_sha256_from_hex("zz7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", d),
	                 OW_EPARSE);
	assert_true(ow_is_sha256_hex(vectors[1].hex));
	assert_false(ow_is_sha256_hex(upper));
	assert_false(ow_is_sha256_hex("ab"));
}

static void test_record_base64(void **state)
{
	(void)state;
	/* RECORD digest of the empty file as pip writes it. */
	uint8_t d[32];
	char out[64];
	ow_sha256_buf("", 0, d);
	assert_int_equal(ow_b64url_nopad(d, 32, out, sizeof out), 0);
	assert_string_equal(out, "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU");
	assert_int_equal(ow_b64url_nopad(d, 32, out, 10), OW_ERANGE);
	assert_int_equal(ow_b64url_nopad((const uint8_t *)"ab", 2, out, sizeof out), 0);
	assert_string_equal(out, "YWI");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors_oneshot_and_streaming),
		cmocka_unit_test(test_million_a_via_fd),
		cmocka_unit_test(test_hex_parse_and_compare),
		cmocka_unit_test(test_record_base64),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
