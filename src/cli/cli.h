/* cli.h - what the command files share: global options, option parsing,
 * rendering of events, errors and JSON.  The CLI parses, calls the library
 * and renders; it holds no logic a test would want to reach. */
#ifndef OW_CLI_H
#define OW_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <jansson.h>
#include <stdio.h>

#include "offwheel/error.h"
#include "offwheel/event.h"
#include "offwheel/store.h"
#include "wrap.h"

enum cli_progress { CLI_PROGRESS_AUTO, CLI_PROGRESS_ALWAYS, CLI_PROGRESS_NEVER };

struct cli {
	const char *home_opt; /* --home, NULL when not given */
	char home[4096];      /* resolved workspace */
	int json;
	int verbosity; /* -q: -1, default 0, -v: 1, -vv: 2 */
	int jobs;
	int jobs_given; /* --jobs was on the command line */
	int lock_timeout;
	enum cli_progress progress;
	const char *cmd;
	/* the first error reported (cli_fail, cli_usage_error), for the one
	 * JSON document of a failed --json run */
	int err_exit;
	char err_code[24];
	char err_msg[1024];
};

struct cli_opt {
	const char *name; /* long name */
	int key;          /* short letter or a value >= 256 */
	int has_arg;      /* no_argument / required_argument */
	const char *arg;  /* argument name for the usage, e.g. "N" */
	const char *help;
};

struct cli_command {
	const char *name;
	int (*run)(struct cli *c, int argc, char **argv);
	const char *summary;
};

/* Parse argv of a command: the command's own options and the global ones,
 * in any order.  on_opt is called for the command's options; it returns 0
 * or an exit code.  Returns the index of the first operand (>= 0), or a
 * negative "stop" value: CLI_HELP_SHOWN after --help, -(exit code) after a
 * usage error; cli_parse_exit turns that into the command's exit code. */
#define CLI_HELP_SHOWN (-1000)
/* --device CC[,CC]: at most this many devices (sync, resolve, export) */
#define CLI_MAX_DEVICES 8
static inline int cli_parse_exit(int first)
{
	return first == CLI_HELP_SHOWN ? 0 : -first;
}
/* What a command's argv is parsed with. */
struct cli_spec {
	const struct cli_opt *opts; /* its own options (NULL: none) */
	const char *usage, *description; /* for --help */
	int (*on_opt)(struct cli *c, int key, const char *arg, void *ud);
	void *ud;
};
int cli_parse(struct cli *c, int argc, char **argv, const struct cli_spec *spec);
/* cli_parse for a command that takes no operands: true to go on; false when
 * the command is done, with *exitc its exit code (0 after --help; a usage
 * error, "unexpected argument" for an operand). */
bool cli_parse_no_operands(struct cli *c, int argc, char **argv, const struct cli_spec *spec,
                           int *exitc);
/* Print the usage of a command (its synopsis, options and the global ones). */
void cli_usage(FILE *f, const struct cli *c, const struct cli_opt *opts, const char *usage,
               const char *description);

/* Open the workspace (resolving --home); on failure prints the error and
 * returns nonzero (the exit code). */
/* `in` with a leading "~" or "~/" replaced by $HOME. */
void cli_expand_home(const char *in, char *out, size_t n);
int cli_open_store(struct cli *c, enum ow_store_mode mode, ow_store **out);
/* Open the workspace, run fn on it, close it: fn's result, or the opening's
 * failure (already reported). */
int cli_with_store(struct cli *c, enum ow_store_mode mode,
                   int (*fn)(struct cli *c, void *ud, ow_store *s), void *ud);
/* Print "offwheel: <detail>" for a library error and return its exit code. */
int cli_fail(struct cli *c, int rc);
/* Print a usage error, return 2. */
int cli_usage_error(struct cli *c, const char *fmt, ...) OW_PRINTF(2, 3);
/* Human output (suppressed with --json and -q). */
void cli_say(const struct cli *c, const char *fmt, ...) OW_PRINTF(2, 3);
/* The data a command was asked for, as text: suppressed with --json only
 * (-q hides messages, never the listing). */
void cli_out(const struct cli *c, const char *fmt, ...) OW_PRINTF(2, 3);
/* Emit the one JSON document of the command on stdout (steals the ref). */
/* Check a --json document against DIR/<command>.schema.json (docs/json/):
 * 0 it follows it, -1 it does not (err says where and why). */
int cli_schema_check(json_t *doc, const char *dir, char *err, size_t errn);
void cli_json_out(json_t *doc);
/* Whether a --json document was printed (exactly one ever is). */
bool cli_json_printed(void);
/* --json and nothing printed after a failure: the error document,
 * {"command","error":{"code","exit","message"}} (docs/json/error.schema.json). */
void cli_json_error(const struct cli *c, int exit_code);
/* The nearest of `names` to `word` within two edits (a prefix of exactly
 * one counts), NULL when none is close: what a typo most likely meant. */
const char *cli_nearest(const char *word, const char *const *names, size_t n);
/* Install the event handler (logs and progress to stderr). */
void cli_events_init(struct cli *c);
void cli_events_finish(void);
/* Erase the progress lines, if any are on the screen; call before writing
 * to the terminal other than through cli_say / cli_fail / the event log. */
void cli_progress_clear(void);
/* The worse of two exit codes, for a command that judges several things:
 * an error (1, 2, 130 ...) over "cannot run" (3) over "no driver to check
 * with" (5) over "incomplete" (4) over 0; of two errors, the first. */
int cli_worse_exit(int worst, int rc);
/* A progress event of the CLI's own making (a batch the command runs item
 * by item, such as the members of a set it audits): drawn as the library's
 * are.  Only from the main thread while no library call is running. */
void cli_progress_event(const struct ow_event *ev);
/* One message: `prefix` then `msg`, and a newline.  On a terminal, wrapped at
 * spaces to its width with continuation lines indented (a word longer than a
 * line, a URL or a path, is never cut); elsewhere (a pipe, a log) one line. */
void cli_wrapped(FILE *f, const char *prefix, const char *msg);
/* "1.23 GB" style. */
const char *cli_bytes(unsigned long long n, char *buf, size_t len);
/* The columns text on fd may use: the terminal's width when fd is one,
 * else $COLUMNS, else `fallback` (80 for help and messages, 0 = no limit
 * for a listing that stays one greppable row per item in a pipe). */
int cli_columns(int fd, int fallback);
/* A wheel file name in `w` columns (padded): the tags are shortened or
 * dropped, the distribution and version kept whole.  `w` is at most
 * CLI_FIT_MAX (a wider one is taken as CLI_FIT_MAX) and below `n`. */
#define CLI_FIT_MAX 1000
void cli_fit_name(const char *name, int w, char *out, size_t n);
/* "45 s", "3 min", "1 h 5 min": rounded up, at least 1 s. */
const char *cli_duration(double secs, char *buf, size_t n);
/* "12.34 MB/s": bytes over seconds in cli_bytes' units. */
const char *cli_rate(unsigned long long bytes, double secs, char *buf, size_t len);
/* Parse a positive int option value; 0 or an exit code. */
int cli_int_arg(struct cli *c, const char *opt, const char *arg, int lo, int hi, int *out);

/* Every command, one line each (main.c holds the table). */
int cmd_verify(struct cli *c, int argc, char **argv);
int cmd_audit(struct cli *c, int argc, char **argv);
int cmd_fsck(struct cli *c, int argc, char **argv);
int cmd_ls(struct cli *c, int argc, char **argv);
int cmd_gc(struct cli *c, int argc, char **argv);
int cmd_crawl(struct cli *c, int argc, char **argv);
int cmd_resolve(struct cli *c, int argc, char **argv);
/* `ls sets` (cmd_sets.c); target NULL = all. */
int cli_ls_sets(struct cli *c, ow_store *s, const char *target);
int cmd_fetch(struct cli *c, int argc, char **argv);
int cmd_sync(struct cli *c, int argc, char **argv);
int cmd_smoke(struct cli *c, int argc, char **argv);
int cmd_doctor(struct cli *c, int argc, char **argv);
int cmd_export(struct cli *c, int argc, char **argv);
int cmd_probe(struct cli *c, int argc, char **argv);
int cmd_install(struct cli *c, int argc, char **argv);
struct ow_check_report;
/* check's lines for a stick that is not valid, one per problem, escaped
 * (cmd_check.c; install says the same). */
void cli_check_problem_lines(const struct ow_check_report *r);
int cmd_fleet(struct cli *c, int argc, char **argv);
int cmd_check(struct cli *c, int argc, char **argv);
int cmd_keygen(struct cli *c, int argc, char **argv);

#endif
