#!/usr/bin/env python3
"""A tiny valid torch wheel (METADATA, WHEEL, RECORD) for the find-links
tests: usage: mktorch_wheel.py DIR VERSION TAG [REQUIREMENT...]
writes DIR/torch-VERSION-TAG.whl whose METADATA has one Requires-Dist per
REQUIREMENT."""
import base64, hashlib, os, sys, zipfile


def main():
    out, version, tag, reqs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    di = f"torch-{version}.dist-info"
    meta = (f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\nRequires-Python: >=3.9\n"
            + "".join(f"Requires-Dist: {r}\n" for r in reqs) + "\n")
    files = {
        "torch/__init__.py": f"__version__ = {version!r}\n".encode(),
        di + "/METADATA": meta.encode(),
        di + "/WHEEL": f"Wheel-Version: 1.0\nGenerator: mktorch_wheel\nRoot-Is-Purelib: false\nTag: {tag}\n".encode(),
    }
    rows = []
    for name, data in files.items():
        d = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        rows.append(f"{name},sha256={d},{len(data)}")
    rows.append(di + "/RECORD,,")
    files[di + "/RECORD"] = ("\n".join(rows) + "\n").encode()
    with zipfile.ZipFile(os.path.join(out, f"torch-{version}-{tag}.whl"), "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)


if __name__ == "__main__":
    main()
