#!/usr/bin/env python3
"""mkforgeable.py WHEEL PAGE - rewrite WHEEL in place so that faultserver.py
can serve a forged version of it (modes ifrange-swap and range-lie), and put
its new sha256 in the #sha256= of its link on PAGE.

The METADATA goes first and stored (not deflated), with an "X-Forge:" header
line of 100 letters whose choice lets a forged METADATA keep the length and
CRC-32 of the real one; a stored member of 100 KiB of random bytes follows
it, so that the METADATA lies outside the wheel's last 64 KiB (a range
reader needs a second request, sent with If-Range, to read it).  RECORD is
written again for the new members.  Standard library only."""
import base64
import hashlib
import os
import re
import sys
import zipfile

ZIP_TIME = (2026, 1, 1, 0, 0, 0)


def record_line(name, data):
    h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (name, h, len(data))


def main():
    whl, page = sys.argv[1], sys.argv[2]
    with zipfile.ZipFile(whl) as src:
        members = {i.filename: src.read(i) for i in src.infolist()}
    meta = next(n for n in members if n.endswith(".dist-info/METADATA"))
    record = next(n for n in members if n.endswith(".dist-info/RECORD"))
    head, sep, body = members[meta].decode().partition("\n\n")
    members[meta] = (head.rstrip("\n") + "\nX-Forge: " + "a" * 100 + "\n" + sep[1:] + body).encode()
    pad = meta.split("-")[0] + "/_forge_pad.bin"
    members[pad] = os.urandom(100 * 1024)
    order = [meta, pad] + [n for n in members if n not in (meta, pad, record)]
    members[record] = ("\n".join(record_line(n, members[n]) for n in order) +
                       "\n%s,,\n" % record).encode()
    with zipfile.ZipFile(whl + ".new", "w") as z:
        for n in order + [record]:
            info = zipfile.ZipInfo(n, ZIP_TIME)
            info.compress_type = zipfile.ZIP_STORED if n in (meta, pad) else zipfile.ZIP_DEFLATED
            z.writestr(info, members[n])
    os.replace(whl + ".new", whl)
    with open(whl, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    name = re.escape(os.path.basename(whl))
    with open(page) as f:
        s = f.read()
    s, n = re.subn("(" + name + ")#sha256=[0-9a-f]+", r"\g<1>#sha256=" + digest, s)
    if n != 1:
        sys.exit("mkforgeable: %s is not linked once with a #sha256= on %s" % (whl, page))
    with open(page, "w") as f:
        f.write(s)


if __name__ == "__main__":
    main()
