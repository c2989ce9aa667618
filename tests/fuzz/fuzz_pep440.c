/* fuzz_pep440.c - versions and specifiers.  Input: a version, or
 * "specifier\nversion".  A parsed version must survive format -> parse
 * unchanged; a crash or a broken round trip aborts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pep440.h"

static void check_version(const char *s, size_t n)
{
	struct ow_version a, b;
	char text[OW_VER_TEXT_MAX * 2];
	if (ow_pep440_parse_n(&a, s, n) != 0)
		return;
	if (ow_pep440_format(&a, text, sizeof text) != 0)
		abort();
	if (ow_pep440_parse(&b, text) != 0 || ow_pep440_cmp(&a, &b) != 0)
		abort();
	struct ow_version pub;
	ow_pep440_public(&pub, &a);
	if (ow_pep440_cmp(&pub, &a) > 0)
		abort();
}

static void check_spec(const char *s, size_t n, const char *v, size_t vn)
{
	struct ow_specset set;
	struct ow_version ver;
	char text[4096];
	if (ow_spec_parse_n(&set, s, n) != 0)
		return;
	(void)ow_spec_format(&set, text, sizeof text);
	if (ow_pep440_parse_n(&ver, v, vn) == 0) {
		(void)ow_spec_contains(&set, &ver, false);
		(void)ow_spec_contains(&set, &ver, true);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	const char *nl = memchr(s, '\n', size);
	check_version(s, size);
	if (nl) {
		size_t k = (size_t)(nl - s);
		check_spec(s, k, nl + 1, size - k - 1);
		check_version(nl + 1, size - k - 1);
	}
	return 0;
}
