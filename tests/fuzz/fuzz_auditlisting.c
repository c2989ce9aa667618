/* fuzz_auditlisting.c - the audit cache text (auditcode.c) on arbitrary
 * bytes: an error or a listing that encodes back to the same text. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "offwheel/audit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ow_fatbin *fb = NULL, *again = NULL;
	char *text = NULL;
	if (ow_audit_decode((const char *)data, size, &fb) != 0)
		return 0;
	struct ow_gpu_library_verdict lv;
	ow_gpu_library_verdict(fb, 120, 12080, &lv);
	if (ow_audit_encode(fb, &text) == 0 && ow_audit_decode(text, strlen(text), &again) == 0) {
		if (again->n_modules != fb->n_modules || again->n_entries > fb->n_entries)
			abort();
	}
	free(text);
	ow_fatbin_free(again);
	ow_fatbin_free(fb);
	return 0;
}
