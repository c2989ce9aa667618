/* indexopts.c - parsing of the index options shared by several commands. */
#include "indexopts.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "offwheel/crawl.h"
#include "offwheel/fsck.h"
#include "offwheel/resolve.h"

/* The length of the item at p: up to a comma outside [...]. */
static size_t item_len(const char *p)
{
	size_t n = 0;
	for (int depth = 0; p[n] && (depth || p[n] != ','); n++)
		depth += p[n] == '[' ? 1 : p[n] == ']' && depth ? -1 : 0;
	return n;
}

int cli_strlist_add_csv(struct cli_strlist *l, const char *arg)
{
	const char *p = arg;
	while (*p) {
		size_t n = item_len(p);
		if (n) {
			char **g = realloc(l->v, (l->n + 1) * sizeof *g);
			if (!g)
				return 1;
			l->v = g;
			/* analyzer: kept in l->v[l->n], freed by cli_strlist_dispose */
			if (!(l->v[l->n] = strndup(p, n)))
				return 1;
			l->n++;
		}
		p += n + (p[n] == ',');
	}
	return 0;
}

void cli_strlist_dispose(struct cli_strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

static int add_cuda(struct cli *c, struct cli_index_opts *o, const char *arg)
{
	char buf[32];
	int major, minor, used = 0;
	if (sscanf(arg, "%d.%d%n", &major, &minor, &used) != 2 || arg[used] || major < 1 ||
	    major > 99 || minor < 0 || minor > 9)
		return cli_usage_error(c, "--cuda: '%s' is not a CUDA version like 12.8", arg);
	snprintf(buf, sizeof buf, "cu%d%d", major, minor);
	return cli_strlist_add_csv(&o->variants, buf);
}

/* "cuda12.8", "cu12.8", "12.8", "cuda128": a CUDA version written where
 * the index's folder name (cu128) belongs; 0 with that name in buf. */
static int variant_typo(const char *v, char *buf, size_t n)
{
	int major, minor, used = 0;
	if (!strncmp(v, "cuda", 4))
		v += 4;
	else if (!strncmp(v, "cu", 2) && strchr(v, '.'))
		v += 2;
	if (!*v || !strchr("0123456789", *v))
		return 1;
	if (sscanf(v, "%d.%d%n", &major, &minor, &used) == 2 && !v[used] && major > 0 &&
	    minor >= 0 && minor <= 9)
		return snprintf(buf, n, "cu%d%d", major, minor) < 0;
	if (strspn(v, "0123456789") == strlen(v))
		return snprintf(buf, n, "cu%s", v) < 0;
	return 1;
}

static int add_variants(struct cli *c, struct cli_index_opts *o, const char *arg)
{
	size_t first = o->variants.n;
	char hint[32];
	if (cli_strlist_add_csv(&o->variants, arg))
		return 1;
	for (size_t i = first; i < o->variants.n; i++) {
		if (strlen(o->variants.v[i]) >= OW_VARIANT_MAX)
			return cli_usage_error(c, "--variant: '%.60s...' is %zu bytes, longer than the "
			                          "%d an index folder name may be (cu128, cpu, rocm6.4)",
			                       o->variants.v[i], strlen(o->variants.v[i]),
			                       OW_VARIANT_MAX - 1);
		if (!variant_typo(o->variants.v[i], hint, sizeof hint))
			return cli_usage_error(c, "--variant: '%s' is not an index folder name; "
			                          "did you mean %s?",
			                       o->variants.v[i], hint);
		if (!strcmp(o->variants.v[i], "all"))
			o->variants.v[i][0] = '\0'; /* {index}/{project}/: every variant */
	}
	return 0;
}

/* The first n bytes of it are the name `want`. */
static bool is_name(const char *it, size_t n, const char *want)
{
	return strlen(want) == n && !memcmp(it, want, n);
}

/* --project torch==2.14.0: a pip requirement where a name belongs. */
static int project_has_version(struct cli *c, const char *it)
{
	size_t name = strcspn(it, "=<>!~ ;@");
	if (!it[name])
		return 0;
	const char *ver = it + name + strspn(it + name, "=<>!~ ");
	int bl = (int)name;
	if (is_name(it, name, "torch"))
		return cli_usage_error(c, "--project: '%s' has a version; use --project torch "
		                          "--version %s",
		                       it, ver);
	if (is_name(it, name, "torchvision") || is_name(it, name, "torchaudio"))
		return cli_usage_error(c, "--project: '%s' has a version; give the name only and "
		                          "pick the torch with --version (%.*s follows it, see --pair)",
		                       it, bl, it);
	return cli_usage_error(c, "--project: '%s' is not a project name; give the name "
	                          "only (%.*s)",
	                       it, bl, it);
}

/* --project torch[opt-einsum],torchvision: names to crawl and resolve,
 * the extras (normalized later by the resolver) kept beside them. */
static int add_projects(struct cli *c, struct cli_index_opts *o, const char *arg)
{
	struct cli_strlist items = {0};
	int rc = cli_strlist_add_csv(&items, arg);
	for (size_t i = 0; !rc && i < items.n; i++) {
		char *it = items.v[i], *br = strchr(it, '[');
		const char *extras = "";
		if ((rc = project_has_version(c, it)))
			break;
		if (br == it) {
			rc = cli_usage_error(c, "--project: '%s' has extras but no project name", it);
			break;
		}
		if (br) {
			size_t n = strlen(br);
			if (n < 3 || br[n - 1] != ']' || strchr(br + 1, '[')) {
				rc = cli_usage_error(c, "--project: '%s' is not NAME or NAME[EXTRA,...] "
				                        "(for example torch[opt-einsum])",
				                     it);
				break;
			}
			br[n - 1] = '\0';
			*br = '\0';
			extras = br + 1;
		}
		char **ge = realloc(o->project_extras, (o->projects.n + 1) * sizeof *ge);
		if (!ge)
			rc = 1;
		else {
			o->project_extras = ge;
			ge[o->projects.n] = strdup(extras);
			rc = !ge[o->projects.n] || cli_strlist_add_csv(&o->projects, it);
		}
	}
	cli_strlist_dispose(&items);
	return rc;
}

/* The userinfo of `in` into o->logins; *bare (malloc'd) is `in` without it.
 * 0 or an exit code. */
static int take_login(struct cli *c, struct cli_index_opts *o, const char *opt, const char *in,
                      char **bare)
{
	int rc = o->logins ? 0 : ow_logins_new(&o->logins);
	if (!rc)
		rc = ow_logins_take_url(o->logins, in, bare);
	if (rc)
		return rc == OW_ENOMEM ? cli_fail(c, rc) : cli_usage_error(c, "%s: %s", opt, ow_err_detail());
	return 0;
}

int cli_index_root_url(struct cli *c, struct cli_index_opts *o, const char *opt, const char *in,
                       char *out, size_t n)
{
	char *bare = NULL;
	int rc = take_login(c, o, opt, in, &bare);
	if (rc || !bare) /* an exit code, never 0 without the URL */
		return rc ? rc : 1;
	size_t len = strlen(bare);
	while (len && bare[len - 1] == '/')
		len--;
	if (!len || len >= n) {
		rc = cli_usage_error(c, "%s: '%s' is %s", opt, bare, len ? "too long" : "empty");
		free(bare);
		return rc;
	}
	memcpy(out, bare, len);
	out[len] = '\0';
	free(bare);
	const char *q = strpbrk(out, "?#");
	if (q)
		return cli_usage_error(c, "%s: '%s' has a %s; the project pages are {index}/{project}/, "
		                          "so an index URL is a plain root such as "
		                          "https://download.pytorch.org/whl/cu128 — drop the part from "
		                          "'%c' on",
		                       opt, out, *q == '?' ? "query string" : "fragment", *q);
	return 0;
}

static int add_extra(struct cli *c, struct cli_index_opts *o, const char *arg)
{
	char url[2048];
	int rc = cli_index_root_url(c, o, "--extra-index-url", arg, url, sizeof url);
	if (rc)
		return rc;
	if (o->extra.n >= 8)
		return cli_usage_error(c, "--extra-index-url: at most 8 extra indexes");
	char **g = realloc(o->extra.v, (o->extra.n + 1) * sizeof *g);
	if (!g)
		return 1;
	o->extra.v = g;
	return !(o->extra.v[o->extra.n++] = strdup(url));
}

/* A local path as a file: URL: absolute, its bytes outside the unreserved
 * set percent-encoded. */
static int path_url(struct cli *c, const char *path, char *out, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	char *real = realpath(path, NULL);
	size_t k = 0;
	if (!real)
		return cli_usage_error(c, "--find-links: '%s': %s (give a directory of wheels, a "
		                          "page's URL, or a file: URL)", path, strerror(errno));
	k = (size_t)snprintf(out, n, "file://");
	const unsigned char *p = (const unsigned char *)real;
	for (; *p && k + 4 < n; p++) {
		if (strchr("/-._~!+", *p) || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9'))
			out[k++] = (char)*p;
		else {
			out[k++] = '%';
			out[k++] = hex[*p >> 4];
			out[k++] = hex[*p & 15];
		}
	}
	out[k] = '\0';
	bool whole = !*p;
	free(real);
	return whole ? 0 : cli_usage_error(c, "--find-links: '%s' is too long", path);
}

/* --find-links URL|DIR[,...]: each source as a root (cli_index_root_url, as
 * --extra-index-url's), a path as its file: URL. */
static int add_find_links(struct cli *c, struct cli_index_opts *o, const char *arg)
{
	struct cli_strlist items = {0};
	char url[2048] = "", given[2048] = "";
	int rc = cli_strlist_add_csv(&items, arg);
	for (size_t i = 0; !rc && i < items.n; i++) {
		const char *it = items.v[i];
		bool is_url = strstr(it, "://") || !strncmp(it, "file:", 5);
		if (!is_url && (rc = path_url(c, it, given, sizeof given)))
			break;
		if ((rc = cli_index_root_url(c, o, "--find-links", is_url ? it : given, url,
		                              sizeof url)))
			break;
		if (o->find_links.n >= 8) {
			rc = cli_usage_error(c, "--find-links: at most 8 sources");
			break;
		}
		/* the item has no comma, nor has its URL (a path's is %2C) */
		rc = cli_strlist_add_csv(&o->find_links, url);
	}
	cli_strlist_dispose(&items);
	return rc;
}

const char *const *cli_index_opts_folders(const struct cli_index_opts *o, size_t *n)
{
	static const char *const root[] = {""};
	*n = o->flat ? 1 : o->variants.n;
	return o->flat ? root : (const char *const *)o->variants.v;
}

int cli_index_opt(struct cli *c, struct cli_index_opts *o, int key, const char *arg)
{
	switch (key) {
	case IDX_INDEX_URL:
		o->index_url = arg;
		return 0;
	case IDX_EXTRA_INDEX_URL:
		return add_extra(c, o, arg);
	case IDX_FIND_LINKS:
		return add_find_links(c, o, arg);
	case IDX_NO_INDEX:
		o->no_index = 1;
		return 0;
	case IDX_CHANNEL:
		if (!ow_channel_index(arg))
			return cli_usage_error(c, "--channel: '%s' is not nightly, stable or test", arg);
		o->channel = arg;
		return 0;
	case IDX_VARIANT:
		return add_variants(c, o, arg);
	case IDX_CUDA:
		return add_cuda(c, o, arg);
	case IDX_PROJECT:
		return add_projects(c, o, arg);
	case IDX_TRUSTED_HOST:
		return cli_strlist_add_csv(&o->trusted, arg);
	case IDX_ALLOW_HOST:
		return cli_strlist_add_csv(&o->allowed, arg);
	case IDX_ALLOW_FILE_OUTSIDE_ROOT:
		o->file_outside_root = 1;
		return 0;
	case IDX_CERT:
		o->cert = arg;
		return 0;
	case IDX_FORCE:
		o->force = 1;
		return 0;
	case IDX_STALL:
		return cli_int_arg(c, "--stall-timeout", arg, 1, 3600, &o->stall_s);
	case IDX_MIN_RATE:
		o->rate_given = 1;
		return cli_int_arg(c, "--min-rate", arg, 0, 1 << 30, &o->min_rate);
	case IDX_DEADLINE:
		o->deadline_given = 1;
		return cli_int_arg(c, "--deadline", arg, 0, 7 * 86400, &o->deadline_s);
	case IDX_MAX_AGE:
		o->max_age_given = 1;
		if (ow_gc_parse_prune(arg, &o->max_age))
			return cli_usage_error(c, "--max-age: '%s' is not an age: N (seconds), Ns, Nm, "
			                          "Nh, Nd or Nw (for example 6h), or now",
			                       arg);
		return 0;
	}
	return -1;
}

static int host_of(const char *url, char *buf, size_t n)
{
	struct ow_url u;
	if (ow_url_parse(url, &u))
		return 1;
	if (u.port > 0)
		snprintf(buf, n, "%s:%d", u.host, u.port);
	else
		snprintf(buf, n, "%s", u.host ? u.host : "");
	ow_url_clear(&u);
	return 0;
}

/* A file:// index: file: links must stay below its root (the link rule,
 * docs/index-quirks.md). */
static int add_file_root(struct cli *c, const char *opt, struct ow_url_policy *p,
                         const char *url)
{
	if (strncmp(url, "file:", 5))
		return 0;
	p->allow_file = 1;
	if (ow_url_policy_add_file_root(p, url))
		return cli_usage_error(c, "%s: %s", opt, ow_err_detail());
	return 0;
}

/* A further root (an extra index, a find-links source): its host allowed,
 * its folder a file root when it is local. */
static int add_root_policy(struct cli *c, struct cli_index_opts *o, const char *opt,
                           const char *u)
{
	char host[512];
	int rc;
	if (host_of(u, host, sizeof host))
		return cli_usage_error(c, "%s: '%s' is not a URL: %s", opt, u, ow_err_detail());
	if ((rc = add_file_root(c, opt, &o->policy, u)))
		return rc;
	if (*host && ((rc = ow_url_policy_add_host(&o->policy, host)) ||
	              (o->offline && (rc = ow_url_policy_add_trusted(&o->policy, host)))))
		return cli_fail(c, rc);
	if ((rc = ow_url_check_page(&o->policy, u)))
		return cli_usage_error(c, "%s: %s", opt, ow_err_detail());
	return 0;
}

static int build_policy(struct cli *c, struct cli_index_opts *o)
{
	char host[512];
	int rc = ow_url_policy_init(&o->policy);
	for (size_t i = 0; !rc && i < o->allowed.n; i++)
		rc = ow_url_policy_add_host(&o->policy, o->allowed.v[i]);
	for (size_t i = 0; !rc && i < o->trusted.n; i++)
		rc = ow_url_policy_add_trusted(&o->policy, o->trusted.v[i]);
	if (rc)
		return cli_fail(c, rc);
	if (host_of(o->index, host, sizeof host))
		return cli_usage_error(c, "%s: '%s' is not a URL: %s", o->index_src, o->index,
		                       ow_err_detail());
	o->policy.allow_file_outside_root = o->file_outside_root;
	const char *iopt = o->no_index ? "--find-links" : o->index_src;
	if ((rc = add_file_root(c, iopt, &o->policy, o->index)))
		return rc;
	if (*host && (rc = ow_url_policy_add_host(&o->policy, host)))
		return cli_fail(c, rc);
	/* Offline, the URL only names which stored pages to read: nothing goes
	 * over the wire, so plain http is nothing to guard against (the pages
	 * were crawled under the policy that applied then). */
	if (o->offline && *host && (rc = ow_url_policy_add_trusted(&o->policy, host)))
		return cli_fail(c, rc);
	if ((rc = ow_url_check_page(&o->policy, o->index)))
		return cli_usage_error(c, "%s: %s", iopt, ow_err_detail());
	for (size_t i = 0; i < o->extra.n; i++)
		if ((rc = add_root_policy(c, o, "--extra-index-url", o->extra.v[i])))
			return rc;
	for (size_t i = 0; i < o->find_links.n; i++)
		if ((rc = add_root_policy(c, o, "--find-links", o->find_links.v[i])))
			return rc;
	return 0;
}

/* A resolve's round is a batch of small requests (pages, .metadata files,
 * range reads) whose cost is round trips, not bytes: 4 at a time to a host
 * made a cold resolve of a whole stack wait through ten sequential batches
 * per round.  uv runs 50 at once; offwheel 32 in all, 16 to one host, or
 * what --jobs says. */
#define INDEX_SMALL_JOBS 32u
#define INDEX_SMALL_PER_HOST 16u

static void small_opts(const struct cli *c, struct cli_index_opts *o)
{
	o->http_small = o->http;
	if (c->jobs_given) {
		o->http_small.per_host = o->http.jobs < INDEX_SMALL_PER_HOST ? o->http.jobs
		                                                             : INDEX_SMALL_PER_HOST;
		return;
	}
	o->http_small.jobs = INDEX_SMALL_JOBS;
	o->http_small.per_host = INDEX_SMALL_PER_HOST;
}

/* A channel's index: download.pytorch.org's, or the same path under
 * $OFFWHEEL_PYTORCH_URL, a lab's mirror of https://download.pytorch.org/whl
 * (stable at its root, nightly/ and test/ below it). */
const char *cli_index_opts_channel_url(const char *channel, char *buf, size_t n)
{
	const char *env = getenv("OFFWHEEL_PYTORCH_URL"), *url = ow_channel_index(channel);
	char *mirror = NULL;
	if (!env || !*env || !url)
		return url;
	/* its userinfo, if any, is kept by cli_index_opts_finish, never shown */
	if (ow_logins_take_url(NULL, env, &mirror))
		return NULL;
	size_t m = strlen(mirror);
	while (m && mirror[m - 1] == '/')
		m--;
	const char *path = url + strlen(OW_INDEX_STABLE);
	size_t t = strlen(path);
	if (m + t < n) { /* else refused, never cut */
		memcpy(buf, mirror, m);
		memcpy(buf + m, path, t + 1);
	}
	free(mirror);
	return m + t < n ? buf : NULL;
}

/* The index root in o->index, and where it came from in o->index_src (for
 * messages): --index-url, $OFFWHEEL_PYTORCH_URL (whose userinfo becomes a
 * login) or the channel's own. */
static int index_root(struct cli *c, struct cli_index_opts *o)
{
	char chan[sizeof o->index], shown[320];
	const char *env = getenv("OFFWHEEL_PYTORCH_URL");
	const char *channel = o->channel ? o->channel : "nightly";
	if (o->index_url && o->channel) {
		ow_url_printable(o->index_url, shown, sizeof shown);
		return cli_usage_error(c, "--channel %s and --index-url %s: give one of them (a "
		                          "channel names an index: %s)",
		                       o->channel, shown, ow_channel_index(o->channel));
	}
	if (o->index_url)
		return cli_index_root_url(c, o, o->index_src = "--index-url", o->index_url, o->index,
		                          sizeof o->index);
	o->index_src = env && *env ? "OFFWHEEL_PYTORCH_URL" : "--channel";
	/* the mirror's login, for its host (the channel's URL below has none) */
	char *bare = NULL;
	int rc = env && *env ? take_login(c, o, o->index_src, env, &bare) : 0;
	free(bare);
	if (rc)
		return rc;
	const char *base = cli_index_opts_channel_url(channel, chan, sizeof chan);
	if (!base) {
		ow_url_printable(env ? env : "", shown, sizeof shown);
		return cli_usage_error(c, "OFFWHEEL_PYTORCH_URL: '%s' is too long: the %s channel's "
		                          "index URL under it needs fewer than %zu bytes",
		                       shown, channel, sizeof chan);
	}
	return cli_index_root_url(c, o, o->index_src, base, o->index, sizeof o->index);
}

/* --no-index: the first --find-links source is the index, one root
 * without variant folders (the variant named per target from the torch). */
static int no_index(struct cli *c, struct cli_index_opts *o)
{
	if (!o->find_links.n)
		return cli_usage_error(c, "--no-index reads only the --find-links sources: give at "
		                          "least one (--find-links DIR or URL)");
	if (o->index_url || o->channel || o->extra.n)
		return cli_usage_error(c, "--no-index reads no index: drop --%s",
		                       o->index_url ? "index-url" : o->channel ? "channel"
		                                                             : "extra-index-url");
	if (o->variants.n)
		return cli_usage_error(c, "--no-index: a find-links source has no variant folders; "
		                          "drop --variant/--cuda (the variant is named from the torch "
		                          "taken)");
	return 0;
}

/* --no-index: one root, its variant named per target ("") */
static int no_index_root(struct cli_index_opts *o)
{
	char **g = realloc(o->variants.v, sizeof *g);
	if (!g)
		return 1;
	o->variants.v = g;
	o->flat = 1;
	/* analyzer: kept in o->variants.v[0], freed by cli_strlist_dispose */
	return !(o->variants.v[o->variants.n++] = strdup(""));
}

int cli_index_opts_finish(struct cli *c, struct cli_index_opts *o)
{
	int rc = 0;
	if (o->no_index && !(rc = no_index(c, o))) {
		/* the first source is the index: its URL is bare already */
		o->index_src = "--find-links";
		if (strlen(o->find_links.v[0]) >= sizeof o->index)
			rc = cli_usage_error(c, "--find-links: '%s' is too long", o->find_links.v[0]);
		else
			memcpy(o->index, o->find_links.v[0], strlen(o->find_links.v[0]) + 1);
	} else if (!o->no_index) {
		rc = index_root(c, o);
	}
	if (rc)
		return rc;
	/* --index-url .../whl/cu128 (what pip users type): that folder is the
	 * whole index, dependencies included, as pip reads it */
	char probe[sizeof o->index + 4], folder[64];
	snprintf(probe, sizeof probe, "%s/x", o->index);
	ow_variant_of_url(probe, folder, sizeof folder);
	if (o->index_url && !o->variants.n && *folder) {
		o->flat = 1;
		if (cli_strlist_add_csv(&o->variants, folder))
			return 1;
	}
	if (o->no_index && (rc = no_index_root(o)))
		return rc;
	o->variants_default = !o->variants.n;
	if (!o->variants.n && cli_strlist_add_csv(&o->variants, "cu126,cu128,cu130,cpu"))
		return 1;
	if (!o->projects.n && cli_strlist_add_csv(&o->projects, "torch,torchvision,torchaudio"))
		return 1;
	if (!o->max_age_given)
		o->max_age = OW_RESOLVE_MAX_AGE_DEFAULT;
	ow_http_opts_default(&o->http);
	o->http.ca_file = o->cert;
	/* offline nothing is sent: no netrc to read (nor to warn about) */
	if (!o->offline && (rc = ow_logins_read_netrc(o->logins, NULL)))
		return cli_fail(c, rc);
	o->http.logins = o->logins;
	if (o->stall_s)
		o->http.low_speed_time_s = o->stall_s;
	if (o->rate_given)
		o->http.min_rate_bytes = o->min_rate;
	if (o->deadline_given)
		o->http.deadline_floor_ms = (long)o->deadline_s * 1000;
	if (c->jobs_given)
		o->http.jobs = (unsigned)c->jobs;
	small_opts(c, o);
	return build_policy(c, o);
}

void cli_index_opts_dispose(struct cli_index_opts *o)
{
	cli_strlist_dispose(&o->variants);
	for (size_t i = 0; o->project_extras && i < o->projects.n; i++)
		free(o->project_extras[i]);
	free(o->project_extras);
	o->project_extras = NULL;
	cli_strlist_dispose(&o->projects);
	cli_strlist_dispose(&o->trusted);
	cli_strlist_dispose(&o->allowed);
	cli_strlist_dispose(&o->extra);
	cli_strlist_dispose(&o->find_links);
	ow_url_policy_clear(&o->policy);
	ow_logins_free(o->logins);
	o->logins = NULL;
}

int cli_index_find_links_hint(struct cli *c, const struct cli_index_opts *o, ow_store *s)
{
	struct ow_crawl_opts co = {.index_url = o->index, .policy = &o->policy, .http = &o->http,
	                           .find_links = (const char *const *)o->find_links.v,
	                           .nfind_links = o->find_links.n};
	size_t nfiles = 0;
	if (o->no_index || o->offline || !o->projects.n)
		return 0;
	int rc = ow_crawl_find_links_hint(s, &co, o->projects.v[0], &nfiles);
	if (rc < 0)
		return cli_fail(c, rc);
	if (!rc)
		return 0;
	return cli_usage_error(c, "%s is not an index: it has no project pages (%s/%s/ is not "
	                          "there), but the URL itself is a page that links %zu "
	                          "distribution file(s), as a directory listing of wheels does; "
	                          "give it as --find-links %s (with --no-index to read only it, "
	                          "as pip does)",
	                       o->index, o->index, o->projects.v[0], nfiles, o->index);
}
