#!/usr/bin/env python3
"""Real pyproject.toml files, from the newest sdists of projects on PyPI.

    pypi_pyprojects.py OUTDIR PROJECT...

Reads each project's PEP 691 page on https://pypi.org/simple/, takes the
newest release's sdist (.tar.gz), and writes its top-level pyproject.toml to
OUTDIR/PROJECT-VERSION.pyproject.toml.  Each file is cached under
${XDG_CACHE_HOME:-~/.cache}/offwheel-tests/pyprojects/ (keyed by the sdist's
sha256), so only the first run downloads.  Prints the paths written; exit 3
when PyPI cannot be reached (the caller skips, saying so)."""
import hashlib
import io
import json
import os
import re
import sys
import tarfile
import urllib.error
import urllib.request

CACHE = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                     "offwheel-tests", "pyprojects")
UA = {"User-Agent": "offwheel-tests pypi_pyprojects (stdlib urllib)"}


def get(url, accept=None):
    h = dict(UA)
    if accept:
        h["Accept"] = accept
    with urllib.request.urlopen(urllib.request.Request(url, headers=h), timeout=60) as r:
        return r.read()


def version_key(v):
    return [int(x) if x.isdigit() else -1 for x in re.split(r"[.]", v)]


def newest_sdist(project):
    page = json.loads(get(f"https://pypi.org/simple/{project}/", "application/vnd.pypi.simple.v1+json"))
    best = None
    for f in page["files"]:
        stem = "[-_.]".join(re.escape(part) for part in re.split(r"[-_.]+", project))
        m = re.match(rf"^{stem}-([0-9][0-9.]*)\.tar\.gz$", f["filename"], re.I)
        if m and not f.get("yanked") and (best is None or version_key(m.group(1)) > version_key(best[0])):
            best = (m.group(1), f)
    return best


def main():
    out, projects = sys.argv[1], sys.argv[2:]
    os.makedirs(out, exist_ok=True)
    os.makedirs(CACHE, exist_ok=True)
    for p in projects:
        try:
            found = newest_sdist(p)
            if not found:
                print(f"{p}: no sdist on PyPI", file=sys.stderr)
                continue
            version, f = found
            sha = f["hashes"]["sha256"]
            cached = os.path.join(CACHE, f"{p}-{version}.{sha[:16]}.toml")
            if not os.path.exists(cached):
                data = get(f["url"])
                if hashlib.sha256(data).hexdigest() != sha:
                    sys.exit(f"{f['url']}: sha256 differs from the index's")
                with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as t:
                    top = [m for m in t.getmembers() if re.fullmatch(r"[^/]+/pyproject\.toml", m.name)]
                    if not top:
                        print(f"{p} {version}: the sdist has no pyproject.toml", file=sys.stderr)
                        continue
                    body = t.extractfile(top[0]).read()
                with open(cached + ".tmp", "wb") as fh:
                    fh.write(body)
                os.replace(cached + ".tmp", cached)
        except (urllib.error.URLError, TimeoutError, OSError) as e:
            print(f"PyPI cannot be reached: {e}", file=sys.stderr)
            sys.exit(3)
        dst = os.path.join(out, f"{p}-{version}.pyproject.toml")
        with open(cached, "rb") as src, open(dst, "wb") as fh:
            fh.write(src.read())
        print(dst)


if __name__ == "__main__":
    main()
