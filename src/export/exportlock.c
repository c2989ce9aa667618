/* exportlock.c - pylock.<target>.toml: each set of the stick as a PEP 751
 * lock file (lock-version 1.0), beside requirements/<target>.txt.
 *
 * What an installer needs from it, and why each key is there:
 *   environments     the marker that says which machines the file is for:
 *                    an installer refuses it anywhere else (the wrong-Python
 *                    install that a requirements file cannot prevent);
 *   requires-python  the same for the interpreter version;
 *   [[packages]]     name and version of every member, and its one wheel
 *                    (or, for a member that ships as source, its
 *                    [packages.sdist]): `path` relative to the lock file
 *                    (the stick's wheels/), its upload-time where the index
 *                    gave one (PEP 700), its size and sha256, so the
 *                    installer checks the bytes as pip's --require-hashes
 *                    does.  What only building an sdist needs is on the
 *                    stick but not in the lock: the installer's isolated
 *                    build takes it from the same directory.
 * The file is written, listed in SHA256SUMS and signed like every other,
 * so `offwheel check` verifies it.  Keys come in the specification's order
 * and packages in the set's order (deterministic output). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "exportint.h"

/* A TOML basic string: quotes and backslashes escaped, control bytes as
 * \uXXXX (names and versions never have them; a filename could). */
static void toml_str(struct ow_str *out, const char *s)
{
	ow_str_put(out, "\"", 1);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			ow_str_printf(out, "\\%c", *s);
		else if ((unsigned char)*s < 0x20 || *s == 0x7f)
			ow_str_printf(out, "\\u%04x", (unsigned char)*s);
		else
			ow_str_put(out, s, 1);
	}
	ow_str_put(out, "\"", 1);
}

/* "cu128 cp311-manylinux_2_28_x86_64" -> the interpreter and the values
 * PEP 508 markers see on such a machine.  The same mapping as the
 * resolver's (src/index/pep508.c, which export does not link against):
 * manylinux / linux -> linux; win_* -> win32 with AMD64 / ARM64; macosx_*
 * -> darwin; the machine is the tag's last part. */
int ex_target_of(const char *describe, struct ex_target *t)
{
	const char *sp = strchr(describe, ' ');
	const char *tags = sp ? sp + 1 : describe;
	int n = 0;
	memset(t, 0, sizeof *t);
	if (sscanf(tags, "cp%1d%2d%n", &t->py_major, &t->py_minor, &n) != 2 || n < 4)
		return OW_EINVAL;
	t->freethreaded = tags[n] == 't';
	const char *plat = strchr(tags, '-');
	if (!plat++)
		return OW_EINVAL;
	const char *arch = strrchr(plat, '_');
	if (!strcmp(plat, "win_amd64") || !strcmp(plat, "win_arm64")) {
		snprintf(t->sys_platform, sizeof t->sys_platform, "win32");
		snprintf(t->machine, sizeof t->machine, "%s", plat[5] == 'm' ? "AMD64" : "ARM64");
		return 0;
	}
	if (!strncmp(plat, "manylinux", 9) || !strncmp(plat, "musllinux", 9) || !strncmp(plat, "linux_", 6))
		snprintf(t->sys_platform, sizeof t->sys_platform, "linux");
	else if (!strncmp(plat, "macosx_", 7))
		snprintf(t->sys_platform, sizeof t->sys_platform, "darwin");
	else
		return OW_EINVAL;
	/* x86_64 keeps its underscore: the machine is what follows the version */
	const char *m = strstr(plat, "x86_64") ? "x86_64" : arch ? arch + 1 : "";
	snprintf(t->machine, sizeof t->machine, "%s", m);
	return *m ? 0 : OW_EINVAL;
}

/* environments and requires-python for the set's target. */
static void lock_head(struct ow_str *out, const struct ow_export_set *set)
{
	struct ex_target t;
	char marker[256];
	ow_str_printf(out, "lock-version = \"1.0\"\n");
	if (set->id && ex_target_of(set->target, &t) == 0) {
		snprintf(marker, sizeof marker,
		         "python_version == '%d.%d' and implementation_name == 'cpython' and "
		         "sys_platform == '%s' and platform_machine == '%s'",
		         t.py_major, t.py_minor, t.sys_platform, t.machine);
		ow_str_printf(out, "environments = [");
		toml_str(out, marker);
		ow_str_printf(out, "]\nrequires-python = \"==%d.%d.*\"\n", t.py_major, t.py_minor);
	}
	ow_str_printf(out, "created-by = \"offwheel\"\n");
}

/* The number of n digits at t, or -1 when they are not all digits. */
static int digits(const char *t, int n)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)t[i]))
			return -1;
		v = v * 10 + (t[i] - '0');
	}
	return v;
}

static int month_days(int y, int m)
{
	static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	return m == 2 && leap ? 29 : days[m - 1];
}

/* Whether t is an RFC 3339 date-time with an offset (PEP 700's
 * upload-time: "2026-10-28T15:21:34.123456Z") that is a real moment
 * (a month of 1 to 12, a day the month has, 00:00:00 to 23:59:59, one to
 * nine digits of fraction, an offset of at most 23:59), so it can be
 * written as a TOML date-time as it is and every TOML reader takes it
 * (Python's tomllib, uv); anything else from the index is left out. */
static bool rfc3339(const char *t)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:dd";
	size_t i = 0, f = 0;
	for (; shape[i]; i++)
		if (shape[i] == 'd' ? !isdigit((unsigned char)t[i]) : t[i] != shape[i])
			return false;
	int y = digits(t, 4), mo = digits(t + 5, 2), d = digits(t + 8, 2);
	if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > month_days(y, mo) ||
	    digits(t + 11, 2) > 23 || digits(t + 14, 2) > 59 || digits(t + 17, 2) > 59)
		return false;
	if (t[i] == '.') {
		while (isdigit((unsigned char)t[i + 1 + f]))
			f++;
		if (f < 1 || f > 9) /* "00.Z": a point with no digits */
			return false;
		i += 1 + f;
	}
	if (t[i] == 'Z')
		return !t[i + 1];
	return (t[i] == '+' || t[i] == '-') && digits(t + i + 1, 2) >= 0 &&
	       digits(t + i + 1, 2) <= 23 && t[i + 3] == ':' && digits(t + i + 4, 2) >= 0 &&
	       digits(t + i + 4, 2) <= 59 && !t[i + 6];
}

bool ow_export_is_sdist(const char *f)
{
	size_t n = strlen(f);
	return (n > 7 && !strcmp(f + n - 7, ".tar.gz")) || (n > 4 && !strcmp(f + n - 4, ".zip"));
}

int ex_gen_pylock(const struct ow_export_plan *p, const struct ow_export_set *set,
                  struct ow_str *out)
{
	ow_str_printf(out, "# %s — generated by offwheel export (PEP 751); install with\n"
	                   "#   uv pip install -r pylock.%s.toml   (see INSTALL.txt)\n",
	              set->target, set->req_name);
	lock_head(out, set);
	for (size_t i = 0; i < set->n; i++) {
		const struct ow_export_item *it = &p->items[set->members[i]];
		if (ex_build_only(set, i))
			continue; /* the installer fetches build requirements itself */
		ow_str_printf(out, "\n[[packages]]\nname = ");
		toml_str(out, it->project);
		ow_str_printf(out, "\nversion = ");
		toml_str(out, it->version);
		if (it->requires_python && *it->requires_python) {
			ow_str_printf(out, "\nrequires-python = ");
			toml_str(out, it->requires_python);
		}
		ow_str_printf(out, ow_export_is_sdist(it->filename) ? "\n\n[packages.sdist]\nname = "
		                                                   : "\n\n[[packages.wheels]]\nname = ");
		toml_str(out, it->filename);
		struct ow_str path = {0};
		ow_str_printf(&path, "wheels/%s", it->filename);
		ow_str_printf(out, "\npath = ");
		toml_str(out, path.p ? path.p : "");
		ow_str_dispose(&path);
		if (it->upload_time && rfc3339(it->upload_time))
			ow_str_printf(out, "\nupload-time = %s", it->upload_time);
		ow_str_printf(out, "\nsize = %llu\nhashes = {sha256 = \"%s\"}\n",
		              (unsigned long long)it->size, it->object);
	}
	return out->err;
}
