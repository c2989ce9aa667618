/* fuzz_metadata.c - the METADATA (core metadata) and RECORD parsers. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wheelmeta.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ow_metadata *md = NULL;
	struct ow_record *rec = NULL;
	if (ow_metadata_parse((const char *)data, size, &md) == 0) {
		for (size_t i = 0; i < md->n_requires_dist; i++)
			(void)strlen(md->requires_dist[i]);
		ow_metadata_free(md);
	}
	if (ow_record_parse((const char *)data, size, &rec) == 0)
		ow_record_free(rec);
	return 0;
}
