/* gpurender.c - rendering shared by smoke and doctor (see gpurender.h). */
#include "gpurender.h"
#include "wrap.h"

#include <string.h>

#include "offwheel/cuda.h"
#include "offwheel/error.h"
#include "offwheel/gpucompat.h"

const char *cli_gpu_cc(int cc, char *buf, size_t size)
{
	if (cc <= 0)
		snprintf(buf, size, "unknown");
	else
		ow_gpu_format_cc(cc, buf, size);
	return buf;
}

const char *cli_gpu_driver(int driver, char *buf, size_t size)
{
	if (driver <= 0)
		snprintf(buf, size, "unknown");
	else
		ow_gpu_format_driver(driver, buf, size);
	return buf;
}

const char *cli_gpu_short_path(const struct ow_torch_install *in, const char *path)
{
	size_t n = in ? strlen(in->site) : 0;
	if (n && !strncmp(path, in->site, n) && path[n] == '/')
		return path + n + 1;
	return path;
}

json_t *cli_gpu_error_json(int rc, const char *detail)
{
	if (!rc)
		return json_null();
	return json_pack("{s:s, s:s, s:i}", "code", ow_err_name(rc), "detail", detail ? detail : "",
	                 "exit_code", ow_err_exit_code(rc));
}

static json_t *str_or_null(const char *s)
{
	return s && *s ? json_string(s) : json_null();
}

json_t *cli_gpu_install_json(const struct ow_torch_install *in, int rc, const char *detail)
{
	if (!in)
		return json_pack("{s:o}", "error", cli_gpu_error_json(rc, detail));
	json_t *o = json_pack("{s:s, s:o, s:o, s:o, s:I, s:n}", "site_packages", in->site, "python",
	                      str_or_null(in->python), "cuda", str_or_null(in->cuda), "variant",
	                      str_or_null(in->variant), "libraries", (json_int_t)in->n_libs,
	                      "error");
	for (int i = 0; i < OW_TORCH_NPKG; i++) {
		const struct ow_torch_pkg *p = &in->pkgs[i];
		json_object_set_new(o, p->name ? p->name : "?",
		                    p->found ? json_pack("{s:o, s:s}", "version", str_or_null(p->version),
		                                         "dir", p->dir)
		                             : json_null());
	}
	return o;
}

static json_t *lib_json(const struct ow_lib_check *l)
{
	char drv[16];
	return json_pack(
	        "{s:s, s:s, s:b, s:s, s:I, s:s, s:s, s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:I, s:o}",
	        "path", l->path, "package", l->pkg, "ok", l->ok, "status",
	        ow_load_status_name(l->status), "modules", (json_int_t)l->n_modules, "archs", l->archs,
	        "static", ow_gpu_lib_verdict_name(l->stat.verdict), "static_driver_needed",
	        l->stat.driver_needed ? json_string(cli_gpu_driver(l->stat.driver_needed, drv, sizeof drv))
	                              : json_null(),
	        "static_ptx_too_new", (json_int_t)l->stat.n_ptx_too_new, "tried", (json_int_t)l->n_tried, "loaded", (json_int_t)l->n_loaded,
	        "no_binary_for_gpu", (json_int_t)l->n_no_binary, "unsupported_ptx_version",
	        (json_int_t)l->n_ptx_version, "other_errors", (json_int_t)l->n_error, "other_error",
	        l->n_error ? json_string(ow_cuda_result_name(NULL, l->error_res)) : json_null(),
	        "disagree_with_static", (json_int_t)l->n_disagree, "read_error",
	        l->read_rc ? json_string(l->read_detail ? l->read_detail : "") : json_null());
}

json_t *cli_gpu_libs_json(const struct ow_lib_check *libs, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, lib_json(&libs[i]));
	return a;
}

void cli_gpu_install_line(FILE *f, const struct ow_torch_install *in)
{
	for (int i = 0; i < OW_TORCH_NPKG; i++) {
		const struct ow_torch_pkg *p = &in->pkgs[i];
		cli_wrapf(f, "%s%s %s", i ? ", " : "", p->name,
		        !p->found ? "(not installed)" : p->version[0] ? p->version : "(version unknown)");
		if (i == 0)
			cli_wrapf(f, " (CUDA %s, %s)", in->cuda[0] ? in->cuda : "none/unknown",
			        in->variant[0] ? in->variant : "variant unknown");
	}
	cli_wrapf(f, "\n");
}

static void load_summary(FILE *f, const struct ow_lib_check *l)
{
	if (l->status == OW_LOAD_UNREADABLE)
		cli_wrapf(f, "UNREADABLE: %s", l->read_detail ? l->read_detail : "");
	else if (l->status == OW_LOAD_STATIC_ONLY)
		cli_wrapf(f, "%s (static, not loaded)", l->ok ? "ok" : "NO IMAGE");
	else if (l->status == OW_LOAD_OK)
		cli_wrapf(f, "loaded %zu/%zu modules", l->n_loaded, l->n_tried);
	else if (l->status == OW_LOAD_ERROR)
		cli_wrapf(f, "FAILED %zu/%zu modules: %s", l->n_error, l->n_tried,
		         ow_cuda_result_name(NULL, l->error_res));
	else
		cli_wrapf(f, "FAILED %zu/%zu modules: %d %s",
		         l->n_no_binary ? l->n_no_binary : l->n_ptx_version, l->n_tried,
		         l->n_no_binary ? OW_CU_NO_BINARY_FOR_GPU : OW_CU_UNSUPPORTED_PTX_VERSION,
		         l->n_no_binary ? "CUDA_ERROR_NO_BINARY_FOR_GPU"
		                        : "CUDA_ERROR_UNSUPPORTED_PTX_VERSION");
}

void cli_gpu_libs_lines(FILE *f, const struct ow_torch_install *in, const struct ow_lib_check *libs,
                   size_t n, const char *indent)
{
	for (size_t i = 0; i < n; i++) {
		const struct ow_lib_check *l = &libs[i];
		char drv[16];
		cli_wrapf(f, "%s%-4s %s: ", indent, l->ok ? "ok" : "FAIL", cli_gpu_short_path(in, l->path));
		load_summary(f, l);
		cli_wrapf(f, "; static: %s", ow_gpu_lib_verdict_name(l->stat.verdict));
		if (l->stat.driver_needed)
			cli_wrapf(f, " (JIT needs driver >= %s)",
			        cli_gpu_driver(l->stat.driver_needed, drv, sizeof drv));
		if (l->stat.n_ptx_too_new)
			cli_wrapf(f, " (%zu module(s) have only PTX this driver cannot JIT)",
			        l->stat.n_ptx_too_new);
		if (l->n_disagree)
			cli_wrapf(f, "; %zu driver answer(s) DISAGREE with the static rules", l->n_disagree);
		cli_wrapf(f, "\n%s     %zu module(s) with code: %s\n", indent, l->n_modules,
		        l->archs[0] ? l->archs : "-");
	}
}
