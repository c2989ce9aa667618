/* fuzz_fatbin.c - the ELF / PE / fatbin / cubin / PTX / archive reader and
 * the verdict rules on arbitrary bytes: must return an error or a listing,
 * never crash.  The header parsers of devcode.c (cubin e_flags, .nv.compat,
 * the PTX header) also get the bytes directly.  The
 * same bytes are also read as a file (through a memfd), the path a real
 * library takes with its pread header cache: both must agree. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "offwheel/fatbin.h"
#include "offwheel/gpucompat.h"

static struct ow_fatbin *read_as_file(const uint8_t *data, size_t size, unsigned opts, int *rc)
{
	struct ow_fatbin *fb = NULL;
	int fd = memfd_create("fuzz_fatbin", MFD_CLOEXEC);
	if (fd < 0)
		abort();
	for (size_t done = 0; done < size;) {
		ssize_t w = write(fd, data + done, size - done);
		if (w <= 0)
			abort();
		done += (size_t)w;
	}
	*rc = ow_fatbin_read_fd(fd, opts, &fb);
	close(fd);
	return fb;
}

static void parse_headers(const uint8_t *data, size_t size)
{
	struct ow_fatbin_entry e;
	uint16_t arch;
	char variant;
	if (!ow_fatbin_ptx_header(data, size, &e) && (e.kind != OW_FB_PTX || !e.arch))
		abort();
	if (ow_fatbin_is_cubin(data, size) && !ow_fatbin_cubin_arch(data, size, &arch, &variant) &&
	    (!arch || (variant && variant != 'a')))
		abort();
	(void)ow_fatbin_compat_arch_specific(data, size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	parse_headers(data, size);
	static const unsigned opts[] = {0, OW_FATBIN_SCAN_DATA};
	for (size_t o = 0; o < 2; o++) {
		struct ow_fatbin *fb = NULL;
		int rc = ow_fatbin_scan_buffer(data, size, opts[o], &fb), frc;
		struct ow_fatbin *ff = read_as_file(data, size, opts[o], &frc);
		if ((rc == 0) != (frc == 0))
			abort(); /* memory and file disagree on whether it parses */
		if (ff && (ff->n_modules != fb->n_modules || ff->n_entries != fb->n_entries))
			abort();
		ow_fatbin_free(ff);
		if (rc != 0)
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
