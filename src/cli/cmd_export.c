/* cmd_export.c - offwheel export: a signed tree for pip --no-index. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "clitext.h"
#include "fleetplan.h"
#include "offwheel/devicefit.h"
#include "offwheel/export.h"
#include "offwheel/gpucompat.h"
#include "mixedargs.h"
#include "offwheel/str.h"
#include "targetopts.h"

static const char usage[] =
	"export DIR|s3://BUCKET/PREFIX [SET-ID...] [--target T]... [--all-sets [--index URL]] [--file NAME]... "
	"[--sign KEY] [--name NAME] [--sequence N] [--endpoint URL] [--device CC[,CC]] [--force] "
	"[--probes DIR|FILE]";
static const char description[] =
	"Write a self-contained tree that pip installs from with no network (a USB\n"
	"stick, a lab file server): DIR/simple/ (PEP 503 + PEP 658), DIR/wheels/,\n"
	"DIR/requirements/<target>.txt (pinned, --hash), DIR/INSTALL.txt (the pip\n"
	"commands), DIR/manifest.json (sets, files, sequence, expiry), DIR/SHA256SUMS\n"
	"and DIR/SHA256SUMS.sig (signify, written last).  Wheels are copied from the\n"
	"store while being re-hashed; files already there with the right bytes are\n"
	"kept.  DIR must be empty or a previous export: offwheel replaces or removes\n"
	"only files its previous export listed (signed by the same key, or recorded\n"
	"by this workspace) and refuses, changing nothing, when DIR holds anything\n"
	"else (your own files, links, FIFOs).  Links inside DIR are never followed.\n"
	"An export has a name (--name; by default the one the stick already has, else\n"
	"DIR's last component): targets keep the last sequence they accepted per key\n"
	"and name, so one key signs any number of sticks.  The sequence is the time\n"
	"in Unix seconds, or one above the last this workspace signed for the key and\n"
	"name (or the stick's, when its signature verifies with it) when that is\n"
	"higher; --sequence N sets it.  Check it on the target with\n"
	"'offwheel check DIR --pubkey KEY.pub' or, without offwheel,\n"
	"'signify-openbsd -V -p KEY.pub -m SHA256SUMS && sha256sum -c SHA256SUMS'.\n"
	"s3://BUCKET/PREFIX publishes the same tree to an S3-compatible object store\n"
	"(AWS S3, Ceph RGW, MinIO, SeaweedFS; --endpoint or $AWS_ENDPOINT_URL):\n"
	"credentials from $AWS_ACCESS_KEY_ID/$AWS_SECRET_ACCESS_KEY ($AWS_SESSION_TOKEN),\n"
	"else ~/.aws/credentials [$AWS_PROFILE]; every PUT carries its SHA-256, objects\n"
	"already there with the same checksum are kept, the signature goes last and\n"
	"only objects of the previous export are ever removed.  Machines install\n"
	"from the store's gateway with pip --find-links URL/wheels/index.html; with\n"
	"--nginx-conf, a caching reverse proxy for it is written.\n"
	"The device rule: a set the workspace recorded as not running on a GPU\n"
	"(sync/resolve --device, audit set:N --device) is refused, naming the device\n"
	"and the library, unless --force.  --device 12.0[,8.6] ships only the sets\n"
	"that run on every device named (audited now where nothing is recorded) and\n"
	"names the ones left out.  The manifest, INSTALL.txt and check say what each\n"
	"set was audited for.\n"
	"--probes (the lab machines' probes): machines.json, signed, says which set\n"
	"each machine gets (or why none), and INSTALL.txt which file each one uses.\n"
	"Exit 4 when a member is not fetched yet, 3 when the device rule refuses a set\n"
	"or leaves none, 1 on other errors.";

enum { OPT_TARGET = 400, OPT_ALL, OPT_FILE, OPT_SIGN, OPT_EXPIRES, OPT_NGINX, OPT_FAT32,
       OPT_SEQUENCE, OPT_TOOL, OPT_ENDPOINT, OPT_DEVICE, OPT_FORCE, OPT_NAME, OPT_INDEX,
       OPT_PROBES };
static const struct cli_opt opts[] = {
	{"target", OPT_TARGET, required_argument, "T", "the newest set of target T ('ls sets')"},
	{"all-sets", OPT_ALL, no_argument, NULL, "the newest set of every target that is complete and fetched (the rest are named); refused when they come from more than one index"},
	{"index", OPT_INDEX, required_argument, "URL",
	 "with --all-sets: only the sets resolved from this index ('ls sets -v' names each set's)"},
	{"file", OPT_FILE, required_argument, "NAME", "a fetched wheel by file name"},
	{"sign", OPT_SIGN, required_argument, "KEY", "sign with this secret key (offwheel keygen)"},
	{"expires", OPT_EXPIRES, required_argument, "DAYS", "check refuses it after DAYS (90)"},
	{"nginx-conf", OPT_NGINX, required_argument, "FILE",
	 "write an nginx server block for DIR (for s3://: a caching proxy of the store)"},
	{"endpoint", OPT_ENDPOINT, required_argument, "URL",
	 "s3://: the store's S3 API URL (default $AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL, else AWS)"},
	{"with-tool", OPT_TOOL, required_argument, "DEB",
	 "put this offwheel package (cpack's offwheel_*.deb) on the stick as tools/DEB, signed (its name: letters, digits, . _ + ~ - only)"},
	{"fat32", OPT_FAT32, no_argument, NULL, "refuse files of 4 GiB or more (auto on FAT32)"},
	{"name", OPT_NAME, required_argument, "NAME",
	 "the export's name, signed: targets keep its sequence per key and name (default: the "
	 "stick's own, else DIR's last component)"},
	{"sequence", OPT_SEQUENCE, required_argument, "N",
	 "sign sequence N (above every one used with the key; 1 to 2^53)"},
	{"device", OPT_DEVICE, required_argument, "CC[,CC]",
	 "ship only the sets that run on each of these GPUs (12.0, sm_86), audited now if need be"},
	{"force", OPT_FORCE, no_argument, NULL,
	 "ship sets recorded as not running on a device all the same"},
	{"probes", OPT_PROBES, required_argument, "DIR|FILE",
	 "the lab machines' probes: write machines.json (which set each gets, or why none)"},
	{NULL, 0, 0, NULL, NULL},
};


struct export_args {
	const char *targets[64], *files[4096];
	int ntargets, nfiles, all, fat32, expires, force;
	int all_for_probes; /* --probes alone: every set, the machines' chosen among them */
	int ccs[CLI_MAX_DEVICES];
	size_t nccs;
	const char *sign, *nginx, *tool, *endpoint, *name, *index;
	long long sequence;
	struct cli_strlist probes;
};

static int sequence_arg(struct cli *c, const char *arg, long long *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(arg, &end, 10);
	if (!*arg || *end || errno || v < 1 || v > OW_EXPORT_SEQ_MAX)
		return cli_usage_error(c, "--sequence: '%s' is not a number from 1 to 2^53", arg);
	*out = v;
	return 0;
}

static int device_arg(struct cli *c, const char *arg, struct export_args *a)
{
	return cli_parse_devices(c, arg, a->ccs, &a->nccs);
}

static int name_arg(struct cli *c, const char *arg, const char **out)
{
	const char *why = ow_export_name_problem(arg);
	char *shown = why ? cli_terminal_dup(arg) : NULL;
	int rc = why ? cli_usage_error(c, "--name '%.80s': not an export name: %s — give printable "
	                                  "ASCII, at most 64 bytes (say 'lab-torch')",
	                               shown ? shown : "", why)
	             : 0;
	free(shown);
	*out = arg;
	return rc;
}

static int on_opt(struct cli *c, int key, const char *arg, void *ud)
{
	struct export_args *a = ud;
	switch (key) {
	case OPT_TARGET:
		if (a->ntargets == 64)
			return cli_usage_error(c, "export: at most 64 --target");
		a->targets[a->ntargets++] = arg;
		return 0;
	case OPT_FILE:
		if (a->nfiles == 4096)
			return cli_usage_error(c, "export: at most 4096 --file");
		a->files[a->nfiles++] = arg;
		return 0;
	case OPT_ALL: a->all = 1; return 0;
	case OPT_INDEX: a->index = arg; return 0;
	case OPT_FORCE: a->force = 1; return 0;
	case OPT_PROBES: return cli_strlist_add_csv(&a->probes, arg);
	case OPT_DEVICE: return device_arg(c, arg, a);
	case OPT_FAT32: a->fat32 = 1; return 0;
	case OPT_SIGN: a->sign = arg; return 0;
	case OPT_NGINX: a->nginx = arg; return 0;
	case OPT_TOOL: a->tool = arg; return 0;
	case OPT_ENDPOINT: a->endpoint = arg; return 0;
	case OPT_EXPIRES: return cli_int_arg(c, "--expires", arg, 1, 36500, &a->expires);
	case OPT_SEQUENCE: return sequence_arg(c, arg, &a->sequence);
	case OPT_NAME: return name_arg(c, arg, &a->name);
	}
	return 2;
}

static int add_set_ids(struct cli *c, ow_store *s, struct ow_export_plan *p, char **ids, int n)
{
	for (int i = 0; i < n; i++) {
		char *end;
		long long id = strtoll(ids[i], &end, 10);
		if (!*ids[i] || *end || id <= 0)
			return cli_usage_error(c, "export: '%s' is not a set id ('offwheel ls sets'); "
			                          "use --target for a target name", ids[i]);
		int rc = ow_export_add_set(s, p, id);
		if (rc)
			return cli_fail(c, rc);
	}
	return 0;
}

static int build_plan(struct cli *c, ow_store *s, const struct export_args *a, char **ids,
                      int nids, struct ow_export_plan *p)
{
	if (a->index && !a->all)
		return cli_usage_error(c, "export: --index chooses among --all-sets; name the sets "
		                          "otherwise (SET-ID, --target)");
	p->index_url = a->index;
	if (a->all_for_probes)
		p->all_sets_as = "--probes (the machines' sets, chosen among every set in the workspace)";
	int rc = add_set_ids(c, s, p, ids, nids);
	for (int i = 0; !rc && i < a->ntargets; i++)
		if ((rc = ow_export_add_target(s, p, a->targets[i])))
			return cli_fail(c, rc);
	if (!rc && a->all && (rc = ow_export_add_all_sets(s, p)))
		return cli_fail(c, rc);
	for (int i = 0; !rc && i < a->nfiles; i++)
		if ((rc = ow_export_add_file(s, p, a->files[i])))
			return cli_fail(c, rc);
	if (!rc && (rc = ow_export_plan_devices_done(p)))
		return cli_fail(c, rc);
	return rc;
}

/* The device rule's judge: audit what the store holds of the set, record it. */
static int judge_set(void *ud, ow_store *s, int64_t set_id, int cc)
{
	struct ow_device_fit f = {0};
	(void)ud;
	int rc = ow_device_fit_set(s, set_id, cc, 0, &f);
	ow_device_fit_dispose(&f);
	return rc;
}

/* "--all-sets: left out 2 sets: set 1 (cu126 cp311-win_amd64): not fetched
 * (0 of 19 files); set 2 (…): would not run on 12.0 (13 of 18 files
 * fetched); …" (device 0), or the
 * sets the device rule left out (device 1). */
static char *skipped_line(const struct ow_export_plan *p, int device)
{
	struct ow_str b = {0};
	char *out = NULL;
	size_t n = 0;
	for (size_t i = 0; i < p->nskipped; i++)
		n += !p->skipped[i].device == !device;
	if (!n)
		return NULL;
	if (device)
		ow_str_printf(&b, "--device: left out %zu set%s that would not run on every device "
		              "named: ", n, n == 1 ? "" : "s");
	else
		ow_str_printf(&b, "--all-sets: left out %zu set%s: ", n, n == 1 ? "" : "s");
	for (size_t i = 0, k = 0; i < p->nskipped; i++)
		if (!p->skipped[i].device == !device)
			ow_str_printf(&b, "%sset %lld (%s): %s", k++ ? "; " : "",
			              (long long)p->skipped[i].id, p->skipped[i].target,
			              p->skipped[i].reason);
	return ow_str_take(&b, &out) ? NULL : out;
}

static json_t *skipped_json(const struct ow_export_plan *p)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < p->nskipped; i++)
		json_array_append_new(a, json_pack("{s:I, s:s, s:s, s:s}", "set",
		                                   (json_int_t)p->skipped[i].id, "target",
		                                   p->skipped[i].target, "reason",
		                                   p->skipped[i].reason, "rule",
		                                   p->skipped[i].device ? "device" : "incomplete"));
	return a;
}

/* DIR's name is the user's bytes: one valid JSON document, an escaped line. */
/* --device: the verdict, last (alone with -q): "export: 4 sets on the
 * stick, each runs on 12.0 and 8.0; 2 left out (above)". */
static void device_verdict(const struct cli *c, const struct ow_export_plan *p)
{
	if (!p->rule || !p->rule->n)
		return;
	struct ow_str b = {0};
	size_t left = 0;
	for (size_t d = 0; d < p->rule->n; d++) {
		char cc[16];
		ow_gpu_format_cc(p->rule->ccs[d], cc, sizeof cc);
		ow_str_printf(&b, "%s%s", d ? (d + 1 == p->rule->n ? " and " : ", ") : "", cc);
	}
	for (size_t i = 0; i < p->nskipped; i++)
		left += p->skipped[i].device != 0;
	cli_out(c, "export: %zu set%s on the stick, %s on %s%s\n", p->nsets,
	        p->nsets == 1 ? "" : "s", p->nsets == 1 ? "it runs" : "each runs",
	        b.err ? "the devices named" : b.p, left ? "; the sets that would not are left out "
	                                                  "(above)" : "");
	ow_str_dispose(&b);
}

static void render(struct cli *c, const char *dir, const struct ow_export_plan *p,
                   const struct ow_export_report *r)
{
	char b[32], b2[32];
	if (c->json) {
		json_t *doc = json_pack("{s:s, s:I, s:s?, s:I, s:I, s:s, s:I, s:I, s:I, s:I, s:I, "
		                        "s:I, s:s?, s:f}",
		                        "command", "export", "sequence", (json_int_t)r->sequence,
		                        "key_id", *r->key_id ? r->key_id : NULL, "created",
		                        (json_int_t)r->created, "expires", (json_int_t)r->expires,
		                        "manifest_sha256", r->manifest_sha256, "files",
		                        (json_int_t)r->files, "copied", (json_int_t)r->copied, "kept",
		                        (json_int_t)r->kept, "removed", (json_int_t)r->removed, "bytes",
		                        (json_int_t)r->bytes_total, "bytes_copied",
		                        (json_int_t)r->bytes_copied, "fs", *r->fs ? r->fs : NULL,
		                        "seconds", r->seconds);
		if (doc)
			json_object_set_new(doc, "skipped", skipped_json(p));
		if (doc)
			json_object_set_new(doc, "name", json_string(r->name));
		if (doc && cli_json_set_bytes(doc, "dir", dir)) {
			json_decref(doc);
			doc = NULL;
		}
		cli_json_out(doc);
		return;
	}
	char *shown = cli_printable_dup(dir), *line = NULL;
	/* wrapped at spaces on a terminal: a path is never cut in two */
	if (c->verbosity >= 0 &&
	    asprintf(&line, "exported %zu files to %s (%s; copied %zu = %s, kept %zu, removed %zu) "
	                    "in %.1f s", r->files, shown ? shown : "",
	             cli_bytes(r->bytes_total, b, sizeof b), r->copied,
	             cli_bytes(r->bytes_copied, b2, sizeof b2), r->kept, r->removed,
	             r->seconds) >= 0) {
		cli_wrapped(stdout, "", line);
		free(line);
	}
	if (c->verbosity >= 0 &&
	    asprintf(&line, "'%s', sequence %lld, %s%s; see %s/INSTALL.txt", r->name,
	             (long long)r->sequence,
	             *r->key_id ? "signed by key " : "NOT SIGNED (check will refuse it)", r->key_id,
	             shown ? shown : "") >= 0) {
		cli_wrapped(stdout, "", line);
		free(line);
	}
	free(shown);
	for (int device = 0; device < 2 && c->verbosity >= 0; device++) {
		char *sk = skipped_line(p, device);
		if (sk)
			cli_wrapped(stdout, "", sk);
		free(sk);
	}
	device_verdict(c, p);
}

/* --probes: the sets the machines get among those named (all by default),
 * and no other; then machines.json and INSTALL.txt's lines.  0 or an exit
 * code. */
static int machines_texts(struct cli *c, ow_store *s, struct fleet *f, struct ow_export_plan *p,
                          char **json, char **note)
{
	struct ow_export_plan q = {.rule = p->rule, .index_url = p->index_url};
	int rc = fleet_export_texts(s, f, p, json, note);
	for (size_t i = 0; !rc && i < f->n; i++) {
		bool seen = false;
		for (size_t k = 0; k < q.nsets; k++)
			seen |= q.sets[k].id == f->m[i].set_id;
		if (f->m[i].set_id && !seen)
			rc = ow_export_add_set(s, &q, f->m[i].set_id);
	}
	if (!rc && !q.nsets)
		rc = ow_err(OW_ENOENT, "--probes: no set fits any of the machines (see why for each "
		            "with 'offwheel sync --probes')");
	free(*json);
	free(*note);
	*json = *note = NULL;
	if (!rc && !(rc = ow_export_plan_devices_done(&q)))
		rc = fleet_export_texts(s, f, &q, json, note);
	ow_export_plan_dispose(p);
	*p = q;
	return rc ? cli_fail(c, rc) : 0;
}

static int run_export(struct cli *c, const struct export_args *a, const char *arg, char **ids,
                      int nids)
{
	struct ow_signify_sec key;
	ow_store *s = NULL;
	/* --probes: each set goes to the machines it runs on (docs/fleet.md) */
	struct ow_export_devices rule = {.ccs = a->ccs, .n = a->nccs,
	                                 .force = a->force || a->probes.n, .judge = judge_set};
	struct ow_export_plan p = {.rule = &rule};
	int rc = a->sign ? ow_signify_load_sec(a->sign, &key) : 0;
	if (rc)
		return cli_fail(c, rc);
	struct fleet f = {0};
	struct ow_export_extra machines = {.path = "machines.json"};
	char *mjson = NULL, *note = NULL;
	if (!(rc = cli_open_store(c, OW_STORE_UPDATE, &s)) &&
	    !(rc = build_plan(c, s, a, ids, nids, &p)) &&
	    !(rc = a->probes.n ? fleet_load(c, &a->probes, &f) : 0) &&
	    !(rc = f.n ? machines_texts(c, s, &f, &p, &mjson, &note) : 0)) {
		machines.text = mjson;
		machines.len = mjson ? strlen(mjson) : 0;
		struct ow_export_opts o = {.dir = arg, .key = a->sign ? &key : NULL,
		                           .expires_days = a->expires, .fat32 = a->fat32,
		                           .nginx_conf = a->nginx, .tool = a->tool, .jobs = c->jobs,
		                           .sequence = a->sequence, .endpoint = a->endpoint,
		                           .name = a->name, .extras = mjson ? &machines : NULL,
		                           .nextras = mjson ? 1 : 0, .install_note = note};
		struct ow_export_report r;
		int erc = ow_export_run(s, &p, &o, &r);
		rc = erc ? cli_fail(c, erc) : 0;
		if (!erc)
			render(c, r.dir, &p, &r);
		if (!erc && f.n && !c->json)
			fleet_plan_text(c, &f);
	}
	free(mjson);
	free(note);
	fleet_dispose(&f);
	memset(&key, 0, sizeof key);
	ow_export_plan_dispose(&p);
	ow_store_close(s);
	return rc;
}

int cmd_export(struct cli *c, int argc, char **argv)
{
	struct export_args a = {.expires = 90};
	const struct cli_spec cs = {opts, usage, description, on_opt, &a};
	int nops, first = cli_parse_mixed(c, argc, argv, &cs, &nops);
	if (first < 0)
		return cli_parse_exit(first);
	argc = 1 + nops;
	if (first >= argc)
		return cli_usage_error(c, "export: name the directory to write");
	if (first + 1 >= argc && !a.ntargets && !a.all && !a.nfiles && a.probes.n)
		a.all = a.all_for_probes = 1; /* --probes alone: the machines' sets among all */
	if (first + 1 >= argc && !a.ntargets && !a.all && !a.nfiles)
		return cli_usage_error(c, "export: say what to export: SET-ID..., --target, --all-sets "
		                          "or --file");
	if (!*argv[first])
		return cli_usage_error(c, "export: DIR is an empty name — name the directory to write");
	if (a.endpoint && strncmp(argv[first], "s3://", 5))
		return cli_usage_error(c, "export: --endpoint is for s3://BUCKET/PREFIX targets");
	if (a.nccs && a.nfiles)
		return cli_usage_error(c, "export: --device judges sets, and --file wheels belong to "
		                          "none — export them without --device, or check them with "
		                          "'offwheel audit NAME --device CC'");
	if (a.fat32 && !strncmp(argv[first], "s3://", 5))
		return cli_usage_error(c, "export: --fat32 is for directories, not s3://");
	int rc = run_export(c, &a, argv[first], argv + first + 1, argc - first - 1);
	cli_strlist_dispose(&a.probes);
	return rc;
}
