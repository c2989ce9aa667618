/* fuzz_html.c - a PEP 503 page from arbitrary bytes: the libxml2 SAX pass
 * with small caps, then the whole page -> links pipeline. */
#include <stdint.h>
#include <stdlib.h>

#include "html.h"
#include "pagelinks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ow_html_limits lim = {1u << 20, 2000, 64};
	struct ow_html_doc *doc = NULL;
	struct ow_page *page = NULL;
	const char *body = (const char *)data;
	if (!ow_html_parse(body, size, &lim, &doc))
		ow_html_doc_free(doc);
	if (!ow_page_parse("https://download.pytorch.org/whl/cu128/torch/", body, size, &lim, NULL,
	                   &page))
		ow_page_free(page);
	/* a local index: file: links resolved and kept below its root */
	if (!ow_page_parse("file:///srv/index/torch/", body, size, &lim, NULL, &page))
		ow_page_free(page);
	return 0;
}
