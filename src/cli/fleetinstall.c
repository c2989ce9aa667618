/* fleetinstall.c - install's steps (see fleetinstall.h). */
#include "fleetinstall.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "offwheel/error.h"
#include "offwheel/str.h"

extern char **environ;

/* What a child may print that we keep (pip list of a big venv is kilobytes). */
#define CAPTURE_MAX (16u << 20)

static int read_all(int fd, char **out)
{
	struct ow_str b = {0};
	char buf[8192];
	ssize_t r;
	while ((r = read(fd, buf, sizeof buf)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || b.n + (size_t)r > CAPTURE_MAX)
			break;
		ow_str_put(&b, buf, (size_t)r);
	}
	if (!b.n)
		ow_str_puts(&b, "");
	return ow_str_take(&b, out) ? ow_err(OW_ENOMEM, "out of memory") : 0;
}

static int wait_for(pid_t pid, const char *what)
{
	int status = 0;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return ow_err(OW_EIO, "%s: cannot wait for it: %s", what, strerror(errno));
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFEXITED(status))
		return ow_err(OW_EIO, "'%s' failed (exit status %d)", what, WEXITSTATUS(status));
	return ow_err(OW_EIO, "'%s' was killed by signal %d", what, WTERMSIG(status));
}

/* "python -m pip install ..." for messages (owned; NULL out of memory) */
static char *command_text(const char *const *argv)
{
	struct ow_str b = {0};
	char *out = NULL;
	for (size_t i = 0; argv[i]; i++)
		ow_str_printf(&b, "%s%s", i ? " " : "", argv[i]);
	return ow_str_take(&b, &out) ? NULL : out;
}

int fleet_spawn(const char *const *argv, char **captured)
{
	int fds[2] = {-1, -1};
	posix_spawn_file_actions_t fa;
	pid_t pid;
	char *what = command_text(argv);
	if (!what)
		return ow_err(OW_ENOMEM, "out of memory");
	if (captured && pipe2(fds, O_CLOEXEC)) {
		free(what);
		return ow_err(OW_EIO, "pipe: %s", strerror(errno));
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, captured ? fds[1] : 2, 1);
	int err = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)(uintptr_t)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (captured)
		close(fds[1]);
	int rc = err ? ow_err(OW_ENOENT, "%s: cannot run it (%s)", argv[0], strerror(err)) : 0;
	if (!rc && captured)
		rc = read_all(fds[0], captured);
	if (captured)
		close(fds[0]);
	int wrc = err ? 0 : wait_for(pid, what);
	if (!rc)
		rc = wrc;
	if (rc && captured) {
		free(*captured);
		*captured = NULL;
	}
	free(what);
	return rc;
}

int fleet_make_venv(const char *py, const char *dir, char **python)
{
	char *p = ow_aprintf("%s/bin/python", dir);
	int rc = p ? 0 : ow_err(OW_ENOMEM, "out of memory");
	if (!rc && access(p, X_OK) != 0) {
		const char *argv[] = {py, "-m", "venv", dir, NULL};
		if ((rc = fleet_spawn(argv, NULL)))
			ow_err_prefix(rc, "cannot make the venv %s with %s (on Debian: apt install "
			                  "python3-venv): ", dir, py);
	}
	if (rc) {
		free(p);
		p = NULL;
	}
	*python = p;
	return rc;
}

int fleet_pip_install(const char *python, const char *stick, const char *req, bool verbose)
{
	char *wheels = ow_aprintf("%s/wheels", stick), *r = ow_aprintf("%s/%s", stick, req);
	int rc = wheels && r ? 0 : ow_err(OW_ENOMEM, "out of memory");
	const char *argv[] = {python, "-m", "pip", "install", "--no-index", "--find-links", wheels,
	                      "--require-hashes", "-r", r, "--disable-pip-version-check",
	                      verbose ? NULL : "-q", NULL};
	if (!rc && (rc = fleet_spawn(argv, NULL)))
		ow_err_prefix(rc, "pip could not install %s (its messages are above): ", req);
	free(wheels);
	free(r);
	return rc;
}

int fleet_pip_list(const char *python, json_t **out)
{
	const char *argv[] = {python, "-m", "pip", "list", "--format", "json",
	                      "--disable-pip-version-check", NULL};
	char *text = NULL;
	json_error_t e;
	*out = NULL;
	int rc = fleet_spawn(argv, &text);
	json_t *doc = rc ? NULL : json_loads(text, 0, &e), *o;
	size_t i;
	if (!rc && !json_is_array(doc))
		rc = ow_err(OW_EINVAL, "%s -m pip list --format json: not a JSON list", python);
	json_t *a = rc ? NULL : json_array();
	json_array_foreach(rc ? NULL : doc, i, o) {
		const char *n = json_string_value(json_object_get(o, "name"));
		const char *v = json_string_value(json_object_get(o, "version"));
		if (n && v)
			json_array_append_new(a, json_pack("{s:s, s:s}", "name", n, "version", v));
	}
	json_decref(doc);
	free(text);
	*out = a;
	return rc;
}

int fleet_write_report(const char *dir, const char *name, json_t *doc, char **path)
{
	char *reports = ow_aprintf("%s/reports", dir);
	char *p = ow_aprintf("%s/reports/%s.json", dir, name);
	char *tmp = ow_aprintf("%s/reports/.%s.json.tmp", dir, name);
	int rc = reports && p && tmp ? 0 : ow_err(OW_ENOMEM, "out of memory");
	if (!rc && mkdir(reports, 0777) && errno != EEXIST)
		rc = ow_err(OW_EIO, "%s: cannot make it: %s", reports, strerror(errno));
	if (!rc && (json_dump_file(doc, tmp, JSON_INDENT(2) | JSON_ENSURE_ASCII) ||
	            rename(tmp, p))) {
		rc = ow_err(OW_EIO, "%s: cannot write it: %s", p, strerror(errno));
		remove(tmp);
	}
	free(reports);
	free(tmp);
	if (rc) {
		free(p);
		p = NULL;
	}
	*path = p;
	return rc;
}
