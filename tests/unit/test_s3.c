/* test_s3.c - the S3 client's offline parts: target and endpoint parsing,
 * where credentials come from (environment, then the shared credentials
 * file and its profiles), key URL encoding, the checksum header's base64,
 * and S3 error bodies turned into message text. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "digest.h"
#include "offwheel/error.h"
#include "s3.h"

static char credfile[256];

static int setup(void **state)
{
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");
	unsetenv("AWS_SESSION_TOKEN");
	unsetenv("AWS_REGION");
	unsetenv("AWS_DEFAULT_REGION");
	unsetenv("AWS_PROFILE");
	unsetenv("AWS_ENDPOINT_URL");
	unsetenv("AWS_ENDPOINT_URL_S3");
	snprintf(credfile, sizeof credfile, "/tmp/ow-test-s3-%d.ini", (int)getpid());
	setenv("AWS_SHARED_CREDENTIALS_FILE", credfile, 1);
	unlink(credfile);
	return 0;
}

static int teardown(void **state)
{
	unlink(credfile);
	return 0;
}

static void write_creds(const char *text)
{
	FILE *f = fopen(credfile, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_target_and_endpoint(void **state)
{
	struct ow_s3 s;
	setenv("AWS_ACCESS_KEY_ID", "AKID", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "SECRET", 1);
	assert_int_equal(ow_s3_open("s3://lab//exports/stick1/", "http://127.0.0.1:8333/", 1, NULL,
	                            &s), 0);
	assert_string_equal(s.bucket, "lab");
	assert_string_equal(s.prefix, "exports/stick1/");
	assert_string_equal(s.base, "http://127.0.0.1:8333/lab/");
	assert_true(s.flags & OW_HTTP_ALLOW_HTTP);
	assert_string_equal(s.sigv4, "aws:amz:us-east-1:s3");
	assert_string_equal(s.userpwd, "AKID:SECRET");
	/* no prefix; AWS itself when no endpoint is given anywhere */
	setenv("AWS_REGION", "eu-west-3", 1);
	assert_int_equal(ow_s3_open("s3://lab", NULL, 1, NULL, &s), 0);
	assert_string_equal(s.prefix, "");
	assert_string_equal(s.base, "https://lab.s3.eu-west-3.amazonaws.com/");
	assert_false(s.flags & OW_HTTP_ALLOW_HTTP);
	setenv("AWS_ENDPOINT_URL", "https://minio.lab:9000", 1);
	assert_int_equal(ow_s3_open("s3://lab/p", NULL, 1, NULL, &s), 0);
	assert_string_equal(s.base, "https://minio.lab:9000/lab/");
	assert_string_equal(s.prefix, "p/");
	unsetenv("AWS_ENDPOINT_URL");
}

static void test_bad_targets(void **state)
{
	struct ow_s3 s;
	setenv("AWS_ACCESS_KEY_ID", "AKID", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "SECRET", 1);
	assert_int_equal(ow_s3_open("s3://Lab/p", "http://h", 1, NULL, &s), OW_EINVAL);
	assert_non_null(strstr(ow_err_detail(), "not a bucket name"));
	assert_int_equal(ow_s3_open("s3://ab/p", "http://h", 1, NULL, &s), OW_EINVAL);
	assert_int_equal(ow_s3_open("s3://lab/a/../b", "http://h", 1, NULL, &s), OW_EINVAL);
	assert_non_null(strstr(ow_err_detail(), "'..'"));
	assert_int_equal(ow_s3_open("s3://lab/a//b", "http://h", 1, NULL, &s), OW_EINVAL);
	assert_int_equal(ow_s3_open("s3://lab/a\\b", "http://h", 1, NULL, &s), OW_EINVAL);
	assert_int_equal(ow_s3_open("s3://lab/p", "ftp://h", 1, NULL, &s), OW_EINVAL);
	assert_non_null(strstr(ow_err_detail(), "--endpoint ftp://h"));
	assert_int_equal(ow_s3_open("/tmp/x", "http://h", 1, NULL, &s), OW_EINVAL);
}

static void test_credentials_file(void **state)
{
	struct ow_s3 s;
	write_creds("[default]\naws_access_key_id = DEFKEY\naws_secret_access_key = defsecret\n"
	            "\n[profile lab]\naws_access_key_id=LABKEY\naws_secret_access_key=labsecret\n"
	            "aws_session_token = tok123\nregion = ap-south-1\n");
	assert_int_equal(ow_s3_open("s3://lab/p", "http://h", 1, NULL, &s), 0);
	assert_string_equal(s.userpwd, "DEFKEY:defsecret");
	assert_string_equal(s.token_hdr, "");
	setenv("AWS_PROFILE", "lab", 1);
	assert_int_equal(ow_s3_open("s3://lab/p", "http://h", 1, NULL, &s), 0);
	assert_string_equal(s.userpwd, "LABKEY:labsecret");
	assert_string_equal(s.token_hdr, "x-amz-security-token: tok123");
	assert_string_equal(s.region, "ap-south-1");
	/* the environment wins over the file */
	setenv("AWS_ACCESS_KEY_ID", "ENVKEY", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "envsecret", 1);
	assert_int_equal(ow_s3_open("s3://lab/p", "http://h", 1, NULL, &s), 0);
	assert_string_equal(s.userpwd, "ENVKEY:envsecret");
}

static void test_missing_credentials(void **state)
{
	struct ow_s3 s;
	assert_int_equal(ow_s3_open("s3://lab/p", "http://h", 1, NULL, &s), OW_ENOENT);
	assert_non_null(strstr(ow_err_detail(), "no S3 credentials"));
	assert_non_null(strstr(ow_err_detail(), credfile));
	/* the secret alone is missing: named */
	setenv("AWS_ACCESS_KEY_ID", "AKID", 1);
	assert_int_equal(ow_s3_open("s3://lab/p", "http://h", 1, NULL, &s), OW_ENOENT);
	assert_non_null(strstr(ow_err_detail(), "AWS_SECRET_ACCESS_KEY is not"));
	unsetenv("AWS_ACCESS_KEY_ID");
	/* reading (check) without credentials is anonymous */
	assert_int_equal(ow_s3_open("s3://lab/p", "http://h", 0, NULL, &s), 0);
	assert_true(s.anonymous);
	/* a secret never shows in a message */
	setenv("AWS_ACCESS_KEY_ID", "AK:ID", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "topsecret", 1);
	assert_int_equal(ow_s3_open("s3://lab/p", "http://h", 1, NULL, &s), OW_EINVAL);
	assert_null(strstr(ow_err_detail(), "topsecret"));
}

static void test_key_url(void **state)
{
	struct ow_s3 s;
	char url[512];
	setenv("AWS_ACCESS_KEY_ID", "AKID", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "SECRET", 1);
	assert_int_equal(ow_s3_open("s3://lab/a b", "http://h:1", 1, NULL, &s), 0);
	assert_int_equal(ow_s3_key_url(&s, "wheels/torch-2.5.1+cu124-cp312.whl", NULL, url,
	                               sizeof url), 0);
	assert_string_equal(url, "http://h:1/lab/a%20b/wheels/torch-2.5.1%2Bcu124-cp312.whl");
	assert_int_equal(ow_s3_key_url(&s, "k", "uploadId=x", url, sizeof url), 0);
	assert_string_equal(url, "http://h:1/lab/a%20b/k?uploadId=x");
	assert_int_equal(ow_s3_key_url(&s, "k", NULL, url, 20), OW_ETOOBIG);
}

static void test_http_source(void **state)
{
	struct ow_s3 s;
	char url[512];
	assert_int_equal(ow_s3_open_http("http://gw:8333/lab/ex/", NULL, &s), 0);
	assert_true(s.anonymous);
	assert_int_equal(ow_s3_key_url(&s, "SHA256SUMS", NULL, url, sizeof url), 0);
	assert_string_equal(url, "http://gw:8333/lab/ex/SHA256SUMS");
	assert_int_equal(ow_s3_open_http("http://gw/a?b", NULL, &s), OW_EINVAL);
	assert_int_equal(ow_s3_open_http("gopher://gw/a", NULL, &s), OW_EINVAL);
}

static void test_checksum_base64(void **state)
{
	/* what SeaweedFS and AWS answer in x-amz-checksum-sha256 for "hello\n" */
	uint8_t d[32];
	char b[45];
	assert_int_equal(ow_sha256_buf("hello\n", 6, d), 0);
	assert_int_equal(ow_b64_encode(d, sizeof d, b, sizeof b), 0);
	assert_string_equal(b, "WJG1tSLV3whtD/CxEPvZ0hu0/HFjrzTQgoai6Eb2vgM=");
	memset(d, 0xff, sizeof d);
	assert_int_equal(ow_b64_encode(d, sizeof d, b, sizeof b), 0);
	assert_string_equal(b, "//////////////////////////////////////////8=");
}

static void test_error_text(void **state)
{
	char t[300];
	ow_s3_error_text(NULL, "<?xml version=\"1.0\"?><Error><Code>SignatureDoesNotMatch</Code>"
	                 "<Message>The request signature we calculated does not match\n</Message>"
	                 "</Error>", t, sizeof t);
	assert_string_equal(t, "SignatureDoesNotMatch: The request signature we calculated does "
	                       "not match ");
	ow_s3_error_text(NULL, "not xml at all", t, sizeof t);
	assert_string_equal(t, "");
	/* entities and character references decoded (SeaweedFS writes quotes as &#34;) */
	ow_s3_error_text(NULL, "<Error><Code>NoSuchKey</Code><Message>a &amp; b &lt;&#34;k&#x41;&#233;"
	                 "&quot;&gt;</Message></Error>", t, sizeof t);
	assert_string_equal(t, "NoSuchKey: a & b <\"kA\xc3\xa9\">");
	/* not plain text: an unknown entity, markup inside, a NUL reference, an
	 * unterminated element -> nothing taken from it */
	ow_s3_error_text(NULL, "<Error><Code>X</Code><Message>&bogus;</Message></Error>", t, sizeof t);
	assert_string_equal(t, "X");
	ow_s3_error_text(NULL, "<Error><Code>X<b>y</b></Code></Error>", t, sizeof t);
	assert_string_equal(t, "");
	ow_s3_error_text(NULL, "<Error><Code>&#0;</Code></Error>", t, sizeof t);
	assert_string_equal(t, "");
	ow_s3_error_text(NULL, "<Error><Code>Unterminated", t, sizeof t);
	assert_string_equal(t, "");
	/* a longer name sharing the start is another element */
	ow_s3_error_text(NULL, "<Error><CodeX>no</CodeX><Code>yes</Code></Error>", t, sizeof t);
	assert_string_equal(t, "yes");
}

/* A store that echoes what it was sent: offwheel's own credentials never
 * reach a message, even when the text around them is long. */
static void test_error_text_redacts_credentials(void **state)
{
	struct ow_s3 s;
	char t[300];
	setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLEKEY01", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG", 1);
	setenv("AWS_SESSION_TOKEN", "FwoGZXIvYXdzEXAMPLETOKEN", 1);
	assert_int_equal(ow_s3_open("s3://lab/p", "http://alice:pw@127.0.0.1:1", 1, NULL, &s), 0);
	ow_s3_error_text(&s, "<Error><Code>AccessDenied</Code><Message>key AKIAEXAMPLEKEY01 "
	                 "secret wJalrXUtnFEMI/K7MDENG token FwoGZXIvYXdzEXAMPLETOKEN, again "
	                 "wJalrXUtnFEMI/K7MDENG</Message></Error>", t, sizeof t);
	assert_string_equal(t, "AccessDenied: key *** secret *** token ***, again ***");
	ow_s3_error_text(NULL, "<Error><Code>X</Code><Message>AKIAEXAMPLEKEY01</Message></Error>", t,
	                 sizeof t);
	assert_string_equal(t, "X: AKIAEXAMPLEKEY01");
	/* a bad endpoint is named without its password */
	assert_int_equal(ow_s3_open("s3://lab/p", "ftp://alice:pw0rd@host", 1, NULL, &s), OW_EINVAL);
	assert_null(strstr(ow_err_detail(), "pw0rd"));
	assert_non_null(strstr(ow_err_detail(), "ftp://***@host"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_target_and_endpoint, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_targets, setup, teardown),
		cmocka_unit_test_setup_teardown(test_credentials_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_credentials, setup, teardown),
		cmocka_unit_test_setup_teardown(test_key_url, setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_source, setup, teardown),
		cmocka_unit_test_setup_teardown(test_checksum_base64, setup, teardown),
		cmocka_unit_test_setup_teardown(test_error_text, setup, teardown),
		cmocka_unit_test_setup_teardown(test_error_text_redacts_credentials, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
