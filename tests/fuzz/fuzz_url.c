/* fuzz_url.c - URL parsing, resolution, decoding, #sha256 and the link
 * policy on arbitrary text. The input is "href" or "base\nhref". */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "url.h"

static void exercise(const struct ow_url_policy *pol, const char *base, const char *href)
{
	char *out = NULL;
	char hex[65];
	struct ow_url u;
	if (!ow_url_parse_ref(href, &u)) {
		if (!ow_url_format(&u, &out))
			free(out);
		ow_url_clear(&u);
	}
	if (!ow_url_resolve(base, href, &out))
		free(out);
	if (!ow_url_check(pol, base, href, &out))
		free(out);
	if (!ow_url_basename_decoded(href, &out))
		free(out);
	if (!ow_url_percent_decode(href, strlen(href), &out))
		free(out);
	ow_url_fragment_sha256(href, hex);
	ow_url_check_page(pol, href);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ow_url_policy pol;
	char *s = malloc(size + 1);
	if (!s || ow_url_policy_init(&pol)) {
		free(s);
		return 0;
	}
	memcpy(s, data, size);
	s[size] = '\0';
	ow_url_policy_add_trusted(&pol, "mirror.lan:8080");
	pol.allow_file = 1;
	ow_url_policy_add_file_root(&pol, "file:///srv/index");
	char *nl = strchr(s, '\n');
	if (nl) {
		*nl = '\0';
		exercise(&pol, s, nl + 1);
	}
	exercise(&pol, "https://download.pytorch.org/whl/nightly/cu126/torch/", s);
	exercise(&pol, "file:///srv/index/torch/", s);
	ow_url_policy_clear(&pol);
	free(s);
	return 0;
}
