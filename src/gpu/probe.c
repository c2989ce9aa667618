/* probe.c - what this machine is (see probe.h; docs/fleet.md). */
#include "offwheel/probe.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <gnu/libc-version.h>
#endif

#include "array.h"
#include "clock.h"
#include "fmt.h"
#include "offwheel/cuda.h"
#include "offwheel/error.h"
#include "offwheel/str.h"
#include "pyask.h"
#include "tags.h"

#define PY_ANSWER_MAX 8192
#define MAX_PYTHONS 64

/* What packaging.tags reads to name a CPython's ABI (_cpython_abis): the
 * version, the implementation, Py_GIL_DISABLED, Py_DEBUG (else the
 * refcount hook), and SOABI for other implementations. */
static const char py_script[] =
	"import sys, sysconfig\n"
	"d = sysconfig.get_config_var('Py_DEBUG')\n"
	"d = hasattr(sys, 'gettotalrefcount') if d is None else d\n"
	"print(sys.executable); print('%d.%d.%d' % sys.version_info[:3])\n"
	"print(sys.implementation.name)\n"
	"print(int(bool(sysconfig.get_config_var('Py_GIL_DISABLED'))))\n"
	"print(int(bool(d))); print(sysconfig.get_config_var('SOABI') or '')\n";

/* s[0..n) into out when it fits, else "": a field is whole or empty, never cut */
static void copy_span(char *out, size_t cap, const char *s, size_t n)
{
	if (n >= cap)
		n = 0;
	memcpy(out, s, n);
	out[n] = '\0';
}

static void copy_text(char *out, size_t cap, const char *s)
{
	copy_span(out, cap, s, strlen(s));
}

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-';
}

const char *ow_probe_name_problem(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > OW_PROBE_NAME_MAX)
		return "a machine's name is 1 to 64 characters";
	if (name[0] == '.' || name[0] == '-')
		return "a machine's name starts with a letter, a digit or '_'";
	for (size_t i = 0; i < n; i++)
		if (!name_char(name[i]))
			return "a machine's name holds only letters, digits, '.', '_' and '-'";
	return NULL;
}

/* The host name, its other characters as '-', at most 64 of them. */
static void host_name(char *out)
{
	char h[256] = "";
	if (gethostname(h, sizeof h - 1) || !h[0])
		snprintf(h, sizeof h, "machine");
	size_t i = 0;
	for (; h[i] && i < OW_PROBE_NAME_MAX; i++)
		out[i] = name_char(h[i]) ? h[i] : '-';
	out[i] = '\0';
	if (out[0] == '.' || out[0] == '-')
		out[0] = '_';
}

static int push_str(char ***v, size_t *n, const char *s)
{
	char **nv = ow_array_more(*v, *n, sizeof **v);
	if (!nv)
		return ow_err(OW_ENOMEM, "out of memory");
	*v = nv;
	/* analyzer: kept in (*v)[*n], counted once stored; freed with the probe (ow_probe_free) */
	if (!(nv[*n] = strdup(s)))
		return ow_err(OW_ENOMEM, "out of memory");
	(*n)++;
	return 0;
}

/* ---- the C library and the platform tags ----------------------------------- */

#if !defined(__GLIBC__)
static void musl_version(struct ow_probe *p)
{
	char cmd[128], line[128];
	if (ow_fmt(cmd, sizeof cmd, "/lib/ld-musl-%s.so.1 2>&1", p->arch))
		return;
	FILE *f = popen(cmd, "r");
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, "Version ", 8) == 0)
			copy_span(p->libc_version, sizeof p->libc_version, line + 8,
			          strcspn(line + 8, " \n"));
	if (f)
		pclose(f);
}
#endif

static void find_libc(struct ow_probe *p)
{
#if defined(__GLIBC__)
	snprintf(p->libc, sizeof p->libc, "glibc");
	copy_text(p->libc_version, sizeof p->libc_version, gnu_get_libc_version());
#else
	char path[128];
	if (!ow_fmt(path, sizeof path, "/lib/ld-musl-%s.so.1", p->arch) && access(path, X_OK) == 0) {
		snprintf(p->libc, sizeof p->libc, "musl");
		musl_version(p);
	}
#endif
}

static int glibc_platforms(struct ow_probe *p, int major, int minor)
{
	struct ow_target t = {.py_major = 3, .py_minor = 12, .os = OW_OS_LINUX,
	                      .glibc_major = major, .glibc_minor = minor};
	copy_text(t.arch, sizeof t.arch, p->arch);
	ow_tagorder *o = ow_tagorder_new(&t);
	if (!o)
		return ow_err(OW_ENOMEM, "out of memory");
	int rc = 0;
	for (size_t i = 0; !rc && i < ow_tagorder_platforms(o); i++)
		rc = push_str(&p->platforms, &p->nplatforms, ow_tagorder_platform(o, i));
	ow_tagorder_free(o);
	return rc;
}

/* packaging's _musllinux.platform_tags: musllinux_1_Y down to 1_0. */
static int musl_platforms(struct ow_probe *p, int major, int minor)
{
	char tag[96];
	int rc = 0;
	for (int m = minor; !rc && major == 1 && m >= 0; m--)
		if (!(rc = ow_fmt(tag, sizeof tag, "musllinux_1_%d_%s", m, p->arch)))
			rc = push_str(&p->platforms, &p->nplatforms, tag);
	if (!rc && !(rc = ow_fmt(tag, sizeof tag, "linux_%s", p->arch)))
		rc = push_str(&p->platforms, &p->nplatforms, tag);
	return rc;
}

static int find_platforms(struct ow_probe *p)
{
	int major = 0, minor = 0;
	if (strcmp(p->os, "linux") != 0)
		return 0;
	if (sscanf(p->libc_version, "%d.%d", &major, &minor) != 2)
		major = minor = 0;
	if (strcmp(p->libc, "musl") == 0)
		return musl_platforms(p, major, minor);
	return glibc_platforms(p, strcmp(p->libc, "glibc") == 0 ? major : 0, minor);
}

static void find_system(struct ow_probe *p)
{
	struct utsname u;
	if (uname(&u) == 0) {
		copy_text(p->arch, sizeof p->arch, u.machine);
		copy_text(p->os, sizeof p->os,
		          strcmp(u.sysname, "Linux") == 0    ? "linux"
		          : strcmp(u.sysname, "Darwin") == 0 ? "macos"
		                                             : u.sysname);
	}
	find_libc(p);
}

/* ---- the driver ------------------------------------------------------------- */

/* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.86.10  Wed ..." */
static void driver_release(struct ow_probe *p)
{
	char line[512];
	FILE *f = fopen("/proc/driver/nvidia/version", "r");
	if (!f)
		return;
	if (fgets(line, sizeof line, f)) {
		char *m = strstr(line, "Kernel Module");
		if (m) {
			m += strlen("Kernel Module");
			m += strspn(m, " \t");
			copy_span(p->driver_release, sizeof p->driver_release, m, strcspn(m, " \t\n"));
		}
	}
	fclose(f);
}

static int read_gpus(struct ow_probe *p, ow_cuda *cu)
{
	int n = 0, rc = ow_cuda_device_count(cu, &n);
	if (rc || n <= 0)
		return rc;
	if (!(p->gpus = calloc((size_t)n, sizeof *p->gpus)))
		return ow_err(OW_ENOMEM, "out of memory");
	for (int i = 0; i < n && !rc; i++) {
		struct ow_cuda_device d;
		if (!(rc = ow_cuda_device(cu, i, &d))) {
			p->gpus[i].ordinal = d.ordinal;
			p->gpus[i].cc = d.cc;
			copy_text(p->gpus[i].name, sizeof p->gpus[i].name, d.name);
			p->ngpus++;
		}
	}
	return rc;
}

/* No driver is an answer; a driver that fails after opening is one too
 * (its detail kept), only running out of memory is an error. */
static int find_driver(struct ow_probe *p)
{
	ow_cuda *cu = NULL;
	int rc = ow_cuda_open(&cu);
	if (rc == OW_ENOMEM)
		return rc;
	if (!rc && !(p->libcuda = strdup(ow_cuda_path(cu))))
		rc = ow_err(OW_ENOMEM, "out of memory");
	if (!rc && !(rc = ow_cuda_driver_version(cu, &p->driver)))
		rc = read_gpus(p, cu);
	ow_cuda_close(cu);
	if (rc == OW_ENOMEM)
		return rc;
	if (rc) {
		p->driver = p->driver > 0 && p->ngpus ? p->driver : 0;
		if (!(p->driver_error = ow_err_detail_dup()))
			return ow_err(OW_ENOMEM, "out of memory");
	}
	if (p->driver)
		driver_release(p);
	return 0;
}

/* ---- the Pythons ------------------------------------------------------------ */

static void next_line(char **s, char *out, size_t cap)
{
	size_t k = strcspn(*s, "\n");
	copy_span(out, cap, *s, k);
	*s += k + ((*s)[k] == '\n');
}

/* packaging.tags: _cpython_abis, then abi3 (not for a free-threaded
 * build), then none; another implementation: its SOABI, then none. */
static int python_abis(struct ow_probe_python *py, const char *soabi)
{
	int major = 0, minor = 0, rc = 0;
	char abi[64];
	sscanf(py->version, "%d.%d", &major, &minor);
	bool ft = py->freethreaded && (major > 3 || minor >= 13);
	if (strcmp(py->impl, "cpython") == 0) {
		ow_fmt(abi, sizeof abi, "cp%d%d%s%s", major, minor, ft ? "t" : "", py->debug ? "d" : "");
		rc = push_str(&py->abis, &py->nabis, abi);
		if (!rc && py->debug && !ow_fmt(abi, sizeof abi, "cp%d%d%s", major, minor, ft ? "t" : ""))
			rc = push_str(&py->abis, &py->nabis, abi);
		if (!rc && !ft && major == 3 && minor >= 2)
			rc = push_str(&py->abis, &py->nabis, "abi3");
	} else if (*soabi) {
		copy_text(abi, sizeof abi, soabi);
		for (char *c = abi; *c; c++)
			*c = (*c == '-' || *c == '.') ? '_' : *c;
		rc = push_str(&py->abis, &py->nabis, abi);
	}
	return rc ? rc : push_str(&py->abis, &py->nabis, "none");
}

/* found: an interpreter found on PATH that does not run (a pyenv shim of a
 * version not selected) is no interpreter of this machine: OW_ENOENT, left out */
static int ask_python(struct ow_probe_python *py, bool found)
{
	char buf[PY_ANSWER_MAX], line[PATH_MAX], flag[8], soabi[128];
	int rc = ow_python_ask(py->path, py_script, "its version and ABI", found, buf, sizeof buf);
	if (rc && found)
		return OW_ENOENT;
	if (rc)
		return (py->error = ow_err_detail_dup()) ? 0 : ow_err(OW_ENOMEM, "out of memory");
	char *s = buf;
	next_line(&s, line, sizeof line);
	/* analyzer: kept in p->pythons[i], freed by python_dispose */
	if (!(py->executable = strdup(line)))
		return ow_err(OW_ENOMEM, "out of memory");
	next_line(&s, py->version, sizeof py->version);
	next_line(&s, py->impl, sizeof py->impl);
	next_line(&s, flag, sizeof flag);
	py->freethreaded = flag[0] == '1';
	next_line(&s, flag, sizeof flag);
	py->debug = flag[0] == '1';
	next_line(&s, soabi, sizeof soabi);
	return python_abis(py, soabi);
}

static void python_dispose(struct ow_probe_python *py)
{
	for (size_t j = 0; j < py->nabis; j++)
		free(py->abis[j]);
	free(py->abis);
	free(py->path);
	free(py->executable);
	free(py->error);
	memset(py, 0, sizeof *py);
}

/* The same interpreter reached by two names (a shim, a link): once */
static bool same_python(const struct ow_probe *p, const struct ow_probe_python *py)
{
	char a[PATH_MAX], b[PATH_MAX];
	if (!py->executable || !realpath(py->executable, a))
		return false;
	for (size_t i = 0; i + 1 < p->npythons; i++)
		if (p->pythons[i].executable && realpath(p->pythons[i].executable, b) &&
		    strcmp(a, b) == 0)
			return true;
	return false;
}

static int add_python(struct ow_probe *p, const char *path, bool found)
{
	struct ow_probe_python *v = ow_array_more(p->pythons, p->npythons, sizeof *v);
	if (!v)
		return ow_err(OW_ENOMEM, "out of memory");
	p->pythons = v;
	struct ow_probe_python *py = &v[p->npythons];
	memset(py, 0, sizeof *py);
	/* analyzer: kept in p->pythons[npythons], counted right after; freed by python_dispose */
	if (!(py->path = strdup(path)))
		return ow_err(OW_ENOMEM, "out of memory");
	p->npythons++;
	int rc = ask_python(py, found);
	if ((rc == OW_ENOENT && found) || (!rc && found && same_python(p, py))) {
		python_dispose(py);
		p->npythons--;
		rc = 0;
	}
	return rc;
}

/* python3, python3.N, python3.Nt in each directory of $PATH, each real file once */
static int path_candidates(char ***out, size_t *n)
{
	char *path = strdup(getenv("PATH") ? getenv("PATH") : "/usr/local/bin:/usr/bin:/bin");
	char **reals = NULL, cand[PATH_MAX], real[PATH_MAX];
	size_t nreals = 0;
	int rc = path ? 0 : ow_err(OW_ENOMEM, "out of memory");
	for (char *save = NULL, *d = path ? strtok_r(path, ":", &save) : NULL; !rc && d;
	     d = strtok_r(NULL, ":", &save))
		for (int m = -1; !rc && m <= 40 && *n < MAX_PYTHONS; m++) {
			int k = m < 0 ? 0 : m % 2; /* m >= 0: python3.(m/2), "t" when odd */
			if (m < 0 ? ow_fmt(cand, sizeof cand, "%s/python3", d)
			          : ow_fmt(cand, sizeof cand, "%s/python3.%d%s", d, m / 2, k ? "t" : ""))
				continue;
			if (access(cand, X_OK) || !realpath(cand, real))
				continue;
			bool seen = false;
			for (size_t i = 0; i < nreals && !seen; i++)
				seen = strcmp(reals[i], real) == 0;
			if (!seen && !(rc = push_str(&reals, &nreals, real)))
				rc = push_str(out, n, cand);
		}
	for (size_t i = 0; i < nreals; i++)
		free(reals[i]);
	free(reals);
	free(path);
	return rc;
}

static int find_pythons(struct ow_probe *p, const struct ow_probe_opts *o)
{
	char **c = NULL;
	size_t n = 0;
	int rc = 0;
	for (size_t i = 0; i < o->npythons && !rc; i++)
		rc = add_python(p, o->pythons[i], false);
	if (!rc && o->npythons == 0)
		rc = path_candidates(&c, &n);
	for (size_t i = 0; i < n; i++) {
		if (!rc)
			rc = add_python(p, c[i], true);
		free(c[i]);
	}
	free(c);
	return rc;
}

/* ---- the whole probe -------------------------------------------------------- */

int ow_probe_run(const struct ow_probe_opts *o, struct ow_probe **out)
{
	*out = NULL;
	const char *bad = o->name ? ow_probe_name_problem(o->name) : NULL;
	if (bad)
		return ow_err(OW_EINVAL, "--name '%s': %s", o->name, bad);
	struct ow_probe *p = calloc(1, sizeof *p);
	if (!p)
		return ow_err(OW_ENOMEM, "out of memory");
	int64_t t0 = ow_mono_ms();
	if (o->name)
		copy_text(p->name, sizeof p->name, o->name);
	else
		host_name(p->name);
	find_system(p);
	int rc = find_platforms(p);
	if (!rc)
		rc = find_pythons(p, o);
	if (!rc)
		rc = find_driver(p);
	p->seconds = (double)(ow_mono_ms() - t0) / 1000.0;
	if (rc)
		ow_probe_free(p);
	else
		*out = p;
	return rc;
}

void ow_probe_free(struct ow_probe *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nplatforms; i++)
		free(p->platforms[i]);
	free(p->platforms);
	for (size_t i = 0; i < p->npythons; i++)
		python_dispose(&p->pythons[i]);
	free(p->pythons);
	free(p->driver_error);
	free(p->libcuda);
	free(p->gpus);
	free(p);
}
