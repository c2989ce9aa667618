/* gpurender.h - rendering shared by smoke and doctor: the install, the
 * per-library checks, compute capabilities and driver results. */
#ifndef OW_GPURENDER_H
#define OW_GPURENDER_H

#include <jansson.h>
#include <stdio.h>

#include "offwheel/smoke.h"
#include "offwheel/torchsite.h"

/* "12.0" style; "unknown" for 0. */
const char *cli_gpu_cc(int cc, char *buf, size_t size);
const char *cli_gpu_driver(int driver, char *buf, size_t size);
/* The path below the site-packages directory when it is inside it. */
const char *cli_gpu_short_path(const struct ow_torch_install *in, const char *path);

json_t *cli_gpu_install_json(const struct ow_torch_install *in, int rc, const char *detail);
json_t *cli_gpu_libs_json(const struct ow_lib_check *libs, size_t n);
json_t *cli_gpu_error_json(int rc, const char *detail);

/* "torch 2.7.0+cu126 (CUDA 12.6), torchvision 0.22.0, torchaudio -" */
void cli_gpu_install_line(FILE *f, const struct ow_torch_install *in);
/* One line per library: status, counts, static verdict, architectures. */
void cli_gpu_libs_lines(FILE *f, const struct ow_torch_install *in, const struct ow_lib_check *libs,
                   size_t n, const char *indent);

#endif
