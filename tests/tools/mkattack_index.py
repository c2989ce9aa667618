#!/usr/bin/env python3
"""mkattack_index.py ROOT BASE - the tiny index tests/integration/net_attack.bats
crawls through tests/tools/faultserver.py (BASE: its URL, http://127.0.0.1:P).

  ROOT/idx/cpu/torch/        50 torch wheels listed (one lies on disk: the
                             first, a valid pure wheel with a .metadata)
  ROOT/idx/cpu/torchvision/  3 torchvision wheels (another project's page)
  ROOT/shrink/cpu/torch/     the same 50 links as idx (the test rewrites it)
  ROOT/json/cpu/torch/       the 49 binary wheels of idx as a PEP 691 JSON page
  ROOT/faults/cpu/torch/     links to that one wheel through fault modes
                             (absolute URLs: BASE/fault/<mode>/idx/...)
  ROOT/meta/cpu/torch/       the wheel through meta-contradict: the page's
                             data-core-metadata hash is the hash of the
                             contradicting .metadata the server will send
Python 3 standard library only; deterministic."""
import base64
import hashlib
import json
import os
import sys
import zipfile

NAME = "torch-2.0.0-py3-none-any.whl"
META = b"Metadata-Version: 2.1\nName: torch\nVersion: 2.0.0\nRequires-Python: >=3.8\n"


def wheel(path):
    di = "torch-2.0.0.dist-info"
    files = {
        "torch/__init__.py": b"x = 1\n",
        di + "/METADATA": META,
        di + "/WHEEL": b"Wheel-Version: 1.0\nGenerator: mkattack\nRoot-Is-Purelib: true\n"
                       b"Tag: py3-none-any\n",
    }
    rows = []
    for n, d in files.items():
        h = base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b"=").decode()
        rows.append("%s,sha256=%s,%d" % (n, h, len(d)))
    rows.append(di + "/RECORD,,")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in files.items():
            z.writestr(zipfile.ZipInfo(n, (2020, 1, 1, 0, 0, 0)), d)
        z.writestr(zipfile.ZipInfo(di + "/RECORD", (2020, 1, 1, 0, 0, 0)),
                   "\n".join(rows) + "\n")


def page(d, project, anchors):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "index.html"), "w") as f:
        f.write("<!DOCTYPE html>\n<html>\n  <head>\n    <title>Links for %s</title>\n"
                "  </head>\n  <body>\n    <h1>Links for %s</h1>\n" % (project, project))
        for a in anchors:
            f.write("    %s<br/>\n" % a)
        f.write("  </body>\n</html>\n<!--TIMESTAMP 1697195006-->\n")


def sha(b):
    return hashlib.sha256(b).hexdigest()


def torch_anchors():
    out = ['<a href="%s" data-core-metadata="sha256=%s">%s</a>' % (NAME, sha(META), NAME)]
    for i in range(1, 50):
        fn = "torch-2.0.%d-cp312-cp312-linux_x86_64.whl" % i
        out.append('<a href="%s#sha256=%s">%s</a>' % (fn, sha(fn.encode()), fn))
    return out


def main():
    root, base = sys.argv[1], sys.argv[2].rstrip("/")
    d = os.path.join(root, "idx/cpu/torch")
    page(d, "torch", torch_anchors())
    wheel(os.path.join(d, NAME))
    with open(os.path.join(d, NAME + ".metadata"), "wb") as f:
        f.write(META)
    page(os.path.join(root, "shrink/cpu/torch"), "torch", torch_anchors())
    files = []
    for i in range(1, 50):
        fn = "torch-2.0.%d-cp312-cp312-linux_x86_64.whl" % i
        files.append({"filename": fn, "url": fn, "hashes": {"sha256": sha(fn.encode())}})
    os.makedirs(os.path.join(root, "json/cpu/torch"))
    with open(os.path.join(root, "json/cpu/torch/index.html"), "w") as f:
        json.dump({"meta": {"api-version": "1.1"}, "name": "torch", "files": files}, f)
    tv = ["torchvision-0.15.%d-cp312-cp312-linux_x86_64.whl" % i for i in range(3)]
    page(os.path.join(root, "idx/cpu/torchvision"), "torchvision",
         ['<a href="%s">%s</a>' % (fn, fn) for fn in tv])
    modes = ["cl-huge", "gzip", "header-huge", "trickle,every=0.5"]
    page(os.path.join(root, "faults/cpu/torch"), "torch",
         ['<a href="%s/fault/%s/idx/cpu/torch/%s">%s</a>' % (base, m, NAME, NAME) for m in modes])
    evil = META.replace(b"Name: torch", b"Name: evil-torch").replace(b"Version: 2.0.0",
                                                                     b"Version: 9.9.9")
    page(os.path.join(root, "meta/cpu/torch"), "torch",
         ['<a href="%s/fault/meta-contradict/idx/cpu/torch/%s" data-core-metadata="sha256=%s">'
          '%s</a>' % (base, NAME, sha(evil), NAME)])


if __name__ == "__main__":
    main()
