/* torchsite.h - find the installed torch, torchvision and torchaudio.
 *
 * Either through a Python interpreter (run as `PY -c ...`, without importing
 * torch, to learn where torch lives and the Python version) or in a given
 * site-packages directory.  Versions come from <name>-<ver>.dist-info/METADATA,
 * torch's CUDA version from torch/version.py (`cuda = '12.8'`), and the
 * shared libraries (*.so, *.so.N, *.pyd, *.dll) are listed from the package
 * directories, which is where their fatbins are. */
#ifndef OW_TORCHSITE_H
#define OW_TORCHSITE_H

#include <stdbool.h>
#include <stddef.h>

#define OW_TORCH_NPKG 3
#define OW_TORCH_PATH_MAX 4096

struct ow_torch_pkg {
	const char *name;              /* "torch", "torchvision", "torchaudio" */
	bool found;                     /* the package directory exists */
	char dir[OW_TORCH_PATH_MAX];
	char version[64];              /* from METADATA, "" when unknown */
};

struct ow_torch_lib {
	char *path;
	int pkg; /* index into pkgs */
};

struct ow_torch_install {
	char site[OW_TORCH_PATH_MAX];
	char python[16];  /* "3.12" when known, else "" */
	struct ow_torch_pkg pkgs[OW_TORCH_NPKG];
	char cuda[16];    /* torch.version.cuda ("12.8"), "" for CPU builds or unknown */
	char variant[16]; /* "cu128", "cpu", "rocm6.3" ... or "" */
	struct ow_torch_lib *libs; /* sorted by path */
	size_t n_libs;
};

/* Ask `python` (a command name or path) where torch is installed, then read
 * that site-packages as ow_torch_find_site does.  OW_ENOENT when the
 * interpreter cannot run or has no torch (the detail says which); OW_EIO. */
int ow_torch_find_python(const char *python, struct ow_torch_install **out);
/* Read a site-packages directory.  OW_ENOENT when it has no torch/. */
int ow_torch_find_site(const char *site, struct ow_torch_install **out);
void ow_torch_install_free(struct ow_torch_install *in);

/* "12.8" -> "cu128"; also reads a local version label ("2.7.0+cu128"). */
int ow_torch_variant(const char *cuda, const char *version, char *buf, size_t size);

#endif
