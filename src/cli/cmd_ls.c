/* cmd_ls.c - offwheel ls: list what the workspace holds. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "db.h"

static const char usage[] = "ls pages|files|sets|objects [FILTERS]";
/* Listings print with -q too (quiet hides messages, never the data asked
 * for); the header and the count line are messages. */
static const char description[] =
	"List what the workspace holds.\n"
	"  pages    index pages crawled: status, files listed, when fetched\n"
	"  files    wheels recorded by the crawl (filters: --project, --variant,\n"
	"           --version GLOB, --python GLOB (python or abi tag), --platform GLOB)\n"
	"  sets     resolved sets (offwheel resolve), newest first; --json with members\n"
	"  objects  verified objects with size and kind (--kind)";

enum { OPT_KIND = 256, OPT_PROJECT, OPT_VARIANT, OPT_VERSION, OPT_PYTHON, OPT_PLATFORM };
static const struct cli_opt opts[] = {
	{"project", OPT_PROJECT, required_argument, "NAME", "only this project"},
	{"variant", OPT_VARIANT, required_argument, "V", "only this variant folder (cu128, cpu, ...)"},
	{"version", OPT_VERSION, required_argument, "GLOB", "versions matching, e.g. '2.10.0.dev2025*'"},
	{"python", OPT_PYTHON, required_argument, "GLOB", "python or abi tag matching, e.g. cp312"},
	{"platform", OPT_PLATFORM, required_argument, "GLOB", "platform tag matching, e.g. '*x86_64'"},
	{"kind", OPT_KIND, required_argument, "KIND",
	 "objects of this kind only: wheel, metadata or page (default: all)"},
	{NULL, 0, 0, NULL, NULL},
};

struct filters {
	const char *v[6]; /* indexed by key - OPT_KIND */
};

static int on_opt(struct cli *c, int key, const char *arg, void *ud)
{
	if (key < OPT_KIND || key > OPT_PLATFORM)
		return 2;
	if (key == OPT_KIND && strcmp(arg, "wheel") && strcmp(arg, "metadata") && strcmp(arg, "page"))
		return cli_usage_error(c, "ls: --kind '%s' is not wheel, metadata or page", arg);
	((struct filters *)ud)->v[key - OPT_KIND] = arg;
	return 0;
}

static const char *col(ow_stmt *st, int i) { return ow_col_is_null(st, i) ? NULL : ow_col_text(st, i); }

static json_t *jstr(ow_stmt *st, int i)
{
	const char *t = col(st, i);
	return t ? json_string(t) : json_null();
}

static json_t *jint(ow_stmt *st, int i)
{
	return ow_col_is_null(st, i) ? json_null() : json_integer(ow_col_int(st, i));
}

static int ls_objects(struct cli *c, ow_store *s, const char *kind)
{
	struct ow_obj_row *rows = NULL;
	size_t n = 0;
	int rc = ow_store_list(s, kind, &rows, &n);
	if (rc)
		return cli_fail(c, rc);
	json_t *a = c->json ? json_array() : NULL;
	unsigned long long total = 0;
	if (n && !a)
		cli_say(c, "%-64s %12s %s\n", "SHA256", "SIZE", "KIND");
	for (size_t i = 0; i < n; i++) {
		total += rows[i].size;
		if (a)
			json_array_append_new(a, json_pack("{s:s, s:I, s:s, s:I}", "sha256",
			                                   rows[i].sha256, "size", (json_int_t)rows[i].size,
			                                   "kind", rows[i].kind, "created_at",
			                                   (json_int_t)rows[i].created_at));
		else
			cli_out(c, "%s %12llu %s\n", rows[i].sha256, (unsigned long long)rows[i].size,
			        rows[i].kind);
	}
	if (a)
		cli_json_out(json_pack("{s:s, s:I, s:I, s:o}", "command", "ls objects", "count",
		                       (json_int_t)n, "bytes", (json_int_t)total, "objects", a));
	free(rows);
	return 0;
}

#define FILE_ROW "%-72s %-7s %-6s %s\n"
#define PAGE_ROW "%-60s %-9s %5s %8s  %s\n"

static const char *const file_cols[] = {
	"filename", "project", "version", "variant", "python_tag", "abi_tag", "platform_tag",
	"url", "sha256", "meta_sha256", "has_metadata", "requires_python", "yanked",
	"first_seen", "last_seen", "gone_at", "object_sha256", "trust"};

/* One row as an object; columns of `int_mask` are integers, of `bool_mask`
 * booleans, of `empty_null` null when "" (a dependency page's variant),
 * the rest strings. */
static json_t *row_json(ow_stmt *st, const char *const *names, size_t n, unsigned int_mask,
                        unsigned bool_mask, unsigned empty_null)
{
	json_t *o = json_object();
	for (size_t i = 0; i < n; i++) {
		const char *t = col(st, (int)i);
		json_t *v = (bool_mask >> i) & 1 ? json_boolean(ow_col_int(st, (int)i) != 0)
		            : (int_mask >> i) & 1                      ? jint(st, (int)i)
		            : ((empty_null >> i) & 1) && t && !*t      ? json_null()
		                                                       : jstr(st, (int)i);
		json_object_set_new(o, names[i], v);
	}
	return o;
}

/* One listing: every row of `st`, as JSON objects (columns `cols`, the
 * integer ones marked in `int_mask`) or as text lines by `line`. */
struct listing {
	const char *command; /* "ls files" */
	const char *key;     /* "files" */
	const char *const *cols;
	size_t ncols;
	unsigned int_mask, bool_mask, empty_null;
	const char *header; /* the text table's column names */
	void (*line)(const struct cli *c, ow_stmt *st);
};

static int list_rows(struct cli *c, ow_stmt *st, const struct listing *l)
{
	json_t *a = c->json ? json_array() : NULL;
	size_t n = 0;
	int rc;
	while ((rc = ow_stmt_step(st)) == 1) {
		if (!n++ && !a)
			cli_say(c, "%s\n", l->header);
		if (a)
			json_array_append_new(
			    a, row_json(st, l->cols, l->ncols, l->int_mask, l->bool_mask, l->empty_null));
		else
			l->line(c, st);
	}
	if (rc < 0) {
		json_decref(a);
		return cli_fail(c, rc);
	}
	if (a)
		cli_json_out(json_pack("{s:s, s:I, s:o}", "command", l->command, "count",
		                       (json_int_t)n, l->key, a));
	else
		cli_say(c, "%zu %s\n", n, l->key);
	return 0;
}

static void file_line(const struct cli *c, ow_stmt *st)
{
	const char *state = col(st, 16) ? "fetched" : col(st, 15) ? "gone" : "";
	cli_out(c, FILE_ROW, ow_col_text(st, 0), ow_col_text(st, 3), col(st, 8) ? "sha256" : "-",
	        state);
}

static int ls_files(struct cli *c, ow_store *s, const struct filters *f)
{
	/* integer columns: first/last seen 13 14, gone 15; booleans: has_metadata 10,
	 * yanked 12 */
	static char header[160];
	snprintf(header, sizeof header, FILE_ROW, "FILE", "VARIANT", "HASH", "STATE");
	header[strcspn(header, "\n")] = '\0';
	static const struct listing l = {"ls files", "files", file_cols, 18,
	                                 1u << 13 | 1u << 14 | 1u << 15, 1u << 10 | 1u << 12,
	                                 1u << 3, header, file_line};
	ow_stmt *st = ow_db_stmt(ow_store_db(s), OW_SQL_FILES_LIST);
	if (!st)
		return cli_fail(c, OW_EDB);
	for (int i = 0; i < 5; i++)
		ow_stmt_text(st, i + 1, f->v[i + 1]);
	return list_rows(c, st, &l);
}

static const char *const page_cols[] = {
	"url", "variant", "project", "status", "etag", "last_modified", "body_sha256",
	"page_time", "fetched_at", "changed_at", "files", "rejected", "error"};

static void page_line(const struct cli *c, ow_stmt *st)
{
	char when[32];
	time_t t = (time_t)ow_col_int(st, 8);
	strftime(when, sizeof when, "%Y-%m-%d %H:%M", localtime(&t));
	char files[24], rejected[24];
	snprintf(files, sizeof files, "%lld", (long long)ow_col_int(st, 10));
	snprintf(rejected, sizeof rejected, "%lld", (long long)ow_col_int(st, 11));
	cli_out(c, PAGE_ROW, ow_col_text(st, 0), ow_col_text(st, 3), files, rejected, when);
}

static int ls_pages(struct cli *c, ow_store *s, const struct filters *f)
{
	/* integer columns: page_time 7, fetched/changed 8 9, files 10, rejected 11 */
	static char header[160];
	snprintf(header, sizeof header, PAGE_ROW, "URL", "STATUS", "FILES", "REJECTED", "FETCHED");
	header[strcspn(header, "\n")] = '\0';
	static const struct listing l = {"ls pages", "pages", page_cols, 13,
	                                 1u << 7 | 1u << 8 | 1u << 9 | 1u << 10 | 1u << 11, 0,
	                                 1u << 1, header, page_line};
	ow_stmt *st = ow_db_stmt(ow_store_db(s), OW_SQL_PAGES_LIST);
	if (!st)
		return cli_fail(c, OW_EDB);
	ow_stmt_text(st, 1, f->v[OPT_PROJECT - OPT_KIND]);
	ow_stmt_text(st, 2, f->v[OPT_VARIANT - OPT_KIND]);
	return list_rows(c, st, &l);
}

int cmd_ls(struct cli *c, int argc, char **argv)
{
	struct filters f = {{0}};
	int first = cli_parse(c, argc, argv, opts, usage, description, on_opt, &f);
	if (first < 0)
		return cli_parse_exit(first);
	if (first >= argc)
		return cli_usage_error(c, "ls: say what to list: pages, files, sets or objects");
	const char *what = argv[first];
	if (strcmp(what, "objects") && strcmp(what, "files") && strcmp(what, "pages") &&
	    strcmp(what, "sets"))
		return cli_usage_error(c, "ls: '%s' is not something to list; try pages, files, sets or objects",
		                       what);
	ow_store *s;
	int rc = cli_open_store(c, OW_STORE_READ, &s);
	if (rc)
		return rc;
	if (!strcmp(what, "objects"))
		rc = ls_objects(c, s, f.v[0]);
	else if (!strcmp(what, "files"))
		rc = ls_files(c, s, &f);
	else if (!strcmp(what, "sets"))
		rc = cli_ls_sets(c, s, NULL);
	else
		rc = ls_pages(c, s, &f);
	ow_store_close(s);
	return rc;
}
