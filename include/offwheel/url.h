/* url.h - URLs and the link policy: which hosts an index, its pages and
 * its files may be fetched from (docs/index-quirks.md). */
#ifndef OW_PUBLIC_URL_H
#define OW_PUBLIC_URL_H

#include <stdbool.h>
#include <stddef.h>

/* Longest href or URL accepted (bytes). */
#define OW_URL_MAX_LEN 8192

/* A parsed URL or relative reference. Strings are owned (malloc'd). */
struct ow_url {
	char *scheme; /* lowercase; NULL for a relative reference */
	bool has_authority;
	char *userinfo; /* NULL when absent */
	char *host;     /* lowercase; "" when absent or empty */
	int port;       /* -1 when absent */
	char *path;     /* as written (still percent-encoded); "" possible */
	char *query;    /* without '?'; NULL when absent */
	char *fragment; /* without '#'; NULL when absent */
};

/* Parse an absolute URL ("scheme:..."); OW_EPARSE with a detail otherwise.
 * http/https need a non-empty host. `u` is cleared on failure. */
int ow_url_parse(const char *s, struct ow_url *u);
/* Free the strings of `u` (not `u` itself); safe on a zeroed struct. */
void ow_url_clear(struct ow_url *u);
/* Where links may point. Hosts are "name" (any port) or "name:port". */
struct ow_url_policy {
	char **hosts; /* allowed hosts */
	size_t nhosts;
	char **trusted; /* hosts where plain http is allowed (pip --trusted-host);
	                   a trusted host is also an allowed host */
	size_t ntrusted;
	bool allow_file; /* file:// page URLs (local indexes) are allowed */
	/* The local index roots (decoded absolute paths without a trailing '/',
	 * each as given and with its symlinks resolved): a file: link, once
	 * resolved against its page, must name a path below one of them. */
	char **file_roots;
	size_t nfile_roots;
	bool allow_file_outside_root; /* file: links may leave the roots */
	size_t max_len; /* longest href accepted; 0 means OW_URL_MAX_LEN */
};

/* A policy with the default hosts: download.pytorch.org,
 * download-r2.pytorch.org, files.pythonhosted.org, pypi.org, pypi.nvidia.com.
 * The caller adds the index URL's own host with ow_url_policy_add_host. */
int ow_url_policy_init(struct ow_url_policy *p);
int ow_url_policy_add_host(struct ow_url_policy *p, const char *host);
int ow_url_policy_add_trusted(struct ow_url_policy *p, const char *host);
/* Add the root of a local index given by its file: URL: the folder it
 * names, or the folder above when that one is called "simple" (file:///srv/
 * mirror/simple -> /srv/mirror, whose packages/ or wheels/ the pages link
 * to), as written and, when it has symlinks in it, as realpath gives it.
 * OW_EINVAL when `root_url` is not a plain local file: URL. */
int ow_url_policy_add_file_root(struct ow_url_policy *p, const char *root_url);
void ow_url_policy_clear(struct ow_url_policy *p);

/* Check a page URL on its own: http(s) to an allowed host (http only when
 * trusted) or file:// when allowed (and below a file root when roots are
 * known, unless allow_file_outside_root). */
int ow_url_check_page(const struct ow_url_policy *pol, const char *page_url);

/* A printable, truncated copy of untrusted text for messages: control and
 * non-ASCII bytes become \xNN, the result is cut with "..." to fit, and a
 * URL's userinfo (user:password@) is shown as "***". */
void ow_url_printable(const char *s, char *buf, size_t bufsz);

/* Links of index pages that were rejected (refused by the policy, or not a
 * wheel link): how many, and the first few reasons, each "PAGE: href ...:
 * why", so that a command that crawls on the way can say why a page gave
 * fewer files than it lists. */
#define OW_REFUSALS_KEPT 3
struct ow_link_refusals {
	size_t n;
	/* the first min(n, OW_REFUSALS_KEPT) reasons, owned; an entry is NULL
	 * when it could not be kept (out of memory) */
	char *first[OW_REFUSALS_KEPT];
};
void ow_link_refusals_add(struct ow_link_refusals *r, const char *page, const char *reason);
/* Add `more` (its count and, while there is room, copies of its reasons)
 * to `r`. */
void ow_link_refusals_merge(struct ow_link_refusals *r, const struct ow_link_refusals *more);
/* Free the reasons and zero the count. */
void ow_link_refusals_dispose(struct ow_link_refusals *r);

#endif
