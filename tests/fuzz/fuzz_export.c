/* fuzz_export.c - the parsers `offwheel check` runs on a stick's hostile
 * bytes: SHA256SUMS, manifest.json, signify public keys and signatures.
 * The first byte picks the parser; the rest is its input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exportint.h"
#include "offwheel/signify.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one_pub_and_sig(const char *text, size_t len)
{
	struct ow_signify_pub pub;
	static const struct ow_signify_pub fixed; /* an all-zero key: verification must fail */
	if (ow_signify_pub_parse(text, len, &pub) == 0)
		(void)ow_signify_verify(&pub, "m", 1, text, len);
	(void)ow_signify_verify(&fixed, text, len, text, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > (1 << 20))
		return 0;
	char *text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	size_t len = size - 1;
	switch (data[0] % 3) {
	case 0: {
		struct ex_files f = {0};
		if (ex_parse_sums(text, len, &f) == 0)
			ex_files_sort(&f);
		ex_files_dispose(&f);
		break;
	}
	case 1: {
		struct ex_manifest m;
		memset(&m, 0, sizeof m);
		(void)ex_json_parse(text, len, &m);
		ex_manifest_dispose(&m);
		break;
	}
	default:
		one_pub_and_sig(text, len);
	}
	free(text);
	return 0;
}
