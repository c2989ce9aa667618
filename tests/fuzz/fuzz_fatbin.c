/* fuzz_fatbin.c - the ELF / PE / fatbin reader and the verdict rules on
 * arbitrary bytes: must return an error or a listing, never crash. */
#include <stddef.h>
#include <stdint.h>

#include "fatbin.h"
#include "gpucompat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned opts[] = {0, OW_FATBIN_SCAN_DATA};
	for (size_t o = 0; o < 2; o++) {
		struct ow_fatbin *fb = NULL;
		if (ow_fatbin_scan_buffer(data, size, opts[o], &fb) != 0)
			continue;
		char line[512];
		for (size_t i = 0; i < fb->n_modules; i++) {
			struct ow_gpu_module_verdict v;
			ow_fatbin_module_format(fb, &fb->modules[i], line, sizeof line);
			ow_gpu_module_verdict(fb, &fb->modules[i], 120, 12080, &v);
		}
		struct ow_gpu_library_verdict lv;
		ow_gpu_library_verdict(fb, 86, 0, &lv);
		ow_fatbin_free(fb);
	}
	return 0;
}
