/* logins.h - credentials for the hosts of a lab's index (HTTP basic auth),
 * taken as pip and uv take them (docs/logins.md):
 *   - the userinfo of an index URL (https://USER:PASS@host/simple), split
 *     off where the URL comes in: the URL without it is what is stored,
 *     printed and written anywhere, the user and password (percent-decoded,
 *     as pip decodes them) stay in memory, for that scheme, host and port;
 *   - a netrc file ($NETRC, else ~/.netrc): `machine HOST login USER
 *     password PASS` for the host named, `default` for the hosts of the
 *     index URLs given only (never for a host their pages link to).
 * The transfer engine asks ow_logins_find for every request and every
 * redirect hop: a login goes only to the host it belongs to. */
#ifndef OW_PUBLIC_LOGINS_H
#define OW_PUBLIC_LOGINS_H

typedef struct ow_logins ow_logins;

int ow_logins_new(ow_logins **out);
/* Wipes the passwords, frees; NULL is fine. */
void ow_logins_free(ow_logins *l);

/* An index URL as given: *out (malloc'd) is the URL without its userinfo
 * (the same text when it has none), and the URL's host becomes one of the
 * index hosts (for netrc's `default`).  A userinfo's user and password are
 * kept for the URL's scheme, host and port; the first URL with a password
 * for a host wins.  With l NULL the userinfo is only dropped.  OW_EINVAL
 * (an escape in it that decodes to NUL) or OW_ENOMEM, the detail naming the
 * URL with its userinfo as "***"; a URL that does not parse is returned as
 * it is, without its userinfo, for the caller's own checks to refuse. */
int ow_logins_take_url(ow_logins *l, const char *url, char **out);

/* Read the netrc file: `path`, else $NETRC, else $HOME/.netrc.  A file
 * that is missing is no error; one that cannot be read or parsed is
 * reported as a warning event (its logins are not used).  0, or OW_ENOMEM. */
int ow_logins_read_netrc(ow_logins *l, const char *path);
/* How messages name the netrc file: "~/.netrc", or "$NETRC (PATH)". */
const char *ow_logins_netrc_name(const ow_logins *l);

enum ow_login_source { OW_LOGIN_URL = 1, OW_LOGIN_NETRC };
struct ow_login {
	const char *user, *password; /* owned by the logins */
	enum ow_login_source source;
};
/* The login for a request to `url` (http or https): the userinfo given for
 * its scheme, host and port with a password; else the netrc's entry for
 * its host; else the netrc's `default` when the host is an index host;
 * else a userinfo given without a password, with password "" (pip's
 * order).  1 with *out filled, 0 when there is none. */
int ow_logins_find(const ow_logins *l, const char *url, struct ow_login *out);

#endif
