#!/usr/bin/env python3
"""A lab's layout with real files from PyPI: torch from a PyTorch variant
root, everything else from a PyPI-shaped index that serves the files it is
given as PyPI serves them.
usage: mksdist_index.py ROOT FILES_DIR [BAD_DIR]

ROOT/whl/cu128/torch/   a small torch 2.10.0+cu128 (py3-none-any; no
                        dependencies) as the set's member
ROOT/simple/<project>/  every wheel and sdist of FILES_DIR (real files,
                        fetched by `pip download`), linked with its sha256;
                        a wheel also with its PEP 658 .metadata (its own
                        METADATA, as PyPI extracts it); an sdist without one,
                        as on PyPI
BAD_DIR (optional): files linked WITHOUT a published hash (hostile sdists),
                        so that the file has to prove itself.
Standard library only.
"""
import hashlib
import os
import re
import shutil
import sys
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mkextras_index import page, simple  # noqa: E402


def project_of(fn):
    if fn.endswith(".whl"):
        name = fn.split("-")[0]
    else:
        stem = fn[: -len(".tar.gz")] if fn.endswith(".tar.gz") else fn[: -len(".zip")]
        name = stem.rsplit("-", 1)[0]
    return re.sub(r"[-_.]+", "-", name).lower()


def wheel_metadata(path):
    with zipfile.ZipFile(path) as z:
        for n in z.namelist():
            if n.count("/") == 1 and n.endswith(".dist-info/METADATA"):
                return z.read(n)
    raise SystemExit(f"{path}: no METADATA")


def sha(b):
    return hashlib.sha256(b).hexdigest()


def serve(root, d, hashed, pages):
    for fn in sorted(os.listdir(d)):
        proj = project_of(fn)
        dst = os.path.join(root, "simple", proj)
        os.makedirs(dst, exist_ok=True)
        shutil.copy(os.path.join(d, fn), os.path.join(dst, fn))
        with open(os.path.join(dst, fn), "rb") as f:
            body = f.read()
        attrs = ""
        if fn.endswith(".whl"):
            meta = wheel_metadata(os.path.join(dst, fn))
            with open(os.path.join(dst, fn + ".metadata"), "wb") as f:
                f.write(meta)
            attrs = f' data-dist-info-metadata="sha256={sha(meta)}" data-core-metadata="sha256={sha(meta)}"'
        frag = f"#sha256={sha(body)}" if hashed else ""
        pages.setdefault(proj, []).append(f'<a href="{fn}{frag}"{attrs}>{fn}</a><br/>')


def main():
    root, files = sys.argv[1], sys.argv[2]
    page(root, "whl/cu128", "torch", [simple("torch", "2.10.0+cu128")])
    pages = {}
    serve(root, files, True, pages)
    if len(sys.argv) > 3:
        serve(root, sys.argv[3], False, pages)
    for proj, links in pages.items():
        with open(os.path.join(root, "simple", proj, "index.html"), "w") as f:
            f.write("<!DOCTYPE html>\n<html><body>\n" + "\n".join(links) + "\n</body></html>\n")


if __name__ == "__main__":
    main()
