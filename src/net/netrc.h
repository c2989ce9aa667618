/* netrc.h - the netrc file as curl, pip (Python's netrc) and uv read it
 * (docs/logins.md); not a public API.
 *
 * Tokens are separated by white space; a token that starts with '"' runs to
 * the next unescaped '"' (\" \\ \n \r \t inside).  The keywords:
 *   machine NAME   starts an entry for the host NAME
 *   default        starts the entry for any other host
 *   login NAME, password PASS, account ACCT (kept out: unused)
 *   macdef NAME    a macro: its lines up to the next empty line are skipped
 * A '#' that starts a token starts a comment to the end of the line.  Other
 * tokens are skipped, as curl skips them.  For a host, the first entry that
 * names it wins (curl's rule); `default` applies only where no entry does. */
#ifndef OW_NETRC_H
#define OW_NETRC_H

#include <stdbool.h>
#include <stddef.h>

/* Largest netrc read (bytes): a real one is a few lines. */
#define OW_NETRC_MAX_BYTES (1u << 20)

struct ow_netrc_entry {
	char *machine;  /* lowercase host name; NULL for `default` */
	char *login;    /* "" when the entry names none */
	char *password; /* "" when the entry names none */
};

struct ow_netrc {
	struct ow_netrc_entry *v;
	size_t n;
};

/* Parse `len` bytes of netrc text (no NUL needed) into *out (zeroed first).
 * OW_EPARSE with "line N: ..." for a keyword without its value at the end,
 * an unterminated quote or a NUL byte; OW_ETOOBIG past OW_NETRC_MAX_BYTES.
 * *out is empty on failure. */
int ow_netrc_parse(const char *text, size_t len, struct ow_netrc *out);
/* The entry for `host` (case-insensitive), else, when with_default, the
 * `default` entry; NULL when none. */
const struct ow_netrc_entry *ow_netrc_find(const struct ow_netrc *n, const char *host,
                                           bool with_default);
/* Frees the entries (passwords wiped first) and zeroes *n. */
void ow_netrc_dispose(struct ow_netrc *n);

#endif
