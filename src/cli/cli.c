/* cli.c - option parsing, rendering of events, errors and JSON. */
#include "cli.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clitext.h"
#include "offwheel/error.h"
#include "offwheel/event.h"
#include "offwheel/str.h"

enum { OPT_HOME = 1000, OPT_JSON, OPT_JOBS, OPT_PROGRESS, OPT_LOCK_TIMEOUT, OPT_HELP };

static const struct cli_opt global_opts[] = {
	{"home", OPT_HOME, required_argument, "DIR",
	 "workspace (default $OFFWHEEL_HOME, else $XDG_CACHE_HOME/offwheel, else ~/.cache/offwheel)"},
	{"json", OPT_JSON, no_argument, NULL, "print exactly one JSON document on stdout"},
	{"quiet", 'q', no_argument, NULL, "only errors"},
	{"verbose", 'v', no_argument, NULL, "more detail (twice for debug)"},
	{"jobs", OPT_JOBS, required_argument, "N",
	 "parallel transfers / hashing threads (default: the number of cores)"},
	{"progress", OPT_PROGRESS, required_argument, "WHEN",
	 "auto|always|never: progress lines on stderr (default auto: on a terminal)"},
	{"lock-timeout", OPT_LOCK_TIMEOUT, required_argument, "S", "seconds to wait for the workspace lock (600)"},
	{"help", OPT_HELP, no_argument, NULL, "show this help"},
	{NULL, 0, 0, NULL, NULL},
};

static size_t count_opts(const struct cli_opt *o)
{
	size_t n = 0;
	while (o && o[n].name)
		n++;
	return n;
}

const char *cli_nearest(const char *word, const char *const *names, size_t n)
{
	const char *best = NULL, *prefixed = NULL;
	int bd = 3, nprefixed = 0;
	for (size_t i = 0; i < n; i++) {
		if (*word && !strncmp(names[i], word, strlen(word))) {
			prefixed = names[i];
			nprefixed++;
		}
		int d = ow_str_distance(word, names[i], 9);
		if (d < bd) {
			bd = d;
			best = names[i];
		}
	}
	return nprefixed == 1 ? prefixed : best;
}

static void print_opt(FILE *f, const struct cli_opt *o, int width)
{
	char left[64];
	char shortp[8] = "    ";
	if (o->key > 0 && o->key < 128)
		snprintf(shortp, sizeof shortp, "-%c, ", o->key);
	snprintf(left, sizeof left, "%s--%s%s%s", shortp, o->name, o->arg ? " " : "",
	         o->arg ? o->arg : "");
	/* two spaces at least between a long option and its help: the man
	 * page and completion generator (scripts/gen-docs) splits there, and
	 * joins the continuation lines (indented to column 31) back */
	int col = fprintf(f, "  %-28s %s", left, strlen(left) >= 28 ? " " : "");
	cli_wrap_at(f, o->help, col, 31, width);
}

/* The options people use most, first, in this order; the rest as the
 * command's table has them. */
static const char *const first_opts[] = {
	"channel", "variant", "cuda", "python", "platform", "device", "requirement", "constraint",
	"with", "index-url", "extra-index-url", "project", "version", "date", NULL,
};

static bool is_first_opt(const char *name)
{
	for (size_t i = 0; first_opts[i]; i++)
		if (!strcmp(first_opts[i], name))
			return true;
	return false;
}

static void print_opts(FILE *f, const struct cli_opt *opts)
{
	int width = cli_columns(fileno(f), 80);
	for (size_t i = 0; first_opts[i]; i++)
		for (const struct cli_opt *o = opts; o && o->name; o++)
			if (!strcmp(o->name, first_opts[i]))
				print_opt(f, o, width);
	for (const struct cli_opt *o = opts; o && o->name; o++)
		if (!is_first_opt(o->name))
			print_opt(f, o, width);
}

/* One synopsis item at *col: on this line when it fits, else on the next,
 * indented under the command. */
static void synopsis_item(FILE *f, const char *item, size_t n, size_t *col, int width)
{
	if (*col > 16 && *col + 1 + n > (size_t)width) {
		fputs("\n       ", f);
		*col = 7;
	}
	fprintf(f, " %.*s", (int)n, item);
	*col += 1 + n;
}

/* The usage line's next item: a word, or a whole "[...]" group. */
static size_t usage_item(const char *p)
{
	if (*p != '[')
		return strcspn(p, " ");
	int depth = 0;
	size_t n = 0;
	do {
		depth += (p[n] == '[') - (p[n] == ']');
		n++;
	} while (p[n] && depth > 0);
	return n;
}

/* The synopsis: the command's own usage line, then every option of its table
 * that the line does not name yet, wrapped to the help's width, never inside
 * a [...] group. */
static void synopsis(FILE *f, const struct cli_opt *opts, const char *usage)
{
	int width = cli_columns(fileno(f), 80);
	size_t col = (size_t)fprintf(f, "usage: offwheel") > 0 ? 15 : 0;
	for (const char *p = usage; *p;) {
		p += strspn(p, " ");
		size_t n = usage_item(p);
		if (n)
			synopsis_item(f, p, n, &col, width);
		p += n;
	}
	for (const struct cli_opt *o = opts; o && o->name; o++) {
		char name[64], item[96];
		snprintf(name, sizeof name, "--%s", o->name);
		const char *hit = strstr(usage, name);
		size_t nl = strlen(name);
		if (hit && !(hit[nl] == '-' || (hit[nl] >= 'a' && hit[nl] <= 'z')))
			continue;
		int n = snprintf(item, sizeof item, "[%s%s%s]", name, o->arg ? " " : "",
		                 o->arg ? o->arg : "");
		synopsis_item(f, item, (size_t)n, &col, width);
	}
	fputc('\n', f);
}

/* The description as written (its lines fit 80 columns); narrower, each
 * paragraph (lines up to a blank or indented one) wrapped again. */
static void flush_para(FILE *f, struct ow_str *para, int width)
{
	if (para->p)
		cli_wrap_at(f, para->p, 0, 0, width);
	ow_str_dispose(para);
}

static void description_text(FILE *f, const char *d, int width)
{
	if (width >= 80) {
		fprintf(f, "%s\n", d);
		return;
	}
	struct ow_str para = {0};
	for (const char *p = d; *p;) {
		size_t n = strcspn(p, "\n");
		if (!n || *p == ' ') { /* a blank line or an indented one stands alone */
			flush_para(f, &para, width);
			fprintf(f, "%.*s\n", (int)n, p);
		} else {
			ow_str_printf(&para, "%s%.*s", para.p ? " " : "", (int)n, p);
		}
		p += n + (p[n] == '\n');
	}
	flush_para(f, &para, width);
}

void cli_usage(FILE *f, const struct cli *c, const struct cli_opt *opts, const char *usage,
               const char *description)
{
	synopsis(f, opts, usage);
	fputc('\n', f);
	description_text(f, description, cli_columns(fileno(f), 80));
	if (count_opts(opts)) {
		fprintf(f, "\noptions:\n");
		print_opts(f, opts);
	}
	fprintf(f, "\nglobal options:\n");
	print_opts(f, global_opts);
	(void)c;
}

static int global_opt(struct cli *c, int key, const char *arg)
{
	switch (key) {
	case OPT_HOME:
		c->home_opt = arg;
		return *arg ? 0
		            : cli_usage_error(c, "--home: empty — give the workspace directory (say "
		                                 "--home ~/offwheel), or leave --home out for the "
		                                 "default ($OFFWHEEL_HOME, else ~/.cache/offwheel)");
	case OPT_JSON:
		c->json = 1;
		return 0;
	case 'q':
		c->verbosity = -1;
		return 0;
	case 'v':
		c->verbosity = c->verbosity < 0 ? 1 : c->verbosity + 1;
		return 0;
	case OPT_JOBS:
		c->jobs_given = 1;
		return cli_int_arg(c, "--jobs", arg, 1, 256, &c->jobs);
	case OPT_LOCK_TIMEOUT:
		return cli_int_arg(c, "--lock-timeout", arg, 0, 86400, &c->lock_timeout);
	case OPT_PROGRESS:
		if (!strcmp(arg, "auto"))
			c->progress = CLI_PROGRESS_AUTO;
		else if (!strcmp(arg, "always"))
			c->progress = CLI_PROGRESS_ALWAYS;
		else if (!strcmp(arg, "never"))
			c->progress = CLI_PROGRESS_NEVER;
		else
			return cli_usage_error(c, "--progress: '%s' is not auto, always or never", arg);
		return 0;
	}
	return -1;
}

static int build_longopts(const struct cli_opt *opts, struct option *lo, char *shorts, size_t n)
{
	size_t k = 0, s = 0;
	shorts[s++] = '+';
	shorts[s++] = ':';
	shorts[s++] = 'h'; /* -h: --help */
	const struct cli_opt *tables[2] = {global_opts, opts};
	for (int t = 0; t < 2; t++)
		for (const struct cli_opt *o = tables[t]; o && o->name && k + 1 < n; o++) {
			lo[k++] = (struct option){o->name, o->has_arg, NULL, o->key};
			if (o->key > 0 && o->key < 128 && s + 3 < 64) {
				shorts[s++] = (char)o->key;
				if (o->has_arg)
					shorts[s++] = ':';
			}
		}
	lo[k] = (struct option){NULL, 0, NULL, 0};
	shorts[s] = '\0';
	return 0;
}

/* An unknown option names the one most likely meant; a missing value says
 * which option wants one. */
static int bad_option(struct cli *c, int key, const char *arg, const struct option *lo)
{
	if (key == ':')
		return cli_usage_error(c, "missing value for '%s' (see 'offwheel %s --help')", arg,
		                       c->cmd);
	const char *names[96];
	char word[64];
	size_t n = 0;
	for (; lo[n].name && n < sizeof names / sizeof names[0]; n++)
		names[n] = lo[n].name;
	const char *name = arg + strspn(arg, "-");
	size_t wl = strcspn(name, "=");
	/* a name longer than word is longer than any option: nothing is near it */
	const char *near = NULL;
	if (!strncmp(arg, "--", 2) && wl < sizeof word) {
		snprintf(word, sizeof word, "%.*s", (int)wl, name);
		near = cli_nearest(word, names, n);
	}
	if (near)
		return cli_usage_error(c, "unknown option '%s'; did you mean '--%s'? (see 'offwheel %s "
		                          "--help')", arg, near, c->cmd);
	return cli_usage_error(c, "unknown option '%s' (see 'offwheel %s --help')", arg, c->cmd);
}

int cli_parse(struct cli *c, int argc, char **argv, const struct cli_spec *spec)
{
	struct option lo[96];
	char shorts[64];
	build_longopts(spec->opts, lo, shorts, sizeof lo / sizeof lo[0]);
	optind = 1;
	opterr = 0;
	for (;;) {
		int key = getopt_long(argc, argv, shorts + 1, lo, NULL);
		if (key == -1)
			break;
		if (key == '?' || key == ':')
			return -bad_option(c, key, argv[optind - 1], lo);
		if (key == OPT_HELP || key == 'h') {
			cli_usage(stdout, c, spec->opts, spec->usage, spec->description);
			return CLI_HELP_SHOWN;
		}
		int rc = global_opt(c, key, optarg);
		if (rc == -1)
			rc = spec->on_opt ? spec->on_opt(c, key, optarg, spec->ud) : 2;
		if (rc)
			return -rc;
	}
	return optind;
}

bool cli_parse_no_operands(struct cli *c, int argc, char **argv, const struct cli_spec *spec,
                           int *exitc)
{
	int first = cli_parse(c, argc, argv, spec);
	*exitc = first < 0 ? cli_parse_exit(first) : 0;
	if (first >= 0 && first < argc)
		*exitc = cli_usage_error(c, "%s: unexpected argument '%s'", c->cmd, argv[first]);
	return first >= 0 && first >= argc;
}

int cli_int_arg(struct cli *c, const char *opt, const char *arg, int lo, int hi, int *out)
{
	char *end;
	long v = strtol(arg, &end, 10);
	if (*arg == '\0' || *end || v < lo || v > hi)
		return cli_usage_error(c, "%s: '%s' is not a number from %d to %d", opt, arg, lo, hi);
	*out = (int)v;
	return 0;
}

/* "--home=~/x" reaches us unexpanded (the shell expands ~ only at the start
 * of a word): "~" and "~/..." mean $HOME, as the shell would have it. */
void cli_expand_home(const char *in, char *out, size_t n)
{
	const char *home = getenv("HOME");
	if (home && *home && in[0] == '~' && (in[1] == '/' || in[1] == '\0'))
		snprintf(out, n, "%s%s", home, in + 1);
	else
		snprintf(out, n, "%s", in);
}

int cli_open_store(struct cli *c, enum ow_store_mode mode, ow_store **out)
{
	int rc = 0;
	if (c->home_opt)
		cli_expand_home(c->home_opt, c->home, sizeof c->home);
	else
		rc = ow_store_default_home(c->home, sizeof c->home);
	if (!rc)
		rc = ow_store_open(c->home, mode, c->lock_timeout, c->cmd, out);
	return rc ? cli_fail(c, rc) : 0;
}

int cli_with_store(struct cli *c, enum ow_store_mode mode,
                   int (*fn)(struct cli *c, void *ud, ow_store *s), void *ud)
{
	ow_store *s = NULL;
	int rc = cli_open_store(c, mode, &s);
	if (!rc) {
		rc = fn(c, ud, s);
		ow_store_close(s);
	}
	return rc;
}


/* The first error of the run, kept for --json's error document. */
static void remember(struct cli *c, const char *code, int exit_code, const char *msg)
{
	if (!c || c->err_exit)
		return;
	c->err_exit = exit_code;
	snprintf(c->err_code, sizeof c->err_code, "%s", code);
	snprintf(c->err_msg, sizeof c->err_msg, "%s", msg);
}

int cli_fail(struct cli *c, int rc)
{
	const char *d = ow_err_detail();
	char prefix[64];
	cli_progress_clear();
	snprintf(prefix, sizeof prefix, "offwheel %s: ", c->cmd ? c->cmd : "");
	const char *text = *d ? d : ow_err_text(rc);
	size_t n = c->cmd ? strlen(c->cmd) : 0;
	if (n && !strncmp(text, c->cmd, n) && !strncmp(text + n, ": ", 2))
		text += n + 2; /* "offwheel resolve: resolve: ..." says the command once */
	char *safe = cli_terminal_dup(text); /* names in it may be hostile */
	cli_wrapped(stderr, prefix, safe ? safe : ow_err_text(rc));
	remember(c, ow_err_name(rc), ow_err_exit_code(rc), safe ? safe : ow_err_text(rc));
	free(safe);
	return ow_err_exit_code(rc);
}

int cli_usage_error(struct cli *c, const char *fmt, ...)
{
	va_list ap;
	char msg[1024], *full = NULL;
	cli_progress_clear();
	va_start(ap, fmt);
	int w = vasprintf(&full, fmt, ap);
	va_end(ap);
	/* a long argument quoted in it leaves the message's end whole */
	ow_err_fit(msg, sizeof msg, w >= 0 ? full : "out of memory");
	free(full);
	/* one form: "offwheel CMD: message"; a message that names the command
	 * itself first ("sync: ...") does not name it twice */
	const char *cmd = c && c->cmd ? c->cmd : "";
	size_t n = strlen(cmd);
	const char *m = n && !strncmp(msg, cmd, n) && !strncmp(msg + n, ": ", 2) ? msg + n + 2 : msg;
	char prefix[64];
	snprintf(prefix, sizeof prefix, "offwheel%s%.40s: ", *cmd ? " " : "", cmd);
	char *safe = cli_terminal_dup(m); /* the arguments quoted in it may be hostile */
	cli_wrapped(stderr, prefix, safe ? safe : "out of memory");
	remember(c, "USAGE", 2, safe ? safe : "out of memory");
	free(safe);
	return 2;
}

/* Text on stdout, the progress line cleared first. */
static void out_v(const char *fmt, va_list ap) OW_PRINTF(1, 0);
static void out_v(const char *fmt, va_list ap)
{
	char *s = NULL;
	cli_progress_clear();
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	cli_wrap(stdout, s ? s : "(out of memory)\n");
	free(s);
	fflush(stdout);
}

void cli_say(const struct cli *c, const char *fmt, ...)
{
	va_list ap;
	if (c->json || c->verbosity < 0)
		return;
	va_start(ap, fmt);
	out_v(fmt, ap);
	va_end(ap);
}

void cli_out(const struct cli *c, const char *fmt, ...)
{
	va_list ap;
	if (c->json)
		return;
	va_start(ap, fmt);
	out_v(fmt, ap);
	va_end(ap);
}

static bool json_printed;

bool cli_json_printed(void)
{
	return json_printed;
}

void cli_json_error(const struct cli *c, int exit_code)
{
	if (!c->json || json_printed)
		return;
	/* the message is escaped already; a cut one may end inside a character */
	cli_json_out(json_pack("{s:s, s:{s:s, s:i, s:o}}", "command", c->cmd ? c->cmd : "offwheel",
	                       "error", "code", *c->err_code ? c->err_code : "EINTERNAL", "exit",
	                       c->err_exit ? c->err_exit : exit_code, "message",
	                       cli_json_bytes(*c->err_msg ? c->err_msg : "failed (no message)", NULL)));
}

void cli_json_out(json_t *doc)
{
	cli_progress_clear();
	json_printed = true;
	/* the test suite's check that the shapes are the documented ones */
	const char *dir = getenv("OFFWHEEL_SCHEMA_DIR");
	char err[1024];
	int bad = dir && *dir && doc && cli_schema_check(doc, dir, err, sizeof err);
	char *s = json_dumps(doc, JSON_INDENT(2) | JSON_ENSURE_ASCII);
	if (s) {
		puts(s);
		free(s);
	}
	json_decref(doc);
	if (bad) {
		fflush(stdout);
		fprintf(stderr, "offwheel: the --json document does not follow %s: %s\n", dir, err);
		exit(70);
	}
}

const char *cli_bytes(unsigned long long n, char *buf, size_t len)
{
	static const char *const units[] = {"B", "kB", "MB", "GB", "TB"};
	double v = (double)n;
	int u = 0;
	while (v >= 1000 && u < 4) {
		v /= 1000;
		u++;
	}
	/* v < 1000, or in TB at most 18446744.07 (ULLONG_MAX bytes): the number
	 * has fewer digits than ULLONG_MAX, which strnlen makes visible */
	if (!u) {
		snprintf(buf, len, "%llu B", n);
		return buf;
	}
	/* hundredths in integers: the digits are bounded by the type, as the
	 * compiler can see, where a double's %f is not */
	unsigned long long h = (unsigned long long)(v * 100 + 0.5);
	snprintf(buf, len, "%llu.%02llu %s", h / 100, h % 100, units[u]);
	return buf;
}

const char *cli_rate(unsigned long long bytes, double secs, char *buf, size_t len)
{
	cli_bytes(secs > 0 ? (unsigned long long)((double)bytes / secs) : 0, buf, len);
	size_t n = strlen(buf);
	if (n + 2 < len)
		memcpy(buf + n, "/s", 3);
	return buf;
}

/* --- events ----------------------------------------------------------------- */

/* Progress on a TTY: one line per active transfer, then a total line with
 * the batch's count, bytes, rate, bytes left and (once there is a rate and
 * every size left is known or estimated) ETA; redrawn at most 10 times a
 * second, on stderr.  The lines drawn are the last lines on the screen: any
 * other output clears them first (cli_progress_clear), so clearing never
 * touches a line it did not draw.  Events come from worker threads: drawing
 * and clearing hold `ev_lock`. */
#define EV_SLOTS 8

struct ev_slot {
	char what[256];
	uint64_t done, total;
	int used;
};

struct ev_state {
	const struct cli *c;
	int bars;
	int lines_shown;
	unsigned long long items, bytes_done; /* finished transfers */
	/* the batch announced (OW_EV_PLAN; plan_items 0: none), and its items
	 * finished (OW_EV_ITEM) with the bytes they received */
	char plan_what[32];
	unsigned long long plan_items, plan_bytes, plan_done, plan_got, plan_had;
	unsigned long long batch_bytes; /* bytes_done when it was announced */
	struct timespec batch_start;
	/* the rate the ETA uses: over the last 2.5 to 5 s (win[0] to now), not
	 * since the start (fast small files first would make it too short) */
	double win_t[2];
	unsigned long long win_b[2];
	struct ev_slot slot[EV_SLOTS];
	struct timespec start, last;
};
static struct ev_state evs;
static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;

static void clear_bars(void)
{
	for (int i = 0; i < evs.lines_shown; i++)
		fputs("\033[1A\r\033[K", stderr);
	if (evs.lines_shown)
		fflush(stderr);
	evs.lines_shown = 0;
}

void cli_progress_clear(void)
{
	pthread_mutex_lock(&ev_lock);
	clear_bars();
	pthread_mutex_unlock(&ev_lock);
}

int cli_columns(int fd, int fallback)
{
	struct winsize ws;
	if (isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40)
		return ws.ws_col;
	const char *e = getenv("COLUMNS");
	long n = e ? strtol(e, NULL, 10) : 0;
	return n >= 40 && n <= 1000 ? (int)n : fallback;
}

/* `s` left-aligned in `w` columns (spaces after it), within `n` bytes. */
static void pad_right(char *out, size_t n, const char *s, size_t w)
{
	size_t len = strlen(s);
	if (!n)
		return;
	if (w > n - 1)
		w = n - 1;
	if (len > w)
		len = w;
	memcpy(out, s, len);
	memset(out + len, ' ', w - len);
	out[w] = '\0';
}

/* `s` in at most `w` columns: a long name keeps its head and its tail,
 * joined by "..."; a URL only its tail (the page: variant and project). */
static void cut_middle(const char *s, int w, char *out, size_t n)
{
	size_t len = strlen(s);
	w = w < 0 ? 0 : w > CLI_FIT_MAX ? CLI_FIT_MAX : w;
	if (w < 8 || len <= (size_t)w) {
		snprintf(out, n, "%-*.*s", w, w, s);
		return;
	}
	size_t head = strstr(s, "://") ? 0 : (size_t)(w - 3) / 2, tail = (size_t)w - 3 - head;
	snprintf(out, n, "%.*s...%s", (int)head, s, s + len - tail);
}

/* A wheel's name in at most `w` columns: distribution and version stay
 * whole (they tell nvidia_cusparse from nvidia_cusparselt); the tags give
 * way, the longest forms first: python-abi-platform, the platform's first
 * tag only, python-platform, platform, python, none. */
void cli_fit_name(const char *s, int w, char *out, size_t n)
{
	size_t len = strlen(s);
	char *p[7];
	int k = 0;
	char buf[256];
	if (len <= (size_t)w || len < 4 || strcmp(s + len - 4, ".whl") || len - 4 >= sizeof buf) {
		cut_middle(s, w, out, n);
		return;
	}
	snprintf(buf, sizeof buf, "%.*s", (int)(len - 4), s);
	for (char *q = buf; k < 7 && q; k++) {
		p[k] = q;
		if ((q = strchr(q, '-')))
			*q++ = '\0';
	}
	if (k < 5 || k > 6) {
		cut_middle(s, w, out, n);
		return;
	}
	const char *py = p[k - 3], *abi = p[k - 2], *plat = p[k - 1];
	/* plat lies in buf: its first tag is shorter than buf, as the bound says */
	size_t pl = strcspn(plat, ".");
	int first = (int)(pl < sizeof buf ? pl : sizeof buf - 1);
	/* each candidate joins parts of buf, so it is shorter than buf */
	const char *part[5] = {p[0], p[1], py, abi, plat};
	static const int form[6][5] = {{0, 1, 2, 3, 4}, {0, 1, 2, 3, 4}, {0, 1, 2, 4, -1},
	                               {0, 1, 4, -1, -1}, {0, 1, 2, -1, -1}, {0, 1, -1, -1, -1}};
	char c[6][sizeof buf];
	for (int i = 0; i < 6; i++) {
		size_t at = 0;
		for (int j = 0; j < 5 && form[i][j] >= 0; j++) {
			const char *t = part[form[i][j]];
			size_t tl = form[i][j] == 4 && i > 0 ? (size_t)first : strlen(t);
			if (at + (j > 0) + tl >= sizeof c[i])
				break;
			if (j > 0)
				c[i][at++] = '-';
			memcpy(c[i] + at, t, tl);
			at += tl;
		}
		c[i][at] = '\0';
	}
	for (int i = 0; i < 6; i++)
		if (strlen(c[i]) <= (size_t)w) {
			pad_right(out, n, c[i], (size_t)w);
			return;
		}
	cut_middle(c[5], w, out, n);
}

static struct ev_slot *slot_for(const char *what, int create)
{
	struct ev_slot *free_slot = NULL;
	for (int i = 0; i < EV_SLOTS; i++) {
		if (evs.slot[i].used && !strncmp(evs.slot[i].what, what, sizeof evs.slot[i].what - 1))
			return &evs.slot[i];
		if (!evs.slot[i].used && !free_slot)
			free_slot = &evs.slot[i];
	}
	if (create && free_slot) {
		memset(free_slot, 0, sizeof *free_slot);
		snprintf(free_slot->what, sizeof free_slot->what, "%s", what);
		free_slot->used = 1;
	}
	return create ? free_slot : NULL;
}

static double since(const struct timespec *t)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t->tv_sec) + (double)(now.tv_nsec - t->tv_nsec) / 1e9;
}

const char *cli_duration(double secs, char *buf, size_t n)
{
	unsigned long s = (unsigned long)(secs + 0.999);
	if (s < 1)
		s = 1;
	if (s < 100)
		snprintf(buf, n, "%lu s", s);
	else if (s < 6000)
		snprintf(buf, n, "%lu min", (s + 59) / 60);
	else
		snprintf(buf, n, "%lu h %lu min", s / 3600, (s % 3600 + 59) / 60);
	return buf;
}

/* What the running transfers still have to receive (known sizes only); the
 * number of them whose size is not known yet goes to *unknown. */
static unsigned long long running_left(int *running, int *unknown)
{
	unsigned long long left = 0;
	*running = *unknown = 0;
	for (int i = 0; i < EV_SLOTS; i++) {
		const struct ev_slot *sl = &evs.slot[i];
		if (!sl->used)
			continue;
		(*running)++;
		if (!sl->total)
			(*unknown)++;
		else if (sl->total > sl->done)
			left += sl->total - sl->done;
	}
	return left;
}

/* The bytes the batch has left: exact when every size is known, else
 * estimated from the items finished ("~"), else a lower bound ("+"). */
static unsigned long long batch_left(char *mark)
{
	int running, unknown;
	unsigned long long left = running_left(&running, &unknown);
	unsigned long long ended = evs.plan_done + (unsigned long long)running;
	unsigned long long waiting = evs.plan_items > ended ? evs.plan_items - ended : 0;
	unsigned long long unsized = waiting + (unsigned long long)unknown;
	*mark = '\0';
	if (evs.plan_bytes) {
		unsigned long long got = evs.bytes_done - evs.batch_bytes;
		for (int i = 0; i < EV_SLOTS; i++)
			got += evs.slot[i].used ? evs.slot[i].done : 0;
		return evs.plan_bytes > got ? evs.plan_bytes - got : 0;
	}
	if (!unsized)
		return left;
	if (evs.plan_done && evs.plan_got) {
		*mark = '~';
		return left + unsized * (evs.plan_got / evs.plan_done);
	}
	*mark = '+';
	return left;
}

/* Bytes per second lately (see win_t); 0 while there is no rate yet. */
static double recent_rate(double secs, unsigned long long done)
{
	if (secs - evs.win_t[1] >= 2.5) {
		evs.win_t[0] = evs.win_t[1];
		evs.win_b[0] = evs.win_b[1];
		evs.win_t[1] = secs;
		evs.win_b[1] = done;
	}
	double span = secs - evs.win_t[0];
	return span > 0.5 && done > evs.win_b[0] ? (double)(done - evs.win_b[0]) / span : 0;
}

/* The total line from its parts: the count always, then as many of the
 * others as fit in `cols` - 1 columns (the last column stays empty: a
 * terminal would wrap there), the bytes left first, then the bytes done and
 * the rate, then the ETA; shown in the order count, done, left, ETA.  A part
 * is never cut. */
enum { TP_COUNT, TP_DONE, TP_LEFT, TP_ETA, TP_N };

static void put_total(char part[TP_N][96], int cols)
{
	static const int prio[TP_N] = {TP_COUNT, TP_LEFT, TP_DONE, TP_ETA};
	bool keep[TP_N] = {false};
	size_t used = 0;
	for (int i = 0; i < TP_N; i++) {
		size_t t = strlen(part[prio[i]]);
		if (t && (i == 0 || used + 2 + t <= (size_t)cols - 1)) {
			keep[prio[i]] = true;
			used += (i ? 2 : 0) + t;
		}
	}
	for (int i = 0; i < TP_N; i++)
		if (keep[i])
			fprintf(stderr, "%s%s", i ? ", " : "", part[i]);
	fputc('\n', stderr);
}

static void total_line(int cols)
{
	char part[TP_N][96] = {{0}}, b[32], b2[32], mark;
	unsigned long long done = evs.bytes_done - evs.batch_bytes;
	for (int i = 0; i < EV_SLOTS; i++)
		done += evs.slot[i].used ? evs.slot[i].done : 0;
	double secs = since(&evs.batch_start);
	if (evs.plan_items) /* the items stored before the batch count as done */
		snprintf(part[TP_COUNT], sizeof part[TP_COUNT], "  %llu of %llu %.31s done",
		         evs.plan_had + (evs.plan_done < evs.plan_items ? evs.plan_done : evs.plan_items),
		         evs.plan_had + evs.plan_items, evs.plan_what);
	else
		snprintf(part[TP_COUNT], sizeof part[TP_COUNT], "  %llu done", evs.items);
	double rate = recent_rate(secs, done);
	if (done || rate > 0) /* a batch of audits moves no bytes */
		snprintf(part[TP_DONE], sizeof part[TP_DONE], "%s at %s", cli_bytes(done, b, sizeof b),
		         cli_rate((unsigned long long)rate, 1.0, b2, sizeof b2));
	if (evs.plan_items) {
		unsigned long long left = batch_left(&mark);
		if (left || mark == '~')
			snprintf(part[TP_LEFT], sizeof part[TP_LEFT], "%s%s%s left",
			         mark == '~' ? "~" : "", cli_bytes(left, b, sizeof b),
			         mark == '+' ? "+" : "");
		/* an ETA only with a rate, and never for a lower bound */
		if (left && mark != '+' && rate > 0)
			snprintf(part[TP_ETA], sizeof part[TP_ETA], "ETA %s%s", mark == '~' ? "~" : "",
			         cli_duration((double)left / rate, b, sizeof b));
	}
	put_total(part, cols);
}

static void draw_bars(void)
{
	char b[32];
	int cols = cli_columns(2, 80);
	/* "  NAME 100% of 999.99 MB": the name takes what the rest leaves */
	int namew = cols - 24;
	namew = namew > 200 ? 200 : namew;
	clear_bars();
	for (int i = 0; i < EV_SLOTS; i++) {
		struct ev_slot *sl = &evs.slot[i];
		if (!sl->used)
			continue;
		char name[256];
		cli_fit_name(sl->what, namew, name, sizeof name);
		if (sl->total)
			fprintf(stderr, "  %s %3d%% of %s\n", name,
			        (int)(100.0 * (double)sl->done / (double)sl->total),
			        cli_bytes(sl->total, b, sizeof b));
		else
			fprintf(stderr, "  %s %s\n", name, cli_bytes(sl->done, b, sizeof b));
		evs.lines_shown++;
	}
	total_line(cols);
	evs.lines_shown++;
}

static void on_plan(const struct ow_event *ev)
{
	pthread_mutex_lock(&ev_lock);
	snprintf(evs.plan_what, sizeof evs.plan_what, "%s", ev->what ? ev->what : "");
	evs.plan_items = ev->done;
	evs.plan_had = ev->had;
	evs.plan_bytes = ev->total;
	evs.plan_done = evs.plan_got = 0;
	evs.batch_bytes = evs.bytes_done;
	clock_gettime(CLOCK_MONOTONIC, &evs.batch_start);
	memset(evs.win_t, 0, sizeof evs.win_t);
	memset(evs.win_b, 0, sizeof evs.win_b);
	pthread_mutex_unlock(&ev_lock);
}

static void on_progress(const struct ow_event *ev)
{
	const char *what = ev->what ? ev->what : "";
	if (ev->kind == OW_EV_PLAN) { /* drawn at once: "0 of 8 device audits done" */
		on_plan(ev);
		if (!ev->done)
			return;
		evs.last = (struct timespec){0, 0};
	} else if (ev->kind == OW_EV_ITEM) {
		evs.plan_done += evs.plan_items != 0;
		evs.plan_got += evs.plan_items ? ev->done : 0;
	} else if (ev->kind == OW_EV_DONE) {
		struct ev_slot *sl = slot_for(what, 0);
		evs.items++;
		evs.bytes_done += ev->done;
		if (sl)
			sl->used = 0;
	} else {
		struct ev_slot *sl = slot_for(what, 1);
		if (sl) {
			sl->done = ev->done;
			sl->total = ev->total;
		}
	}
	/* decided here, not at init: the command parses --progress and -q later */
	const struct cli *c = evs.c;
	if (evs.bars < 0)
		evs.bars = c->verbosity >= 0 && !c->json &&
		           (c->progress == CLI_PROGRESS_ALWAYS ||
		            (c->progress == CLI_PROGRESS_AUTO && isatty(2)));
	if (!evs.bars || since(&evs.last) < 0.1)
		return;
	clock_gettime(CLOCK_MONOTONIC, &evs.last);
	pthread_mutex_lock(&ev_lock);
	draw_bars();
	fflush(stderr);
	pthread_mutex_unlock(&ev_lock);
}

static void on_event(const struct ow_event *ev, void *ud)
{
	(void)ud;
	if (ev->kind != OW_EV_LOG) {
		on_progress(ev);
		return;
	}
	int show = (int)ev->level <= (evs.c->verbosity < 0 ? 0 : evs.c->verbosity + 1);
	if (!show)
		return;
	cli_progress_clear();
	/* messages name files and servers' text: no control character reaches
	 * the terminal */
	char *safe = cli_terminal_dup(ev->msg);
	/* one form for the person at the terminal: "offwheel CMD: warning: ..." */
	char prefix[64] = "";
	const char *cmd = evs.c->cmd ? evs.c->cmd : "";
	if (ev->level == OW_LOG_ERROR)
		snprintf(prefix, sizeof prefix, "offwheel %s: ", cmd);
	else if (ev->level == OW_LOG_WARN)
		snprintf(prefix, sizeof prefix, "offwheel %s: warning: ", cmd);
	cli_wrapped(stderr, prefix, safe ? safe : "(out of memory)");
	free(safe);
}

static int exit_rank(int e)
{
	return e == 0 ? 0 : e == 4 ? 1 : e == 5 ? 2 : e == 3 ? 3 : 4;
}

int cli_worse_exit(int worst, int rc)
{
	return exit_rank(rc) > exit_rank(worst) ? rc : worst;
}

void cli_progress_event(const struct ow_event *ev)
{
	if (evs.c)
		on_progress(ev);
}

void cli_events_init(struct cli *c)
{
	memset(&evs, 0, sizeof evs);
	evs.c = c;
	clock_gettime(CLOCK_MONOTONIC, &evs.start);
	evs.batch_start = evs.start;
	evs.bars = -1; /* undecided until the first progress event */
	ow_event_set_handler(on_event, NULL);
}

void cli_events_finish(void)
{
	cli_progress_clear();
	ow_event_set_handler(NULL, NULL);
}
