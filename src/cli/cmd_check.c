/* cmd_check.c - offwheel check: verify an export on the target. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "clitext.h"
#include "offwheel/export.h"
#include "mixedargs.h"
#include "offwheel/str.h"
#include "offwheel/url.h"

static const char usage[] =
	"check DIR|s3://BUCKET/PREFIX|URL --pubkey KEY.pub [--state FILE] [--endpoint URL]";
static const char description[] =
	"Verify an export (offwheel export) before installing from it: the signature\n"
	"of SHA256SUMS by the trusted public key first (unknown key, bad signature,\n"
	"trailing data are refused before anything else is read), then manifest.json\n"
	"against the signed SHA256SUMS, its paths (no '..', absolute, backslash, case\n"
	"collisions), every file re-hashed, files missing or not in the manifest,\n"
	"expiry, and rollback: the last accepted sequence per key and export name is\n"
	"kept in a state file ($XDG_STATE_HOME/offwheel/accepted.json, else\n"
	"~/.local/state/offwheel/accepted.json) and an older copy is refused.\n"
	"Links, FIFOs and devices on the stick are problems and are never opened or\n"
	"followed.  Needs no workspace.  s3://BUCKET/PREFIX checks an export on an\n"
	"object store (credentials as for export, else anonymous reads; objects in its\n"
	"simple/, wheels/, requirements/, tools/ that the manifest does not list are\n"
	"problems), and an http(s)://\n"
	"URL one behind a web server or a store's gateway, exactly as the machines\n"
	"will fetch it: every object is streamed through SHA-256, nothing is stored.\n"
	"Exit 0 when all holds, 3 otherwise (one line per problem), 1 when the public\n"
	"key cannot be read or the store cannot be reached.";

enum { OPT_PUBKEY = 400, OPT_STATE, OPT_AT, OPT_ENDPOINT, OPT_CERT };
static const struct cli_opt opts[] = {
	{"pubkey", OPT_PUBKEY, required_argument, "KEY.pub", "the trusted public key (required)"},
	{"state", OPT_STATE, required_argument, "FILE", "the accepted-sequence state file"},
	{"at", OPT_AT, required_argument, "UNIX",
	 "check as of this time, in seconds since 1970 (will it still be valid then?; default now)"},
	{"endpoint", OPT_ENDPOINT, required_argument, "URL",
	 "s3://: the store's S3 API URL (default $AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL, else AWS)"},
	{"cert", OPT_CERT, required_argument, "FILE", "https: trust this CA file (PEM)"},
	{NULL, 0, 0, NULL, NULL},
};

struct check_args {
	const char *pubkey, *state, *endpoint, *cert;
	long long at;
};

static int on_opt(struct cli *c, int key, const char *arg, void *ud)
{
	struct check_args *a = ud;
	if (key == OPT_AT) {
		char *end;
		a->at = strtoll(arg, &end, 10);
		return *arg && !*end && a->at > 0 ? 0 : cli_usage_error(c, "--at: '%s' is not a unix "
		                                                           "time", arg);
	}
	if (key == OPT_PUBKEY)
		a->pubkey = arg;
	else if (key == OPT_STATE)
		a->state = arg;
	else if (key == OPT_ENDPOINT)
		a->endpoint = arg;
	else if (key == OPT_CERT)
		a->cert = arg;
	else
		return 2;
	return 0;
}


static json_t *problem_json(const struct ow_check_problem *p)
{
	json_t *o = json_pack("{s:s}", "kind", p->kind);
	if (o && ((p->path && cli_json_set_bytes(o, "path", p->path)) ||
	          (p->detail && cli_json_set_bytes(o, "detail", p->detail)))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *device_json(const struct ow_check_device *d)
{
	json_t *o = json_pack("{s:s, s:s?, s:s, s:o, s:b}", "cc", d->cc, "driver",
	                      d->driver[0] ? d->driver : NULL, "verdict", d->verdict, "runs",
	                      d->runs < 0 ? json_null() : json_boolean(d->runs), "predicted",
	                      d->predicted);
	if (o && d->detail && cli_json_set_bytes(o, "detail", d->detail)) {
		json_decref(o);
		return NULL;
	}
	if (o && !d->detail)
		json_object_set_new(o, "detail", json_null());
	return o;
}

/* Per set of the manifest: the devices it was audited for. */
static json_t *sets_json(const struct ow_check_report *r)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < r->nsets; i++) {
		json_t *devs = json_array(), *o = json_object();
		for (size_t k = 0; devs && k < r->sets[i].n; k++)
			json_array_append_new(devs, device_json(&r->sets[i].devices[k]));
		if (o && cli_json_set_bytes(o, "target", r->sets[i].target) == 0)
			json_object_set_new(o, "devices", devs);
		else
			json_decref(devs);
		json_array_append_new(a, o);
	}
	return a;
}

/* "  cu128 cp312-…: audited for 12.0: runs (native)", escaped. */
static void say_devices(struct cli *c, const struct ow_check_report *r)
{
	for (size_t i = 0; i < r->nsets; i++) {
		const struct ow_check_set *set = &r->sets[i];
		char *target = cli_printable_dup(set->target);
		if (!set->n)
			cli_say(c, "  %s: not audited for any device\n", target ? target : "");
		for (size_t k = 0; k < set->n; k++) {
			const struct ow_check_device *d = &set->devices[k];
			char *detail = d->detail && d->runs == 0 ? cli_printable_dup(d->detail) : NULL;
			cli_say(c, "  %s: audited for %s%s%s: %s (%s%s)%s%s\n", target ? target : "",
			        d->cc, d->driver[0] ? " with driver " : "", d->driver,
			        d->runs > 0 ? "runs" : d->runs == 0 ? "WOULD NOT RUN" : "unknown",
			        d->verdict, d->predicted ? ", predicted from torchvision" : "",
			        detail ? " — " : "", detail ? detail : "");
			free(detail);
		}
		free(target);
	}
}

static json_t *problems_json(const struct ow_check_problem *v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < n; i++)
		json_array_append_new(a, problem_json(&v[i]));
	return a;
}

/* Names on a stick are hostile bytes: one valid JSON document whatever they are. */
static void render_json(const char *dir, const struct ow_check_report *r)
{
	json_t *probs = problems_json(r->problems, r->n);
	json_t *doc = json_pack("{s:s, s:b, s:s?, s:I, s:I, s:o, s:I, s:I, s:o}",
	                        "command", "check", "valid", r->valid, "key_id",
	                        *r->key_id ? r->key_id : NULL, "sequence", (json_int_t)r->sequence,
	                        "accepted_before", (json_int_t)r->accepted, "expires",
	                        r->expires ? json_integer(r->expires) : json_null(),
	                        "files", (json_int_t)r->files, "bytes", (json_int_t)r->bytes,
	                        "problems", probs);
	if (doc) {
		json_object_set_new(doc, "sets", sets_json(r));
		json_object_set_new(doc, "name", *r->name ? json_string(r->name) : json_null());
		json_object_set_new(doc, "warnings", problems_json(r->warnings, r->nwarnings));
	}
	if (doc && cli_json_set_bytes(doc, "dir", dir)) {
		json_decref(doc);
		doc = NULL;
	}
	cli_json_out(doc);
}

static void render_warnings(const char *dir, const struct ow_check_report *r)
{
	for (size_t i = 0; i < r->nwarnings; i++) {
		const struct ow_check_problem *w = &r->warnings[i];
		struct ow_str b = {0};
		char *msg = NULL;
		ow_str_printf(&b, "%s/%s: %s", dir, w->path ? w->path : "", w->detail ? w->detail : "");
		char *safe = ow_str_take(&b, &msg) ? NULL : cli_terminal_dup(msg);
		cli_wrapped(stderr, "offwheel check: warning: ", safe ? safe : "(out of memory)");
		free(safe);
		free(msg);
	}
}

void cli_check_problem_lines(const struct ow_check_report *r)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct ow_check_problem *p = &r->problems[i];
		char *path = p->path ? cli_printable_dup(p->path) : NULL;
		char *detail = p->detail ? cli_printable_dup(p->detail) : NULL;
		cli_wrapf(stderr, "%-9s %s%s%s\n", p->kind, path ? path : "", path ? ": " : "",
		        detail ? detail : "");
		free(path);
		free(detail);
	}
}

/* One line per problem; names are shown escaped, never replayed to the terminal. */
static void render(struct cli *c, const char *dir, const struct ow_check_report *r)
{
	char b[32], exp[32];
	if (c->json)
		return render_json(dir, r);
	cli_check_problem_lines(r);
	char *shown = cli_printable_dup(dir);
	time_t t = (time_t)r->expires;
	struct tm tm;
	if (!gmtime_r(&t, &tm) || !strftime(exp, sizeof exp, "%Y-%m-%dT%H:%M:%SZ", &tm))
		exp[0] = '\0';
	render_warnings(dir, r);
	if (r->valid) { /* the verdict last, alone with -q */
		say_devices(c, r);
		cli_out(c, "%s: valid — %s%s%s%zu files (%s), sequence %lld signed by key %s, expires "
		        "%s\n", shown ? shown : "", *r->name ? "'" : "", r->name, *r->name ? "', " : "",
		        r->files, cli_bytes(r->bytes, b, sizeof b), (long long)r->sequence, r->key_id,
		        exp);
	} else
		cli_wrapf(stderr, "%s: NOT valid — %zu problem%s; do not install from it\n",
		        shown ? shown : "", r->n, r->n == 1 ? "" : "s");
	free(shown);
}

int cmd_check(struct cli *c, int argc, char **argv)
{
	struct check_args a = {0};
	const struct cli_spec cs = {opts, usage, description, on_opt, &a};
	int nops, first = cli_parse_mixed(c, argc, argv, &cs, &nops);
	if (first < 0)
		return cli_parse_exit(first);
	if (nops != 1)
		return cli_usage_error(c, "check: name one export directory");
	if (!a.pubkey)
		return cli_usage_error(c, "check: --pubkey KEY.pub is required (the key you trust)");
	struct ow_signify_pub pub;
	int rc = ow_signify_load_pub(a.pubkey, &pub);
	if (rc)
		return cli_fail(c, rc);
	struct ow_check_opts o = {.dir = argv[1], .pub = &pub, .state_path = a.state,
	                          .jobs = c->jobs, .now = a.at, .endpoint = a.endpoint,
	                          .ca_file = a.cert};
	struct ow_check_report r;
	rc = ow_export_check(&o, &r);
	char url[PATH_MAX]; /* a URL's userinfo (user:password@) shown as "***" */
	if (strstr(argv[1], "://"))
		ow_url_printable(argv[1], url, sizeof url);
	if (rc == 0 || rc == OW_EVERIFY)
		render(c, strstr(argv[1], "://") ? url : argv[1], &r);
	else
		rc = cli_fail(c, rc);
	ow_check_report_dispose(&r);
	return rc == OW_EVERIFY ? 3 : rc;
}
