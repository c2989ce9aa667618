#!/usr/bin/env python3
"""offwheel's [build-system] reader against pip's own (pip._internal.pyproject
.load_pyproject_toml, the code pip runs before it builds an sdist).

    buildsys_oracle.py OWTOML FILE...     FILE "-": a project with no pyproject.toml

For each file: both refuse it, or both take the same build requirements and
the same backend.  offwheel's one rule of its own: for a setuptools backend
it adds "wheel" when the list lacks it (setuptools before 70.1 asks for it from inside the build,
through get_requires_for_build_wheel, so it must be on the stick too).
Prints one line per file; exit 1 on any difference."""
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from pip._internal.exceptions import PipError
from pip._internal.pyproject import load_pyproject_toml

# pips before 25.3 take use_pep517 first (None: the legacy setup.py path for
# a project without pyproject.toml); True is what every pip does now
LEGACY_ARG = "use_pep517" in inspect.signature(load_pyproject_toml).parameters


def pips(path):
    with tempfile.TemporaryDirectory() as d:
        open(os.path.join(d, "setup.py"), "w").close()
        if path != "-":
            shutil.copy(path, os.path.join(d, "pyproject.toml"))
        args = (os.path.join(d, "pyproject.toml"), os.path.join(d, "setup.py"), "x")
        try:
            b = load_pyproject_toml(True, *args) if LEGACY_ARG else load_pyproject_toml(*args)
        except PipError as e:  # pip refuses the project
            return None, f"{type(e).__name__}"
        return (list(b.requires), b.backend), None


def ours(owtoml, path):
    r = subprocess.run([owtoml, "--build-system", path], capture_output=True, text=True)
    if r.returncode:
        return None, r.stderr.strip()
    j = json.loads(r.stdout)
    return (j["requires"], j["backend"] or "setuptools.build_meta:__legacy__"), None


def main():
    owtoml, bad = sys.argv[1], 0
    for path in sys.argv[2:]:
        (p, perr), (o, oerr) = pips(path), ours(owtoml, path)
        if p is None or o is None:
            same = p is None and o is None
            what = f"both refuse ({perr}; offwheel: {oerr})" if same else f"pip: {p or perr}, offwheel: {o or oerr}"
        else:
            has_wheel = any(re.match(r"wheel\b(?![-_.\w])", r.strip(), re.I) for r in p[0])
            want = p[0] + (["wheel"] if p[1].startswith("setuptools.build_meta") and not has_wheel else [])
            same = o[0] == want and o[1] == p[1]
            what = f"requires {o[0]}, backend {o[1]}" if same else f"pip {p} (+wheel rule: {want}), offwheel {o}"
        print(f"{'ok' if same else 'DIFFERENT'} {path}: {what}")
        bad += not same
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
