/* indexopts.h - the options that say which index to read and how
 * (crawl, resolve, fetch, sync): --index-url, --channel, --variant,
 * --project, --trusted-host, --allow-host, --allow-file-outside-root, --cert,
 * --force. */
#ifndef OW_INDEXOPTS_H
#define OW_INDEXOPTS_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "offwheel/http.h"
#include "offwheel/store.h"
#include "offwheel/logins.h"
#include "offwheel/url.h"

struct cli_strlist {
	char **v;
	size_t n;
};
/* Append the comma-separated items of `arg`; 0 or an exit code. */
int cli_strlist_add_csv(struct cli_strlist *l, const char *arg);
void cli_strlist_dispose(struct cli_strlist *l);

enum {
	IDX_INDEX_URL = 300,
	IDX_EXTRA_INDEX_URL,
	IDX_CHANNEL,
	IDX_VARIANT,
	IDX_CUDA,
	IDX_PROJECT,
	IDX_TRUSTED_HOST,
	IDX_ALLOW_HOST,
	IDX_ALLOW_FILE_OUTSIDE_ROOT,
	IDX_CERT,
	IDX_FORCE,
	IDX_STALL,
	IDX_MIN_RATE,
	IDX_DEADLINE,
	IDX_MAX_AGE,
	IDX_FIND_LINKS = 'f',
	IDX_NO_INDEX = 330
};

/* The entries for a command's option table (no terminator). */
#define CLI_INDEX_OPTS                                                                          \
	{"index-url", IDX_INDEX_URL, required_argument, "URL",                                  \
	 "index: a channel root with variant folders (default: the --channel's, "              \
	 "https://download.pytorch.org/whl/nightly) or one root such as https://pypi.org/simple " \
	 "or .../whl/cu128; a login as https://USER:PASS@host/... or in ~/.netrc"},             \
	{"extra-index-url", IDX_EXTRA_INDEX_URL, required_argument, "URL",                      \
	 "a further root for dependencies the index lacks (repeatable); a project comes from "  \
	 "the first root that has it, torch/torchvision/torchaudio only from --index-url"},    \
	{"find-links", IDX_FIND_LINKS, required_argument, "URL|DIR",                            \
	 "pip's -f: a page or a local directory whose links are wheels (an nginx autoindex), "  \
	 "read beside the index; repeatable, comma-separated"},                                 \
	{"no-index", IDX_NO_INDEX, no_argument, NULL,                                           \
	 "pip's flag: read only the --find-links sources, no index"},                           \
	{"channel", IDX_CHANNEL, required_argument, "CH", "nightly (default) | stable | test"},  \
	{"variant", IDX_VARIANT, required_argument, "LIST",                                     \
	 "variant folders, e.g. cu126,cu128,cu130,cpu (default: those four); all = the mixed page"},                  \
	{"cuda", IDX_CUDA, required_argument, "X.Y", "same as --variant cuXY (12.8 -> cu128)"},  \
	{"project", IDX_PROJECT, required_argument, "LIST",                                     \
	 "projects (default torch,torchvision,torchaudio); NAME[EXTRA,...] asks for extras"},                                    \
	{"trusted-host", IDX_TRUSTED_HOST, required_argument, "HOST",                           \
	 "allow plain http to HOST, as pip's flag does"},                                       \
	{"allow-host", IDX_ALLOW_HOST, required_argument, "HOST",                               \
	 "allow downloads from HOST too (besides the PyTorch and PyPI hosts)"},                 \
	{"allow-file-outside-root", IDX_ALLOW_FILE_OUTSIDE_ROOT, no_argument, NULL,             \
	 "a file:// index may link to local files outside its root (refused by default)"},      \
	{"cert", IDX_CERT, required_argument, "FILE", "CA bundle for TLS (else $SSL_CERT_FILE)"}, \
	{"force", IDX_FORCE, no_argument, NULL,                                                 \
	 "fetch pages even when unchanged (no conditional GET); accept a page that lost more "   \
	 "than 10 percent of its files at once"},                                                \
	{"stall-timeout", IDX_STALL, required_argument, "S",                                    \
	 "give up on a transfer (and retry) when nothing arrives for S seconds (30)"},            \
	{"min-rate", IDX_MIN_RATE, required_argument, "B",                                      \
	 "a transfer slower than B bytes/s on average over a --stall-timeout window is a "       \
	 "stall (10240; 0 = off)"},                                                              \
	{"deadline", IDX_DEADLINE, required_argument, "S",                                      \
	 "one transfer, retries included, ends after S seconds or 2 x size / --min-rate, "      \
	 "whichever is longer (300; 0 = none)"}

/* resolve and sync: how old a stored page may be before it is revalidated */
#define CLI_MAX_AGE_OPT                                                                         \
	{"max-age", IDX_MAX_AGE, required_argument, "AGE",                                      \
	 "revalidate (conditional GET) the stored index pages used that were fetched AGE or "    \
	 "longer ago: N seconds, or 30m, 6h, 2d; now = all (default 1h)"}

struct cli_index_opts {
	const char *index_url;
	const char *channel;
	const char *cert;
	int force;
	int file_outside_root; /* --allow-file-outside-root */
	int stall_s;
	int min_rate;   /* --min-rate, when rate_given */
	int deadline_s; /* --deadline, when deadline_given */
	int rate_given, deadline_given;
	int64_t max_age; /* --max-age in seconds (cli_index_opts_finish: the default) */
	int max_age_given;
	int offline; /* the command reads only the workspace: plain http needs no --trusted-host */
	int variants_default; /* set by cli_index_opts_finish: no --variant/--cuda was given */
	/* set by cli_index_opts_finish: --index-url names a variant folder (.../whl/cu128)
	 * and no --variant was given, so the index is one root whose {project}/
	 * pages hold everything; variants is then that one folder's name */
	int flat;
	int no_index; /* --no-index: the index is the first --find-links source */
	/* --find-links sources as roots (a path made a file: URL) */
	struct cli_strlist variants, projects, trusted, allowed, extra, find_links;
	char **project_extras; /* per project: "a,b" from NAME[a,b], "" none */
	/* the logins of the index URLs' userinfo (cli_index_root_url) and, from
	 * cli_index_opts_finish on, of the netrc; http.logins points here */
	ow_logins *logins;
	/* filled by cli_index_opts_finish */
	char index[2048];
	const char *index_src; /* where index came from, for messages: "--index-url",
	                        * "OFFWHEEL_PYTORCH_URL" or "--channel" */
	struct ow_url_policy policy;
	struct ow_http_opts http;
	/* resolve's pages and metadata: more transfers at once (see
	 * INDEX_SMALL_JOBS), or --jobs when given */
	struct ow_http_opts http_small;
};

/* An index root as the user gave it (opt names where: "--extra-index-url",
 * ...): its userinfo split off into o->logins (kept in memory only, sent
 * only to its host), trailing slashes dropped, no query or fragment (the
 * pages are {root}/{project}/); the rest, whole, in out (n bytes).  Every
 * root URL goes through here.  0 or an exit code (a usage error naming opt,
 * the URL's userinfo shown as "***"). */
int cli_index_root_url(struct cli *c, struct cli_index_opts *o, const char *opt, const char *in,
                       char *out, size_t n);

/* The variant folders to crawl: the root itself ("") for a flat index. */
const char *const *cli_index_opts_folders(const struct cli_index_opts *o, size_t *n);

/* A channel's index: download.pytorch.org's, or the same path under
 * $OFFWHEEL_PYTORCH_URL (a lab's mirror); buf holds it when it is built.
 * NULL for an unknown channel, and when the mirror's URL does not fit in
 * buf (it is never cut). */
const char *cli_index_opts_channel_url(const char *channel, char *buf, size_t n);

/* Handle one option if it is an index option: 0 handled, an exit code on a
 * bad value, -1 when the key is not one of ours. */
int cli_index_opt(struct cli *c, struct cli_index_opts *o, int key, const char *arg);
/* Defaults, the URL policy and the HTTP options; 0 or an exit code. */
int cli_index_opts_finish(struct cli *c, struct cli_index_opts *o);
void cli_index_opts_dispose(struct cli_index_opts *o);

/* An --index-url that is a find-links page (no {index}/{project}/ pages,
 * wheels linked at the root): 0 when it is not, else the usage error that
 * says to give it as --find-links (printed; exit 2). */
int cli_index_find_links_hint(struct cli *c, const struct cli_index_opts *o, ow_store *s);

#endif
