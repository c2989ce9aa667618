#!/usr/bin/env python3
"""Build a valid wheel carrying given files, for the audit tests.

usage: mkwheel_members.py OUT.whl MEMBER=SOURCE... [--corrupt MEMBER]

OUT's basename must be a wheel filename (name-version-py-abi-platform.whl);
METADATA, WHEEL and RECORD are written for it, plus NAME/__init__.py.
--corrupt MEMBER stores that member uncompressed and flips one byte of its
data after the fact: the zip structure stays valid but the CRC no longer
matches, so any pass that inflates (reads) the member fails."""
import base64, hashlib, io, os, sys, zipfile


def record_line(name, data):
    d = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={d},{len(data)}"


def main():
    args = sys.argv[1:]
    corrupt = None
    if "--corrupt" in args:
        i = args.index("--corrupt")
        corrupt = args[i + 1]
        del args[i:i + 2]
    out, specs = args[0], args[1:]
    name, version = os.path.basename(out).split("-")[:2]
    di = f"{name}-{version}.dist-info"
    files = {f"{name}/__init__.py": b"# audit test\n"}
    for spec in specs:
        member, src = spec.split("=", 1)
        with open(src, "rb") as f:
            files[member] = f.read()
    files[di + "/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode()
    files[di + "/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: mkwheel_members\nRoot-Is-Purelib: false\nTag: cp312-cp312-linux_x86_64\n"
    rows = [record_line(n, d) for n, d in files.items()] + [di + "/RECORD,,"]
    files[di + "/RECORD"] = ("\n".join(rows) + "\n").encode()
    sink = io.BytesIO()
    with zipfile.ZipFile(sink, "w") as z:
        for member, data in files.items():
            info = zipfile.ZipInfo(member, date_time=(2024, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED if member == corrupt else zipfile.ZIP_DEFLATED
            info.external_attr = 0o100644 << 16
            z.writestr(info, data)
    blob = bytearray(sink.getvalue())
    if corrupt:
        with zipfile.ZipFile(io.BytesIO(bytes(blob))) as z:
            zi = z.getinfo(corrupt)
        # local header: 30 bytes + name + extra; flip the first data byte
        n = int.from_bytes(blob[zi.header_offset + 26:zi.header_offset + 28], "little")
        m = int.from_bytes(blob[zi.header_offset + 28:zi.header_offset + 30], "little")
        blob[zi.header_offset + 30 + n + m] ^= 0xFF
    with open(out, "wb") as f:
        f.write(blob)


if __name__ == "__main__":
    main()
