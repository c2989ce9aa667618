#!/usr/bin/env python3
"""Compare offwheel's audit of standalone cubins with NVIDIA's cuobjdump.

usage: cuobjdump_cubins.py OFFWHEEL CUOBJDUMP CUBIN...

Per cubin, `cuobjdump -elf CUBIN` is the ground truth: its header line
"64-bit ELF: type=ET_EXEC, ABI=8, sm=100a, ..." gives the SASS arch with the
arch-specific `a` (cuobjdump names no `f`, and neither does the cubin), and
its section table says whether it holds a kernel (a `.text.NAME` section).
offwheel is asked once for all of them (`--json audit`): each cubin must be
one module of one SASS entry, the same arch, the same "has a kernel".
Where the file name says the target (flashinfer's "...Sm103aKernel...",
"..._sm100f.cubin"), it must agree too, an `f` in the name meaning the plain
arch in the listing.  Prints one line per arch and a total; exits 1 when any
differs, naming it.
"""
import collections
import json
import re
import subprocess
import sys


def cuobjdump_facts(cu, path):
    r = subprocess.run([cu, "-elf", path], capture_output=True, text=True)
    m = re.search(r"^64-bit ELF: .*\bsm=(\w+)", r.stdout, re.M)
    if not m:  # (cuobjdump exits non-zero on a mere warning: the header line decides)
        return None
    return "sm_" + m.group(1), bool(re.search(r"\s\.text\.\S+\s*$", r.stdout, re.M))


def offwheel_facts(ow, paths):
    r = subprocess.run([ow, "--json", "audit"] + paths, capture_output=True, text=True)
    doc = json.loads(r.stdout)
    facts = {}
    for t in doc["targets"]:
        libs = t.get("libraries") or []
        if "error" in t or len(libs) != 1 or len(libs[0]["module_list"]) != 1:
            facts[t["source"]] = None
            continue
        lib, mod = libs[0], libs[0]["module_list"][0]
        words = mod["entries"].split()
        ok = lib["format"] == "cubin" and len(words) == 1 and words[0].startswith("sm_")
        facts[t["source"]] = (words[0], mod["kernels"]) if ok else None
    return facts


def name_arch(path):
    m = re.search(r"[Ss]m_?(\d{2,3})([af]?)(?![0-9a-z])", path.rsplit("/", 1)[-1])
    return None if not m else "sm_" + m.group(1) + (m.group(2) if m.group(2) == "a" else "")


def main():
    ow, cu, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
    ours = offwheel_facts(ow, paths)
    per_arch, bad, named_ok = collections.Counter(), 0, 0
    for p in paths:
        c, o = cuobjdump_facts(cu, p), ours.get(p)
        named = name_arch(p)
        if c is None or o is None or c != o or (named and named != o[0]):
            bad += 1
            print("DIFFERS %s: cuobjdump %s, offwheel %s, name %s" % (p.rsplit("/", 1)[-1], c, o,
                                                                   named))
            continue
        per_arch[c] += 1
        named_ok += named is not None
    for (arch, kernel), n in sorted(per_arch.items()):
        print("same    %s%s: %d cubins" % (arch, "" if kernel else " (no kernel)", n))
    print("%d of %d cubins the same (%d also as their file names say)" % (
        len(paths) - bad, len(paths), named_ok))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
