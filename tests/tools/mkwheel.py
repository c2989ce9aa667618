#!/usr/bin/env python3
"""Build a small valid wheel with the standard library's zipfile, for the
wheel unit tests.  usage: mkwheel.py OUT MODE   (MODE: deflate | zip64 | descriptor)
  deflate     ordinary deflated members
  zip64       force_zip64 on every member (ZIP64 extra fields in local headers)
  descriptor  written to an unseekable stream: data descriptors (flag bit 3)
The payload demo/data.bin is bytes((i * 7 + i // 253) % 256 for i in range(300000))."""
import base64, hashlib, io, sys, zipfile

DI = "demo-1.0.dist-info"
FILES = {
    "demo/__init__.py": b"print('hello')\n",
    "demo/data.bin": bytes((i * 7 + i // 253) % 256 for i in range(300000)),
    "demo/caf\u00e9.txt": b"non-ascii name\n",
    DI + "/METADATA": b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n"
                      b"Requires-Dist: numpy>=1.0\n\nLong description.\n",
    DI + "/WHEEL": b"Wheel-Version: 1.0\nGenerator: mkwheel\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}


def record():
    rows = []
    for name, data in FILES.items():
        d = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        rows.append(f"{name},sha256={d},{len(data)}")
    rows.append(DI + "/RECORD,,")
    return ("\n".join(rows) + "\n").encode()


class Unseekable:
    def __init__(self, f):
        self.f = f

    def write(self, b):
        return self.f.write(b)

    def flush(self):
        pass


def main():
    out, mode = sys.argv[1], sys.argv[2]
    members = dict(FILES)
    members[DI + "/RECORD"] = record()
    sink = io.BytesIO()
    target = Unseekable(sink) if mode == "descriptor" else sink
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o100644 << 16
            with z.open(info, "w", force_zip64=(mode == "zip64")) as f:
                f.write(data)
    with open(out, "wb") as f:
        f.write(sink.getvalue())


if __name__ == "__main__":
    main()
