/* fuzz_simplejson.c - a PEP 691 JSON page from arbitrary bytes: the JSON
 * pass with small caps, then the whole page -> links pipeline. */
#include <stdint.h>
#include <stdlib.h>

#include "pagelinks.h"
#include "simplejson.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ow_html_limits lim = {1u << 20, 2000, 64};
	struct ow_html_doc *doc = NULL;
	struct ow_page *page = NULL;
	const char *body = (const char *)data;
	if (!ow_simple_json_parse(body, size, &lim, &doc))
		ow_html_doc_free(doc);
	if (!ow_page_parse("https://pypi.org/simple/filelock/", body, size, &lim, NULL, &page))
		ow_page_free(page);
	/* devpi's form: urls relative to the page */
	if (!ow_page_parse("https://pypi.org/root/lab/+simple/filelock/", body, size, &lim, NULL,
	                   &page))
		ow_page_free(page);
	return 0;
}
