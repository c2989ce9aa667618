#!/usr/bin/env python3
"""A flat PEP 503 index without PEP 658 metadata, for a server that ignores
Range (issue 44): every METADATA costs a whole wheel there.
usage: mknorange_index.py ROOT [MIB]

ROOT/simple/torch/   torch 2.15.0: Requires-Dist dep==1.0 (an exact pin, as
                     torch pins nvidia-nccl-cu13), small>=1
ROOT/simple/dep/     dep 1.1, 1.0 and 0.1 ... 0.7: nine releases of MIB MiB
                     each (default 3) of incompressible payload; only 1.0 is
                     admitted by the pin.  1.1 is newer than the pinned one,
                     so the search passes it over before reaching 1.0, and
                     seven older ones follow 1.0 (a prefetch that ignored
                     the pin would read them)
ROOT/simple/small/   small 2.0 and 1.0, a few hundred bytes each
Links carry #sha256= (as devpi and PyPI give them), no data-core-metadata.
Wheels are tagged py3-none-any; standard library only; deterministic.
ROOT/CLOSURE lists the closure's files, one a line, with their sizes.
"""
import hashlib
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mkextras_index import metadata  # noqa: E402
import mkextras_index  # noqa: E402


def wheel(name, version, requires=(), pad=0, seed=0):
    fn = f"{name}-{version}-py3-none-any.whl"
    meta = metadata(name, version, requires)
    if not pad:
        return fn, mkextras_index.wheel(fn, meta)
    # the wheel helper with one more stored member: name/payload.bin
    payload = {f"{name}/payload.bin": random.Random(seed).randbytes(pad)}
    return fn, mkextras_index.wheel(fn, meta, payload, stored=True)


def page(root, project, entries):
    d = os.path.join(root, "simple", project)
    os.makedirs(d, exist_ok=True)
    links = []
    for fn, whl in entries:
        with open(os.path.join(d, fn), "wb") as f:
            f.write(whl)
        links.append(f'<a href="{fn}#sha256={hashlib.sha256(whl).hexdigest()}">{fn}</a><br/>')
    with open(os.path.join(d, "index.html"), "w") as f:
        f.write("<!DOCTYPE html>\n<html><body>\n" + "\n".join(links) + "\n</body></html>\n")


def main():
    root = sys.argv[1]
    mib = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    torch = wheel("torch", "2.15.0", ["dep==1.0", "small>=1"])
    deps = [wheel("dep", v, pad=mib << 20, seed=i)
            for i, v in enumerate(["1.1", "1.0"] + [f"0.{k}" for k in range(7, 0, -1)])]
    small = [wheel("small", "2.0"), wheel("small", "1.0")]
    page(root, "torch", [torch])
    page(root, "dep", deps)
    page(root, "small", small)
    os.makedirs(os.path.join(root, "simple"), exist_ok=True)
    with open(os.path.join(root, "simple", "index.html"), "w") as f:
        f.write("<!DOCTYPE html>\n<html><body>\n" + "\n".join(
            f'<a href="{p}/">{p}</a><br/>' for p in ("dep", "small", "torch")) + "\n</body></html>\n")
    with open(os.path.join(root, "CLOSURE"), "w") as f:
        for fn, whl in (torch, deps[1], small[0]):
            f.write(f"{fn} {len(whl)}\n")


if __name__ == "__main__":
    main()
