/* torchsite.c - find the installed torch set (see torchsite.h). */
#include "offwheel/torchsite.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#include "array.h"
#include "clock.h"
#include "fmt.h"
#include "fsbeneath.h"
#include "offwheel/error.h"
#include "pyask.h"

extern char **environ;

static const char *const pkg_names[OW_TORCH_NPKG] = {"torch", "torchvision", "torchaudio"};

#define MAX_LIBS 100000
#define MAX_DEPTH 8
#define PY_OUT_MAX 16384
/* An interpreter that never answers (a hung wrapper, a python waiting on a
 * network home directory) is killed after this long; OFFWHEEL_PYTHON_TIMEOUT
 * (seconds, 1..3600) sets another. */
#define PY_PROBE_TIMEOUT_S 60

/* Asks for: Python X.Y, torch's package directory, the purelib directory.
 * find_spec locates torch without importing it (a broken torch still
 * answers). */
static const char py_script[] =
	"import sys, sysconfig, importlib.util as u\n"
	"s = u.find_spec('torch')\n"
	"d = list(s.submodule_search_locations)[0] if s and s.submodule_search_locations else ''\n"
	"print('%d.%d' % sys.version_info[:2]); print(d); print(sysconfig.get_paths()['purelib'])\n";

/* ---- small helpers ---------------------------------------------------------- */

static int has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && !strcasecmp(s + n - m, suf);
}

/* libfoo.so, libfoo.so.12, libfoo.so.12.1, foo.pyd, foo.dll */
static int is_library_name(const char *name)
{
	if (has_suffix(name, ".so") || has_suffix(name, ".pyd") || has_suffix(name, ".dll"))
		return 1;
	const char *p = strstr(name, ".so.");
	if (!p)
		return 0;
	for (p += 4; *p; p++)
		if ((*p < '0' || *p > '9') && *p != '.')
			return 0;
	return 1;
}

/* The first size-1 bytes of a regular file (a FIFO in site-packages is
 * never waited on); -1 when it cannot be read. */
static int read_small_file(const char *path, char *buf, size_t size)
{
	struct stat st;
	int fd;
	if (ow_open_regular(path, &fd, &st))
		return -1;
	size_t n = 0;
	while (n < size - 1) {
		ssize_t r = read(fd, buf + n, size - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	close(fd);
	return 0;
}

/* The value of "Key: value" in a METADATA header block. */
/* The n bytes at s into out as a string, whole or not at all: a value too
 * long for its field is left empty (unknown), never cut (common.h). */
static void copy_span(char *out, size_t size, const char *s, size_t n)
{
	if (!size)
		return;
	if (n >= size)
		n = 0;
	memcpy(out, s, n);
	out[n] = '\0';
}

static void header_value(const char *text, const char *key, char *out, size_t size)
{
	size_t k = strlen(key);
	out[0] = '\0';
	for (const char *line = text; line && *line && *line != '\n';) {
		if (!strncasecmp(line, key, k) && line[k] == ':') {
			const char *v = line + k + 1;
			v += strspn(v, " \t");
			size_t n = strcspn(v, "\r\n");
			copy_span(out, size, v, n);
			return;
		}
		line = strchr(line, '\n');
		line = line ? line + 1 : NULL;
	}
}

/* ---- packages ----------------------------------------------------------------- */

/* "<name>-<version>.dist-info" in site whose METADATA names the package. */
static void read_version(const char *site, struct ow_torch_pkg *p)
{
	DIR *d = opendir(site);
	struct dirent *e;
	size_t n = strlen(p->name);
	while (d && (e = readdir(d))) {
		if (strncasecmp(e->d_name, p->name, n) || e->d_name[n] != '-' ||
		    !has_suffix(e->d_name, ".dist-info"))
			continue;
		char path[OW_TORCH_PATH_MAX + 300], text[8192], name[64];
		snprintf(path, sizeof path, "%s/%s/METADATA", site, e->d_name);
		if (read_small_file(path, text, sizeof text))
			continue;
		header_value(text, "Name", name, sizeof name);
		if (!strcasecmp(name, p->name)) {
			header_value(text, "Version", p->version, sizeof p->version);
			break;
		}
	}
	if (d)
		closedir(d);
}

/* torch/version.py: "cuda = '12.8'" or "cuda: Optional[str] = '12.8'". */
static void read_torch_cuda(struct ow_torch_install *in)
{
	char path[OW_TORCH_PATH_MAX + 32], text[16384];
	snprintf(path, sizeof path, "%s/version.py", in->pkgs[0].dir);
	if (read_small_file(path, text, sizeof text))
		return;
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, "cuda", 4) || (l[4] != ' ' && l[4] != ':' && l[4] != '='))
			continue;
		const char *eq = strchr(l, '='), *nl = strchr(l, '\n');
		if (!eq || (nl && eq > nl))
			continue;
		const char *q = eq + 1 + strspn(eq + 1, " \t");
		if (*q == '\'' || *q == '"')
			copy_span(in->cuda, sizeof in->cuda, q + 1, strcspn(q + 1, "'\""));
		return;
	}
}

int ow_torch_variant(const char *cuda, const char *version, char *buf, size_t size)
{
	const char *plus = version ? strchr(version, '+') : NULL;
	unsigned major, minor;
	buf[0] = '\0';
	if (cuda && *cuda && sscanf(cuda, "%u.%u", &major, &minor) == 2)
		snprintf(buf, size, "cu%u%u", major, minor);
	else if (plus && plus[1])
		snprintf(buf, size, "%s", plus + 1);
	return buf[0] ? 0 : OW_ENOENT;
}

/* ".../lib/python3.12/site-packages" -> "3.12" */
static void python_from_path(struct ow_torch_install *in)
{
	const char *p = strstr(in->site, "python3.");
	if (!p || in->python[0])
		return;
	size_t n = 2 + strspn(p + 8, "0123456789");
	copy_span(in->python, sizeof in->python, p + 6, n);
}

/* ---- libraries ------------------------------------------------------------------ */

static int add_lib(struct ow_torch_install *in, const char *path, int pkg)
{
	if (in->n_libs >= MAX_LIBS)
		return ow_err(OW_ETOOBIG, "%s: more than %d libraries", in->site, MAX_LIBS);
	struct ow_torch_lib *l = ow_array_more(in->libs, in->n_libs, sizeof *l);
	if (!l)
		return ow_err(OW_ENOMEM, "out of memory listing libraries");
	in->libs = l;
	char *copy = strdup(path);
	if (!copy)
		return ow_err(OW_ENOMEM, "out of memory listing libraries");
	in->libs[in->n_libs++] = (struct ow_torch_lib){copy, pkg};
	return 0;
}

static int walk_dir(struct ow_torch_install *in, const char *dir, int pkg, int depth);

static int walk_entry(struct ow_torch_install *in, const char *dir, const char *name, int pkg,
		      int depth)
{
	char path[OW_TORCH_PATH_MAX];
	struct stat sb;
	if (!strcmp(name, ".") || !strcmp(name, "..") || !strcmp(name, "__pycache__"))
		return 0;
	if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
		return 0;
	if (lstat(path, &sb))
		return 0;
	if (S_ISDIR(sb.st_mode))
		return depth < MAX_DEPTH ? walk_dir(in, path, pkg, depth + 1) : 0;
	return S_ISREG(sb.st_mode) && is_library_name(name) ? add_lib(in, path, pkg) : 0;
}

static int walk_dir(struct ow_torch_install *in, const char *dir, int pkg, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int rc = 0;
	if (!d)
		return 0;
	while (!rc && (e = readdir(d)))
		rc = walk_entry(in, dir, e->d_name, pkg, depth);
	closedir(d);
	return rc;
}

static int cmp_lib(const void *a, const void *b)
{
	return strcmp(((const struct ow_torch_lib *)a)->path, ((const struct ow_torch_lib *)b)->path);
}

static int read_packages(struct ow_torch_install *in)
{
	for (int i = 0; i < OW_TORCH_NPKG; i++) {
		struct ow_torch_pkg *p = &in->pkgs[i];
		struct stat sb;
		p->name = pkg_names[i];
		p->found = ow_fmt(p->dir, sizeof p->dir, "%s/%s", in->site, p->name) == 0 &&
			   stat(p->dir, &sb) == 0 &&
			   S_ISDIR(sb.st_mode);
		if (!p->found)
			continue;
		read_version(in->site, p);
		int rc = walk_dir(in, p->dir, i, 0);
		if (rc)
			return rc;
	}
	if (in->n_libs > 1)
		qsort(in->libs, in->n_libs, sizeof *in->libs, cmp_lib);
	return 0;
}

int ow_torch_find_site(const char *site, struct ow_torch_install **out)
{
	*out = NULL;
	struct ow_torch_install *in = calloc(1, sizeof *in);
	if (!in)
		return ow_err(OW_ENOMEM, "out of memory");
	snprintf(in->site, sizeof in->site, "%s", site);
	int rc = read_packages(in);
	if (!rc && !in->pkgs[0].found)
		rc = ow_err(OW_ENOENT,
			    "%s: no torch/ here — give the site-packages directory that holds "
			    "torch (python -c 'import torch; print(torch.__file__)' shows it)",
			    site);
	if (rc) {
		ow_torch_install_free(in);
		return rc;
	}
	read_torch_cuda(in);
	ow_torch_variant(in->cuda, in->pkgs[0].version, in->variant, sizeof in->variant);
	python_from_path(in);
	*out = in;
	return 0;
}

void ow_torch_install_free(struct ow_torch_install *in)
{
	if (!in)
		return;
	for (size_t i = 0; i < in->n_libs; i++)
		free(in->libs[i].path);
	free(in->libs);
	free(in);
}

/* ---- asking a Python interpreter ------------------------------------------------ */

static int probe_timeout_s(void)
{
	const char *v = getenv("OFFWHEEL_PYTHON_TIMEOUT");
	char *end;
	long s = v && *v ? strtol(v, &end, 10) : 0;
	return v && *v && !*end && s >= 1 && s <= 3600 ? (int)s : PY_PROBE_TIMEOUT_S;
}

/* Everything the interpreter prints until it closes stdout; 0, or -1 when
 * `timeout_s` passed first. */
static int read_all(int fd, char *buf, size_t size, int timeout_s)
{
	size_t n = 0;
	int64_t end = ow_mono_ms() + (int64_t)timeout_s * 1000;
	int rc = 0;
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int64_t left = end - ow_mono_ms();
		int pr = left > 0 ? poll(&p, 1, (int)left) : 0;
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr == 0) {
			rc = -1;
			break;
		}
		ssize_t r = pr < 0 ? -1 : read(fd, buf + n, size - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
		if (n == size - 1)
			break;
	}
	buf[n] = '\0';
	return rc;
}

static int spawn_python(const char *python, const char *script, bool quiet, int fd_out,
                        pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	posix_spawnattr_init(&at);
	/* its own process group: a wrapper's children die with it on a timeout */
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd_out, 1);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (quiet)
		posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	char *argv[] = {(char *)(uintptr_t)python, (char *)(uintptr_t) "-c",
			(char *)(uintptr_t)script, NULL};
	int err = posix_spawnp(pid, python, &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	return err ? ow_err(OW_ENOENT, "%s: cannot run it (%s) — give a Python interpreter "
				       "with --python, or the directory with --site-packages",
			    python, strerror(err))
		   : 0;
}

int ow_python_ask(const char *python, const char *script, const char *asked, bool quiet,
                  char *buf, size_t size)
{
	int fds[2];
	pid_t pid;
	if (pipe2(fds, O_CLOEXEC))
		return ow_err(OW_EIO, "pipe: %s", strerror(errno));
	int rc = spawn_python(python, script, quiet, fds[1], &pid), timeout_s = probe_timeout_s();
	close(fds[1]);
	if (!rc && read_all(fds[0], buf, size, timeout_s)) {
		kill(-pid, SIGKILL);
		waitpid(pid, NULL, 0);
		rc = ow_err(OW_EIO, "%s: no answer within %d s (asked %s) — "
		                         "check that it runs ('%s -V'), give another with --python, or "
		                         "the directory with --site-packages",
		            python, timeout_s, asked, python);
	}
	close(fds[0]);
	int status = 0;
	if (!rc && (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)))
		rc = ow_err(OW_ENOENT, "%s: the interpreter failed (exit status %d) — is it a "
				       "Python 3?",
			    python, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return rc;
}

static void next_line(char **p, char *out, size_t size)
{
	size_t n = strcspn(*p, "\n");
	copy_span(out, size, *p, n);
	*p += n + ((*p)[n] == '\n');
}

int ow_torch_find_python(const char *python, struct ow_torch_install **out)
{
	char buf[PY_OUT_MAX], ver[16], torch_dir[OW_TORCH_PATH_MAX], purelib[OW_TORCH_PATH_MAX];
	*out = NULL;
	int rc = ow_python_ask(python, py_script, "where torch is installed", false, buf, sizeof buf);
	if (rc)
		return rc;
	char *p = buf;
	next_line(&p, ver, sizeof ver);
	next_line(&p, torch_dir, sizeof torch_dir);
	next_line(&p, purelib, sizeof purelib);
	if (!torch_dir[0])
		return ow_err(OW_ENOENT, "%s (Python %s) has no torch installed (site-packages %s) — "
					 "install it, or give another interpreter with --python",
			      python, ver, purelib);
	char *slash = strrchr(torch_dir, '/');
	if (slash)
		*slash = '\0';
	rc = ow_torch_find_site(torch_dir, out);
	if (!rc)
		snprintf((*out)->python, sizeof (*out)->python, "%s", ver);
	return rc;
}
