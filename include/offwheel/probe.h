/* probe.h - what a lab machine is, for the stick made for it: its name, OS,
 * architecture, C library, the wheel platform tags it accepts, its Python
 * interpreters (version, ABI tags, sys.executable), the NVIDIA driver and
 * each GPU's compute capability (docs/fleet.md).
 *
 * Offline and without torch: the C library is asked directly
 * (gnu_get_libc_version; musl by its loader), each interpreter runs one
 * tiny script, the driver is opened as cuda.h does (dlopen,
 * $OFFWHEEL_LIBCUDA).  No driver is a normal answer (driver 0, its reason
 * in driver_error), as is an interpreter that does not run (its error). */
#ifndef OW_PROBE_H
#define OW_PROBE_H

#include <stdbool.h>
#include <stddef.h>

#define OW_PROBE_NAME_MAX 64
#define OW_PROBE_GPU_NAME_MAX 256

struct ow_probe_python {
	char *path;       /* as found on PATH or given */
	char *executable; /* sys.executable ("" unknown) */
	char version[32]; /* "3.12.4" */
	char impl[16];    /* "cpython", "pypy" */
	bool freethreaded;
	bool debug;
	char **abis; /* the ABI tags its wheels may carry, best first: cp312, abi3, none */
	size_t nabis;
	char *error; /* why it could not be asked (then the rest is empty), NULL else */
};

struct ow_probe_gpu {
	int ordinal;
	char name[OW_PROBE_GPU_NAME_MAX];
	int cc; /* 120 for 12.0 */
};

struct ow_probe {
	char name[OW_PROBE_NAME_MAX + 1];
	char os[16];           /* linux, macos, windows */
	char arch[32];         /* uname -m: x86_64, aarch64 */
	char libc[16];         /* glibc, musl, "" unknown */
	char libc_version[32]; /* "2.36" */
	char **platforms;      /* platform tags, best first */
	size_t nplatforms;
	struct ow_probe_python *pythons;
	size_t npythons;
	int driver;               /* cuDriverGetVersion: 12080; 0 no driver */
	char driver_release[32];  /* "570.86.10" from /proc/driver/nvidia/version, "" unknown */
	char *driver_error;       /* why there is no driver (or no device), NULL when there is */
	char *libcuda;            /* the library opened, NULL none */
	struct ow_probe_gpu *gpus;
	size_t ngpus;
	double seconds;
};

struct ow_probe_opts {
	const char *name;               /* NULL: the host name */
	const char *const *pythons;     /* given interpreters; none: python3* on PATH */
	size_t npythons;
};

/* NULL when `name` can name a machine (probes/NAME.json on every file
 * system: 1 to 64 of [A-Za-z0-9._-], not starting with '.' or '-'), else why. */
const char *ow_probe_name_problem(const char *name);

/* Probe this machine.  OW_EINVAL for a bad name, OW_ENOMEM; everything the
 * machine lacks is an answer, not an error. */
int ow_probe_run(const struct ow_probe_opts *o, struct ow_probe **out);
void ow_probe_free(struct ow_probe *p);

#endif
