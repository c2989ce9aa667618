/* pagelinks.h - a PEP 503 project page as file records (docs/index-quirks.md).
 *
 * An anchor is a file only if its href passes the link policy (url.h), its
 * anchor text equals the percent-decoded basename of its resolved URL, and
 * that basename is a wheel file name (an sdist is recorded but flagged).
 * Every other anchor is rejected with a reason, and the good links of the
 * page are kept. A file is identified by its URL: the same URL listed twice
 * with the same #sha256 is kept once; with different hashes (or with and
 * without one) every copy is rejected as a conflict. One file name at two
 * URLs is two files: the mixed /whl/torch/ page lists e.g.
 * torch-0.1.10.post1-cp27-none-linux_x86_64.whl in cu75/ and cu80/ with
 * different hashes, and the variant folder tells them apart. */
#ifndef OW_PAGELINKS_H
#define OW_PAGELINKS_H

#include <stddef.h>
#include <stdint.h>

#include "html.h"
#include "url.h"

struct ow_link {
	char *href;            /* as on the page (HTML-unescaped) */
	char *text;            /* anchor text, trimmed (== filename) */
	char *url;             /* resolved absolute URL, without the fragment */
	char *filename;        /* percent-decoded basename of url */
	char *name;            /* distribution part of the file name, as written */
	char *version;         /* version part, as written: "2.4.1+cpu" */
	int is_sdist;          /* a source distribution: recorded, never installed */
	char sha256[65];       /* from #sha256=, lowercase; "" when none */
	int has_meta;          /* data-core-metadata / data-dist-info-metadata
	                          says <url>.metadata exists (PEP 658/714) */
	char meta_sha256[65];  /* its sha256; "" for "true" or another hash */
	char *requires_python; /* NULL when absent */
	int yanked;
	char *yanked_reason; /* NULL when not yanked, "" when no reason given */
	char *upload_time;   /* NULL when absent */
	int line;            /* line of the anchor on the page */
};

struct ow_rejected {
	char *href;   /* as on the page */
	char *reason; /* names the href and what is wrong */
	int line;
};

struct ow_page {
	struct ow_link *links; /* in page order */
	size_t nlinks;
	struct ow_rejected *rejected;
	size_t nrejected;
	size_t nskipped;   /* links to legacy formats (.egg, .exe, .tar.bz2, ...): ignored */
	int has_timestamp; /* the page carried <!--TIMESTAMP n--> */
	int64_t timestamp;
};

/* Parse the page fetched from `page_url`. `lim` NULL: html defaults. `pol`
 * NULL: the default hosts plus the page's own host, file:// allowed when the
 * page is a file:// URL. Fails (no page) when the page URL is refused or the
 * body is not an index page (see html.h); bad links only land in rejected. */
int ow_page_parse(const char *page_url, const char *body, size_t len,
                  const struct ow_html_limits *lim, const struct ow_url_policy *pol,
                  struct ow_page **out);
/* A find-links page (pip's --find-links URL, or the listing of a local
 * directory, docs/find-links.md): a page whose links are distribution
 * files of any projects, such as nginx's autoindex.  The same link rule,
 * but a file is named by its href's last path segment, percent-decoded,
 * whatever the anchor's text (autoindex cuts long names: "...x86..&gt;"),
 * and a link whose href does not end in .whl, .tar.gz or .zip (../, a
 * README, a sort order) is passed over, neither rejected nor counted.
 * `pol` is required. */
int ow_page_parse_find_links(const char *page_url, const char *body, size_t len,
                             const struct ow_html_limits *lim, const struct ow_url_policy *pol,
                             struct ow_page **out);
void ow_page_free(struct ow_page *page);

#endif
