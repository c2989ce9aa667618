/* embedded.h - files built into the binary (cmake/embed.cmake). */
#ifndef OW_EMBEDDED_H
#define OW_EMBEDDED_H

#include <stddef.h>

struct ow_embedded {
	const char *name; /* file name, e.g. "0001_store.sql" */
	const char *data; /* bytes, NUL-terminated for convenience */
	size_t size;      /* without the extra NUL */
};

/* index/schema/NNNN_*.sql, sorted by name; ends with a NULL name. */
extern const struct ow_embedded ow_migrations[];
/* kernels/ *.ptx and *.fatbin files, sorted by name; ends with a NULL name. */
extern const struct ow_embedded ow_kernel_blobs[];

#endif
