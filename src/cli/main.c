/* main.c - the command table and global options. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "clitext.h"

/* The command table: name, entry point, and the one line `offwheel --help`
 * shows for it. */
static const struct cli_command commands[] = {
	{"sync", cmd_sync, "crawl + resolve + fetch: the main job"},
	{"crawl", cmd_crawl, "fetch index pages, record every file"},
	{"resolve", cmd_resolve, "pick matched sets for a target matrix, print the matrix"},
	{"audit", cmd_audit, "which GPU architectures wheels carry; can a device run them"},
	{"fetch", cmd_fetch, "download files into the verified store (parallel, resumable)"},
	{"verify", cmd_verify, "re-hash every object in the store"},
	{"ls", cmd_ls, "list pages, files, sets or objects"},
	{"fsck", cmd_fsck, "check every invariant of the workspace"},
	{"gc", cmd_gc, "remove garbage: objects without a row, leftover temp files"},
	{"smoke", cmd_smoke, "on a GPU: run the smoke kernel and load the installed set's images"},
	{"doctor", cmd_doctor, "diagnose \"no kernel image\" end to end and print the fix"},
	{"export", cmd_export, "write a signed tree for pip --no-index (USB stick, lab server)"},
	{"check", cmd_check, "verify an export on the target (signature, hashes, rollback)"},
	{"probe", cmd_probe, "on a lab machine: describe it (Pythons, libc, GPUs) for the stick"},
	{"install", cmd_install, "on a lab machine: check the stick, install its set, smoke, report"},
	{"fleet", cmd_fleet, "the lab's table from a stick: each machine's set, install, smoke"},
	{"keygen", cmd_keygen, "make an Ed25519 key pair (signify format) for signing exports"},
	{NULL, NULL, NULL},
};

static void main_usage(FILE *f)
{
	fprintf(f, "offwheel %s — offline wheel fetcher and verifier for PyTorch\n\n"
	           "usage: offwheel [--home DIR] [--json] [-q|-v] [--jobs N]\n"
	           "                [--progress=auto|always|never] COMMAND [ARGS]\n\n"
	           "commands:\n",
	        OW_VERSION);
	for (const struct cli_command *c = commands; c->name; c++)
		fprintf(f, "  %-8s %s\n", c->name, c->summary);
	fprintf(f, "\n'offwheel help COMMAND' (or 'offwheel COMMAND --help'): its options.\n"
	           "Exit codes: 0 done, 1 error, 2 usage, 3 verification failed, 4 incomplete,\n"
	           "  5 no GPU/driver, 130 interrupted (Ctrl-C), 143 terminated (SIGTERM): run\n"
	           "  the same command again to resume.\n"
	           "Environment: OFFWHEEL_HOME (the workspace, default ~/.cache/offwheel),\n"
	           "  OFFWHEEL_PYTORCH_URL (a mirror of https://download.pytorch.org/whl that\n"
	           "  --channel reads), OFFWHEEL_LIBCUDA (the driver library), OFFWHEEL_LIBCURL\n"
	           "  (the libcurl that network commands load), SSL_CERT_FILE (CA bundle).\n");
}

static long default_jobs(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 64 ? 64 : n;
}

/* The command a mistyped name most likely meant, NULL when none is close. */
static const char *nearest_command(const char *name)
{
	const char *names[32];
	size_t n = 0;
	for (const struct cli_command *c = commands; c->name && n < 32; c++)
		names[n++] = c->name;
	return cli_nearest(name, names, n);
}

static bool is_global_with_value(const char *a)
{
	return !strcmp(a, "--home") || !strcmp(a, "--jobs") || !strcmp(a, "--progress") ||
	       !strcmp(a, "--lock-timeout");
}

/* What a global option's value is, for the message when it is missing. */
static const char *global_value_hint(const char *a)
{
	if (!strcmp(a, "--home"))
		return "the workspace directory, say --home ~/offwheel";
	if (!strcmp(a, "--progress"))
		return "auto, always or never";
	return "a number";
}

/* What the global options before the command may be (values joined with '='
 * or following). */
static bool is_global(const char *a)
{
	static const char *const plain[] = {"--json", "--quiet", "-q", "--verbose", "-v", "-vv",
	                                    "-vvv", "--help", "-h", "--version", "-V"};
	for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
		if (!strcmp(a, plain[i]))
			return true;
	static const char *const valued[] = {"--home=", "--jobs=", "--progress=", "--lock-timeout="};
	for (size_t i = 0; i < sizeof valued / sizeof valued[0]; i++)
		if (!strncmp(a, valued[i], strlen(valued[i])))
			return true;
	return is_global_with_value(a);
}

/* Global options before the command: the same as after it, so move them
 * behind the command name and let the command parse them all. */
static int find_command(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (a[0] != '-')
			return i;
		if (is_global_with_value(a))
			i++;
	}
	return -1;
}

/* A usage error before any command ran: the message, and with --json the
 * error document. */
static int early_usage(struct cli *c, int argc, char **argv, const char *fmt, ...)
	OW_PRINTF(4, 5);
static int early_usage(struct cli *c, int argc, char **argv, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	char *safe = cli_terminal_dup(msg); /* it quotes an argument as given */
	snprintf(msg, sizeof msg, "%s", safe ? safe : "out of memory");
	free(safe);
	cli_wrapped(stderr, "offwheel: ", msg);
	for (int i = 1; i < argc; i++)
		c->json |= !strcmp(argv[i], "--json");
	c->err_exit = 2;
	snprintf(c->err_code, sizeof c->err_code, "USAGE");
	snprintf(c->err_msg, sizeof c->err_msg, "%s", msg);
	cli_json_error(c, 2);
	return 2;
}

static const struct cli_command *find(const char *name)
{
	const struct cli_command *cmd = commands;
	while (cmd->name && strcmp(cmd->name, name))
		cmd++;
	return cmd->name ? cmd : NULL;
}

static int unknown_command(struct cli *c, int argc, char **argv, const char *name)
{
	const char *near = nearest_command(name);
	if (near)
		return early_usage(c, argc, argv, "'%s' is not a command; did you mean '%s'? (see "
		                                  "'offwheel --help')", name, near);
	return early_usage(c, argc, argv, "'%s' is not a command; see 'offwheel --help'", name);
}

/* offwheel help [COMMAND]: the overview, or the command's --help. */
static int help(struct cli *c, int argc, char **argv, int ci)
{
	if (ci + 1 >= argc) {
		main_usage(stdout);
		return 0;
	}
	const struct cli_command *cmd = find(argv[ci + 1]);
	if (!cmd)
		return unknown_command(c, argc, argv, argv[ci + 1]);
	char *av[] = {argv[ci + 1], (char *)"--help", NULL};
	c->cmd = cmd->name;
	return cmd->run(c, 2, av);
}

int main(int argc, char **argv)
{
	struct cli c = {.jobs = (int)default_jobs(), .lock_timeout = 600};
	int ci = find_command(argc, argv);
	for (int i = 1; i < (ci < 0 ? argc : ci); i++) {
		if (!strcmp(argv[i], "--version") || !strcmp(argv[i], "-V")) {
			printf("offwheel %s\n", OW_VERSION);
			return 0;
		}
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			main_usage(stdout);
			return 0;
		}
		if (!is_global(argv[i]))
			return early_usage(&c, argc, argv,
			                   "unknown option '%s' (before a command only the global options "
			                   "go: --home, --json, -q, -v, --jobs, --progress, --lock-timeout, "
			                   "--help, --version); see 'offwheel --help'",
			                   argv[i]);
		if (is_global_with_value(argv[i]) && ++i == argc)
			return early_usage(&c, argc, argv, "%s needs a value (%s) and then a command; see "
			                                   "'offwheel --help'",
			                   argv[i - 1], global_value_hint(argv[i - 1]));
	}
	if (ci < 0) {
		main_usage(stderr);
		return early_usage(&c, argc, argv, "no command given; see 'offwheel --help'");
	}
	if (!strcmp(argv[ci], "help"))
		return help(&c, argc, argv, ci);
	const struct cli_command *cmd = find(argv[ci]);
	if (!cmd)
		return unknown_command(&c, argc, argv, argv[ci]);
	/* argv for the command: name, then the globals given before it, then the rest */
	char **av = calloc((size_t)argc + 1, sizeof *av);
	if (!av)
		return 1;
	int n = 0;
	av[n++] = argv[ci];
	for (int i = 1; i < ci; i++)
		av[n++] = argv[i];
	for (int i = ci + 1; i < argc; i++)
		av[n++] = argv[i];
	c.cmd = cmd->name;
	cli_events_init(&c);
	int rc = cmd->run(&c, n, av);
	cli_events_finish();
	if (rc) /* --json: a failure that printed no document prints the error one */
		cli_json_error(&c, rc);
	free(av);
	return rc;
}
