/* url.h - URLs and the link policy: which hosts an index, its pages and
 * its files may be fetched from (docs/index-quirks.md). */
#ifndef OW_PUBLIC_URL_H
#define OW_PUBLIC_URL_H

#include <stddef.h>

/* Longest href or URL accepted (bytes). */
#define OW_URL_MAX_LEN 8192

/* A parsed URL or relative reference. Strings are owned (malloc'd). */
struct ow_url {
	char *scheme; /* lowercase; NULL for a relative reference */
	int has_authority;
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
	int allow_file; /* file:// page URLs (local indexes) are allowed */
	size_t max_len; /* longest href accepted; 0 means OW_URL_MAX_LEN */
};

/* A policy with the default hosts: download.pytorch.org,
 * download-r2.pytorch.org, files.pythonhosted.org, pypi.org, pypi.nvidia.com.
 * The caller adds the index URL's own host with ow_url_policy_add_host. */
int ow_url_policy_init(struct ow_url_policy *p);
int ow_url_policy_add_host(struct ow_url_policy *p, const char *host);
int ow_url_policy_add_trusted(struct ow_url_policy *p, const char *host);
void ow_url_policy_clear(struct ow_url_policy *p);

/* Check a page URL on its own: http(s) to an allowed host (http only when
 * trusted) or file:// when allowed. */
int ow_url_check_page(const struct ow_url_policy *pol, const char *page_url);

#endif
