#!/usr/bin/env python3
"""Build a small valid wheel with the standard library's zipfile, for the
wheel unit tests.  usage: mkwheel.py OUT MODE   (MODE: deflate | zip64 | descriptor)
  deflate     ordinary deflated members
  zip64       force_zip64 on every member (ZIP64 extra fields in local headers)
  descriptor  written to an unseekable stream: data descriptors (flag bit 3)
The payload demo/data.bin is bytes((i * 7 + i // 253) % 256 for i in range(300000)).

  mkwheel.py OUT big NAME VERSION MIB SEED
A valid wheel of project NAME, VERSION, whose stored (uncompressed) member
NAME/payload.bin holds MIB MiB of pseudo-random bytes from SEED: the same
arguments give the same file; another SEED gives another file of the same
size (for the download tests)."""
import base64, hashlib, io, random, sys, zipfile

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


def big(out, name, version, mib, seed):
    di = "%s-%s.dist-info" % (name, version)
    files = {
        name + "/__init__.py": b"",
        name + "/payload.bin": random.Random(seed).randbytes(mib << 20),
        di + "/METADATA": ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n\n"
                           % (name, version)).encode(),
        di + "/WHEEL": b"Wheel-Version: 1.0\nGenerator: mkwheel\nRoot-Is-Purelib: true\n"
                       b"Tag: py3-none-any\n",
    }
    rows = []
    for n, data in files.items():
        d = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        rows.append("%s,sha256=%s,%d" % (n, d, len(data)))
    files[di + "/RECORD"] = ("\n".join(rows + [di + "/RECORD,,"]) + "\n").encode()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for n, data in files.items():
            info = zipfile.ZipInfo(n, date_time=(2024, 1, 1, 0, 0, 0))
            info.external_attr = 0o100644 << 16
            z.writestr(info, data)


def main():
    out, mode = sys.argv[1], sys.argv[2]
    if mode == "big":
        return big(out, sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6]))
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
