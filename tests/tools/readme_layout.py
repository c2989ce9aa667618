#!/usr/bin/env python3
"""docs/layout.md's module map matches the tree.

Every src/<lib>/ folder has a row "| `src/<lib>` (`ow_<lib>`) | modules |
uses |" in docs/layout.md's table (src/cli excepted: its files are one
per command), every module (a .c file) of the folder is named in its row,
and every name there in backticks that looks like a module is a file of the
folder.  Exit 1 naming each difference."""
import os, re, sys

root = sys.argv[1]
readme = open(os.path.join(root, "docs", "layout.md")).read()
bad, n = [], 0
for lib in sorted(os.listdir(os.path.join(root, "src"))):
    if lib == "cli":
        continue
    m = re.search(r"^\| `src/%s` \(`ow_%s`\) \|([^|]*)\|" % (lib, lib), readme, re.M)
    if not m:
        bad.append("docs/layout.md: no Layout row for src/%s" % lib)
        continue
    row = m.group(1)
    files = set(os.listdir(os.path.join(root, "src", lib)))
    for f in sorted(files):
        if f.endswith(".c"):
            n += 1
            if "`%s`" % f[:-2] not in row:
                bad.append("docs/layout.md: src/%s/%s is not in the row of src/%s" % (lib, f, lib))
    for name in re.findall(r"`([a-z0-9_.]+)`", row):
        if name.endswith(".def"):
            name_files = {name}
        elif name.endswith(".h"):
            name_files = {name}
        else:
            name_files = {name + ".c"}
        if not name_files & files:
            bad.append("docs/layout.md: the row of src/%s names `%s`, which src/%s does not hold" % (lib, name, lib))
for b in bad:
    print(b)
print("%d modules checked against docs/layout.md's table, %d differences" % (n, len(bad)))
sys.exit(1 if bad or n == 0 else 0)
