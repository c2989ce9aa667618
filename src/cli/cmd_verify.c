/* cmd_verify.c - offwheel verify: re-hash every object of the store. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "clitext.h"
#include "offwheel/fetch.h"

static const char usage[] = "verify [--deep]";
static const char description[] =
	"Re-hash every object in the store, in parallel (--jobs), each file read once.\n"
	"--deep also checks every stored wheel as fetch did: strict zip validation,\n"
	"every RECORD hash and size, METADATA name and version.\n"
	"Exits 3 when any object is missing, damaged or (with --deep) not a valid wheel.\n"
	"Anything but a regular file of the recorded size is damage and is not read.\n"
	"Damaged objects are marked in the index (when it is writable): 'offwheel fetch'\n"
	"or 'sync' then moves them aside and downloads them again.";

enum { OPT_DEEP = 256 };
static const struct cli_opt opts[] = {
	{"deep", OPT_DEEP, no_argument, NULL, "also validate every wheel (zip, RECORD, METADATA)"},
	{NULL, 0, 0, NULL, NULL},
};

static int on_opt(struct cli *c, int key, const char *arg, void *ud)
{
	(void)c;
	(void)arg;
	if (key != OPT_DEEP)
		return 2;
	*(int *)ud = 1;
	return 0;
}

static double elapsed(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static void render(struct cli *c, const struct ow_obj_row *rows, const struct ow_verify_result *res,
                   size_t n, size_t failed, double secs)
{
	unsigned long long bytes = 0;
	json_t *bad = json_array();
	for (size_t i = 0; i < n; i++) {
		if (!res[i].rc) {
			bytes += res[i].size;
			continue;
		}
		/* the detail holds a path: its bytes may be anything */
		json_t *o = json_pack("{s:s, s:s}", "sha256", rows[i].sha256, "error",
		                      ow_err_name(res[i].rc));
		if (o && cli_json_set_bytes(o, "detail", res[i].detail ? res[i].detail : "") == 0)
			json_array_append_new(bad, o);
		else
			json_decref(o);
		char *shown = c->json ? NULL : cli_printable_dup(res[i].detail ? res[i].detail : "");
		if (!c->json)
			cli_wrapf(stderr, "FAILED %s\n", shown ? shown : "(out of memory)");
		free(shown);
	}
	if (c->json) {
		cli_json_out(json_pack("{s:s, s:I, s:I, s:f, s:I, s:o, s:b}", "command", "verify",
		                       "objects", (json_int_t)n, "bytes", (json_int_t)bytes, "seconds",
		                       secs, "failed_count", (json_int_t)failed, "failed", bad,
		                       "ok", failed == 0));
		return;
	}
	json_decref(bad);
	char b[32];
	if (failed)
		cli_wrapf(stderr, "%zu object(s) failed verification — run 'offwheel fsck', then fetch "
		                "them again\n",
		        failed);
	fflush(stderr);
	/* the verdict last, alone with -q */
	cli_out(c, "verified %zu objects, %s in %.2f s (%.2f GB/s): %s\n", n - failed,
	        cli_bytes(bytes, b, sizeof b), secs, secs > 0 ? (double)bytes / secs / 1e9 : 0.0,
	        failed ? "FAILED" : "all good");
}

static int run(struct cli *c, void *ud, ow_store *s)
{
	const int deep = *(const int *)ud;
	struct ow_obj_row *rows = NULL;
	size_t n = 0;
	int rc = ow_store_list(s, NULL, &rows, &n);
	if (rc)
		return cli_fail(c, rc);
	struct ow_verify_result *res = calloc(n ? n : 1, sizeof *res);
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	size_t failed = res ? ow_store_verify_many(s, rows, n, c->jobs, res) : 0;
	if (res && failed) /* recorded, so that fetch and sync fetch them again */
		ow_store_mark_failed(s, rows, res, n);
	if (res && deep)
		failed += ow_verify_wheels(s, rows, n, c->jobs, res);
	if (res)
		render(c, rows, res, n, failed, elapsed(&t0));
	ow_verify_results_dispose(res, n);
	free(res);
	free(rows);
	if (!res)
		return 1;
	return failed ? 3 : 0;
}

int cmd_verify(struct cli *c, int argc, char **argv)
{
	int deep = 0;
	const struct cli_spec cs = {opts, usage, description, on_opt, &deep};
	int exitc;
	if (!cli_parse_no_operands(c, argc, argv, &cs, &exitc))
		return exitc;
	return cli_with_store(c, OW_STORE_READ, run, &deep);
}
