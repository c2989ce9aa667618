/* auditmany.c - many paths in one call: the libraries on threads.  A
 * toolkit's shared libraries (31 files, 2.4 GB) are listed from their
 * headers in milliseconds each; one thread per file at a time lets a call
 * use every core.  Wheels and directories are audited one after another
 * after them: a wheel bounds its own memory and inflates its members on
 * threads already (audit.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "offwheel/audit.h"
#include "offwheel/error.h"
#include "pool.h"

#define MAX_JOBS 16

struct many {
	const char *const *paths;
	const struct ow_audit_opts *o;
	struct ow_audit **out;
	int *rcs;
	char **errs;
	const size_t *which; /* the indexes audited on threads */
};

/* A regular file that is no zip: a library (ow_audit_path reads it alone). */
static int is_library(const char *path)
{
	struct stat st;
	unsigned char m[4];
	if (!path || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	int zip = pread(fd, m, sizeof m, 0) == (ssize_t)sizeof m && !memcmp(m, "PK\3\4", 4);
	close(fd);
	return !zip;
}

static void one(const struct many *k, size_t i)
{
	k->rcs[i] = ow_audit_path(k->paths[i], k->o, &k->out[i]);
	k->errs[i] = NULL;
	if (!k->rcs[i])
		return;
	/* out of memory: NULL, and the code alone says it */
	/* analyzer: kept in errs[i], which the caller frees (cmd_audit.c's prefetch) */
	k->errs[i] = strdup(ow_err_detail());
}

static int worker(void *ud, size_t j)
{
	const struct many *k = ud;
	one(k, k->which[j]);
	return 0;
}

int ow_audit_paths(const char *const *paths, size_t n, const struct ow_audit_opts *o,
                   struct ow_audit **out, int *rcs, char **errs)
{
	size_t *which = n ? malloc(n * sizeof *which) : NULL, nw = 0;
	if (n && !which)
		return ow_err(OW_ENOMEM, "audit: out of memory");
	for (size_t i = 0; i < n; i++) {
		out[i] = NULL;
		rcs[i] = 1; /* not yet */
		if (is_library(paths[i]))
			which[nw++] = i;
	}
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int jobs = o && o->jobs > 0 ? o->jobs : cpus > 0 ? (int)cpus : 1;
	struct many k = {paths, o, out, rcs, errs, which};
	ow_parallel_for(nw, jobs > MAX_JOBS ? MAX_JOBS : jobs, worker, &k);
	for (size_t i = 0; i < n; i++)
		if (rcs[i] == 1 && paths[i])
			one(&k, i);
	free(which);
	return 0;
}
