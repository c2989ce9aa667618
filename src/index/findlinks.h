/* findlinks.h - pip's --find-links sources (docs/find-links.md): a page, or
 * a local directory, whose links are distribution files of any projects.
 * crawl.c fetches a source once per crawl and records, for each project it
 * lists, the page {source}/{project}/ with that project's files. */
#ifndef OW_FINDLINKS_H
#define OW_FINDLINKS_H

#include <stddef.h>

/* The URL a find-links source is read from: a root that names a file
 * ("links.html": a dot in its last segment) as it is, else the root with a
 * trailing '/', so that relative links resolve inside it.  *out is
 * malloc'd. */
int ow_find_links_fetch_url(const char *root, char **out);

/* A local source (a file: URL): a directory is listed as a page of its
 * regular files whose names end in .whl, .tar.gz or .zip (symlinks and
 * subdirectories are not followed), sorted by name, each linked by its
 * percent-encoded name; a regular file is read as the page itself (at most
 * `cap` bytes).  *page (malloc'd, *len bytes) and *base (the URL its links
 * are relative to, malloc'd) are set on success. */
int ow_find_links_local(const char *url, size_t cap, char **page, size_t *len, char **base);

#endif
