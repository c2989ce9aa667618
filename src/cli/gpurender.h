/* gpurender.h - rendering shared by smoke and doctor: the install, the
 * per-library checks, compute capabilities and driver results. */
#ifndef OW_GPURENDER_H
#define OW_GPURENDER_H

#include <jansson.h>
#include <stdio.h>

#include "offwheel/smoke.h"
#include "offwheel/torchsite.h"

/* "12.0" style; "unknown" for 0. */
const char *gr_cc(int cc, char *buf, size_t size);
const char *gr_driver(int driver, char *buf, size_t size);
/* The path below the site-packages directory when it is inside it. */
const char *gr_short_path(const struct ow_torch_install *in, const char *path);

json_t *gr_install_json(const struct ow_torch_install *in, int rc, const char *detail);
json_t *gr_libs_json(const struct ow_lib_check *libs, size_t n);
json_t *gr_error_json(int rc, const char *detail);

/* "torch 2.7.0+cu126 (CUDA 12.6), torchvision 0.22.0, torchaudio -" */
void gr_install_line(FILE *f, const struct ow_torch_install *in);
/* One line per library: status, counts, static verdict, architectures. */
void gr_libs_lines(FILE *f, const struct ow_torch_install *in, const struct ow_lib_check *libs,
                   size_t n, const char *indent);

#endif
