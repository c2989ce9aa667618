#!/usr/bin/env python3
"""A tiny PEP 503 index (with PEP 658 metadata files) for the resolver's
extras, build-tag and lookup-order cases.  usage: mkextras_index.py ROOT

ROOT/whl/cu130/<project>/   every project under the variant folder, as on
                            download.pytorch.org (pip --index-url .../cu130)
ROOT/whl/<project>/         the channel root: a newer `vdep` that pip would
                            not see, and `rootonly`, found only here
ROOT/whl/cu126/torch/       torch that needs `rootonly` (root fallback)
ROOT/whl/cu124/torch/       torch that needs `filelock`, on no page at all
ROOT/whl/cpu/torch/         torch 2.15.0 for macosx_14_0 only, 2.11.0 for 11.0
ROOT/whl/cu128/             the pairing case, with the real pins: torch 2.14.0
                            and 2.15.0; torchvision 0.29.0 (torch==2.14.0),
                            0.29.1 and 0.29.2 (torch>=2.14.0)
ROOT/whl/cu199/             torch -> bigdep, whose METADATA has 2,001
                            Requires-Dist lines, one over the cap; cu198:
                            the same with 700,000 (15 MiB)
ROOT/whl/cu117/             torch -> filelock, which only the extra index
                            has; torchvision 0.25.0 and torchaudio 2.10.0
ROOT/whl/cu116/torch/       the same torch, and no torchvision anywhere in
                            the primary
ROOT/extra/                 a hostile --extra-index-url: filelock requiring
                            `TorchVision` and `TORCHAUDIO`, torchvision and
                            torchaudio 99.0, which must never be taken

The cases (what a correct resolver gives for `torch` on cu130, Linux):
  torch[opt] -> optdep                         extras on the set member
  torch -> lib[x,Cu_Blas]                      extras named in two spellings
    lib: dep; extra == "x"                     plain extra
         blas==1.0; extra == "cu-blas"         PEP 685: Cu_Blas == cu-blas
         trap; extra == "cu"                   "cu" is a substring of "cu-blas"
         mdep; extra == "x" and platform_system == "Linux"    marker + extra
         windep; extra == "x" and platform_system == "Windows"
    dep -> deeper[z]                           extras transitively
    deeper: leaf; extra == "z" and platform_system == "Linux"
            nope; extra == "other"
  torch -> bdep -> blas                        unpinned: floats to 2.0 unless
                                               the extra's ==1.0 is kept
  torch -> vdep                                1.0 on cu130, 2.0 at the root
  torch-2.10.0-2-... (build tag 2) beats torch-2.10.0-...; only it requires
  `built2`.
Standard library only; deterministic output.
"""
import base64
import hashlib
import html
import io
import os
import sys
import zipfile

FIXED = (2025, 1, 1, 0, 0, 0)


def metadata(name, version, requires=(), extras=()):
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    lines += [f"Provides-Extra: {e}" for e in extras]
    lines += [f"Requires-Dist: {r}" for r in requires]
    return ("\n".join(lines) + "\n\n").encode()


def wheel(filename, meta, extra=None, stored=False):
    """extra: more members {path: bytes} (after __init__.py); stored: no
    compression (a payload that weighs what it says)."""
    parts = filename[:-4].split("-")
    name, version = parts[0], parts[1]
    di = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": b"",
        **(extra or {}),
        f"{di}/METADATA": meta,
        f"{di}/WHEEL": b"Wheel-Version: 1.0\nGenerator: mkextras_index\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
    }
    rows = []
    for n, d in files.items():
        h = base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b"=").decode()
        rows.append(f"{n},sha256={h},{len(d)}")
    rows.append(f"{di}/RECORD,,")
    files[f"{di}/RECORD"] = ("\n".join(rows) + "\n").encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED) as z:
        for n, d in files.items():
            z.writestr(zipfile.ZipInfo(n, FIXED), d)
    return buf.getvalue()


def sha(b):
    return hashlib.sha256(b).hexdigest()


def page(root, rel, project, entries):
    """entries: (filename, wheel bytes, metadata bytes[, requires-python]); files
    live beside the page; a requires-python goes into data-requires-python."""
    d = os.path.join(root, rel, project)
    os.makedirs(d, exist_ok=True)
    links = []
    for fn, whl, meta, *rp in entries:
        with open(os.path.join(d, fn), "wb") as f:
            f.write(whl)
        with open(os.path.join(d, fn + ".metadata"), "wb") as f:
            f.write(meta)
        rpa = f' data-requires-python="{html.escape(rp[0])}"' if rp else ""
        links.append(f'<a href="{fn}#sha256={sha(whl)}" data-dist-info-metadata="sha256={sha(meta)}"'
                     f' data-core-metadata="sha256={sha(meta)}"{rpa}>{fn}</a><br/>')
    with open(os.path.join(d, "index.html"), "w") as f:
        f.write("<!DOCTYPE html>\n<html><body>\n" + "\n".join(links) + "\n</body></html>\n")


def simple(name, version, requires=(), extras=(), build=None, tag="py3-none-any"):
    fn = f"{name}-{version}{'-' + build if build else ''}-{tag}.whl"
    meta = metadata(name, version, requires, extras)
    return fn, wheel(fn, meta), meta


TORCH_REQS = ["lib[x,Cu_Blas]", "bdep", "vdep", 'optdep; extra == "opt"']


def main():
    root = sys.argv[1]
    v = "whl/cu130"
    page(root, v, "torch", [
        simple("torch", "2.10.0", TORCH_REQS, ["opt"]),
        simple("torch", "2.10.0", TORCH_REQS + ["built2"], ["opt"], build="2"),
    ])
    page(root, v, "lib", [simple("lib", "1.0", [
        'dep; extra == "x"',
        'blas==1.0; extra == "cu-blas"',
        'trap; extra == "cu"',
        'mdep; extra == "x" and platform_system == "Linux"',
        'windep; extra == "x" and platform_system == "Windows"',
    ], ["x", "cu-blas", "cu"])])
    page(root, v, "dep", [simple("dep", "1.0", ["deeper[z]"])])
    page(root, v, "deeper", [simple("deeper", "1.0", [
        'leaf; extra == "z" and platform_system == "Linux"',
        'nope; extra == "other"',
    ], ["z", "other"])])
    page(root, v, "blas", [simple("blas", "1.0"), simple("blas", "2.0")])
    page(root, v, "bdep", [simple("bdep", "1.0", ["blas"])])
    page(root, v, "vdep", [simple("vdep", "1.0")])
    for p in ("leaf", "mdep", "windep", "trap", "nope", "optdep", "built2"):
        page(root, v, p, [simple(p, "1.0")])
    page(root, "whl", "vdep", [simple("vdep", "2.0")])
    page(root, "whl", "rootonly", [simple("rootonly", "1.0")])
    page(root, "whl/cu126", "torch", [simple("torch", "2.10.0", ["rootonly"])])
    page(root, "whl/cu124", "torch", [simple("torch", "2.10.0", ["filelock"])])
    page(root, "whl/cpu", "torch", [
        simple("torch", "2.11.0", tag="cp311-none-macosx_11_0_arm64"),
        simple("torch", "2.15.0", tag="cp311-none-macosx_14_0_arm64"),
    ])
    p = "whl/cu128"
    page(root, p, "torch", [simple("torch", "2.14.0"), simple("torch", "2.15.0")])
    page(root, p, "torchvision", [
        simple("torchvision", "0.29.0", ["torch==2.14.0"]),
        simple("torchvision", "0.29.1", ["torch>=2.14.0"]),
        simple("torchvision", "0.29.2", ["torch>=2.14.0"]),
    ])
    for v, n in (("whl/cu199", 2001), ("whl/cu198", 700000)):
        page(root, v, "torch", [simple("torch", "2.10.0", ["bigdep"])])
        page(root, v, "bigdep", [simple("bigdep", "1.0", [f"d{i}" for i in range(n)])])

    for v in ("whl/cu117", "whl/cu116"):
        page(root, v, "torch", [simple("torch", "2.10.0", ["filelock"])])
    page(root, "whl/cu117", "torchvision", [simple("torchvision", "0.25.0")])
    page(root, "whl/cu117", "torchaudio", [simple("torchaudio", "2.10.0")])
    page(root, "extra", "filelock", [simple("filelock", "3.0", ["TorchVision", "TORCHAUDIO"])])
    page(root, "extra", "torchvision", [simple("torchvision", "99.0")])
    page(root, "extra", "torchaudio", [simple("torchaudio", "99.0")])


if __name__ == "__main__":
    main()
