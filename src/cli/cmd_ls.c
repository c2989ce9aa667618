/* cmd_ls.c - offwheel ls: list what the workspace holds. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "offwheel/listing.h"

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

/* The name of object sha, walking names (sha256 order, as the listing). */
static const char *name_of(const struct ow_obj_name *names, size_t n, const char *sha,
                           size_t *cursor)
{
	while (*cursor < n && strcmp(names[*cursor].sha256, sha) < 0)
		(*cursor)++;
	return *cursor < n && !strcmp(names[*cursor].sha256, sha) ? names[*cursor].name : NULL;
}

static json_t *object_json(const struct ow_obj_row *r, const char *name)
{
	return json_pack("{s:s, s:I, s:s, s:I, s:s?}", "sha256", r->sha256, "size",
	                 (json_int_t)r->size, "kind", r->kind, "created_at",
	                 (json_int_t)r->created_at, "name", name);
}

static int ls_objects(struct cli *c, ow_store *s, const char *kind)
{
	struct ow_obj_row *rows = NULL;
	struct ow_obj_name *names = NULL;
	size_t n = 0, nn = 0, cursor = 0;
	int rc = ow_store_list(s, kind, &rows, &n);
	if (!rc)
		rc = ow_store_object_names(s, &names, &nn);
	if (rc) {
		free(rows);
		ow_obj_names_free(names, nn);
		return cli_fail(c, rc);
	}
	json_t *a = c->json ? json_array() : NULL;
	unsigned long long total = 0;
	if (n && !a)
		cli_say(c, "%-16s %12s %-8s %s\n", "SHA256", "SIZE", "KIND", "NAME");
	for (size_t i = 0; i < n; i++) {
		const char *name = name_of(names, nn, rows[i].sha256, &cursor);
		total += rows[i].size;
		if (a)
			json_array_append_new(a, object_json(&rows[i], name));
		else /* the hash's first 16 digits name it well enough on a screen */
			cli_out(c, "%.16s %12llu %-8s %s\n", rows[i].sha256,
			        (unsigned long long)rows[i].size, rows[i].kind, name ? name : "-");
	}
	if (a)
		cli_json_out(json_pack("{s:s, s:I, s:I, s:o}", "command", "ls objects", "count",
		                       (json_int_t)n, "bytes", (json_int_t)total, "objects", a));
	free(rows);
	ow_obj_names_free(names, nn);
	return 0;
}

#define FILE_ROW "%-72s %-7s %-6s %s\n"
#define PAGE_ROW "%-60s %-9s %5s %8s  %s\n"

/* A row of cells as one JSON object, by their names and types. */
static json_t *row_json(const struct ow_cell *row, size_t n)
{
	json_t *o = json_object();
	for (size_t i = 0; o && i < n; i++) {
		const struct ow_cell *c = &row[i];
		json_t *v = c->null                  ? json_null()
		            : c->type == OW_CELL_BOOL ? json_boolean(c->num)
		            : c->type == OW_CELL_INT  ? json_integer((json_int_t)c->num)
		                                      : json_string(c->text);
		json_object_set_new(o, c->name, v);
	}
	return o;
}

static const char *text(const struct ow_cell *c) { return c->null || !c->text ? "" : c->text; }

/* One listing: rows as JSON objects, or as text lines by `line`. */
struct listing {
	struct cli *c;
	const char *command; /* "ls files" */
	const char *key;     /* "files" */
	const char *header;  /* the text table's column names */
	void (*line)(const struct cli *c, const struct ow_cell *row);
	json_t *a;
	size_t n;
};

static int on_row(void *ud, const struct ow_cell *row, size_t ncols)
{
	struct listing *l = ud;
	if (!l->n++ && !l->a)
		cli_say(l->c, "%s\n", l->header);
	if (l->a)
		json_array_append_new(l->a, row_json(row, ncols));
	else
		l->line(l->c, row);
	return 0;
}

static int list_done(struct listing *l, int rc)
{
	if (rc < 0) {
		json_decref(l->a);
		return cli_fail(l->c, rc);
	}
	if (l->a)
		cli_json_out(json_pack("{s:s, s:I, s:o}", "command", l->command, "count",
		                       (json_int_t)l->n, l->key, l->a));
	else
		cli_say(l->c, "%zu %s\n", l->n, l->key);
	return 0;
}

static void file_line(const struct cli *c, const struct ow_cell *row)
{
	const char *state = !row[OW_FILE_OBJECT].null    ? "fetched"
	                    : !row[OW_FILE_GONE_AT].null ? "gone"
	                                                 : "";
	cli_out(c, FILE_ROW, text(&row[OW_FILE_FILENAME]), text(&row[OW_FILE_VARIANT]),
	        row[OW_FILE_SHA256].null ? "-" : "sha256", state);
}

static int ls_files(struct cli *c, ow_store *s, const struct filters *f)
{
	static char header[160];
	snprintf(header, sizeof header, FILE_ROW, "FILE", "VARIANT", "HASH", "STATE");
	header[strcspn(header, "\n")] = '\0';
	struct listing l = {c, "ls files", "files", header, file_line, c->json ? json_array() : NULL, 0};
	struct ow_file_filter ff = {f->v[OPT_PROJECT - OPT_KIND], f->v[OPT_VARIANT - OPT_KIND],
	                            f->v[OPT_VERSION - OPT_KIND], f->v[OPT_PYTHON - OPT_KIND],
	                            f->v[OPT_PLATFORM - OPT_KIND]};
	return list_done(&l, ow_list_files(s, &ff, on_row, &l));
}

static void page_line(const struct cli *c, const struct ow_cell *row)
{
	char when[32];
	time_t t = (time_t)row[OW_PAGE_FETCHED_AT].num;
	strftime(when, sizeof when, "%Y-%m-%d %H:%M", localtime(&t));
	char files[24], rejected[24];
	snprintf(files, sizeof files, "%lld", (long long)row[OW_PAGE_FILES].num);
	snprintf(rejected, sizeof rejected, "%lld", (long long)row[OW_PAGE_REJECTED].num);
	cli_out(c, PAGE_ROW, text(&row[OW_PAGE_URL]), text(&row[OW_PAGE_STATUS]), files, rejected,
	        when);
}

static int ls_pages(struct cli *c, ow_store *s, const struct filters *f)
{
	static char header[160];
	snprintf(header, sizeof header, PAGE_ROW, "URL", "STATUS", "FILES", "REJECTED", "FETCHED");
	header[strcspn(header, "\n")] = '\0';
	struct listing l = {c, "ls pages", "pages", header, page_line, c->json ? json_array() : NULL, 0};
	return list_done(&l, ow_list_pages(s, f->v[OPT_PROJECT - OPT_KIND],
	                                   f->v[OPT_VARIANT - OPT_KIND], on_row, &l));
}

int cmd_ls(struct cli *c, int argc, char **argv)
{
	struct filters f = {{0}};
	const struct cli_spec cs = {opts, usage, description, on_opt, &f};
	int first = cli_parse(c, argc, argv, &cs);
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
