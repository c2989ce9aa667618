#!/usr/bin/env python3
"""The public headers keep the layering too.

include/offwheel/ is on every subsystem's include path, so the compiler
cannot stop src/util from including offwheel/audit.h.  This check does: a
public header belongs to the subsystem whose folder holds its .c file
(common.h and headers without one belong to util), and a file in src/<lib>
may include offwheel/<name>.h only when that subsystem is <lib> or one it
links, by the target_link_libraries(ow_<lib> ...) lines of CMakeLists.txt.
A public header may include only public headers, and only of its own
subsystem or those below it.  Exit 1 and name every violation."""
import os, re, sys

root = sys.argv[1]
cm = open(os.path.join(root, "CMakeLists.txt")).read()
deps = {}
for m in re.finditer(r"target_link_libraries\(ow_(\w+)\s+PUBLIC([^)]*)\)", cm):
    deps.setdefault(m.group(1), set()).update(re.findall(r"\bow_(\w+)", m.group(2)))
deps.setdefault("cli", set()).update(deps)  # the CLI sits on every subsystem


def below(lib, seen=None):
    seen = set() if seen is None else seen
    for d in deps.get(lib, ()):
        if d not in seen:
            seen.add(d)
            below(d, seen)
    return seen | {lib}


src = os.path.join(root, "src")
owner = {}
for lib in os.listdir(src):
    for f in os.listdir(os.path.join(src, lib)):
        if f.endswith(".c"):
            owner[f[:-2] + ".h"] = lib
pub = os.path.join(root, "include", "offwheel")
headers = sorted(os.listdir(pub))
own = {h: owner.get(h, "util") for h in headers}
inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
bad = []
if len(deps) < 8:
    bad.append("CMakeLists.txt: found the links of only %d subsystems" % len(deps))
for h in headers:
    for name in inc.findall(open(os.path.join(pub, h)).read()):
        n = name[len("offwheel/"):] if name.startswith("offwheel/") else None
        if n is None or n not in own:
            bad.append("include/offwheel/%s includes \"%s\", not a public header" % (h, name))
        elif own[n] not in below(own[h]):
            bad.append("include/offwheel/%s (%s) includes %s (%s), above it" % (h, own[h], name, own[n]))
checked = 0
for lib in sorted(os.listdir(src)):
    for f in sorted(os.listdir(os.path.join(src, lib))):
        for name in inc.findall(open(os.path.join(src, lib, f)).read()):
            if not name.startswith("offwheel/"):
                continue
            checked += 1
            n = name[len("offwheel/"):]
            if n not in own:
                bad.append("src/%s/%s includes %s, which does not exist" % (lib, f, name))
            elif own[n] not in below(lib):
                bad.append("src/%s/%s includes %s of %s, a subsystem above %s" % (lib, f, name, own[n], lib))
for b in bad:
    print(b)
print("%d public headers, %d includes of them checked, %d problems" % (len(headers), checked, len(bad)))
sys.exit(1 if bad or not checked else 0)
