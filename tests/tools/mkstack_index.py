#!/usr/bin/env python3
"""A lab's layout in small, for whole-stack resolves: torch from a PyTorch
variant root, everything else from a PyPI-shaped index.
usage: mkstack_index.py ROOT

ROOT/whl/cu128/   torch 2.10.0+cu128 and 2.9.0+cu128, torchvision 0.25.0+cu128
                  (torch==2.10.0) and 0.24.0+cu128 (torch==2.9.0), filelock
ROOT/simple/      the rest, each project's page with PEP 658 metadata:
  vllmx 0.11.0 -> torch==2.9.0, numpy>=1.20   (pins an older torch, as vllm does)
  numpy 2.1.0, 1.26.4
  alpha 2.0 -> beta>=2; alpha 1.0 -> beta<2; gamma 1.0 -> beta<2;
  beta 2.0, 1.0                                 (the newest alpha must go back)
  transx 4.57.0 -> tokx<0.22; 4.56.0 -> tokx<0.21; tokx 0.22.1, 0.20.0
                                                (no solution with tokx>=0.22)
  hashed 1.0                                    (for --hash pins)
  hydrax 1.3.8 -> antlrx==4.9.*; hydrax 0.11.3   (as hydra-core: its newest
  antlrx 4.9.3 (an sdist only)                   needs a project with no wheel)
  filelock 3.0
  spreadx 2.0 (a cp312 manylinux x86_64 wheel only), 1.0
                                                (a 3.11 + 3.12 matrix gets two)
  pyonlyx 2.0 (Requires-Python >=3.12, on the page and in its metadata), 1.0
  glibcx 1.7.0 (manylinux_2_31 wheels only), 1.6.1 (manylinux2014)
                                                (as llguidance 1.7: a newer
                                                glibc than manylinux_2_28)
  guidx 2.0 -> glibcx>=1.7; guidx 1.0 -> glibcx  (as vllm -> llguidance)
  oldpy 1.0 (cp39/cp310 wheels, Requires-Python >=3.7,<3.11), 2.0
                                                (as numpy 1.21.6 on 3.12)
ROOT/whl/cu126/   torch 2.0.0 ... 2.11.0 (12 releases; 2.8.0 and newer need
                  filelock>=3), filelock 3.0 and 2.0: -c filelock<3 passes
                  over four torches for one reason, filelock<2 every one
Wheels are tagged py3-none-any (so every target takes them) unless named;
standard library only, deterministic (the wheel helpers of mkextras_index.py).
"""
import io
import os
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mkextras_index import metadata, page, simple, wheel  # noqa: E402


def tagged(name, version, tag, requires_python=None):
    """A wheel of one tag, its Requires-Python on the page and in METADATA."""
    fn = f"{name}-{version}-{tag}.whl"
    meta = metadata(name, version)
    if requires_python:
        meta = meta[:-1] + f"Requires-Python: {requires_python}\n\n".encode()
    entry = (fn, wheel(fn, meta), meta)
    return entry + (requires_python,) if requires_python else entry


def sdist(name, version):
    """A minimal name-version.tar.gz whose PKG-INFO names no requirement."""
    fn = f"{name}-{version}.tar.gz"
    meta = metadata(name, version)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.PAX_FORMAT) as t:
        for n, d in ((f"{name}-{version}/PKG-INFO", meta),
                     (f"{name}-{version}/setup.py", b"from setuptools import setup\nsetup()\n")):
            ti = tarfile.TarInfo(n)
            ti.size, ti.mtime = len(d), 1700000000
            t.addfile(ti, io.BytesIO(d))
    return fn, buf.getvalue(), meta


def needs_python(root, rel, project, entry, spec):
    """A wheel whose metadata says Requires-Python: spec, and its page's
    link data-requires-python too (as PyPI's); call after page()."""
    fn = entry[0]
    path = os.path.join(root, rel, project, "index.html")
    with open(path) as f:
        html = f.read()
    attr = spec.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    with open(path, "w") as f:
        f.write(html.replace(f'<a href="{fn}#', f'<a data-requires-python="{attr}" href="{fn}#'))


def with_python(entry, spec):
    """entry (from simple()) with Requires-Python in its metadata."""
    fn, _, meta = entry
    meta = meta.replace(b"\n\n", f"\nRequires-Python: {spec}\n\n".encode(), 1)
    return fn, wheel(fn, meta), meta


def main():
    root = sys.argv[1]
    v = "whl/cu128"
    page(root, v, "torch", [simple("torch", "2.10.0+cu128", ["filelock"]),
                            simple("torch", "2.9.0+cu128", ["filelock"])])
    page(root, v, "torchvision", [simple("torchvision", "0.25.0+cu128", ["torch==2.10.0"]),
                                  simple("torchvision", "0.24.0+cu128", ["torch==2.9.0"])])
    page(root, v, "filelock", [simple("filelock", "3.0")])
    s = "simple"
    page(root, s, "vllmx", [simple("vllmx", "0.11.0", ["torch==2.9.0", "numpy>=1.20"])])
    page(root, s, "numpy", [simple("numpy", "2.1.0"), simple("numpy", "1.26.4")])
    page(root, s, "alpha", [simple("alpha", "2.0", ["beta>=2"]), simple("alpha", "1.0", ["beta<2"])])
    page(root, s, "gamma", [simple("gamma", "1.0", ["beta<2"])])
    page(root, s, "beta", [simple("beta", "2.0"), simple("beta", "1.0")])
    page(root, s, "transx", [simple("transx", "4.57.0", ["tokx<0.22"]),
                             simple("transx", "4.56.0", ["tokx<0.21"])])
    page(root, s, "tokx", [simple("tokx", "0.22.1"), simple("tokx", "0.20.0")])
    page(root, s, "hashed", [simple("hashed", "1.0")])
    page(root, s, "hydrax", [simple("hydrax", "1.3.8", ["antlrx==4.9.*"]),
                             simple("hydrax", "0.11.3")])
    page(root, s, "antlrx", [sdist("antlrx", "4.9.3")])
    page(root, s, "filelock", [simple("filelock", "3.0")])
    page(root, s, "spreadx", [simple("spreadx", "2.0", tag="cp312-cp312-manylinux_2_28_x86_64"),
                              simple("spreadx", "1.0")])
    py312 = with_python(simple("pyonlyx", "2.0"), ">=3.12")
    page(root, s, "pyonlyx", [py312, simple("pyonlyx", "1.0")])
    needs_python(root, s, "pyonlyx", py312, ">=3.12")
    page(root, s, "glibcx", [tagged("glibcx", "1.7.0", "py3-none-manylinux_2_31_x86_64"),
                             tagged("glibcx", "1.7.0", "py3-none-manylinux_2_31_aarch64"),
                             tagged("glibcx", "1.6.1",
                                    "py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64")])
    page(root, s, "guidx", [simple("guidx", "2.0", ["glibcx>=1.7"]),
                            simple("guidx", "1.0", ["glibcx"])])
    old = [tagged("oldpy", "1.0", f"{t}-{t}-manylinux_2_17_x86_64.manylinux2014_x86_64",
                  ">=3.7,<3.11") for t in ("cp39", "cp310")]
    page(root, s, "oldpy", old + [tagged("oldpy", "2.0", "py3-none-any", ">=3.9")])
    page(root, "whl/cu126", "torch", [simple("torch", f"2.{m}.0+cu126",
                                             ["filelock>=3" if m >= 8 else "filelock"])
                                      for m in range(11, -1, -1)])
    page(root, "whl/cu126", "filelock", [simple("filelock", "3.0"), simple("filelock", "2.0")])


if __name__ == "__main__":
    main()
