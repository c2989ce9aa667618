#!/usr/bin/env python3
"""Compare offwheel's audit of CUDA libraries with NVIDIA's cuobjdump.

usage: cuobjdump_compare.py OFFWHEEL CUOBJDUMP LIB...

For each library, `cuobjdump -res-usage LIB` is the ground truth for what
the runtime loads from the library's fatbin sections:
  - "Fatbin elf code" blocks: one SASS cubin each, "arch = sm_100f" (this
    output keeps the a/f suffix that --list-elf drops); a block without any
    "Function NAME:" line is a cubin without a kernel;
  - "Fatbin ptx code" blocks: PTX, "arch = sm_90" with "code version =
    [9,0]" (the PTX ISA).
cuobjdump does not show link-time (-rdc) modules that were linked already,
nor fatbins kept in data sections, so offwheel is asked with --scan-data
never and compared on its main lists (sass, ptx; rdc_only apart) — except
where a file has only link-time modules (a static archive of device code):
cuobjdump then shows those, and they are compared instead.

Checked per library: the set of SASS architectures, the set of PTX
architecture@ISA, the number of SASS cubins, and the number of SASS cubins
without a kernel (offwheel: the SASS entries of its kernel-less modules).
Prints one line per library; exits 1 when any differs, naming it.
"""
import json
import re
import subprocess
import sys


def cuobjdump_facts(cu, lib):
    r = subprocess.run([cu, "-res-usage", lib], capture_output=True, text=True)
    out = r.stdout
    # a library without device code is exit 255 with "does not contain device
    # code"; any other failure is an error
    if r.returncode != 0 and "does not contain device code" not in r.stderr:
        return None, r.stderr.strip() or "exit %d" % r.returncode
    sass, ptx, cubins, kernel_less = set(), set(), 0, 0
    for block in re.split(r"\n(?=Fatbin (?:elf|ptx|nvvm) code:)", out):
        kind = re.match(r"\s*Fatbin (elf|ptx|nvvm) code:", block)
        arch = re.search(r"^arch = (\S+)", block, re.M)
        if not kind or not arch:
            continue
        if kind.group(1) == "elf":
            cubins += 1
            sass.add(arch.group(1))
            if not re.search(r"^\s*Function \S+:", block, re.M):
                kernel_less += 1
        elif kind.group(1) == "ptx":
            ver = re.search(r"^code version = \[(\d+),(\d+)\]", block, re.M)
            name = "compute_" + arch.group(1)[3:]
            ptx.add("%s@%s.%s" % (name, ver.group(1), ver.group(2)) if ver else name)
    return {"sass": sass, "ptx": ptx, "cubins": cubins, "kernel_less": kernel_less}, None


def offwheel_facts(ow, lib):
    r = subprocess.run([ow, "--json", "audit", "--scan-data", "never", lib],
                       capture_output=True, text=True)
    try:
        doc = json.loads(r.stdout)
    except ValueError:
        return None, (r.stderr.strip() or "no JSON document (exit %d)" % r.returncode)
    t = doc["targets"][0]
    if "error" in t:
        return None, t["error"]["detail"]
    if not t["libraries"]:
        return {"sass": set(), "ptx": set(), "cubins": 0, "kernel_less": 0}, None
    lib_doc = t["libraries"][0]
    ptx = {"%s@%s" % (p["name"], p["isa"]) for p in lib_doc["ptx"]}
    cubins = kernel_less = 0
    mods = [m for m in lib_doc["module_list"] if not m["scanned"]]
    # cuobjdump shows the link-time (-rdc) fatbin when there is no other, as
    # in a static archive of device code (libcudadevrt.a)
    rdc = not any(m["entries"] != "empty" for m in mods if not m["relocatable"])
    sass, ptx = set(lib_doc["sass"]), ptx
    if rdc:
        words = [w.split(":")[0] for m in mods if m["relocatable"] for w in m["entries"].split()]
        sass = {w for w in words if w.startswith("sm_")}
        ptx = {w for w in words if w.startswith("compute_")}
    for m in mods:
        if m["relocatable"] != rdc:
            continue
        n = sum(1 for w in m["entries"].split() if w.startswith("sm_"))
        cubins += n
        if m["kernels"] is False:
            kernel_less += n
    return {"sass": sass, "ptx": ptx, "cubins": cubins, "kernel_less": kernel_less}, None


def main():
    ow, cu, libs = sys.argv[1], sys.argv[2], sys.argv[3:]
    bad = 0
    for lib in libs:
        c, cerr = cuobjdump_facts(cu, lib)
        o, oerr = offwheel_facts(ow, lib)
        name = lib.rsplit("/", 1)[-1]
        if cerr or oerr:
            print("ERROR %s: cuobjdump: %s; offwheel: %s" % (name, cerr, oerr))
            bad += 1
            continue
        diffs = [k for k in ("sass", "ptx", "cubins", "kernel_less") if c[k] != o[k]]
        line = "%s: %d cubins (%d without a kernel), SASS %s, PTX %s" % (
            name, c["cubins"], c["kernel_less"], " ".join(sorted(c["sass"])) or "-",
            " ".join(sorted(c["ptx"])) or "-")
        if diffs:
            bad += 1
            print("DIFFERS " + line)
            for k in diffs:
                print("    %s: cuobjdump %s, offwheel %s" % (k, sorted(c[k]) if isinstance(c[k], set) else c[k],
                                                         sorted(o[k]) if isinstance(o[k], set) else o[k]))
        else:
            print("same    " + line)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
