#!/usr/bin/env python3
"""Hostile inputs of round three (issue 48), made at test time.
usage: mkhostile_index.py ROOT

ROOT/whl/cu128/torch/    torch 2.10.0, no dependencies (the well-behaved target)
ROOT/whl/cu130/          torch -> many; `many` has 3,000 releases, and every one
                         but the oldest requires blocker==2 (blocker has 1.0 only):
                         the search goes back through all of them
ROOT/whl/cu129/          torch -> badmark, whose metadata has a malformed marker
ROOT/whl/cu127/          torch -> selfbuild, an sdist whose build requires itself
ROOT/whl/cu126/          torch -> ping, an sdist whose build requires pong, an sdist
                         whose build requires ping
ROOT/files/              the generated pyproject.toml and requirement files:
  groups/pyproject.toml  dependency groups, each including the next twice, 24 deep
  keys/pyproject.toml    99,000 keys under [tool.x] (under the 100,000 cap)
  keys-over/pyproject.toml  110,000 keys under [tool.x]
  dup.txt                200,000 lines of `torch`
  distinct.txt           160,000 distinct project names
Standard library only; deterministic output.
"""
import io
import os
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mkextras_index import page, sha, simple  # noqa: E402


def sdist(root, rel, name, build_requires):
    """An sdist page (no .metadata, as on PyPI) with PKG-INFO and pyproject.toml."""
    d = os.path.join(root, rel, name)
    os.makedirs(d, exist_ok=True)
    fn = f"{name}-1.0.tar.gz"
    buf = io.BytesIO()
    reqs = ", ".join(f'"{r}"' for r in build_requires)
    members = [
        (f"{name}-1.0/PKG-INFO", f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n\n"),
        (f"{name}-1.0/pyproject.toml",
         f'[build-system]\nrequires = [{reqs}]\nbuild-backend = "hatchling.build"\n'),
    ]
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.PAX_FORMAT) as t:
        for path, text in members:
            data = text.encode()
            i = tarfile.TarInfo(path)
            i.size, i.mtime = len(data), 1735689600
            t.addfile(i, io.BytesIO(data))
    body = buf.getvalue()
    with open(os.path.join(d, fn), "wb") as f:
        f.write(body)
    with open(os.path.join(d, "index.html"), "w") as f:
        f.write(f'<!DOCTYPE html>\n<html><body>\n<a href="{fn}#sha256={sha(body)}">{fn}</a><br/>\n'
                "</body></html>\n")


def indexes(root):
    page(root, "whl/cu128", "torch", [simple("torch", "2.10.0")])
    v = "whl/cu130"
    page(root, v, "torch", [simple("torch", "2.10.0", ["many"])])
    page(root, v, "blocker", [simple("blocker", "1.0")])
    page(root, v, "many", [simple("many", f"1.{i}", [] if i == 0 else ["blocker==2"])
                           for i in range(3000)])
    v = "whl/cu129"
    page(root, v, "torch", [simple("torch", "2.10.0", ["badmark"])])
    page(root, v, "badmark", [simple("badmark", "1.0", ['dep; python_version >< "3"'])])
    v = "whl/cu127"
    page(root, v, "torch", [simple("torch", "2.10.0", ["selfbuild"])])
    sdist(root, v, "selfbuild", ["selfbuild"])
    v = "whl/cu126"
    page(root, v, "torch", [simple("torch", "2.10.0", ["ping"])])
    sdist(root, v, "ping", ["pong"])
    sdist(root, v, "pong", ["ping"])


def files(d):
    os.makedirs(d, exist_ok=True)
    g = ['[project]\nname = "app"\nversion = "1"\ndependencies = []\n\n[dependency-groups]']
    for i in range(24):
        g.append(f'g{i} = ["torch", {{include-group = "g{i + 1}"}}, {{include-group = "g{i + 1}"}}]')
    g.append('g24 = ["torch"]\n')
    os.makedirs(os.path.join(d, "groups"))
    with open(os.path.join(d, "groups", "pyproject.toml"), "w") as f:
        f.write("\n".join(g))
    for name, n in (("keys", 99000), ("keys-over", 110000)):
        os.makedirs(os.path.join(d, name))
        with open(os.path.join(d, name, "pyproject.toml"), "w") as f:
            f.write('[project]\nname = "app"\nversion = "1"\ndependencies = ["torch"]\n\n[tool.x]\n')
            f.write("".join(f"k{i} = 1\n" for i in range(n)))
    with open(os.path.join(d, "dup.txt"), "w") as f:
        f.write("torch\n" * 200000)
    with open(os.path.join(d, "distinct.txt"), "w") as f:
        f.write("".join(f"p{i}\n" for i in range(160000)))


def main():
    root = sys.argv[1]
    indexes(root)
    files(os.path.join(root, "files"))


if __name__ == "__main__":
    main()
